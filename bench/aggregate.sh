#!/bin/sh
# aggregate: msg-aggregate -n 10 on interleaved groups, in memory and with
# --state, against jq -s 'group_by(.k)'.
# usage: sh bench/aggregate.sh [BUILD] [all | memory | state | jq | until]
#
# Data: BENCH_MESSAGES (default 1000000, a multiple of 100, at least
# 1000) small messages, a JSON record of about 50 bytes each (about 210
# bytes a frame as msg-wrap makes it), in BENCH_MESSAGES / 10 groups of
# ten correlated by their Correlation-Id header; msg-aggregate -n 10
# completes each at its tenth member. The groups are interleaved W at a
# time: the first member of each of W groups, then the second of each,
# and so on, so that W groups are open at once, and at the peak each of
# them holds nine members. The same messages come in two orders: "all
# open", every group open at once (W = 100,000 by default), and "100
# open" (W = 100). The records are also written as NDJSON, one a line in
# the all-open order, for jq.
#
# memory: msg-aggregate -n 10 on both orders. Target: at least 500,000
#         messages per second on each. Peak RSS with 100 and with all
#         groups open, and with 100 open on a tenth of the messages.
#         Memory must follow the open groups, not the size of the input:
#         with the keys of released groups forgotten at once (--remember
#         1ms), the peak with 100 open groups may grow by at most 25%
#         with ten times the input. What the remembered keys take by
#         default (an hour's worth, bounded by --max-bytes) and what one
#         member held takes are reported.
# state:  msg-aggregate --state DIR -n 10, all groups open, its input
#         through a pipe as from a stage upstream (cat | msg-aggregate),
#         a new state directory in the scratch directory for each run
#         (the file system is named in the output: on a tmpfs fsync costs
#         nothing). Target: at least 50,000 messages per second. The
#         store commits once per read of input, so the fsync(2) and
#         fdatasync(2) calls per 1,000 messages, counted by strace -c -f
#         when it is installed (msg-aggregate does not print the store's
#         own count), are reported for input through a pipe and, for
#         reference, from a file, whose reads are larger. At tens of
#         seconds a run, it runs best of BENCH_STATE_RUNS (default
#         BENCH_RUNS, at most 2), each run timed under time(1) for its
#         processor time and peak RSS at once.
# jq:     jq -c -s 'group_by(.k)' on the NDJSON, the usual ad-hoc way to
#         group records: its time and peak RSS beside those of
#         msg-aggregate in memory on the same records in the same order.
#         -c, as msg-aggregate writes compact JSON too and pretty
#         printing costs jq time of its own: the comparison errs in jq's
#         favour. The issue sets no target for the ratios: they are
#         reported. At several seconds a run, jq runs best of
#         BENCH_PEER_RUNS (default BENCH_RUNS, at most 2), timed as the
#         runs with --state are.
# until:  one group of BENCH_UNTIL_MEMBERS (default 10,000) small XML
#         members, completed when the last comes: by -n (the aggregate
#         built once, the peer), by -u on a header ("header('Aggregate-Size')
#         = N") and by -u on a path ("count(/aggregate/item) = N"). -u is
#         evaluated after every member on the aggregate so far, which is
#         kept as the group grows, each member parsed once: a group costs
#         O(n), and a path over the whole aggregate O(n) a member, but
#         no parse. Built again after every member, as it once was, the
#         group of 10,000 took 57 s with the path (40 s of processor
#         time; 218 s on a busier machine) where it now takes under one.
#         Targets: members per second, at least 100,000 with the header
#         and 5,000 with the path.
#
# Each tool writes through a pipe into cat > /dev/null: an aggregator's
# output is what the next stage reads. The processor time of each is
# printed after its wall time, for reference: on a shared machine wall
# time includes the wait for a processor.
#
# Before anything is timed, msg-aggregate must emit every group once,
# complete by count, its ten members in order, byte for byte what is
# expected, and jq must group a small set of the records as expected;
# else the run is broken (exit 1).
set -u

here=$(dirname "$0")
. "$here/lib.sh"

part=${2:-all}
bench_check_part aggregate.sh "$part" memory state jq until
bench_init "${1:-build}"
aggregate=$(bench_tool msg-aggregate) || exit 1
wrap=$(bench_tool msg-wrap) || exit 1
unwrap=$(bench_tool msg-unwrap) || exit 1
# The figures are for the tool as it runs by default.
unset MSG_HISTORY MSG_INVALID MSG_DEAD_LETTER

MESSAGES=${BENCH_MESSAGES:-1000000}
PEER_RUNS=${BENCH_PEER_RUNS:-$((BENCH_RUNS < 2 ? BENCH_RUNS : 2))}
STATE_RUNS=${BENCH_STATE_RUNS:-$((BENCH_RUNS < 2 ? BENCH_RUNS : 2))}
bench_need_positive "BENCH_MESSAGES, BENCH_PEER_RUNS and BENCH_STATE_RUNS" \
	"$MESSAGES" "$PEER_RUNS" "$STATE_RUNS"
# A tenth of the messages must still be whole groups in blocks of 100.
if [ $((MESSAGES % 100)) -ne 0 ] || [ "$MESSAGES" -lt 1000 ]; then
	bench_die "BENCH_MESSAGES must be a multiple of 100, at least 1000"
fi
GROUP_COUNT=$((MESSAGES / 10))
FEW=100			# open groups in the "100 open" order
TENTH=$((MESSAGES / 10))
MEMORY_TARGET=500000	# messages per second, in memory
STATE_TARGET=50000	# messages per second, with --state
RSS_GROWTH_TARGET=1.25	# peak RSS, 100 open groups, 10x the input
all_us=			# msg-aggregate in memory, all groups open
all_rss=
all_cpu=

# gen_records FORM COUNT OPEN: COUNT messages' records in groups of ten,
# OPEN groups at a time, as FORM: "envelope" (msg-wrap -e's input, the
# group key as Correlation-Id), "ndjson" (the bare records) or
# "aggregate" (one line a group, in the order the groups complete: its
# ten records as msg-aggregate joins them, a JSON array).
gen_records() {
	awk -v form="$1" -v n="$2" -v open="$3" '
	function record(g, m) {
		return sprintf("{\"k\":\"g%07d\",\"i\":%d,\"sku\":\"SKU-%05d\",\"qty\":%d}",
			g, m, (g * 31 + m * 17) % 100000, 1 + (g + m) % 9)
	}
	BEGIN {
		groups = n / 10
		for (first = 1; first <= groups; first += open) {
			last = first + open - 1
			if (last > groups)
				last = groups
			if (form == "aggregate") {
				for (g = first; g <= last; g++) {
					line = "["
					for (m = 1; m <= 10; m++)
						line = line (m > 1 ? "," : "") record(g, m)
					print line "]"
				}
				continue
			}
			for (m = 1; m <= 10; m++)
				for (g = first; g <= last; g++) {
					r = record(g, m)
					if (form == "ndjson") {
						print r
						continue
					}
					gsub(/"/, "\\\"", r)
					printf "{\"headers\":{\"Correlation-Id\":\"g%07d\"},\"body\":\"%s\"}\n", g, r
				}
		}
	}'
}

gen_messages() {
	gen_records envelope "$1" "$2" | "$wrap" -e -t application/json
}

# cache_messages COUNT OPEN: sets in to the cached messages.
cache_messages() {
	bench_cache "aggregate-$1-open$2.msg" gen_messages "$1" "$2"
	in=$BENCH_FILE
}

# check_output OUT STATS COUNT OPEN: OUT, msg-aggregate's output on COUNT
# messages OPEN groups at a time, must hold one message a group, complete
# by count with ten members, whose body is the group's records in order;
# STATS (its --stats) must say so too.
check_output() {
	_cog=$(($3 / 10))
	gen_records aggregate "$3" "$4" >"$BENCH_TMP/want"
	"$unwrap" -s '\n' "$1" >"$BENCH_TMP/bodies" || bench_die "msg-unwrap failed on the output"
	# The last body has no separator after it.
	echo >>"$BENCH_TMP/bodies"
	cmp -s "$BENCH_TMP/want" "$BENCH_TMP/bodies" ||
		bench_die "msg-aggregate's bodies are not the groups' records in order" \
			"($(cmp "$BENCH_TMP/want" "$BENCH_TMP/bodies" 2>&1))"
	_cohead=$("$unwrap" -H "$1" | awk '
		/^Aggregate-Size: 10$/ { size++ }
		/^Aggregate-Reason: count$/ { reason++ }
		END { print size + 0, reason + 0 }') ||
		bench_die "msg-unwrap -H failed on the output"
	[ "$_cohead" = "$_cog $_cog" ] ||
		bench_die "msg-aggregate emitted '$_cohead' (Aggregate-Size 10," \
			"Aggregate-Reason count), want '$_cog $_cog'"
	for _cofig in "in $3" "members $3" "duplicates 0" "released $_cog" \
		"count $_cog" "partial 0" "open 0"; do
		grep -q "[:,] $_cofig\(,\|$\)" "$2" ||
			bench_die "msg-aggregate --stats does not say '$_cofig':" \
				"$(cat "$2")"
	done
	rm -f "$BENCH_TMP/want" "$BENCH_TMP/bodies"
}

# check_memory COUNT OPEN: msg-aggregate -n 10 on the cached messages.
check_memory() {
	"$aggregate" --stats -n 10 <"$in" >"$BENCH_TMP/out" 2>"$BENCH_TMP/stats" ||
		bench_die "msg-aggregate -n 10 failed on '$in':" \
			"$(cat "$BENCH_TMP/stats") (stale cache? remove $BENCH_CACHE)"
	check_output "$BENCH_TMP/out" "$BENCH_TMP/stats" "$1" "$2"
	rm -f "$BENCH_TMP/out" "$BENCH_TMP/stats"
}

# measure_memory LABEL COUNT OPEN: msg-aggregate -n 10 on COUNT messages
# OPEN groups at a time, checked, timed and judged, with its processor
# time. Sets memory_us, memory_rss and memory_cpu.
measure_memory() {
	cache_messages "$2" "$3"
	check_memory "$2" "$3"
	bench_measure "$in" pipe "$aggregate" -n 10
	memory_us=$BENCH_US memory_rss=$BENCH_RSS
	rate=$(bench_per_sec "$2" "$BENCH_US")
	bench_result "msg-aggregate -n 10 | cat, $1" "$BENCH_US" "$BENCH_RSS" \
		"$rate msg/s"
	bench_verdict "in memory, $1, messages per second" "$rate" ">=" \
		"$MEMORY_TARGET" " msg/s"
	bench_cpu_best "$BENCH_RUNS" "$in" pipe "$aggregate" -n 10
	memory_cpu=$BENCH_CPU_MS
	bench_cpu_note "msg-aggregate, $1" "$2" msg
}

# rss_only LABEL ARG...: the peak RSS of msg-aggregate -n 10 ARG... on
# the messages in $in, printed with LABEL. Sets BENCH_RSS.
rss_only() {
	_rolabel=$1
	shift
	bench_peak_rss "$in" pipe "$aggregate" -n 10 "$@"
	bench_rss_line "$_rolabel"
}

# The keys of released groups are remembered (--remember, an hour by
# default) to tell late members, and take memory until forgotten: with
# --remember 1ms they go at once and what is left is the open groups'.
bench_memory() {
	echo "aggregate: in memory, $MESSAGES messages in $GROUP_COUNT groups of 10," \
		"count completion"
	bench_load_note

	measure_memory "$FEW open" "$MESSAGES" "$FEW"
	few_rss=$memory_rss
	rss_only "  the same, --remember 1ms" --remember 1ms
	few_bare_rss=$BENCH_RSS
	measure_memory "$GROUP_COUNT open" "$MESSAGES" "$GROUP_COUNT"
	all_us=$memory_us all_rss=$memory_rss all_cpu=$memory_cpu

	cache_messages "$TENTH" "$FEW"
	check_memory "$TENTH" "$FEW"
	rss_only "msg-aggregate -n 10, $FEW open, $TENTH msgs"
	rss_only "  the same, --remember 1ms" --remember 1ms
	[ -n "$BENCH_RSS" ] || return 0
	bench_verdict "peak RSS, $FEW open, --remember 1ms, $MESSAGES / $TENTH msgs" \
		"$(bench_ratio "$few_bare_rss" "$BENCH_RSS")" "<=" \
		"$RSS_GROWTH_TARGET" "x"
	bench_report "peak RSS per released group remembered (--remember 1h)" \
		"$(awk -v a="$few_rss" -v b="$few_bare_rss" -v n="$GROUP_COUNT" \
			'BEGIN { printf "%.0f", (a - b) * 1024 / n }')" " bytes"
	# At the peak every open group holds nine members.
	bench_report "peak RSS, $GROUP_COUNT open less $FEW open, per member held" \
		"$(awk -v a="$all_rss" -v b="$few_bare_rss" \
			-v n=$(((GROUP_COUNT - FEW) * 9)) \
			'BEGIN { printf "%.0f", (a - b) * 1024 / n }')" " bytes"
}

# One run of msg-aggregate with a new state directory in the scratch
# directory, its input fed through a pipe ("pipe": reads of 64 KiB at
# most, as from a stage upstream) or straight from the file ("file":
# larger reads, so larger batches and fewer commits); sh -c rather than
# a function, as time(1) runs it too.
# Usage: sh -c "$aggregate_state" sh SCRATCH FEED AGGREGATE ARG...
aggregate_state='d=$(mktemp -d "$1/state.XXXXXX") || exit 1
feed=$2 a=$3
shift 3
if [ "$feed" = pipe ]; then
	cat | "$a" --state "$d/st" "$@"
else
	exec "$a" --state "$d/st" "$@"
fi'

remove_states() {
	rm -rf "$BENCH_TMP"/state.*
}

# check_state FEED: one run of msg-aggregate --state -n 10 on $in, fed as
# FEED, checked, and under strace -c -f when there is one. Sets syncs to
# the fsync(2) and fdatasync(2) calls strace counted, or empty.
check_state() {
	bench_strace_syncs "$in" "$BENCH_TMP/out" "$BENCH_TMP/stats" \
		sh -c "$aggregate_state" sh "$BENCH_TMP" "$1" "$aggregate" \
		--stats -n 10 ||
		bench_die "msg-aggregate --state -n 10 failed on '$in':" \
			"$(cat "$BENCH_TMP/stats")"
	check_output "$BENCH_TMP/out" "$BENCH_TMP/stats" "$MESSAGES" "$GROUP_COUNT"
	remove_states
	rm -f "$BENCH_TMP/out" "$BENCH_TMP/stats"
	syncs=$BENCH_SYNCS
}

# report_syncs FEED: the syncs of check_state per 1,000 messages.
report_syncs() {
	bench_report_syncs "$1" "$syncs" "$MESSAGES"
}

bench_state() {
	cache_messages "$MESSAGES" "$GROUP_COUNT"
	fs=$(stat -f -c %T "$BENCH_TMP" 2>/dev/null || echo unknown)
	echo "aggregate: with --state on $fs, $MESSAGES messages in $GROUP_COUNT" \
		"groups of 10, all open at once"
	bench_load_note

	check_state pipe
	pipe_syncs=$syncs
	BENCH_CPU_TIDY=remove_states
	bench_measure_long "$STATE_RUNS" "$in" sh -c "$aggregate_state" sh \
		"$BENCH_TMP" pipe "$aggregate" -n 10
	BENCH_CPU_TIDY=
	rate=$(bench_per_sec "$MESSAGES" "$BENCH_US")
	bench_result "cat | msg-aggregate --state -n 10 | cat" "$BENCH_US" \
		"$BENCH_RSS" "$rate msg/s"
	bench_verdict "with --state, messages per second" "$rate" ">=" \
		"$STATE_TARGET" " msg/s"
	bench_cpu_note "msg-aggregate --state (and cat)" "$MESSAGES" msg
	syncs=$pipe_syncs
	report_syncs "input through a pipe"
	# From a file the reads, so the batches, are larger: the count with
	# a file, for reference.
	if [ -n "$syncs" ]; then
		check_state file
		report_syncs "input from a file"
	fi
}

# jq must group records as expected. Its runs are long, so this is
# checked on a small set of records: 1,000 in 100 groups, all open. The
# groups sorted by key are the groups in the order they complete, so
# jq's output is the aggregates' bodies in one array.
check_jq() {
	gen_records aggregate 1000 100 |
		awk '{ printf "%s%s", (NR > 1 ? "," : "["), $0 } END { print "]" }' \
			>"$BENCH_TMP/want"
	gen_records ndjson 1000 100 | jq -c -s 'group_by(.k)' >"$BENCH_TMP/jq.out" ||
		bench_die "jq -c -s 'group_by(.k)' failed"
	cmp -s "$BENCH_TMP/want" "$BENCH_TMP/jq.out" ||
		bench_die "jq does not group the records as expected"
	rm -f "$BENCH_TMP/want" "$BENCH_TMP/jq.out"
}

bench_jq() {
	command -v jq >/dev/null || bench_die "jq not found"
	bench_cache "aggregate-$MESSAGES.ndjson" gen_records ndjson "$MESSAGES" \
		"$GROUP_COUNT"
	lines=$BENCH_FILE
	cache_messages "$MESSAGES" "$GROUP_COUNT"
	echo "aggregate: against jq, $MESSAGES records in $GROUP_COUNT groups of 10," \
		"all open at once ($(bench_mb "$(bench_size "$in")") MB as messages," \
		"$(bench_mb "$(bench_size "$lines")") MB as NDJSON)"
	bench_load_note

	check_jq
	# The memory part measured msg-aggregate on these messages already.
	if [ -z "$all_us" ]; then
		measure_memory "$GROUP_COUNT open" "$MESSAGES" "$GROUP_COUNT"
		all_us=$memory_us all_rss=$memory_rss all_cpu=$memory_cpu
	fi
	bench_result "msg-aggregate -n 10 | cat" "$all_us" "$all_rss" \
		"$(bench_per_sec "$MESSAGES" "$all_us") rec/s"
	bench_measure_long "$PEER_RUNS" "$lines" jq -c -s 'group_by(.k)'
	bench_result "jq -c -s 'group_by(.k)' | cat" "$BENCH_US" "$BENCH_RSS" \
		"$(bench_per_sec "$MESSAGES" "$BENCH_US") rec/s"
	bench_cpu_note "jq" "$MESSAGES" rec
	bench_peer_ratios msg-aggregate jq "jq -s 'group_by(.k)'" "$all_us" \
		"$all_cpu" "$all_rss"
}

UNTIL_MEMBERS=${BENCH_UNTIL_MEMBERS:-10000}
UNTIL_HEADER_TARGET=100000	# members per second
UNTIL_PATH_TARGET=5000

# gen_group COUNT: one group of COUNT XML members in order.
gen_group() {
	awk -v n="$1" 'BEGIN {
		for (i = 1; i <= n; i++)
			printf "{\"headers\":{\"Correlation-Id\":\"G\",\"Message-Id\":\"m%d\"},\"body\":\"<item n=\\\"%d\\\"/>\"}\n", i, i
	}' | "$wrap" -e -t application/xml
}

# until_run LABEL TARGET ARG...: msg-aggregate ARG... on the group,
# checked (one aggregate of every member, for the reason expected),
# timed, and judged against TARGET members per second when there is one.
until_run() {
	_urlabel=$1 _urtarget=$2
	shift 2
	"$aggregate" --stats "$@" <"$in" >"$BENCH_TMP/out" 2>"$BENCH_TMP/stats" ||
		bench_die "msg-aggregate $* failed: $(cat "$BENCH_TMP/stats")"
	_urhead=$("$unwrap" -H "$BENCH_TMP/out" | grep '^Aggregate-' | tr '\n' ' ')
	case $_urhead in
	"Aggregate-Size: $UNTIL_MEMBERS Aggregate-Reason: "[cu]*" ") ;;
	*) bench_die "msg-aggregate $* gave '$_urhead'" ;;
	esac
	[ "$("$unwrap" "$BENCH_TMP/out" | grep -o '<item ' | wc -l)" -eq "$UNTIL_MEMBERS" ] ||
		bench_die "msg-aggregate $* lost members"
	bench_measure "$in" pipe "$aggregate" "$@"
	rate=$(bench_per_sec "$UNTIL_MEMBERS" "$BENCH_US")
	bench_result "msg-aggregate $_urlabel | cat" "$BENCH_US" "$BENCH_RSS" \
		"$rate msg/s"
	[ -z "$_urtarget" ] ||
		bench_verdict "$_urlabel, members per second" "$rate" ">=" \
			"$_urtarget" " msg/s"
}

bench_until() {
	bench_cache "aggregate-group-$UNTIL_MEMBERS.msg" gen_group "$UNTIL_MEMBERS"
	in=$BENCH_FILE
	echo "aggregate: one group of $UNTIL_MEMBERS XML members, --until after each"
	bench_load_note

	until_run "-n $UNTIL_MEMBERS" "" -n "$UNTIL_MEMBERS"
	count_us=$BENCH_US
	until_run "-u header" "$UNTIL_HEADER_TARGET" \
		-u "header('Aggregate-Size') = $UNTIL_MEMBERS"
	bench_report "-u header vs -n, times slower" \
		"$(bench_ratio "$BENCH_US" "$count_us")" "x"
	until_run "-u path" "$UNTIL_PATH_TARGET" \
		-u "count(/aggregate/item) = $UNTIL_MEMBERS"
	bench_report "-u path vs -n, times slower" \
		"$(bench_ratio "$BENCH_US" "$count_us")" "x"
}

case $part in
all)
	bench_memory
	bench_state
	bench_jq
	bench_until
	;;
memory) bench_memory ;;
state) bench_state ;;
jq) bench_jq ;;
until) bench_until ;;
esac
