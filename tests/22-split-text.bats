#!/usr/bin/env bats
# msg-split on text: -l (lines, streamed) and -d REGEX (pieces between
# matches of a POSIX ERE, with or without --keep-delimiter), and -g.

load test_helper
bats_require_minimum_version 1.5.0
load fixtures/split/split

# pieces FILE: the bodies as JSON strings, one per line, so empty bodies,
# CR and NUL are visible.
pieces() {
	msg-unwrap -e "$1" | jq -c .body
}

# ---- -l ----

@test "split text: -l gives one child per line, empty lines included" {
	printf 'one\n\ntwo\n  three  \n' >in.txt
	msg-split -r -l in.txt >out.msg
	[ "$(pieces out.msg)" = '"one"
""
"two"
"  three  "' ]
	[ "$(hcol out.msg Content-Type | sort -u)" = text/plain ]
	[ "$(hcol out.msg Sequence-Number | tr '\n' ' ')" = '1 2 3 4 ' ]
}

@test "split text: -l takes a last line without LF as a line" {
	printf 'one\ntwo' | msg-split -r -l >out.msg
	[ "$(pieces out.msg)" = '"one"
"two"' ]
	[ "$(hv out.msg 2 Sequence-End)" = true ]
	printf 'alone' | msg-split -r -l >out.msg
	[ "$(pieces out.msg)" = '"alone"' ]
}

@test "split text: -l of a lone LF is one empty line, of nothing the marker" {
	printf '\n' | msg-split -r -l >out.msg
	[ "$(count out.msg)" = 1 ]
	[ "$(hv out.msg 1 Sequence-Number)" = 1 ]
	[ "$(pieces out.msg)" = '""' ]
	printf '\n\n' | msg-split -r -l >out.msg
	[ "$(pieces out.msg)" = '""
""' ]
	msg-split -r -l </dev/null >out.msg
	[ "$(count out.msg)" = 1 ]
	[ "$(hv out.msg 1 Sequence-Size)" = 0 ]
	[ "$(hv out.msg 1 Sequence-Number)" = '(absent)' ]
}

@test "split text: -l keeps CR and NUL bytes inside lines" {
	printf 'a\0b\nc\r\n\x80\xff\n' | msg-split -r -l >out.msg
	[ "$(pieces out.msg | head -n 2)" = '"a\u0000b"
"c\r"' ]
	printf '\x80\xff' >want
	each_body out.msg parts
	cmp want parts/3
}

@test "split text: -l streams, so Sequence-Size is on the last child" {
	printf 'a\nb\nc\n' | msg-wrap >in.msg
	msg-split -l in.msg >out.msg
	[ "$(hcol out.msg Sequence-Size | tr '\n' ' ')" = '(absent) (absent) 3 ' ]
	[ "$(hcol out.msg Sequence-End | tr '\n' ' ')" = '(absent) (absent) true ' ]
}

@test "split text: -l over a body read in many pieces loses no byte" {
	# Lines of varied length, one longer than any single read.
	perl -e 'for (1 .. 60000) { print "line $_ ", "x" x ($_ % 113), "\n" }
		print "L" x 600000, "\n", "end"' >in.txt
	msg-split -r -l in.txt >out.msg
	[ "$(count out.msg)" = 60002 ]
	bodies out.msg >got
	cmp in.txt got
	[ "$(hv out.msg 60002 Sequence-Size)" = 60002 ]
}

@test "split text: -l works on a framed body of any type" {
	msg-wrap "$SPLIT/orders.xml" >in.msg
	msg-split -l in.msg >out.msg
	[ "$(count out.msg)" = "$(wc -l <"$SPLIT/orders.xml")" ]
	[ "$(hcol out.msg Content-Type | sort -u)" = text/plain ]
	[ "$(body out.msg 2)" = '<orders region="north" batch="7">' ]
}

# ---- -d ----

@test "split text: -d splits at each match of the expression" {
	printf 'a;;b; c;' | msg-split -r -d ';+ *' >out.msg
	[ "$(pieces out.msg)" = '"a"
"b"
"c"' ]
	printf 'p1 l1\np1 l2\n\n\np2\n\n' | msg-split -r -d $'\n\n+' >out.msg
	[ "$(pieces out.msg)" = '"p1 l1\np1 l2"
"p2"' ]
	[ "$(hcol out.msg Content-Type | sort -u)" = text/plain ]
}

@test "split text: -d gives an empty first piece for a leading delimiter, none for a trailing one" {
	printf ';a;;b;' | msg-split -r -d ';' >out.msg
	[ "$(pieces out.msg)" = '""
"a"
""
"b"' ]
	printf ';' | msg-split -r -d ';' >out.msg
	[ "$(pieces out.msg)" = '""' ]
	printf 'no delimiter' | msg-split -r -d ';' >out.msg
	[ "$(pieces out.msg)" = '"no delimiter"' ]
	msg-split -r -d ';' </dev/null >out.msg
	[ "$(hv out.msg 1 Sequence-Size)" = 0 ]
}

@test "split text: --keep-delimiter leaves each delimiter at the end of its piece" {
	printf 'a;;b; c;' | msg-split -r -d ';+ *' --keep-delimiter >out.msg
	[ "$(pieces out.msg)" = '"a;;"
"b; "
"c;"' ]
	printf 'p1\n\n\np2\n\n' | msg-split -r -d $'\n\n+' --keep-delimiter >out.msg
	[ "$(pieces out.msg)" = '"p1\n\n\n"
"p2\n\n"' ]
	# Together the pieces are the body again.
	printf 'x=1&y=2&&z' >in.txt
	msg-split -r -d '&+' --keep-delimiter in.txt >out.msg
	msg-unwrap out.msg | cmp in.txt -
}

@test "split text: -d holds the whole body, so Sequence-Size is on every child" {
	printf 'a,b,c' | msg-split -r -d , >out.msg
	[ "$(hcol out.msg Sequence-Size | tr '\n' ' ')" = '3 3 3 ' ]
	[ "$(hcol out.msg Sequence-End | tr '\n' ' ')" = '(absent) (absent) true ' ]
}

@test "split text: -d handles NUL bytes and anchors" {
	printf 'a\0b;c' | msg-split -r -d ';' >out.msg
	[ "$(pieces out.msg)" = '"a\u0000b"
"c"' ]
	# ^ anchors at the start of the body only.
	printf 'xa;xb' | msg-split -r -d '^x' >out.msg
	[ "$(pieces out.msg)" = '""
"a;xb"' ]
}

@test "split text: a delimiter that matches the empty string is a usage error" {
	local re
	for re in 'a*' '' '^' 'x?' '(a|)'; do
		run -64 --separate-stderr msg-split -r -d "$re" </dev/null
		[ -z "$output" ]
		[ "$stderr" = "msg-split: delimiter '$re' matches the empty string" ]
	done
}

@test "split text: a bad regular expression is a usage error" {
	run -64 --separate-stderr msg-split -r -d '(' </dev/null
	[ -z "$output" ]
	[[ $stderr == "msg-split: invalid regular expression '(': "* ]]
	[ "${#stderr_lines[@]}" = 1 ]
}

@test "split text: --keep-delimiter without -d is a usage error" {
	run -64 --separate-stderr msg-split -l --keep-delimiter </dev/null
	[ -z "$output" ]
	[ "${stderr_lines[0]}" = "msg-split: --keep-delimiter needs -d" ]
	[[ ${stderr_lines[1]} == "usage: msg-split "* ]]
}

# ---- groups ----

@test "split text: -g joins lines with LF" {
	printf '1\n2\n3\n4\n5\n' | msg-split -r -l -g 2 >out.msg
	[ "$(pieces out.msg)" = '"1\n2"
"3\n4"
"5"' ]
	[ "$(hcol out.msg Sequence-Number | tr '\n' ' ')" = '1 2 3 ' ]
	[ "$(hv out.msg 3 Sequence-Size)" = 3 ]
	printf 'a\n\nb\n' | msg-split -r -l -g 3 >out.msg
	[ "$(pieces out.msg)" = '"a\n\nb"' ]
}

@test "split text: -g joins -d pieces with the delimiters between them" {
	printf 'a1b22c333' | msg-split -r -d '[0-9]+' -g 2 >out.msg
	[ "$(pieces out.msg)" = '"a1b"
"c"' ]
	[ "$(hcol out.msg Sequence-Size | tr '\n' ' ')" = '2 2 ' ]
	# Each child is a stretch of the body; kept delimiters are not doubled.
	printf 'a1b22c333d4444e' | msg-split -r -d '[0-9]+' -g 2 --keep-delimiter >out.msg
	[ "$(pieces out.msg)" = '"a1b22"
"c333d4444"
"e"' ]
	printf 'a; b;;c ;d;e' | msg-split -r -d ' *; *' -g 3 >out.msg
	[ "$(pieces out.msg)" = '"a; b;"
"c ;d;e"' ]
}
