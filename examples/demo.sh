#!/bin/sh
# The example flows of msgtools, run against the tools in BUILD (default
# build/). Each flow prints what it runs and what came out of it.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-build}
PATH="$top/$build:$PATH"
data="$top/examples/data"
work=$(mktemp -d "${TMPDIR:-/tmp}/msgtools-demo.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work"
cp -R "$data" data

step() {
	printf '\n== %s\n' "$1"
}
show() {
	printf '$ %s\n' "$1"
	sh -c "$1"
}

step "wrap two order files as messages and look at their headers"
show "msg-wrap data/orders-north.xml data/orders-south.xml > orders.msg"
show "msg-unwrap -H orders.msg"

step "file transfer: unwrap the messages into a directory, atomically, never overwriting"
show "mkdir -p inbox && msg-unwrap -d inbox orders.msg && msg-unwrap -d inbox orders.msg && ls inbox"
show "cmp inbox/orders-north.xml data/orders-north.xml && echo 'inbox/orders-north.xml is byte-identical to the original'"

step "one message per line, with a header of our own, as JSON envelopes for jq"
show "msg-wrap -l -H 'Source: crm' data/customers.txt | msg-unwrap -e | jq -c '{id: .headers[\"Message-Id\"][24:], source: .headers.Source, body}'"

step "jq makes messages too: envelopes in, frames out, bodies back"
show "jq -c '.orders[] | {headers: {\"Order-Id\": (.id|tostring), \"Content-Type\": \"application/json\"}, body: tojson}' data/orders.json | msg-wrap -e | msg-unwrap -s '\\n'"
echo

step "Splitter: one message per order, with the region copied from the parent element"
show "msg-wrap data/orders-north.xml data/orders-south.xml | msg-split -x /orders/order -H 'Region=../@region' -H 'Order-Id=@id' > order.msg"
show "msg-unwrap -e order.msg | jq -r '[.headers[\"Order-Id\"], .headers.Region, .headers[\"Sequence-Number\"], .headers[\"Sequence-Size\"] // \"-\", .headers[\"Sequence-End\"] // \"-\"] | @tsv'"

step "Splitter on JSON: the elements of the array at /orders, straight from a raw file"
show "msg-split -r -j /orders -H 'Order-Id=json(\"/id\")' data/orders.json | msg-unwrap -e | jq -c '[.headers[\"Order-Id\"], .headers[\"Sequence-Number\"], .body]'"

step "Nested split: orders, then the items of each order; Sequence-Stack remembers the outer sequence"
show "msg-split -r -x /orders/order data/orders-north.xml | msg-split -x //item -H 'Sku=@sku' | msg-unwrap -e | jq -r '[.headers.Sku, .headers[\"Sequence-Number\"], .headers[\"Sequence-Stack\"][24:]] | @tsv'"

step "Content-Based Router: rush orders to one FIFO, the rest to another; readers start first"
show "mkfifo rush.fifo other.fifo"
show "msg-unwrap -e rush.fifo | jq -r '\"rush:  \" + .headers[\"Order-Id\"]' & msg-unwrap -e other.fifo | jq -r '\"other: \" + .headers[\"Order-Id\"]' > other.txt & msg-split -r -x /orders/order -H 'Order-Id=@id' data/orders-north.xml data/orders-south.xml | msg-route -w '/order/@type=\"rush\"' -t rush.fifo -o other.fifo --stats; wait; cat other.txt"

step "Wire Tap: watch a flow go by, one summary line a message, the flow itself untouched"
show "msg-split -r -j /orders data/orders.json | msg-tap -F summary -k Sequence-Number /dev/stderr 2>&1 >/dev/null | cut -d' ' -f3-"

step "Guaranteed Delivery with dir: channels, as cron would run it: drain a spool, route, spool again"
show "msg-split -r -j /orders data/orders.json --output dir:spool/in && ls spool/in/new | wc -l"
show "msg-route --once -f 'json(\"/total\") > 10' dir:spool/in --output dir:spool/big && echo \"left in spool/in: \$(find spool/in -type f | wc -l)\" && msg-unwrap --once -s '\\n' dir:spool/big"

step "File transfer: a partner uploads into a plain directory (one file still under way as .part); cron's rounds take the complete ones into the flow, rush orders out to an outbox"
show "mkdir -p acme/in && cp data/orders-north.xml data/orders-south.xml acme/in/ && head -c 100 data/orders.json > acme/in/orders.json.part"
show "msg-split -r --once --settle 0 -x /orders/order -H 'Order-Id=@id' --output dir:acme/orders inbox:acme/in && msg-route --once -w '/order/@type=\"rush\"' -t dir:acme/rush -o dir:acme/bulk dir:acme/orders && msg-unwrap --once -d acme/out -n 'rush-{Order-Id}.xml' dir:acme/rush"
show "ls acme/in acme/out && echo \"bulk orders waiting: \$(ls acme/bulk/new | wc -l)\""

step "Message Translator: an XSLT reshapes each order into an invoice and promotes a field to a header"
cat > invoice.xsl <<'XSL'
<xsl:stylesheet version="1.0" xmlns:xsl="http://www.w3.org/1999/XSL/Transform"
    xmlns:msg="urn:msgtools:xslt" extension-element-prefixes="msg">
  <xsl:output method="xml" omit-xml-declaration="yes"/>
  <xsl:template match="/order">
    <msg:header name="Invoice-For" select="@customer"/>
    <invoice order="{@id}" total="{format-number(sum(item/@price), '0.00')}"/>
  </xsl:template>
</xsl:stylesheet>
XSL
show "msg-split -r -x /orders/order data/orders-north.xml | msg-translate -x invoice.xsl | msg-unwrap -e | jq -r '[.headers[\"Invoice-For\"], .body] | @tsv'"

step "Aggregator: the orders split apart, then put back together as one message"
show "msg-split -r -x /orders/order data/orders-north.xml | msg-aggregate --stats | msg-unwrap -s '\\n'"

step "Resequencer: the split orders shuffled as a parallel stage would leave them, then back in order"
show "msg-split -r -j /orders data/orders.json | msg-unwrap -e | shuf --random-source=data/orders.json | msg-wrap -e > shuffled.msg && msg-unwrap -H shuffled.msg | grep '^Sequence-Number' | paste -s -"
show "msg-resequence --stats shuffled.msg | msg-unwrap -H | grep '^Sequence-Number' | paste -s -"

step "Idempotent Receiver: a batch delivered twice (at-least-once); the copies are dropped and counted"
show "cat shuffled.msg shuffled.msg | msg-dedupe --stats | msg-unwrap -H | grep -c '^Message-Id'"

step "Trickle feed: versions of each purchase order go to the target one at a time, the next only once the target confirmed the one before"
show "msg-wrap -l data/po-versions.jsonl | msg-translate --set 'Entity-Id=json(\"/po\")' --set 'Entity-Version=json(\"/version\")' > versions.msg"
show "msg-trickle --state po --once --output sent.msg versions.msg && msg-unwrap -s '\\n' sent.msg && echo && msg-trickle status --state po | cut -f1-3,6"
show "mkfifo answers.fifo && msg-translate --set \"Correlation-Id=header('Message-Id')\" -H 'Status: success' sent.msg > answers.msg"
show "msg-trickle --state po -r answers.msg -r answers.fifo --stats < /dev/null | tee more.msg | msg-translate --set \"Correlation-Id=header('Message-Id')\" -H 'Status: success' > answers.fifo; msg-unwrap -s '\\n' more.msg && echo && msg-trickle status --state po | cut -f1-3,7"

step "JSON in, XML out: the JSON mapping as a Normalizer step"
show "msg-split -r -j /orders data/orders.json | msg-translate --to xml | msg-unwrap -s '\\n' | head -2"
echo
