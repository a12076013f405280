#!/usr/bin/env bats
# msg-split: usage errors, zero matches in each --empty mode, invalid
# bodies (stop with exit 65, or divert whole to --invalid and go on),
# hostile XML (billion laughs, XXE), and failing inputs and outputs.

load test_helper
bats_require_minimum_version 1.5.0
load fixtures/split/split
load crash/build

# usage_error MESSAGE ARGS...: msg-split ARGS exits 64 with MESSAGE and
# the usage text on stderr, and writes nothing.
usage_error() {
	local want=$1
	shift
	run -64 --separate-stderr msg-split "$@" </dev/null
	[ -z "$output" ]
	[ "${stderr_lines[0]}" = "msg-split: $want" ]
	[[ ${stderr_lines[1]} == "usage: msg-split "* ]]
}

# plain_error MESSAGE ARGS...: msg-split ARGS exits 64 with MESSAGE as
# its only line on stderr.
plain_error() {
	local want=$1
	shift
	run -64 --separate-stderr msg-split "$@" </dev/null
	[ -z "$output" ]
	[ "$stderr" = "msg-split: $want" ]
}

# orders_with_error N: a document of N orders whose end is malformed.
orders_with_error() {
	perl -e 'print "<orders>"; print qq{<order id="$_"/>} for 1 .. $ARGV[0]; print "<order>oops</orders>"' "$1"
}

# ---- usage ----

# warned FILE: the warning lines msg-split writes for the messages it
# diverted to FILE, built from their headers, in order.
warned() {
	msg-unwrap -e "$1" | jq -r --arg ch "$1" '.headers |
		"msg-split: warning: message \(.["Message-Id"]): "
		+ (if .["File-Name"] then "File-Name \(.["File-Name"]): " else "" end)
		+ (.Error | sub("^msg-split: "; "")) + ": diverted to '"'"'\($ch)'"'"'"'
}

@test "errors: a mode is required" {
	usage_error 'one of -x, -j, -l or -d is required'
	usage_error 'one of -x, -j, -l or -d is required' -g 2 -r
}

@test "errors: modes cannot be combined" {
	usage_error '-x, -j, -l and -d cannot be combined' -x /a -j /b
	usage_error '-x, -j, -l and -d cannot be combined' -l -d ,
	usage_error '-x, -j, -l and -d cannot be combined' -x /a -l
	usage_error '-x, -j, -l and -d cannot be combined' -x /a -x /b
}

@test "errors: a split expression must select nodes" {
	plain_error "expression 'count(/a)' does not select nodes" -x 'count(/a)'
	plain_error "expression 'header(\"A\")' does not select nodes" -x 'header("A")'
}

@test "errors: an invalid XPath names the expression and the position" {
	plain_error "invalid expression '/a[': Invalid expression at position 3" -x '/a['
	plain_error "invalid expression '//b[@c=]': Invalid expression at position 7" -x '//b[@c=]'
	plain_error "invalid expression '': Invalid expression at position 0" -x ''
	plain_error "invalid expression '1 +': Invalid expression at position 3" -x '1 +'
	plain_error "invalid expression '/a[': Invalid expression at position 3" -x /b -H 'X=/a['
}

@test "errors: an unknown function is found before any message is read" {
	plain_error "unknown function 'foo' in expression 'foo(1)'" -x 'foo(1)'
	# Even in a predicate that no node would ever reach.
	plain_error "unknown function 'foo' in expression '/none[foo()]'" -x '/none[foo()]'
	plain_error "unknown function 'bar' in expression 'bar()'" -x /a -H 'X=bar()'
	plain_error "unknown function 'p:f' in expression 'p:f()'" -x /a -H 'X=p:f()'
}

@test "errors: a bad group size is a usage error" {
	local g
	for g in 0 x -1 '' 1x; do
		usage_error "invalid group size '$g'" -l -g "$g"
	done
}

@test "errors: a bad --empty is a usage error" {
	usage_error "--empty takes drop, marker or invalid, not 'maybe'" -l --empty maybe
	usage_error "--empty takes drop, marker or invalid, not ''" -l --empty ''
}

@test "errors: a bad --header is a usage error" {
	local h
	for h in X =x 'X=' 'a b=1' 'X:=1'; do
		usage_error "invalid header '$h' (want NAME=EXPR)" -l -H "$h"
	done
}

@test "errors: a bad --ns is a usage error" {
	usage_error "--ns wants PREFIX=URI, not 'foo'" -x /a --ns foo
	usage_error "--ns wants PREFIX=URI, not '=u'" -x /a --ns =u
	plain_error "invalid namespace 'p=' (want PREFIX=URI)" -x /a --ns p=
}

@test "errors: a JSON pointer must be empty or start with /" {
	plain_error "invalid JSON pointer 'orders' (it must be empty or start with '/')" -j orders
}

@test "errors: unknown options and missing values are usage errors" {
	usage_error "unknown option '-q'" -q
	usage_error "unknown option '--nope'" -l --nope
	usage_error "option '-x' needs a value" -x
	usage_error "option '--empty' needs a value" -l --empty
}

# ---- zero matches ----

@test "errors: --empty marker (the default) ends an empty sequence with an empty message" {
	frame '<orders><order/></orders>' 'Message-Id: P' 'Timestamp: 2026-01-01T00:00:00.000Z' \
		'Content-Type: application/xml' 'X-Keep: yes' >in.msg
	local mode
	for mode in '' --no-stream '--empty marker'; do
		# shellcheck disable=SC2086 # $mode is none, one or two words
		msg-split $mode -x /orders/none in.msg >out.msg
		masked out.msg >got
		printf '%s\n' 'Message-Id: X' 'Timestamp: X' 'Content-Type: application/xml' \
			'X-Keep: yes' 'Correlation-Id: P' 'Sequence-Size: 0' 'Sequence-End: true' \
			'Content-Length: 0' '' | diff -u - got
		[ "$(msg-unwrap out.msg | wc -c)" = 0 ]
	done
}

@test "errors: every mode gives the marker for nothing to split" {
	printf '{"a": []}' | msg-split -r -j /a >j.msg
	msg-split -r -l </dev/null >l.msg
	msg-split -r -d , </dev/null >d.msg
	printf '<a/>' | msg-split -r -x '//b[1]' >x.msg
	local f
	for f in j l d x; do
		[ "$(count $f.msg)" = 1 ]
		[ "$(hv $f.msg 1 Sequence-Size)" = 0 ]
		[ "$(hv $f.msg 1 Sequence-End)" = true ]
		[ "$(hv $f.msg 1 Sequence-Number)" = '(absent)' ]
		[ "$(msg-unwrap $f.msg | wc -c)" = 0 ]
	done
}

@test "errors: an empty raw file is no document: invalid at the split with -x and -j, named" {
	: >empty.xml
	run -65 --separate-stderr msg-split -r -x //order empty.xml
	[[ $stderr == "msg-split: empty.xml (Message-Id "*"): the file is empty: not an XML or JSON document" ]]
	[ -z "$output" ]
	run -65 --separate-stderr msg-split -r -j /orders --empty drop empty.xml
	[[ $stderr == "msg-split: empty.xml (Message-Id "*"): the file is empty: not a JSON document" ]]
	# Diverted whole, and the run goes on.
	printf '<o><order/></o>' >one.xml
	run -0 --separate-stderr msg-split -r -x //order --invalid bad.msg --output out.msg empty.xml one.xml
	[ "$(count out.msg)" = 1 ]
	[ "$(hv bad.msg 1 Error)" = 'msg-split: the file is empty: not an XML or JSON document' ]
	[ "$(hv bad.msg 1 File-Name)" = empty.xml ]
	# From a dir: spool, it is set aside.
	mkdir -p in/new
	: >in/new/empty.xml
	run -65 --separate-stderr msg-split -r --once -x //order dir:in
	[ "$(ls in/bad)" = empty.xml ]
	# Lines and pieces of an empty file are none: the --empty case.
	run -0 --separate-stderr msg-split -r -l --output l.msg empty.xml
	[ "$(hv l.msg 1 Sequence-Size)" = 0 ]
}

@test "errors: --empty drop writes nothing for an empty parent and goes on" {
	{ msg-wrap "$SPLIT/nested.xml"; msg-wrap "$SPLIT/orders.xml"; } >in.msg
	local mode
	for mode in '' --no-stream; do
		rm -f out.msg
		run -0 --separate-stderr msg-split --output out.msg $mode --empty drop --stats -x //item in.msg
		[ "$(count out.msg)" = 4 ]
		[ "$(hcol out.msg Correlation-Id | sort -u)" = "$(hv in.msg 2 Message-Id)" ]
		[ "$stderr" = 'msg-split: stats: in 2, out 4, invalid 0, empty 1, expired 0' ]
	done
	printf '{"a": []}' | msg-split -r -j /a --empty drop >out.msg
	[ ! -s out.msg ]
}

@test "errors: --empty invalid stops at an empty parent with exit 65" {
	{ msg-wrap "$SPLIT/orders.xml"; msg-wrap "$SPLIT/nested.xml"; msg-wrap "$SPLIT/orders.xml"; } >in.msg
	local mode id
	id=$(hv in.msg 2 Message-Id)
	for mode in '' --no-stream; do
		rm -f out.msg
		run -65 --separate-stderr msg-split --output out.msg $mode --empty invalid -x //item in.msg
		[ "$stderr" = "msg-split: in.msg: message 2 (Message-Id $id): nothing to split: no items found" ]
		# What the first message gave is out; nothing after.
		[ "$(count out.msg)" = 4 ]
		[ "$(hv out.msg 4 Sequence-End)" = true ]
	done
}

@test "errors: --empty invalid with --invalid diverts the parent and goes on" {
	{ msg-wrap "$SPLIT/orders.xml"; msg-wrap "$SPLIT/nested.xml"; msg-wrap "$SPLIT/orders.xml"; } >in.msg
	local mode
	for mode in '' --no-stream; do
		rm -f bad.msg
		rm -f out.msg
		run -0 --separate-stderr msg-split --output out.msg $mode --empty invalid --invalid bad.msg -x //item in.msg
		[ "$stderr" = "msg-split: warning: message $(hv in.msg 2 Message-Id): File-Name nested.xml: nothing to split: no items found: diverted to 'bad.msg'" ]
		[ "$(count out.msg)" = 8 ]
		[ "$(count bad.msg)" = 1 ]
		msg-unwrap bad.msg | cmp - "$SPLIT/nested.xml"
		[ "$(hv bad.msg 1 Error)" = 'msg-split: nothing to split: no items found' ]
		# The parent's own headers, with Error added.
		diff -u <(msg-unwrap -e in.msg | sed -n 2p | jq -c .headers) \
			<(msg-unwrap -e bad.msg | jq -c '.headers | del(.Error)')
	done
}

# ---- invalid bodies ----

@test "errors: malformed XML stops the run after the earlier messages' children" {
	{ frame '<a><b>1</b><b>2</b></a>' 'Message-Id: G'; frame '<a><b>1</b><b>2</b></a' 'Message-Id: B';
	  frame '<a><b>3</b></a>' 'Message-Id: G2'; } >in.msg
	local mode
	for mode in '' --no-stream; do
		rm -f out.msg
		run -65 --separate-stderr msg-split --output out.msg $mode -x /a/b in.msg
		[ "$stderr" = "msg-split: in.msg: message 2 (Message-Id B): body is not XML: line 1: truncated: the document ends inside element 'a'" ]
		[ "$(bodies out.msg)" = '<b>1</b>
<b>2</b>' ]
		[ "$(hcol out.msg Correlation-Id | sort -u)" = G ]
	done
}

@test "errors: a truncated body is reported as truncated, streamed or not" {
	# The typical half-uploaded file.
	printf '<orders><order id="3">' >half.xml
	local mode
	for mode in '' --no-stream; do
		run -65 --separate-stderr msg-split $mode -r -x //order half.xml
		[[ $stderr == "msg-split: half.xml (Message-Id "*"): body is not XML: line 1: truncated: the document ends inside element 'order'" ]]
		[ -z "$output" ]
	done
}

@test "errors: a document cut at any byte is truncated, streamed or not" {
	local doc='<?xml version="1.0"?>
<o a="1"><!--c--><x><![CDATA[y]]>t&amp;</x><?p q?><y b='"'2'"'/></o>'
	local cut mode
	# (bats' run uses i for itself)
	for ((cut = 1; cut < ${#doc}; cut++)); do
		printf '%s' "${doc:0:cut}" >cut.xml
		for mode in '' --no-stream; do
			run -65 --separate-stderr msg-split $mode -r -x //x cut.xml
			[[ $stderr == *": body is not XML: line "[12]": truncated: the document ends "* ]] || {
				echo "cut at $cut$mode: $stderr"
				return 1
			}
		done
	done
}

@test "errors: a body that is not XML at all is invalid" {
	frame 'hello' 'Message-Id: T' 'Content-Type: application/xml' >in.msg
	run -65 --separate-stderr msg-split --no-stream -x /a/b in.msg
	[ "$stderr" = "msg-split: in.msg: message 1 (Message-Id T): body is not XML: line 1: Start tag expected, '<' not found" ]
	[ -z "$output" ]
	run -65 --separate-stderr msg-split -x /a/b in.msg
	[[ $stderr == "msg-split: in.msg: message 1 (Message-Id T): body is not XML: "* ]]
	[ -z "$output" ]
}

@test "errors: malformed XML met while streaming says how many children went out" {
	orders_with_error 3000 | msg-wrap -H 'Message-Id: BIG' >in.msg
	run -65 --separate-stderr msg-split --output out.msg -x /orders/order in.msg
	local n
	n=$(count out.msg)
	[ "$n" -gt 0 ]
	[ "$n" -le 3000 ]
	[ "$stderr" = "msg-split: in.msg: message 1 (Message-Id BIG): body is not XML: line 1: Opening and ending tag mismatch: order line 1 and orders; $n children written before the error" ]
	# Those children are in order and none of them ends the sequence.
	[ "$(hv out.msg "$n" Sequence-Number)" = "$n" ]
	[ "$(hcol out.msg Sequence-End | sort -u)" = '(absent)' ]
	[ "$(hcol out.msg Sequence-Size | sort -u)" = '(absent)' ]
	# The DOM finds the error before it writes anything.
	run -65 --separate-stderr msg-split --no-stream -x /orders/order in.msg
	[ -z "$output" ]
	[ "$stderr" = "msg-split: in.msg: message 1 (Message-Id BIG): body is not XML: line 1: Opening and ending tag mismatch: order line 1 and orders" ]
}

@test "errors: malformed XML met while streaming goes whole to --invalid" {
	orders_with_error 3000 >bad.xml
	{ msg-wrap "$SPLIT/orders.xml"; msg-wrap bad.xml; msg-wrap "$SPLIT/orders.xml"; } >in.msg
	run -0 --separate-stderr msg-split --output out.msg --invalid inv.msg -x /orders/order in.msg
	[ "$stderr" = "$(warned inv.msg)" ]
	[ "${#stderr_lines[@]}" = 1 ]
	[ "$(count inv.msg)" = 1 ]
	msg-unwrap inv.msg | cmp - bad.xml
	local n
	n=$(hcol out.msg Correlation-Id | grep -c -x "$(hv in.msg 2 Message-Id)")
	[ "$(hv inv.msg 1 Error)" = "msg-split: body is not XML: line 1: Opening and ending tag mismatch: order line 1 and orders; $n children written before the error" ]
	[ "$(hv inv.msg 1 Message-Id)" = "$(hv in.msg 2 Message-Id)" ]
	[ "$(hv inv.msg 1 File-Name)" = bad.xml ]
	# The third message is split in full after it.
	[ "$(count out.msg)" = $((4 + n + 4)) ]
	[ "$(hv out.msg $((4 + n + 4)) Sequence-End)" = true ]
	[ "$(hv out.msg $((4 + n + 4)) Correlation-Id)" = "$(hv in.msg 3 Message-Id)" ]
}

@test "errors: malformed JSON in -j says how many elements went out" {
	frame '{"a":[1,2,' 'Message-Id: J1' 'Content-Type: application/json' >in.msg
	run -65 --separate-stderr msg-split --output out.msg -j /a in.msg
	[ "$stderr" = "msg-split: in.msg: message 1 (Message-Id J1): body is not a JSON document with an array at '/a': offset 10: unexpected end of input; 1 children written before the error" ]
	[ "$(bodies out.msg)" = 1 ]
	frame '{"a":[1,2,3]} x' 'Message-Id: J2' >in.msg
	run -65 --separate-stderr msg-split -j /a in.msg
	[ "$stderr" = "msg-split: in.msg: message 1 (Message-Id J2): body is not a JSON document with an array at '/a': offset 14: unexpected 'x' after the JSON value; 2 children written before the error" ]
	frame '<a/>' 'Message-Id: J3' >in.msg
	run -65 --separate-stderr msg-split -j /a in.msg
	[ "$stderr" = "msg-split: in.msg: message 1 (Message-Id J3): body is not a JSON document with an array at '/a': offset 0: unexpected '<', value expected" ]
	[ -z "$output" ]
}

@test "errors: a JSON pointer to nothing or to something not an array is invalid" {
	local p want
	while IFS='|' read -r p want; do
		run -65 --separate-stderr msg-split -r -j "$p" "$SPLIT/orders.json"
		[ -z "$output" ]
		[[ $stderr == "msg-split: "*": body is not a JSON document with an array at '$p': $want" ]]
	done <<-'EOF'
	/nope|no value at '/nope'
	/object|offset 295: value at '/object' is an object, not an array
	/region|offset 11: value at '/region' is a string, not an array
	/orders/2|offset 197: value at '/orders/2' is a string, not an array
	/orders/99|no value at '/orders/99'
	|offset 0: value at '' is an object, not an array
	EOF
}

@test "errors: malformed JSON under -x is invalid" {
	frame '{"a":[1,2' 'Message-Id: J' 'Content-Type: application/json' >in.msg
	run -65 --separate-stderr msg-split -x '/map/array/number[1]' in.msg
	[ "$stderr" = "msg-split: in.msg: message 1 (Message-Id J): body is not JSON: offset 9: unexpected end of input" ]
	[ -z "$output" ]
}

@test "errors: invalid JSON goes whole to --invalid and the run goes on" {
	printf '{"a":[1,2,{"b":' >bad.json
	{ frame '{"a":[7]}' 'Message-Id: OK1'; msg-wrap -H 'Message-Id: BAD' bad.json;
	  frame '{"b":1}' 'Message-Id: NOARRAY'; frame '{"a":{"x":[1]}}' 'Message-Id: OBJECT'
	  frame '{"a":[8,9]}' 'Message-Id: OK2'; } >in.msg
	run -0 --separate-stderr msg-split --output out.msg --invalid inv.msg -j /a in.msg
	[ "$stderr" = "$(warned inv.msg)" ]
	[ "${stderr_lines[0]}" = "msg-split: warning: message BAD: File-Name bad.json: body is not a JSON document with an array at '/a': offset 15: unexpected end of input; 1 children written before the error: diverted to 'inv.msg'" ]
	[ "$(bodies out.msg)" = '7
1
8
9' ]
	[ "$(hcol out.msg Correlation-Id | tr '\n' ' ')" = 'OK1 BAD OK2 OK2 ' ]
	[ "$(hcol inv.msg Message-Id | tr '\n' ' ')" = 'BAD NOARRAY OBJECT ' ]
	[ "$(hv inv.msg 1 Error)" = "msg-split: body is not a JSON document with an array at '/a': offset 15: unexpected end of input; 1 children written before the error" ]
	[ "$(hv inv.msg 2 Error)" = "msg-split: body is not a JSON document with an array at '/a': no value at '/a'" ]
	body inv.msg 1 | cmp - bad.json
	[ "$(body inv.msg 2)" = '{"b":1}' ]
	[ "$(hv inv.msg 3 Error)" = "msg-split: body is not a JSON document with an array at '/a': offset 5: value at '/a' is an object, not an array" ]
	[ "$(body inv.msg 3)" = '{"a":{"x":[1]}}' ]
}

@test "errors: --invalid keeps a DOM parent byte for byte and goes on" {
	printf '<a><b>1</b>\r\n<b>\0</b></a>' >bad.xml
	{ msg-wrap bad.xml; msg-wrap "$SPLIT/orders.xml"; } >in.msg
	run -0 --separate-stderr msg-split --output out.msg --no-stream --invalid inv.msg -x '/a/b[1]' in.msg
	[ "$stderr" = "$(warned inv.msg)" ]
	[ "${#stderr_lines[@]}" = 1 ]
	msg-unwrap inv.msg | cmp - bad.xml
	[[ $(hv inv.msg 1 Error) == 'msg-split: body is not XML: '* ]]
	[ "$(hcol out.msg Sequence-Size)" = 0 ]
}

@test "errors: MSG_INVALID names the invalid channel" {
	frame '<a' 'Message-Id: B' >in.msg
	MSG_INVALID=inv.msg run -0 --separate-stderr msg-split -x /a in.msg
	[ "$stderr" = "$(warned inv.msg)" ]
	[[ $stderr == "msg-split: warning: message B: body is not XML: "* ]]
	[ "$(hv inv.msg 1 Message-Id)" = B ]
}

@test "errors: an expression that fails on a message makes it invalid" {
	frame '<a><b/></a>' 'Message-Id: G' >in.msg
	# A type error shows only when the expression is evaluated.
	run -65 --separate-stderr msg-split -x /a/b -H "X=count('a')" in.msg
	[ "$stderr" = "msg-split: in.msg: message 1 (Message-Id G): cannot evaluate 'count('a')': Invalid type at position 0" ]
	[ -z "$output" ]
}

@test "errors: an undeclared prefix makes the message invalid in both modes" {
	local mode
	for mode in '' --no-stream; do
		run -65 --separate-stderr msg-split -r $mode -x //z:order "$SPLIT/orders.xml"
		[ -z "$output" ]
		[[ $stderr == "msg-split: "*"'//z:order'"* ]]
	done
}

# ---- hostile XML ----

@test "errors: a billion-laughs document is rejected, not expanded" {
	local mode
	msg-wrap -H 'Message-Id: LOL' "$SPLIT/billion-laughs.xml" >in.msg
	for mode in '' --no-stream; do
		run -65 --separate-stderr msg-split $mode -x /orders/order in.msg
		[[ $stderr == "msg-split: in.msg: message 1 (Message-Id LOL): body is not XML: "* ]]
		[[ $stderr == *entit* ]]
		[ "${#output}" -lt 1000 ]
		rm -f inv.msg
		run -0 --separate-stderr msg-split $mode --invalid inv.msg -x /orders/order in.msg
		[ "${#output}" -lt 1000 ]
		msg-unwrap inv.msg | cmp - "$SPLIT/billion-laughs.xml"
		[[ $(hv inv.msg 1 Error) == 'msg-split: body is not XML: '* ]]
	done
}

@test "errors: external entities are refused, never read" {
	echo TOPSECRET >secret.txt
	printf '<!ENTITY s "TOPSECRET">' >ext.dtd
	cat >general.xml <<-EOF
	<?xml version="1.0"?>
	<!DOCTYPE orders [ <!ENTITY s SYSTEM "file://$PWD/secret.txt"> ]>
	<orders><order>&s;</order></orders>
	EOF
	cat >parameter.xml <<-EOF
	<?xml version="1.0"?>
	<!DOCTYPE orders [ <!ENTITY % p SYSTEM "file://$PWD/ext.dtd"> %p; ]>
	<orders><order>&s;</order></orders>
	EOF
	cat >dtd.xml <<-EOF
	<?xml version="1.0"?>
	<!DOCTYPE orders SYSTEM "file://$PWD/ext.dtd">
	<orders><order>&s;</order></orders>
	EOF
	local f mode
	for f in general parameter dtd; do
		for mode in '' --no-stream; do
			rm -f inv.msg
			run -65 --separate-stderr msg-split -r $mode -x /orders/order -H 'V=string(.)' $f.xml
			[[ $stderr == "msg-split: "*": body is not XML: "* ]]
			[[ $stderr != *TOPSECRET* ]]
			[[ $output != *TOPSECRET* ]]
			msg-split -r $mode --invalid inv.msg -x /orders/order -H 'V=string(.)' $f.xml >out.msg
			run -1 grep -q TOPSECRET out.msg inv.msg
			msg-unwrap inv.msg | cmp - $f.xml
		done
	done
	run -65 --separate-stderr msg-split -r -x /orders/order general.xml
	[[ $stderr == *": body is not XML: external entity 'file://$PWD/secret.txt' refused" ]]
}

# ---- inputs and outputs ----

@test "errors: an input that cannot be opened exits 66" {
	run -66 --separate-stderr msg-split -x /a nonexistent.msg
	[ "$stderr" = "msg-split: cannot open 'nonexistent.msg': No such file or directory" ]
	run -66 --separate-stderr msg-split -r -x /a nonexistent.xml
	[ "$stderr" = "msg-split: cannot open 'nonexistent.xml': No such file or directory" ]
}

@test "errors: raw XML without -r gets the msg-wrap hint" {
	run -65 --separate-stderr msg-split -x /orders/order "$SPLIT/orders.xml"
	[ -z "$output" ]
	[[ $stderr == *"; not a message stream; wrap raw data with msg-wrap" ]]
}

@test "errors: an invalid raw file is named in the diagnostic" {
	printf '<orders><order/>' >broken.xml
	run -65 --separate-stderr msg-split --output out.msg -r -x /orders/order "$SPLIT/orders.xml" broken.xml
	[[ $stderr == "msg-split: "*"broken.xml"*": body is not XML: "* ]]
	[ "$(count out.msg)" = 4 ]
}

@test "errors: a full disk on stdout or --invalid exits 74" {
	run -74 --separate-stderr sh -c 'msg-split -r -x /orders/order "$1" >/dev/full' sh "$SPLIT/orders.xml"
	[ "$stderr" = "msg-split: cannot write 'stdout': No space left on device" ]
	run -74 --separate-stderr msg-split -r -x /orders/order --output /dev/full "$SPLIT/orders.xml"
	[ "$stderr" = "msg-split: cannot write '/dev/full': No space left on device" ]
	frame '<a' 'Message-Id: B' >in.msg
	run -74 --separate-stderr msg-split --invalid /dev/full -x /a in.msg
	# Written to the buffer, the message fails only when it is flushed.
	[[ ${stderr_lines[0]} == "msg-split: warning: message B: body is not XML: "*": diverted to '/dev/full'" ]]
	[ "${stderr_lines[1]}" = "msg-split: cannot write '/dev/full': No space left on device" ]
	# A streamed parent, spooled for --invalid, fails the same way.
	orders_with_error 3000 >bad.xml
	run -74 --separate-stderr msg-split -r --invalid /dev/full -x /orders/order bad.xml
	[[ ${stderr_lines[0]} == "msg-split: warning: message "*": File-Name bad.xml: body is not XML: "*": diverted to '/dev/full'" ]]
	[ "${stderr_lines[1]}" = "msg-split: cannot write '/dev/full': No space left on device" ]
}

# spool_fails STATUS MESSAGE FAULT...: msg-split -r --invalid of a
# streamed parent that is not XML, with its temporary copy in ./tmp and
# the FAULT_ settings given, exits STATUS with MESSAGE alone on stderr and
# diverts nothing.
spool_fails() {
	local status=$1 want=$2
	shift 2
	orders_with_error 3000 >bad.xml
	mkdir -p tmp
	cc_preload "$BATS_FILE_TMPDIR/faultinject.so" "$MSG_TOP/tests/faults/faultinject.c"
	run "-$status" --separate-stderr faulty FAULT_PATH="$PWD/tmp/*" "$@" -- \
		env TMPDIR="$PWD/tmp" msg-split -r --output out.msg --invalid inv.msg \
		-x /orders/order bad.xml
	[ "$stderr" = "msg-split: $want" ]
	[ ! -s inv.msg ]
}

@test "errors: a streamed parent that cannot be kept for --invalid ends the tool: 73 without a temporary file, 74 when it cannot be written or read back" {
	orders_with_error 3000 >bad.xml
	run -73 --separate-stderr env TMPDIR="$PWD/none" msg-split -r --invalid inv.msg -x /orders/order bad.xml
	[ -z "$output" ]
	[ "$stderr" = "msg-split: cannot create a temporary file: No such file or directory" ]
	[ ! -s inv.msg ]
	spool_fails 74 "cannot spool the invalid message: Input/output error" FAULT_FUNCS=write
	[ "$(cut -d' ' -f1 faults.log)" = write ]
	rm faults.log
	spool_fails 74 "cannot read back the spooled message: No space left on device" \
		FAULT_FUNCS=pread FAULT_ERRNO=ENOSPC
	[ "$(cut -d' ' -f1 faults.log)" = pread ]
}

@test "errors: --stats counts parents, children, invalid and empty ones" {
	{ msg-wrap "$SPLIT/orders.xml"; frame '<a' 'Message-Id: B'; msg-wrap "$SPLIT/nested.xml"; } >in.msg
	run -0 --separate-stderr msg-split --stats --invalid inv.msg -x //item in.msg
	[ "$stderr" = "$(warned inv.msg)
msg-split: stats: in 3, out 5, invalid 1, empty 1, expired 0" ]
}

# ---- the machine's faults ----

@test "errors: out of memory parsing a parent is exit 70 and the parent stays for a retry" {
	skip_without_memory_limits
	spool_of_big_xml
	# A tree for //b[1]; streaming for /a, whose one item is the whole body.
	runs_out_of_memory msg-split -x '//b[1]'
	runs_out_of_memory msg-split -x '//b[1]' --invalid inv.msg
	runs_out_of_memory msg-split -x /a --invalid inv.msg
	run -0 --separate-stderr msg-split --once -x /a --output out.msg dir:sp
	msg-unwrap out.msg | cmp - big.xml
	[ -z "$(find sp -type f)" ]
}
