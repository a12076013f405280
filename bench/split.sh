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
case $part in
all | xml | json) ;;
*)
	echo "usage: sh bench/split.sh [build-dir] [all | xml | json]" >&2
	exit 64
	;;
esac
bench_init "${1:-build}"
split=$(bench_tool msg-split) || exit 1
unwrap=$(bench_tool msg-unwrap) || exit 1

ORDERS=${BENCH_ORDERS:-200000}
SAMPLE=${BENCH_XML_SPLIT_ORDERS:-$((ORDERS / 10))}
PEER_RUNS=${BENCH_PEER_RUNS:-$((BENCH_RUNS < 3 ? BENCH_RUNS : 3))}
for _v in "$ORDERS" "$SAMPLE" "$PEER_RUNS"; do
	case $_v in
	'' | *[!0-9]* | 0) bench_die "BENCH_ORDERS, BENCH_XML_SPLIT_ORDERS and" \
		"BENCH_PEER_RUNS must be positive numbers" ;;
	esac
done
# A sample must have two orders at least: the scaling divides by SAMPLE - 1.
if [ "$SAMPLE" -gt "$ORDERS" ] ||
	{ [ "$SAMPLE" -lt 2 ] && [ "$SAMPLE" -lt "$ORDERS" ]; }; then
	bench_die "BENCH_XML_SPLIT_ORDERS must be 2 to BENCH_ORDERS"
fi
PEER_TARGET=10		# times faster than xml_split and xmlstarlet
FLOOR_TARGET=2.5	# at most this many times xmllint --stream's time
JQ_TARGET=8		# times faster than jq
JQ_RSS_TARGET=0.10	# at most this fraction of jq's peak RSS

# The generators are deterministic: order I is the same in every file, so
# the smaller file is a prefix of the larger one's orders. One to five
# items per order, three on average; about 200 bytes an order.
gen_orders() {
	awk -v n="$1" -v fmt="$2" '
	function item(i, j) {
		sku = sprintf("SKU-%05d", (i * 31 + j * 17) % 100000)
		qty = 1 + (i + j) % 9
		price = sprintf("%d.%02d", 1 + (i * j) % 200, (i + 3 * j) % 100)
	}
	BEGIN {
		split("standard rush bulk standard", types, " ")
		if (fmt == "xml") {
			print "<?xml version=\"1.0\" encoding=\"UTF-8\"?>"
			print "<orders>"
		} else
			print "{\"orders\": ["
		for (i = 1; i <= n; i++) {
			type = types[i % 4 + 1]
			cust = sprintf("C%06d", (i * 7919) % 100000)
			k = 1 + (i * 7) % 5
			if (fmt == "xml") {
				printf "  <order id=\"%d\" type=\"%s\" customer=\"%s\">", i, type, cust
				for (j = 1; j <= k; j++) {
					item(i, j)
					printf "<item sku=\"%s\" qty=\"%d\" price=\"%s\"/>", sku, qty, price
				}
				print "</order>"
			} else {
				printf "  {\"id\": %d, \"type\": \"%s\", \"customer\": \"%s\", \"items\": [", i, type, cust
				for (j = 1; j <= k; j++) {
					item(i, j)
					printf "%s{\"sku\": \"%s\", \"qty\": %d, \"price\": %s}", (j > 1 ? ", " : ""), sku, qty, price
				}
				printf "]}%s\n", (i < n ? "," : "")
			}
		}
		print (fmt == "xml" ? "</orders>" : "]}")
	}'
}

size_of() {
	_sz=$(wc -c <"$1") || bench_die "cannot read '$1'"
	echo $((_sz))
}

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

# bench_measure with the peers' run count.
measure_peer() {
	_pruns=$BENCH_RUNS
	BENCH_RUNS=$PEER_RUNS
	bench_measure "$@"
	BENCH_RUNS=$_pruns
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

# cpu_best CMD [ARG...]: sets CPU_MS to the least user + system time, in
# milliseconds, of BENCH_RUNS runs (empty if time(1) is missing). Wall
# time is what is judged, but on a busy machine it grows with the wait
# for a processor too, more for one run than the next; processor time
# does not, so for a close call it says which side of the line we are.
cpu_best() {
	CPU_MS=
	[ -n "$BENCH_TIME" ] || return 0
	_ci=0
	while [ "$_ci" -lt "$BENCH_RUNS" ]; do
		rm -f "$BENCH_TMP/cpu"
		bench_run_once /dev/null null "$BENCH_TIME" -f '%U %S' \
			-o "$BENCH_TMP/cpu" "$@"
		_cms=$(tail -n 1 "$BENCH_TMP/cpu" |
			awk 'NF == 2 { printf "%.0f", ($1 + $2) * 1000 }')
		if [ -n "$_cms" ] && { [ -z "$CPU_MS" ] || [ "$_cms" -lt "$CPU_MS" ]; }; then
			CPU_MS=$_cms
		fi
		_ci=$((_ci + 1))
	done
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
	bench_cache "orders-$ORDERS.xml" gen_orders "$ORDERS" xml
	in=$BENCH_FILE
	bench_cache "orders-$SAMPLE.xml" gen_orders "$SAMPLE" xml
	sample=$BENCH_FILE
	bench_cache "orders-1.xml" gen_orders 1 xml
	one=$BENCH_FILE
	bytes=$(size_of "$in")
	check_children "$in" "$ORDERS" -r -x /orders/order
	check_children "$sample" "$SAMPLE" -r -x /orders/order
	echo "split: XML, $ORDERS orders ($(bench_mb "$bytes") MB)"

	bench_measure /dev/null null "$split" -r -x /orders/order "$in"
	split_us=$BENCH_US
	bench_result "msg-split -r -x /orders/order" "$BENCH_US" "$BENCH_RSS" \
		"$(bench_mb_per_sec "$bytes" "$BENCH_US") MB/s"

	bench_measure /dev/null null xmllint --stream --noout "$in"
	floor_us=$BENCH_US
	bench_result "xmllint --stream --noout" "$BENCH_US" "$BENCH_RSS" \
		"$(bench_mb_per_sec "$bytes" "$BENCH_US") MB/s"

	measure_peer /dev/null null xmlstarlet sel -t -c /orders/order "$in"
	star_us=$BENCH_US
	bench_result "xmlstarlet sel -t -c /orders/order" "$BENCH_US" \
		"$BENCH_RSS" "$(bench_mb_per_sec "$bytes" "$BENCH_US") MB/s"

	if [ "$SAMPLE" -lt "$ORDERS" ]; then
		bench_measure /dev/null null "$split" -r -x /orders/order "$sample"
		split_sample_us=$BENCH_US
		bench_result "msg-split, first $SAMPLE orders" "$BENCH_US" \
			"$BENCH_RSS" ""
	fi
	measure_peer /dev/null null sh -c "$xml_split_in_dir" sh "$BENCH_TMP" \
		"$sample"
	xs_sample_us=$BENCH_US xs_rss=$BENCH_RSS
	check_xml_split "$SAMPLE"
	if [ "$SAMPLE" -lt "$ORDERS" ]; then
		bench_result "xml_split -l 1, first $SAMPLE orders" \
			"$xs_sample_us" "$xs_rss" ""
		# Perl and XML::Twig take a fixed time to start, hundreds of
		# milliseconds: time a one-order document for it, and scale only
		# the rest with the number of orders.
		measure_peer /dev/null null sh -c "$xml_split_in_dir" sh \
			"$BENCH_TMP" "$one"
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
	cpu_best "$split" -r -x /orders/order "$in"
	split_cpu=$CPU_MS
	cpu_best xmllint --stream --noout "$in"
	if [ -n "$split_cpu" ] && [ -n "$CPU_MS" ] && [ "$CPU_MS" -gt 0 ]; then
		echo "  (processor time, user + system: msg-split ${split_cpu} ms," \
			"xmllint ${CPU_MS} ms, $(bench_ratio "$split_cpu" "$CPU_MS")x;" \
			"for reference)"
	fi
}

bench_json() {
	command -v jq >/dev/null || bench_die "jq not found"
	bench_cache "orders-$ORDERS.json" gen_orders "$ORDERS" json
	in=$BENCH_FILE
	bytes=$(size_of "$in")
	check_children "$in" "$ORDERS" -r -j /orders
	echo "split: JSON, $ORDERS orders ($(bench_mb "$bytes") MB)"

	bench_measure /dev/null null "$split" -r -j /orders "$in"
	split_us=$BENCH_US split_rss=$BENCH_RSS
	bench_result "msg-split -r -j /orders" "$BENCH_US" "$BENCH_RSS" \
		"$(bench_mb_per_sec "$bytes" "$BENCH_US") MB/s"

	measure_peer /dev/null null jq -c '.orders[]' "$in"
	jq_us=$BENCH_US jq_rss=$BENCH_RSS
	bench_result "jq -c '.orders[]'" "$BENCH_US" "$BENCH_RSS" \
		"$(bench_mb_per_sec "$bytes" "$BENCH_US") MB/s"

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
