#!/usr/bin/env bats
# msg-route on the command line: routing by XPath, json(), the JSON
# mapping and header(); first match and --all; unmatched messages with and
# without --otherwise; --filter; dynamic recipients; a body that is never
# parsed when only headers are read.

load test_helper
bats_require_minimum_version 1.5.0
load fixtures/route/route

# ---- what routes ----

@test "route: XPath on XML, the first matching rule wins" {
	run -0 --separate-stderr msg-route \
		-w "/order/@type='rush'" -t rush.out \
		-w '/order/total > 100' -t big.out \
		-o rest.out "$ROUTE/orders.msg"
	[ -z "$output" ]
	[ -z "$stderr" ]
	# o1 is rush and big: only the first rule takes it.
	[ "$(ids rush.out)" = "o1 o4" ]
	[ "$(ids big.out)" = o3 ]
	[ "$(ids rest.out)" = o2 ]
	frames "$ROUTE/orders.msg" 1 4 | cmp - rush.out
	frames "$ROUTE/orders.msg" 3 | cmp - big.out
	frames "$ROUTE/orders.msg" 2 | cmp - rest.out
}

@test "route: --all copies to every matching rule, once per channel" {
	run -0 --separate-stderr msg-route -a --stats \
		-w "/order/@type='rush'" -t rush.out \
		-w '/order/total > 100' -t big.out \
		-w '/order/@id = 1' -t rush.out \
		-o rest.out "$ROUTE/orders.msg"
	[ -z "$output" ]
	# o1 matches all three rules, two of them to rush.out: one copy there.
	frames "$ROUTE/orders.msg" 1 4 | cmp - rush.out
	frames "$ROUTE/orders.msg" 1 3 | cmp - big.out
	frames "$ROUTE/orders.msg" 2 | cmp - rest.out
	[ "$stderr" = "msg-route: stats: rule 1 '/order/@type='rush'' -> 'rush.out': 2
msg-route: stats: rule 2 '/order/total > 100' -> 'big.out': 2
msg-route: stats: rule 3 '/order/@id = 1' -> 'rush.out': 1
msg-route: stats: otherwise -> 'rest.out': 1
msg-route: stats: channel 'rush.out': 2
msg-route: stats: channel 'big.out': 2
msg-route: stats: channel 'rest.out': 1
msg-route: stats: in 4, routed 3, otherwise 1, dropped 0, invalid 0, expired 0, undeliverable 0" ]
}

@test "route: json() reads strings, numbers, booleans and compact objects" {
	msg-route \
		-w "json('/gift')" -t gift.out \
		-w "json('/tags') = '[\"big\",\"slow\"]'" -t tags.out \
		-w "json('/customer/name') = 'Bob'" -t bob.out \
		-w "json('/customer') = '{\"name\":\"Di\"}'" -t di.out \
		"$ROUTE/orders-json.msg"
	frames "$ROUTE/orders-json.msg" 1 | cmp - gift.out
	frames "$ROUTE/orders-json.msg" 3 | cmp - tags.out
	frames "$ROUTE/orders-json.msg" 2 | cmp - bob.out
	frames "$ROUTE/orders-json.msg" 4 | cmp - di.out
	# Numbers compare as numbers, not as text ("40" > "100" as strings).
	msg-route -w "json('/total') > 100" -t big.out -o small.out "$ROUTE/orders-json.msg"
	[ "$(ids big.out)" = "j1 j3" ]
	[ "$(ids small.out)" = "j2 j4" ]
	# A missing member is the empty string.
	msg-route -w "json('/none') = ''" -t none.out "$ROUTE/orders-json.msg"
	cmp "$ROUTE/orders-json.msg" none.out
}

@test "route: the json-to-xml mapping of JSON bodies" {
	msg-route \
		-w "/map/array[@key='tags']/string = 'slow'" -t slow.out \
		-w "/map/boolean[@key='gift'] = 'true'" -t gift.out \
		-w "/map/map[@key='customer']/string[@key='name'] = 'Bob'" -t bob.out \
		-w "/map/string[@key='type'] = 'rush'" -t rush.out \
		"$ROUTE/orders-json.msg"
	[ "$(ids slow.out)" = j3 ]
	[ "$(ids gift.out)" = j1 ]
	[ "$(ids bob.out)" = j2 ]
	[ "$(ids rush.out)" = j4 ]
	frames "$ROUTE/orders-json.msg" 4 | cmp - rush.out
	msg-route -w '/map/number[@key="total"] < 100' -t small.out -o /dev/null "$ROUTE/orders-json.msg"
	[ "$(ids small.out)" = "j2 j4" ]
}

@test "route: json() equality: escapes, null, missing, other types, as XPath says" {
	local b n=0
	for b in '{"k":"rush"}' '{"k":"r\u0075sh"}' '{"k":null}' '{}' '{"k":1}' '{"k":true}' \
		'{"k":"Rush"}' '{"k":"ru\"sh"}' '{"x":{"k":"rush"}}'; do
		n=$((n + 1))
		printf '%s' "$b" | msg-wrap -t application/json -H "Message-Id: k$n"
	done >in.msg
	# Each test alone, and inside a larger expression (evaluated by XPath
	# throughout), selects the same messages.
	check() {
		msg-route -f "$1" in.msg >a.out
		msg-route -f "$1 and true()" in.msg >b.out
		cmp a.out b.out
		[ "$(ids a.out)" = "$2" ] || {
			echo "$1: $(ids a.out)"
			return 1
		}
	}
	# true = 'rush' and true = 1 compare as booleans (non-empty, non-zero).
	check "json('/k') = 'rush'" 'k1 k2 k6'
	check "json('/k') != 'rush'" 'k3 k4 k5 k7 k8 k9'
	check "json('/k') = ''" 'k3 k4 k9'
	check "json('/k') = 'ru\"sh'" 'k6 k8'
	check "json('/x/k') = 'rush'" 'k9'
	check "json('/k') = 1" 'k5 k6'
}

@test "route: header() reads headers, names compared case-insensitively" {
	msg-route -w "header('Region') = 'eu'" -t eu.out \
		-w "header('REGION') = 'us'" -t us.out \
		-w "header('No-Such') = ''" -t other.out "$ROUTE/orders.msg"
	frames "$ROUTE/orders.msg" 1 3 | cmp - eu.out
	frames "$ROUTE/orders.msg" 2 | cmp - us.out
	frames "$ROUTE/orders.msg" 4 | cmp - other.out
	msg-route -w "header('Region') != 'eu' and true()" -t noteu.out -o eu2.out "$ROUTE/orders.msg"
	cmp eu.out eu2.out
	frames "$ROUTE/orders.msg" 2 4 | cmp - noteu.out
	# The same rules on JSON bodies route the same way.
	msg-route -w "header('Region') = 'eu'" -t jeu.out -o jrest.out "$ROUTE/orders-json.msg"
	[ "$(ids jeu.out)" = "j1 j3" ]
	[ "$(ids jrest.out)" = "j2 j4" ]
}

@test "route: prefixes declared on the document element, and --ns" {
	printf '<p:order xmlns:p="urn:shop" type="rush"/>' | msg-wrap -H 'Message-Id: n1' >in.msg
	printf '<order xmlns="urn:shop" type="normal"/>' | msg-wrap -H 'Message-Id: n2' >>in.msg
	msg-route -w "/p:order[@type='rush']" -t rush.out -o rest.out --ns p=urn:shop in.msg
	[ "$(ids rush.out)" = n1 ]
	[ "$(ids rest.out)" = n2 ]
	# --ns binds a prefix to the default namespace of n2.
	msg-route -w '/s:order' -t shop.out --ns s=urn:shop in.msg
	cmp in.msg shop.out
	# Without --ns, n1's own prefix is enough for n1.
	msg-route -w "/p:order/@type = 'rush'" -t own.out <(frames in.msg 1)
	[ "$(ids own.out)" = n1 ]
}

@test "route: a body that is neither XML nor JSON is a text node" {
	printf 'please ship it, urgent' | msg-wrap -H 'Message-Id: t1' >in.msg
	printf 'no hurry' | msg-wrap -H 'Message-Id: t2' >>in.msg
	msg-route -w "contains(., 'urgent')" -t urgent.out -o rest.out in.msg
	[ "$(msg-unwrap urgent.out)" = 'please ship it, urgent' ]
	[ "$(ids rest.out)" = t2 ]
}

@test "route: messages pass unchanged, binary bodies and every header" {
	printf 'Message-Id: b1\nX-Odd: kept\nX-Odd: twice\nContent-Length: 6\n\na\0b\377\nc\n' >in.msg
	msg-route -w "header('X-Odd') = 'kept'" -t out.msg in.msg
	cmp in.msg out.msg
	# A header block with CRLF lines passes as it came, byte for byte.
	printf 'Message-Id: c1\r\nX-A:  v \r\nContent-Length: 2\r\n\r\nhi\n' >crlf.msg
	msg-route -w "header('X-A') = 'v'" -t crlf.out crlf.msg
	cmp crlf.msg crlf.out
	# When it is changed (an Error header added), it is written with LF.
	msg-route -w 'false()' -t none.out --invalid bad.out crlf.msg
	printf 'Message-Id: c1\nX-A: v\nError: msg-route: no rule matched\nContent-Length: 2\n\nhi\n' | cmp - bad.out
}

@test "route: -t - is stdout; --output moves the main output" {
	run -0 --separate-stderr msg-route -w "header('Region') = 'eu'" -t - -o rest.out "$ROUTE/orders.msg"
	[ "$output" = "$(frames "$ROUTE/orders.msg" 1 3)" ]
	frames "$ROUTE/orders.msg" 2 4 | cmp - rest.out
	# --filter writes to the main output, which --output moves.
	msg-route -f "header('Region') = 'eu'" --output main.out "$ROUTE/orders.msg" >stdout.out
	frames "$ROUTE/orders.msg" 1 3 | cmp - main.out
	[ ! -s stdout.out ]
}

@test "route: several inputs are read one after the other" {
	msg-route -w "header('Region') = 'eu'" -t eu.out -o rest.out \
		"$ROUTE/orders.msg" - <"$ROUTE/orders-json.msg"
	[ "$(ids eu.out)" = "o1 o3 j1 j3" ]
	[ "$(ids rest.out)" = "o2 o4 j2 j4" ]
}

@test "route: MSG_HISTORY appends to Message-History on every copy" {
	frame one 'Message-Id: h1' >in.msg
	frame two 'Message-Id: h2' 'Message-History: wrap' >>in.msg
	MSG_HISTORY=router msg-route -a -w 'true()' -t a.out -w 'true()' -t b.out in.msg
	cmp a.out b.out
	[ "$(msg-unwrap -e a.out | jq -r '.headers."Message-History"' | paste -sd '|' -)" = 'router|wrap, router' ]
}

# ---- what is not matched ----

@test "route: unmatched without --otherwise: exit 65 after routing what came before" {
	run -65 --separate-stderr msg-route -w "/order/@type='rush'" -t rush.out "$ROUTE/orders.msg"
	[ "$stderr" = "msg-route: $ROUTE/orders.msg: message 2 (Message-Id o2): no rule matched" ]
	frames "$ROUTE/orders.msg" 1 | cmp - rush.out
}

@test "route: unmatched with --invalid goes there with an Error header" {
	run -0 --separate-stderr msg-route -w "/order/@type='rush'" -t rush.out \
		--invalid bad.out "$ROUTE/orders.msg"
	[ "$stderr" = "msg-route: warning: message o2: no rule matched: diverted to 'bad.out'
msg-route: warning: message o3: no rule matched: diverted to 'bad.out'" ]
	frames "$ROUTE/orders.msg" 1 4 | cmp - rush.out
	frames "$ROUTE/orders.msg" 2 3 |
		sed 's/^Content-Length:/Error: msg-route: no rule matched\n&/' | cmp - bad.out
	# $MSG_INVALID names the same channel.
	MSG_INVALID=env.out msg-route -w "/order/@type='rush'" -t rush2.out "$ROUTE/orders.msg"
	cmp bad.out env.out
}

@test "route: unmatched with --otherwise goes there unchanged" {
	msg-route -w "/order/@type='bulk'" -t bulk.out -o rest.out "$ROUTE/orders.msg"
	frames "$ROUTE/orders.msg" 3 | cmp - bulk.out
	frames "$ROUTE/orders.msg" 1 2 4 | cmp - rest.out
	# --otherwise - is stdout.
	msg-route -w "/order/@type='bulk'" -t bulk2.out -o - "$ROUTE/orders.msg" >rest2.out
	cmp rest.out rest2.out
}

@test "route: --otherwise /dev/null drops on purpose and --stats counts it" {
	run -0 --separate-stderr msg-route --stats -w "/order/@type='rush'" -t rush.out \
		--otherwise /dev/null "$ROUTE/orders.msg"
	[ -z "$output" ]
	frames "$ROUTE/orders.msg" 1 4 | cmp - rush.out
	[ "$stderr" = "msg-route: stats: rule 1 '/order/@type='rush'' -> 'rush.out': 2
msg-route: stats: otherwise -> '/dev/null': 2
msg-route: stats: channel 'rush.out': 2
msg-route: stats: channel '/dev/null': 2
msg-route: stats: in 4, routed 2, otherwise 2, dropped 0, invalid 0, expired 0, undeliverable 0" ]
}

@test "route: --filter passes matches to stdout and drops the rest, counted" {
	run -0 --separate-stderr msg-route --stats -f "header('Region') = 'eu'" "$ROUTE/orders.msg"
	[ "$output" = "$(frames "$ROUTE/orders.msg" 1 3)" ]
	[ "$stderr" = "msg-route: stats: channel '-': 2
msg-route: stats: in 4, routed 2, otherwise 0, dropped 2, invalid 0, expired 0, undeliverable 0" ]
	# On JSON bodies, to --output.
	msg-route --filter "json('/total') >= 250" --output big.out "$ROUTE/orders-json.msg"
	frames "$ROUTE/orders-json.msg" 1 3 | cmp - big.out
	# Nothing matches: an empty output, not an error.
	run -0 --separate-stderr msg-route -f 'false()' "$ROUTE/orders.msg"
	[ -z "$output" ]
	[ -z "$stderr" ]
}

@test "route: --filter on a body that is not XML is invalid" {
	printf '<broken' | msg-wrap -t application/xml -H 'Message-Id: x1' >in.msg
	run -65 --separate-stderr msg-route -f '/order' in.msg
	[ -z "$output" ]
	[[ $stderr == "msg-route: in.msg: message 1 (Message-Id x1): body is not XML: "* ]]
	run -0 --separate-stderr msg-route -f '/order' --invalid bad.out in.msg
	[ -z "$output" ]
	[[ $(msg-unwrap -e bad.out | jq -r .headers.Error) == "msg-route: body is not XML: "* ]]
}

# ---- laziness: header-only expressions never parse the body ----

@test "route: a body that is not XML routes by header; an XPath rule finds it invalid" {
	printf '<order><unclosed>' | msg-wrap -t application/xml -H 'Message-Id: l1' -H 'Kind: rush' >in.msg
	run -0 --separate-stderr msg-route -w "header('Kind') = 'rush'" -t rush.out in.msg
	[ -z "$stderr" ]
	cmp in.msg rush.out
	run -65 --separate-stderr msg-route -w "/order/@kind = 'rush'" -t rush2.out in.msg
	[[ $stderr == "msg-route: in.msg: message 1 (Message-Id l1): body is not XML: "*unclosed* ]]
	[ ! -s rush2.out ]
	# The same for a JSON body that is not JSON, under json().
	printf '{"kind" "rush"}' | msg-wrap -t application/json -H 'Message-Id: l2' -H 'Kind: rush' >j.msg
	msg-route -w "header('Kind') = 'rush'" -t jrush.out j.msg
	cmp j.msg jrush.out
	run -65 --separate-stderr msg-route -w "json('/kind') = 'rush'" -t jrush2.out j.msg
	[ "$stderr" = "msg-route: j.msg: message 1 (Message-Id l2): body is not JSON: offset 8: ':' expected" ]
	run -65 --separate-stderr msg-route -w "/map/string[@key = 'kind'] = 'rush'" -t jrush2.out j.msg
	[[ $stderr == "msg-route: j.msg: message 1 (Message-Id l2): body is not JSON: "* ]]
	[ ! -s jrush2.out ]
}

@test "route: a header-only rule routes a 50 MB body it never parses" {
	head -c 50000000 /dev/zero | tr '\0' '<' | msg-wrap -t application/xml -H 'Kind: big' >in.msg
	run -0 --separate-stderr timeout -k 10 30 msg-route -w "header('Kind') = 'big'" -t out.msg in.msg
	[ -z "$stderr" ]
	cmp in.msg out.msg
}

# ---- dynamic recipients ----

@test "route: --to-header sends to each allowed recipient named" {
	printf 'x' | msg-wrap -H 'Message-Id: d1' -H 'To: a.out, b.out' >in.msg
	printf 'y' | msg-wrap -H 'Message-Id: d2' -H 'To: b.out' >>in.msg
	printf 'z' | msg-wrap -H 'Message-Id: d3' -H 'To: b.out,a.out b.out' >>in.msg
	run -0 --separate-stderr msg-route --to-header To --allow a.out --allow b.out in.msg
	[ -z "$stderr" ]
	frames in.msg 1 3 | cmp - a.out
	# d3 names b.out twice: one copy.
	cmp in.msg b.out
}

@test "route: a recipient outside --allow makes the message invalid, sent nowhere" {
	printf 'x' | msg-wrap -H 'Message-Id: d1' -H 'To: a.out' >in.msg
	printf 'y' | msg-wrap -H 'Message-Id: d2' -H 'To: a.out, ../etc/evil' >>in.msg
	printf 'z' | msg-wrap -H 'Message-Id: d3' -H 'To: a.out' >>in.msg
	run -65 --separate-stderr msg-route --to-header To --allow a.out in.msg
	[ "$stderr" = "msg-route: in.msg: message 2 (Message-Id d2): recipient '../etc/evil' in To is not allowed" ]
	frames in.msg 1 | cmp - a.out
	[ ! -e ../etc/evil ]
	rm a.out
	run -0 --separate-stderr msg-route --to-header To --allow a.out --invalid bad.out in.msg
	# Not even a.out, which it also names, gets d2.
	frames in.msg 1 3 | cmp - a.out
	frames in.msg 2 | sed "s/^Content-Length:/Error: msg-route: recipient '..\/etc\/evil' in To is not allowed\n&/" |
		cmp - bad.out
}

@test "route: a message without recipients goes --otherwise, else is invalid" {
	printf 'x' | msg-wrap -H 'Message-Id: d1' >in.msg
	printf 'y' | msg-wrap -H 'Message-Id: d2' -H 'To: ' >>in.msg
	msg-route --to-header To --allow a.out -o none.out in.msg
	cmp in.msg none.out
	[ ! -s a.out ]
	run -65 --separate-stderr msg-route --to-header To --allow a.out in.msg
	[ "$stderr" = "msg-route: in.msg: message 1 (Message-Id d1): no recipients in To" ]
}

@test "route: XPath over more element names than one parser keeps: each message judged alone" {
	# 6,000 bodies, each with a root element of its own name, and every
	# third one rush: the parser's dictionary of names is replaced on
	# the way, and no document may see another's names.
	awk 'BEGIN { for (i = 1; i <= 6000; i++)
		printf "<e%d type=\"%s\"><n%d/></e%d>\n", i,
			(i % 3 ? "bulk" : "rush"), i, i }' >bodies.txt
	msg-wrap -l bodies.txt >in.msg
	run -0 --separate-stderr msg-route -f "/*/@type = 'rush' and count(/*/*) = 1" in.msg
	[ -z "$stderr" ]
	printf '%s\n' "$output" >out.msg
	msg-unwrap -s '\n' out.msg >got.txt
	echo >>got.txt
	awk 'NR % 3 == 0' bodies.txt | cmp - got.txt
}

@test "route: XPath on small bodies in UTF-16 without a byte order mark and in a declared ISO-8859-1" {
	printf '<?xml version="1.0" encoding="UTF-16"?><order type="rush">caf\xc3\xa9</order>' |
		iconv -f UTF-8 -t UTF-16LE >utf16.xml
	printf '<?xml version="1.0" encoding="ISO-8859-1"?><order type="rush">caf\xe9</order>' >latin1.xml
	printf '<order type="rush">caf\xc3\xa9</order>' >utf8.xml
	msg-wrap utf16.xml latin1.xml utf8.xml >in.msg
	# The bodies hold NUL bytes: the output goes to a file.
	run -0 --separate-stderr msg-route -f "/order = 'caf$(printf '\xc3\xa9')'" \
		--output out.msg in.msg
	[ -z "$output" ]
	[ -z "$stderr" ]
	cmp out.msg in.msg
}
