#!/usr/bin/env bats
# msg-translate: stylesheets over a stream, new messages, Content-Type for
# each output method, msg:header() and <msg:header/>, parameters, header
# operations, xsl:message, stylesheets named by a header, encodings and
# the XML pretty-printer.

load test_helper
bats_require_minimum_version 1.5.0

export LC_ALL=C

# hval FILE NAME: the values of header NAME in the messages of FILE.
hval() {
	msg-unwrap -H "$1" | sed -n "s/^$2: //p"
}

setup() {
	cd "$BATS_TEST_TMPDIR" || return 1
	cat >order.xml <<-'EOF'
	<order id="42" type="rush"><item sku="a" qty="2"/><item sku="b" qty="1"/></order>
	EOF
	cat >invoice.xsl <<-'EOF'
	<xsl:stylesheet version="1.0" xmlns:xsl="http://www.w3.org/1999/XSL/Transform">
	  <xsl:template match="/order">
	    <invoice ref="{@id}" lines="{count(item)}"/>
	  </xsl:template>
	</xsl:stylesheet>
	EOF
}

# ---- stylesheets over a stream ----

@test "translate: -x applies the stylesheet to every message" {
	printf '<order id="7"><item/></order>' >second.xml
	msg-wrap order.xml second.xml >in.msg
	msg-translate -x invoice.xsl in.msg >out.msg
	msg-unwrap -s '|' out.msg >bodies
	printf '<?xml version="1.0"?>\n<invoice ref="42" lines="2"/>\n|<?xml version="1.0"?>\n<invoice ref="7" lines="1"/>\n' | cmp - bodies
	msg-translate --xslt invoice.xsl <in.msg | msg-unwrap -s '|' | cmp - bodies
}

@test "translate: a translated message is a new one; other headers stay" {
	msg-wrap -H 'Correlation-Id: c-1' -H 'X-Trace: abc' order.xml >in.msg
	msg-translate -x invoice.xsl in.msg >out.msg
	[ "$(hval out.msg File-Name)" = order.xml ]
	[ "$(hval out.msg Correlation-Id)" = c-1 ]
	[ "$(hval out.msg X-Trace)" = abc ]
	[ "$(hval out.msg Content-Type)" = application/xml ]
	[ "$(hval out.msg Content-Length)" = 52 ]
	[ -n "$(hval out.msg Message-Id)" ]
	[ "$(hval out.msg Message-Id)" != "$(hval in.msg Message-Id)" ]
	[[ $(hval out.msg Timestamp) =~ ^20[0-9][0-9]-[01][0-9]-[0-3][0-9]T[0-9:]{8}\.[0-9]{3}Z$ ]]
	# The order of the headers is kept, the new ones in place.
	msg-unwrap -H in.msg | cut -d: -f1 >want
	msg-unwrap -H out.msg | cut -d: -f1 >got
	cmp want got
}

@test "translate: several inputs are read in order, '-' is stdin" {
	printf '<order id="1"/>' >1.xml
	printf '<order id="2"/>' >2.xml
	printf '<order id="3"/>' >3.xml
	msg-wrap 1.xml >1.msg
	msg-wrap 3.xml >3.msg
	msg-wrap 2.xml | msg-translate -x invoice.xsl 1.msg - 3.msg >out.msg
	[ "$(msg-unwrap out.msg | grep -o 'ref="[0-9]"' | tr -d '\n')" = 'ref="1"ref="2"ref="3"' ]
}

@test "translate: Content-Type follows the output method" {
	local method want
	msg-wrap order.xml >in.msg
	while IFS='	' read -r method want; do
		cat >m.xsl <<-EOF
		<xsl:stylesheet version="1.0" xmlns:xsl="http://www.w3.org/1999/XSL/Transform">
		  $method
		  <xsl:template match="/"><r><xsl:value-of select="*/@id"/></r></xsl:template>
		</xsl:stylesheet>
		EOF
		msg-translate -x m.xsl in.msg >out.msg
		[ "$(hval out.msg Content-Type)" = "$want" ]
	done <<-'EOF'
	<xsl:output/>	application/xml
	<xsl:output method="xml"/>	application/xml
	<xsl:output method="html"/>	text/html
	<xsl:output method="text"/>	text/plain
	<xsl:output method="text" encoding="ISO-8859-1"/>	text/plain; charset=ISO-8859-1
	<xsl:output method="html" encoding="UTF-8"/>	text/html
	<xsl:output method="xml" encoding="ISO-8859-1"/>	application/xml
	<xsl:output method="xml" media-type="application/vnd.example+xml"/>	application/vnd.example+xml
	EOF
}

@test "translate: an html root without xsl:output is html" {
	cat >h.xsl <<-'EOF'
	<xsl:stylesheet version="1.0" xmlns:xsl="http://www.w3.org/1999/XSL/Transform">
	  <xsl:template match="/"><html><body><br/></body></html></xsl:template>
	</xsl:stylesheet>
	EOF
	msg-wrap order.xml | msg-translate -x h.xsl >out.msg
	[ "$(hval out.msg Content-Type)" = text/html ]
	[ "$(msg-unwrap out.msg)" = '<html><body><br></body></html>' ]
}

# ---- msg:header() and <msg:header/> ----

@test "translate: msg:header() reads the headers of the input message" {
	cat >h.xsl <<-'EOF'
	<xsl:stylesheet version="1.0" xmlns:xsl="http://www.w3.org/1999/XSL/Transform"
	                xmlns:msg="urn:msgtools:xslt">
	  <xsl:output method="text"/>
	  <xsl:template match="/">
	    <xsl:value-of select="concat(msg:header('X-Region'), '|', msg:header('x-region'), '|', msg:header('Missing'), '|', msg:header('File-Name'))"/>
	  </xsl:template>
	</xsl:stylesheet>
	EOF
	msg-wrap -H 'X-Region: north' order.xml | msg-translate -x h.xsl >out.msg
	[ "$(msg-unwrap out.msg)" = 'north|north||order.xml' ]
}

@test "translate: <msg:header/> sets headers of the new message" {
	cat >h.xsl <<-'EOF'
	<xsl:stylesheet version="1.0" xmlns:xsl="http://www.w3.org/1999/XSL/Transform"
	                xmlns:msg="urn:msgtools:xslt" extension-element-prefixes="msg">
	  <xsl:template match="/order">
	    <msg:header name="Order-Id" select="@id"/>
	    <msg:header name="Order-{@type}">yes, <xsl:value-of select="count(item)"/> items</msg:header>
	    <msg:header name="Content-Type" select="'application/vnd.invoice+xml'"/>
	    <msg:header name="X-Trace" select="'replaced'"/>
	    <invoice/>
	  </xsl:template>
	</xsl:stylesheet>
	EOF
	msg-wrap -H 'X-Trace: old' order.xml | msg-translate -x h.xsl >out.msg
	[ "$(hval out.msg Order-Id)" = 42 ]
	[ "$(hval out.msg Order-rush)" = 'yes, 2 items' ]
	# Headers the stylesheet sets win over the output method's type.
	[ "$(hval out.msg Content-Type)" = application/vnd.invoice+xml ]
	[ "$(hval out.msg X-Trace)" = replaced ]
	[ "$(msg-unwrap out.msg)" = '<?xml version="1.0"?>
<invoice/>' ]
}

@test "translate: without extension-element-prefixes msg:header is a literal element" {
	cat >h.xsl <<-'EOF'
	<xsl:stylesheet version="1.0" xmlns:xsl="http://www.w3.org/1999/XSL/Transform"
	                xmlns:msg="urn:msgtools:xslt">
	  <xsl:template match="/"><r><msg:header name="A" select="1"/></r></xsl:template>
	</xsl:stylesheet>
	EOF
	msg-wrap order.xml | msg-translate -x h.xsl >out.msg
	[ -z "$(hval out.msg A)" ]
	[[ $(msg-unwrap out.msg) == *'<r xmlns:msg="urn:msgtools:xslt"><msg:header name="A" select="1"/></r>'* ]]
}

# ---- parameters ----

@test "translate: -p takes an expression, -s a string, as xsltproc" {
	cat >p.xsl <<-'EOF'
	<xsl:stylesheet version="1.0" xmlns:xsl="http://www.w3.org/1999/XSL/Transform">
	  <xsl:output method="text"/>
	  <xsl:param name="n" select="0"/>
	  <xsl:param name="s" select="'none'"/>
	  <xsl:template match="/"><xsl:value-of select="concat($n * 2, '|', $s)"/></xsl:template>
	</xsl:stylesheet>
	EOF
	msg-wrap order.xml >in.msg
	[ "$(msg-translate -x p.xsl -p n='count(//item) + 1' -s s='a b' in.msg | msg-unwrap)" = '6|a b' ]
	[ "$(msg-translate -x p.xsl --param 'n=1 div 2' --stringparam 's=x=y' in.msg | msg-unwrap)" = '1|x=y' ]
	[ "$(xsltproc --param n 'count(//item) + 1' --stringparam s 'a b' p.xsl order.xml)" = '6|a b' ]
}

@test "translate: -s takes any string, quotes of both kinds too" {
	cat >p.xsl <<-'EOF'
	<xsl:stylesheet version="1.0" xmlns:xsl="http://www.w3.org/1999/XSL/Transform">
	  <xsl:output method="text"/>
	  <xsl:param name="s"/>
	  <xsl:template match="/"><xsl:value-of select="$s"/></xsl:template>
	</xsl:stylesheet>
	EOF
	msg-wrap order.xml >in.msg
	[ "$(msg-translate -x p.xsl -s "s=it's \"quoted\"" in.msg | msg-unwrap)" = "it's \"quoted\"" ]
	[ "$(msg-translate -x p.xsl -s "s='" in.msg | msg-unwrap)" = "'" ]
	[ "$(msg-translate -x p.xsl -s 's=' in.msg | msg-unwrap)" = '' ]
}

# ---- header operations ----

@test "translate: -H, --set, --unset and --rename apply after the transform, in order" {
	msg-wrap -H 'X-Old: 1' -H 'X-Gone: 2' -H 'Priority: low' order.xml >in.msg
	msg-translate -x invoice.xsl -H 'Priority: high' --set 'Order-Id=/order/@id' \
		--set 'Kind=concat(header("Content-Type"), "/", name(/*))' \
		--unset X-Gone --rename X-Old=X-New -H 'X-Old: again' in.msg >out.msg
	[ "$(hval out.msg Priority)" = high ]
	# --set sees the input message: its body and its headers.
	[ "$(hval out.msg Order-Id)" = 42 ]
	[ "$(hval out.msg Kind)" = application/xml/order ]
	[ -z "$(hval out.msg X-Gone)" ]
	[ "$(hval out.msg X-New)" = 1 ]
	[ "$(hval out.msg X-Old)" = again ]
	# A renamed header keeps its place.
	[ "$(msg-unwrap -H out.msg | cut -d: -f1 | tr '\n' ' ')" = \
	  'Message-Id Timestamp File-Name Content-Type X-New Priority Order-Id Kind X-Old Content-Length  ' ]
}

@test "translate: --rename replaces the new name and ignores a missing old one" {
	frame '<x/>' 'Message-Id: m-1' 'A: 1' 'B: 2' 'A: 3' >in.msg
	msg-translate --rename A=B --rename Missing=A in.msg >out.msg
	[ "$(hval out.msg B | tr '\n' ' ')" = '1 3 ' ]
	[ -z "$(hval out.msg A)" ]
}

@test "translate: header operations alone keep the message and its body" {
	printf 'plain text, not XML' >t.txt
	msg-wrap t.txt >in.msg
	msg-translate -H 'X-Seen: yes' --set 'Len=string-length(.)' in.msg >out.msg
	[ "$(hval out.msg Message-Id)" = "$(hval in.msg Message-Id)" ]
	[ "$(hval out.msg Timestamp)" = "$(hval in.msg Timestamp)" ]
	[ "$(hval out.msg Len)" = 19 ]
	[ "$(msg-unwrap out.msg)" = 'plain text, not XML' ]
}

@test "translate: Content-Length is always recomputed" {
	msg-wrap order.xml | msg-translate -x invoice.xsl -H 'Content-Length: 3' | msg-unwrap >body
	[ "$(wc -c <body)" -eq 52 ]
}

# ---- xsl:message ----

@test "translate: xsl:message goes to stderr after the Message-Id" {
	cat >m.xsl <<-'EOF'
	<xsl:stylesheet version="1.0" xmlns:xsl="http://www.w3.org/1999/XSL/Transform">
	  <xsl:template match="/order">
	    <xsl:message>checking <xsl:value-of select="@id"/></xsl:message>
	    <xsl:message terminate="no">two
	lines</xsl:message>
	    <ok/>
	  </xsl:template>
	</xsl:stylesheet>
	EOF
	msg-wrap order.xml >in.msg
	id=$(hval in.msg Message-Id)
	run -0 --separate-stderr msg-translate -x m.xsl in.msg
	[ "${stderr_lines[0]}" = "msg-translate: $id: checking 42" ]
	[ "${stderr_lines[1]}" = "msg-translate: $id: two" ]
	[ "${stderr_lines[2]}" = "msg-translate: $id: lines" ]
	[ "${#stderr_lines[@]}" = 3 ]
	[[ $output == *'<ok/>'* ]]
}

# ---- stylesheets named by a header ----

@test "translate: --xslt-header picks the stylesheet per message" {
	mkdir -p sheets/v2
	cp invoice.xsl sheets/invoice.xsl
	cat >sheets/v2/text.xsl <<-'EOF'
	<xsl:stylesheet version="1.0" xmlns:xsl="http://www.w3.org/1999/XSL/Transform">
	  <xsl:output method="text"/>
	  <xsl:template match="/">v2 <xsl:value-of select="*/@id"/></xsl:template>
	</xsl:stylesheet>
	EOF
	{
		msg-wrap -H 'Stylesheet: invoice.xsl' order.xml
		msg-wrap -H 'Stylesheet: v2/text.xsl' order.xml
		msg-wrap -H 'Stylesheet: invoice.xsl' order.xml
		msg-wrap order.xml
	} >in.msg
	msg-translate --xslt-header Stylesheet --allow-read sheets -x "$BATS_TEST_TMPDIR/invoice.xsl" in.msg >out.msg
	msg-unwrap -s '|' out.msg >bodies
	printf '%s|v2 42|%s|%s' "$(msg-unwrap <(msg-wrap order.xml | msg-translate -x invoice.xsl))" \
		"$(msg-unwrap <(msg-wrap order.xml | msg-translate -x invoice.xsl))" \
		"$(msg-unwrap <(msg-wrap order.xml | msg-translate -x invoice.xsl))" >want
	[ "$(tr -d '\n' <bodies)" = "$(tr -d '\n' <want)" ]
	[ "$(hval out.msg Content-Type | tr '\n' ' ')" = 'application/xml text/plain application/xml application/xml ' ]
}

@test "translate: --xslt-header looks in each --allow-read directory in turn" {
	mkdir a b
	cat >b/only-b.xsl <<-'EOF'
	<xsl:stylesheet version="1.0" xmlns:xsl="http://www.w3.org/1999/XSL/Transform">
	  <xsl:output method="text"/>
	  <xsl:template match="/">from b</xsl:template>
	</xsl:stylesheet>
	EOF
	msg-wrap -H 'Sheet: only-b.xsl' order.xml |
		msg-translate --xslt-header Sheet --allow-read a --allow-read b >out.msg
	[ "$(msg-unwrap out.msg)" = 'from b' ]
}

# ---- encodings and the pretty-printer ----

@test "translate: --encoding chooses the output encoding, as xsl:output would" {
	printf '<w>caf\xc3\xa9 \xe2\x82\xac</w>' >w.xml
	cat >id.xsl <<-'EOF'
	<xsl:stylesheet version="1.0" xmlns:xsl="http://www.w3.org/1999/XSL/Transform">
	  <xsl:template match="/"><xsl:copy-of select="."/></xsl:template>
	</xsl:stylesheet>
	EOF
	sed 's|<xsl:template|<xsl:output encoding="ISO-8859-1"/><xsl:template|' id.xsl >latin1.xsl
	msg-wrap w.xml | msg-translate -x id.xsl --encoding ISO-8859-1 | msg-unwrap >got
	xsltproc latin1.xsl w.xml | cmp - got
	printf '<?xml version="1.0" encoding="ISO-8859-1"?>\n<w>caf\xe9 &#8364;</w>\n' | cmp - got
}

@test "translate: an input in any encoding libxml2 knows is read" {
	printf '<?xml version="1.0" encoding="windows-1252"?><w>\x80 \xe9</w>' >w.xml
	cat >t.xsl <<-'EOF'
	<xsl:stylesheet version="1.0" xmlns:xsl="http://www.w3.org/1999/XSL/Transform">
	  <xsl:output method="text"/>
	  <xsl:template match="/"><xsl:value-of select="w"/></xsl:template>
	</xsl:stylesheet>
	EOF
	msg-wrap w.xml | msg-translate -x t.xsl | msg-unwrap >got
	printf '\xe2\x82\xac \xc3\xa9' | cmp - got
}

@test "translate: --format and --compact write XML as xmllint does" {
	printf '<?xml version="1.0"?>\n<a>\n  <b x="1">text</b>   <c/>\n<!-- n --><![CDATA[<d>]]><e>caf\xc3\xa9</e></a>\n' >doc.xml
	msg-wrap doc.xml >in.msg
	msg-translate --format in.msg >out.msg
	msg-unwrap out.msg | cmp - <(xmllint --format doc.xml)
	msg-translate --compact in.msg | msg-unwrap | cmp - <(xmllint --noblanks doc.xml)
	[ "$(hval out.msg Content-Type)" = application/xml ]
	[ "$(hval out.msg Message-Id)" != "$(hval in.msg Message-Id)" ]
}

@test "translate: --stats counts messages in, out and invalid" {
	printf 'not xml' >t.txt
	msg-wrap order.xml t.txt order.xml >in.msg
	run -0 --separate-stderr msg-translate -x invoice.xsl --invalid bad.msg --stats in.msg
	[ "${stderr_lines[-1]}" = 'msg-translate: stats: in 3, out 2, invalid 1, expired 0' ]
}

