#!/bin/sh
# route: msg-route by a header, by a JSON field and by XPath on XML.
# usage: sh bench/route.sh [BUILD] [all | header | json | xml]
#
# header: msg-route -w 'header("Type")="rush"' -t /dev/null -o - on
#         BENCH_MESSAGES (default 1000000) small messages (a 14-byte text
#         body) whose Type header varies: a quarter are rush, which go to
#         /dev/null, the rest to stdout. Target: at least 500,000 messages
#         per second.
# json:   msg-route -f 'json("/type")="rush"' on BENCH_RECORDS (default
#         200000) orders of about 200 bytes, one JSON object a message,
#         against jq -c 'select(.type=="rush")' on the same objects as
#         NDJSON. Target: at least 5x jq's throughput (records per second).
# xml:    msg-route -f '/order/@type="rush"' on the same orders as XML,
#         one <order> a message. Target: at least 100,000 messages per
#         second.
#
# Each tool runs with its output through a pipe into cat > /dev/null, and
# the targets are judged there: a router's output is what the next stage
# reads, and a pipe makes every tool copy the bytes it emits, where a
# write to /dev/null costs nothing. In json, jq writes into the same kind
# of pipe, so the two are judged alike. The header router also runs into
# /dev/null, for reference.
#
# On a shared machine wall time includes the wait for a processor, so the
# processor time (user + system, best of as many runs) of each tool is
# printed after its wall time, for reference; the load average is printed
# at the start of each part.
#
# Before anything is timed, msg-route must send each message where its
# expression says (checked by count and content), and jq must select as
# many records; else the run is broken (exit 1).
set -u

here=$(dirname "$0")
. "$here/lib.sh"

part=${2:-all}
bench_check_part route.sh "$part" header json xml
bench_init "${1:-build}"
route=$(bench_tool msg-route) || exit 1
wrap=$(bench_tool msg-wrap) || exit 1
unwrap=$(bench_tool msg-unwrap) || exit 1
# The figures are for the tools as they run by default: history headers,
# invalid and dead-letter channels from the environment would change what
# is written and checked.
unset MSG_HISTORY MSG_INVALID MSG_DEAD_LETTER

MESSAGES=${BENCH_MESSAGES:-1000000}
RECORDS=${BENCH_RECORDS:-200000}
PEER_RUNS=${BENCH_PEER_RUNS:-$((BENCH_RUNS < 3 ? BENCH_RUNS : 3))}
bench_need_positive "BENCH_MESSAGES, BENCH_RECORDS and BENCH_PEER_RUNS" \
	"$MESSAGES" "$RECORDS" "$PEER_RUNS"
HEADER_TARGET=500000	# messages per second
JQ_TARGET=5		# times jq's throughput
XML_TARGET=100000	# messages per second

# Message I is rush when I % 4 == 1 (types[2]), in gen_envelopes as in
# bench_gen_orders: a quarter of the messages, rounded up.
rush_count() {
	echo $((($1 + 3) / 4))
}

# N JSON envelopes for msg-wrap -e, each with its own Type header and a
# serial number as its body.
gen_envelopes() {
	awk -v n="$1" 'BEGIN {
		split("standard rush bulk standard", types, " ")
		for (i = 1; i <= n; i++)
			printf "{\"headers\": {\"Type\": \"%s\"}, \"body\": \"order %08d\"}\n",
				types[i % 4 + 1], i
	}'
}

gen_header_msgs() {
	gen_envelopes "$1" | "$wrap" -e -t text/plain
}

# One message a line of FILE, with Content-Type TYPE. From stdin, so the
# messages carry no File-Name header.
gen_line_msgs() {
	"$wrap" -l -t "$2" <"$1"
}

# Frames in a stream and how many of them have Type: rush.
count_frames() {
	"$unwrap" -H | awk '/^Content-Length:/ { n++ } /^Type: rush$/ { r++ }
		END { print n + 0, r + 0 }'
}

# check_header FILE: with the rush messages sent to a file, that file must
# hold every rush message and nothing else, and stdout all the others.
check_header() {
	_rush=$BENCH_TMP/rush.msg
	_want=$(rush_count "$MESSAGES")
	rm -f "$BENCH_TMP/st1" "$_rush"
	_rest=$({
		"$route" -w 'header("Type")="rush"' -t "$_rush" -o - <"$1"
		echo $? >"$BENCH_TMP/st1"
	} | count_frames)
	[ "$(cat "$BENCH_TMP/st1")" = 0 ] ||
		bench_die "msg-route failed on '$1' (stale cache? remove $BENCH_CACHE)"
	_got=$(count_frames <"$_rush")
	rm -f "$_rush"
	[ "$_got" = "$_want $_want" ] ||
		bench_die "msg-route sent '$_got' (frames, rush) to the rush channel," \
			"want '$_want $_want'"
	[ "$_rest" = "$((MESSAGES - _want)) 0" ] ||
		bench_die "msg-route sent '$_rest' (frames, rush) to stdout," \
			"want '$((MESSAGES - _want)) 0'"
}

# check_filter MSGS LINES PATTERN EXPR: msg-route -f EXPR on MSGS must give
# back, body for body and in order, the lines of LINES holding PATTERN.
check_filter() {
	rm -f "$BENCH_TMP/st1" "$BENCH_TMP/st2"
	_got=$({
		"$route" -f "$4" <"$1"
		echo $? >"$BENCH_TMP/st1"
	} | {
		"$unwrap" -s '\n'
		echo $? >"$BENCH_TMP/st2"
		echo	# the separator goes between bodies, not after the last
	} | cksum)
	_st1=$(cat "$BENCH_TMP/st1") _st2=$(cat "$BENCH_TMP/st2")
	if [ "$_st1" != 0 ] || [ "$_st2" != 0 ]; then
		bench_die "msg-route -f '$4' < '$1' | msg-unwrap failed" \
			"(msg-route exit $_st1, msg-unwrap exit $_st2)"
	fi
	_want=$(grep -F "$3" "$2" | cksum)
	[ "$_got" = "$_want" ] ||
		bench_die "msg-route -f '$4' on '$1' does not select the lines" \
			"of '$2' with '$3' (stale cache? remove $BENCH_CACHE)"
}

# A jq that selects another number of records is not doing the same work.
check_jq() {
	_got=$(jq -c 'select(.type=="rush")' "$1" | wc -l)
	[ $((_got)) -eq "$2" ] ||
		bench_die "jq selected $((_got)) records, want $2"
}

# cache_records FORMAT EXT: the RECORDS orders as FORMAT (xml or json),
# one a line in a file ending in .EXT (sets lines), and one a message of
# type application/FORMAT (sets in).
cache_records() {
	bench_cache "route-records-$RECORDS.$2" bench_gen_orders "$1" "$RECORDS" lines
	lines=$BENCH_FILE
	bench_cache "route-records-$RECORDS.$1.msg" gen_line_msgs "$lines" \
		"application/$1"
	in=$BENCH_FILE
}

bench_header() {
	bench_cache "route-header-$MESSAGES.msg" gen_header_msgs "$MESSAGES"
	bench_use_cached
	check_header "$in"
	echo "route: by header, $MESSAGES messages, a quarter rush" \
		"($(bench_mb "$bytes") MB)"
	bench_load_note
	expr='header("Type")="rush"'
	for sink in null pipe; do
		bench_cat_baseline "$in" "$sink" messages "$bytes"
		bench_measure "$in" "$sink" "$route" -w "$expr" -t /dev/null -o -
		rate=$(bench_per_sec "$MESSAGES" "$BENCH_US")
		bench_result "msg-route -w header() $BENCH_TO" "$BENCH_US" \
			"$BENCH_RSS" "$rate msg/s"
		echo "  msg-route takes $(bench_ratio "$BENCH_US" "$BENCH_CAT_US")x" \
			"cat's time ($BENCH_TO)"
		case $sink in
		null) echo "  (into /dev/null: for reference, not judged)" ;;
		pipe) bench_verdict "msg-route by header through a pipe" "$rate" \
			">=" "$HEADER_TARGET" " msg/s" ;;
		esac
	done
	bench_cpu_best "$BENCH_RUNS" "$in" pipe "$route" -w "$expr" -t /dev/null -o -
	bench_cpu_note "msg-route" "$MESSAGES" msg
}

bench_json() {
	command -v jq >/dev/null || bench_die "jq not found"
	cache_records json ndjson
	expr='json("/type")="rush"'
	check_filter "$in" "$lines" '"type": "rush"' "$expr"
	check_jq "$lines" "$(rush_count "$RECORDS")"
	echo "route: by a JSON field, $RECORDS records, a quarter rush" \
		"($(bench_mb "$(bench_size "$in")") MB as messages," \
		"$(bench_mb "$(bench_size "$lines")") MB as NDJSON)"
	bench_load_note

	bench_measure "$in" pipe "$route" -f "$expr"
	route_us=$BENCH_US
	bench_result "msg-route -f json() | cat" "$BENCH_US" "$BENCH_RSS" \
		"$(bench_per_sec "$RECORDS" "$BENCH_US") rec/s"
	# jq takes seconds a run.
	bench_measure_runs "$PEER_RUNS" "$lines" pipe jq -c 'select(.type=="rush")'
	jq_us=$BENCH_US
	bench_result "jq -c 'select(.type==\"rush\")' | cat" "$BENCH_US" \
		"$BENCH_RSS" "$(bench_per_sec "$RECORDS" "$BENCH_US") rec/s"
	# Same records, so the throughput ratio is the inverse time ratio.
	bench_verdict "msg-route vs jq, throughput through a pipe" \
		"$(bench_ratio "$jq_us" "$route_us")" ">=" "$JQ_TARGET" "x"

	bench_cpu_best "$BENCH_RUNS" "$in" pipe "$route" -f "$expr"
	route_cpu=$BENCH_CPU_MS
	bench_cpu_note "msg-route" "$RECORDS" rec
	bench_cpu_best "$PEER_RUNS" "$lines" pipe jq -c 'select(.type=="rush")'
	bench_cpu_note "jq" "$RECORDS" rec
	if [ -n "$route_cpu" ] && [ -n "$BENCH_CPU_MS" ] && [ "$route_cpu" -gt 0 ]; then
		echo "  (jq's processor time / msg-route's:" \
			"$(bench_ratio "$BENCH_CPU_MS" "$route_cpu")x; for reference)"
	fi
}

bench_xml() {
	cache_records xml xml
	expr='/order/@type="rush"'
	check_filter "$in" "$lines" 'type="rush"' "$expr"
	echo "route: by XPath, $RECORDS XML orders, a quarter rush" \
		"($(bench_mb "$(bench_size "$in")") MB)"
	bench_load_note

	bench_measure "$in" pipe cat
	bench_mb_result "cat < messages | cat" "$(bench_size "$in")"
	bench_measure "$in" pipe "$route" -f "$expr"
	rate=$(bench_per_sec "$RECORDS" "$BENCH_US")
	bench_result "msg-route -f /order/@type | cat" "$BENCH_US" "$BENCH_RSS" \
		"$rate msg/s"
	bench_verdict "msg-route by XPath through a pipe" "$rate" ">=" \
		"$XML_TARGET" " msg/s"
	bench_cpu_best "$BENCH_RUNS" "$in" pipe "$route" -f "$expr"
	bench_cpu_note "msg-route" "$RECORDS" msg
}

case $part in
all)
	bench_header
	bench_json
	bench_xml
	;;
header) bench_header ;;
json) bench_json ;;
xml) bench_xml ;;
esac
