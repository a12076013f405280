#!/usr/bin/env bats
# msg-split: the headers of the children. Correlation-Id, Sequence-Number,
# Sequence-Size, Sequence-End, Sequence-Stack on nested splits, Content-Type
# per kind of child, the parent's other headers, --header NAME=EXPR with the
# item as context node, and the File-Name of raw input.

load test_helper
bats_require_minimum_version 1.5.0
load fixtures/split/split

UUID7='^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$'
RFC3339_MS='^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z$'

# parent FILE: a message holding FILE, with headers of every kind.
parent() {
	frame "$(cat "$1")" 'Message-Id: P-1' 'Timestamp: 2026-01-01T00:00:00.000Z' \
		'Content-Type: text/xml; charset=utf-8' 'Reply-To: fd:3' \
		'X-Custom:   kept  as is  ' 'Correlation-Id: OLD' 'Sequence-Size: 9' \
		'Sequence-End: true' 'Expires: 2999-01-01T00:00:00.000Z'
}

# ---- the sequence ----

@test "headers: children carry the parent's headers and their place in the sequence" {
	printf '<r><i>1</i><i>2</i></r>' >r.xml
	parent r.xml >in.msg
	msg-split -x /r/i in.msg >out.msg
	masked out.msg >got
	cat >want <<-'EOF'
	Message-Id: X
	Timestamp: X
	Content-Type: application/xml
	Reply-To: fd:3
	X-Custom: kept  as is
	Correlation-Id: P-1
	Expires: 2999-01-01T00:00:00.000Z
	Sequence-Number: 1
	Content-Length: 8

	Message-Id: X
	Timestamp: X
	Content-Type: application/xml
	Reply-To: fd:3
	X-Custom: kept  as is
	Correlation-Id: P-1
	Expires: 2999-01-01T00:00:00.000Z
	Sequence-Number: 2
	Sequence-Size: 2
	Sequence-End: true
	Content-Length: 8

	EOF
	diff -u want got
}

@test "headers: the DOM gives the same headers with Sequence-Size on every child" {
	printf '<r><i>1</i><i>2</i></r>' >r.xml
	parent r.xml >in.msg
	msg-split --no-stream -x /r/i in.msg >out.msg
	masked out.msg >got
	cat >want <<-'EOF'
	Message-Id: X
	Timestamp: X
	Content-Type: application/xml
	Reply-To: fd:3
	X-Custom: kept  as is
	Correlation-Id: P-1
	Expires: 2999-01-01T00:00:00.000Z
	Sequence-Number: 1
	Sequence-Size: 2
	Content-Length: 8

	Message-Id: X
	Timestamp: X
	Content-Type: application/xml
	Reply-To: fd:3
	X-Custom: kept  as is
	Correlation-Id: P-1
	Expires: 2999-01-01T00:00:00.000Z
	Sequence-Number: 2
	Sequence-Size: 2
	Sequence-End: true
	Content-Length: 8

	EOF
	diff -u want got
}

@test "headers: every child has a new Message-Id and Timestamp" {
	msg-wrap "$SPLIT/orders.xml" >in.msg
	msg-split -x //item in.msg >out.msg
	hcol out.msg Message-Id >ids
	[ "$(wc -l <ids)" = 4 ]
	[ "$(sort -u ids | wc -l)" = 4 ]
	run -1 grep -v -E "$UUID7" ids
	run -1 grep -F -x "$(hv in.msg 1 Message-Id)" ids
	hcol out.msg Timestamp >stamps
	run -1 grep -v -E "$RFC3339_MS" stamps
}

@test "headers: Correlation-Id is the parent's Message-Id, Sequence-Number restarts per parent" {
	{ msg-wrap "$SPLIT/orders.xml"; msg-wrap "$SPLIT/catalog.xml"; } >in.msg
	msg-split -x '//item' in.msg >out.msg
	[ "$(count out.msg)" = 10 ]
	[ "$(hcol out.msg Sequence-Number | tr '\n' ' ')" = '1 2 3 4 1 2 3 4 5 6 ' ]
	[ "$(hcol out.msg Correlation-Id | head -n 4 | sort -u)" = "$(hv in.msg 1 Message-Id)" ]
	[ "$(hcol out.msg Correlation-Id | tail -n 6 | sort -u)" = "$(hv in.msg 2 Message-Id)" ]
	[ "$(hcol out.msg Sequence-End | tr '\n' ' ')" = '(absent) (absent) (absent) true (absent) (absent) (absent) (absent) (absent) true ' ]
	[ "$(hcol out.msg Sequence-Size | tr '\n' ' ')" = '(absent) (absent) (absent) 4 (absent) (absent) (absent) (absent) (absent) 6 ' ]
}

@test "headers: a parent without Message-Id gets one for its children to point at" {
	{ frame '<r><i/><i/></r>'; frame '<r><i/></r>'; } >in.msg
	msg-split -x /r/i in.msg >out.msg
	hcol out.msg Correlation-Id >c
	[ "$(sed -n 1p c)" = "$(sed -n 2p c)" ]
	[ "$(sed -n 1p c)" != "$(sed -n 3p c)" ]
	run -1 grep -v -E "$UUID7" c
}

@test "headers: a single child has both Sequence-Size and Sequence-End" {
	local mode
	for mode in '' --no-stream; do
		msg-wrap "$SPLIT/orders.xml" | msg-split $mode -x '/orders/order/customer' -g 5 >out.msg
		[ "$(count out.msg)" = 1 ]
		[ "$(hv out.msg 1 Sequence-Number)" = 1 ]
		[ "$(hv out.msg 1 Sequence-Size)" = 1 ]
		[ "$(hv out.msg 1 Sequence-End)" = true ]
	done
}

@test "headers: Content-Type follows the kind of each child" {
	parent "$SPLIT/orders.xml" >in.msg
	msg-split -x '//order[1]/customer | //order[1]/item/@sku | //order[2]/customer/text()' in.msg >out.msg
	[ "$(hcol out.msg Content-Type | tr '\n' ' ')" = 'application/xml text/plain text/plain text/plain ' ]
	msg-split -l in.msg >out.msg
	[ "$(hcol out.msg Content-Type | sort -u)" = text/plain ]
	msg-split -d '<order' in.msg >out.msg
	[ "$(hcol out.msg Content-Type | sort -u)" = text/plain ]
	frame '{"a":[{"b":1},"s"]}' 'Content-Type: application/vnd.example+json' >j.msg
	msg-split -j /a j.msg >out.msg
	[ "$(hcol out.msg Content-Type | sort -u)" = application/json ]
	msg-split -x '//map/number | //array/string/text()' j.msg >out.msg
	[ "$(hcol out.msg Content-Type | tr '\n' ' ')" = 'application/json text/plain ' ]
}

# ---- nested splits ----

@test "headers: a two-level split pushes the outer place onto Sequence-Stack" {
	msg-wrap "$SPLIT/orders.xml" >in.msg
	msg-split -x /orders/order in.msg >l1.msg
	msg-split -x /order/item l1.msg >l2.msg
	local p o1 o2 o3 o4
	p=$(hv in.msg 1 Message-Id)
	o1=$(hv l1.msg 1 Message-Id) o2=$(hv l1.msg 2 Message-Id)
	o3=$(hv l1.msg 3 Message-Id) o4=$(hv l1.msg 4 Message-Id)
	[ "$(hcol l2.msg Correlation-Id | tr '\n' ' ')" = "$o1 $o1 $o2 $o3 $o4 " ]
	[ "$(hcol l2.msg Sequence-Number | tr '\n' ' ')" = '1 2 1 (absent) 1 ' ]
	# The outer size is only known on the outer sequence's last child.
	hcol l2.msg Sequence-Stack >got
	cat >want <<-EOF
	$p 1 -
	$p 1 -
	$p 2 -
	$p 3 -
	$p 4 4
	EOF
	diff -u want got
	# Order 3 has no items: its marker keeps the stack too.
	[ "$(hv l2.msg 4 Sequence-Size)" = 0 ]
	[ "$(hv l2.msg 4 Sequence-End)" = true ]
}

@test "headers: Sequence-Stack from a DOM split knows every outer size" {
	msg-wrap "$SPLIT/orders.xml" >in.msg
	msg-split --no-stream -x /orders/order in.msg | msg-split -x /order/item >l2.msg
	local p
	p=$(hv in.msg 1 Message-Id)
	[ "$(hcol l2.msg Sequence-Stack | tr '\n' '|')" = "$p 1 4|$p 1 4|$p 2 4|$p 3 4|$p 4 4|" ]
}

@test "headers: a three-level split stacks the entries innermost last" {
	frame "$(cat "$SPLIT/catalog.xml")" 'Message-Id: CAT' 'Content-Type: application/xml' >in.msg
	msg-split -x /catalog/dept in.msg >l1.msg
	msg-split -x //shelf l1.msg >l2.msg
	msg-split -x /shelf/item l2.msg >l3.msg
	local d1 d2 s1 s2 s3
	d1=$(hv l1.msg 1 Message-Id) d2=$(hv l1.msg 2 Message-Id)
	s1=$(hv l2.msg 1 Message-Id) s2=$(hv l2.msg 2 Message-Id) s3=$(hv l2.msg 3 Message-Id)
	[ "$(hcol l1.msg Sequence-Stack | sort -u)" = '(absent)' ]
	[ "$(hcol l2.msg Sequence-Stack | tr '\n' '|')" = 'CAT 1 -|CAT 1 -|CAT 2 2|' ]
	hcol l3.msg Sequence-Stack >got
	cat >want <<-EOF
	CAT 1 -, $d1 1 -
	CAT 1 -, $d1 1 -
	CAT 1 -, $d1 2 2
	CAT 2 2, $d2 1 1
	CAT 2 2, $d2 1 1
	CAT 2 2, $d2 1 1
	EOF
	diff -u want got
	[ "$(hcol l3.msg Correlation-Id | tr '\n' ' ')" = "$s1 $s1 $s2 $s3 $s3 $s3 " ]
	[ "$(bodies l3.msg)" = '<item>Dune</item>
<item>Emma</item>
<item>Ulysses</item>
<item>Kind of Blue</item>
<item>Abbey Road</item>
<item>Blue Train</item>' ]
}

@test "headers: Sequence-Root keeps each level's document element with its attributes, innermost last" {
	local mode
	frame '<o:orders xmlns:o="urn:o" batch="7"><o:order id="1" k="&lt;&amp;&quot;"><item/></o:order><o:order><item/></o:order></o:orders>' \
		'Message-Id: B' 'Content-Type: application/xml' >in.msg
	for mode in '' --no-stream; do
		msg-split $mode -x /o:orders/o:order in.msg >l1.msg
		msg-split $mode -x /o:order/item l1.msg >l2.msg
		[ "$(hcol l1.msg Sequence-Root | sort -u)" = '<o:orders xmlns:o="urn:o" batch="7">' ]
		# No '<' in a tag but its first; the second order is bare, but
		# a level above it is not.
		hcol l2.msg Sequence-Root >got
		cat >want <<-'EOF'
		<o:orders xmlns:o="urn:o" batch="7"><o:order xmlns:o="urn:o" id="1" k="&lt;&amp;&quot;">
		<o:orders xmlns:o="urn:o" batch="7"><o:order xmlns:o="urn:o">
		EOF
		diff -u want got
	done
	# A bare document element with none above needs none.
	frame '<a x="1"><b><c/></b></a>' 'Message-Id: A' >in.msg
	msg-split -x //b in.msg | msg-split -x /b/c >out.msg
	[ "$(hcol out.msg Sequence-Root)" = '<a x="1"><b>' ]
	frame '<a><b><c/></b></a>' 'Message-Id: A' >in.msg
	msg-split -x //b in.msg | msg-split -x /b/c >out.msg
	[ "$(hcol out.msg Sequence-Root)" = '(absent)' ]
	# The marker of an empty split carries it too.
	frame '<a x="1"></a>' 'Message-Id: A' >in.msg
	msg-split -x //b in.msg >out.msg
	[ "$(hv out.msg 1 Sequence-Size)" = 0 ]
	[ "$(hv out.msg 1 Sequence-Root)" = '<a x="1">' ]
}

@test "headers: a parent in a sequence without Correlation-Id stacks '-'" {
	frame '<a><b/></a>' 'Message-Id: C' 'Sequence-Number: 7' >in.msg
	msg-split -x //b in.msg >out.msg
	[ "$(hv out.msg 1 Sequence-Stack)" = '- 7 -' ]
	[ "$(hv out.msg 1 Sequence-Number)" = 1 ]
	[ "$(hv out.msg 1 Correlation-Id)" = C ]
	frame '<a><b/></a>' 'Message-Id: C' 'Correlation-Id: K' 'Sequence-Number: 2' \
		'Sequence-Size: 3' 'Sequence-Stack: A 1 1, B 5 -' >in.msg
	msg-split -x //b in.msg >out.msg
	[ "$(hv out.msg 1 Sequence-Stack)" = 'A 1 1, B 5 -, K 2 3' ]
}

@test "headers: the marker of an outer split passes a nested split" {
	msg-wrap "$SPLIT/orders.xml" | msg-split -x /orders/order/none >l1.msg
	[ "$(hv l1.msg 1 Sequence-Size)" = 0 ]
	run -0 --separate-stderr msg-split --output l2.msg -x //item l1.msg
	[ -z "$stderr" ]
	[ "$(count l2.msg)" = 1 ]
	[ "$(hv l2.msg 1 Sequence-Size)" = 0 ]
	[ "$(hv l2.msg 1 Sequence-End)" = true ]
	[ "$(msg-unwrap l2.msg | wc -c)" = 0 ]
}

# ---- --header ----

@test "headers: --header reads the item, its children and its ancestors while streaming" {
	local mode
	for mode in '' --no-stream; do
		msg-wrap "$SPLIT/orders.xml" |
			msg-split $mode -x /orders/order -H Region=../@region \
				-H 'Batch=/orders/@batch' -H Id=@id -H Customer=customer \
				-H 'Items=count(item)' -H 'Qty=sum(item/@qty)' \
				-H "Rush=@type = 'rush'" -H 'Name=name()' >out.msg
		[ "$(hcol out.msg Region | tr '\n' ' ')" = 'north north north north ' ]
		[ "$(hcol out.msg Batch | tr '\n' ' ')" = '7 7 7 7 ' ]
		[ "$(hcol out.msg Id | tr '\n' ' ')" = '1 2 3 4 ' ]
		[ "$(hcol out.msg Customer | tr '\n' '|')" = 'Ann|Bob & Co||Cé|' ]
		[ "$(hcol out.msg Items | tr '\n' ' ')" = '2 1 0 1 ' ]
		[ "$(hcol out.msg Qty | tr '\n' ' ')" = '3 5 0 1 ' ]
		[ "$(hcol out.msg Rush | tr '\n' ' ')" = 'true false true false ' ]
		[ "$(hcol out.msg Name | sort -u)" = order ]
	done
}

@test "headers: --header comes after the sequence headers it does not name" {
	msg-wrap "$SPLIT/orders.xml" | msg-split -x /orders/order -H Id=@id >out.msg
	msg-unwrap -H out.msg | sed -n '/^Sequence-Number: 4$/,$p' >got
	# The document element has attributes: Sequence-Root tells them.
	printf 'Sequence-Number: 4\nSequence-Root: <orders region="north" batch="7">\nId: 4\nSequence-Size: 4\nSequence-End: true\nContent-Length: %d\n\n' \
		"$(body out.msg 4 | wc -c)" | diff -u - got
}

@test "headers: --header on deeper matches reaches every ancestor" {
	local mode
	for mode in '' --no-stream; do
		msg-wrap "$SPLIT/orders.xml" |
			msg-split $mode -x //item -H 'Order=../@id' -H 'Region=../../@region' \
				-H 'Depth=count(ancestor::*)' -H 'Sku=@sku' >out.msg
		[ "$(hcol out.msg Order | tr '\n' ' ')" = '1 1 2 4 ' ]
		[ "$(hcol out.msg Region | tr '\n' ' ')" = 'north north north north ' ]
		[ "$(hcol out.msg Depth | tr '\n' ' ')" = '2 2 2 2 ' ]
		[ "$(hcol out.msg Sku | tr '\n' ' ')" = 'A-1 B-2 C-3 D-4 ' ]
	done
}

@test "headers: --header with a namespace prefix of the document" {
	local mode
	for mode in '' --no-stream; do
		msg-wrap "$SPLIT/ns-prefixed.xml" |
			msg-split $mode -x /o:orders/o:order -H 'Amount=p:amount' \
				-H 'Cur=p:amount/@currency' -H 'Item=o:item' >out.msg
		[ "$(hcol out.msg Amount | tr '\n' '|')" = '5.00|3.10||' ]
		[ "$(hcol out.msg Cur | tr '\n' '|')" = 'EUR|USD||' ]
		[ "$(hcol out.msg Item | tr '\n' '|')" = 'Apple|Pear||' ]
	done
}

@test "headers: header() inside --header reads the parent's headers" {
	{ msg-wrap -H 'A: one' "$SPLIT/orders.xml"; msg-wrap -H 'A: two' "$SPLIT/orders.xml"; } >in.msg
	msg-split --no-stream -x /orders/order -H 'X=header("A")' -H 'M=header("Missing")' in.msg >out.msg
	[ "$(hcol out.msg X | tr '\n' ' ')" = 'one one one one two two two two ' ]
	[ "$(hcol out.msg M | tr '\n' '|')" = '||||||||' ]
	printf 'a\nb\n' | msg-wrap -H 'A: lines' | msg-split -l -H 'X=header("A")' >out.msg
	[ "$(hcol out.msg X | tr '\n' ' ')" = 'lines lines ' ]
	printf 'a;b' | msg-wrap -H 'A: pieces' | msg-split -d ';' -H 'X=header("a")' >out.msg
	[ "$(hcol out.msg X | tr '\n' ' ')" = 'pieces pieces ' ]
	printf '[1,2]' | msg-wrap -H 'A: json' | msg-split -j '' -H 'X=header("A")' >out.msg
	[ "$(hcol out.msg X | tr '\n' ' ')" = 'json json ' ]
}

@test "headers: header() inside --header reads the parent's headers while streaming" {
	{ msg-wrap -H 'A: one' "$SPLIT/orders.xml"; msg-wrap -H 'A: two' "$SPLIT/orders.xml"; } >in.msg
	msg-split -x /orders/order -H 'X=header("A")' -H 'Y=concat(header("A"), "-", @id)' in.msg >out.msg
	[ "$(hcol out.msg X | tr '\n' ' ')" = 'one one one one two two two two ' ]
	[ "$(hcol out.msg Y | tr '\n' ' ')" = 'one-1 one-2 one-3 one-4 two-1 two-2 two-3 two-4 ' ]
}

@test "headers: json() inside --header reads the item with -j, the body with -x" {
	msg-wrap "$SPLIT/orders.json" >in.msg
	msg-split -j /orders -H 'Id=json("/id")' -H 'Sku=json("/items/1/sku")' \
		-H 'Region=json("/region")' >out.msg <in.msg
	[ "$(hcol out.msg Id | tr '\n' '|')" = '1|2||||||||' ]
	[ "$(hcol out.msg Sku | tr '\n' '|')" = 'B-2|||||||||' ]
	[ "$(hcol out.msg Region | tr '\n' '|')" = '|||||||||' ]
	msg-split -x "/map/array[@key='orders']/map" -H 'Region=json("/region")' \
		-H "Id=number[@key='id']" -H 'Whole=json("/orders/1/id")' in.msg >out.msg
	[ "$(hcol out.msg Region | tr '\n' ' ')" = 'north north north ' ]
	[ "$(hcol out.msg Id | tr '\n' '|')" = '1|2||' ]
	[ "$(hcol out.msg Whole | tr '\n' ' ')" = '2 2 2 ' ]
}

@test "headers: --header replaces a parent header of the same name" {
	msg-wrap -H 'Region: old' -H 'Content-Type: text/xml' "$SPLIT/orders.xml" |
		msg-split -x /orders/order -H Region=../@region -H 'Content-Type="application/vnd.order+xml"' >out.msg
	[ "$(msg-unwrap -H out.msg | grep -c '^Region: ')" = 4 ]
	[ "$(hcol out.msg Region | sort -u)" = north ]
	[ "$(hcol out.msg Content-Type | sort -u)" = application/vnd.order+xml ]
}

@test "headers: a --header value is one line, trimmed" {
	# XML turns CR LF into LF before the value is flattened.
	printf '<a><b>x\ny\r\nz</b><b>  pad  </b><b/></a>' | msg-split -r -x /a/b -H 'T=string(.)' >out.msg
	[ "$(hcol out.msg T | tr '\n' '|')" = 'x y z|pad||' ]
	[ "$(count out.msg)" = 3 ]
}

@test "headers: with -g the --header values come from each child's first item" {
	local mode
	for mode in '' --no-stream; do
		msg-wrap "$SPLIT/orders.xml" | msg-split $mode -g 3 -x /orders/order -H First=@id >out.msg
		[ "$(hcol out.msg First | tr '\n' ' ')" = '1 4 ' ]
	done
	msg-split -r -g 2 -j /orders -H 'First=json("/id")' "$SPLIT/orders.json" >out.msg
	[ "$(hcol out.msg First | tr '\n' '|')" = '1|||||' ]
	printf 'a\nb\nc\n' | msg-split -r -l -g 2 -H 'First=string(.)' >out.msg
	[ "$(hcol out.msg First | tr '\n' ' ')" = 'a c ' ]
}

# ---- raw input ----

@test "headers: -r names the file in File-Name, and only a file" {
	msg-split -r -x /orders/order "$SPLIT/orders.xml" >file.msg
	[ "$(hcol file.msg File-Name | sort -u)" = orders.xml ]
	[ "$(hcol file.msg Correlation-Id | sort -u | wc -l)" = 1 ]
	hcol file.msg Correlation-Id >corr
	run -1 grep -v -E "$UUID7" corr
	msg-split -r -x /orders/order <"$SPLIT/orders.xml" >stdin.msg
	[ "$(hcol stdin.msg File-Name | sort -u)" = '(absent)' ]
	msg-split -r -x /orders/order - <"$SPLIT/orders.xml" >dash.msg
	[ "$(hcol dash.msg File-Name | sort -u)" = '(absent)' ]
	# Apart from File-Name and the ids, the children are the same.
	cmp <(bodies file.msg) <(bodies stdin.msg)
	diff -u <(masked file.msg | grep -v -E '^(File-Name|Correlation-Id): ') \
		<(masked stdin.msg | grep -v -E '^Correlation-Id: ')
}

@test "headers: -r reads several files, each its own sequence" {
	cp "$SPLIT/orders.xml" a.xml
	printf '<orders><order id="9"/></orders>' >b.xml
	msg-split -r -x /orders/order a.xml b.xml a.xml >out.msg
	[ "$(hcol out.msg File-Name | tr '\n' ' ')" = 'a.xml a.xml a.xml a.xml b.xml a.xml a.xml a.xml a.xml ' ]
	[ "$(hcol out.msg Sequence-Number | tr '\n' ' ')" = '1 2 3 4 1 1 2 3 4 ' ]
	[ "$(hcol out.msg Sequence-End | grep -c true)" = 3 ]
	[ "$(hcol out.msg Correlation-Id | uniq | wc -l)" = 3 ]
	[ "$(hcol out.msg Correlation-Id | sort -u | wc -l)" = 3 ]
	[ "$(body out.msg 5)" = '<order id="9"/>' ]
}

@test "headers: -r takes the body as XML or JSON by its first byte" {
	printf '\n  {"orders": [1, 2]}' >o.json
	msg-split -r -x '/map/array/number[. > 1]' o.json >out.msg
	[ "$(bodies out.msg)" = 2 ]
	[ "$(hv out.msg 1 Content-Type)" = application/json ]
	msg-split -r -j /orders o.json >out.msg
	[ "$(bodies out.msg)" = '1
2' ]
	printf 'plain text' | msg-split -r -l >out.msg
	[ "$(hv out.msg 1 Content-Type)" = text/plain ]
}
