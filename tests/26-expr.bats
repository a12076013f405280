#!/usr/bin/env bats
# The expression language (XPath 1.0 with header() and json(), over XML,
# the JSON mapping and text bodies), seen through msg-split: --header
# values and predicates in the split expression.
#
# Laziness (an expression that reads only headers never parses the body)
# cannot be shown with msg-split: every split needs the body anyway, so
# that is left to the suites of the tools that evaluate expressions per
# message.

load test_helper
bats_require_minimum_version 1.5.0
load fixtures/split/split

# values JSON EXPR...: split JSON (one message, through the DOM) with
# --header V1=EXPR1, V2=EXPR2 ...; print each value on its own line.
values() {
	local json=$1 i=0 e k
	shift
	local args=()
	for e in "$@"; do
		i=$((i + 1))
		args+=(-H "V$i=$e")
	done
	printf '%s' "$json" | msg-split -r --no-stream -x '/*' "${args[@]}" >v.msg
	for ((k = 1; k <= i; k++)); do
		hv v.msg 1 "V$k"
	done
}

# ---- header() ----

@test "expr: header() gives a header's value, or the empty string" {
	frame '<a><b/></a>' 'Message-Id: M' 'Priority: high' 'Empty:' >in.msg
	msg-split --no-stream -x /a/b -H 'P=header("Priority")' -H 'Q=header("priority")' \
		-H 'M=header("Missing")' -H 'E=header("Empty")' -H 'N=string-length(header("Missing"))' \
		-H 'I=header("Message-Id")' -H "C=concat(header('Priority'), '/', name())" in.msg >out.msg
	[ "$(hv out.msg 1 P)" = high ]
	[ "$(hv out.msg 1 Q)" = high ]
	[ "$(hv out.msg 1 M)" = '' ]
	[ "$(hv out.msg 1 E)" = '' ]
	[ "$(hv out.msg 1 N)" = 0 ]
	[ "$(hv out.msg 1 I)" = M ]
	[ "$(hv out.msg 1 C)" = high/b ]
}

@test "expr: header() in the split expression chooses what is split" {
	{ msg-wrap -H 'Region: north' "$SPLIT/orders.xml"; msg-wrap -H 'Region: south' "$SPLIT/orders.xml"; } >in.msg
	msg-split -x "/orders/order[header('Region') = 'north'][@type = 'rush']" in.msg >out.msg
	[ "$(count out.msg)" = 3 ]
	[ "$(hcol out.msg Region | tr '\n' ' ')" = 'north north south ' ]
	[ "$(hcol out.msg Sequence-Size | tr '\n' ' ')" = '2 2 0 ' ]
	[ "$(body out.msg 2)" = '<order id="3" type="rush"/>' ]
	# header() compares like any string.
	msg-split -x "/orders/order[@id = header('Want')]" <(msg-wrap -H 'Want: 2' "$SPLIT/orders.xml") >out.msg
	[ "$(hcol out.msg Sequence-Size)" = 1 ]
	[[ $(body out.msg 1) == '<order id="2" '* ]]
}

# ---- json() ----

@test "expr: json() gives strings and numbers as XPath strings and numbers" {
	run -0 values '{"s": "caf\u00e9 \"q\" \\ \/", "n": 1.50, "i": 42, "neg": -0.25, "e": 1e3, "z": 0}' \
		'json("/s")' 'json("/n")' 'json("/i")' 'json("/neg")' 'json("/e")' \
		'json("/n") + 1' 'json("/i") > 41' 'string-length(json("/s"))' 'json("/z")'
	[ "$output" = 'café "q" \ /
1.5
42
-0.25
1000
2.5
true
12
0' ]
}

@test "expr: json() gives booleans as booleans" {
	run -0 values '{"t": true, "f": false, "s": "false"}' \
		'json("/t")' 'json("/f")' 'boolean(json("/f"))' 'boolean(json("/s"))' \
		'json("/t") and not(json("/f"))' 'json("/f") = false()'
	[ "$output" = 'true
false
false
true
true
true' ]
}

@test "expr: json() gives objects and arrays as compact JSON text" {
	run -0 values '{"o": {"b" : 1, "a": [1, {"c": "d"}, 1.50]}, "e": [], "eo": { }, "arr": ["x", null]}' \
		'json("/o")' 'json("/o/a")' 'json("/e")' 'json("/eo")' 'json("/arr")' 'json("")'
	[ "$output" = '{"b":1,"a":[1,{"c":"d"},1.50]}
[1,{"c":"d"},1.50]
[]
{}
["x",null]
{"o":{"b":1,"a":[1,{"c":"d"},1.50]},"e":[],"eo":{},"arr":["x",null]}' ]
}

@test "expr: json() of null, a missing member or a bad pointer is the empty string" {
	run -0 values '{"z": null, "a": [10, 20], "o": {"k": 1}}' \
		'json("/z")' 'json("/nope")' 'json("/a/2")' 'json("/a/01")' 'json("/a/-")' \
		'json("/a/x")' 'json("/o/k/deeper")' 'json("nope")' 'string-length(json("/z"))' \
		'json("/a/1")' 'json("/a/0")'
	[ "$output" = '







0
20
10' ]
}

@test "expr: json() pointers unescape ~1 and ~0 and allow the empty key" {
	run -0 values '{"a/b": 1, "m~n": 2, "~1": 3, "": 4, "x": {"": 5}}' \
		'json("/a/b")' 'json("/a~1b")' 'json("/m~0n")' 'json("/~01")' 'json("/")' 'json("/x/")'
	[ "$output" = '
1
2
3
4
5' ]
}

@test "expr: json() reads the first of duplicate members" {
	run -0 values '{"b": 1, "a": 2, "b": 3}' 'json("/b")' 'count(/map/number[@key="b"])'
	[ "$output" = '1
2' ]
}

@test "expr: json() on a body that is not JSON is the empty string" {
	printf '<a n="1"><b>2</b></a>' | msg-split -r -x '/a[1]' -H 'J=json("/n")' -H 'W=json("")' >out.msg
	[ "$(hv out.msg 1 J)" = '' ]
	[ "$(hv out.msg 1 W)" = '' ]
	printf 'text' | msg-split -r -l -H 'J=json("")' >out.msg
	[ "$(hv out.msg 1 J)" = '' ]
}

# nested N: N arrays, one inside the other.
nested() {
	printf '%*s' "$1" '' | tr ' ' '['
	printf '%*s' "$1" '' | tr ' ' ']'
}

@test "expr: json() refuses nesting deeper than 512 levels like the mapping does" {
	# msg-route answers json() by scanning the text, without the mapping.
	nested 512 | msg-wrap -t application/json -H 'Message-Id: D512' >in.msg
	run -0 --separate-stderr msg-route -w "starts-with(json('/0/0'), '[[')" -t deep.out in.msg
	[ -z "$stderr" ]
	cmp in.msg deep.out
	for n in 513 1000000; do
		nested $n | msg-wrap -t application/json -H "Message-Id: D$n" >in.msg
		run -65 --separate-stderr msg-route -w "starts-with(json('/0/0'), '[[')" -t deep.out in.msg
		[ "$stderr" = "msg-route: in.msg: message 1 (Message-Id D$n): body is not JSON: offset 512: nesting deeper than 512" ]
		run -65 --separate-stderr msg-split --no-stream -x '/*' -H "J=json('/0')" in.msg
		[ "$stderr" = "msg-split: in.msg: message 1 (Message-Id D$n): body is not JSON: offset 512: nesting deeper than 512" ]
	done
}

@test "expr: json() in the split expression chooses what is split" {
	{ frame '{"type": "rush", "items": [1, 2]}' 'Message-Id: R' 'Content-Type: application/json'
	  frame '{"type": "bulk", "items": [3]}' 'Message-Id: B' 'Content-Type: application/json'; } >in.msg
	msg-split -x "/map/array[json('/type') = 'rush']/*" in.msg >out.msg
	[ "$(count out.msg)" = 3 ]
	[ "$(bodies out.msg)" = '1
2' ]
	[ "$(hcol out.msg Correlation-Id | tr '\n' ' ')" = 'R R B ' ]
	[ "$(hv out.msg 3 Sequence-Size)" = 0 ]
}

# ---- the JSON mapping ----

@test "expr: JSON bodies are seen through the json-to-xml mapping" {
	run -0 values '{"type": "rush", "n": 2, "ok": true, "none": null, "list": ["a", {"k": "v"}]}' \
		"/map/string[@key='type'] = 'rush'" "name(/map/number)" "/map/boolean[@key='ok']" \
		"count(/map/null[@key='none'])" "name(/map/array/*[2])" "/map/array/map/string[@key='k']" \
		"count(/map/*)" "count(//@key)" "concat('[', namespace-uri(/map), ']')"
	[ "$output" = 'true
number
true
1
map
v
5
6
[]' ]
}

@test "expr: the mapping writes JSON back exactly, numbers and order kept" {
	local j='{"b":1,"a":1.50,"b":2e1,"big":123456789012345678901234567890,"neg":-0,"s":"\u00e9\n\"","c\u0001":"x\u0001y"}'
	printf '%s' "$j" | msg-split -r --no-stream -x / >out.msg
	[ "$(body out.msg 1)" = '{"b":1,"a":1.50,"b":2e1,"big":123456789012345678901234567890,"neg":-0,"s":"é\n\"","c\u0001":"x\u0001y"}' ]
	printf '%s' "$j" | msg-split -r --no-stream -x '/map/*[last()]' \
		-H 'Key=@key' -H 'Escaped=@escaped' -H 'KeyEscaped=@escaped-key' >out.msg
	[ "$(body out.msg 1)" = '"x\u0001y"' ]
	[ "$(hv out.msg 1 Key)" = 'c\u0001' ]
	[ "$(hv out.msg 1 Escaped)" = true ]
	[ "$(hv out.msg 1 KeyEscaped)" = true ]
}

# ---- text bodies ----

@test "expr: a text body is one text node, so contains(., 'x') works" {
	{ frame 'disk error on sda' 'Message-Id: E' 'Content-Type: text/plain'
	  frame 'all fine' 'Message-Id: F' 'Content-Type: text/plain'; } >in.msg
	msg-split -x "/text()[contains(., 'error')]" -H 'Len=string-length(.)' \
		-H 'Nodes=count(/node())' -H 'Up=translate(substring-before(., " "), "dikst", "DIKST")' in.msg >out.msg
	[ "$(count out.msg)" = 2 ]
	[ "$(body out.msg 1)" = 'disk error on sda' ]
	[ "$(hv out.msg 1 Content-Type)" = text/plain ]
	[ "$(hv out.msg 1 Len)" = 17 ]
	[ "$(hv out.msg 1 Nodes)" = 1 ]
	[ "$(hv out.msg 1 Up)" = DISK ]
	[ "$(hv out.msg 2 Correlation-Id)" = F ]
	[ "$(hv out.msg 2 Sequence-Size)" = 0 ]
}

@test "expr: with -l and -d each line or piece is the context text node" {
	printf 'error: disk\nok\nerror: net' | msg-split -r -l -H 'Err=contains(., "error")' \
		-H 'What=normalize-space(substring-after(., ":"))' -H 'Len=string-length()' >out.msg
	[ "$(hcol out.msg Err | tr '\n' ' ')" = 'true false true ' ]
	[ "$(hcol out.msg What | tr '\n' '|')" = 'disk||net|' ]
	[ "$(hcol out.msg Len | tr '\n' ' ')" = '11 2 10 ' ]
	printf 'a=1;bb=22' | msg-split -r -d ';' -H 'K=substring-before(., "=")' -H 'V=number(substring-after(., "=")) * 2' >out.msg
	[ "$(hcol out.msg K | tr '\n' ' ')" = 'a bb ' ]
	[ "$(hcol out.msg V | tr '\n' ' ')" = '2 44 ' ]
}

@test "expr: an untyped text body is a text node for plain paths too" {
	frame 'hello' 'Message-Id: T' >in.msg
	local mode
	for mode in --no-stream ''; do
		rm -f out.msg
		run -0 --separate-stderr msg-split --output out.msg $mode -x /a in.msg
		[ -z "$stderr" ]
		[ "$(hv out.msg 1 Sequence-Size)" = 0 ]
	done
}

@test "expr: a text body that looks like markup is still XML unless typed" {
	frame '<a>x</a>' 'Message-Id: X' >in.msg
	msg-split -x '/a[1]' in.msg >out.msg
	[ "$(body out.msg 1)" = '<a>x</a>' ]
	frame 'not <a> document' 'Message-Id: T' 'Content-Type: text/plain' >in.msg
	msg-split -x '/text()[1]' in.msg >out.msg
	[ "$(body out.msg 1)" = 'not <a> document' ]
}

# ---- namespaces ----

@test "expr: --ns prefixes and the document's own prefixes work in expressions" {
	local mode
	for mode in '' --no-stream; do
		msg-wrap "$SPLIT/ns-default.xml" |
			msg-split $mode --ns o=urn:example:orders --ns e=urn:example:extra \
				-x /o:orders/o:order -H 'Item=o:item' -H 'Note=e:note' \
				-H 'X=x:note' -H 'Region=../@region' >out.msg
		[ "$(hcol out.msg Item | tr '\n' ' ')" = 'Apple Pear ' ]
		[ "$(hcol out.msg Note | tr '\n' '|')" = 'fragile||' ]
		[ "$(hcol out.msg X | tr '\n' '|')" = 'fragile||' ]
		[ "$(hcol out.msg Region | tr '\n' ' ')" = 'west west ' ]
	done
	msg-wrap "$SPLIT/ns-prefixed.xml" |
		msg-split -x "//o:order[p:amount/@currency = 'USD']" -H 'N=namespace-uri(p:amount)' >out.msg
	[ "$(count out.msg)" = 1 ]
	[ "$(hv out.msg 1 N)" = urn:example:price ]
}

# ---- XPath itself ----

@test "expr: XPath 1.0 functions and types behave as in libxml2" {
	msg-wrap "$SPLIT/orders.xml" |
		msg-split --no-stream -x '/orders/order[1]' -H 'Sum=sum(item/@qty)' \
			-H 'Avg=sum(item/@qty) div count(item)' -H 'Round=round(2.5)' \
			-H 'Pos=count(preceding-sibling::order)' -H 'Bool=boolean(item)' \
			-H 'Str=concat(@id, "-", @type)' -H 'Sub=substring(customer, 2)' \
			-H 'Last=string(/orders/order[last()]/@id)' -H 'Start=starts-with(customer, "A")' \
			-H 'Upper=translate(customer, "an", "AN")' -H 'NaN=number("x")' >out.msg
	[ "$(hv out.msg 1 Sum)" = 3 ]
	[ "$(hv out.msg 1 Avg)" = 1.5 ]
	[ "$(hv out.msg 1 Round)" = 3 ]
	[ "$(hv out.msg 1 Pos)" = 0 ]
	[ "$(hv out.msg 1 Bool)" = true ]
	[ "$(hv out.msg 1 Str)" = 1-rush ]
	[ "$(hv out.msg 1 Sub)" = nn ]
	[ "$(hv out.msg 1 Last)" = 4 ]
	[ "$(hv out.msg 1 Start)" = true ]
	[ "$(hv out.msg 1 Upper)" = ANN ]
	[ "$(hv out.msg 1 NaN)" = NaN ]
}

@test "expr: compile errors name the expression and the position" {
	run -64 --separate-stderr msg-split -x /a -H 'X=concat(1'
	[ "$stderr" = "msg-split: invalid expression 'concat(1': Invalid expression at position 8" ]
	run -64 --separate-stderr msg-split -x '/a/b[@x = "1"]]'
	[ "$stderr" = "msg-split: invalid expression '/a/b[@x = \"1\"]]': Invalid expression at position 14" ]
	run -64 --separate-stderr msg-split -x '/a' -H 'X=nosuch(.)'
	[ "$stderr" = "msg-split: unknown function 'nosuch' in expression 'nosuch(.)'" ]
	# Names that are not called are not functions.
	run -0 --separate-stderr msg-split -x '/json/header' -H 'X=count(header) + count(json)' </dev/null
	[ -z "$stderr" ]
}

@test "expr: a call with the wrong number of arguments is refused at start-up" {
	run -64 --separate-stderr msg-route -f "header('a', 'b')" </dev/null
	[ "$stderr" = "msg-route: header() takes one argument, not 2, in expression 'header('a', 'b')'" ]
	run -64 --separate-stderr msg-route -f "json() = 1" </dev/null
	[ "$stderr" = "msg-route: json() takes one argument, not 0, in expression 'json() = 1'" ]
	run -64 --separate-stderr msg-split -x /a -H "X=concat('a')" </dev/null
	[ "$stderr" = "msg-split: concat() takes at least 2 arguments, not 1, in expression 'concat('a')'" ]
	run -64 --separate-stderr msg-split -x /a -H "X=substring('abc')" </dev/null
	[ "$stderr" = "msg-split: substring() takes 2 or 3 arguments, not 1, in expression 'substring('abc')'" ]
	run -64 --separate-stderr msg-translate --set "X=true(1)" </dev/null
	[ "$stderr" = "msg-translate: true() takes no arguments, not 1, in expression 'true(1)'" ]
	# Commas inside literals, predicates and nested calls are not counted.
	printf '<a><b>x,y</b></a>' | msg-wrap >in.msg
	run -0 msg-route -f "count(/a[contains(b, 'x,y')]) = 1 and concat('a', substring('bc', 1, 1), ',') = 'ab,'" in.msg
	[ "$(msg-unwrap <<<"$output")" = '<a><b>x,y</b></a>' ]
}

@test "expr: a variable is refused at start-up: none is ever bound" {
	run -64 --separate-stderr msg-route -f 'json("/a") = $limit' </dev/null
	[ "$stderr" = "msg-route: undefined variable '\$limit' in expression 'json(\"/a\") = \$limit'" ]
	run -64 --separate-stderr msg-split -x '/a[@n = $p:n]' </dev/null
	[ "$stderr" = "msg-split: undefined variable '\$p:n' in expression '/a[@n = \$p:n]'" ]
	# A dollar sign in a literal is text.
	printf '<a>$5</a>' | msg-wrap >in.msg
	run -0 msg-route -f "/a = '\$5'" in.msg
	[ -n "$output" ]
}
