#!/bin/sh
# resequence: msg-resequence on a stream shuffled within windows, against
# msg-tap as a pass-through and sort(1) as the batch peer.
# usage: sh bench/resequence.sh [BUILD] [all | stream | batch | state]
#
# Data: BENCH_MESSAGES (default 1000000) small messages, a JSON record of
# about 40 bytes each (about 240 bytes a frame), one sequence numbered
# from 1 with one Correlation-Id, shuffled within windows: the numbers of
# each window of W come in a random order (awk's rand(), seeded, so the
# same each time), the windows one after another, so that fewer than W
# messages wait at once. W is 1,000, or 100,000 for the memory figure.
#
# stream: msg-resequence on the stream shuffled by 1,000. Targets: at
#         least 1,000,000 messages per second, and at least 0.5 of the
#         rate of plain pass-through on the same stream. The pass-through
#         is msg-tap /dev/null: msg-tap needs a tap channel, and one into
#         /dev/null is the nearest to none. Peak RSS with windows of 1,000
#         and of 100,000 (-C 100000), and what each waiting message takes:
#         memory follows the window, not the input.
# batch:  msg-resequence --batch on the same stream, against
#         sort -n -s -k1,1 on the same numbers as lines (the number, then
#         the record), with LC_ALL=C, sort's fastest. No target: the ratio
#         and both peak RSS figures are reported, and the time and peak
#         RSS of --batch --max-bytes BENCH_SPILL (default 16M), which
#         spills to a temporary file, for reference. At seconds a run,
#         these run best of BENCH_PEER_RUNS (default BENCH_RUNS, at most
#         2).
# state:  msg-resequence --state DIR on the first BENCH_STATE_MESSAGES
#         (default 200000) messages of a stream shuffled by 1,000, its
#         input through a pipe as from a stage upstream, a new state
#         directory in the scratch directory for each run (the file system
#         is named in the output: on a tmpfs fsync costs nothing). No
#         target: messages per second, best of BENCH_STATE_RUNS (default
#         BENCH_RUNS, at most 2), and the fsync(2) and fdatasync(2) calls
#         per 1,000 messages, counted by strace -c -f when it is installed.
#
# Each tool writes through a pipe into cat > /dev/null: a resequencer's
# output is what the next stage reads. The processor time of each (in
# stream mode, the least of BENCH_PEER_RUNS more runs) is printed after
# its wall time, for reference: on a shared machine wall time includes
# the wait for a processor.
#
# Before anything is timed, msg-resequence must write the stream in order,
# byte for byte the unshuffled stream, and say in its --stats that nothing
# was skipped, late, duplicated or left waiting; sort must put the lines
# in order; else the run is broken (exit 1).
set -u

here=$(dirname "$0")
. "$here/lib.sh"

part=${2:-all}
bench_check_part resequence.sh "$part" stream batch state
bench_init "${1:-build}"
resequence=$(bench_tool msg-resequence) || exit 1
tap=$(bench_tool msg-tap) || exit 1
# The figures are for the tools as they run by default: a history header
# would also make the output differ from the unshuffled stream.
unset MSG_HISTORY MSG_INVALID MSG_DEAD_LETTER

MESSAGES=${BENCH_MESSAGES:-1000000}
STATE_MESSAGES=${BENCH_STATE_MESSAGES:-200000}
PEER_RUNS=${BENCH_PEER_RUNS:-$((BENCH_RUNS < 2 ? BENCH_RUNS : 2))}
STATE_RUNS=${BENCH_STATE_RUNS:-$((BENCH_RUNS < 2 ? BENCH_RUNS : 2))}
SPILL=${BENCH_SPILL:-16M}
bench_need_positive \
	"BENCH_MESSAGES, BENCH_STATE_MESSAGES, BENCH_PEER_RUNS and BENCH_STATE_RUNS" \
	"$MESSAGES" "$STATE_MESSAGES" "$PEER_RUNS" "$STATE_RUNS"
WINDOW=1000		# the shuffle of the timed stream
WIDE=100000		# the shuffle of the memory figure
RATE_TARGET=1000000	# messages per second, stream mode
TAP_TARGET=0.5		# fraction of msg-tap's rate

# gen_stream FORM COUNT WINDOW: COUNT records numbered from 1, each window
# of WINDOW numbers shuffled (1: in order), as FORM: "frames" (messages
# as msg-wrap would frame them, one sequence) or "lines" (the number, a
# space, the record).
gen_stream() {
	awk -v form="$1" -v n="$2" -v w="$3" '
	function emit(k,    body) {
		body = sprintf("{\"n\":%d,\"sku\":\"SKU-%05d\",\"qty\":%d}",
			k, (k * 31) % 100000, 1 + k % 9)
		if (form == "lines") {
			print k, body
			return
		}
		printf "Message-Id: 01a23cc3-22e8-7081-95e2-%012x\n", k
		printf "Timestamp: 2026-12-03T16:35:51.%03dZ\n", k % 1000
		printf "Content-Type: application/json\n"
		printf "Correlation-Id: bench-sequence\n"
		printf "Sequence-Number: %d\n", k
		printf "Content-Length: %d\n\n%s\n", length(body), body
	}
	BEGIN {
		srand(1)
		for (first = 1; first <= n; first += w) {
			m = (first + w - 1 <= n) ? w : n - first + 1
			for (i = 1; i <= m; i++)
				p[i] = first + i - 1
			# Fisher-Yates: every order of the window alike.
			for (i = m; i > 1; i--) {
				j = int(rand() * i) + 1
				t = p[i]; p[i] = p[j]; p[j] = t
			}
			for (i = 1; i <= m; i++)
				emit(p[i])
		}
	}'
}

# cache_stream FORM COUNT WINDOW: sets BENCH_FILE to the cached stream.
cache_stream() {
	bench_cache "resequence-$2-w$3.$1" gen_stream "$1" "$2" "$3"
}

# check_output WANT OUT STATS COUNT WHAT: OUT, what WHAT wrote on COUNT
# messages, must be WANT byte for byte, and STATS, its --stats, must say
# that they all went in and out and nothing else happened to any.
check_output() {
	cmp -s "$1" "$2" ||
		bench_die "$5 did not write the stream in order ($(cmp "$1" "$2" 2>&1))"
	for _cofig in "in $4" "out $4" "gaps 0" "skipped 0" "late 0" \
		"duplicates 0" "invalid 0" "expired 0" "waiting 0"; do
		grep -q "[:,] $_cofig\(,\|$\)" "$3" ||
			bench_die "$5 --stats does not say '$_cofig': $(cat "$3")"
	done
	rm -f "$2"
}

# check_run WANT COUNT CMD [ARG...]: CMD --stats on $in, checked by
# check_output; its --stats are left in $BENCH_TMP/stats.
check_run() {
	_crwant=$1 _crcount=$2
	shift 2
	"$@" --stats <"$in" >"$BENCH_TMP/out" 2>"$BENCH_TMP/stats" ||
		bench_die "'$*' failed on '$in':" \
			"$(cat "$BENCH_TMP/stats") (stale cache? remove $BENCH_CACHE)"
	check_output "$_crwant" "$BENCH_TMP/out" "$BENCH_TMP/stats" \
		"$_crcount" "'$*'"
}

# most STATS: the most messages that waited at once, from --stats.
most() {
	sed -n 's/.*, most \([0-9]*\).*/\1/p' "$1"
}

bench_stream() {
	cache_stream frames "$MESSAGES" 1
	ordered=$BENCH_FILE
	cache_stream frames "$MESSAGES" "$WINDOW"
	in=$BENCH_FILE
	echo "resequence: stream mode, $MESSAGES messages shuffled within" \
		"windows of $WINDOW ($(bench_mb "$(bench_size "$in")") MB)"
	bench_load_note

	check_run "$ordered" "$MESSAGES" "$resequence"
	most_narrow=$(most "$BENCH_TMP/stats")
	bench_measure "$in" pipe "$resequence"
	reseq_us=$BENCH_US narrow_rss=$BENCH_RSS
	rate=$(bench_per_sec "$MESSAGES" "$reseq_us")
	bench_result "msg-resequence | cat" "$reseq_us" "$narrow_rss" "$rate msg/s"
	bench_cpu_best "$PEER_RUNS" "$in" pipe "$resequence"
	bench_cpu_note "msg-resequence" "$MESSAGES" msg

	# msg-tap passes the stream as it came: its output is the input.
	check_tap
	bench_measure "$in" pipe "$tap" /dev/null
	tap_us=$BENCH_US
	bench_result "msg-tap /dev/null | cat" "$tap_us" "$BENCH_RSS" \
		"$(bench_per_sec "$MESSAGES" "$tap_us") msg/s"
	bench_cpu_best "$PEER_RUNS" "$in" pipe "$tap" /dev/null
	bench_cpu_note "msg-tap" "$MESSAGES" msg

	bench_verdict "stream mode, messages per second" "$rate" ">=" \
		"$RATE_TARGET" " msg/s"
	bench_verdict "stream mode, rate / msg-tap's" \
		"$(bench_ratio "$tap_us" "$reseq_us")" ">=" "$TAP_TARGET" "x"

	cache_stream frames "$MESSAGES" "$WIDE"
	in=$BENCH_FILE
	check_run "$ordered" "$MESSAGES" "$resequence" -C "$WIDE"
	most_wide=$(most "$BENCH_TMP/stats")
	echo "  most messages waiting at once: $most_narrow with windows of" \
		"$WINDOW, $most_wide with windows of $WIDE"
	BENCH_RSS=$narrow_rss
	bench_rss_line "msg-resequence, windows of $WINDOW"
	bench_peak_rss "$in" pipe "$resequence" -C "$WIDE"
	bench_rss_line "msg-resequence -C $WIDE, windows of $WIDE"
	[ -n "$BENCH_RSS" ] && [ -n "$narrow_rss" ] || return 0
	bench_report "peak RSS, windows of $WIDE / of $WINDOW" \
		"$(bench_ratio "$BENCH_RSS" "$narrow_rss")" "x"
	bench_report "peak RSS per message waiting, windows of $WIDE less $WINDOW" \
		"$(awk -v a="$BENCH_RSS" -v b="$narrow_rss" \
			-v n="$((most_wide - most_narrow))" \
			'BEGIN { printf "%.0f", (n > 0 ? (a - b) * 1024 / n : 0) }')" \
		" bytes"
}

# check_tap: msg-tap /dev/null must pass $in on unchanged.
check_tap() {
	"$tap" /dev/null <"$in" | cmp -s - "$in" ||
		bench_die "msg-tap /dev/null did not pass '$in' on unchanged"
}

bench_batch() {
	cache_stream frames "$MESSAGES" 1
	ordered=$BENCH_FILE
	cache_stream lines "$MESSAGES" 1
	sorted=$BENCH_FILE
	cache_stream lines "$MESSAGES" "$WINDOW"
	lines=$BENCH_FILE
	cache_stream frames "$MESSAGES" "$WINDOW"
	in=$BENCH_FILE
	echo "resequence: --batch against sort, $MESSAGES messages shuffled" \
		"within windows of $WINDOW ($(bench_mb "$(bench_size "$in")") MB" \
		"as messages, $(bench_mb "$(bench_size "$lines")") MB as lines)"
	bench_load_note

	check_run "$ordered" "$MESSAGES" "$resequence" --batch
	LC_ALL=C sort -n -s -k1,1 <"$lines" | cmp -s - "$sorted" ||
		bench_die "sort -n -s -k1,1 did not put '$lines' in order"

	bench_measure_long "$PEER_RUNS" "$in" "$resequence" --batch
	batch_us=$BENCH_US batch_rss=$BENCH_RSS
	bench_result "msg-resequence --batch | cat" "$batch_us" "$batch_rss" \
		"$(bench_per_sec "$MESSAGES" "$batch_us") msg/s"
	bench_cpu_note "msg-resequence --batch" "$MESSAGES" msg
	bench_measure_long "$PEER_RUNS" "$lines" env LC_ALL=C sort -n -s -k1,1
	sort_us=$BENCH_US sort_rss=$BENCH_RSS
	bench_result "LC_ALL=C sort -n -s -k1,1 | cat" "$sort_us" "$sort_rss" \
		"$(bench_per_sec "$MESSAGES" "$sort_us") lines/s"
	bench_cpu_note "sort" "$MESSAGES" lines

	check_run "$ordered" "$MESSAGES" "$resequence" \
		--batch --max-bytes "$SPILL"
	bench_measure_long "$PEER_RUNS" "$in" "$resequence" --batch \
		--max-bytes "$SPILL"
	bench_result "msg-resequence --batch --max-bytes $SPILL" "$BENCH_US" \
		"$BENCH_RSS" "$(bench_per_sec "$MESSAGES" "$BENCH_US") msg/s"
	bench_cpu_note "msg-resequence --batch, spilling" "$MESSAGES" msg

	bench_report "msg-resequence --batch vs sort -n -s, times faster" \
		"$(bench_ratio "$sort_us" "$batch_us")" "x"
	if [ -n "$batch_rss" ] && [ -n "$sort_rss" ]; then
		bench_report "peak RSS, msg-resequence --batch / sort" \
			"$(bench_ratio "$batch_rss" "$sort_rss")" "x"
	fi
}

# One run of msg-resequence with a new state directory in the scratch
# directory, its input through cat as from a stage upstream; sh -c rather
# than a function, as time(1) runs it too.
# Usage: sh -c "$resequence_state" sh SCRATCH RESEQUENCE ARG...
resequence_state='d=$(mktemp -d "$1/state.XXXXXX") || exit 1
r=$2
shift 2
cat | "$r" --state "$d/st" "$@"'

remove_states() {
	rm -rf "$BENCH_TMP"/state.*
}

bench_state() {
	cache_stream frames "$STATE_MESSAGES" 1
	ordered=$BENCH_FILE
	cache_stream frames "$STATE_MESSAGES" "$WINDOW"
	in=$BENCH_FILE
	fs=$(stat -f -c %T "$BENCH_TMP" 2>/dev/null || echo unknown)
	echo "resequence: with --state on $fs, $STATE_MESSAGES messages" \
		"shuffled within windows of $WINDOW, through a pipe"
	bench_load_note

	bench_strace_syncs "$in" "$BENCH_TMP/out" "$BENCH_TMP/stats" \
		sh -c "$resequence_state" sh "$BENCH_TMP" "$resequence" --stats ||
		bench_die "msg-resequence --state failed on '$in':" \
			"$(cat "$BENCH_TMP/stats")"
	remove_states
	check_output "$ordered" "$BENCH_TMP/out" "$BENCH_TMP/stats" \
		"$STATE_MESSAGES" "msg-resequence --state"
	syncs=$BENCH_SYNCS

	BENCH_CPU_TIDY=remove_states
	bench_measure_long "$STATE_RUNS" "$in" sh -c "$resequence_state" sh \
		"$BENCH_TMP" "$resequence"
	BENCH_CPU_TIDY=
	bench_result "cat | msg-resequence --state | cat" "$BENCH_US" \
		"$BENCH_RSS" "$(bench_per_sec "$STATE_MESSAGES" "$BENCH_US") msg/s"
	bench_cpu_note "msg-resequence --state (and cat)" "$STATE_MESSAGES" msg
	bench_report "with --state, messages per second" \
		"$(bench_per_sec "$STATE_MESSAGES" "$BENCH_US")" " msg/s"
	bench_report_syncs "input through a pipe" "$syncs" "$STATE_MESSAGES"
}

case $part in
all)
	bench_stream
	bench_batch
	bench_state
	;;
stream) bench_stream ;;
batch) bench_batch ;;
state) bench_state ;;
esac
