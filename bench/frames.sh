#!/bin/sh
# frames: the frame path of the tools against cat(1) and tee(1).
# usage: sh bench/frames.sh [BUILD] [all | wrap | unwrap | small | xpath]
#
# wrap:   msg-wrap -l on BENCH_LINES (default 1000000) lines of 100 bytes;
#         target: at least 4,000,000 messages per second.
# unwrap: msg-unwrap on BENCH_BODIES (default 500) frames of 1 MiB bodies;
#         target: at least half of cat's throughput on the same bytes.
# small:  the frames msg-wrap -l makes of those lines (100-byte bodies),
#         through msg-tap FILE against tee FILE (target: at least 0.8x
#         tee's throughput), msg-unwrap against cat (target: at least
#         8,000,000 frames per second) and msg-route -f by header()
#         (target: at least 6,000,000 messages per second).
# xpath:  msg-route -f '/order/@type = "rush"' on BENCH_ORDERS (default
#         200000) XML orders of about 200 bytes, one a message; target:
#         at least 300,000 messages per second.
#
# In wrap and unwrap each tool runs twice, into /dev/null and through a
# pipe into cat > /dev/null. Targets are judged on the pipe: that is how
# the tools run in a flow, and it makes both sides copy every byte they
# emit, while writes to /dev/null cost nothing and leave only the read.
# The /dev/null figures are printed for reference.
#
# small and xpath measure the framing itself: output into /dev/null, and
# the targets judged on processor time (user + system, best of
# BENCH_RUNS), which a machine shared with other work does not inflate as
# it does wall time; the best wall time is printed beside it, with the
# load average.
set -u

here=$(dirname "$0")
. "$here/lib.sh"

part=${2:-all}
bench_check_part frames.sh "$part" wrap unwrap small xpath
bench_init "${1:-build}"
wrap=$(bench_tool msg-wrap) || exit 1
unwrap=$(bench_tool msg-unwrap) || exit 1
tap=$(bench_tool msg-tap) || exit 1
route=$(bench_tool msg-route) || exit 1
# The figures are for the tools as they run by default: a history header
# would change what is written and checked.
unset MSG_HISTORY MSG_INVALID MSG_DEAD_LETTER

LINES=${BENCH_LINES:-1000000}
BODIES=${BENCH_BODIES:-500}
ORDERS=${BENCH_ORDERS:-200000}
bench_need_positive "BENCH_LINES, BENCH_BODIES and BENCH_ORDERS" \
	"$LINES" "$BODIES" "$ORDERS"
BODY_SIZE=1048576
WRAP_TARGET=4000000	# messages per second
TEE_TARGET=0.80		# fraction of tee's throughput
SMALL_UNWRAP_TARGET=8000000	# frames per second
HEADER_ROUTE_TARGET=6000000	# messages per second
XPATH_ROUTE_TARGET=300000	# messages per second
UNWRAP_TARGET=0.50	# fraction of cat's throughput

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
	bench_cache_lines "$LINES"
	bench_use_cached
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
	bench_use_cached
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

remove_tap() {
	rm -f "$BENCH_TMP/tap.msg"
}

bench_small() {
	bench_cache_small_frames "$wrap" "$unwrap" "$LINES"
	bench_use_cached
	# A tap that loses or changes a byte must not pass for a fast one.
	"$tap" "$BENCH_TMP/tap.msg" <"$in" >"$BENCH_TMP/out.msg" ||
		bench_die "msg-tap failed on '$in'"
	if ! cmp -s "$in" "$BENCH_TMP/tap.msg" || ! cmp -s "$in" "$BENCH_TMP/out.msg"; then
		bench_die "msg-tap does not copy '$in' byte for byte"
	fi
	remove_tap
	rm -f "$BENCH_TMP/out.msg"
	echo "frames: small messages, $LINES frames with 100-byte bodies" \
		"($(bench_mb "$bytes") MB), into /dev/null"
	bench_load_note
	BENCH_CPU_TIDY=remove_tap
	bench_measure_cpu "tee FILE < frames" "$LINES" "frames/s" "$in" \
		tee "$BENCH_TMP/tap.msg"
	tee_ms=$BENCH_CPU_MS
	bench_measure_cpu "msg-tap FILE < frames" "$LINES" "frames/s" "$in" \
		"$tap" "$BENCH_TMP/tap.msg"
	BENCH_CPU_TIDY=
	bench_verdict "msg-tap FILE, throughput vs tee FILE" \
		"$(bench_ratio "$tee_ms" "$BENCH_CPU_MS")" ">=" "$TEE_TARGET" \
		"x"

	bench_measure_cpu "cat < frames" "$LINES" "frames/s" "$in" cat
	bench_measure_cpu "msg-unwrap < frames" "$LINES" "frames/s" "$in" \
		"$unwrap"
	unwrap_ms=$BENCH_CPU_MS
	bench_verdict "msg-unwrap, small frames" "$BENCH_RATE" ">=" \
		"$SMALL_UNWRAP_TARGET" " frames/s"

	# Every message matches: all of them are evaluated and written.
	n=$("$route" -f "header('Content-Type') = 'text/plain'" <"$in" |
		"$unwrap" -s '\n' | wc -l)
	[ $((n + 1)) -eq "$LINES" ] ||
		bench_die "msg-route by header() passed $((n + 1)) of $LINES messages"
	bench_measure_cpu "msg-route -f header() < frames" "$LINES" "msg/s" \
		"$in" "$route" -f "header('Content-Type') = 'text/plain'"
	bench_report "msg-route by header(), time over msg-unwrap's" \
		"$(bench_ratio "$BENCH_CPU_MS" "$unwrap_ms")" "x"
	bench_verdict "msg-route by header()" "$BENCH_RATE" ">=" \
		"$HEADER_ROUTE_TARGET" " msg/s"
}

# Order I is rush when I % 4 == 1 (bench_gen_orders): a quarter, rounded up.
bench_xpath() {
	bench_cache "orders-xml-lines-${ORDERS}.txt" bench_gen_orders xml \
		"$ORDERS" lines
	bench_cache "orders-xml-${ORDERS}.msg" bench_gen_line_frames "$wrap" \
		"$BENCH_FILE"
	in=$BENCH_FILE
	n=$("$route" -f "/order/@type = 'rush'" <"$in" | "$unwrap" -H |
		grep -c '^Message-Id:')
	[ "$n" -eq $(((ORDERS + 3) / 4)) ] ||
		bench_die "msg-route by XPath passed $n of $ORDERS orders," \
			"want $(((ORDERS + 3) / 4))"
	echo "frames: msg-route -f by XPath, $ORDERS XML orders of about" \
		"200 bytes, one a message, into /dev/null"
	bench_load_note
	bench_measure_cpu "msg-route -f '/order/@type = \"rush\"'" "$ORDERS" \
		"msg/s" "$in" "$route" -f "/order/@type = 'rush'"
	bench_verdict "msg-route by XPath" "$BENCH_RATE" ">=" \
		"$XPATH_ROUTE_TARGET" " msg/s"
}

case $part in
all)
	bench_wrap
	bench_unwrap
	bench_small
	bench_xpath
	;;
wrap) bench_wrap ;;
unwrap) bench_unwrap ;;
small) bench_small ;;
xpath) bench_xpath ;;
esac
