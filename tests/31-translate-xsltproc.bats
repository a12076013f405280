#!/usr/bin/env bats
# msg-translate against xsltproc: for every stylesheet/document pair in
# fixtures/xslt, the body msg-translate writes equals what xsltproc
# prints, byte for byte (output methods, encodings, keys, modes, named
# templates, sorting, numbering, EXSLT, namespaces, whitespace).

load test_helper
bats_require_minimum_version 1.5.0

CORPUS="$FIXTURES/xslt"

# same_as_xsltproc CASE: run both on CASE.xsl and CASE.xml and compare.
same_as_xsltproc() {
	local c=$1 kind name value
	local ours=() theirs=()

	if [ -f "$CORPUS/$c.params" ]; then
		while read -r kind name value; do
			case $kind in
			s) ours+=(-s "$name=$value"); theirs+=(--stringparam "$name" "$value") ;;
			p) ours+=(-p "$name=$value"); theirs+=(--param "$name" "$value") ;;
			o) ours+=("$name") ;;
			esac
		done <"$CORPUS/$c.params"
	fi
	# The corpus is read where it lies: imports, document() and DTDs
	# are relative to it.
	cd "$CORPUS" || return 1
	xsltproc --nonet "${theirs[@]}" "$c.xsl" "$c.xml" >"$BATS_TEST_TMPDIR/want"
	msg-wrap "$c.xml" >"$BATS_TEST_TMPDIR/in.msg"
	msg-translate -x "$c.xsl" "${ours[@]}" "$BATS_TEST_TMPDIR/in.msg" \
		>"$BATS_TEST_TMPDIR/out.msg" 2>"$BATS_TEST_TMPDIR/err"
	[ ! -s "$BATS_TEST_TMPDIR/err" ]
	msg-unwrap "$BATS_TEST_TMPDIR/out.msg" >"$BATS_TEST_TMPDIR/got"
	cmp "$BATS_TEST_TMPDIR/want" "$BATS_TEST_TMPDIR/got"
	# Only one case has an empty result on purpose.
	[ -s "$BATS_TEST_TMPDIR/want" ] || [ "$c" = 39-empty-result ]
}

@test "xsltproc: the corpus has at least 30 pairs, and each has a test here" {
	local x c n=0
	for x in "$CORPUS"/[0-9]*.xsl; do
		c=$(basename "$x" .xsl)
		[ -f "$CORPUS/$c.xml" ]
		grep -q "same_as_xsltproc $c;" "$BATS_TEST_FILENAME"
		n=$((n + 1))
	done
	[ "$n" -ge 30 ]
}

@test "xsltproc: 01 identity (comments, PIs, namespaces, attributes)" { same_as_xsltproc 01-identity; }
@test "xsltproc: 02 xml output, indented" { same_as_xsltproc 02-output-indent; }
@test "xsltproc: 03 html output with doctype, void and boolean attributes" { same_as_xsltproc 03-output-html; }
@test "xsltproc: 04 text output" { same_as_xsltproc 04-output-text; }
@test "xsltproc: 05 omit-xml-declaration" { same_as_xsltproc 05-omit-declaration; }
@test "xsltproc: 06 standalone and doctype-system" { same_as_xsltproc 06-standalone; }
@test "xsltproc: 07 ISO-8859-1 input" { same_as_xsltproc 07-input-latin1; }
@test "xsltproc: 08 ISO-8859-1 output with character references" { same_as_xsltproc 08-output-latin1; }
@test "xsltproc: 09 UTF-16 output" { same_as_xsltproc 09-output-utf16; }
@test "xsltproc: 10 text output in ISO-8859-1" { same_as_xsltproc 10-text-latin1; }
@test "xsltproc: 11 keys" { same_as_xsltproc 11-keys; }
@test "xsltproc: 12 Muenchian grouping" { same_as_xsltproc 12-grouping; }
@test "xsltproc: 13 modes" { same_as_xsltproc 13-modes; }
@test "xsltproc: 14 named templates and recursion" { same_as_xsltproc 14-named-templates; }
@test "xsltproc: 15 sorting" { same_as_xsltproc 15-sorting; }
@test "xsltproc: 16 numbering" { same_as_xsltproc 16-numbering; }
@test "xsltproc: 17 format-number and arithmetic" { same_as_xsltproc 17-format-number; }
@test "xsltproc: 18 EXSLT common" { same_as_xsltproc 18-exslt-common; }
@test "xsltproc: 19 EXSLT math" { same_as_xsltproc 19-exslt-math; }
@test "xsltproc: 20 EXSLT sets" { same_as_xsltproc 20-exslt-sets; }
@test "xsltproc: 21 EXSLT strings" { same_as_xsltproc 21-exslt-strings; }
@test "xsltproc: 22 EXSLT dates and times" { same_as_xsltproc 22-exslt-dates; }
@test "xsltproc: 23 EXSLT functions" { same_as_xsltproc 23-exslt-functions; }
@test "xsltproc: 24 EXSLT dynamic" { same_as_xsltproc 24-exslt-dynamic; }
@test "xsltproc: 25 namespaces" { same_as_xsltproc 25-namespaces; }
@test "xsltproc: 26 namespace-alias" { same_as_xsltproc 26-namespace-alias; }
@test "xsltproc: 27 strip-space and preserve-space" { same_as_xsltproc 27-strip-space; }
@test "xsltproc: 28 escaping, CDATA and disable-output-escaping" { same_as_xsltproc 28-escaping; }
@test "xsltproc: 29 attribute sets and computed names" { same_as_xsltproc 29-attribute-sets; }
@test "xsltproc: 30 import and include" { same_as_xsltproc 30-import-include; }
@test "xsltproc: 31 document()" { same_as_xsltproc 31-document; }
@test "xsltproc: 32 parameters" { same_as_xsltproc 32-params; }
@test "xsltproc: 33 comments and processing instructions" { same_as_xsltproc 33-comments-pi; }
@test "xsltproc: 34 html chosen by an html root" { same_as_xsltproc 34-html-default; }
@test "xsltproc: 35 internal entities" { same_as_xsltproc 35-entities; }
@test "xsltproc: 36 unicode beyond the BMP" { same_as_xsltproc 36-unicode; }
@test "xsltproc: 37 axes, id() and lang()" { same_as_xsltproc 37-node-tests; }
@test "xsltproc: 38 system properties and fallback" { same_as_xsltproc 38-system; }
@test "xsltproc: 39 an empty result" { same_as_xsltproc 39-empty-result; }
@test "xsltproc: 40 built-in template rules" { same_as_xsltproc 40-text-nodes; }
@test "xsltproc: 41 xsl:output from an imported stylesheet" { same_as_xsltproc 41-import-output; }
@test "xsltproc: 42 html in ISO-8859-1" { same_as_xsltproc 42-html-latin1; }
@test "xsltproc: 43 external DTD with --load-dtd" { same_as_xsltproc 43-external-dtd; }
@test "xsltproc: 44 a stylesheet's own DTD and its entities" { same_as_xsltproc 44-stylesheet-entities; }

# DocBook XSL is a stylesheet set: html/docbook.xsl includes ../VERSION.xsl,
# ../lib/lib.xsl and ../common/*.xsl, autoidx.xsl takes entities from
# its DTD, and l10n.xsl reads ../common/*.xml with document().
DOCBOOK_XSL=/usr/share/xml/docbook/stylesheet/docbook-xsl/html/docbook.xsl
DOCBOOK_EXAMPLES=/usr/share/doc/docbook-xml/examples

@test "xsltproc: DocBook XSL on the DocBook XML examples, as xsltproc --nonet" {
	[ -f "$DOCBOOK_XSL" ] || skip "package docbook-xsl is not installed"
	[ -d "$DOCBOOK_EXAMPLES" ] || skip "package docbook-xml is not installed"
	local v
	for v in 4.2 4.5; do
		xsltproc --nonet "$DOCBOOK_XSL" "$DOCBOOK_EXAMPLES/test-$v.xml" >want
		msg-wrap "$DOCBOOK_EXAMPLES/test-$v.xml" >in.msg
		msg-translate --load-dtd -x "$DOCBOOK_XSL" in.msg >out.msg 2>err
		[ ! -s err ]
		msg-unwrap out.msg >got
		cmp want got
		grep -q '<title>foo</title>' got
	done
}
