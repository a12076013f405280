#!/usr/bin/env bats
# msg-translate and JSON: bodies mapped to XML for the stylesheet, mapping
# results written as JSON, the round trip through an identity stylesheet,
# conversions and the pretty-printer without a stylesheet.

load test_helper
bats_require_minimum_version 1.5.0

export LC_ALL=C

JSON="$FIXTURES/json"

hval() {
	msg-unwrap -H "$1" | sed -n "s/^$2: //p"
}

setup() {
	cd "$BATS_TEST_TMPDIR" || return 1
	cat >identity.xsl <<-'EOF'
	<xsl:stylesheet version="1.0" xmlns:xsl="http://www.w3.org/1999/XSL/Transform">
	  <xsl:template match="@*|node()">
	    <xsl:copy><xsl:apply-templates select="@*|node()"/></xsl:copy>
	  </xsl:template>
	</xsl:stylesheet>
	EOF
}

# want CASE: the canonical compact form of a corpus file, with the LF
# msg-translate ends JSON with.
want() {
	local f="$JSON/$1.compact"
	[ -f "$f" ] || f="$JSON/$1.json"
	cat "$f"
	[ "$(tail -c 1 "$f" | od -An -tx1 | tr -d ' ')" = 0a ] || echo
}

@test "json: JSON -> mapping -> identity stylesheet -> JSON keeps every value" {
	local j c n=0
	for j in "$JSON"/*.json; do
		c=$(basename "$j" .json)
		msg-wrap -t application/json "$j" >in.msg
		msg-translate -x identity.xsl --to json in.msg >out.msg
		msg-unwrap out.msg >got
		want "$c" | cmp - got || { echo "case $c"; return 1; }
		[ "$(hval out.msg Content-Type)" = application/json ]
		n=$((n + 1))
	done
	[ "$n" -ge 30 ]
}

@test "json: the corpus covers what the round trip must keep" {
	# unicode escapes, big and negative numbers, empty containers, nested
	# arrays, key order: the files are there and still say so.
	grep -q '\\u' "$JSON/05-unicode-escapes.json"
	grep -q '12345678901234567890' "$JSON/12-big-integers.json"
	grep -q -- '-' "$JSON/13-negative-numbers.json"
	grep -q '{}' "$JSON/03-empty-containers.json"
	grep -q '\[\]' "$JSON/03-empty-containers.json"
	grep -q '\[\[' "$JSON/18-nested-arrays.json"
	[ -f "$JSON/22-key-order.json" ]
}

@test "json: a map or array result is JSON without --to" {
	printf '{"b":[1,{"c":"x"}],"a":-0.50e3}' >in.json
	msg-wrap in.json | msg-translate -x identity.xsl >out.msg
	[ "$(msg-unwrap out.msg)" = '{"b":[1,{"c":"x"}],"a":-0.50e3}' ]
	[ "$(hval out.msg Content-Type)" = application/json ]
}

@test "json: a scalar result is XML unless --to json" {
	printf '"just a string"' >in.json
	msg-wrap -t application/json in.json >in.msg
	msg-translate -x identity.xsl in.msg >out.msg
	[ "$(msg-unwrap out.msg)" = '<?xml version="1.0"?>
<string>just a string</string>' ]
	[ "$(hval out.msg Content-Type)" = application/xml ]
	[ "$(msg-translate -x identity.xsl --to json in.msg | msg-unwrap)" = '"just a string"' ]
}

@test "json: XML in, JSON out through a stylesheet that builds the mapping" {
	cat >order.xml <<-'EOF'
	<order id="42"><customer>Ann &amp; "Bo"</customer><item sku="a" qty="2"/><item sku="b" qty="1"/><paid/></order>
	EOF
	cat >to-json.xsl <<-'EOF'
	<xsl:stylesheet version="1.0" xmlns:xsl="http://www.w3.org/1999/XSL/Transform">
	  <xsl:template match="/order">
	    <map>
	      <number key="id"><xsl:value-of select="@id"/></number>
	      <string key="customer"><xsl:value-of select="customer"/></string>
	      <array key="items">
	        <xsl:for-each select="item">
	          <map><string key="sku"><xsl:value-of select="@sku"/></string><number key="qty"><xsl:value-of select="@qty"/></number></map>
	        </xsl:for-each>
	      </array>
	      <boolean key="paid"><xsl:value-of select="boolean(paid)"/></boolean>
	      <null key="note"/>
	    </map>
	  </xsl:template>
	</xsl:stylesheet>
	EOF
	msg-wrap order.xml | msg-translate -x to-json.xsl >out.msg
	[ "$(msg-unwrap out.msg)" = '{"id":42,"customer":"Ann & \"Bo\"","items":[{"sku":"a","qty":2},{"sku":"b","qty":1}],"paid":true,"note":null}' ]
	[ "$(hval out.msg Content-Type)" = application/json ]
	msg-wrap order.xml | msg-translate -x to-json.xsl --format | msg-unwrap >pretty
	jq . pretty | cmp - pretty
}

@test "json: JSON in, JSON out, a field promoted to a header" {
	printf '{"order":{"id":"A-7","lines":[{"sku":"x","qty":3},{"sku":"y","qty":4}]}}' >in.json
	cat >reshape.xsl <<-'EOF'
	<xsl:stylesheet version="1.0" xmlns:xsl="http://www.w3.org/1999/XSL/Transform"
	                xmlns:msg="urn:msgtools:xslt" extension-element-prefixes="msg">
	  <xsl:template match="/map">
	    <xsl:variable name="o" select="map[@key='order']"/>
	    <msg:header name="Order-Id" select="$o/string[@key='id']"/>
	    <map>
	      <string key="ref"><xsl:value-of select="$o/string[@key='id']"/></string>
	      <number key="units"><xsl:value-of select="sum($o/array[@key='lines']/map/number[@key='qty'])"/></number>
	    </map>
	  </xsl:template>
	</xsl:stylesheet>
	EOF
	msg-wrap in.json | msg-translate -x reshape.xsl --set 'Lines=json("/order/lines/1/sku")' >out.msg
	[ "$(msg-unwrap out.msg)" = '{"ref":"A-7","units":7}' ]
	[ "$(hval out.msg Order-Id)" = A-7 ]
	[ "$(hval out.msg Lines)" = y ]
}

@test "json: --to xml keeps a mapping result as XML" {
	printf '[1,"two"]' >in.json
	msg-wrap in.json | msg-translate -x identity.xsl --to xml >out.msg
	[ "$(msg-unwrap out.msg)" = '<?xml version="1.0"?>
<array><number>1</number><string>two</string></array>' ]
	[ "$(hval out.msg Content-Type)" = application/xml ]
}

@test "json: a result named like the mapping that is not one stays XML" {
	cat >fake.xsl <<-'EOF'
	<xsl:stylesheet version="1.0" xmlns:xsl="http://www.w3.org/1999/XSL/Transform">
	  <xsl:template match="/"><map><row key="a">1</row></map></xsl:template>
	</xsl:stylesheet>
	EOF
	printf '<x/>' >x.xml
	msg-wrap x.xml | msg-translate -x fake.xsl >out.msg
	[ "$(msg-unwrap out.msg)" = '<?xml version="1.0"?>
<map><row key="a">1</row></map>' ]
	[ "$(hval out.msg Content-Type)" = application/xml ]
}

@test "json: without a stylesheet --to xml and --to json convert both ways" {
	local j c
	for j in "$JSON"/*.json; do
		c=$(basename "$j" .json)
		# 512 levels of JSON make XML deeper than libxml2 reads (256).
		[ "$c" != 19-deep-512 ] || continue
		msg-wrap -t application/json "$j" | msg-translate --to xml >x.msg
		[ "$(hval x.msg Content-Type)" = application/xml ]
		msg-translate --to json x.msg | msg-unwrap >got
		want "$c" | cmp - got || { echo "case $c"; return 1; }
	done
}

@test "json: --to xml writes the mapping in UTF-8" {
	printf '{"name":"caf\xc3\xa9 \xe2\x82\xac","n":[true,null]}' >in.json
	msg-wrap in.json | msg-translate --to xml | msg-unwrap >got
	printf '<?xml version="1.0" encoding="UTF-8"?>\n<map><string key="name">caf\xc3\xa9 \xe2\x82\xac</string><array key="n"><boolean>true</boolean><null/></array></map>\n' | cmp - got
}

@test "json: --format and --compact without a stylesheet" {
	printf '{ "a" : [ 1 , {"b":null} ],\n "c":{} }' >in.json
	msg-wrap in.json >in.msg
	msg-translate --format in.msg | msg-unwrap >pretty
	cat >want <<-'EOF'
	{
	  "a": [
	    1,
	    {
	      "b": null
	    }
	  ],
	  "c": {}
	}
	EOF
	cmp want pretty
	[ "$(msg-translate --compact in.msg | msg-unwrap)" = '{"a":[1,{"b":null}],"c":{}}' ]
	# Without --format or --compact a JSON body is checked and kept.
	msg-translate --to json in.msg | msg-unwrap | cmp - in.json
}

@test "json: XML that is not the mapping cannot be made JSON" {
	printf '<order id="1"/>' >o.xml
	msg-wrap o.xml >in.msg
	run -65 --separate-stderr msg-translate --to json in.msg
	[[ $stderr == *"not the JSON mapping: "* ]]
	msg-translate --to json --invalid bad.msg in.msg >out.msg
	[ ! -s out.msg ]
	[[ $(hval bad.msg Error) == "msg-translate: not the JSON mapping: "* ]]
	[ "$(msg-unwrap bad.msg)" = '<order id="1"/>' ]
}

@test "json: a malformed JSON body is invalid" {
	printf '{"a": [1, 2}' >bad.json
	msg-wrap -t application/json bad.json >in.msg
	msg-translate -x identity.xsl --invalid bad.msg in.msg >out.msg
	[ ! -s out.msg ]
	[[ $(hval bad.msg Error) == 'msg-translate: body is not JSON: offset '* ]]
}

# nested N: N arrays, one inside the other.
nested() {
	printf '%*s' "$1" '' | tr ' ' '['
	printf '%*s' "$1" '' | tr ' ' ']'
}

@test "json: a body nested deeper than 512 levels is invalid, at any depth" {
	nested 512 | msg-wrap -t application/json -H 'Message-Id: D512' >in.msg
	msg-translate --to xml in.msg >out.msg
	[ "$(msg-unwrap out.msg | grep -o '<array>' | wc -l)" = 511 ]
	for n in 513 1000000; do
		rm -f bad.msg
		nested $n | msg-wrap -t application/json -H "Message-Id: D$n" >in.msg
		run -0 --separate-stderr msg-translate --to xml --invalid bad.msg in.msg
		[ -z "$output" ]
		[ "$(hval bad.msg Error)" = 'msg-translate: body is not JSON: offset 512: nesting deeper than 512' ]
		[ "$(hval bad.msg Message-Id)" = "D$n" ]
	done
}
