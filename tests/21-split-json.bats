#!/usr/bin/env bats
# msg-split on JSON: -j streams the elements of the array at a pointer
# with their exact text; -x works through the json-to-xml mapping and
# writes each match back as JSON; -g makes arrays.

load test_helper
bats_require_minimum_version 1.5.0
load fixtures/split/split

setup_file() {
	# 20000 elements of varied shape, and one element larger than any
	# single read, so that elements straddle chunk boundaries.
	perl -e '
		print qq({"meta": {"n": 20001}, "orders": [\n);
		for my $i (1 .. 20000) {
			print qq(  {"id": $i, "name": "n\\u00e9\\"$i\\"", "tags": ["a", "b,]}"], "v": $i.5e-1},\n);
		}
		print qq(  {"id": "big", "blob": "), "z" x 600000, qq("}\n], "tail": [1]}\n);
	' >"$BATS_FILE_TMPDIR/big.json"
}

# jq_lines FILE: each body of FILE normalised by jq, one per line.
jq_lines() {
	msg-unwrap -e "$1" | jq -r .body | jq -c .
}

# ---- -j ----

@test "split json: -j gives each element of the array with its exact text" {
	msg-split -r -j /orders "$SPLIT/orders.json" >out.msg
	bodies out.msg >got
	cat >want <<-'EOF'
	{"id": 1, "type": "rush", "items": [ {"sku": "A-1", "qty": 2}, {"sku": "B-2"} ]}
	{"id": 2, "type": "normal", "note": "caf\u00e9 \"q\" \\ /", "price": 1.50}
	"plain string"
	-0.5e3
	true
	false
	null
	[1, [2, 3] ,[]]
	{}
	EOF
	printf '%s' "$(cat want)" | cmp - got
	[ "$(hcol out.msg Content-Type | sort -u)" = application/json ]
	[ "$(hcol out.msg Sequence-Number | tr '\n' ' ')" = '1 2 3 4 5 6 7 8 9 ' ]
}

@test "split json: -j equals jq -c '.path[]' element for element" {
	local p
	for p in /orders /orders/0/items /orders/7 /orders/7/1 /empty; do
		msg-split -r -j "$p" "$SPLIT/orders.json" >out.msg
		jq -c "getpath(\$p | ltrimstr(\"/\") | split(\"/\") | map(tonumber? // .))[]" \
			--arg p "$p" "$SPLIT/orders.json" >want
		if [ -s want ]; then
			jq_lines out.msg >got
		else
			[ "$(hv out.msg 1 Sequence-Size)" = 0 ]
			: >got
		fi
		diff -u want got
	done
	msg-split -r -j /orders "$SPLIT/orders.json" >out.msg
	jq -c '.orders[]' "$SPLIT/orders.json" | diff -u - <(jq_lines out.msg)
}

@test "split json: -j on a large array read in many pieces" {
	msg-split -r -j /orders "$BATS_FILE_TMPDIR/big.json" >out.msg
	[ "$(count out.msg)" = 20001 ]
	jq -c '.orders[]' "$BATS_FILE_TMPDIR/big.json" >want
	jq_lines out.msg >got
	cmp want got
	[ "$(body out.msg 7)" = '{"id": 7, "name": "n\u00e9\"7\"", "tags": ["a", "b,]}"], "v": 7.5e-1}' ]
	[ "$(body out.msg 20001 | wc -c)" = $((23 + 600000 + 2)) ]
	[ "$(hv out.msg 20001 Sequence-Size)" = 20001 ]
	[ "$(hv out.msg 20000 Sequence-Size)" = '(absent)' ]
}

@test "split json: an empty pointer splits a top-level array" {
	printf '  [ 1 , "x,y" ,{"a" : [ ]} ]  \n' >top.json
	msg-split -r -j '' top.json >out.msg
	[ "$(bodies out.msg)" = '1
"x,y"
{"a" : [ ]}' ]
}

@test "split json: pointers take ~0 and ~1 escapes and array indexes" {
	printf '{"a/b": {"m~n": [1, 2]}, "l": [[3], [4, 5]]}' >esc.json
	msg-split -r -j '/a~1b/m~0n' esc.json >out.msg
	[ "$(bodies out.msg)" = '1
2' ]
	msg-split -r -j '/l/1' esc.json >out.msg
	[ "$(bodies out.msg)" = '4
5' ]
}

@test "split json: -j streams, so Sequence-Size is on the last child" {
	msg-split -r -j /orders "$SPLIT/orders.json" >out.msg
	[ "$(hcol out.msg Sequence-Size | tr '\n' ' ')" = '(absent) (absent) (absent) (absent) (absent) (absent) (absent) (absent) 9 ' ]
	[ "$(hcol out.msg Sequence-End | sort | uniq -c | tr -s ' ')" = ' 8 (absent)
 1 true' ]
	[ "$(hv out.msg 9 Sequence-End)" = true ]
}

@test "split json: -j on an empty array gives the marker" {
	msg-split -r -j /empty "$SPLIT/orders.json" >out.msg
	[ "$(count out.msg)" = 1 ]
	[ "$(hv out.msg 1 Sequence-Size)" = 0 ]
	[ "$(hv out.msg 1 Sequence-End)" = true ]
	[ "$(hv out.msg 1 Sequence-Number)" = '(absent)' ]
	[ "$(msg-unwrap out.msg | wc -c)" = 0 ]
}

@test "split json: UTF-8 inside elements is kept byte for byte" {
	printf '[{"k":"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80"},"\\ud83d\\ude00"]' >u.json
	msg-split -r -j '' u.json >out.msg
	printf '{"k":"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80"}' >want
	body out.msg 1 | cmp want -
	[ "$(body out.msg 2)" = '"\ud83d\ude00"' ]
}

# ---- -x through the mapping ----

@test "split json: -x selects through the mapping and writes JSON back" {
	msg-wrap "$SPLIT/orders.json" >in.msg
	msg-split -x "/map/array[@key='orders']/map[string[@key='type']='rush']" in.msg >out.msg
	[ "$(bodies out.msg)" = '{"id":1,"type":"rush","items":[{"sku":"A-1","qty":2},{"sku":"B-2"}]}' ]
	[ "$(hv out.msg 1 Content-Type)" = application/json ]
	msg-split -x "/map/array[@key='orders']/*" in.msg >out.msg
	[ "$(bodies out.msg)" = '{"id":1,"type":"rush","items":[{"sku":"A-1","qty":2},{"sku":"B-2"}]}
{"id":2,"type":"normal","note":"café \"q\" \\ /","price":1.50}
"plain string"
-0.5e3
true
false
null
[1,[2,3],[]]
{}' ]
	jq -c '.orders[]' "$SPLIT/orders.json" | diff -u - <(jq_lines out.msg)
}

@test "split json: -x matches of every kind of value" {
	msg-wrap "$SPLIT/orders.json" >in.msg
	msg-split -x "//string[@key='sku']" in.msg >out.msg
	[ "$(bodies out.msg)" = '"A-1"
"B-2"' ]
	msg-split -x "//number[@key='qty'] | //boolean | //null" in.msg >out.msg
	[ "$(bodies out.msg)" = '2
true
false
null' ]
	[ "$(hcol out.msg Content-Type | sort -u)" = application/json ]
	# Keys and text of the mapping are plain text.
	msg-split -x "//map[@key]/@key | //string[@key='sku']/text()" in.msg >out.msg
	[ "$(bodies out.msg)" = 'A-1
B-2
object' ]
	[ "$(hcol out.msg Content-Type | sort -u)" = text/plain ]
}

@test "split json: -x with a plain path reads a JSON body through the mapping" {
	msg-wrap "$SPLIT/orders.json" >in.msg
	run -0 --separate-stderr msg-split --output s.msg -x /map/array/map in.msg
	[ -z "$stderr" ]
	msg-split --no-stream -x /map/array/map in.msg >d.msg
	[ "$(bodies d.msg)" = '{"id":1,"type":"rush","items":[{"sku":"A-1","qty":2},{"sku":"B-2"}]}
{"id":2,"type":"normal","note":"café \"q\" \\ /","price":1.50}
{}' ]
	[ "$(bodies s.msg)" = "$(bodies d.msg)" ]
}

@test "split json: -x and -j agree on the same array" {
	msg-wrap "$BATS_FILE_TMPDIR/big.json" >in.msg
	msg-split -j /orders in.msg >j.msg
	msg-split -x "/map/array[@key='orders']/*" in.msg >x.msg
	[ "$(count x.msg)" = 20001 ]
	cmp <(jq_lines j.msg) <(jq_lines x.msg)
}

@test "split json: a JSON body without Content-Type is known by its first byte" {
	frame ' [{"a":1},{"a":2}]' 'Message-Id: J-1' >in.msg
	msg-split -x '/array/map[true()]' in.msg >out.msg
	[ "$(bodies out.msg)" = '{"a":1}
{"a":2}' ]
	[ "$(hv out.msg 1 Content-Type)" = application/json ]
	msg-split -j '' in.msg >out.msg
	[ "$(bodies out.msg)" = '{"a":1}
{"a":2}' ]
	[ "$(hv out.msg 1 Content-Type)" = application/json ]
}

@test "split json: an untyped JSON body with a plain path is read through the mapping" {
	frame ' [{"a":1},{"a":2}]' 'Message-Id: J-1' >in.msg
	run -0 --separate-stderr msg-split --output out.msg -x /array/map in.msg
	[ -z "$stderr" ]
	[ "$(bodies out.msg)" = '{"a":1}
{"a":2}' ]
}

# ---- groups ----

@test "split json: -g makes arrays of the elements" {
	msg-split -r -g 4 -j /orders "$SPLIT/orders.json" >out.msg
	[ "$(count out.msg)" = 3 ]
	[ "$(bodies out.msg)" = '[{"id": 1, "type": "rush", "items": [ {"sku": "A-1", "qty": 2}, {"sku": "B-2"} ]},{"id": 2, "type": "normal", "note": "caf\u00e9 \"q\" \\ /", "price": 1.50},"plain string",-0.5e3]
[true,false,null,[1, [2, 3] ,[]]]
[{}]' ]
	[ "$(hcol out.msg Sequence-Number | tr '\n' ' ')" = '1 2 3 ' ]
	[ "$(hv out.msg 3 Sequence-Size)" = 3 ]
	[ "$(hcol out.msg Content-Type | sort -u)" = application/json ]
	# Together the groups hold every element, in order.
	jq -c '.orders' "$SPLIT/orders.json" >want
	msg-unwrap -e out.msg | jq -r .body | jq -c -s 'add' >got
	cmp want got
}

@test "split json: -g with -x makes arrays too" {
	msg-wrap "$SPLIT/orders.json" >in.msg
	msg-split -g 2 -x "//string[@key='sku'] | //number[@key='qty']" in.msg >out.msg
	[ "$(bodies out.msg)" = '["A-1",2]
["B-2"]' ]
	[ "$(hcol out.msg Sequence-Size | tr '\n' ' ')" = '2 2 ' ]
}

@test "split json: -g on a large array keeps every element" {
	msg-split -r -g 1000 -j /orders "$BATS_FILE_TMPDIR/big.json" >out.msg
	[ "$(count out.msg)" = 21 ]
	msg-unwrap -e out.msg | jq -r .body | jq -c '.[]' >got
	jq -c '.orders[]' "$BATS_FILE_TMPDIR/big.json" | cmp - got
	[ "$(body out.msg 21 | jq length)" = 1 ]
}

# ---- the nesting limit ----

# nested N: N arrays, one inside the other.
nested() {
	printf '%*s' "$1" '' | tr ' ' '['
	printf '%*s' "$1" '' | tr ' ' ']'
}

@test "split json: -j refuses nesting deeper than 512 levels, at any depth" {
	nested 512 | msg-wrap -t application/json -H 'Message-Id: D512' >in.msg
	msg-split -j '' in.msg >out.msg
	[ "$(count out.msg)" = 1 ]
	[ "$(body out.msg 1)" = "$(nested 511)" ]
	for n in 513 1000000; do
		nested $n | msg-wrap -t application/json -H "Message-Id: D$n" >in.msg
		run -65 --separate-stderr msg-split -j '' in.msg
		[ "$stderr" = "msg-split: in.msg: message 1 (Message-Id D$n): body is not a JSON document with an array at '': offset 512: nesting deeper than 512" ]
		[ -z "$output" ]
	done
}
