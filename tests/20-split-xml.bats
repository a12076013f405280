#!/usr/bin/env bats
# msg-split -x on XML: plain, descendant and predicate paths, namespaces,
# attributes and text nodes, CDATA and entities, standalone children,
# agreement with xmllint, streaming against the DOM, and -g groups.

load test_helper
bats_require_minimum_version 1.5.0
load fixtures/split/split

setup_file() {
	# A document large enough to stream in many reads, with the things
	# that could go wrong at a chunk boundary: entities, CDATA, namespaces
	# declared below the root, empty elements and long text.
	perl -e '
		print qq{<?xml version="1.0"?>\n<orders xmlns:p="urn:p" region="r">\n};
		for my $i (1 .. 3000) {
			my $pad = "x" x ($i % 97);
			print qq{<order id="$i"><p:amount>$i.00</p:amount>},
			      qq{<note>a &amp; b &#233; $pad</note><![CDATA[<$i>]]>},
			      ($i % 5 ? "" : qq{<q:tag xmlns:q="urn:q$i"/>}),
			      qq{<empty/></order>\n};
		}
		print qq{<order id="long">}, "y" x 700000, qq{</order>\n</orders>\n};
	' >"$BATS_FILE_TMPDIR/big.xml"
}

# ---- paths ----

@test "split xml: a plain path gives each element as its own document" {
	msg-split -r -x /orders/order "$SPLIT/orders.xml" >out.msg
	[ "$(count out.msg)" = 4 ]
	[ "$(hcol out.msg Content-Type | sort -u)" = application/xml ]
	body out.msg 1 >b1
	cat >want <<-'EOF'
	<order id="1" type="rush">
	    <customer>Ann</customer>
	    <item sku="A-1" qty="2">Apple</item>
	    <item sku="B-2" qty="1">Banana</item>
	  </order>
	EOF
	printf '%s' "$(cat want)" | cmp - b1
	[ "$(body out.msg 2)" = '<order id="2" type="normal"><customer>Bob &amp; Co</customer><item sku="C-3" qty="5">Cherry</item></order>' ]
	[ "$(body out.msg 3)" = '<order id="3" type="rush"/>' ]
	[[ $(body out.msg 4) == '<order id="4" type="normal">'*'<customer>Cé</customer>'*'</order>' ]]
}

@test "split xml: a descendant path finds elements at any depth" {
	msg-split -r -x //item "$SPLIT/orders.xml" >out.msg
	bodies out.msg >got
	cat >want <<-'EOF'
	<item sku="A-1" qty="2">Apple</item>
	<item sku="B-2" qty="1">Banana</item>
	<item sku="C-3" qty="5">Cherry</item>
	<item sku="D-4" qty="1">Date</item>
	EOF
	printf '%s' "$(cat want)" | cmp - got
}

@test "split xml: a predicate selects through the DOM" {
	msg-split -r -x "//order[@type='rush'][item]" "$SPLIT/orders.xml" >out.msg
	[ "$(count out.msg)" = 1 ]
	[[ $(body out.msg 1) == '<order id="1" type="rush">'*'Banana</item>'*'</order>' ]]
	msg-split -r -x "/orders/order[@type='rush']" "$SPLIT/orders.xml" >out.msg
	[ "$(hcol out.msg Sequence-Size | tr '\n' ' ')" = '2 2 ' ]
	[ "$(body out.msg 2)" = '<order id="3" type="rush"/>' ]
	msg-split -r -x '//order[item/@qty > 1]/customer' "$SPLIT/orders.xml" >out.msg
	[ "$(bodies out.msg)" = '<customer>Ann</customer>
<customer>Bob &amp; Co</customer>' ]
}

@test "split xml: an element that contains matches is split as well as its matches" {
	msg-split -r -x //b "$SPLIT/nested.xml" >out.msg
	[ "$(bodies out.msg)" = '<b id="1"><c/><b id="2"><b id="3"/></b></b>
<b id="2"><b id="3"/></b>
<b id="3"/>
<b id="4">t<!--c--><?pi x?></b>
<b id="5">  </b>' ]
}

@test "split xml: / and the document element give the whole document element" {
	local mode want
	want=$(tr -d '\n' <"$SPLIT/nested.xml")
	for mode in --no-stream ''; do
		msg-split -r $mode -x /a "$SPLIT/nested.xml" >out.msg
		[ "$(body out.msg 1)" = "$want" ]
		rm -f out.msg
		run -0 msg-split --output out.msg -r $mode -x / "$SPLIT/nested.xml"
		[ "$(count out.msg)" = 1 ]
		[ "$(body out.msg 1)" = "$want" ]
	done
}

# ---- xmllint agrees ----

@test "split xml: element matches equal xmllint --xpath node for node" {
	local x
	# Plain paths, streamed and through the DOM.
	for x in /orders/order //item //customer /orders; do
		like_xmllint "$x" "$SPLIT/orders.xml"
		like_xmllint "$x" "$SPLIT/orders.xml" --no-stream
	done
	for x in //b /a/b //b/b /a//b '/*/*'; do
		like_xmllint "$x" "$SPLIT/nested.xml"
		like_xmllint "$x" "$SPLIT/nested.xml" --no-stream
	done
	like_xmllint /doc/p "$SPLIT/entities.xml"
	like_xmllint //sig "$SPLIT/entities.xml"
	# Anything else goes through the DOM in any case.
	for x in "//order[@type='rush']" '/orders/order[last()]/item' '//order/item[1]' \
		'//*[@qty=1]' '//order[item/@qty > 1]' '/orders/order[position() mod 2 = 0]' \
		'/orders/node()[self::order]'; do
		like_xmllint "$x" "$SPLIT/orders.xml"
	done
	like_xmllint '//b[b]' "$SPLIT/nested.xml"
	like_xmllint '//p[3]' "$SPLIT/entities.xml"
}

@test "split xml: attribute and text matches equal xmllint's string values" {
	local f x i n
	while read -r f x; do
		rm -rf parts
		msg-split -r -x "$x" "$SPLIT/$f" >out.msg
		each_body out.msg parts
		n=$(xmllint --noent --xpath "count($x)" "$SPLIT/$f")
		[ "$n" -gt 0 ]
		[ "$(ls parts | wc -l)" = "$n" ]
		for ((i = 1; i <= n; i++)); do
			[ "$(cat "parts/$i")" = "$(xmllint --noent --xpath "string(($x)[$i])" "$SPLIT/$f")" ]
		done
	done <<-'EOF'
	orders.xml //item/@sku
	orders.xml /orders/order/@id
	orders.xml //customer/text()
	entities.xml /doc/p/text()
	nested.xml //b/@id
	EOF
}

# ---- attributes, text, CDATA, entities ----

@test "split xml: attributes become text/plain children holding the value" {
	msg-split -r -x //item/@sku "$SPLIT/orders.xml" >out.msg
	[ "$(bodies out.msg)" = 'A-1
B-2
C-3
D-4' ]
	[ "$(hcol out.msg Content-Type | sort -u)" = text/plain ]
}

@test "split xml: text nodes become text/plain children, entities decoded" {
	msg-split -r -x '//customer/text()' "$SPLIT/orders.xml" >out.msg
	[ "$(bodies out.msg)" = 'Ann
Bob & Co
Cé' ]
	[ "$(hcol out.msg Content-Type | sort -u)" = text/plain ]
	[ "$(body out.msg 3 | od -An -tx1 | tr -d ' \n')" = 43c3a9 ]
}

@test "split xml: CDATA stays a CDATA section in elements, raw text in text nodes" {
	msg-split -r -x '/doc/p[3]' "$SPLIT/entities.xml" >out.msg
	[ "$(body out.msg 1)" = '<p><![CDATA[<raw> & "stuff" ]]></p>' ]
	msg-split -r -x '/doc/p[3]/text()' "$SPLIT/entities.xml" >out.msg
	[ "$(body out.msg 1)" = '<raw> & "stuff" ' ]
	[ "$(hv out.msg 1 Content-Type)" = text/plain ]
}

@test "split xml: character and internal entities are resolved in each child" {
	local mode
	for mode in '' --no-stream; do
		msg-split -r $mode -x /doc/p "$SPLIT/entities.xml" >out.msg
		bodies out.msg >got
		cat >want <<-'EOF'
		<p>Café &amp; bar</p>
		<p>Acme &amp; Sons</p>
		<p><![CDATA[<raw> & "stuff" ]]></p>
		<p>x &lt; y &gt; z</p>
		<p><sig>Acme &amp; Sons</sig></p>
		EOF
		printf '%s' "$(cat want)" | cmp - got
	done
}

@test "split xml: an ISO-8859-1 document gives UTF-8 children" {
	printf '<?xml version="1.0" encoding="ISO-8859-1"?>\n<a><b>caf\xe9</b></a>' >latin.xml
	msg-split -r -x /a/b latin.xml >s.msg
	msg-split -r --no-stream -x /a/b latin.xml >d.msg
	printf '<b>caf\xc3\xa9</b>' >want
	msg-unwrap s.msg | cmp want -
	msg-unwrap d.msg | cmp want -
}

# ---- standalone children ----

@test "split xml: every child is a well-formed document on its own" {
	local x f
	while read -r f x; do
		# Streamed; the DOM gives the same children (tested below).
		rm -rf parts
		msg-split -r -x "$x" "$SPLIT/$f" >out.msg
		each_body out.msg parts
		[ "$(ls parts | wc -l)" -gt 0 ]
		well_formed parts
	done <<-'EOF'
	orders.xml /orders/order
	orders.xml //item
	entities.xml /doc/p
	entities.xml //sig
	nested.xml //b
	ns-default.xml //x:note
	ns-prefixed.xml /o:orders/o:order
	ns-prefixed.xml //p:amount
	ns-prefixed.xml //o:item
	EOF
}

# ---- namespaces ----

@test "split xml: a default namespace is matched through a --ns prefix" {
	local mode
	for mode in '' --no-stream; do
		msg-split -r $mode --ns o=urn:example:orders -x /o:orders/o:order \
			"$SPLIT/ns-default.xml" >out.msg
		[ "$(bodies out.msg)" = '<order xmlns="urn:example:orders" xmlns:x="urn:example:extra" id="1"><item>Apple</item><x:note>fragile</x:note></order>
<order xmlns="urn:example:orders" xmlns:x="urn:example:extra" id="2"><item>Pear</item></order>' ]
		msg-split -r $mode --ns o=urn:example:orders -x //o:item \
			"$SPLIT/ns-default.xml" >out.msg
		[ "$(bodies out.msg)" = '<item xmlns="urn:example:orders" xmlns:x="urn:example:extra">Apple</item>
<item xmlns="urn:example:orders" xmlns:x="urn:example:extra">Pear</item>' ]
		# Without the prefix the unqualified name is in no namespace.
		msg-split -r $mode -x /orders/order "$SPLIT/ns-default.xml" >out.msg
		[ "$(hv out.msg 1 Sequence-Size)" = 0 ]
	done
}

@test "split xml: prefixes declared on the document element work without --ns" {
	local mode
	for mode in '' --no-stream; do
		msg-split -r $mode -x //p:amount "$SPLIT/ns-prefixed.xml" >out.msg
		[ "$(bodies out.msg)" = '<p:amount xmlns:o="urn:example:orders" xmlns:p="urn:example:price" currency="EUR">5.00</p:amount>
<p:amount xmlns:o="urn:example:orders" xmlns:p="urn:example:price" currency="USD">3.10</p:amount>' ]
		msg-split -r $mode -x //x:note "$SPLIT/ns-default.xml" >out.msg
		[ "$(bodies out.msg)" = '<x:note xmlns="urn:example:orders" xmlns:x="urn:example:extra">fragile</x:note>' ]
	done
}

@test "split xml: children keep the namespaces in scope, declared above or on them" {
	local mode
	for mode in '' --no-stream; do
		rm -rf parts
		msg-split -r $mode -x /o:orders/o:order "$SPLIT/ns-prefixed.xml" >out.msg
		each_body out.msg parts
		[ "$(xmllint --xpath 'namespace-uri(/*)' parts/1)" = urn:example:orders ]
		[ "$(xmllint --xpath 'namespace-uri(/*/*[2])' parts/1)" = urn:example:price ]
		[ "$(xmllint --xpath 'namespace-uri(/*/*[1])' parts/3)" = urn:example:local ]
		[ "$(body out.msg 3)" = '<o:order xmlns:q="urn:example:local" xmlns:o="urn:example:orders" xmlns:p="urn:example:price" id="3"><q:tag>late</q:tag></o:order>' ]
		# A prefix declared below the document element needs --ns.
		msg-split -r $mode --ns l=urn:example:local -x //l:tag "$SPLIT/ns-prefixed.xml" >out.msg
		[ "$(bodies out.msg)" = '<q:tag xmlns:q="urn:example:local" xmlns:o="urn:example:orders" xmlns:p="urn:example:price">late</q:tag>' ]
	done
}

@test "split xml: --ns wins over a prefix the document declares" {
	cat >clash.xml <<-'EOF'
	<o:orders xmlns:o="urn:a"><o:order id="1"/><b:order xmlns:b="urn:b" id="2"/></o:orders>
	EOF
	local mode
	for mode in --no-stream ''; do
		msg-split -r $mode --ns o=urn:b -x //o:order clash.xml >out.msg
		[ "$(bodies out.msg)" = '<b:order xmlns:b="urn:b" xmlns:o="urn:a" id="2"/>' ]
	done
}

# ---- streaming and the DOM ----

# same_both_ways INPUT EXPR [OPTION ...]: streaming and --no-stream give the
# same bodies, and the same headers once Sequence-Size is set aside.
same_both_ways() {
	local in=$1 x=$2
	shift 2
	# Envelopes hold every header in order and the body, byte for byte.
	local drop='.headers |= del(.["Message-Id"], .Timestamp, .["Sequence-Size"])'
	(set -o pipefail; msg-split "$@" -x "$x" "$in" | msg-unwrap -e | jq -c "$drop" >s.env)
	(set -o pipefail; msg-split --no-stream "$@" -x "$x" "$in" | msg-unwrap -e | jq -c "$drop" >d.env)
	diff -u d.env s.env
}

@test "split xml: streaming and the DOM give the same children" {
	local f x
	for f in orders entities nested ns-prefixed ns-default; do
		msg-wrap -H 'X-Flow: test' "$SPLIT/$f.xml" >$f.msg
	done
	while read -r f x; do
		same_both_ways "$f.msg" "$x"
	done <<-'EOF'
	orders /orders/order
	orders //item
	entities /doc/p
	nested //b
	ns-prefixed /o:orders/o:order
	ns-prefixed //p:amount
	ns-default //x:note
	EOF
	same_both_ways ns-default.msg /o:orders/o:order --ns o=urn:example:orders
	same_both_ways orders.msg /orders/order -g 3
	same_both_ways orders.msg /orders/order -H Region=../@region -H Id=@id
}

@test "split xml: streaming and the DOM agree on a document read in many pieces" {
	msg-wrap "$BATS_FILE_TMPDIR/big.xml" >in.msg
	same_both_ways in.msg /orders/order
	[ "$(wc -l <s.env)" = 3001 ]
	same_both_ways in.msg //p:amount
	same_both_ways in.msg //note -g 7
	[ "$(wc -l <s.env)" = 429 ]
	msg-split -x /orders/order in.msg >out.msg
	# The long element arrives whole, with the declaration from the root.
	[ "$(body out.msg 3001 | wc -c)" = $((17 + 16 + 700000 + 8)) ]
	body out.msg 10 >o10
	xmllint --noout o10
	[ "$(xmllint --xpath 'string(/order/note)' o10)" = 'a & b é xxxxxxxxxx' ]
	[ "$(xmllint --xpath 'namespace-uri(/order/*[1])' o10)" = urn:p ]
	[ "$(xmllint --xpath 'namespace-uri(/order/*[3])' o10)" = urn:q10 ]
	[ "$(xmllint --xpath 'string(/order/text())' o10)" = '<10>' ]
}

@test "split xml: Sequence-Size is on every child from the DOM, on the last when streaming" {
	msg-wrap "$SPLIT/orders.xml" >in.msg
	msg-split -x /orders/order in.msg >s.msg
	msg-split --no-stream -x /orders/order in.msg >d.msg
	[ "$(hcol s.msg Sequence-Size | tr '\n' ' ')" = '(absent) (absent) (absent) 4 ' ]
	[ "$(hcol d.msg Sequence-Size | tr '\n' ' ')" = '4 4 4 4 ' ]
	[ "$(hcol s.msg Sequence-End | tr '\n' ' ')" = '(absent) (absent) (absent) true ' ]
	[ "$(hcol d.msg Sequence-End | tr '\n' ' ')" = '(absent) (absent) (absent) true ' ]
	# A predicate cannot stream, so it gives the size up front as well.
	msg-split -x '/orders/order[@id]' in.msg >p.msg
	[ "$(hcol p.msg Sequence-Size | tr '\n' ' ')" = '4 4 4 4 ' ]
}

# ---- groups ----

@test "split xml: -g wraps each group in the parent element's name" {
	local mode
	for mode in '' --no-stream; do
		msg-split -r $mode -g 3 -x /orders/order "$SPLIT/orders.xml" >out.msg
		[ "$(count out.msg)" = 2 ]
		[[ $(body out.msg 1) == '<orders><order id="1" '*'</order><order id="2" '*'</order><order id="3" type="rush"/></orders>' ]]
		[[ $(body out.msg 2) == '<orders><order id="4" '*'</order></orders>' ]]
		[ "$(hcol out.msg Sequence-Number | tr '\n' ' ')" = '1 2 ' ]
		[ "$(hv out.msg 2 Sequence-Size)" = 2 ]
		[ "$(hv out.msg 2 Sequence-End)" = true ]
		rm -rf parts
		each_body out.msg parts
		well_formed parts
		[ "$(xmllint --xpath 'count(/orders/order)' parts/1)" = 3 ]
	done
}

@test "split xml: -g keeps the namespaces of the wrapper and its items" {
	local mode
	for mode in '' --no-stream; do
		rm -rf parts
		msg-split -r $mode -g 2 -x /o:orders/o:order "$SPLIT/ns-prefixed.xml" >out.msg
		[ "$(count out.msg)" = 2 ]
		each_body out.msg parts
		well_formed parts
		[ "$(xmllint --xpath 'namespace-uri(/*)' parts/1)" = urn:example:orders ]
		[ "$(xmllint --xpath 'local-name(/*)' parts/1)" = orders ]
		[ "$(xmllint --xpath 'count(/*/*)' parts/1)" = 2 ]
		[ "$(xmllint --xpath 'namespace-uri(/*/*[1]/*[2])' parts/1)" = urn:example:price ]
		msg-split -r $mode -g 5 --ns o=urn:example:orders -x //o:item \
			"$SPLIT/ns-default.xml" >out.msg
		# Items of different parents share the first item's wrapper.
		[ "$(body out.msg 1)" = '<order xmlns="urn:example:orders" xmlns:x="urn:example:extra"><item xmlns="urn:example:orders" xmlns:x="urn:example:extra">Apple</item><item xmlns="urn:example:orders" xmlns:x="urn:example:extra">Pear</item></order>' ]
	done
}

@test "split xml: -g joins text and attribute matches with LF" {
	msg-split -r -g 3 -x //item/@sku "$SPLIT/orders.xml" >out.msg
	[ "$(count out.msg)" = 2 ]
	[ "$(body out.msg 1)" = 'A-1
B-2
C-3' ]
	[ "$(body out.msg 2)" = D-4 ]
	[ "$(hcol out.msg Content-Type | sort -u)" = text/plain ]
}

@test "split xml: a group larger than the matches gives one child" {
	msg-split -r -g 100 -x //item "$SPLIT/orders.xml" >out.msg
	[ "$(count out.msg)" = 1 ]
	[ "$(hv out.msg 1 Sequence-Size)" = 1 ]
	[ "$(xmllint --xpath 'count(/*/item)' - <<<"$(body out.msg 1)")" = 4 ]
}

# ---- bodies from frames ----

@test "split xml: a body without Content-Type is taken as XML by its first byte" {
	frame '<r><i>1</i><i>2</i></r>' 'Message-Id: P-1' >in.msg
	msg-split -x /r/i in.msg >s.msg
	msg-split --no-stream -x /r/i in.msg >d.msg
	[ "$(bodies s.msg)" = '<i>1</i>
<i>2</i>' ]
	[ "$(bodies d.msg)" = "$(bodies s.msg)" ]
	[ "$(hcol d.msg Content-Type | sort -u)" = application/xml ]
}

@test "split xml: messages of a stream are split one after another" {
	{ msg-wrap "$SPLIT/orders.xml"; msg-wrap "$SPLIT/nested.xml"; msg-wrap "$SPLIT/orders.xml"; } >in.msg
	msg-split -x //item in.msg >out.msg
	[ "$(count out.msg)" = 9 ]
	[ "$(hcol out.msg Sequence-Number | tr '\n' ' ')" = '1 2 3 4 (absent) 1 2 3 4 ' ]
	[ "$(hv out.msg 5 Sequence-Size)" = 0 ]
	[ "$(hv out.msg 5 Sequence-End)" = true ]
}

@test "split: -r --stats counts the pieces of raw files from a dir: spool" {
	mkdir -p d/new d/tmp d/cur
	printf '<r><item>1</item><item>2</item></r>' >d/new/a.xml
	printf '<r><item>3</item></r>' >d/new/b.xml
	run -0 --separate-stderr msg-split -r --once -x //item --stats --output dir:o dir:d
	[ "$stderr" = "msg-split: stats: in 2, out 3, invalid 0, empty 0, expired 0" ]
	[ "$(ls o/new | wc -l)" = 3 ]
	[ -z "$(ls d/new)" ]
}

@test "split xml: UTF-16 and UTF-32 bodies are parsed as their declaration says, on every path" {
	local enc mode
	for enc in UTF-16 UTF-16LE UTF-32 UTF-32BE; do
		printf '<?xml version="1.0" encoding="%s"?>\n<a><b>caf\xc3\xa9</b></a>\n' "$enc" |
			iconv -f UTF-8 -t "$enc" >in.xml
		# Whatever the Content-Type says, the first bytes tell XML.
		msg-wrap -t text/x-unknown in.xml >in.msg
		for mode in '' --no-stream; do
			run -0 --separate-stderr msg-split $mode -x /a/b in.msg
			[ "$(printf '%s\n' "$output" | msg-unwrap)" = '<b>café</b>' ] || {
				echo "$enc $mode: $stderr"
				return 1
			}
		done
		rm -f out.msg
		run -0 --separate-stderr msg-route -f "/a/b = 'café'" --output out.msg in.msg
		cmp out.msg in.msg
		rm -f out.msg
		run -0 --separate-stderr msg-translate --to xml --set 'X-B=/a/b' --output out.msg in.msg
		[ "$(msg-unwrap -H out.msg | sed -n 's/^X-B: //p')" = café ]
	done
}
