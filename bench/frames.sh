#!/bin/sh
# frames: msg-wrap --lines and msg-unwrap throughput against cat(1).
# usage: sh bench/frames.sh [BUILD] [all | wrap | unwrap]
#
# wrap:   msg-wrap -l on BENCH_LINES (default 1000000) lines of 100 bytes;
#         target: at least 1,000,000 messages per second.
# unwrap: msg-unwrap on BENCH_BODIES (default 500) frames of 1 MiB bodies;
#         target: at least half of cat's throughput on the same bytes.
#
# Each tool runs twice, into /dev/null and through a pipe into
# cat > /dev/null. Targets are judged on the pipe: that is how the tools
# run in a flow, and it makes both sides copy every byte they emit, while
# writes to /dev/null cost nothing and leave only the read. The /dev/null
# figures are printed for reference.
set -u

here=$(dirname "$0")
. "$here/lib.sh"

part=${2:-all}
bench_check_part frames.sh "$part" wrap unwrap
bench_init "${1:-build}"
wrap=$(bench_tool msg-wrap) || exit 1
unwrap=$(bench_tool msg-unwrap) || exit 1

LINES=${BENCH_LINES:-1000000}
BODIES=${BENCH_BODIES:-500}
BODY_SIZE=1048576
WRAP_TARGET=1000000	# messages per second
UNWRAP_TARGET=0.50	# fraction of cat's throughput

# N lines of 100 bytes of text plus LF, each different (a serial number).
gen_lines() {
	awk -v n="$1" 'BEGIN {
		s = "the quick brown fox jumps over the lazy dog; "
		while (length(s) < 91) s = s s
		s = substr(s, 1, 91)
		for (i = 1; i <= n; i++) printf "%08d %s\n", i, s
	}'
}

# A broken tool must not pass for a fast one: round-trip the input once,
# outside the timed runs, and compare it with the original byte for byte.
check_lines() {
	rm -f "$BENCH_TMP/st1" "$BENCH_TMP/st2"
	# cksum reads to the end, so a mismatch cannot end the run by SIGPIPE.
	_got=$({
		"$wrap" -l <"$1"
		echo $? >"$BENCH_TMP/st1"
	} | {
		"$unwrap" -s '\n'
		echo $? >"$BENCH_TMP/st2"
		echo	# the separator goes between bodies, not after the last
	} | cksum)
	_want=$(cksum <"$1")
	# One failing side usually takes the other down: report both.
	_st1=$(cat "$BENCH_TMP/st1") _st2=$(cat "$BENCH_TMP/st2")
	if [ "$_st1" != 0 ] || [ "$_st2" != 0 ]; then
		bench_die "msg-wrap -l < '$1' | msg-unwrap failed" \
			"(msg-wrap exit $_st1, msg-unwrap exit $_st2)"
	fi
	[ "$_got" = "$_want" ] ||
		bench_die "msg-wrap -l | msg-unwrap does not give back '$1'"
}

check_frames() {
	rm -f "$BENCH_TMP/st1"
	_got=$({
		"$unwrap" <"$1"
		echo $? >"$BENCH_TMP/st1"
	} | wc -c)
	[ "$(cat "$BENCH_TMP/st1")" = 0 ] ||
		bench_die "msg-unwrap failed on '$1' (stale cache? remove $BENCH_CACHE)"
	[ $((_got)) -eq "$2" ] ||
		bench_die "msg-unwrap gave $((_got)) bytes, want $2 (stale cache? remove $BENCH_CACHE)"
}

bench_wrap() {
	bench_cache "lines-${LINES}x100.txt" gen_lines "$LINES"
	in=$BENCH_FILE
	bytes=$(bench_size "$in") || exit 1
	check_lines "$in"
	echo "frames: msg-wrap --lines, $LINES lines of 100 bytes + LF" \
		"($(bench_mb "$bytes") MB)"
	for sink in null pipe; do
		bench_cat_baseline "$in" "$sink" lines "$bytes"
		bench_measure "$in" "$sink" "$wrap" -l
		rate=$(bench_per_sec "$LINES" "$BENCH_US")
		bench_result "msg-wrap -l < lines $BENCH_TO" "$BENCH_US" \
			"$BENCH_RSS" "$rate msg/s"
		echo "  msg-wrap -l takes $(bench_ratio "$BENCH_US" "$BENCH_CAT_US")x" \
			"cat's time ($BENCH_TO)"
		case $sink in
		null) echo "  (into /dev/null: for reference, not judged)" ;;
		pipe) bench_verdict "msg-wrap -l through a pipe" "$rate" ">=" \
			"$WRAP_TARGET" " msg/s" ;;
		esac
	done
}

bench_unwrap() {
	bench_cache_frames "frames-${BODIES}x${BODY_SIZE}.msg" "$wrap" \
		"$BODIES" "$BODY_SIZE"
	in=$BENCH_FILE
	bytes=$(bench_size "$in") || exit 1
	check_frames "$in" $((BODIES * BODY_SIZE))
	echo "frames: msg-unwrap, $BODIES frames with 1 MiB bodies" \
		"($(bench_mb "$bytes") MB of frames)"
	for sink in null pipe; do
		bench_cat_baseline "$in" "$sink" frames "$bytes"
		bench_measure "$in" "$sink" "$unwrap"
		bench_mb_result "msg-unwrap < frames $BENCH_TO" "$bytes"
		# Same bytes in, so the throughput ratio is the inverse time ratio.
		share=$(bench_ratio "$BENCH_CAT_US" "$BENCH_US")
		case $sink in
		null) echo "  msg-unwrap runs at ${share}x cat's throughput" \
			"(into /dev/null: for reference, not judged)" ;;
		pipe) bench_verdict "msg-unwrap through a pipe, throughput vs cat" \
			"$share" ">=" "$UNWRAP_TARGET" "x" ;;
		esac
	done
}

case $part in
all)
	bench_wrap
	bench_unwrap
	;;
wrap) bench_wrap ;;
unwrap) bench_unwrap ;;
esac
