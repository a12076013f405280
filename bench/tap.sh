#!/bin/sh
# tap: msg-tap with a file tap against tee(1).
# usage: sh bench/tap.sh [BUILD]
#
# msg-tap TAPFILE on BENCH_TAP_MESSAGES (default 2000) frames with 64 KiB
# bodies, against tee TAPFILE on the same bytes. Target: at least 80% of
# tee's throughput.
#
# Both run twice, stdout into /dev/null and through a pipe into
# cat > /dev/null; the target is judged on the pipe, where a tap sits in
# a flow. Each run writes its tap to a new file (named after the process
# id of the sh that execs the tool): msg-tap appends to a file and tee
# truncates it, so a file left by an earlier run would cost them
# differently. The files are removed after each measurement, outside the
# timed runs; the sh costs both sides the same.
#
# On a shared machine wall time includes the wait for a processor, so the
# processor time (user + system, best of as many runs) of each tool is
# printed too, for reference, with the load average.
#
# Before anything is timed, msg-tap must pass its input to stdout and to
# the tap file byte for byte, or the run is broken (exit 1).
set -u

here=$(dirname "$0")
. "$here/lib.sh"

bench_init "${1:-build}"
tap=$(bench_tool msg-tap) || exit 1
wrap=$(bench_tool msg-wrap) || exit 1
# The figures are for msg-tap as it runs by default: a history header
# would make its copies differ from the input.
unset MSG_HISTORY

MESSAGES=${BENCH_TAP_MESSAGES:-2000}
bench_need_positive BENCH_TAP_MESSAGES "$MESSAGES"
BODY_SIZE=65536
TEE_TARGET=0.80		# fraction of tee's throughput

# A tap that loses or changes bytes must not pass for a fast one.
check_tap() {
	_copy=$BENCH_TMP/check.tap
	rm -f "$BENCH_TMP/st1" "$_copy"
	_got=$({
		"$tap" "$_copy" <"$1"
		echo $? >"$BENCH_TMP/st1"
	} | cksum)
	[ "$(cat "$BENCH_TMP/st1")" = 0 ] ||
		bench_die "msg-tap failed on '$1' (stale cache? remove $BENCH_CACHE)"
	_want=$(cksum <"$1")
	[ "$_got" = "$_want" ] || bench_die "msg-tap changed the flow on '$1'"
	[ "$(cksum <"$_copy")" = "$_want" ] ||
		bench_die "msg-tap's tap file differs from '$1'"
	rm -f "$_copy"
}

# Usage: sh -c "$to_new_file" TOOL DIR: TOOL DIR/tap.PID.
to_new_file='exec "$0" "$1/tap.$$"'

# Removes the tap files the runs wrote; called outside the timed runs.
remove_taps() {
	rm -f "$BENCH_TMP"/tap.*
}
# bench_cpu_best removes them after each of its runs.
# shellcheck disable=SC2034 # read in lib.sh
BENCH_CPU_TIDY=remove_taps

bench_cache_frames "tap-frames-${MESSAGES}x$BODY_SIZE.msg" "$wrap" \
	"$MESSAGES" "$BODY_SIZE"
in=$BENCH_FILE
bytes=$(bench_size "$in") || exit 1
check_tap "$in"
echo "tap: msg-tap to a file, $MESSAGES frames with 64 KiB bodies" \
	"($(bench_mb "$bytes") MB of frames)"
bench_load_note
for sink in null pipe; do
	bench_cat_baseline "$in" "$sink" frames "$bytes"
	bench_measure "$in" "$sink" sh -c "$to_new_file" tee "$BENCH_TMP"
	remove_taps
	tee_us=$BENCH_US
	bench_mb_result "tee file < frames $BENCH_TO" "$bytes"
	bench_measure "$in" "$sink" sh -c "$to_new_file" "$tap" "$BENCH_TMP"
	remove_taps
	bench_mb_result "msg-tap file < frames $BENCH_TO" "$bytes"
	# Same bytes in, so the throughput ratio is the inverse time ratio.
	share=$(bench_ratio "$tee_us" "$BENCH_US")
	case $sink in
	null) echo "  msg-tap runs at ${share}x tee's throughput" \
		"(into /dev/null: for reference, not judged)" ;;
	pipe) bench_verdict "msg-tap through a pipe, throughput vs tee" \
		"$share" ">=" "$TEE_TARGET" "x" ;;
	esac
done
bench_cpu_best "$BENCH_RUNS" "$in" pipe sh -c "$to_new_file" tee "$BENCH_TMP"
tee_cpu=$BENCH_CPU_MS
bench_cpu_best "$BENCH_RUNS" "$in" pipe sh -c "$to_new_file" "$tap" "$BENCH_TMP"
if [ -n "$tee_cpu" ] && [ -n "$BENCH_CPU_MS" ]; then
	echo "  (processor time, user + system, through a pipe: tee $tee_cpu ms," \
		"msg-tap $BENCH_CPU_MS ms; for reference)"
fi
