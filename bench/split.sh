#!/bin/sh
# split: msg-split on a large order file, XML and JSON, against its peers.
# usage: sh bench/split.sh [BUILD] [all | xml | json]
#
# Data: BENCH_ORDERS (default 200000) generated orders, about 40 MB, once
# as XML (<orders><order ...><item .../>...</order>...</orders>) and once
# as JSON ({"orders":[{...},...]}), the same orders in both.
#
# xml:  msg-split -r -x /orders/order against
#       xml_split -l 1 (XML::Twig, one file per child of the root: the
#       closest it has to one child per order) and
#       xmlstarlet sel -t -c /orders/order: at least 10x faster than each;
#       xmllint --stream --noout (parsing alone, the floor): at most 2.5x
#       its time.
# json: msg-split -r -j /orders against jq -c '.orders[]': at least 8x
#       faster, with at most a tenth of jq's peak RSS.
#
# Every tool reads the file named as its operand and writes to /dev/null,
# except xml_split, which can only write files: it runs in a fresh
# directory under the scratch directory each time. It needs tens of
# seconds for the full data, so it runs on the first BENCH_XML_SPLIT_ORDERS
# orders (default a tenth) and on a one-order document (perl's start-up);
# its full time is estimated as the start-up plus the rest scaled by the
# order counts. It streams, so the rest grows at least in proportion; a
# directory of 200,000 files costs more per file than one of 20,000, so
# the estimate errs in xml_split's favour. The ratio on the sample alone
# is printed too. The slow peers (xml_split, xmlstarlet, jq) run best of
# BENCH_PEER_RUNS (default BENCH_RUNS, at most 3): at several seconds a
# run, more runs buy little accuracy for a lot of time.
#
# Before anything is timed, msg-split must emit exactly one child per
# order on each file, or the run is broken (exit 1).
set -u

here=$(dirname "$0")
. "$here/lib.sh"

part=${2:-all}
bench_check_part split.sh "$part" xml json
bench_init "${1:-build}"
split=$(bench_tool msg-split) || exit 1
unwrap=$(bench_tool msg-unwrap) || exit 1

ORDERS=${BENCH_ORDERS:-200000}
bench_need_positive BENCH_ORDERS "$ORDERS"	# before it is computed with
SAMPLE=${BENCH_XML_SPLIT_ORDERS:-$((ORDERS / 10))}
PEER_RUNS=${BENCH_PEER_RUNS:-$((BENCH_RUNS < 3 ? BENCH_RUNS : 3))}
bench_need_positive "BENCH_XML_SPLIT_ORDERS and BENCH_PEER_RUNS" \
	"$SAMPLE" "$PEER_RUNS"
# A sample must have two orders at least: the scaling divides by SAMPLE - 1.
if [ "$SAMPLE" -gt "$ORDERS" ] ||
	{ [ "$SAMPLE" -lt 2 ] && [ "$SAMPLE" -lt "$ORDERS" ]; }; then
	bench_die "BENCH_XML_SPLIT_ORDERS must be 2 to BENCH_ORDERS"
fi
PEER_TARGET=10		# times faster than xml_split and xmlstarlet
FLOOR_TARGET=2.5	# at most this many times xmllint --stream's time
JQ_TARGET=8		# times faster than jq
JQ_RSS_TARGET=0.10	# at most this fraction of jq's peak RSS

# check_children FILE WANT ARG...: msg-split ARG... FILE must emit WANT
# children. A fast tool that drops orders must not pass, so this runs once
# on each file before the timed runs.
check_children() {
	_cf=$1 _cwant=$2
	shift 2
	rm -f "$BENCH_TMP/st1" "$BENCH_TMP/st2"
	_cgot=$({
		"$split" "$@" "$_cf" </dev/null
		echo $? >"$BENCH_TMP/st1"
	} | {
		"$unwrap" -H
		echo $? >"$BENCH_TMP/st2"
	} | grep -c '^Content-Length:')
	_st1=$(cat "$BENCH_TMP/st1") _st2=$(cat "$BENCH_TMP/st2")
	if [ "$_st1" != 0 ] || [ "$_st2" != 0 ]; then
		bench_die "msg-split $* '$_cf' | msg-unwrap -H failed" \
			"(msg-split exit $_st1, msg-unwrap exit $_st2)"
	fi
	[ "$_cgot" -eq "$_cwant" ] ||
		bench_die "msg-split $* '$_cf' emitted $_cgot children, want $_cwant"
}

# xml_split writes into its working directory: give each run a new one,
# so no run pays for (or profits from) files a previous one left. The
# directories are removed after the measurement, outside the timed runs.
# A script for sh -c rather than a function, as time(1) runs it too.
# Usage: sh -c "$xml_split_in_dir" sh SCRATCH FILE
xml_split_in_dir='d=$(mktemp -d "$1/xml_split.XXXXXX") && cd "$d" &&
	exec xml_split -l 1 -b out "$2"'

# The files one xml_split run wrote: the main document and one per order.
check_xml_split() {
	_xd=$(ls -d "$BENCH_TMP"/xml_split.* | head -n 1)
	_xn=$(ls "$_xd" | wc -l)
	[ $((_xn)) -eq $(($1 + 1)) ] ||
		bench_die "xml_split wrote $((_xn)) files, want $(($1 + 1))"
	rm -rf "$BENCH_TMP"/xml_split.*
}

# speedup_verdict LABEL PEER_US TARGET: msg-split ($split_us) must run at
# least TARGET times faster than the peer.
speedup_verdict() {
	bench_verdict "msg-split vs $1, times faster" \
		"$(bench_ratio "$2" "$split_us")" ">=" "$3" "x"
}

bench_xml() {
	command -v xmllint >/dev/null || bench_die "xmllint not found"
	command -v xmlstarlet >/dev/null || bench_die "xmlstarlet not found"
	command -v xml_split >/dev/null ||
		bench_die "xml_split not found (Debian: xml-twig-tools)"
	# The smaller documents hold the first orders of the larger one.
	bench_cache "orders-$ORDERS.xml" bench_gen_orders xml "$ORDERS" document
	in=$BENCH_FILE
	bench_cache "orders-$SAMPLE.xml" bench_gen_orders xml "$SAMPLE" document
	sample=$BENCH_FILE
	bench_cache "orders-1.xml" bench_gen_orders xml 1 document
	one=$BENCH_FILE
	bytes=$(bench_size "$in") || exit 1
	check_children "$in" "$ORDERS" -r -x /orders/order
	check_children "$sample" "$SAMPLE" -r -x /orders/order
	echo "split: XML, $ORDERS orders ($(bench_mb "$bytes") MB)"

	bench_measure /dev/null null "$split" -r -x /orders/order "$in"
	split_us=$BENCH_US
	bench_mb_result "msg-split -r -x /orders/order" "$bytes"

	bench_measure /dev/null null xmllint --stream --noout "$in"
	floor_us=$BENCH_US
	bench_mb_result "xmllint --stream --noout" "$bytes"

	bench_measure_runs "$PEER_RUNS" /dev/null null \
		xmlstarlet sel -t -c /orders/order "$in"
	star_us=$BENCH_US
	bench_mb_result "xmlstarlet sel -t -c /orders/order" "$bytes"

	if [ "$SAMPLE" -lt "$ORDERS" ]; then
		bench_measure /dev/null null "$split" -r -x /orders/order "$sample"
		split_sample_us=$BENCH_US
		bench_result "msg-split, first $SAMPLE orders" "$BENCH_US" \
			"$BENCH_RSS" ""
	fi
	bench_measure_runs "$PEER_RUNS" /dev/null null \
		sh -c "$xml_split_in_dir" sh "$BENCH_TMP" "$sample"
	xs_sample_us=$BENCH_US xs_rss=$BENCH_RSS
	check_xml_split "$SAMPLE"
	if [ "$SAMPLE" -lt "$ORDERS" ]; then
		bench_result "xml_split -l 1, first $SAMPLE orders" \
			"$xs_sample_us" "$xs_rss" ""
		# Perl and XML::Twig take a fixed time to start, hundreds of
		# milliseconds: time a one-order document for it, and scale only
		# the rest with the number of orders.
		bench_measure_runs "$PEER_RUNS" /dev/null null \
			sh -c "$xml_split_in_dir" sh "$BENCH_TMP" "$one"
		xs_one_us=$BENCH_US
		check_xml_split 1
		bench_result "xml_split -l 1, one order" "$xs_one_us" "$BENCH_RSS" ""
		xs_us=$(awk -v s_us="$xs_sample_us" -v o_us="$xs_one_us" \
			-v n="$ORDERS" -v s="$SAMPLE" \
			'BEGIN { printf "%.0f", o_us + (s_us - o_us) * (n - 1) / (s - 1) }')
		bench_result "xml_split -l 1, $ORDERS orders (scaled)" \
			"$xs_us" "" "(estimate, low)"
		echo "  on the first $SAMPLE orders alone, msg-split is" \
			"$(bench_ratio "$xs_sample_us" "$split_sample_us")x faster than xml_split"
	else
		xs_us=$xs_sample_us
		bench_result "xml_split -l 1" "$xs_us" "$xs_rss" \
			"$(bench_mb_per_sec "$bytes" "$xs_us") MB/s"
	fi

	speedup_verdict "xmlstarlet" "$star_us" "$PEER_TARGET"
	if [ "$SAMPLE" -lt "$ORDERS" ]; then
		speedup_verdict "xml_split (scaled)" "$xs_us" "$PEER_TARGET"
	else
		speedup_verdict "xml_split" "$xs_us" "$PEER_TARGET"
	fi
	bench_verdict "msg-split time / xmllint --stream time" \
		"$(bench_ratio "$split_us" "$floor_us")" "<=" "$FLOOR_TARGET" "x"
	# Wall time is what is judged, but it grows with the wait for a
	# processor, more for one run than the next: for a close call,
	# processor time says which side of the line we are.
	bench_cpu_best "$BENCH_RUNS" /dev/null null \
		"$split" -r -x /orders/order "$in"
	split_cpu=$BENCH_CPU_MS
	bench_cpu_best "$BENCH_RUNS" /dev/null null xmllint --stream --noout "$in"
	if [ -n "$split_cpu" ] && [ -n "$BENCH_CPU_MS" ] && [ "$BENCH_CPU_MS" -gt 0 ]; then
		echo "  (processor time, user + system: msg-split ${split_cpu} ms," \
			"xmllint ${BENCH_CPU_MS} ms, $(bench_ratio "$split_cpu" "$BENCH_CPU_MS")x;" \
			"for reference)"
	fi
}

bench_json() {
	command -v jq >/dev/null || bench_die "jq not found"
	bench_cache "orders-$ORDERS.json" bench_gen_orders json "$ORDERS" document
	bench_use_cached
	check_children "$in" "$ORDERS" -r -j /orders
	echo "split: JSON, $ORDERS orders ($(bench_mb "$bytes") MB)"

	bench_measure /dev/null null "$split" -r -j /orders "$in"
	split_us=$BENCH_US split_rss=$BENCH_RSS
	bench_mb_result "msg-split -r -j /orders" "$bytes"

	bench_measure_runs "$PEER_RUNS" /dev/null null jq -c '.orders[]' "$in"
	jq_us=$BENCH_US jq_rss=$BENCH_RSS
	bench_mb_result "jq -c '.orders[]'" "$bytes"

	speedup_verdict "jq" "$jq_us" "$JQ_TARGET"
	if [ -n "$split_rss" ] && [ -n "$jq_rss" ]; then
		# Three decimals: two would round a small share down to 0.01.
		bench_verdict "msg-split peak RSS / jq's" \
			"$(awk -v a="$split_rss" -v b="$jq_rss" \
				'BEGIN { printf "%.3f", a / b }')" "<=" "$JQ_RSS_TARGET" "x"
	else
		echo "  => msg-split peak RSS / jq's: not judged (peak RSS not measured)"
	fi
}

case $part in
all)
	bench_xml
	bench_json
	;;
xml) bench_xml ;;
json) bench_json ;;
esac
