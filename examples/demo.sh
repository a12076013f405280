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
