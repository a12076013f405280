#!/usr/bin/env bats
# msg-unwrap: bodies to stdout with separators, to files in a directory
# (names, duplicates, unsafe names, atomicity), header blocks and JSON
# envelopes.

load test_helper
bats_require_minimum_version 1.5.0

# The frame helper counts characters; keep every count a byte count.
export LC_ALL=C

# listing DIR: the names in DIR, hidden ones too, on one line.
listing() {
	ls -A "$1" | tr '\n' ' '
}

# ---- bodies to stdout ----

@test "unwrap: bodies go to stdout one after another" {
	{ frame one; frame ''; frame 'two
'; frame three; } >in.msg
	msg-unwrap in.msg >out
	printf 'onetwo\nthree' | cmp - out
}

@test "unwrap: -s puts the separator between bodies only" {
	{ frame a; frame ''; frame b; } >in.msg
	msg-unwrap -s ', ' in.msg >out
	printf 'a, , b' | cmp - out
	frame alone | msg-unwrap --separator '|' >out
	printf 'alone' | cmp - out
	msg-unwrap -s '|' </dev/null >out
	[ ! -s out ]
}

@test "unwrap: -s takes C escapes" {
	local sep want
	{ frame a; frame b; } >in.msg
	while IFS='	' read -r sep want; do
		msg-unwrap -s "$sep" in.msg >out
		# shellcheck disable=SC2059 # the table writes bytes as printf escapes
		printf "a${want}b" | cmp - out
	done <<-'EOF'
	\n	\n
	\t	\t
	\r\n	\r\n
	\0	\0
	\\	\\
	\x41\x7e	A~
	\xff	\377
	--\0--	--\0--
	EOF
}

@test "unwrap: -s with a bad escape is a usage error" {
	local sep
	# shellcheck disable=SC1003 # 'end\' is a separator ending in a backslash
	for sep in '\q' '\x4' '\xZZ' 'end\'; do
		run -64 --separate-stderr msg-unwrap -s "$sep" </dev/null
		[ -z "$output" ]
		[ "${stderr_lines[0]}" = "msg-unwrap: invalid escape in separator '$sep'" ]
		[[ ${stderr_lines[1]} == "usage: msg-unwrap "* ]]
	done
}

@test "unwrap: several inputs are read in order, '-' is stdin" {
	frame one >1.msg
	frame three >3.msg
	frame two | msg-unwrap -s '|' 1.msg - 3.msg >out
	printf 'one|two|three' | cmp - out
}

@test "unwrap: --stats counts messages on stderr" {
	{ frame a; frame b; } >in.msg
	run -0 --separate-stderr msg-unwrap --stats in.msg
	[ "$output" = ab ]
	[ "$stderr" = "msg-unwrap: stats: in 2, out 2, invalid 0, expired 0" ]
}

# ---- -d: bodies to files ----

@test "unwrap: -d names files by File-Name, else Message-Id" {
	mkdir out
	{
		frame '<a/>' 'Message-Id: id-1' 'File-Name: orders.xml'
		frame 'by id' 'Message-Id: 0192f1d4-7b9e-7c31-9a55-2f4b8e61d0aa'
		frame 'empty name' 'Message-Id: id-3' 'File-Name: '
	} >in.msg
	run -0 --separate-stderr msg-unwrap -d out in.msg
	[ -z "$output" ]
	[ -z "$stderr" ]
	[ "$(listing out)" = "0192f1d4-7b9e-7c31-9a55-2f4b8e61d0aa id-3 orders.xml " ]
	printf '<a/>' | cmp - out/orders.xml
	printf 'by id' | cmp - out/0192f1d4-7b9e-7c31-9a55-2f4b8e61d0aa
	printf 'empty name' | cmp - out/id-3
}

@test "unwrap: -d writes bodies byte for byte, large and binary" {
	mkdir in out
	head -c 3000000 /dev/urandom >in/big.bin
	printf 'a\0b\xff' >in/small.bin
	: >in/empty.bin
	msg-wrap in/big.bin in/small.bin in/empty.bin | msg-unwrap --dir out
	diff -r in out
}

@test "unwrap: -n names files from a template of headers" {
	mkdir out
	{
		frame A 'Customer: acme' 'Order-Id: 7' 'File-Name: x.xml'
		frame B 'Customer: globex' 'Order-Id: 8'
	} >in.msg
	msg-unwrap -d out -n '{Customer}-{Order-Id}.xml' in.msg
	[ "$(listing out)" = "acme-7.xml globex-8.xml " ]
	[ "$(cat out/acme-7.xml)" = A ]
	[ "$(cat out/globex-8.xml)" = B ]
}

@test "unwrap: -n header names are case-insensitive, other text literal" {
	mkdir out
	frame A 'order-id: 7' | msg-unwrap -d out --name 'order {ORDER-ID} {not closed'
	[ "$(listing out)" = "order 7 {not closed " ]
}

@test "unwrap: duplicate names get .1, .2 after the name" {
	mkdir out
	{
		frame one 'File-Name: orders.xml'
		frame two 'File-Name: orders.xml'
		frame three 'File-Name: orders.xml'
		frame r1 'File-Name: README'
		frame r2 'File-Name: README'
	} >in.msg
	msg-unwrap -d out in.msg
	[ "$(listing out)" = "README README.1 orders.xml orders.xml.1 orders.xml.2 " ]
	[ "$(cat out/orders.xml)" = one ]
	[ "$(cat out/orders.xml.1)" = two ]
	[ "$(cat out/orders.xml.2)" = three ]
	[ "$(cat out/README.1)" = r2 ]
}

@test "unwrap: -d never overwrites an existing file" {
	mkdir out
	printf 'OLD' >out/orders.xml
	printf 'OLD1' >out/orders.xml.1
	{ frame new 'File-Name: orders.xml'; frame newer 'File-Name: orders.xml'; } >in.msg
	msg-unwrap -d out in.msg
	[ "$(cat out/orders.xml)" = OLD ]
	[ "$(cat out/orders.xml.1)" = OLD1 ]
	[ "$(cat out/orders.xml.2)" = new ]
	[ "$(cat out/orders.xml.3)" = newer ]
	# A second run finds the names taken by the first.
	msg-unwrap -d out in.msg
	[ "$(cat out/orders.xml.4)" = new ]
	[ "$(cat out/orders.xml.5)" = newer ]
	[ "$(listing out)" = "orders.xml orders.xml.1 orders.xml.2 orders.xml.3 orders.xml.4 orders.xml.5 " ]
}

@test "unwrap: -d never writes through a symlink in the directory" {
	mkdir out
	printf 'precious' >target
	ln -s ../target out/link.txt
	frame evil 'File-Name: link.txt' | msg-unwrap -d out
	[ "$(cat target)" = precious ]
	[ -L out/link.txt ]
	[ "$(cat out/link.txt.1)" = evil ]
}

@test "unwrap: unsafe File-Names land as safe names inside the directory" {
	mkdir -p root/top/sub/out
	cd root/top/sub
	{
		frame 1 'File-Name: ../../etc/x'
		frame 2 'File-Name: ..'
		frame 3 'File-Name: .'
		frame 4 'File-Name: .hidden'
		frame 5 'File-Name: a/b'
		frame 6 "File-Name: $BATS_TEST_TMPDIR/abs.txt"
		frame 7 'File-Name: ../escape.txt'
		frame 8 'File-Name: back\slash'
		frame 9 "File-Name: ctl$(printf '\001\033')x"
		frame 10 'File-Name: /'
	} >../in.msg
	run -0 --separate-stderr msg-unwrap -d out ../in.msg
	[ -z "$stderr" ]
	cd "$BATS_TEST_TMPDIR/root"
	# Nothing outside out/ but what the test made itself.
	[ "$(find . ! -path './top/sub/out/*' | sort | tr '\n' ' ')" = \
		". ./top ./top/in.msg ./top/sub ./top/sub/out " ]
	[ ! -e "$BATS_TEST_TMPDIR/abs.txt" ]
	# Ten plain files, none hidden, no control bytes in a name.
	[ "$(find top/sub/out -mindepth 1 -type f | wc -l)" = 10 ]
	[ "$(find top/sub/out -mindepth 1 ! -type f | wc -l)" = 0 ]
	[ "$(ls -A top/sub/out | grep -c '^\.')" = 0 ]
	[ "$(ls -A top/sub/out | LC_ALL=C grep -c '[[:cntrl:]]')" = 0 ]
	# Each body once: no message lost, none written twice.
	[ "$(for f in top/sub/out/*; do cat "$f"; echo; done | sort -n | tr '\n' ' ')" = \
		"1 2 3 4 5 6 7 8 9 10 " ]
}

@test "unwrap: a -n template that would leave the directory makes the message invalid" {
	mkdir -p root/top/out
	cd root
	frame body 'Customer: ../../pwned' 'Message-Id: m1' >in.msg
	run -65 --separate-stderr msg-unwrap -d top/out -n '{Customer}.xml' in.msg
	[ "$stderr" = "msg-unwrap: in.msg: message 1 (Message-Id m1): the file name '../../pwned.xml' holds '/'" ]
	[ "$(find . ! -path './top/out/*' | sort | tr '\n' ' ')" = ". ./in.msg ./top ./top/out " ]
	[ "$(ls -A top/out)" = "" ]
}

@test "unwrap: -d leaves no temporary files behind" {
	mkdir out
	for i in $(seq 1 50); do frame "body $i" "File-Name: f.txt"; done >in.msg
	msg-unwrap -d out in.msg
	[ "$(ls -A out | wc -l)" = 50 ]
	[ "$(ls -A out | grep -cv '^f\.txt\(\.[0-9]*\)\?$')" = 0 ]
}

@test "unwrap: -d leaves no temporary file when a frame is cut short" {
	mkdir out
	{ frame A 'File-Name: a.txt'; printf 'File-Name: b.txt\nContent-Length: 100\n\npartial'; } >in.msg
	run -65 --separate-stderr msg-unwrap -d out in.msg
	[ "$stderr" = "msg-unwrap: in.msg: offset 83: truncated frame: end of input after 7 of 100 body bytes" ]
	[ "$(listing out)" = "a.txt " ]
}

@test "unwrap: -n with a missing header makes the message invalid" {
	mkdir out
	{
		frame A 'Message-Id: m1' 'Order-Id: 1'
		frame B 'Message-Id: m2'
		frame C 'Message-Id: m3' 'Order-Id: 3'
	} >in.msg
	run -65 --separate-stderr msg-unwrap -d out -n 'order-{Order-Id}.txt' in.msg
	[ "$stderr" = "msg-unwrap: in.msg: message 2 (Message-Id m2): no header 'Order-Id' for the file name" ]
	[ "$(listing out)" = "order-1.txt " ]
}

@test "unwrap: -n with an empty header value makes the message invalid" {
	mkdir out
	frame A 'Order-Id: ' >in.msg
	run -65 --separate-stderr msg-unwrap -d out -n '{Order-Id}' <in.msg
	[ "$stderr" = "msg-unwrap: stdin: message 1: no header 'Order-Id' for the file name" ]
	[ "$(listing out)" = "" ]
}

@test "unwrap: -n with a missing header goes to --invalid and on" {
	mkdir out
	{
		frame A 'Message-Id: m1' 'Order-Id: 1'
		frame B 'Message-Id: m2'
		frame C 'Message-Id: m3' 'Order-Id: 3'
	} >in.msg
	run -0 --separate-stderr msg-unwrap -d out -n 'order-{Order-Id}.txt' --invalid bad.msg in.msg
	[ "$stderr" = "msg-unwrap: warning: message m2: no header 'Order-Id' for the file name: diverted to 'bad.msg'" ]
	[ "$(listing out)" = "order-1.txt order-3.txt " ]
	msg-unwrap -H bad.msg >h
	[ "$(cat h)" = "Message-Id: m2
Error: msg-unwrap: no header 'Order-Id' for the file name
Content-Length: 1" ]
	[ "$(msg-unwrap bad.msg)" = B ]
}

@test "unwrap: -d without File-Name or Message-Id is invalid" {
	mkdir out
	{ frame A 'File-Name: a'; frame B 'Content-Type: text/plain'; } >in.msg
	run -65 --separate-stderr msg-unwrap -d out in.msg
	[ "$stderr" = "msg-unwrap: in.msg: message 2: no File-Name or Message-Id for the file name" ]
	[ "$(listing out)" = "a " ]
}

@test "unwrap: -n needs -d; -d, -e and -H exclude each other" {
	run -64 --separate-stderr msg-unwrap -n '{X}' </dev/null
	[ "${stderr_lines[0]}" = "msg-unwrap: -n needs -d" ]
	[ -z "$output" ]
	run -64 --separate-stderr msg-unwrap -e -H </dev/null
	[ "${stderr_lines[0]}" = "msg-unwrap: -d, -e and -H cannot be combined" ]
	run -64 --separate-stderr msg-unwrap -d . -e </dev/null
	[ "${stderr_lines[0]}" = "msg-unwrap: -d, -e and -H cannot be combined" ]
	[[ ${stderr_lines[1]} == "usage: msg-unwrap "* ]]
}

@test "unwrap: unknown options exit 64 with usage" {
	run -64 --separate-stderr msg-unwrap --bogus </dev/null
	[ -z "$output" ]
	[ "${stderr_lines[0]}" = "msg-unwrap: unknown option '--bogus'" ]
	[ "${stderr_lines[1]}" = "usage: msg-unwrap [-s separator] [--output channel] [input ...]" ]
	[ "${#stderr_lines[@]}" = 6 ]
}

# ---- -H and -e ----

@test "unwrap: -H prints the header blocks only" {
	{
		frame 'body one' 'Message-Id: m1' 'Content-Type: text/plain'
		frame '' 'X-Empty: '
		frame 'three'
	} >in.msg
	msg-unwrap --headers in.msg >out
	printf 'Message-Id: m1\nContent-Type: text/plain\nContent-Length: 8\n\nX-Empty: \nContent-Length: 0\n\nContent-Length: 5\n\n' |
		cmp - out
}

@test "unwrap: -e writes one JSON envelope per message" {
	{
		frame 'hi
there "q"' 'Message-Id: m1' 'Timestamp: 2026-01-01T00:00:00.000Z' 'Content-Type: text/plain'
		frame '' 'X-Empty: '
	} >in.msg
	msg-unwrap -e in.msg >out
	printf '%s\n' \
		'{"headers":{"Message-Id":"m1","Timestamp":"2026-01-01T00:00:00.000Z","Content-Type":"text/plain"},"body":"hi\nthere \"q\""}' \
		'{"headers":{"X-Empty":""},"body":""}' | cmp - out
}

@test "unwrap: -e base64-encodes bodies that are not UTF-8" {
	printf 'Content-Length: 4\n\n\0\xff\x10\x80\n' >in.msg
	printf 'Content-Length: 3\n\na\0b\n' >>in.msg
	msg-unwrap --envelope in.msg >out
	printf '%s\n' '{"headers":{},"body_base64":"AP8QgA=="}' '{"headers":{},"body":"a\u0000b"}' |
		cmp - out
}

@test "unwrap: -e turns repeated headers into arrays, and back" {
	{
		frame x 'X-Tag: a' 'X-Tag: b' 'Other: 1' 'x-tag: c'
	} >in.msg
	msg-unwrap -e in.msg >out
	[ "$(cat out)" = '{"headers":{"X-Tag":["a","b"],"Other":"1","x-tag":"c"},"body":"x"}' ]
	msg-wrap -e out | msg-unwrap -H | grep -v -E '^(Message-Id|Timestamp|Content-Type): ' >h
	[ "$(cat h)" = "X-Tag: a
X-Tag: b
Other: 1
x-tag: c
Content-Length: 1" ]
}

@test "unwrap: -e replaces bytes that are not UTF-8 in header values" {
	printf 'X-Bad: a\xffb\xc3\nContent-Length: 0\n\n\n' >in.msg
	msg-unwrap -e in.msg >out
	[ "$(cat out)" = '{"headers":{"X-Bad":"a?b?"},"body":""}' ]
	jq -e . out >/dev/null
}

@test "unwrap: -s writes no separator before a truncated frame" {
	{ frame abc; printf 'Content-Length: 5\n\nde'; } >cut.msg
	run -65 --separate-stderr msg-unwrap -s '|' --output out cut.msg
	[ "$stderr" = "msg-unwrap: cut.msg: offset 44: truncated frame: end of input after 2 of 5 body bytes" ]
	printf 'abc' | cmp - out
	# An empty body that is whole still gets its separator.
	{ frame abc; frame ''; } | msg-unwrap -s '|' >out
	printf 'abc|' | cmp - out
}
