#!/usr/bin/env bats
# msg-tap to files: the flow passes to stdout byte for byte whatever the
# tap does; frame, summary and envelope copies; -w; --if-full block; bodies
# larger than --buffer; usage and output errors.

load test_helper
bats_require_minimum_version 1.5.0
load fixtures/route/route

# A stream with the headers a summary shows, a CRLF frame, an empty body,
# a binary body and a JSON one.
mixed() {
	printf 'a' | msg-wrap -H 'Message-Id: m1' -H 'Correlation-Id: c1' \
		-H 'Sequence-Number: 1' -H 'Sequence-Size: 2' -H 'Region: eu'
	printf 'Message-Id: m2\r\nX-Spaced:   v  \r\nSequence-Number: 2\r\nContent-Length: 5\r\n\r\nhello\n'
	printf '' | msg-wrap -t text/plain -H 'Message-Id: m3'
	printf '\0\377\n' | msg-wrap -H 'Message-Id: m4' -H 'Region: us'
	printf '{"x":1}' | msg-wrap -H 'Message-Id: m5'
}

# A summary line: tap time, Message-Id, Content-Type, body size, corr=...
TIME='[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z'

@test "tap: stdout is the input byte for byte, and a frame tap copies it" {
	mixed >in.msg
	msg-tap tap.msg <in.msg 2>err | cmp - in.msg
	[ ! -s err ]
	msg-tap tap2.msg <in.msg | cmp - in.msg
	# CRLF header lines reach stdout and the tap as they came.
	cmp tap2.msg in.msg
	cmp tap.msg in.msg
	# -F frame is the default.
	msg-tap -F frame tap3.msg <in.msg | cmp - in.msg
	cmp tap3.msg in.msg
}

@test "tap: several tap channels get the same copy" {
	mixed >in.msg
	msg-tap one.msg two.msg fd:5 <in.msg 5>three.msg | cmp - in.msg
	cmp one.msg in.msg
	cmp two.msg in.msg
	cmp three.msg in.msg
}

@test "tap: a file tap is appended to" {
	mixed >in.msg
	frame first 'Message-Id: m0' >tap.msg
	msg-tap tap.msg <in.msg >/dev/null
	cat <(frame first 'Message-Id: m0') in.msg | cmp - tap.msg
}

@test "tap: -F summary, one line per message" {
	mixed >in.msg
	msg-tap -F summary -k Region -k X-Spaced tap.txt <in.msg | cmp - in.msg
	[ "$(wc -l <tap.txt)" = 5 ]
	local rest=(
		'm1 text/plain 1 corr=c1 seq=1/2 Region=eu X-Spaced=-'
		'm2 - 5 corr=- seq=2/? Region=- X-Spaced=v'
		'm3 text/plain 0 corr=- Region=- X-Spaced=-'
		'm4 application/octet-stream 3 corr=- Region=us X-Spaced=-'
		'm5 application/json 7 corr=- Region=- X-Spaced=-'
	)
	local i=0 line
	while IFS= read -r line; do
		[[ $line =~ ^$TIME\ (.*)$ ]] || {
			echo "bad line: $line"
			return 1
		}
		[ "${BASH_REMATCH[1]}" = "${rest[i]}" ] || {
			echo "line $((i + 1)): $line"
			return 1
		}
		i=$((i + 1))
	done <tap.txt
	# Without -k, the fixed fields only.
	msg-tap -F summary plain.txt <in.msg >/dev/null
	[[ $(sed -n 1p plain.txt) =~ ^$TIME\ m1\ text/plain\ 1\ corr=c1\ seq=1/2$ ]]
}

@test "tap: -F envelope, one JSON line per message, as msg-unwrap -e writes it" {
	mixed >in.msg
	msg-tap -F envelope tap.jsonl <in.msg | cmp - in.msg
	[ "$(jq -c . tap.jsonl | wc -l)" = 5 ]
	msg-unwrap -e in.msg | cmp - tap.jsonl
	[ "$(jq -r '.headers."X-Spaced"' tap.jsonl | sed -n 2p)" = v ]
	[ "$(jq -r '.body_base64 // empty' tap.jsonl)" = "AP8K" ]
}

@test "tap: -w taps only matching messages, the flow gets them all" {
	mixed >in.msg
	msg-tap --stats -w "header('Region') != ''" eu.msg <in.msg >out.msg 2>err
	cmp out.msg in.msg
	frames in.msg 1 4 | cmp - eu.msg
	[ "$(cat err)" = "msg-tap: stats: in 5, tapped 2, dropped 0" ]
	# On the body: XPath and json().
	frames "$ROUTE/orders.msg" 1 2 3 4 >orders.msg
	msg-tap -w '/order/total > 100' big.msg <orders.msg | cmp - orders.msg
	[ "$(ids big.msg)" = "o1 o3" ]
	msg-tap -w "json('/type') = 'rush'" rush.msg <"$ROUTE/orders-json.msg" | cmp - "$ROUTE/orders-json.msg"
	[ "$(ids rush.msg)" = "j1 j4" ]
}

@test "tap: a message -w cannot decide is not tapped, and the flow goes on" {
	printf '<broken' | msg-wrap -t application/xml -H 'Message-Id: b1' >in.msg
	frames "$ROUTE/orders.msg" 1 >>in.msg
	run -0 --separate-stderr msg-tap -w "/order/@type = 'rush'" tap.msg <in.msg
	[ "$output" = "$(cat in.msg)" ]
	[ "$(ids tap.msg)" = o1 ]
}

@test "tap: MSG_HISTORY adds to Message-History on stdout and on the tap" {
	mixed >in.msg
	MSG_HISTORY=tap1 msg-tap tap.msg <in.msg >out.msg
	cmp out.msg tap.msg
	[ "$(msg-unwrap -e out.msg | jq -r '.headers."Message-History"' | sort -u)" = tap1 ]
	# Nothing else changes.
	msg-unwrap -e out.msg | jq -c 'del(.headers."Message-History")' >got
	msg-unwrap -e in.msg | cmp - got
}

@test "tap: --if-full block to a regular file copies everything" {
	seqs 20000 "$(printf 'y%.0s' {1..200})" | msg-wrap -l >in.msg
	run -0 --separate-stderr timeout -k 10 30 msg-tap --stats --if-full block tap.msg <in.msg
	[ "$stderr" = "msg-tap: stats: in 20000, tapped 20000, dropped 0" ]
	cmp tap.msg in.msg
	# Block is the default for a file.
	timeout -k 10 30 msg-tap tap2.msg <in.msg >/dev/null
	cmp tap2.msg in.msg
}

@test "tap: --if-full drop to a regular file that keeps up drops nothing" {
	seqs 5000 | msg-wrap -l >in.msg
	run -0 --separate-stderr timeout -k 10 30 msg-tap --stats --if-full drop tap.msg <in.msg
	[ "$stderr" = "msg-tap: stats: in 5000, tapped 5000, dropped 0" ]
	cmp tap.msg in.msg
}

@test "tap: bodies larger than --buffer stream through to stdout and to a file tap" {
	frame small1 'Message-Id: s1' >in.msg
	head -c 300000 /dev/zero | tr '\0' z | msg-wrap -H 'Message-Id: big' >>in.msg
	frame small2 'Message-Id: s2' >>in.msg
	timeout -k 10 30 msg-tap --buffer 64K frame.msg <in.msg | cmp - in.msg
	cmp frame.msg in.msg
	# A summary needs no body: the big one has its line.
	timeout -k 10 30 msg-tap --buffer 64K -F summary sum.txt <in.msg | cmp - in.msg
	[ "$(cut -d' ' -f2-4 sum.txt)" = "s1 - 6
big text/plain 300000
s2 - 6" ]
	# -w on headers decides without the body.
	timeout -k 10 30 msg-tap --buffer 64K -w "header('Message-Id') = 'big'" big.msg <in.msg | cmp - in.msg
	frames in.msg 2 | cmp - big.msg
	# -w on the body reads it whole, larger than --buffer or not.
	timeout -k 10 30 msg-tap --buffer 64K -w "starts-with(., 'zzz')" big2.msg <in.msg | cmp - in.msg
	cmp big.msg big2.msg
}

@test "tap: a body larger than --buffer still reaches an envelope file tap" {
	frame small1 'Message-Id: s1' >in.msg
	head -c 300000 /dev/zero | tr '\0' z | msg-wrap -H 'Message-Id: big' >>in.msg
	frame small2 'Message-Id: s2' >>in.msg
	run -0 --separate-stderr timeout -k 10 30 msg-tap --buffer 64K -F envelope env.jsonl <in.msg
	[ "$output" = "$(cat in.msg)" ]
	msg-unwrap -e in.msg | cmp - env.jsonl
}

@test "tap: usage errors exit 64" {
	local args want
	while IFS='|' read -r want args; do
		# shellcheck disable=SC2086
		run -64 --separate-stderr msg-tap $args </dev/null
		[ "${stderr%%$'\n'*}" = "msg-tap: $want" ] || {
			echo "msg-tap $args: $stderr"
			return 1
		}
		[[ $stderr == *$'\n'"usage: msg-tap "* ]]
	done <<-'EOF'
	no tap channel|
	no tap channel|-F summary
	-F takes frame, summary or envelope, not 'json'|-F json t.out
	--if-full takes block or drop, not 'wait'|--if-full wait t.out
	invalid size '0'|--buffer 0 t.out
	invalid size 'lots'|--buffer lots t.out
	invalid duration '0'|--stats-interval 0 t.out
	invalid duration 'often'|--stats-interval often t.out
	unknown option '--all'|--all t.out
	EOF
	run -64 --separate-stderr msg-tap -w '/a[' t.out </dev/null
	[ "$stderr" = "msg-tap: invalid expression '/a[': Invalid expression at position 3" ]
	[ ! -e t.out ]
}

@test "tap: a tap that cannot be opened exits 73; a full one exits 74, named" {
	frame x 'Message-Id: f1' >in.msg
	run -73 --separate-stderr msg-tap no/such/tap.msg <in.msg
	[ "$stderr" = "msg-tap: cannot open 'no/such/tap.msg': No such file or directory" ]
	[ -z "$output" ]
	run -74 --separate-stderr msg-tap /dev/full <in.msg
	[ "$stderr" = "msg-tap: cannot write '/dev/full': No space left on device" ]
	run -74 --separate-stderr sh -c 'msg-tap tap.msg <in.msg >/dev/full'
	[ "$stderr" = "msg-tap: cannot write 'stdout': No space left on device" ]
}

@test "tap: a truncated input: what came before passes and is tapped, exit 65" {
	frame one 'Message-Id: g1' >in.msg
	printf 'Message-Id: t1\nContent-Length: 10\n\nabc' >>in.msg
	run -65 --separate-stderr msg-tap tap.msg <in.msg
	[ "$stderr" = "msg-tap: stdin: offset 76: truncated frame: end of input after 3 of 10 body bytes (Message-Id t1)" ]
	[ "$output" = "$(frame one 'Message-Id: g1')" ]
	frames in.msg 1 | cmp - tap.msg
}
