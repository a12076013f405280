#!/usr/bin/env bats
# The frame reader's faults, through msg-unwrap: every framing error exits
# 65 with one exact diagnostic, after everything from the frames before it
# has been written. Then the writers' side of the header-block limit: no
# tool writes a block a reader would refuse. Inputs live in fixtures/frames/<case>.in, the bodies
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
	run -1 grep -q $'\r' headers.txt
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
	[ "$(cat out/a.txt)" = A ]
	[ "$(cat out/b.txt)" = B ]
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

# ---- the header-block limit on the writers' side ----

# as N: N bytes of the letter a.
as() {
	head -c "$1" /dev/zero | tr '\0' a
}

# block_sizes FILE: the size of each header block in FILE, blank line
# included, one a line (msg-unwrap -H shows them as written).
block_sizes() {
	msg-unwrap -H "$1" | awk '{ n += length($0) + 1 } /^$/ { print n; n = 0 }'
}

@test "frame limit: msg-wrap -H over the limit on its own is a usage error" {
	printf 'data' >f
	run -64 --separate-stderr msg-wrap -H "X: $(as 70000)" f
	[ "${stderr_lines[0]}" = "msg-wrap: -H: header block over 64 KiB (70023 bytes): header 'X' is 70003 bytes" ]
	[[ ${stderr_lines[1]} == "usage: msg-wrap "* ]]
	[ -z "$output" ]
}

@test "frame limit: msg-wrap -H that makes a message too big makes it invalid" {
	printf 'data' >f
	run -65 --separate-stderr msg-wrap -H "X: $(as 65420)" f
	[ "$stderr" = "msg-wrap: f: header block over 64 KiB (65566 bytes): header 'X' is 65423 bytes" ]
	[ -z "$output" ]
	run -0 --separate-stderr msg-wrap --invalid bad.msg -H "X: $(as 65420)" f
	[ -z "$output" ]
	id=$(msg-unwrap -H bad.msg | sed -n 's/^Message-Id: //p')
	[ "$stderr" = "msg-wrap: warning: message $id: File-Name f: f: header block over 64 KiB (65566 bytes): header 'X' is 65423 bytes: diverted to 'bad.msg'" ]
	run -0 msg-unwrap -H bad.msg
	[ "$(printf '%s\n' "$output" | grep -v -E '^(Message-Id|Timestamp): ')" = "File-Name: f
Content-Type: text/plain
Error: msg-wrap: f: header block over 64 KiB (65566 bytes): header 'X' is 65423 bytes
Content-Length: 4" ]
	[ "$(msg-unwrap bad.msg)" = data ]
}

@test "frame limit: msg-wrap -e with a header too big diverts the line and goes on" {
	{
		printf '%s\n' '{"body":"one"}'
		printf '{"headers":{"X":"%s"},"body":"two"}\n' "$(as 70000)"
		printf '%s\n' '{"body":"three"}'
	} >env.jsonl
	run -65 --separate-stderr msg-wrap -e --output out.msg env.jsonl
	[ "$stderr" = "msg-wrap: env.jsonl: line 2: header block over 64 KiB (70133 bytes): header 'X' is 70003 bytes" ]
	[ "$(msg-unwrap out.msg)" = one ]
	run -0 --separate-stderr msg-wrap -e --invalid bad.msg --output good.msg env.jsonl
	[ "${#stderr_lines[@]}" = 1 ]
	[[ $stderr == "msg-wrap: warning: message "*": env.jsonl: line 2: header block over 64 KiB (70133 bytes): header 'X' is 70003 bytes: diverted to 'bad.msg'" ]]
	run -0 msg-unwrap -s '|' good.msg
	[ "$output" = "one|three" ]
	msg-unwrap bad.msg >line
	sed -n 2p env.jsonl | head -c -1 | cmp - line
	[ "$(msg-unwrap -H bad.msg | grep -E '^(Content-Type|Error): ')" = "Content-Type: application/json
Error: msg-wrap: env.jsonl: line 2: header block over 64 KiB (70133 bytes): header 'X' is 70003 bytes" ]
}

@test "frame limit: msg-split -H values too big make the parent invalid" {
	{ printf '<r><i>'; as 70000; printf '</i></r>'; } >big.xml
	printf '<r><i>x</i><i>y</i></r>' >small.xml
	msg-wrap big.xml small.xml >in.msg
	run -65 --separate-stderr msg-split -x //i -H 'Big=string(.)' --output out.msg in.msg
	id=$(msg-unwrap -H in.msg | sed -n '1s/^Message-Id: //p')
	[ "$stderr" = "msg-split: in.msg: message 1 (Message-Id $id): header block over 64 KiB (70271 bytes): header 'Big' is 70005 bytes" ]
	[ ! -s out.msg ]
	run -0 --separate-stderr msg-split -x //i -H 'Big=string(.)' --invalid bad.msg --output good.msg in.msg
	[ "$stderr" = "msg-split: warning: message $id: File-Name big.xml: header block over 64 KiB (70271 bytes): header 'Big' is 70005 bytes: diverted to 'bad.msg'" ]
	run -0 msg-unwrap -s '|' good.msg
	[ "$output" = "<i>x</i>|<i>y</i>" ]
	msg-unwrap bad.msg | cmp - big.xml
	[ "$(msg-unwrap -H bad.msg | grep '^Error: ')" = "Error: msg-split: header block over 64 KiB (70271 bytes): header 'Big' is 70005 bytes" ]
}

@test "frame limit: msg-translate --set values too big make the message invalid" {
	{ frame x 'Message-Id: m1'; frame "$(as 70000)" 'Message-Id: m2'; frame z 'Message-Id: m3'; } >in.msg
	run -65 --separate-stderr msg-translate --set 'Copy=string(.)' --output out.msg in.msg
	[ "$stderr" = "msg-translate: in.msg: message 2 (Message-Id m2): header block over 64 KiB (70045 bytes): header 'Copy' is 70006 bytes" ]
	run -0 --separate-stderr msg-translate --set 'Copy=string(.)' --invalid bad.msg --output good.msg in.msg
	[ "$stderr" = "msg-translate: warning: message m2: header block over 64 KiB (70045 bytes): header 'Copy' is 70006 bytes: diverted to 'bad.msg'" ]
	run -0 msg-unwrap -H good.msg
	[ "$output" = "Message-Id: m1
Copy: x
Content-Length: 1

Message-Id: m3
Copy: z
Content-Length: 1" ]
	run -0 msg-unwrap -H bad.msg
	[ "$output" = "Message-Id: m2
Error: msg-translate: header block over 64 KiB (70045 bytes): header 'Copy' is 70006 bytes
Content-Length: 70000" ]
	[ "$(msg-unwrap bad.msg)" = "$(as 70000)" ]
}

@test "frame limit: a Message-History that would not fit makes the message invalid" {
	{ frame x; frame y 'Message-Id: m2' "X: $(as 65480)"; frame z; } >in.msg
	[ "$(block_sizes in.msg | sed -n 2p)" = 65518 ]
	run -0 --separate-stderr env MSG_HISTORY=hop msg-route --when 'true()' --to out.msg \
		--invalid bad.msg in.msg
	[ "$stderr" = "msg-route: warning: message m2: header block over 64 KiB (65539 bytes): header 'X' is 65483 bytes: diverted to 'bad.msg'" ]
	run -0 msg-unwrap -s '|' out.msg
	[ "$output" = "x|z" ]
	# The invalid copy gets Message-History too: only without X does it fit.
	run -0 msg-unwrap -H bad.msg
	[ "$output" = "Message-Id: m2
Error: msg-route: header block over 64 KiB (65539 bytes): header 'X' is 65483 bytes; header 'X' of 65480 bytes dropped
Message-History: hop
Content-Length: 1" ]
}

@test "frame limit: msg-tap stops at a message Message-History would make too big" {
	{ frame x 'Message-Id: m1'; frame y 'Message-Id: m2' "X: $(as 65480)"; frame z; } >in.msg
	run -65 --separate-stderr env MSG_HISTORY=hop msg-tap --output out.msg tap.msg <in.msg
	[ "$stderr" = "msg-tap: stdin: message 2 (Message-Id m2): header block over 64 KiB (65539 bytes): header 'X' is 65483 bytes" ]
	# What came before is out, whole and readable, on both sides.
	[ "$(msg-unwrap out.msg)" = x ]
	[ "$(msg-unwrap tap.msg)" = x ]
}

@test "frame limit: an Error text is cut so the invalid message fits" {
	local name
	name=$(head -c 120 /dev/zero | tr '\0' N)
	{ frame y 'Message-Id: m1' "X: $(as 65380)"; frame z 'Message-Id: m2'; } >in.msg
	mkdir od
	run -0 --separate-stderr msg-unwrap -d od -n "{$name}" --invalid bad.msg in.msg
	[ "${stderr_lines[0]}" = "msg-unwrap: warning: message m1: no header '$name' for the file name: diverted to 'bad.msg'" ]
	[ "$(block_sizes bad.msg)" = "65536
204" ]
	run -0 msg-unwrap -H bad.msg
	[ "${lines[2]}" = "Error: msg-unwrap: no header '$(head -c 84 /dev/zero | tr '\0' N)..." ]
	[ "${lines[5]}" = "Error: msg-unwrap: no header '$name' for the file name" ]
	[ "$(msg-unwrap -s '|' bad.msg)" = "y|z" ]
}
