#!/bin/sh
# dedupe: msg-dedupe on a stream with a tenth of its messages copies, in
# memory, with --state, from spool to spool, and against awk '!seen[$0]++'.
# usage: sh bench/dedupe.sh [BUILD] [all | memory | state | spool | awk]
#
# Data: BENCH_MESSAGES (default 1000000, a multiple of 10) small messages,
# a JSON record of about 40 bytes each (about 175 bytes a frame), every
# tenth of them a byte-for-byte copy of one of the 1,000 messages before
# it, as a stage that is killed and restarted writes again what it had in
# flight: nine tenths distinct keys (Message-Id, the default key), one
# tenth duplicates. The same keys are also written one a line, for awk.
#
# memory: msg-dedupe in memory. Target: at least 1,000,000 messages per
#         second. Peak RSS, and what one key held takes: the peak RSS of
#         the run that holds every distinct key, less that of the same run
#         with --max-keys 1000 (which drops no copy, as every copy is of
#         one of the 1,000 keys before it), over the keys between; the
#         same with --key-hash.
# state:  msg-dedupe --state DIR, its input through a pipe as from a stage
#         upstream (cat | msg-dedupe), its output through a pipe, a new
#         state directory in the scratch directory for each run (the file
#         system is named in the output: on a tmpfs fsync costs nothing).
#         Target: at least 100,000 messages per second. The fsync(2) and
#         fdatasync(2) calls per 1,000 messages, counted by strace -c -f
#         when it is installed, are reported, and what a key takes in
#         memory (as in memory, with --max-keys 1000 beside) and in the
#         state directory (du, over the keys). At seconds a run, it runs
#         best of BENCH_STATE_RUNS (default BENCH_RUNS, at most 2), each
#         timed under time(1) for its processor time and peak RSS at once.
# spool:  msg-dedupe --once --state DIR from a dir: spool into another,
#         the mode in which every message comes out exactly once, on the
#         first BENCH_SPOOL_MESSAGES (default 1000) messages, put into a
#         new spool before each run, untimed. No target: messages per
#         second and fsync calls per 1,000 messages, reported, best of
#         BENCH_STATE_RUNS runs. A spool syncs each message it is given,
#         so this is the file system's figure more than the tool's.
# awk:    awk '!seen[$0]++' on the keys one a line, the usual ad-hoc way
#         to drop repeated lines, against msg-dedupe in memory on the
#         messages. No target: the ratio of their times, and of their peak
#         RSS, reported.
#
# The tools write through a pipe into cat > /dev/null: what msg-dedupe
# passes is what the next stage reads. The processor time of each is
# printed after its wall time, for reference: on a shared machine wall
# time includes the wait for a processor.
#
# Before anything is timed, msg-dedupe must pass each distinct message
# once, in order, byte for byte, and say so in its --stats (in, out,
# duplicates, keys, forgotten), with each option timed; awk must print
# each key once, in order; else the run is broken (exit 1).
set -u

here=$(dirname "$0")
. "$here/lib.sh"

part=${2:-all}
bench_check_part dedupe.sh "$part" memory state spool awk
bench_init "${1:-build}"
dedupe=$(bench_tool msg-dedupe) || exit 1
route=$(bench_tool msg-route) || exit 1
# The figures are for the tool as it runs by default: a history header
# would also make its output differ from the messages it was given.
unset MSG_HISTORY MSG_INVALID MSG_DEAD_LETTER

MESSAGES=${BENCH_MESSAGES:-1000000}
SPOOL_MESSAGES=${BENCH_SPOOL_MESSAGES:-1000}
STATE_RUNS=${BENCH_STATE_RUNS:-$((BENCH_RUNS < 2 ? BENCH_RUNS : 2))}
bench_need_positive \
	"BENCH_MESSAGES, BENCH_SPOOL_MESSAGES and BENCH_STATE_RUNS" \
	"$MESSAGES" "$SPOOL_MESSAGES" "$STATE_RUNS"
if [ $((MESSAGES % 10)) -ne 0 ] || [ $((SPOOL_MESSAGES % 10)) -ne 0 ]; then
	bench_die "BENCH_MESSAGES and BENCH_SPOOL_MESSAGES must be multiples of 10"
fi
FEW=1000		# keys held with --max-keys; copies come from as near
MEMORY_TARGET=1000000	# messages per second, in memory
STATE_TARGET=100000	# messages per second, with --state
memory_us=		# msg-dedupe in memory, for the awk part
memory_rss=
memory_cpu=

# gen_stream FORM COUNT: COUNT messages, every tenth a copy of one of the
# 1,000 distinct messages before it, as FORM: "frames" (messages as
# msg-wrap would frame them), "keys" (their Message-Ids, one a line), or
# "unique-frames" and "unique-keys", the same without the copies: what
# msg-dedupe and awk must write. Message N of a smaller COUNT is message
# N of a larger one.
gen_stream() {
	awk -v form="$1" -v n="$2" '
	function emit(k,    id, body) {
		id = sprintf("01a23cc3-22e8-7081-95e2-%012x", k)
		if (form ~ /keys$/) {
			print id
			return
		}
		body = sprintf("{\"n\":%d,\"sku\":\"SKU-%05d\",\"qty\":%d}",
			k, (k * 31) % 100000, 1 + k % 9)
		printf "Message-Id: %s\n", id
		printf "Timestamp: 2026-12-03T16:35:51.%03dZ\n", k % 1000
		printf "Content-Type: application/json\n"
		printf "Content-Length: %d\n\n%s\n", length(body), body
	}
	BEGIN {
		copies = form !~ /^unique-/
		for (i = 1; i <= n; i++) {
			if (i % 10 != 0)
				emit(++distinct)
			else if (copies)
				emit(distinct - (i * 7919) % (distinct < 1000 ? distinct : 1000))
		}
	}'
}

# cache_stream FORM COUNT: sets in to the cached stream.
cache_stream() {
	bench_cache "dedupe-$2.$1" gen_stream "$1" "$2"
	in=$BENCH_FILE
}

# check_stats STATS FIGURE...: STATS, a --stats line, must say each
# FIGURE ("out 9", "keys 9").
check_stats() {
	_csfile=$1
	shift
	for _csfig; do
		grep -q "[:,] $_csfig\(,\|$\)" "$_csfile" ||
			bench_die "msg-dedupe --stats does not say '$_csfig':" \
				"$(cat "$_csfile")"
	done
}

# check_output OUT STATS COUNT KEYS FORGOTTEN: OUT, what msg-dedupe wrote
# on the first COUNT messages, must be each distinct one once, in order,
# byte for byte, and STATS, its --stats, must say so, with KEYS held at
# the end and FORGOTTEN forgotten.
check_output() {
	_coout=$1
	bench_cache "dedupe-$3.unique-frames" gen_stream unique-frames "$3"
	cmp -s "$BENCH_FILE" "$_coout" ||
		bench_die "msg-dedupe did not pass each distinct message once" \
			"($(cmp "$BENCH_FILE" "$_coout" 2>&1))"
	check_stats "$2" "in $3" "out $(($3 * 9 / 10))" \
		"duplicates $(($3 / 10))" "invalid 0" "expired 0" "keys $4" \
		"forgotten $5"
	rm -f "$1" "$2"
}

# check_memory ARG...: msg-dedupe ARG... on $in, checked. Every distinct
# key is held at the end, or the FEW latest with --max-keys FEW.
check_memory() {
	"$dedupe" --stats "$@" <"$in" >"$BENCH_TMP/out" 2>"$BENCH_TMP/stats" ||
		bench_die "msg-dedupe $* failed on '$in':" \
			"$(cat "$BENCH_TMP/stats") (stale cache? remove $BENCH_CACHE)"
	_cmkeys=$((MESSAGES * 9 / 10)) _cmforgotten=0
	case " $* " in
	*" --max-keys $FEW "*)
		_cmforgotten=$((_cmkeys - FEW)) _cmkeys=$FEW ;;
	esac
	check_output "$BENCH_TMP/out" "$BENCH_TMP/stats" "$MESSAGES" \
		"$_cmkeys" "$_cmforgotten"
}

# per_key LABEL ALL FEW: the peak RSS ALL less FEW (KiB) over the keys
# held between, reported as LABEL.
per_key() {
	[ -n "$2" ] && [ -n "$3" ] || return 0
	bench_report "$1" "$(awk -v a="$2" -v b="$3" \
		-v n=$((MESSAGES * 9 / 10 - FEW)) \
		'BEGIN { printf "%.0f", (a - b) * 1024 / n }')" " bytes"
}

# measure_memory: msg-dedupe in memory on $in, checked, timed and
# judged, with its processor time. Sets memory_us, memory_rss and
# memory_cpu.
measure_memory() {
	check_memory
	bench_measure "$in" pipe "$dedupe"
	memory_us=$BENCH_US memory_rss=$BENCH_RSS
	rate=$(bench_per_sec "$MESSAGES" "$memory_us")
	bench_result "msg-dedupe | cat" "$memory_us" "$memory_rss" "$rate msg/s"
	bench_cpu_best "$BENCH_RUNS" "$in" pipe "$dedupe"
	memory_cpu=$BENCH_CPU_MS
	bench_cpu_note "msg-dedupe" "$MESSAGES" msg
	bench_verdict "in memory, messages per second" "$rate" ">=" \
		"$MEMORY_TARGET" " msg/s"
}

bench_memory() {
	cache_stream frames "$MESSAGES"
	echo "dedupe: in memory, $MESSAGES messages, $((MESSAGES / 10))" \
		"of them copies ($(bench_mb "$(bench_size "$in")") MB)"
	bench_load_note

	measure_memory
	check_memory --key-hash
	bench_measure "$in" pipe "$dedupe" --key-hash
	hash_rss=$BENCH_RSS
	bench_result "msg-dedupe --key-hash | cat" "$BENCH_US" "$hash_rss" \
		"$(bench_per_sec "$MESSAGES" "$BENCH_US") msg/s"

	echo "  keys held: $((MESSAGES * 9 / 10)), or $FEW with --max-keys $FEW"
	BENCH_RSS=$memory_rss
	bench_rss_line "msg-dedupe"
	check_memory --max-keys "$FEW"
	bench_peak_rss "$in" pipe "$dedupe" --max-keys "$FEW"
	bench_rss_line "msg-dedupe --max-keys $FEW"
	per_key "peak RSS per key held (a Message-Id, 36 bytes)" \
		"$memory_rss" "$BENCH_RSS"
	BENCH_RSS=$hash_rss
	bench_rss_line "msg-dedupe --key-hash"
	check_memory --key-hash --max-keys "$FEW"
	bench_peak_rss "$in" pipe "$dedupe" --key-hash --max-keys "$FEW"
	bench_rss_line "msg-dedupe --key-hash --max-keys $FEW"
	per_key "peak RSS per key held, --key-hash" "$hash_rss" "$BENCH_RSS"
}

# One run of msg-dedupe with a new state directory in the scratch
# directory, its input through cat as from a stage upstream; sh -c rather
# than a function, as time(1) runs it too.
# Usage: sh -c "$dedupe_state" sh SCRATCH DEDUPE ARG...
dedupe_state='d=$(mktemp -d "$1/state.XXXXXX") || exit 1
t=$2
shift 2
cat | "$t" --state "$d/st" "$@"'

remove_states() {
	rm -rf "$BENCH_TMP"/state.*
}

bench_state() {
	cache_stream frames "$MESSAGES"
	fs=$(stat -f -c %T "$BENCH_TMP" 2>/dev/null || echo unknown)
	echo "dedupe: with --state on $fs, $MESSAGES messages," \
		"$((MESSAGES / 10)) of them copies, through pipes"
	bench_load_note

	bench_strace_syncs "$in" "$BENCH_TMP/out" "$BENCH_TMP/stats" \
		sh -c "$dedupe_state" sh "$BENCH_TMP" "$dedupe" --stats ||
		bench_die "msg-dedupe --state failed on '$in':" \
			"$(cat "$BENCH_TMP/stats")"
	disk=$(du -k -s "$BENCH_TMP"/state.* | awk '{ n += $1 } END { print n }')
	remove_states
	check_output "$BENCH_TMP/out" "$BENCH_TMP/stats" "$MESSAGES" \
		$((MESSAGES * 9 / 10)) 0
	syncs=$BENCH_SYNCS

	BENCH_CPU_TIDY=remove_states
	bench_measure_long "$STATE_RUNS" "$in" sh -c "$dedupe_state" sh \
		"$BENCH_TMP" "$dedupe"
	BENCH_CPU_TIDY=
	rate=$(bench_per_sec "$MESSAGES" "$BENCH_US")
	bench_result "cat | msg-dedupe --state | cat" "$BENCH_US" \
		"$BENCH_RSS" "$rate msg/s"
	bench_cpu_note "msg-dedupe --state (and cat)" "$MESSAGES" msg
	bench_verdict "with --state, messages per second" "$rate" ">=" \
		"$STATE_TARGET" " msg/s"
	bench_report_syncs "input through a pipe" "$syncs" "$MESSAGES"

	state_rss=$BENCH_RSS
	bench_peak_rss "$in" pipe sh -c "$dedupe_state" sh "$BENCH_TMP" \
		"$dedupe" --max-keys "$FEW"
	remove_states
	bench_rss_line "msg-dedupe --state --max-keys $FEW"
	per_key "peak RSS per key held, --state" "$state_rss" "$BENCH_RSS"
	bench_report "state directory per key held" \
		"$(awk -v k="$disk" -v n=$((MESSAGES * 9 / 10)) \
			'BEGIN { printf "%.0f", k * 1024 / n }')" " bytes"
}

# fill_spool: a new input spool, $BENCH_TMP/in, holding the messages of
# $in, and no output spool or state yet.
fill_spool() {
	rm -rf "$BENCH_TMP/in" "$BENCH_TMP/out" "$BENCH_TMP/st"
	"$route" -f 'true()' --output "dir:$BENCH_TMP/in" <"$in" ||
		bench_die "msg-route could not fill the spool '$BENCH_TMP/in'"
}

# One run of msg-dedupe --once --state from the spool in the scratch
# directory into another.
# Usage: sh -c "$dedupe_spool" sh SCRATCH DEDUPE ARG...
dedupe_spool='s=$1 t=$2
shift 2
exec "$t" "$@" --once --state "$s/st" --output "dir:$s/out" "dir:$s/in"'

bench_spool() {
	cache_stream frames "$SPOOL_MESSAGES"
	fs=$(stat -f -c %T "$BENCH_TMP" 2>/dev/null || echo unknown)
	echo "dedupe: with --state from spool to spool on $fs," \
		"$SPOOL_MESSAGES messages, $((SPOOL_MESSAGES / 10)) of them copies"
	bench_load_note

	fill_spool
	bench_strace_syncs /dev/null /dev/null "$BENCH_TMP/stats" \
		sh -c "$dedupe_spool" sh "$BENCH_TMP" "$dedupe" --stats ||
		bench_die "msg-dedupe from spool to spool failed:" \
			"$(cat "$BENCH_TMP/stats")"
	syncs=$BENCH_SYNCS
	"$route" --once -f 'true()' "dir:$BENCH_TMP/out" >"$BENCH_TMP/out.msg" ||
		bench_die "msg-route could not read the output spool"
	check_output "$BENCH_TMP/out.msg" "$BENCH_TMP/stats" "$SPOOL_MESSAGES" \
		$((SPOOL_MESSAGES * 9 / 10)) 0

	_bsbest=
	_bsi=0
	while [ "$_bsi" -lt "$STATE_RUNS" ]; do
		fill_spool
		bench_run_once /dev/null null sh -c "$dedupe_spool" sh \
			"$BENCH_TMP" "$dedupe"
		if [ -z "$_bsbest" ] || [ "$_bus" -lt "$_bsbest" ]; then
			_bsbest=$_bus
		fi
		_bsi=$((_bsi + 1))
	done
	rm -rf "$BENCH_TMP/in" "$BENCH_TMP/out" "$BENCH_TMP/st"
	rate=$(bench_per_sec "$SPOOL_MESSAGES" "$_bsbest")
	bench_result "msg-dedupe --once --state dir: to dir:" "$_bsbest" "" \
		"$rate msg/s"
	bench_report "spool to spool with --state, messages per second" \
		"$rate" " msg/s"
	bench_report_syncs "spool to spool" "$syncs" "$SPOOL_MESSAGES"
}

bench_awk() {
	cache_stream keys "$MESSAGES"
	keys=$BENCH_FILE
	cache_stream frames "$MESSAGES"
	peer=$(readlink -f "$(command -v awk)" 2>/dev/null) || peer='awk'
	echo "dedupe: against awk '!seen[\$0]++' ($peer), $MESSAGES keys," \
		"$((MESSAGES / 10)) of them repeated" \
		"($(bench_mb "$(bench_size "$in")") MB as messages," \
		"$(bench_mb "$(bench_size "$keys")") MB as lines)"
	bench_load_note

	gen_stream unique-keys "$MESSAGES" >"$BENCH_TMP/want"
	awk '!seen[$0]++' <"$keys" | cmp -s - "$BENCH_TMP/want" ||
		bench_die "awk '!seen[\$0]++' did not print each key once"
	rm -f "$BENCH_TMP/want"
	# The memory part measured msg-dedupe on these messages already.
	if [ -z "$memory_us" ]; then
		measure_memory
	else
		bench_result "msg-dedupe | cat" "$memory_us" "$memory_rss" \
			"$(bench_per_sec "$MESSAGES" "$memory_us") msg/s"
	fi
	bench_measure "$keys" pipe awk '!seen[$0]++'
	bench_result "awk '!seen[\$0]++' | cat" "$BENCH_US" "$BENCH_RSS" \
		"$(bench_per_sec "$MESSAGES" "$BENCH_US") lines/s"
	bench_cpu_best "$BENCH_RUNS" "$keys" pipe awk '!seen[$0]++'
	bench_cpu_note "awk" "$MESSAGES" lines
	bench_peer_ratios msg-dedupe awk "awk '!seen[\$0]++'" "$memory_us" \
		"$memory_cpu" "$memory_rss"
}

case $part in
all)
	bench_memory
	bench_state
	bench_spool
	bench_awk
	;;
memory) bench_memory ;;
state) bench_state ;;
spool) bench_spool ;;
awk) bench_awk ;;
esac
