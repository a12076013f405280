#!/usr/bin/env bats
# msg-translate when things go wrong: xsl:message terminate="yes", runtime
# errors, bodies that are not XML or JSON, broken or missing stylesheets,
# the security rules (document(), imports, file writes, entities, the
# network), stylesheet names from headers, and usage errors.

load test_helper
bats_require_minimum_version 1.5.0

export LC_ALL=C

hval() {
	msg-unwrap -H "$1" | sed -n "s/^$2: //p"
}

setup() {
	cd "$BATS_TEST_TMPDIR" || return 1
	printf '<order id="42"><item/></order>' >order.xml
	msg-wrap order.xml >order.msg
	cat >ok.xsl <<-'EOF'
	<xsl:stylesheet version="1.0" xmlns:xsl="http://www.w3.org/1999/XSL/Transform">
	  <xsl:output method="text"/>
	  <xsl:template match="/">ok <xsl:value-of select="*/@id"/></xsl:template>
	</xsl:stylesheet>
	EOF
	cat >stop.xsl <<-'EOF'
	<xsl:stylesheet version="1.0" xmlns:xsl="http://www.w3.org/1999/XSL/Transform">
	  <xsl:output method="text"/>
	  <xsl:template match="/">
	    <xsl:if test="*/@id = 13">
	      <xsl:message>looking at 13</xsl:message>
	      <xsl:message terminate="yes">order <xsl:value-of select="*/@id"/> is unlucky</xsl:message>
	    </xsl:if>
	    <xsl:text>ok </xsl:text><xsl:value-of select="*/@id"/>
	  </xsl:template>
	</xsl:stylesheet>
	EOF
}

# three orders, the middle one id 13
three() {
	printf '<order id="1"/>' >1.xml
	printf '<order id="13"/>' >13.xml
	printf '<order id="2"/>' >2.xml
	msg-wrap 1.xml 13.xml 2.xml
}

# write.xsl: writes <side/> to the file named by parameter "to" (by
# default out/side.xml) with exsl:document, and <main/> as the result.
write_sheet() {
	cat >write.xsl <<-'EOF'
	<xsl:stylesheet version="1.0" xmlns:xsl="http://www.w3.org/1999/XSL/Transform"
	                xmlns:exsl="http://exslt.org/common" extension-element-prefixes="exsl">
	  <xsl:param name="to" select="'out/side.xml'"/>
	  <xsl:template match="/">
	    <exsl:document href="{$to}"><side/></exsl:document>
	    <main/>
	  </xsl:template>
	</xsl:stylesheet>
	EOF
}

# ---- invalid messages ----

@test "errors: terminate=yes stops the run at that message, earlier output flushed" {
	three >in.msg
	id=$(hval in.msg Message-Id | sed -n 2p)
	run -65 --separate-stderr msg-translate -x stop.xsl in.msg
	[ "$(printf '%s\n' "$output" | msg-unwrap)" = 'ok 1' ]
	[ "${stderr_lines[0]}" = "msg-translate: $id: looking at 13" ]
	[ "${stderr_lines[1]}" = "msg-translate: in.msg: message 2 (Message-Id $id): stylesheet terminated: order 13 is unlucky" ]
}

@test "errors: terminate=yes with --invalid diverts the message and goes on" {
	three >in.msg
	msg-translate -x stop.xsl --invalid bad.msg in.msg >out.msg 2>err
	[ "$(msg-unwrap -s '|' out.msg)" = 'ok 1|ok 2' ]
	[ "$(hval bad.msg Error)" = 'msg-translate: stylesheet terminated: order 13 is unlucky' ]
	# The invalid message is the input, as it came.
	[ "$(msg-unwrap bad.msg)" = '<order id="13"/>' ]
	[ "$(hval bad.msg Message-Id)" = "$(hval in.msg Message-Id | sed -n 2p)" ]
	# The terminating text is the Error; on stderr only the warning that
	# the message was diverted quotes it.
	[ "$(grep unlucky err)" = "msg-translate: warning: message $(hval in.msg Message-Id | sed -n 2p): File-Name 13.xml: stylesheet terminated: order 13 is unlucky: diverted to 'bad.msg'" ]
	grep -q 'looking at 13' err
}

@test "errors: a runtime error makes the message invalid with libxslt's text" {
	cat >rt.xsl <<-'EOF'
	<xsl:stylesheet version="1.0" xmlns:xsl="http://www.w3.org/1999/XSL/Transform">
	  <xsl:template match="/"><r><xsl:value-of select="$undeclared"/></r></xsl:template>
	</xsl:stylesheet>
	EOF
	msg-translate -x rt.xsl --invalid bad.msg order.msg >out.msg
	[ ! -s out.msg ]
	err=$(hval bad.msg Error)
	[[ $err == 'msg-translate: runtime error: file rt.xsl line 2 element value-of; '* ]]
	[[ $err == *"Variable 'undeclared' has not been declared"* ]]
}

@test "errors: a body that is not XML is invalid" {
	printf '<order><unclosed></order>' >bad.xml
	msg-wrap bad.xml >in.msg
	run -65 --separate-stderr msg-translate -x ok.xsl in.msg
	[ -z "$output" ]
	[[ $stderr == "msg-translate: in.msg: message 1 (Message-Id "*"): body is not XML: line 1: "* ]]
	msg-translate -x ok.xsl --invalid bad.msg in.msg order.msg >out.msg
	[ "$(msg-unwrap out.msg)" = 'ok 42' ]
	[[ $(hval bad.msg Error) == 'msg-translate: body is not XML: line 1: '* ]]
}

@test "errors: a text body cannot be translated; an empty one neither" {
	printf 'hello' >t.txt
	: >empty.txt
	msg-wrap t.txt empty.txt >in.msg
	msg-translate -x ok.xsl --invalid bad.msg in.msg >out.msg
	[ ! -s out.msg ]
	[ "$(hval bad.msg Error | sort -u)" = 'msg-translate: body is neither XML nor JSON' ]
	msg-translate --format --invalid bad2.msg in.msg >out.msg
	[ "$(hval bad2.msg Error | wc -l)" = 2 ]
}

# ---- the stylesheet itself ----

@test "errors: a stylesheet with a syntax error exits 64 before reading input" {
	printf '<xsl:stylesheet version="1.0" xmlns:xsl="http://www.w3.org/1999/XSL/Transform"><xsl:template match="/"><xsl:value-of/></xsl:template></xsl:stylesheet>' >bad.xsl
	printf '<xsl:stylesheet version="1.0" xmlns:xsl="http://www.w3.org/1999/XSL/Transform"><xsl:template' >cut.xsl
	mkfifo nobody-writes
	# Reading the FIFO would block: the run must end before it opens it.
	run -64 --separate-stderr timeout -k 10 10 msg-translate -x bad.xsl nobody-writes
	[ "$stderr" = "msg-translate: cannot compile 'bad.xsl': compilation error: file bad.xsl line 1 element value-of; xsl:value-of : select is missing" ]
	run -64 --separate-stderr timeout -k 10 10 msg-translate -x cut.xsl nobody-writes
	[[ $stderr == "msg-translate: cannot compile 'cut.xsl': file cut.xsl line 1: "* ]]
	run -64 --separate-stderr timeout -k 10 10 msg-translate -x order.xml nobody-writes
	[[ $stderr == "msg-translate: cannot compile 'order.xml': "* ]]
}

@test "errors: a missing stylesheet exits 66" {
	run -66 --separate-stderr msg-translate -x nowhere.xsl order.msg
	[ "$stderr" = "msg-translate: cannot open 'nowhere.xsl': No such file or directory" ]
}

# ---- security ----

@test "errors: document() reads only under the stylesheet's directory and --allow-read" {
	mkdir sheets data
	printf '<v>inside</v>' >sheets/near.xml
	printf '<v>outside</v>' >data/far.xml
	cat >sheets/doc.xsl <<-'EOF'
	<xsl:stylesheet version="1.0" xmlns:xsl="http://www.w3.org/1999/XSL/Transform">
	  <xsl:output method="text"/>
	  <xsl:param name="f"/>
	  <xsl:template match="/"><xsl:value-of select="document($f)"/></xsl:template>
	</xsl:stylesheet>
	EOF
	[ "$(msg-translate -x sheets/doc.xsl -s f=near.xml order.msg | msg-unwrap)" = inside ]
	msg-translate -x sheets/doc.xsl -s "f=$PWD/data/far.xml" --invalid bad.msg order.msg >out.msg
	[ ! -s out.msg ]
	[[ $(hval bad.msg Error) == *"Local file read for $PWD/data/far.xml refused"* ]]
	for f in ../data/far.xml /etc/passwd "file://$PWD/data/far.xml"; do
		run -65 --separate-stderr msg-translate -x sheets/doc.xsl -s "f=$f" order.msg
		[[ $stderr == *'refused'* ]]
		[ -z "$output" ]
	done
	[ "$(msg-translate -x sheets/doc.xsl -s "f=$PWD/data/far.xml" --allow-read data order.msg | msg-unwrap)" = outside ]
}

@test "errors: a symbolic link does not lead document() out" {
	mkdir sheets data
	printf '<v>secret</v>' >data/secret.xml
	ln -s ../data/secret.xml sheets/link.xml
	cat >sheets/doc.xsl <<-'EOF'
	<xsl:stylesheet version="1.0" xmlns:xsl="http://www.w3.org/1999/XSL/Transform">
	  <xsl:template match="/"><r><xsl:value-of select="document('link.xml')"/></r></xsl:template>
	</xsl:stylesheet>
	EOF
	run -65 --separate-stderr msg-translate -x sheets/doc.xsl order.msg
	[[ $stderr == *'link.xml refused'* ]]
}

@test "errors: no network for document()" {
	cat >net.xsl <<-'EOF'
	<xsl:stylesheet version="1.0" xmlns:xsl="http://www.w3.org/1999/XSL/Transform">
	  <xsl:template match="/"><r><xsl:copy-of select="document('http://127.0.0.1:9/x.xml')"/></r></xsl:template>
	</xsl:stylesheet>
	EOF
	msg-translate -x net.xsl --invalid bad.msg order.msg >out.msg
	[[ $(hval bad.msg Error) == *'Network file read for http://127.0.0.1:9/x.xml refused'* ]]
}

@test "errors: a document() file that is missing is an empty node-set, as in xsltproc" {
	cat >miss.xsl <<-'EOF'
	<xsl:stylesheet version="1.0" xmlns:xsl="http://www.w3.org/1999/XSL/Transform">
	  <xsl:output method="text"/>
	  <xsl:template match="/">[<xsl:value-of select="count(document('missing.xml'))"/>]</xsl:template>
	</xsl:stylesheet>
	EOF
	[ "$(msg-translate -x miss.xsl order.msg | msg-unwrap)" = '[0]' ]
}

@test "errors: imports and includes follow the stylesheet anywhere, as in xsltproc --nonet" {
	mkdir -p set/html set/common data
	cp ok.xsl set/common/base.xsl
	printf '<v>common</v>' >set/common/words.xml
	printf '<v>data</v>' >data/far.xml
	cat >set/common/inc.xsl <<-'EOF'
	<xsl:stylesheet version="1.0" xmlns:xsl="http://www.w3.org/1999/XSL/Transform">
	  <xsl:template name="words"><xsl:value-of select="document('words.xml')"/></xsl:template>
	</xsl:stylesheet>
	EOF
	cat >set/html/top.xsl <<-'EOF'
	<xsl:stylesheet version="1.0" xmlns:xsl="http://www.w3.org/1999/XSL/Transform">
	  <xsl:import href="../common/base.xsl"/>
	  <xsl:include href="../common/inc.xsl"/>
	  <xsl:param name="f"/>
	  <xsl:template match="/">
	    <xsl:apply-imports/>
	    <xsl:text> </xsl:text><xsl:call-template name="words"/>
	    <xsl:text> </xsl:text><xsl:value-of select="document('../common/words.xml')"/>
	    <xsl:if test="$f"><xsl:text> </xsl:text><xsl:value-of select="document($f)"/></xsl:if>
	  </xsl:template>
	</xsl:stylesheet>
	EOF
	# document() reads under the directory of every stylesheet module.
	msg-translate -x set/html/top.xsl order.msg >out.msg
	[ "$(msg-unwrap out.msg)" = 'ok 42 common common' ]
	# Not elsewhere, unless --allow-read says so.
	run -65 --separate-stderr msg-translate -x set/html/top.xsl -s "f=$PWD/data/far.xml" order.msg
	[[ $stderr == *"Local file read for $PWD/data/far.xml refused"* ]]
	[ -z "$output" ]
	msg-translate -x set/html/top.xsl -s "f=$PWD/data/far.xml" --allow-read data order.msg >out.msg
	[ "$(msg-unwrap out.msg)" = 'ok 42 common common data' ]
	# An import over the network is refused, as in xsltproc --nonet.
	cat >net.xsl <<-'EOF'
	<xsl:stylesheet version="1.0" xmlns:xsl="http://www.w3.org/1999/XSL/Transform">
	  <xsl:import href="http://127.0.0.1:9/base.xsl"/>
	</xsl:stylesheet>
	EOF
	run -64 --separate-stderr msg-translate -x net.xsl order.msg
	[[ $stderr == "msg-translate: cannot compile 'net.xsl': "*'Network file read for http://127.0.0.1:9/base.xsl refused'* ]]
}

@test "errors: a stylesheet's DTD is read, a body's is not" {
	printf '<!ENTITY who "stylesheet">' >sheet.ent
	cat >ent.xsl <<-'EOF'
	<!DOCTYPE xsl:stylesheet [
	<!ENTITY % ents SYSTEM "sheet.ent">
	%ents;
	]>
	<xsl:stylesheet version="1.0" xmlns:xsl="http://www.w3.org/1999/XSL/Transform">
	  <xsl:output method="text"/>
	  <xsl:template match="/">&who; <xsl:value-of select="."/></xsl:template>
	</xsl:stylesheet>
	EOF
	printf '<!DOCTYPE r [<!ENTITY %% ents SYSTEM "sheet.ent"> %%ents;]><r>&who;</r>' >body.xml
	printf '<r>body</r>' >plain.xml
	msg-wrap plain.xml body.xml >in.msg
	msg-translate -x ent.xsl --invalid bad.msg in.msg >out.msg
	[ "$(msg-unwrap out.msg)" = 'stylesheet body' ]
	[ "$(hval bad.msg Error)" = "msg-translate: body is not XML: external entity 'sheet.ent' refused" ]
}

@test "errors: a stylesheet may not write files unless --allow-write" {
	mkdir out
	write_sheet
	msg-translate -x write.xsl --invalid bad.msg order.msg >out.msg
	[ ! -s out.msg ]
	[[ $(hval bad.msg Error) == *'File write for out/side.xml refused'* ]]
	[ -z "$(ls out)" ]
	msg-translate -x write.xsl --allow-write out order.msg >out.msg
	[[ $(msg-unwrap out.msg) == *'<main/>'* ]]
	[[ $(cat out/side.xml) == *'<side/>'* ]]
	# Directories under it may be made; nothing outside it, even by "..".
	msg-translate -x write.xsl --allow-write out -s to=out/new/deep.xml order.msg >/dev/null
	[ -f out/new/deep.xml ]
	for to in out/../escape.xml "$PWD/escape.xml" /tmp/escape-$$.xml; do
		run -65 --separate-stderr msg-translate -x write.xsl --allow-write out -s "to=$to" order.msg
		[[ $stderr == *'refused'* ]]
	done
	[ ! -e escape.xml ]
	[ ! -e /tmp/escape-$$.xml ]
}

@test "errors: external entities in a body are refused, entity bombs too" {
	printf '<!DOCTYPE r [<!ENTITY e SYSTEM "/etc/passwd">]><r>&e;</r>' >xxe.xml
	printf '<!DOCTYPE r [<!ENTITY %% p SYSTEM "/etc/passwd"> %%p;]><r/>' >pe.xml
	perl -e 'print qq{<!DOCTYPE r [<!ENTITY a "aaaaaaaaaa">};
		for my $i (1 .. 9) { my $p = chr(96 + $i); my $n = chr(97 + $i);
			print qq{<!ENTITY $n "}, "&$p;" x 10, qq{">}; }
		print qq{]><r>&j;</r>};' >bomb.xml
	msg-wrap xxe.xml pe.xml bomb.xml >in.msg
	msg-translate -x ok.xsl --invalid bad.msg in.msg >out.msg
	[ ! -s out.msg ]
	hval bad.msg Error >errors
	[ "$(sed -n 1p errors)" = "msg-translate: body is not XML: external entity '/etc/passwd' refused" ]
	[ "$(sed -n 2p errors)" = "msg-translate: body is not XML: external entity '/etc/passwd' refused" ]
	[[ $(sed -n 3p errors) == 'msg-translate: body is not XML: '* ]]
}

@test "errors: a DOCTYPE is ignored without --load-dtd and read with it, never from the network" {
	printf '<!ATTLIST r a CDATA "from-dtd">' >local.dtd
	printf '<!DOCTYPE r SYSTEM "local.dtd"><r/>' >local.xml
	printf '<!DOCTYPE r SYSTEM "http://127.0.0.1:9/r.dtd"><r/>' >remote.xml
	cat >a.xsl <<-'EOF'
	<xsl:stylesheet version="1.0" xmlns:xsl="http://www.w3.org/1999/XSL/Transform">
	  <xsl:output method="text"/>
	  <xsl:template match="/">[<xsl:value-of select="r/@a"/>]</xsl:template>
	</xsl:stylesheet>
	EOF
	msg-wrap local.xml remote.xml >in.msg
	[ "$(msg-translate -x a.xsl in.msg | msg-unwrap -s ' ')" = '[] []' ]
	msg-translate -x a.xsl --load-dtd --invalid bad.msg in.msg >out.msg
	[ "$(msg-unwrap out.msg)" = '[from-dtd]' ]
	[[ $(hval bad.msg Error) == *'network'* ]]
}

@test "errors: a dangling symbolic link does not lead a write out of --allow-write" {
	mkdir w
	ln -s "$PWD/outside.txt" w/d.txt
	ln -s "$PWD/gone" w/sub
	write_sheet
	local to
	for to in w/d.txt "$PWD/w/d.txt" w/sub/x.xml w/sub/deeper/x.xml; do
		run -65 --separate-stderr msg-translate -x write.xsl --allow-write w -s "to=$to" order.msg
		[[ $stderr == *"File write for $to refused"* || $stderr == *"Directory creation for "*" refused"* ]]
		[ -z "$output" ]
	done
	[ ! -e outside.txt ]
	[ ! -e gone ]
	[ "$(ls -A w)" = "$(printf 'd.txt\nsub')" ]
	# A link that resolves inside the directory is as good as its target.
	mkdir w/real
	ln -s real w/in
	msg-translate -x write.xsl --allow-write w -s to=w/in/x.xml order.msg >/dev/null
	[[ $(cat w/real/x.xml) == *'<side/>'* ]]
}

# ---- stylesheets named by headers ----

@test "errors: a header may only name a stylesheet inside --allow-read" {
	mkdir sheets
	cp ok.xsl sheets/ok.xsl
	cp ok.xsl outside.xsl
	ln -s ../outside.xsl sheets/link.xsl
	local name want
	while IFS='	' read -r name want; do
		msg-wrap -H "Sheet: $name" order.xml >in.msg
		msg-translate --xslt-header Sheet --allow-read sheets --invalid bad.msg in.msg >out.msg
		[ ! -s out.msg ]
		[ "$(hval bad.msg Error)" = "msg-translate: $want" ]
		rm bad.msg
	done <<-EOF
	../outside.xsl	stylesheet name '../outside.xsl' is not a plain relative path
	$PWD/outside.xsl	stylesheet name '$PWD/outside.xsl' is not a plain relative path
	./ok.xsl	stylesheet name './ok.xsl' is not a plain relative path
	link.xsl	stylesheet 'link.xsl' leads out of '$PWD/sheets'
	nothere.xsl	no stylesheet 'nothere.xsl' in the --allow-read directories
	EOF
	msg-translate --xslt-header Sheet --allow-read sheets --invalid bad.msg order.msg >out.msg
	[ "$(hval bad.msg Error)" = "msg-translate: no header 'Sheet' to name the stylesheet" ]
}

@test "errors: a broken stylesheet named by a header makes only that message invalid" {
	mkdir sheets
	cp ok.xsl sheets/ok.xsl
	printf '<xsl:stylesheet' >sheets/broken.xsl
	{ msg-wrap -H 'Sheet: broken.xsl' order.xml; msg-wrap -H 'Sheet: ok.xsl' order.xml; } >in.msg
	msg-translate --xslt-header Sheet --allow-read sheets --invalid bad.msg in.msg >out.msg
	[ "$(msg-unwrap out.msg)" = 'ok 42' ]
	[[ $(hval bad.msg Error) == "msg-translate: cannot compile '$PWD/sheets/broken.xsl': "* ]]
}

# ---- usage ----

@test "errors: a -p expression that does not compile exits 64 before reading input" {
	run -64 --separate-stderr msg-translate -x ok.xsl -p 'p=(' --invalid bad.msg order.msg
	[ "$stderr" = "msg-translate: invalid parameter 'p=(': Invalid expression" ]
	[ -z "$output" ]
	[ ! -e bad.msg ]
	# An expression that compiles is evaluated against each document.
	msg-translate -x ok.xsl -p 'p=(1 + 2)' -p 'q=document("x")' order.msg >out.msg
	[ "$(msg-unwrap out.msg)" = 'ok 42' ]
}

@test "errors: usage errors exit 64 with the usage" {
	local args
	while IFS= read -r args; do
		eval "run -64 --separate-stderr msg-translate $args </dev/null"
		[[ ${stderr_lines[0]} == 'msg-translate: '* ]]
	done <<-'EOF'
	--to yaml
	--format --compact
	-p n=1
	-s n=x --to json
	--allow-read .
	--xslt-header Sheet
	--xslt-header 'Bad Name' --allow-read .
	--set 'X'
	--set 'Bad Name=1'
	--set 'X=/a['
	--set 'X=nosuchfunction()'
	--unset 'a b'
	--rename A
	--rename A=
	-H 'no colon'
	-x ok.xsl -p novalue
	-x ok.xsl -p 'p=('
	-x ok.xsl -p 'p=1 +'
	--encoding no-such-charset
	--allow-read no-such-dir -x ok.xsl
	EOF
}

@test "errors: a truncated body is reported as truncated" {
	printf '<orders><order id="3">' >half.xml
	msg-wrap -H 'Message-Id: H' half.xml >in.msg
	local args
	for args in '-x ok.xsl' '--to json'; do
		# shellcheck disable=SC2086
		run -65 --separate-stderr msg-translate $args in.msg
		[ "$stderr" = "msg-translate: in.msg: message 1 (Message-Id H): body is not XML: line 1: truncated: the document ends inside element 'order'" ]
		[ -z "$output" ]
	done
}

# ---- the machine's faults ----

@test "errors: out of memory parsing a body is exit 70 and the message stays for a retry" {
	skip_without_memory_limits
	spool_of_big_xml
	runs_out_of_memory msg-translate -x ok.xsl
	runs_out_of_memory msg-translate -x ok.xsl --invalid inv.msg
	runs_out_of_memory msg-translate --to json --invalid inv.msg
}
