#!/bin/sh
# translate: msg-translate on a batch of small XML files against xsltproc.
# usage: sh bench/translate.sh [BUILD]
#
# Data: BENCH_FILES (default 10000) order documents of about 1 KB each,
# one file per order, and one stylesheet that reshapes an order into an
# invoice (attribute value templates, apply-templates, sums and
# format-number).
#
# Judged: the flow a batch translation runs, files in and translated
# bodies out on the standard output,
#     msg-wrap FILES | msg-translate -x invoice.xsl | msg-unwrap
# against
#   - the usual script, a shell loop that runs xsltproc once per file:
#     at least 50x faster. It takes minutes for all the files, so it runs
#     on the first BENCH_LOOP_FILES (default 300) and is scaled to all of
#     them: each file costs it one process start, so it grows in
#     proportion. The ratio on the sample is printed too.
#   - one xsltproc process given every file as an argument (the in-process
#     floor: no frames, no process per file): at least 0.8x its throughput.
# For reference: msg-translate alone on the same files already wrapped.
#
# Before anything is timed, the flow must give, byte for byte, what
# xsltproc prints for all the files, or the run is broken (exit 1).
set -u

here=$(dirname "$0")
. "$here/lib.sh"

bench_init "${1:-build}"
# The tools run from the data directory: make their paths absolute.
abs() {
	echo "$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
}
wrap=$(abs "$(bench_tool msg-wrap)") || exit 1
translate=$(abs "$(bench_tool msg-translate)") || exit 1
unwrap=$(abs "$(bench_tool msg-unwrap)") || exit 1
command -v xsltproc >/dev/null || bench_die "xsltproc not found"

FILES=${BENCH_FILES:-10000}
LOOP_FILES=${BENCH_LOOP_FILES:-300}
PEER_RUNS=${BENCH_PEER_RUNS:-$((BENCH_RUNS < 3 ? BENCH_RUNS : 3))}
bench_need_positive "BENCH_FILES, BENCH_LOOP_FILES and BENCH_PEER_RUNS" \
	"$FILES" "$LOOP_FILES" "$PEER_RUNS"
[ "$LOOP_FILES" -le "$FILES" ] || LOOP_FILES=$FILES
LOOP_TARGET=50		# times faster than one xsltproc per file
FLOOR_TARGET=0.8	# share of one xsltproc's throughput on all files

# Order I is the same in every data set; about 1 KB each.
gen_orders() {
	_gd=$1
	mkdir -p "$_gd" || return 1
	awk -v n="$2" -v dir="$_gd" 'BEGIN {
		split("web phone shop partner", channels, " ")
		split("Utrecht Leiden Gent Aachen Breda", cities, " ")
		for (i = 1; i <= n; i++) {
			f = sprintf("%s/order-%06d.xml", dir, i)
			printf "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n" > f
			printf "<order id=\"%d\" date=\"2026-%02d-%02d\" channel=\"%s\">\n", \
				i, i % 12 + 1, i % 28 + 1, channels[i % 4 + 1] > f
			printf "  <customer id=\"C%06d\">\n    <name>Customer %d</name>\n", \
				(i * 7919) % 1000000, i > f
			printf "    <email>customer%d@example.com</email>\n", i > f
			printf "    <address country=\"NL\"><street>Main street %d</street>", i % 300 > f
			printf "<city>%s</city><zip>%04dAB</zip></address>\n  </customer>\n", \
				cities[i % 5 + 1], 1000 + i % 9000 > f
			printf "  <lines>\n" > f
			for (j = 1; j <= 7; j++)
				printf "    <line sku=\"SKU-%05d\" qty=\"%d\" price=\"%d.%02d\">Article %d of order %d</line>\n", \
					(i * 31 + j * 17) % 100000, 1 + (i + j) % 9, 1 + (i * j) % 200, \
					(i + 3 * j) % 100, j, i > f
			printf "  </lines>\n  <note>Deliver between 9 and 17; leave at the door if nobody answers.</note>\n</order>\n" > f
			close(f)
		}
	}'
}

# The data set is a directory: made under a temporary name and renamed,
# so an interrupted run never leaves half of one to be reused.
data=$BENCH_CACHE/translate-orders-$FILES
if [ ! -d "$data" ]; then
	echo "generating $data"
	rm -rf "$data.tmp.$$"
	gen_orders "$data.tmp.$$" "$FILES" ||
		bench_die "cannot generate '$data'"
	mv "$data.tmp.$$" "$data" || bench_die "cannot rename '$data'"
fi
cd "$data" || bench_die "cannot enter '$data'"
set -- order-*.xml
[ $# -eq "$FILES" ] || bench_die "'$data' holds $# orders, want $FILES (remove it)"
bytes=$(cat "$@" | wc -c)

xsl=$BENCH_TMP/invoice.xsl
cat >"$xsl" <<'EOF'
<?xml version="1.0"?>
<xsl:stylesheet version="1.0" xmlns:xsl="http://www.w3.org/1999/XSL/Transform">
  <xsl:output indent="yes"/>
  <xsl:template match="/order">
    <invoice number="INV-{@id}" date="{@date}" channel="{@channel}">
      <bill-to ref="{customer/@id}">
        <xsl:value-of select="concat(customer/name, ', ', customer/address/city)"/>
      </bill-to>
      <xsl:apply-templates select="lines/line"/>
      <total lines="{count(lines/line)}">
        <xsl:value-of select="format-number(sum(lines/line/@price), '0.00')"/>
      </total>
    </invoice>
  </xsl:template>
  <xsl:template match="line">
    <item sku="{@sku}" units="{@qty}" amount="{format-number(@qty * @price, '0.00')}">
      <xsl:value-of select="."/>
    </item>
  </xsl:template>
</xsl:stylesheet>
EOF

# The flow, and the loop, as scripts for sh -c (time(1) runs them too).
# shellcheck disable=SC2016
flow='w=$1 t=$2 u=$3 x=$4; shift 4; "$w" "$@" | "$t" -x "$x" | "$u"'
# shellcheck disable=SC2016
loop='x=$1; shift; for f in "$@"; do xsltproc "$x" "$f" || exit 1; done'
loop_files=$(printf '%s\n' "$@" | head -n "$LOOP_FILES")

# A broken flow must not pass for a fast one: all files, every stage's
# status, and the bytes compared with xsltproc's.
rm -f "$BENCH_TMP/st1" "$BENCH_TMP/st2" "$BENCH_TMP/st3"
{
	"$wrap" "$@"
	echo $? >"$BENCH_TMP/st1"
} | {
	"$translate" -x "$xsl"
	echo $? >"$BENCH_TMP/st2"
} | {
	"$unwrap"
	echo $? >"$BENCH_TMP/st3"
} >"$BENCH_TMP/flow.out"
for _s in st1 st2 st3; do
	[ "$(cat "$BENCH_TMP/$_s")" = 0 ] ||
		bench_die "msg-wrap | msg-translate | msg-unwrap failed" \
			"($_s: exit $(cat "$BENCH_TMP/$_s"))"
done
xsltproc "$xsl" "$@" >"$BENCH_TMP/xsltproc.out" || bench_die "xsltproc failed"
cmp -s "$BENCH_TMP/flow.out" "$BENCH_TMP/xsltproc.out" ||
	bench_die "msg-translate does not give what xsltproc gives"
out_bytes=$(wc -c <"$BENCH_TMP/flow.out")
"$wrap" "$@" >"$BENCH_TMP/orders.msg" || bench_die "msg-wrap failed"
rm -f "$BENCH_TMP/flow.out" "$BENCH_TMP/xsltproc.out"

echo "translate: $FILES orders of about $((bytes / FILES)) bytes" \
	"($(bench_mb "$bytes") MB in, $(bench_mb "$out_bytes") MB out), one stylesheet"

bench_measure /dev/null null sh -c "$flow" sh "$wrap" "$translate" "$unwrap" "$xsl" "$@"
flow_us=$BENCH_US
bench_result "msg-wrap | msg-translate -x | msg-unwrap" "$BENCH_US" "$BENCH_RSS" \
	"$(bench_per_sec "$FILES" "$BENCH_US") files/s"

bench_measure "$BENCH_TMP/orders.msg" null "$translate" -x "$xsl"
alone_us=$BENCH_US
bench_result "msg-translate -x (wrapped input)" "$BENCH_US" "$BENCH_RSS" \
	"$(bench_per_sec "$FILES" "$BENCH_US") msg/s"

bench_measure /dev/null null xsltproc "$xsl" "$@"
floor_us=$BENCH_US
bench_result "xsltproc, all files in one process" "$BENCH_US" "$BENCH_RSS" \
	"$(bench_per_sec "$FILES" "$BENCH_US") files/s"

# shellcheck disable=SC2086
bench_measure_runs "$PEER_RUNS" /dev/null null sh -c "$loop" sh "$xsl" $loop_files
loop_sample_us=$BENCH_US
bench_result "xsltproc once per file, $LOOP_FILES files" "$BENCH_US" "$BENCH_RSS" \
	"$(bench_per_sec "$LOOP_FILES" "$BENCH_US") files/s"
loop_us=$(awk -v us="$loop_sample_us" -v n="$FILES" -v s="$LOOP_FILES" \
	'BEGIN { printf "%.0f", us * n / s }')
bench_result "xsltproc once per file, $FILES files (scaled)" "$loop_us" "" \
	"(estimate)"
# The flow's time for the same sample, for the unscaled ratio.
# shellcheck disable=SC2086
bench_measure /dev/null null sh -c "$flow" sh "$wrap" "$translate" "$unwrap" "$xsl" $loop_files
echo "  on the first $LOOP_FILES files alone, the flow is" \
	"$(bench_ratio "$loop_sample_us" "$BENCH_US")x faster than the loop"
echo "  msg-translate alone runs at $(bench_ratio "$floor_us" "$alone_us")x" \
	"xsltproc's throughput (for reference, not judged)"

bench_verdict "flow vs a shell loop of xsltproc, times faster" \
	"$(bench_ratio "$loop_us" "$flow_us")" ">=" "$LOOP_TARGET" "x"
bench_verdict "flow throughput / one xsltproc's" \
	"$(bench_ratio "$floor_us" "$flow_us")" ">=" "$FLOOR_TARGET" "x"
