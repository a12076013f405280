#!/usr/bin/env bats
# msg-dedupe, the Idempotent Receiver: the first message of each key
# passes on unchanged, byte for byte and in order; a later one with the
# same key goes to --duplicates with an Error header, or is dropped and
# counted. Keys from headers or the body (XML paths, json()), empty keys
# invalid, the window and --max-keys that bound what is remembered (on
# the event clock, so the results do not depend on the machine's speed),
# --key-hash, keys kept across runs with --state, --stats and usage
# errors. The crash tests are tests/88-dedupe-crash.bats.

load test_helper
bats_require_minimum_version 1.5.0
load fixtures/aggregate/aggregate
load fixtures/dedupe/dedupe

# dedupe ARG...: msg-dedupe ARG..., its output in out.msg and its
# diagnostics in err.txt, for run.
dedupe() {
	timeout -k 5 60 msg-dedupe "$@" >out.msg 2>err.txt
}

DUPLICATE='Error: msg-dedupe: duplicate: key seen before'

# ---- keys ----

# Text with a newline, and bytes no text has: NUL, CR, 0xff.
binary() {
	printf 'Message-Id: %s\nContent-Length: 7\n\na\0b\r\n\377z\n' "$1"
}

@test "Message-Id: the first of each id passes unchanged, in order; later copies are dropped without a word" {
	{
		text a1 first 'X-Note: kept as it came'
		text b1 $'two\nlines'
		text a1 'a copy with another body'
		frame c 'message-id: c1' 'Content-Type: text/plain'
		text c1 'the same id, its header spelt otherwise'
		binary e1
		text b1 $'two\nlines'
		binary e1
		text d1 last
		text a1 first 'X-Note: kept as it came'
	} >in.msg
	{
		text a1 first 'X-Note: kept as it came'
		text b1 $'two\nlines'
		frame c 'message-id: c1' 'Content-Type: text/plain'
		binary e1
		text d1 last
	} >expect
	run -0 dedupe in.msg
	[ ! -s err.txt ]
	cmp expect out.msg
	# From the standard input, the same.
	run -0 dedupe <in.msg
	[ ! -s err.txt ]
	cmp expect out.msg
	# Counted: the stats line is all there is on stderr.
	run -0 dedupe --stats in.msg
	cmp expect out.msg
	dedupe_stats in=10 out=5 duplicates=5 keys=5 | expect_same - err.txt
}

@test "Message-Id: with \$MSG_HISTORY the step is added to what passes, and nothing else changes" {
	{
		text a1 one 'Message-History: intake, split'
		text b1 two
		text a1 copy 'Message-History: intake, split'
	} >in.msg
	MSG_HISTORY=once run -0 dedupe in.msg
	[ ! -s err.txt ]
	{
		text a1 one 'Message-History: intake, split, once'
		text b1 two 'Message-History: once'
	} | expect_same - out.msg
}

@test "key: an XML path over the body, whatever the Message-Id" {
	{
		frame '<order id="7"><item/></order>' 'Message-Id: x1' 'Content-Type: application/xml'
		frame '<order id="8"/>' 'Message-Id: x2' 'Content-Type: application/xml'
		frame '<order id="7"><item/><item/></order>' 'Message-Id: x3' 'Content-Type: application/xml'
		frame '<order id="9"/>' 'Message-Id: x1' 'Content-Type: application/xml'
		frame '<order id="8"/>' 'Message-Id: x4' 'Content-Type: application/xml'
	} >in.msg
	run -0 dedupe -k '/order/@id' --stats in.msg
	{
		frame '<order id="7"><item/></order>' 'Message-Id: x1' 'Content-Type: application/xml'
		frame '<order id="8"/>' 'Message-Id: x2' 'Content-Type: application/xml'
		frame '<order id="9"/>' 'Message-Id: x1' 'Content-Type: application/xml'
	} | expect_same - out.msg
	dedupe_stats in=5 out=3 duplicates=2 keys=3 | expect_same - err.txt
	# A prefix given with --ns for the namespace the documents make
	# their default, or bind to a prefix of their own.
	{
		frame '<order xmlns="urn:o" id="1"/>' 'Message-Id: n1' 'Content-Type: application/xml'
		frame '<o:order xmlns:o="urn:o" id="1"/>' 'Message-Id: n2' 'Content-Type: application/xml'
		frame '<order xmlns="urn:o" id="2"/>' 'Message-Id: n3' 'Content-Type: application/xml'
	} >ns.msg
	run -0 dedupe --ns p=urn:o --key '/p:order/@id' ns.msg
	[ ! -s err.txt ]
	{
		frame '<order xmlns="urn:o" id="1"/>' 'Message-Id: n1' 'Content-Type: application/xml'
		frame '<order xmlns="urn:o" id="2"/>' 'Message-Id: n3' 'Content-Type: application/xml'
	} | expect_same - out.msg
}

@test "key: json() over a JSON body, or a path over its XML mapping: the same duplicates" {
	{
		frame '{"order": {"id": "A-1", "n": 1}}' 'Message-Id: j1' 'Content-Type: application/json'
		frame '{"order": {"id": "A-2"}}' 'Message-Id: j2' 'Content-Type: application/json'
		frame '{"order": {"n": 3, "id": "A-1"}}' 'Message-Id: j3' 'Content-Type: application/json'
		frame '{"order": {"id": "a-1"}}' 'Message-Id: j4' 'Content-Type: application/json'
		frame '{"order": {"id": "A-2", "again": true}}' 'Message-Id: j5' 'Content-Type: application/json'
	} >in.msg
	{
		frame '{"order": {"id": "A-1", "n": 1}}' 'Message-Id: j1' 'Content-Type: application/json'
		frame '{"order": {"id": "A-2"}}' 'Message-Id: j2' 'Content-Type: application/json'
		frame '{"order": {"id": "a-1"}}' 'Message-Id: j4' 'Content-Type: application/json'
	} >expect
	run -0 dedupe -k "json('/order/id')" --stats in.msg
	expect_same expect out.msg
	dedupe_stats in=5 out=3 duplicates=2 keys=3 | expect_same - err.txt
	run -0 dedupe -k "/map/map[@key='order']/string[@key='id']" in.msg
	[ ! -s err.txt ]
	expect_same expect out.msg
	# Headers joined into one key.
	{
		text m1 a 'Customer: 1' 'Order: 2'
		text m2 b 'Customer: 12' 'Order: '
		text m3 c 'Customer: 1' 'Order: 2'
	} >in.msg
	run -0 dedupe -k "concat(header('Customer'), '/', header('Order'))" in.msg
	[ ! -s err.txt ]
	[ "$(fields out.msg Message-Id | cut -f 1 | paste -sd ' ')" = 'm1 m2' ]
}

# ---- duplicates ----

@test "--duplicates: each copy goes there as it came, with the Error header set" {
	{
		text a1 one
		text a1 copy 'Error: msg-route: an earlier failure'
		text b1 two
		text a1 again 'X-Try: 3'
	} >in.msg
	run -0 dedupe --duplicates dup.msg --stats in.msg
	{
		text a1 one
		text b1 two
	} | expect_same - out.msg
	# An Error the copy had is replaced where it stood.
	{
		text a1 copy "$DUPLICATE"
		text a1 again 'X-Try: 3' "$DUPLICATE"
	} | expect_same - dup.msg
	# Duplicates are expected traffic: no warning, only the stats line.
	dedupe_stats in=4 out=2 duplicates=2 keys=2 | expect_same - err.txt
	# A spool as the channel: a file a copy, the output as before.
	run -0 dedupe --duplicates dir:dups --output passed.msg in.msg
	[ ! -s err.txt ]
	[ ! -s out.msg ]
	{
		text a1 one
		text b1 two
	} | expect_same - passed.msg
	[ "$(find dups/new -type f | wc -l)" = 2 ]
	spooled_frames dups | sort >got
	{
		text a1 copy "$DUPLICATE"
		text a1 again 'X-Try: 3' "$DUPLICATE"
	} | sort | expect_same - got
}

# ---- invalid and expired messages ----

@test "invalid: an empty key goes to --invalid with a warning, and the rest passes" {
	{
		text a1 one
		frame 'no id' 'Content-Type: text/plain'
		text a1 copy
		text b1 two
		frame 'no id either' 'Content-Type: text/plain'
	} >in.msg
	run -0 dedupe --invalid inv.msg --stats in.msg
	{
		text a1 one
		text b1 two
	} | expect_same - out.msg
	{
		frame 'no id' 'Content-Type: text/plain' 'Error: msg-dedupe: empty key'
		frame 'no id either' 'Content-Type: text/plain' 'Error: msg-dedupe: empty key'
	} | expect_same - inv.msg
	{
		echo "msg-dedupe: warning: message without Message-Id: empty key: diverted to 'inv.msg'"
		echo "msg-dedupe: warning: message without Message-Id: empty key: diverted to 'inv.msg'"
		dedupe_stats in=5 out=2 duplicates=1 invalid=2 keys=2
	} | expect_same - err.txt
	# $MSG_INVALID names the channel as well.
	MSG_INVALID=inv2.msg run -0 dedupe in.msg
	cmp inv.msg inv2.msg
	# An expression that finds nothing gives an empty key too.
	run -0 dedupe -k 'string(/order/@id)' --invalid inv3.msg in.msg
	[ ! -s out.msg ]
	[ "$(count_frames inv3.msg)" = 5 ]
	[ "$(grep -c '^msg-dedupe: warning: ' err.txt)" = 5 ]
	[ "$(grep -c . err.txt)" = 5 ]
}

@test "invalid: without --invalid, exit 65 naming the message, after what passed before it" {
	{
		text a1 one
		text a1 copy
		text b1 two
		frame 'no id' 'Content-Type: text/plain'
		text c1 three
	} >in.msg
	run -65 dedupe in.msg
	{
		text a1 one
		text b1 two
	} | expect_same - out.msg
	echo 'msg-dedupe: in.msg: message 4: empty key' | expect_same - err.txt
	run -65 dedupe -k 'string(/order/@id)' in.msg
	[ ! -s out.msg ]
	echo 'msg-dedupe: in.msg: message 1 (Message-Id a1): empty key' | expect_same - err.txt
}

@test "invalid: a message that cannot be written leaves no key behind: a later copy passes" {
	local big
	# A header block just under 64 KiB, over it once $MSG_HISTORY adds
	# this step.
	big=$(head -c 65450 /dev/zero | tr '\0' x)
	{
		text a1 big "X-Big: $big"
		text a1 small
		text b1 two
	} >in.msg
	MSG_HISTORY=once run -0 dedupe --invalid inv.msg --stats in.msg
	{
		text a1 small 'Message-History: once'
		text b1 two 'Message-History: once'
	} | expect_same - out.msg
	[ "$(count_frames inv.msg)" = 1 ]
	# The Error must fit where the header could not: X-Big is dropped
	# and named, as every diverted message's is.
	grep -qx "Error: msg-dedupe: header block over 64 KiB (65539 bytes): header 'X-Big' is 65457 bytes; header 'X-Big' of 65450 bytes dropped" inv.msg
	run ! grep -q '^X-Big:' inv.msg
	{
		echo "msg-dedupe: warning: message a1: header block over 64 KiB (65539 bytes): header 'X-Big' is 65457 bytes: diverted to 'inv.msg'"
		dedupe_stats in=3 out=2 invalid=1 keys=2
	} | expect_same - err.txt
}

@test "invalid: out of memory evaluating the key is exit 70, not an invalid message: it stays for a retry" {
	skip_without_memory_limits
	spool_of_big_xml
	runs_out_of_memory msg-dedupe -k 'string(/a/b[1]/@x)'
	runs_out_of_memory msg-dedupe -k 'string(/a/b[1]/@x)' --invalid inv.msg
	run -0 --separate-stderr timeout -k 5 60 msg-dedupe --once -k 'string(/a/b[1]/@x)' \
		--output out.msg dir:sp
	msg-unwrap out.msg | cmp - big.xml
	[ -z "$(find sp -type f)" ]
}

@test "expired: an expired message is no key: to --dead-letter, or dropped with a warning" {
	{
		text e1 old 'Expires: 2000-01-01T00:00:00.000Z'
		text e1 'the same id, not expired'
		text e1 'a copy'
	} >in.msg
	run -0 dedupe --dead-letter dead.msg in.msg
	[ ! -s err.txt ]
	text e1 'the same id, not expired' | expect_same - out.msg
	text e1 old 'Expires: 2000-01-01T00:00:00.000Z' 'Error: msg-dedupe: message expired' |
		expect_same - dead.msg
	run -0 dedupe --stats in.msg
	text e1 'the same id, not expired' | expect_same - out.msg
	{
		echo 'msg-dedupe: message expired; message e1 dropped'
		dedupe_stats in=3 out=1 duplicates=1 expired=1 keys=1
	} | expect_same - err.txt
}

# ---- how long a key is remembered ----

# window_input: key a1 first seen at 0 s, copies at 30 and 59 s, seen
# again at 61 s and copied at 100 s; b1 at 40 and 101 s; c1 at 200 s;
# then a1 stamped 70 s, read when the latest time is 200 s.
window_input() {
	{
		text a1 'a at 0' "$(at 0)"
		text a1 'a at 30' "$(at 30)"
		text b1 'b at 40' "$(at 40)"
		text a1 'a at 59' "$(at 59)"
		text a1 'a at 61' "$(at 61)"
		text a1 'a at 100' "$(at 100)"
		text b1 'b at 101' "$(at 101)"
		text c1 'c at 200' "$(at 200)"
		text a1 'a at 70' "$(at 70)"
	} >in.msg
}

@test "window: a key is remembered --window after it was first seen, on the event clock; copies do not extend it" {
	window_input
	run -0 dedupe --clock event --window 1m --duplicates dup.msg in.msg
	[ ! -s err.txt ]
	# 61 s is past a1's minute from 0 s, though a copy came at 59 s; at
	# 100 s a1 is remembered from 61 s. Time is the latest Timestamp
	# read: the message stamped 70 s comes when it is 200 s.
	{
		text a1 'a at 0' "$(at 0)"
		text b1 'b at 40' "$(at 40)"
		text a1 'a at 61' "$(at 61)"
		text b1 'b at 101' "$(at 101)"
		text c1 'c at 200' "$(at 200)"
		text a1 'a at 70' "$(at 70)"
	} | expect_same - out.msg
	{
		text a1 'a at 30' "$(at 30)" "$DUPLICATE"
		text a1 'a at 59' "$(at 59)" "$DUPLICATE"
		text a1 'a at 100' "$(at 100)" "$DUPLICATE"
	} | expect_same - dup.msg
	# At 200 s b1's minute from 101 s is over: two keys are held.
	run -0 dedupe --clock event --window 1m --stats in.msg
	dedupe_stats in=9 out=6 duplicates=3 keys=2 | expect_same - err.txt
	# A longer window holds them all: only the first of each passes.
	run -0 dedupe --clock event --window 1h --stats in.msg
	[ "$(fields out.msg Message-Id | cut -f 2 | paste -sd ,)" = 'a at 0,b at 40,c at 200' ]
	dedupe_stats in=9 out=3 duplicates=6 keys=3 | expect_same - err.txt
}

@test "window: the wall clock (the default) ignores Timestamps, and forgets a key once its window is over" {
	window_input
	run -0 dedupe --window 1m in.msg
	[ ! -s err.txt ]
	[ "$(fields out.msg Message-Id | cut -f 2 | paste -sd ,)" = 'a at 0,b at 40,c at 200' ]
	# A copy a second after the first is a duplicate within a window of
	# 1 s only if it came within that second; 3 s later it is not.
	{
		text a1 first
		text a1 copy
		sleep 3
		text a1 later
	} | timeout -k 5 60 msg-dedupe --window 1s --stats >out.msg 2>err.txt
	[ "$(fields out.msg Message-Id | cut -f 2 | paste -sd ,)" = 'first,later' ]
	dedupe_stats in=3 out=2 duplicates=1 keys=1 | expect_same - err.txt
}

@test "window: without a Timestamp a message is invalid on the event clock" {
	{
		text a1 one "$(at 0)"
		text b1 'no time'
		text a1 copy "$(at 5)"
	} >in.msg
	run -0 dedupe --clock event --invalid inv.msg in.msg
	text a1 one "$(at 0)" | expect_same - out.msg
	text b1 'no time' 'Error: msg-dedupe: no Timestamp (--clock event)' | expect_same - inv.msg
	echo "msg-dedupe: warning: message b1: no Timestamp (--clock event): diverted to 'inv.msg'" |
		expect_same - err.txt
	run -65 dedupe --clock event in.msg
	text a1 one "$(at 0)" | expect_same - out.msg
	echo 'msg-dedupe: in.msg: message 2 (Message-Id b1): no Timestamp (--clock event)' |
		expect_same - err.txt
}

@test "max-keys: with n keys held a new one forgets the oldest first, counted; a copy does not make a key younger" {
	{
		text a1 'a #1'
		text b1 'b #1'
		text a1 'a #2'
		text c1 'c #1'
		text a1 'a #3'
		text c1 'c #2'
		text b1 'b #2'
	} >in.msg
	run -0 dedupe --max-keys 2 --stats in.msg
	# c1 forgets a1 (first seen before b1, though copied since); a1
	# then forgets b1, and b1 forgets c1.
	[ "$(fields out.msg Message-Id | cut -f 2 | paste -sd ,)" = 'a #1,b #1,c #1,a #3,b #2' ]
	dedupe_stats in=7 out=5 duplicates=2 keys=2 forgotten=3 | expect_same - err.txt
	run -0 dedupe --max-keys 3 --stats in.msg
	[ "$(fields out.msg Message-Id | cut -f 2 | paste -sd ,)" = 'a #1,b #1,c #1' ]
	dedupe_stats in=7 out=3 duplicates=4 keys=3 | expect_same - err.txt
}

# ---- --key-hash ----

# long_keys: 300 messages keyed by X-Key values of 5,000 bytes or more
# that differ only at their ends or only at their starts; every third
# from the 42nd on (87 of them) repeats the key of the message 40
# before it, which is never such a repeat itself.
long_keys() {
	perl -e '
		my $long = "k" x 5000;
		for my $i (1 .. 300) {
			my $k = $i % 3 == 0 && $i > 40 ? $i - 40 : $i;
			my $key = $k % 2 ? "$long$k" : "$k$long";
			printf "Message-Id: m%d\nX-Key: %s\nContent-Length: %d\n\nbody %d\n",
				$i, $key, length("body $i"), $i;
		}'
}

@test "--key-hash: the same results as the keys themselves, on long keys" {
	long_keys >in.msg
	run -0 dedupe -k "header('X-Key')" --stats in.msg
	mv out.msg plain.msg
	mv err.txt plain.txt
	dedupe_stats in=300 out=213 duplicates=87 keys=213 | expect_same - plain.txt
	run -0 dedupe -k "header('X-Key')" --key-hash --stats in.msg
	cmp plain.msg out.msg
	expect_same plain.txt err.txt
}

@test "--key-hash: a key takes the same room in the store whatever its length" {
	local big
	big=$(head -c 20000 /dev/zero | tr '\0' k)
	for i in $(seq 1 100); do
		text "m$i" "$i" "X-Key: $big$i"
	done >in.msg
	run -0 dedupe -k "header('X-Key')" --key-hash --state hashed --stats in.msg
	dedupe_stats in=100 out=100 keys=100 | expect_same - err.txt
	# 2,000,000 bytes of keys; a hash of 16 bytes and a little more each.
	local bytes
	bytes=$(cat hashed/log.* | wc -c)
	echo "store with --key-hash: $bytes bytes"
	[ "$bytes" -lt 65536 ]
	# Hashes kept across runs find the same keys again.
	run -0 dedupe -k "header('X-Key')" --key-hash --state hashed --stats in.msg
	[ ! -s out.msg ]
	dedupe_stats in=100 duplicates=100 keys=100 | expect_same - err.txt
}

# ---- --state ----

@test "state: the keys of one run make the next run's copies duplicates" {
	{
		text a1 one
		text b1 two
	} >run1.msg
	{
		text b1 'two again'
		text c1 three
		text a1 'one again'
		text c1 'three again'
	} >run2.msg
	run -0 dedupe --state st --stats run1.msg
	{
		text a1 one
		text b1 two
	} | expect_same - out.msg
	dedupe_stats in=2 out=2 keys=2 | expect_same - err.txt
	[ "$(stat -c %a st)" = 700 ]
	run -0 dedupe --state st --duplicates dup.msg --stats run2.msg
	text c1 three | expect_same - out.msg
	{
		text b1 'two again' "$DUPLICATE"
		text a1 'one again' "$DUPLICATE"
		text c1 'three again' "$DUPLICATE"
	} | expect_same - dup.msg
	dedupe_stats in=4 out=1 duplicates=3 keys=3 | expect_same - err.txt
	# Another store knows none of them.
	run -0 dedupe --state other run2.msg
	[ "$(fields out.msg Message-Id | cut -f 1 | paste -sd ' ')" = 'b1 c1 a1' ]
}

@test "state: a window and --max-keys go on across runs" {
	text a1 'a at 0' "$(at 0)" >run1.msg
	{
		text a1 'a at 30' "$(at 30)"
		text a1 'a at 61' "$(at 61)"
	} >run2.msg
	run -0 dedupe --state st --clock event --window 1m run1.msg
	text a1 'a at 0' "$(at 0)" | expect_same - out.msg
	run -0 dedupe --state st --clock event --window 1m run2.msg
	[ ! -s err.txt ]
	text a1 'a at 61' "$(at 61)" | expect_same - out.msg
	# Three keys where two are allowed: the oldest is forgotten.
	{
		text k1 1
		text k2 2
		text k3 3
	} >keys.msg
	run -0 dedupe --state mk --max-keys 2 --stats keys.msg
	dedupe_stats in=3 out=3 keys=2 forgotten=1 | expect_same - err.txt
	run -0 dedupe --state mk --max-keys 2 --stats keys.msg
	# k1 passes again, forgetting k2, which passes and forgets k3...
	[ "$(fields out.msg Message-Id | cut -f 1 | paste -sd ' ')" = 'k1 k2 k3' ]
	dedupe_stats in=3 out=3 keys=2 forgotten=3 | expect_same - err.txt
}

@test "state: on the wall clock a stored key is forgotten once its window is over, in a later run" {
	local t0 ms
	text w1 first >run1.msg
	text w1 copy >run2.msg
	t0=${EPOCHREALTIME/./}
	run -0 dedupe --state st --window 3s run1.msg
	text w1 first | expect_same - out.msg
	run -0 dedupe --state st --window 3s --stats run2.msg
	ms=$(((${EPOCHREALTIME/./} - t0) / 1000))
	# Within the window (when the machine was quick enough to tell): a
	# duplicate.
	if [ "$ms" -lt 2500 ]; then
		[ ! -s out.msg ]
		dedupe_stats in=1 duplicates=1 keys=1 | expect_same - err.txt
	fi
	if [ "$ms" -lt 4000 ]; then
		sleep "$(((4000 - ms) / 1000)).$(printf %03d $(((4000 - ms) % 1000)))"
	fi
	# Past it: the key stored is not taken back, and the copy passes.
	run -0 dedupe --state st --window 3s --stats run2.msg
	text w1 copy | expect_same - out.msg
	dedupe_stats in=1 out=1 keys=1 | expect_same - err.txt
}

@test "state: a second instance on the same state directory exits 75" {
	text a1 one >in.msg
	run -0 dedupe --state st in.msg
	run -75 --separate-stderr flock st/lock msg-dedupe --state st in.msg
	[ "$stderr" = "msg-dedupe: cannot lock 'st/lock': state directory busy" ]
	[ -z "$output" ]
}

# ---- statistics, usage, framing ----

@test "stats: every counter, on one line at exit" {
	{
		text a1 one
		text a1 copy
		frame 'no id' 'Content-Type: text/plain'
		text e1 old 'Expires: 2000-01-01T00:00:00.000Z'
		text b1 two
		text c1 three
		text b1 copy
		text a1 'again, forgotten'
	} >in.msg
	run -0 dedupe --max-keys 2 --invalid inv.msg --dead-letter dead.msg --stats \
		--output passed.msg in.msg
	[ ! -s out.msg ]
	[ "$(fields passed.msg Message-Id | cut -f 2 | paste -sd ,)" = 'one,two,three,again, forgotten' ]
	[ "$(count_frames inv.msg)" = 1 ]
	[ "$(count_frames dead.msg)" = 1 ]
	{
		echo "msg-dedupe: warning: message without Message-Id: empty key: diverted to 'inv.msg'"
		dedupe_stats in=8 out=4 duplicates=2 invalid=1 expired=1 keys=2 forgotten=2
	} | expect_same - err.txt
}

@test "usage: bad options exit 64 before reading anything" {
	text a1 one >in.msg
	local -a bad=(
		'--window 0' '--window x' '--window -5s' '--max-keys 0' '--max-keys x'
		'--max-keys -1' '--clock moon' '--no-such-option' '-z' '--key-hash=yes'
	)
	local args
	for args in "${bad[@]}"; do
		# shellcheck disable=SC2086 # the options are words
		run -64 dedupe $args in.msg
		echo "$args: $(cat err.txt)"
		[ ! -s out.msg ]
		[ "$(grep -c . err.txt)" -ge 2 ]
		grep -q '^msg-dedupe: ' err.txt
		grep -q '^usage: msg-dedupe ' err.txt
	done
	run -64 dedupe --window 5x in.msg
	[ "$(head -n 1 err.txt)" = "msg-dedupe: --window takes a duration such as 30s or 5m, not '5x'" ]
	run -64 dedupe --max-keys many in.msg
	[ "$(head -n 1 err.txt)" = "msg-dedupe: --max-keys takes a positive number, not 'many'" ]
	run -64 dedupe in.msg -k
	[ "$(head -n 1 err.txt)" = "msg-dedupe: option '-k' needs a value" ]
	run -64 dedupe -k '/a[' in.msg
	[ "$(cat err.txt)" = "msg-dedupe: invalid expression '/a[': Invalid expression at position 3" ]
	run -64 dedupe -k 'nope(1)' in.msg
	[ "$(cat err.txt)" = "msg-dedupe: unknown function 'nope' in expression 'nope(1)'" ]
	[ ! -s out.msg ]
	# Nothing was made for a store that was never opened.
	run -64 dedupe --state st --window 0 in.msg
	[ ! -e st ]
}

@test "usage: an input that cannot be opened exits 66" {
	run -66 dedupe no-such.msg
	[ "$(cat err.txt)" = "msg-dedupe: cannot open 'no-such.msg': No such file or directory" ]
	[ ! -s out.msg ]
}

@test "framing: a truncated stream exits 65 after what passed before it" {
	{
		text a1 one
		text a1 copy
		printf 'Message-Id: t1\nContent-Length: 10\n\nabc'
	} >in.msg
	run -65 dedupe in.msg
	text a1 one | expect_same - out.msg
	# The offset is where the input ended.
	echo 'msg-dedupe: in.msg: offset 165: truncated frame: end of input after 3 of 10 body bytes (Message-Id t1)' |
		expect_same - err.txt
}
