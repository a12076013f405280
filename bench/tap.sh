#!/bin/sh
# tap: msg-tap with a file tap against tee(1).
# usage: sh bench/tap.sh [BUILD]
#
# msg-tap TAPFILE against tee TAPFILE on the same bytes, in two cases, one
# after the other; target in both: at least 80% of tee's throughput.
#
# large: BENCH_TAP_MESSAGES (default 2000) frames with 64 KiB bodies.
# small: BENCH_TAP_SMALL (default 1000000) frames with 100-byte bodies,
#        the frames msg-wrap -l makes of as many 100-byte lines: the small
#        frames of bench/frames.sh, from the same cache.
#
# In each case both run twice, stdout into /dev/null and through a pipe
# into cat > /dev/null. Each run writes its tap to a new file (named
# after the process id of the sh that execs the tool): msg-tap appends to
# a file and tee truncates it, so a file left by an earlier run would
# cost them differently. The files are removed after each measurement,
# outside the timed runs; the sh costs both sides the same.
#
# The two cases are judged differently. large is judged on the wall time
# through the pipe, where a tap sits in a flow: there the time goes to
# copying the bytes, and both sides copy every byte they emit; the
# /dev/null figures are printed for reference. On a shared machine wall
# time includes the wait for a processor, so the processor time (user +
# system, best of as many runs) of each tool through the pipe is printed
# too, for reference, with the load average.
#
# small measures the framing itself, a frame at a time, and is judged as
# bench/frames.sh judges the same frames: on processor time (user +
# system, best of BENCH_RUNS) into /dev/null, which a machine shared with
# other work does not inflate as it does wall time; the wall times, into
# /dev/null and through the pipe, are printed for reference, with the
# best wall time of the processor-time runs and the load average.
# Without time(1) the small case cannot be judged: the run is broken.
#
# Before anything is timed in a case, msg-tap must pass its input to
# stdout and to the tap file byte for byte, or the run is broken (exit 1).
set -u

here=$(dirname "$0")
. "$here/lib.sh"

bench_init "${1:-build}"
tap=$(bench_tool msg-tap) || exit 1
wrap=$(bench_tool msg-wrap) || exit 1
unwrap=$(bench_tool msg-unwrap) || exit 1
# The figures are for msg-tap as it runs by default: a history header
# would make its copies differ from the input.
unset MSG_HISTORY

MESSAGES=${BENCH_TAP_MESSAGES:-2000}
SMALL=${BENCH_TAP_SMALL:-1000000}
bench_need_positive "BENCH_TAP_MESSAGES and BENCH_TAP_SMALL" \
	"$MESSAGES" "$SMALL"
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
# bench_cpu_best and bench_measure_cpu remove them after each of their
# runs.
# shellcheck disable=SC2034 # read in lib.sh
BENCH_CPU_TIDY=remove_taps

# compare_wall COUNT BODIES PIPE: the case of the COUNT frames with BODIES
# bodies just cached in BENCH_FILE (sets in and bytes to it and its size):
# check_tap on it, then tee and msg-tap by wall time, into /dev/null and
# through a pipe, each beside cat. msg-tap's share of tee's throughput is
# printed for reference into /dev/null, and through the pipe judged if
# PIPE is "judged", else for reference too.
compare_wall() {
	bench_use_cached
	check_tap "$in"
	echo "tap: msg-tap to a file, $1 frames with $2 bodies" \
		"($(bench_mb "$bytes") MB of frames)"
	bench_load_note
	for sink in null pipe; do
		bench_cat_baseline "$in" "$sink" frames "$bytes"
		bench_measure "$in" "$sink" sh -c "$to_new_file" tee "$BENCH_TMP"
		remove_taps
		tee_us=$BENCH_US
		bench_mb_result "tee file < frames $BENCH_TO" "$bytes"
		bench_measure "$in" "$sink" sh -c "$to_new_file" "$tap" \
			"$BENCH_TMP"
		remove_taps
		bench_mb_result "msg-tap file < frames $BENCH_TO" "$bytes"
		# Same bytes in, so the throughput ratio is the inverse time ratio.
		share=$(bench_ratio "$tee_us" "$BENCH_US")
		case $sink in
		null) where="into /dev/null" ;;
		pipe) where="through a pipe" ;;
		esac
		if [ "$sink/$3" = pipe/judged ]; then
			bench_verdict "msg-tap $where, throughput vs tee" \
				"$share" ">=" "$TEE_TARGET" "x"
		else
			echo "  msg-tap runs at ${share}x tee's throughput" \
				"($where: for reference, not judged)"
		fi
	done
}

# large: 64 KiB bodies, judged on the wall time through the pipe.
bench_cache_frames "tap-frames-${MESSAGES}x$BODY_SIZE.msg" "$wrap" \
	"$MESSAGES" "$BODY_SIZE"
compare_wall "$MESSAGES" "64 KiB" judged
bench_cpu_best "$BENCH_RUNS" "$in" pipe sh -c "$to_new_file" tee "$BENCH_TMP"
tee_cpu=$BENCH_CPU_MS
bench_cpu_best "$BENCH_RUNS" "$in" pipe sh -c "$to_new_file" "$tap" "$BENCH_TMP"
if [ -n "$tee_cpu" ] && [ -n "$BENCH_CPU_MS" ]; then
	echo "  (processor time, user + system, through a pipe: tee $tee_cpu ms," \
		"msg-tap $BENCH_CPU_MS ms; for reference)"
fi

# small: 100-byte bodies, judged on processor time into /dev/null.
bench_cache_small_frames "$wrap" "$unwrap" "$SMALL"
compare_wall "$SMALL" 100-byte reference
bench_measure_cpu "tee file < frames > /dev/null" "$SMALL" "frames/s" \
	"$in" sh -c "$to_new_file" tee "$BENCH_TMP"
tee_cpu=$BENCH_CPU_MS
bench_measure_cpu "msg-tap file < frames > /dev/null" "$SMALL" "frames/s" \
	"$in" sh -c "$to_new_file" "$tap" "$BENCH_TMP"
# Same bytes in, so the throughput ratio is the inverse time ratio.
bench_verdict "msg-tap into /dev/null, processor time, throughput vs tee" \
	"$(bench_ratio "$tee_cpu" "$BENCH_CPU_MS")" ">=" "$TEE_TARGET" "x"
