#!/usr/bin/env bats
# The frame reader's faults, through msg-unwrap: every framing error exits
# 65 with one exact diagnostic, after everything from the frames before it
# has been written. Inputs live in fixtures/frames/<case>.in, the bodies
# expected on stdout before the fault in <case>.expect (none: no output).

load test_helper
bats_require_minimum_version 1.5.0

FRAMES="$FIXTURES/frames"

# fault CASE DIAGNOSTIC: msg-unwrap on CASE.in exits 65 with exactly
# DIAGNOSTIC on stderr and exactly CASE.expect (or nothing) on stdout.
fault() {
	local case=$1 diag=$2
	run -65 --separate-stderr msg-unwrap --output out.bin <"$FRAMES/$case.in"
	[ "$stderr" = "$diag" ]
	[ -z "$output" ]
	if [ -f "$FRAMES/$case.expect" ]; then
		cmp out.bin "$FRAMES/$case.expect"
	else
		[ ! -s out.bin ]
	fi
}

# block N: a frame whose header block is exactly N bytes, blank line included.
block() {
	local pad=$(($1 - 23))
	printf 'X: '
	head -c "$pad" /dev/zero | tr '\0' a
	printf '\nContent-Length: 1\n\nx\n'
}

@test "frame: a well-formed stream with CRLF header lines is accepted" {
	run -0 --separate-stderr msg-unwrap --output out.bin <"$FRAMES/crlf.in"
	[ -z "$stderr" ]
	cmp out.bin "$FRAMES/crlf.expect"
}

@test "frame: CRLF header lines are read as LF lines with trimmed values" {
	run -0 msg-unwrap -H <"$FRAMES/crlf.in"
	[ "$output" = "Message-Id: crlf-1
Content-Type: text/plain
Content-Length: 5

Message-Id: lf-2
Content-Length: 0

X-Mixed: yes
Content-Length: 6" ]
	msg-unwrap -H <"$FRAMES/crlf.in" >headers.txt
	! grep -q $'\r' headers.txt
}

@test "frame: empty input is a clean end of stream" {
	run -0 --separate-stderr msg-unwrap --output out.bin </dev/null
	[ -z "$stderr" ]
	[ ! -s out.bin ]
}

@test "frame: missing Content-Length" {
	fault missing-length \
		"msg-unwrap: stdin: offset 38: missing Content-Length (Message-Id m2)"
}

@test "frame: an empty header block has no Content-Length" {
	fault empty-block "msg-unwrap: stdin: offset 22: missing Content-Length"
}

@test "frame: non-numeric Content-Length" {
	fault length-alpha "msg-unwrap: stdin: offset 0: invalid Content-Length '12a'"
}

@test "frame: negative Content-Length" {
	fault length-negative "msg-unwrap: stdin: offset 0: invalid Content-Length '-5'"
}

@test "frame: Content-Length with a plus sign" {
	fault length-plus "msg-unwrap: stdin: offset 0: invalid Content-Length '+5'"
}

@test "frame: empty Content-Length" {
	fault length-empty "msg-unwrap: stdin: offset 0: invalid Content-Length ''"
}

@test "frame: Content-Length too large for 64 bits" {
	printf 'Content-Length: 99999999999999999999\n\nx\n' >big-length.in
	run -65 --separate-stderr msg-unwrap <big-length.in
	[ "$stderr" = "msg-unwrap: stdin: offset 0: invalid Content-Length '99999999999999999999'" ]
	[ -z "$output" ]
}

@test "frame: two different Content-Length headers" {
	fault length-conflict "msg-unwrap: stdin: offset 18: conflicting Content-Length headers"
}

# What is written of the truncated body itself is the business of the
# "emits none of its body" test below; these check the diagnostic and that
# the good frame before it came out.
@test "frame: length past end of input names the offset and Message-Id" {
	run -65 --separate-stderr msg-unwrap <"$FRAMES/truncated-body.in"
	[ "$stderr" = "msg-unwrap: stdin: offset 83: truncated frame: end of input after 10 of 100 body bytes (Message-Id t2)" ]
	[[ $output == ok* ]]
}

@test "frame: length past end of input without a Message-Id" {
	run -65 --separate-stderr msg-unwrap <"$FRAMES/truncated-noid.in"
	[ "$stderr" = "msg-unwrap: stdin: offset 53: truncated frame: end of input after 10 of 100 body bytes" ]
	[[ $output == ok* ]]
}

@test "frame: end of input right after the body, before its LF" {
	fault truncated-lf \
		"msg-unwrap: stdin: offset 60: truncated frame: end of input before the LF that ends the frame (Message-Id t3)"
}

@test "frame: byte after the body is not LF (length too short)" {
	fault mismatch-short \
		"msg-unwrap: stdin: offset 60: Content-Length mismatch: byte after the 4-byte body is not LF (Message-Id s1)"
}

@test "frame: byte after the body is not LF (length too long)" {
	fault mismatch-long \
		"msg-unwrap: stdin: offset 23: Content-Length mismatch: byte after the 4-byte body is not LF"
}

@test "frame: header line without colon" {
	fault no-colon "msg-unwrap: stdin: offset 22: header line without colon"
}

@test "frame: invalid header name" {
	fault bad-name "msg-unwrap: stdin: offset 22: invalid header name 'Bad Name'"
}

@test "frame: header names may be 256 bytes, not 257" {
	local n256 n257
	n256=$(head -c 256 /dev/zero | tr '\0' n)
	n257=$(head -c 257 /dev/zero | tr '\0' n)
	printf 'Content-Length: 1\n%s: v\n\nx\n' "$n256" >ok.in
	run -0 msg-unwrap -H <ok.in
	[ "$output" = "Content-Length: 1
$n256: v" ]
	{ cat ok.in; printf '%s: v\nContent-Length: 1\n\ny\n' "$n257"; } >long.in
	run -65 --separate-stderr msg-unwrap <long.in
	# The diagnostic quotes at most 64 bytes of the name.
	[ "$stderr" = "msg-unwrap: stdin: offset 281: invalid header name '$(head -c 64 /dev/zero | tr '\0' n)'" ]
	[ "$output" = "x" ]
}

@test "frame: CR inside a header value" {
	fault value-cr "msg-unwrap: stdin: offset 22: invalid byte in value of header 'X-Value'"
}

@test "frame: NUL inside a header value" {
	printf 'Content-Length: 1\nX-Value: a\0b\n\nx\n' >nul.in
	run -65 --separate-stderr msg-unwrap <nul.in
	[ "$stderr" = "msg-unwrap: stdin: offset 18: invalid byte in value of header 'X-Value'" ]
	[ -z "$output" ]
}

@test "frame: end of input inside a header block" {
	printf 'Content-Length: 2\n\nok\nContent-Le' >eof.in
	run -65 --separate-stderr msg-unwrap --output out.bin <eof.in
	[ "$stderr" = "msg-unwrap: stdin: offset 32: truncated frame: end of input in the header block" ]
	[ "$(cat out.bin)" = "ok" ]
}

@test "frame: end of input inside a header block names the Message-Id read" {
	fault header-eof \
		"msg-unwrap: stdin: offset 47: truncated frame: end of input in the header block (Message-Id e1)"
}

@test "frame: a header block of exactly 64 KiB is accepted" {
	block 65536 >max.in
	[ "$(stat -c %s max.in)" -eq 65538 ]
	run -0 --separate-stderr msg-unwrap <max.in
	[ "$output" = "x" ]
	[ -z "$stderr" ]
}

@test "frame: header block over 64 KiB" {
	block 65537 >over.in
	run -65 --separate-stderr msg-unwrap <over.in
	[ "$stderr" = "msg-unwrap: stdin: offset 0: header block over 64 KiB" ]
	[ -z "$output" ]
}

@test "frame: header block over 64 KiB with no line end at all" {
	{ printf 'Content-Length: 2\n\nok\nX: '; head -c 200000 /dev/zero | tr '\0' a; } >huge.in
	run -65 --separate-stderr msg-unwrap --output out.bin <huge.in
	[ "$stderr" = "msg-unwrap: stdin: offset 22: header block over 64 KiB" ]
	[ "$(cat out.bin)" = "ok" ]
}

@test "frame: raw XML piped in gets the msg-wrap hint" {
	fault raw-xml \
		"msg-unwrap: stdin: offset 88: truncated frame: end of input in the header block; not a message stream; wrap raw data with msg-wrap"
}

@test "frame: raw XML with a namespace prefix and a blank line gets the hint" {
	fault raw-xml-ns \
		"msg-unwrap: stdin: offset 0: invalid header name '<orders xmlns'; not a message stream; wrap raw data with msg-wrap"
}

@test "frame: raw XML with a byte order mark gets the hint" {
	fault raw-bom \
		"msg-unwrap: stdin: offset 8: truncated frame: end of input in the header block; not a message stream; wrap raw data with msg-wrap"
}

@test "frame: raw JSON piped in gets the msg-wrap hint" {
	fault raw-json \
		"msg-unwrap: stdin: offset 37: truncated frame: end of input in the header block; not a message stream; wrap raw data with msg-wrap"
}

@test "frame: a raw JSON array piped in gets the msg-wrap hint" {
	fault raw-json-array \
		"msg-unwrap: stdin: offset 0: header line without colon; not a message stream; wrap raw data with msg-wrap"
}

@test "frame: raw text piped in gets the msg-wrap hint" {
	fault raw-text \
		"msg-unwrap: stdin: offset 0: header line without colon; not a message stream; wrap raw data with msg-wrap"
}

@test "frame: the same fault later in a stream gets no hint" {
	{ frame ok; cat "$FRAMES/raw-xml.in"; } >late.in
	run -65 --separate-stderr msg-unwrap <late.in
	[ "$stderr" = "msg-unwrap: stdin: offset 110: truncated frame: end of input in the header block" ]
	[ "$output" = "ok" ]
}

@test "frame: the diagnostic names the input operand" {
	frame one >good.msg
	run -65 --separate-stderr msg-unwrap good.msg "$FRAMES/length-alpha.in"
	[ "$stderr" = "msg-unwrap: $FRAMES/length-alpha.in: offset 0: invalid Content-Length '12a'" ]
	[ "$output" = "one" ]
}

@test "frame: a missing input operand exits 66" {
	frame one >good.msg
	run -66 --separate-stderr msg-unwrap good.msg missing.msg
	[ "$stderr" = "msg-unwrap: cannot open 'missing.msg': No such file or directory" ]
	[ "$output" = "one" ]
}

@test "frame: every frame before a fault is written before the exit" {
	# Far more than one output buffer's worth, so a lost flush shows.
	awk 'BEGIN {
		pad = sprintf("%0200d", 0)
		for (i = 1; i <= 3000; i++) {
			b = sprintf("body-%04d-%s", i, pad)
			printf "Content-Length: %d\n\n%s\n", length(b), b >"many.msg"
			printf "%s", b >"expect.bin"
		}
	}'
	[ "$(stat -c %s expect.bin)" = 630000 ]
	{ cat many.msg; printf 'Content-Type: text/plain\n\nlost\n'; } >bad.msg
	run -65 --separate-stderr msg-unwrap --output out.bin bad.msg
	[ "$stderr" = "msg-unwrap: bad.msg: offset $(stat -c %s many.msg): missing Content-Length" ]
	cmp out.bin expect.bin
}

@test "frame: every file before a fault is written by msg-unwrap -d" {
	mkdir out
	{ frame A 'File-Name: a.txt'; frame B 'File-Name: b.txt'; printf 'Content-Length: 1\n\nCD\n'; } >bad.msg
	run -65 --separate-stderr msg-unwrap -d out bad.msg
	[ "$stderr" = "msg-unwrap: bad.msg: offset 96: Content-Length mismatch: byte after the 1-byte body is not LF" ]
	[ "$(ls -A out | tr '\n' ' ')" = "a.txt b.txt " ]
	[ "$(cat out/a.txt)" = A ] && [ "$(cat out/b.txt)" = B ]
}

@test "frame: a truncated frame that fits in memory emits none of its body" {
	# As with a wrong Content-Length, nothing of a frame known to be bad is
	# written: the output ends with the last good body.
	fault truncated-body \
		"msg-unwrap: stdin: offset 83: truncated frame: end of input after 10 of 100 body bytes (Message-Id t2)"
	[ "$(cat out.bin)" = ok ]
}

@test "frame: a header block that arrives in pieces is parsed whole" {
	# Each piece is read on its own; a read ending just before a header
	# line's LF must not look like the blank line that ends the block.
	{
		sleep 0.2
		printf 'Message-Id: p1\nX-Split: a'
		sleep 0.3
		printf '\nContent-Length: 5\n\nhello\n'
	} | msg-unwrap -H >out.txt
	[ "$(cat out.txt)" = "Message-Id: p1
X-Split: a
Content-Length: 5" ]
}

@test "frame: a CRLF header block that arrives in pieces is parsed whole" {
	{
		sleep 0.2
		printf 'Message-Id: p2\r\nX-Split: a'
		sleep 0.3
		printf '\r\nContent-Length: 2\r\n\r\nhi\n'
	} | msg-unwrap >out.txt
	[ "$(cat out.txt)" = hi ]
}

@test "frame: a body that arrives in pieces is passed through whole" {
	{
		printf 'Content-Length: 10\n\nhello'
		sleep 0.3
		printf ' you\n'
		sleep 0.3
		printf '\n'
	} | msg-unwrap >out.txt
	[ "$(cat out.txt)" = "hello you" ]
}

# ---- control bytes in diagnostics ----

@test "frame: control bytes in a quoted header name are escaped" {
	printf 'Bad\033[31mName\a: x\nContent-Length: 0\n\n\n' >esc.in
	run -65 --separate-stderr msg-unwrap <esc.in
	[ "$stderr" = 'msg-unwrap: stdin: offset 0: invalid header name '\''Bad\x1b[31mName\x07'\''; not a message stream; wrap raw data with msg-wrap' ]
}

@test "frame: control bytes in a quoted Content-Length are escaped" {
	printf 'Content-Length: 1\033]0;x\a\n\nx\n' >esc.in
	run -65 --separate-stderr msg-unwrap <esc.in
	[ "$stderr" = 'msg-unwrap: stdin: offset 0: invalid Content-Length '\''1\x1b]0;x\x07'\''' ]
}

@test "frame: control bytes in file names and Message-Ids are escaped" {
	run -66 --separate-stderr msg-unwrap "$(printf 'no\033[2Jsuch')"
	[ "$stderr" = 'msg-unwrap: cannot open '\''no\x1b[2Jsuch'\'': No such file or directory' ]
	printf 'Message-Id: a\033c\nContent-Length: 5\n\nab' >cut.in
	run -65 --separate-stderr msg-unwrap <cut.in
	[ "$stderr" = 'msg-unwrap: stdin: offset 37: truncated frame: end of input after 2 of 5 body bytes (Message-Id a\x1bc)' ]
	# C1 controls in UTF-8 (U+009B, a CSI on some terminals) too; other UTF-8 stays.
	run -66 --separate-stderr msg-wrap "$(printf 'caf\303\251\302\233x')"
	[ "$stderr" = "msg-wrap: cannot open 'café\\xc2\\x9bx': No such file or directory" ]
}
