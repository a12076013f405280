#!/usr/bin/env bats
# msg-trickle, the trickle-feed handler: the pattern's table T1..T5 step
# by step; versions of an entity sent one at a time in version order,
# each after the success of the one before, byte for byte; cron runs
# with dir: channels and a responder between them; many entities
# against a reference model (random versions, copies, stale ones,
# random failures retried); failure then retry, skip and release;
# --retry-after, --max-attempts and --resend-after; a target down while
# 1,000 versions pile up, then drained in order; --latest, stale,
# duplicate, unmatched and invalid messages; --max-in-flight; a running
# instance: when it ends, its responses FIFO opened again, operator
# commands beside it; status as text and JSON; --stats and usage
# errors. Most tests run --once on a state directory, one step at a
# time, so that each step's result is exact.

load test_helper
bats_require_minimum_version 1.5.0
load fixtures/aggregate/aggregate
load fixtures/trickle/trickle

# ---- the pattern ----

@test "T1..T5: A v0 sent; A v1 kept; B v0 sent; A v0's success sends A v1; B v0's success sends nothing" {
	# T1: create A: stored, then sent at once, byte for byte.
	req a0 A 0 'X-Note: passed as it came' 'Timestamp: 2026-12-03T20:00:00.000Z' >t1.msg
	run -0 step --stats t1.msg
	expect_same t1.msg out.msg
	trickle_stats in=1 sent=1 in-flight=1 | expect_same - err.txt
	entity_is A in-flight 0 1 '' -
	# T2: change A: kept while A v0 waits for its response.
	req a1 A 1 'X-Note: the change' >t2.msg
	run -0 step --stats t2.msg
	[ ! -s out.msg ]
	trickle_stats in=1 waiting=1 in-flight=1 | expect_same - err.txt
	entity_is A in-flight 0 1 1 -
	# T3: create B: another entity, sent at once.
	req b0 B 0 >t3.msg
	run -0 step --stats t3.msg
	expect_same t3.msg out.msg
	trickle_stats in=1 sent=1 waiting=1 in-flight=2 | expect_same - err.txt
	# T4: success for A v0: A v1 goes, as it came.
	ok a0 >t4.msg
	run -0 step --stats -r t4.msg
	expect_same t2.msg out.msg
	trickle_stats responses=1 sent=1 succeeded=1 in-flight=2 | expect_same - err.txt
	entity_is A in-flight 1 1 '' 0
	# T5: success for B v0: nothing is waiting for B.
	ok b0 >t5.msg
	run -0 step --stats -r t5.msg
	[ ! -s out.msg ]
	trickle_stats responses=1 succeeded=1 in-flight=1 | expect_same - err.txt
	entity_is B idle - 0 '' 0
	entity_is A in-flight 1 1 '' 0
}

@test "cron: --once with dir: channels takes what each spool holds, sends what it can and empties the spools" {
	spool responses </dev/null
	{
		req a0 A 0
		req a1 A 1
		req b0 B 0
	} | spool requests
	run -0 step --output dir:target -r dir:responses dir:requests
	[ ! -s out.msg ]
	[ ! -s err.txt ]
	[ "$(files_in requests)" = 0 ]
	spooled target >t.msg
	{
		req a0 A 0
		req b0 B 0
	} | expect_same - t.msg
	# Nothing new: nothing sent.
	run -0 step --output dir:target -r dir:responses dir:requests
	[ ! -s err.txt ]
	[ "$(files_in target/new)" = 0 ]
	# The target answers between runs, and a change of B comes in.
	{
		ok a0
		ok b0
	} | spool responses
	req b1 B 1 | spool requests
	run -0 step --output dir:target -r dir:responses dir:requests --stats
	[ "$(files_in responses)" = 0 ]
	[ "$(files_in requests)" = 0 ]
	spooled target >t.msg
	{
		req a1 A 1
		req b1 B 1
	} | expect_same - t.msg
	trickle_stats in=1 responses=2 sent=2 succeeded=2 in-flight=2 | expect_same - err.txt
}

@test "cron: run after run with a responder made of msg tools between them, every version of every entity goes in order" {
	local e v round
	for v in 0 1 2 3 4; do
		for e in A B C; do
			req "$e$v" "$e" "$v"
		done
	done | spool requests
	spool responses </dev/null
	for ((round = 1; round <= 20; round++)); do
		run -0 step --output dir:target -r dir:responses dir:requests
		[ ! -s err.txt ]
		[ "$(files_in target/new)" != 0 ] || break
		find target/new -type f -print0 | sort -z | xargs -0 cat >>sent.msg
		# The target: a success for each message, from msg-translate.
		run -0 msg-translate --once --set "Correlation-Id=header('Message-Id')" \
			-H 'Status: success' --output dir:responses dir:target
	done
	echo "$round rounds"
	[ "$round" = 6 ]
	sent sent.msg >got
	for v in 0 1 2 3 4; do
		for e in A B C; do
			echo "$e $v -"
		done
	done | expect_same - got
	[ "$(files_in requests)" = 0 ]
	[ "$(files_in responses)" = 0 ]
	[ "$(msg-trickle status --state st --json | jq -c 'map([.key, .state, .last_ok])')" = \
		'[["A","idle","4"],["B","idle","4"],["C","idle","4"]]' ]
}

@test "order: an entity's waiting versions go out lowest first, one at a time, each after the success of the one before" {
	req n0 A -1 >1.msg
	run -0 step 1.msg
	expect_same 1.msg out.msg
	{
		req n10 A 10
		req n9 A 9
		req n1 A 0
	} >2.msg
	run -0 step --stats 2.msg
	[ ! -s out.msg ]
	trickle_stats in=3 waiting=3 in-flight=1 | expect_same - err.txt
	entity_is A in-flight -1 1 '0 9 10' -
	# Integers: 9 before 10, each frame as it came.
	ok n0 >r.msg
	run -0 step -r r.msg
	req n1 A 0 | expect_same - out.msg
	ok n1 >r.msg
	run -0 step -r r.msg
	req n9 A 9 | expect_same - out.msg
	ok n9 >r.msg
	run -0 step -r r.msg
	req n10 A 10 | expect_same - out.msg
	ok n10 >r.msg
	run -0 step --stats -r r.msg
	[ ! -s out.msg ]
	trickle_stats responses=1 succeeded=1 | expect_same - err.txt
	entity_is A idle - 0 '' 10
}

@test "order: --version-order text compares versions byte by byte" {
	req n0 A -1 >1.msg
	{
		req n10 A 10
		req n9 A 9
		req n1 A 0
		req nb A b
	} >2.msg
	run -0 step --version-order text 1.msg
	run -0 step --version-order text 2.msg
	[ ! -s out.msg ]
	[ ! -s err.txt ]
	entity_is A in-flight -1 1 '0 10 9 b' -
	local id
	for id in n0 n1 n10 n9; do
		ok "$id" >r.msg
		run -0 step --version-order text -r r.msg
		[ ! -s err.txt ]
		sent out.msg >>order.txt
	done
	printf '%s\n' 'A 0 -' 'A 10 -' 'A 9 -' 'A b -' | expect_same - order.txt
	# Without it, b is no number.
	req nc B b >3.msg
	run -65 trickle --once --state numbers 3.msg
	echo "msg-trickle: 3.msg: message 1 (Message-Id nc): version 'b' is not an integer" |
		expect_same - err.txt
}

@test "keys: -k and -v take the entity and its version from the body" {
	{
		frame '{"po": "A", "rev": 0}' 'Message-Id: j1' 'Content-Type: application/json'
		frame '{"po": "A", "rev": 1}' 'Message-Id: j2' 'Content-Type: application/json'
		frame '{"po": "B", "rev": 7}' 'Message-Id: j3' 'Content-Type: application/json'
	} >in.msg
	run -0 step -k "json('/po')" -v "json('/rev')" --stats in.msg
	{
		frame '{"po": "A", "rev": 0}' 'Message-Id: j1' 'Content-Type: application/json'
		frame '{"po": "B", "rev": 7}' 'Message-Id: j3' 'Content-Type: application/json'
	} | expect_same - out.msg
	trickle_stats in=3 sent=2 waiting=1 in-flight=2 | expect_same - err.txt
	ok j1 >r.msg
	run -0 step -k "json('/po')" -v "json('/rev')" -r r.msg
	frame '{"po": "A", "rev": 1}' 'Message-Id: j2' 'Content-Type: application/json' |
		expect_same - out.msg
	entity_is B in-flight 7 1 '' -
}

# ---- stale, duplicate, superseded ----

@test "stale: a version at or below the highest sent goes to --stale with an Error header, counted" {
	req a0 A 0 >1.msg
	run -0 step 1.msg
	ok a0 >r.msg
	req a2 A 2 >2.msg
	run -0 step -r r.msg 2.msg
	expect_same 2.msg out.msg
	# A 2 is in flight: 0 (succeeded) and 1 (never seen) are stale.
	{
		req a0x A 0
		req a1 A 1 'Error: msg-route: an earlier failure'
	} >3.msg
	run -0 step --stale stale.msg --stats 3.msg
	[ ! -s out.msg ]
	{
		req a0x A 0 "Error: msg-trickle: stale: version 0 of entity 'A' is at or below version 2, already sent"
		req a1 A 1 "Error: msg-trickle: stale: version 1 of entity 'A' is at or below version 2, already sent"
	} >expect
	# An Error the message had is replaced where it stood.
	expect_same expect stale.msg
	trickle_stats in=2 stale=2 in-flight=1 | expect_same - err.txt
	# Once A 2 succeeded, 2 is stale too; without --stale, dropped with
	# a warning.
	ok a2 >r.msg
	req a2x A 2 >4.msg
	run -0 step --stats -r r.msg 3.msg 4.msg
	[ ! -s out.msg ]
	{
		echo "msg-trickle: warning: message a0x: stale: version 0 of entity 'A' is at or below version 2, already sent; dropped"
		echo "msg-trickle: warning: message a1: stale: version 1 of entity 'A' is at or below version 2, already sent; dropped"
		echo "msg-trickle: warning: message a2x: stale: version 2 of entity 'A' is at or below version 2, already sent; dropped"
		trickle_stats in=3 responses=1 succeeded=1 stale=3
	} | expect_same - err.txt
	entity_is A idle - 0 '' 2
	# A higher one still goes.
	req a3 A 3 >5.msg
	run -0 step 5.msg
	expect_same 5.msg out.msg
}

@test "duplicate: a second copy of a version waiting, in flight or failed is ignored without a word, and counted" {
	{
		req a0 A 0
		req a1 A 1
	} >1.msg
	run -0 step 1.msg
	req a0 A 0 | expect_same - out.msg
	# The same messages again, and the same versions under other ids.
	{
		req a0 A 0
		req a1 A 1
		req a0y A 0 'X-Copy: yes'
		req a1y A 1 'X-Copy: yes'
	} >2.msg
	run -0 step --stale stale.msg --stats 2.msg
	[ ! -s out.msg ]
	[ ! -e stale.msg ] || [ ! -s stale.msg ]
	trickle_stats in=4 duplicates=4 waiting=1 in-flight=1 | expect_same - err.txt
	entity_is A in-flight 0 1 1 -
	# Failed, A 0 is still stored: a copy is a duplicate.
	fail a0 >r.msg
	run -0 step --stats -r r.msg 2.msg
	[ ! -s out.msg ]
	trickle_stats in=4 responses=1 failed=1 duplicates=4 blocked=1 waiting=1 |
		expect_same - err.txt
	entity_is A failed 0 1 1 - failure 'target: rejected'
}

@test "--latest: when an entity is free only its newest waiting version goes; the older ones go to --superseded" {
	req a0 A 0 >1.msg
	run -0 step --latest 1.msg
	expect_same 1.msg out.msg
	{
		req a1 A 1
		req a3 A 3 'X-Note: newest'
		req a2 A 2 'Error: msg-route: an earlier failure'
	} >2.msg
	run -0 step --latest --superseded sup.msg 2.msg
	[ ! -s out.msg ]
	[ ! -s err.txt ]
	entity_is A in-flight 0 1 '1 2 3' -
	ok a0 >r.msg
	run -0 step --latest --superseded sup.msg --stats -r r.msg
	req a3 A 3 'X-Note: newest' | expect_same - out.msg
	{
		req a1 A 1 'Error: msg-trickle: superseded by version 3'
		req a2 A 2 'Error: msg-trickle: superseded by version 3'
	} | expect_same - sup.msg
	trickle_stats responses=1 sent=1 succeeded=1 superseded=2 in-flight=1 | expect_same - err.txt
	entity_is A in-flight 3 1 '' 0
	# The superseded are gone: a copy of one now is stale.
	run -0 step --latest --stale stale.msg 2.msg
	[ ! -s out.msg ]
	[ "$(fields stale.msg Message-Id | cut -f 1 | paste -sd ' ')" = 'a1 a2' ]
	# Without --superseded they are dropped without a word, counted.
	{
		req a4 A 4
		req a5 A 5
		req a6 A 6
	} >3.msg
	run -0 step --latest 3.msg
	[ ! -s err.txt ]
	ok a3 >r.msg
	run -0 step --latest --stats -r r.msg
	req a6 A 6 | expect_same - out.msg
	trickle_stats responses=1 sent=1 succeeded=1 superseded=2 in-flight=1 | expect_same - err.txt
	[ "$(count_frames sup.msg)" = 2 ]
	# A version alone waiting is the newest: it goes.
	req a7 A 7 >4.msg
	run -0 step --latest 4.msg
	ok a6 >r.msg
	run -0 step --latest -r r.msg
	expect_same 4.msg out.msg
}

# ---- responses ----

@test "unmatched: a response for nothing in flight goes to --unmatched with an Error header, counted" {
	{
		req a0 A 0
		req b0 B 0
	} >1.msg
	run -0 step 1.msg
	fail b0 >r.msg
	run -0 step -r r.msg
	entity_is B failed 0 1 '' - failure 'target: rejected'
	# No Correlation-Id; one that was never sent; B's, failed already;
	# A's success, then a second one.
	{
		frame 'done' 'Message-Id: u1' 'Status: success'
		frame 'done' 'Message-Id: u2' 'Correlation-Id: nope' 'Status: success'
		frame 'done' 'Message-Id: u3' 'Correlation-Id: b0' 'Status: success'
		ok a0
		frame 'done' 'Message-Id: u4' 'Correlation-Id: a0' 'Status: success'
	} >2.msg
	run -0 step --unmatched unm.msg --stats -r 2.msg
	[ ! -s out.msg ]
	{
		frame 'done' 'Message-Id: u1' 'Status: success' 'Error: msg-trickle: unmatched: no Correlation-Id'
		frame 'done' 'Message-Id: u2' 'Correlation-Id: nope' 'Status: success' \
			"Error: msg-trickle: unmatched: no message in flight has this Message-Id"
		frame 'done' 'Message-Id: u3' 'Correlation-Id: b0' 'Status: success' \
			"Error: msg-trickle: unmatched: no message in flight has this Message-Id"
		frame 'done' 'Message-Id: u4' 'Correlation-Id: a0' 'Status: success' \
			"Error: msg-trickle: unmatched: no message in flight has this Message-Id"
	} | expect_same - unm.msg
	trickle_stats responses=5 succeeded=1 unmatched=4 blocked=1 | expect_same - err.txt
	entity_is B failed 0 1 '' - failure 'target: rejected'
	entity_is A idle - 0 '' 0
	# Without --unmatched: dropped, each with a warning.
	run -0 step --stats -r 2.msg
	{
		echo 'msg-trickle: warning: message u1: unmatched: no Correlation-Id; dropped'
		echo "msg-trickle: warning: message u2: unmatched: no message in flight has this Message-Id; dropped"
		echo "msg-trickle: warning: message u3: unmatched: no message in flight has this Message-Id; dropped"
		echo "msg-trickle: warning: message r-a0: unmatched: no message in flight has this Message-Id; dropped"
		echo "msg-trickle: warning: message u4: unmatched: no message in flight has this Message-Id; dropped"
		trickle_stats responses=5 unmatched=5 blocked=1
	} | expect_same - err.txt
}

@test "-s: success is what the expression says; anything else is a failure" {
	{
		req a0 A 0
		req b0 B 0
	} >1.msg
	run -0 step 1.msg
	{
		frame '<r code="200"/>' 'Message-Id: r1' 'Correlation-Id: a0' 'Content-Type: application/xml'
		frame '<r code="500"/>' 'Message-Id: r2' 'Correlation-Id: b0' 'Content-Type: application/xml' \
			'Status: broken' 'Error: target: disk on fire'
	} >r.msg
	run -0 step -s '/r/@code = 200' --stats -r r.msg
	[ ! -s out.msg ]
	trickle_stats responses=2 succeeded=1 failed=1 blocked=1 | expect_same - err.txt
	entity_is A idle - 0 '' 0
	entity_is B failed 0 1 '' - broken 'target: disk on fire'
	# By default, Status: success only.
	req a1 A 1 >2.msg
	run -0 step 2.msg
	frame x 'Message-Id: r3' 'Correlation-Id: a1' 'Status: Success' >r.msg
	run -0 step -r r.msg
	[ "$(msg-trickle status --state st --json A | jq -c '.[0] | [.state, .version, .failure.status]')" = '["failed","1","Success"]' ]
}

# ---- invalid requests ----

# bad_requests: valid ones (A 0, A 1), and between them one of each kind
# of invalid request.
bad_requests() {
	req a0 A 0
	frame 'no key' 'Message-Id: k1' 'Entity-Version: 1' 'Content-Type: text/plain'
	frame 'empty key' 'Message-Id: k2' 'Entity-Id: ' 'Entity-Version: 1' 'Content-Type: text/plain'
	frame 'no version' 'Message-Id: k3' 'Entity-Id: A' 'Content-Type: text/plain'
	req k4 A 1.5
	req k5 A x2
	req k6 A 99999999999999999999
	req k7 A $'1\t2'
	req k8 $'A\tB' 1
	frame 'no id' 'Entity-Id: A' 'Entity-Version: 3' 'Content-Type: text/plain'
	req a1 A 1
}

@test "invalid: no key, no version, a version not an integer, control characters, no Message-Id: to --invalid with a warning" {
	bad_requests >in.msg
	run -0 step --invalid inv.msg --stats in.msg
	req a0 A 0 | expect_same - out.msg
	{
		frame 'no key' 'Message-Id: k1' 'Entity-Version: 1' 'Content-Type: text/plain' \
			'Error: msg-trickle: no entity key'
		frame 'empty key' 'Message-Id: k2' 'Entity-Id: ' 'Entity-Version: 1' 'Content-Type: text/plain' \
			'Error: msg-trickle: no entity key'
		frame 'no version' 'Message-Id: k3' 'Entity-Id: A' 'Content-Type: text/plain' \
			'Error: msg-trickle: no version'
		req k4 A 1.5 "Error: msg-trickle: version '1.5' is not an integer"
		req k5 A x2 "Error: msg-trickle: version 'x2' is not an integer"
		req k6 A 99999999999999999999 "Error: msg-trickle: version '99999999999999999999' is not an integer"
		req k7 A $'1\t2' 'Error: msg-trickle: the version holds a control character'
		req k8 $'A\tB' 1 'Error: msg-trickle: the entity key holds a control character'
		frame 'no id' 'Entity-Id: A' 'Entity-Version: 3' 'Content-Type: text/plain' \
			'Error: msg-trickle: no Message-Id: a response could not name it'
	} | expect_same - inv.msg
	{
		echo "msg-trickle: warning: message k1: no entity key: diverted to 'inv.msg'"
		echo "msg-trickle: warning: message k2: no entity key: diverted to 'inv.msg'"
		echo "msg-trickle: warning: message k3: no version: diverted to 'inv.msg'"
		echo "msg-trickle: warning: message k4: version '1.5' is not an integer: diverted to 'inv.msg'"
		echo "msg-trickle: warning: message k5: version 'x2' is not an integer: diverted to 'inv.msg'"
		echo "msg-trickle: warning: message k6: version '99999999999999999999' is not an integer: diverted to 'inv.msg'"
		echo "msg-trickle: warning: message k7: the version holds a control character: diverted to 'inv.msg'"
		echo "msg-trickle: warning: message k8: the entity key holds a control character: diverted to 'inv.msg'"
		echo "msg-trickle: warning: message without Message-Id: no Message-Id: a response could not name it: diverted to 'inv.msg'"
		trickle_stats in=11 sent=1 invalid=9 waiting=1 in-flight=1
	} | expect_same - err.txt
	entity_is A in-flight 0 1 1 -
	# A Message-Id in flight for another version would make responses
	# ambiguous.
	req a0 A 5 >id.msg
	run -0 step --invalid inv2.msg id.msg
	[ ! -s out.msg ]
	req a0 A 5 'Error: msg-trickle: Message-Id already in flight for another version' |
		expect_same - inv2.msg
	echo "msg-trickle: warning: message a0: Message-Id already in flight for another version: diverted to 'inv2.msg'" |
		expect_same - err.txt
	# The largest and smallest 64-bit versions are versions.
	{
		req m1 M -9223372036854775808
		req m2 M 9223372036854775807
	} >m.msg
	run -0 step m.msg
	[ ! -s err.txt ]
	req m1 M -9223372036854775808 | expect_same - out.msg
	entity_is M in-flight -9223372036854775808 1 9223372036854775807 -
}

@test "invalid: without --invalid, exit 65 naming the message, after what came before it was sent" {
	bad_requests >in.msg
	run -65 step in.msg
	req a0 A 0 | expect_same - out.msg
	echo 'msg-trickle: in.msg: message 2 (Message-Id k1): no entity key' | expect_same - err.txt
	entity_is A in-flight 0 1 '' -
	# A key with a newline, from the body.
	frame '{"id": "a\nb", "v": 1}' 'Message-Id: j1' 'Content-Type: application/json' >j.msg
	run -65 step -k "json('/id')" -v "json('/v')" j.msg
	[ ! -s out.msg ]
	echo 'msg-trickle: j.msg: message 1 (Message-Id j1): the entity key holds a control character' |
		expect_same - err.txt
}

@test "invalid: from a dir: input the message is set aside in bad/, the run goes on, and exits 65 at the end" {
	{
		req a0 A 0
		req k5 A x2
		req b0 B 0
	} | spool in
	run -65 step dir:in
	{
		req a0 A 0
		req b0 B 0
	} | expect_same - out.msg
	[ "$(head -n 1 err.txt)" = "msg-trickle: dir:in/cur/0000002.msg: message 1 (Message-Id k5): version 'x2' is not an integer" ]
	[ "$(sed -n 2p err.txt)" = "msg-trickle: 'dir:in/cur/0000002.msg' set aside as 'dir:in/bad/0000002.msg'" ]
	[ "$(grep -c . err.txt)" = 2 ]
	req k5 A x2 | cmp - in/bad/0000002.msg
	[ "$(files_in in)" = 1 ]
}

# ---- failure and the operator ----

@test "failure: nothing more is sent for the entity; retry resends its version with Trickle-Attempt" {
	{
		req a0 A 0
		req a1 A 1
	} >1.msg
	run -0 step 1.msg
	fail a0 'target: PO A unknown' >r.msg
	run -0 step --stats -r r.msg
	[ ! -s out.msg ]
	trickle_stats responses=1 failed=1 blocked=1 waiting=1 | expect_same - err.txt
	entity_is A failed 0 1 1 - failure 'target: PO A unknown'
	# More versions of A wait; the failure does not go away by itself.
	req a2 A 2 >2.msg
	run -0 step 2.msg
	[ ! -s out.msg ]
	entity_is A failed 0 1 '1 2' - failure 'target: PO A unknown'
	# retry, no instance running: applied to the state at once (what it
	# says and the state it leaves are checked last), and the next run
	# sends the version again.
	run -0 timeout -k 5 30 msg-trickle retry --state st A
	local said=$output
	local after_retry
	after_retry=$(msg-trickle status --state st --json A | jq -c '.[0] | [.state, .version, .attempts, .waiting]')
	run -0 step --stats
	req a0 A 0 'Trickle-Attempt: 2' | expect_same - out.msg
	trickle_stats sent=1 retried=1 waiting=2 in-flight=1 | expect_same - err.txt
	[ "$(msg-trickle status --state st --json A | jq -c '.[0] | [.state, .version, .attempts, .waiting]')" = '["in-flight","0",2,["1","2"]]' ]
	# Its success lets the next one go, a first attempt.
	ok a0 >r.msg
	run -0 step -r r.msg
	req a1 A 1 | expect_same - out.msg
	entity_is A in-flight 1 1 2 0
	[ "$said" = "msg-trickle: retry 'A': applied" ]
	# Due at once: the next run sends it as the next attempt.
	[ "$after_retry" = '["failed","0",1,["1","2"]]' ]
}

@test "failure: skip drops the failed version and sends the next waiting one" {
	{
		req a0 A 0
		req a1 A 1
		req a2 A 2
	} >1.msg
	run -0 step 1.msg
	fail a0 >r.msg
	run -0 step -r r.msg
	# What each command says is checked last.
	run -0 timeout -k 5 30 msg-trickle skip --state st A
	echo "$output" >said.txt
	entity_is A ready - 0 '1 2' -
	run -0 step --stats
	req a1 A 1 | expect_same - out.msg
	trickle_stats sent=1 waiting=1 in-flight=1 | expect_same - err.txt
	entity_is A in-flight 1 1 2 -
	# The skipped version is gone: a copy of it is stale (what is said
	# of it is checked last).
	run -0 step --stats 1.msg
	[ ! -s out.msg ]
	mv err.txt stale.txt
	# Skipping an in-flight version: the next goes; then nothing waits.
	run -0 timeout -k 5 30 msg-trickle skip --state st A
	echo "$output" >>said.txt
	run -0 step
	req a2 A 2 | expect_same - out.msg
	run -0 timeout -k 5 30 msg-trickle skip --state st A
	echo "$output" >>said.txt
	run -0 step --stats
	[ ! -s out.msg ]
	trickle_stats | expect_same - err.txt
	entity_is A idle - 0 '' -
	{
		echo "msg-trickle: warning: message a0: stale: version 0 of entity 'A' is at or below version 1, already sent; dropped"
		trickle_stats in=3 stale=1 duplicates=2 waiting=1 in-flight=1
	} | expect_same - stale.txt
	printf "msg-trickle: skip 'A': applied\n%.0s" 1 2 3 | expect_same - said.txt
}

@test "failure: release takes an in-flight version as succeeded; its late response is unmatched" {
	{
		req a0 A 0
		req a1 A 1
	} >1.msg
	run -0 step 1.msg
	run -0 timeout -k 5 30 msg-trickle release --state st A
	local said=$output
	entity_is A ready - 0 1 0
	run -0 step
	req a1 A 1 | expect_same - out.msg
	entity_is A in-flight 1 1 '' 0
	ok a0 >r.msg
	run -0 step --stats -r r.msg
	[ ! -s out.msg ]
	{
		echo "msg-trickle: warning: message r-a0: unmatched: no message in flight has this Message-Id; dropped"
		trickle_stats responses=1 unmatched=1 in-flight=1
	} | expect_same - err.txt
	# A failed version is not in flight: release refuses it.
	fail a1 >r.msg
	run -0 step -r r.msg
	run -65 timeout -k 5 30 msg-trickle release --state st A
	[ "$output" = "msg-trickle: release: entity 'A' is failed, not in flight" ]
	entity_is A failed 1 1 '' 0 failure 'target: rejected'
	[ "$said" = "msg-trickle: release 'A': applied" ]
}

@test "commands: on an entity in the wrong state, or none, exit 65 and change nothing" {
	req a0 A 0 >1.msg
	run -0 step 1.msg
	ok a0 >r.msg
	run -0 step -r r.msg
	entity_is A idle - 0 '' 0
	run -65 timeout -k 5 30 msg-trickle retry --state st A
	[ "$output" = "msg-trickle: retry: entity 'A' is idle, not failed or in flight" ]
	run -65 timeout -k 5 30 msg-trickle skip --state st A
	[ "$output" = "msg-trickle: skip: entity 'A' is idle, not failed or in flight" ]
	run -65 timeout -k 5 30 msg-trickle release --state st A
	[ "$output" = "msg-trickle: release: entity 'A' is idle, not in flight" ]
	run -65 timeout -k 5 30 msg-trickle retry --state st Z
	[ "$output" = "msg-trickle: no entity 'Z' in 'st'" ]
	entity_is A idle - 0 '' 0
	[ "$(files_in st/commands)" = 0 ]
	# Nothing was queued for a later run either.
	run -0 step --stats
	[ ! -s out.msg ]
	trickle_stats | expect_same - err.txt
	# Usage: a command needs --state and a key.
	run -64 timeout -k 5 30 msg-trickle retry --state st
	[[ $output == *'usage: msg-trickle '* ]]
	run -64 timeout -k 5 30 msg-trickle skip A
	[[ $output == *'usage: msg-trickle '* ]]
}

@test "commands: retry and skip reach a running instance, which applies them in its next batch" {
	mkfifo req.fifo resp.fifo
	spawn timeout -k 5 60 msg-trickle --state st --stats -r resp.fifo --output out.msg \
		req.fifo 2>err.txt
	local trickler=$spawned
	exec 4>req.fifo 5>resp.fifo
	{
		req a0 A 0
		req a1 A 1
		req b0 B 0
		req b1 B 1
	} >&4
	wait_until 20 has_frames out.msg 2
	{
		fail a0
		fail b0
	} >&5
	wait_until 20 state_is A failed
	wait_until 20 state_is B failed
	# What the commands say is checked last.
	run -0 timeout -k 5 30 msg-trickle retry --state st A
	echo "$output" >said.txt
	wait_until 20 has_frames out.msg 3
	run -0 timeout -k 5 30 msg-trickle skip --state st B
	echo "$output" >>said.txt
	wait_until 20 has_frames out.msg 4
	{
		req a0 A 0
		req b0 B 0
		req a0 A 0 'Trickle-Attempt: 2'
		req b1 B 1
	} | expect_same - out.msg
	# The spool of commands is empty once they are applied.
	[ "$(files_in st/commands)" = 0 ]
	{
		ok a0
		ok b1
	} >&5
	wait_until 20 has_frames out.msg 5
	ok a1 >&5
	wait_until 20 state_is A idle
	# The requests end and nothing is in flight: the instance ends.
	exec 4>&-
	exit_status "$trickler" 20
	[ "$status" = 0 ]
	{
		echo "msg-trickle: retry 'A' by the operator"
		echo "msg-trickle: skip 'B' by the operator"
		trickle_stats in=4 responses=5 sent=5 succeeded=3 failed=2 retried=1 commands=2
	} | expect_same - err.txt
	{
		echo "msg-trickle: retry 'A': applied by the running instance"
		echo "msg-trickle: skip 'B': applied by the running instance"
	} | expect_same - said.txt
}

@test "retry: several keys in one command, each resent by the next run" {
	{
		req a0 A 0
		req b0 B 0
		req c0 C 0
	} >1.msg
	run -0 step 1.msg
	{
		fail a0
		fail c0
	} >r.msg
	run -0 step -r r.msg
	run -0 timeout -k 5 30 msg-trickle retry --state st A C
	run -0 step --stats
	{
		req a0 A 0 'Trickle-Attempt: 2'
		req c0 C 0 'Trickle-Attempt: 2'
	} | expect_same - out.msg
	trickle_stats sent=2 retried=2 in-flight=3 | expect_same - err.txt
	# One key in the wrong state: nothing is done for any.
	run -65 timeout -k 5 30 msg-trickle retry --state st B Z
	[ "$output" = "msg-trickle: no entity 'Z' in 'st'" ]
	run -0 step
	[ ! -s out.msg ]
}

# ---- running without --once ----

@test "running: ends once the requests are at their end and nothing is in flight, or the responses are at their end too" {
	{
		req a0 A 0
		req a1 A 1
		req b0 B 0
	} >1.msg
	: >none.msg
	# The responses, a file, end at once: the run ends with A 0 and B 0
	# in flight.
	run -0 trickle --state st --stats -r none.msg 1.msg
	{
		req a0 A 0
		req b0 B 0
	} | expect_same - out.msg
	trickle_stats in=3 sent=2 waiting=1 in-flight=2 | expect_same - err.txt
	msg-trickle status --state st --json | jq -c 'map([.key, .state, .version])' >got
	echo '[["A","in-flight","0"],["B","in-flight","0"]]' | expect_same - got
	# Responses in a file behind the requests: read side by side, every
	# version goes as the one before succeeds, and the run ends with
	# nothing in flight.
	{
		ok a0
		ok b0
	} >r.msg
	run -0 trickle --state st --stats -r r.msg none.msg
	req a1 A 1 | expect_same - out.msg
	trickle_stats responses=2 sent=1 succeeded=2 in-flight=1 | expect_same - err.txt
}

@test "running: a responses FIFO whose last writer closed is opened again, while versions are in flight" {
	{
		req a0 A 0
		req a1 A 1
		req a2 A 2
	} >1.msg
	mkfifo resp.fifo
	spawn timeout -k 5 60 msg-trickle --state st --stats -r resp.fifo --output out.msg 1.msg 2>err.txt
	local trickler=$spawned
	exec 5>resp.fifo
	wait_until 20 has_frames out.msg 1
	ok a0 >&5
	exec 5>&-
	wait_until 20 has_frames out.msg 2
	# A writer of its own for each response, as a target that opens
	# the FIFO for each would do.
	ok a1 >resp.fifo
	wait_until 20 has_frames out.msg 3
	ok a2 >resp.fifo
	exit_status "$trickler" 20
	[ "$status" = 0 ]
	{
		req a0 A 0
		req a1 A 1
		req a2 A 2
	} | expect_same - out.msg
	trickle_stats in=3 responses=3 sent=3 succeeded=3 | expect_same - err.txt
}

@test "byte for byte: a binary body, headers of any case and spacing pass unchanged; a resend only adds Trickle-Attempt" {
	printf 'message-id: bin1\nentity-id: A\nENTITY-VERSION:   0  \nX-Empty: \nContent-Length: 7\n\na\0b\r\n\377z\n' >1.msg
	run -0 step --resend-after 1s 1.msg
	cmp 1.msg out.msg
	sleep 1.5
	run -0 step --resend-after 1s
	printf 'message-id: bin1\nentity-id: A\nENTITY-VERSION:   0  \nX-Empty: \nTrickle-Attempt: 2\nContent-Length: 7\n\na\0b\r\n\377z\n' |
		cmp - out.msg
	frame x 'Message-Id: r1' 'Correlation-Id: bin1' 'Status: success' >r.msg
	run -0 step -r r.msg
	entity_is A idle - 0 '' 0
}

# ---- time: retries and resends ----

@test "--retry-after: a failed version goes again after the delay, with Trickle-Attempt, until --max-attempts" {
	local -a opts=(--retry-after 3s --max-attempts 3)
	req a0 A 0 >1.msg
	run -0 step "${opts[@]}" 1.msg
	local n
	for n in 2 3; do
		fail a0 >r.msg
		run -0 step "${opts[@]}" --stats -r r.msg
		[ ! -s out.msg ]
		trickle_stats responses=1 failed=1 blocked=1 | expect_same - err.txt
		[ "$(msg-trickle status --state st --json A | jq -c '.[0] | [.state, .attempts, (.next_attempt != null)]')" = "[\"failed\",$((n - 1)),true]" ]
		# Not before its time...
		run -0 step "${opts[@]}"
		[ ! -s out.msg ]
		# ...then once.
		sleep 3.5
		run -0 step "${opts[@]}" --stats
		req a0 A 0 "Trickle-Attempt: $n" | expect_same - out.msg
		trickle_stats sent=1 retried=1 in-flight=1 | expect_same - err.txt
		run -0 step "${opts[@]}"
		[ ! -s out.msg ]
	done
	# The third failure is the last attempt: A stays failed.
	fail a0 'target: still no' >r.msg
	run -0 step "${opts[@]}" -r r.msg
	entity_is A failed 0 3 '' - failure 'target: still no'
	sleep 3.5
	run -0 step "${opts[@]}" --stats
	[ ! -s out.msg ]
	trickle_stats blocked=1 | expect_same - err.txt
	# An operator's retry still works, and counts.
	run -0 timeout -k 5 30 msg-trickle retry --state st A
	run -0 step "${opts[@]}"
	req a0 A 0 'Trickle-Attempt: 4' | expect_same - out.msg
}

@test "--retry-after: a running instance resends on its own, reopens its responses FIFO, and ends once the last attempt failed" {
	req a0 A 0 >1.msg
	mkfifo resp.fifo
	spawn timeout -k 5 60 msg-trickle --state st --retry-after 1s --max-attempts 2 --stats \
		-r resp.fifo --output out.msg 1.msg 2>err.txt
	local trickler=$spawned t0 ms
	exec 5>resp.fifo
	wait_until 20 has_frames out.msg 1
	t0=${EPOCHREALTIME/./}
	fail a0 >&5
	wait_until 20 has_frames out.msg 2
	ms=$(((${EPOCHREALTIME/./} - t0) / 1000))
	echo "resent after $ms ms"
	[ "$ms" -ge 1000 ]
	{
		req a0 A 0
		req a0 A 0 'Trickle-Attempt: 2'
	} | expect_same - out.msg
	# Still running while a message is in flight, though the responses'
	# last writer closes: the FIFO is opened again for the next one.
	exec 5>&-
	sleep 0.5
	kill -0 "$trickler"
	exec 5>resp.fifo
	fail a0 >&5
	exit_status "$trickler" 20
	[ "$status" = 0 ]
	trickle_stats in=1 responses=2 sent=2 failed=2 retried=1 blocked=1 |
		expect_same - err.txt
	entity_is A failed 0 2 '' - failure 'target: rejected'
}

@test "--resend-after: a version in flight with no response is sent again after the delay, counted as resent" {
	local -a opts=(--resend-after 3s)
	{
		req a0 A 0
		req a1 A 1
	} >1.msg
	run -0 step "${opts[@]}" 1.msg
	req a0 A 0 | expect_same - out.msg
	run -0 step "${opts[@]}"
	[ ! -s out.msg ]
	sleep 3.5
	run -0 step "${opts[@]}" --stats
	req a0 A 0 'Trickle-Attempt: 2' | expect_same - out.msg
	trickle_stats sent=1 resent=1 waiting=1 in-flight=1 | expect_same - err.txt
	[ "$(msg-trickle status --state st --json A | jq -c '.[0] | [.state, .version, .attempts]')" = '["in-flight","0",2]' ]
	# The delay counts from the resend.
	run -0 step "${opts[@]}"
	[ ! -s out.msg ]
	ok a0 >r.msg
	run -0 step "${opts[@]}" -r r.msg
	req a1 A 1 | expect_same - out.msg
	# Its next attempt is the resend's.
	[ "$(msg-trickle status --state st --json A | jq -c '.[0] | [.state, .version, .attempts, .last_ok, (.next_attempt != null)]')" = '["in-flight","1",1,"0",true]' ]
	# With --max-attempts, resends stop there.
	sleep 3.5
	run -0 step "${opts[@]}" --max-attempts 2
	req a1 A 1 'Trickle-Attempt: 2' | expect_same - out.msg
	sleep 3.5
	run -0 step "${opts[@]}" --max-attempts 2 --stats
	[ ! -s out.msg ]
	trickle_stats in-flight=1 | expect_same - err.txt
}

@test "--resend-after: after a restart, a version in flight stays in flight, resent only once --resend-after is given" {
	req a0 A 0 >1.msg
	run -0 step 1.msg
	req a0 A 0 | expect_same - out.msg
	sleep 2.5
	run -0 step --stats
	[ ! -s out.msg ]
	trickle_stats in-flight=1 | expect_same - err.txt
	# It has had no response for longer than 2 s.
	run -0 step --resend-after 2s --stats
	req a0 A 0 'Trickle-Attempt: 2' | expect_same - out.msg
	trickle_stats sent=1 resent=1 in-flight=1 | expect_same - err.txt
}

# ---- load: a target down, --max-in-flight ----

@test "target down: 1,000 versions of A and 100 each of B and C pile up, then drain in order once responses come" {
	awk 'BEGIN {
		for (v = 0; v < 1000; v++)
			for (k = 0; k < (v < 100 ? 3 : 1); k++) {
				e = substr("ABC", k + 1, 1)
				body = e " v" v
				printf "Message-Id: %s%d\nEntity-Id: %s\nEntity-Version: %d\n", e, v, e, v
				printf "Content-Type: text/plain\nContent-Length: %d\n\n%s\n", length(body), body
			}
	}' >all.msg
	run -0 step --stats all.msg
	cp out.msg first.msg
	sent_is first.msg 'A 0 -' 'B 0 -' 'C 0 -'
	trickle_stats in=1200 sent=3 waiting=1197 in-flight=3 | expect_same - err.txt
	[ "$(msg-trickle status --state st --json | jq -c 'map([.key, .state, (.waiting | length), .waiting[0], .waiting[-1]])')" = \
		'[["A","in-flight",999,"1","999"],["B","in-flight",99,"1","99"],["C","in-flight",99,"1","99"]]' ]
	# Still down: more runs change nothing.
	run -0 step
	[ ! -s out.msg ]
	# Back up: a target that answers each message with a success, the
	# three sent while it was down first.
	mkfifo resp.fifo
	: >none.msg
	run -0 timeout -k 5 120 bash -c '
		set -o pipefail
		msg-trickle --state st --stats -r resp.fifo none.msg 2>err.txt |
			tee sent.msg | cat first.msg - |
			msg-translate --set "Correlation-Id=header('\''Message-Id'\'')" -H "Status: success" \
			>resp.fifo'
	trickle_stats responses=1200 sent=1197 succeeded=1200 | expect_same - err.txt
	cat first.msg sent.msg >all-sent.msg
	# Each entity's versions, in order, each once, first attempts all.
	sent all-sent.msg | awk '
		$3 != "-" { print "attempt: " $0; bad = 1 }
		$2 != n[$1]++ { print $1 ": " $2 " after " n[$1] - 2; bad = 1 }
		END {
			if (n["A"] != 1000 || n["B"] != 100 || n["C"] != 100) {
				print "counts", n["A"], n["B"], n["C"]
				bad = 1
			}
			exit bad
		}'
	[ "$(msg-trickle status --state st --json | jq -c 'map([.key, .state, .last_ok])')" = \
		'[["A","idle","999"],["B","idle","99"],["C","idle","99"]]' ]
}

@test "--max-in-flight: no more entities in flight than the cap; the others are ready, sent as one is answered" {
	{
		req a0 A 0
		req b0 B 0
		req c0 C 0
		req a1 A 1
	} >1.msg
	run -0 step --max-in-flight 2 --stats 1.msg
	{
		req a0 A 0
		req b0 B 0
	} | expect_same - out.msg
	trickle_stats in=4 sent=2 waiting=2 in-flight=2 | expect_same - err.txt
	entity_is C ready - 0 0 -
	# A's success frees a place, which A's next version takes.
	ok a0 >r.msg
	run -0 step --max-in-flight 2 -r r.msg
	req a1 A 1 | expect_same - out.msg
	entity_is C ready - 0 0 -
	ok b0 >r.msg
	run -0 step --max-in-flight 2 -r r.msg
	req c0 C 0 | expect_same - out.msg
	# Without a cap, every free entity goes.
	req d0 D 0 >2.msg
	run -0 step 2.msg
	expect_same 2.msg out.msg
}

# ---- many entities against the model ----

@test "model: 50 entities, random versions with copies and stale ones, random failures retried: sent as the model says" {
	local seed=${TRICKLE_SEED:-$RANDOM} round n=0 key dups=0 runs
	echo "seed $seed (TRICKLE_SEED=$seed to run it again)"
	plan "$seed" 50 6 >plan.txt
	: >log.txt
	: >sent.txt
	: >pending.txt
	: >ok.txt
	# A round: the requests of the round, then the target's answers to
	# all sent since it last answered, then a retry of each failure.
	for ((round = 1; round <= 80; round++)); do
		requests_of "$round" <plan.txt >req.msg
		n=$((n + 1))
		echo "run $n" >>log.txt
		awk -v r="$round" '$1 == r { print "req", $2, $3, $4 }' plan.txt >>log.txt
		run -0 step --stale stale.msg --unmatched unm.msg --stats req.msg
		[ "$(grep -vc '^msg-trickle: stats: ' err.txt)" = 0 ]
		dups=$((dups + $(sed -n 's/.*duplicates \([0-9]*\),.*/\1/p' err.txt)))
		[ ! -s out.msg ] || fields out.msg Entity-Id Entity-Version Trickle-Attempt Message-Id |
			cut -f 1-4 | tr '\t' ' ' | tee -a pending.txt | sed "s/^/$n /" >>sent.txt
		n=$((n + 1))
		echo "run $n" >>log.txt
		respond "$seed$n" "$((n * 1000))" <pending.txt >>log.txt
		: >pending.txt
		run -0 step --stale stale.msg --unmatched unm.msg --stats -r resp.msg
		[ "$(grep -vc '^msg-trickle: stats: ' err.txt)" = 0 ]
		[ ! -s out.msg ] || fields out.msg Entity-Id Entity-Version Trickle-Attempt Message-Id |
			cut -f 1-4 | tr '\t' ' ' | tee -a pending.txt | sed "s/^/$n /" >>sent.txt
		for key in $(msg-trickle status --state st --json | jq -r '.[] | select(.state == "failed") | .key'); do
			run -0 timeout -k 5 30 msg-trickle retry --state st "$key"
			echo "retry $key" >>log.txt
		done
		if [ "$round" -ge 6 ] && [ ! -s pending.txt ] &&
			[ "$(msg-trickle status --state st --json | jq '[.[] | select(.state != "idle")] | length')" = 0 ]; then
			break
		fi
	done
	runs=$n
	echo "$runs runs"
	awk -f "$FIXTURES/trickle/model.awk" log.txt >model.txt
	# What each run sent, entity by entity.
	awk '$1 == "sent" { print $2, $3, $4, $5 }' model.txt | sort -k 1,1n -k 2 >expect
	awk '{ print $1, $2, $3, ($4 == "-" ? 1 : $4) }' sent.txt | sort -k 1,1n -k 2 >got
	expect_same expect got
	# Every version kept was delivered, once, and nothing else: each
	# version of the plan was kept, or stale when it came.
	run -1 grep '^left ' model.txt
	[ -z "$output" ]
	awk '$1 == "stored" { print $2, $3 }' model.txt | sort >expect
	awk '$1 == "delivered" { print $2, $3 }' model.txt | sort >got
	expect_same expect got
	awk '$1 == "stored" || $1 == "stale" { print $2, $3 }' model.txt | sort -u >got
	cut -d ' ' -f 2-3 plan.txt | sort -u | expect_same - got
	# The counts of stale, duplicate and unmatched messages, and what
	# the state says at the end.
	[ "$(count_frames stale.msg)" = "$(grep -c '^stale ' model.txt)" ]
	fields stale.msg Entity-Id Entity-Version | cut -f 1-2 | tr '\t' ' ' | sort >got
	awk '$1 == "stale" { print $2, $3 }' model.txt | sort | expect_same - got
	[ "$dups" = "$(grep -c '^dup ' model.txt)" ]
	[ "$(count_frames unm.msg)" = "$(grep -c '^unmatched ' model.txt)" ]
	msg-trickle status --state st --json | jq -r '.[] | "\(.key) \(.state) \(.last_ok)"' >got
	awk '$1 == "delivered" && (!($2 in last) || $3 + 0 > last[$2] + 0) { last[$2] = $3 }
		END { for (k in last) print k, "idle", last[k] }' model.txt | sort | expect_same - got
}

# ---- status ----

@test "status: a header line, then one tab-separated line per entity in key order" {
	local before after
	before=$(date -u +%s)
	{
		req b0 B 0
		req b1 B 1
		req b2 B 2
		req a0 A 0
		req c0 C 0
	} >1.msg
	run -0 step 1.msg
	after=$(date -u +%s)
	# The responses come more than a second later: SINCE stays the
	# time the version was sent.
	sleep 1.1
	fail a0 'target: PO A unknown' >r.msg
	ok c0 >>r.msg
	run -0 step -r r.msg
	run -0 --separate-stderr timeout -k 5 30 msg-trickle status --state st
	[ -z "$stderr" ]
	printf '%s\n' "${lines[@]}" >status.txt
	[ "${#lines[@]}" = 4 ]
	[ "${lines[0]}" = $'KEY\tSTATE\tVERSION\tSINCE\tATTEMPTS\tWAITING\tLAST-OK\tFAILURE' ]
	# The times, checked apart: when the versions were sent (A's last).
	local since
	since=$(cut -f 4 <<<"${lines[2]}")
	[[ $since =~ ^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z$ ]]
	[ "$(date -u -d "${since%.*}" +%s)" -ge "$before" ]
	[ "$(date -u -d "${since%.*}" +%s)" -le "$after" ]
	cut -f 1-3,5- status.txt >got
	{
		printf 'KEY\tSTATE\tVERSION\tATTEMPTS\tWAITING\tLAST-OK\tFAILURE\n'
		printf 'A\tfailed\t0\t1\t-\t-\tfailure: target: PO A unknown\n'
		printf 'B\tin-flight\t0\t1\t1 2\t-\t-\n'
		printf 'C\tidle\t-\t0\t-\t0\t-\n'
	} | expect_same - got
	[ "$(cut -f 4 <<<"${lines[3]}")" = - ]
	# Keys given: those only, in key order.
	run -0 --separate-stderr timeout -k 5 30 msg-trickle status --state st C A
	[ "${#lines[@]}" = 3 ]
	[ "$(printf '%s\n' "${lines[@]}" | cut -f 1)" = $'KEY\nA\nC' ]
	# An unknown key: the known ones, then exit 65.
	run -65 --separate-stderr timeout -k 5 30 msg-trickle status --state st C Z
	[ "$stderr" = "msg-trickle: no entity 'Z' in 'st'" ]
	[ "${#lines[@]}" = 2 ]
	[ "$(printf '%s\n' "${lines[@]}" | cut -f 1)" = $'KEY\nC' ]
	since=$(sed -n 2p status.txt | cut -f 4)
	[[ $since =~ ^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z$ ]]
	[ "$(date -u -d "${since%.*}" +%s)" -ge "$before" ]
	[ "$(date -u -d "${since%.*}" +%s)" -le "$after" ]
}

@test "status --json: one array, field by field, null where there is none" {
	local before after at sent_by
	{
		req b0 B 0
		req b1 B 1
		req a0 A 0
	} >1.msg
	before=$(date -u +%s)
	run -0 step --retry-after 1h 1.msg
	sent_by=$(date -u +%s)
	sleep 1.1
	fail a0 'target: PO A unknown' >r.msg
	run -0 step --retry-after 1h -r r.msg
	after=$(date -u +%s)
	run -0 --separate-stderr timeout -k 5 30 msg-trickle status --state st --json
	[ -z "$stderr" ]
	echo "$output" >status.json
	[ "$(jq -c 'map(.key)' status.json)" = '["A","B"]' ]
	[ "$(jq -c '.[0] | keys_unsorted' status.json)" = \
		'["key","state","version","since","attempts","waiting","last_ok","failure","next_attempt"]' ]
	[ "$(jq -c '.[0] | [.key, .state, .version, .attempts, .waiting, .last_ok]' status.json)" = \
		'["A","failed","0",1,[],null]' ]
	[ "$(jq -c '.[0].failure | [.status, .error]' status.json)" = '["failure","target: PO A unknown"]' ]
	[ "$(jq -c '.[1] | [.key, .state, .version, .attempts, .waiting, .last_ok, .failure, .next_attempt]' status.json)" = \
		'["B","in-flight","0",1,["1"],null,null,null]' ]
	# Times as UTC with milliseconds: sent and failed during the runs,
	# the next attempt an hour after the failure.
	for at in '.[0].since' '.[0].failure.at' '.[1].since'; do
		jq -r "$at" status.json | grep -qE '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z$'
		[ "$(date -u -d "$(jq -r "$at" status.json | sed 's/\.[0-9]*Z$/Z/')" +%s)" -ge "$before" ]
		[ "$(date -u -d "$(jq -r "$at" status.json | sed 's/\.[0-9]*Z$/Z/')" +%s)" -le "$after" ]
	done
	at=$(date -u -d "$(jq -r '.[0].next_attempt' status.json | sed 's/\.[0-9]*Z$/Z/')" +%s)
	[ "$at" -ge $((before + 3600)) ]
	[ "$at" -le $((after + 3600)) ]
	# A key given: that key only.
	[ "$(msg-trickle status --state st --json B | jq -c 'map(.key)')" = '["B"]' ]
	# A directory no run has made a state of is none.
	mkdir empty
	run -66 --separate-stderr timeout -k 5 30 msg-trickle status --state empty --json
	[ "$stderr" = "msg-trickle: 'empty': not a message store" ]
	[ -z "$output" ]
	# A's since is when its version was sent, not when it failed.
	at=$(date -u -d "$(jq -r '.[0].since' status.json | sed 's/\.[0-9]*Z$/Z/')" +%s)
	[ "$at" -le "$sent_by" ]
}

@test "status: read without the lock while an instance holds the state" {
	mkfifo req.fifo
	spawn timeout -k 5 60 msg-trickle --state st --output out.msg req.fifo 2>err.txt
	exec 4>req.fifo
	req a0 A 0 >&4
	wait_until 20 has_frames out.msg 1
	run -0 timeout -k 5 10 msg-trickle status --state st --json A
	[ "$(jq -c '.[0] | [.state, .version]' <<<"$output")" = '["in-flight","0"]' ]
	# A second instance is kept out.
	: >none.msg
	run -75 --separate-stderr timeout -k 5 30 msg-trickle --once --state st none.msg
	[ "$stderr" = "msg-trickle: cannot lock 'st/lock': state directory busy" ]
}

# ---- statistics and usage ----

@test "stats: every counter, on one line at exit" {
	{
		req a0 A 0
		req b0 B 0
		req c0 C 0
	} >1.msg
	run -0 step --resend-after 2s 1.msg
	{
		ok a0
		fail b0
	} >r.msg
	run -0 step -r r.msg
	run -0 timeout -k 5 30 msg-trickle retry --state st B
	sleep 2.5
	frame x 'Message-Id: u1' 'Correlation-Id: nope' 'Status: success' >r.msg
	{
		req a0 A 0
		req a1 A 1
		req a2 A 2
		req a3 A 3
		req c0 C 0
		frame 'no key' 'Message-Id: k1' 'Entity-Version: 1'
		req d0 D 0
	} >2.msg
	# B 0 goes again (retry) and C 0 is resent; A 0 is stale, C 0 a
	# duplicate; A 1 and D 0 go, A 2 and A 3 wait.
	run -0 step --resend-after 2s --invalid inv.msg --unmatched unm.msg --stats -r r.msg 2.msg
	sent out.msg | sort >got
	printf '%s\n' 'A 1 -' 'B 0 2' 'C 0 2' 'D 0 -' | expect_same - got
	# Its stderr is checked last.
	mv err.txt run3.txt
	# A 1 succeeds: with --latest A 3 goes and A 2 is superseded; D 0
	# fails.
	{
		ok a1
		fail d0
	} >r.msg
	run -0 step --latest --stats -r r.msg
	req a3 A 3 | expect_same - out.msg
	trickle_stats responses=2 sent=1 succeeded=1 failed=1 superseded=1 blocked=1 \
		in-flight=3 | expect_same - err.txt
	{
		echo "msg-trickle: warning: message a0: stale: version 0 of entity 'A' is at or below version 0, already sent; dropped"
		echo "msg-trickle: warning: message k1: no entity key: diverted to 'inv.msg'"
		trickle_stats in=7 responses=1 sent=4 retried=1 resent=1 stale=1 duplicates=1 \
			unmatched=1 invalid=1 waiting=2 in-flight=4
	} | expect_same - run3.txt
}

@test "usage: no --state, bad options and bad values exit 64 before reading anything" {
	req a0 A 0 >in.msg
	run -64 trickle in.msg
	[ ! -s out.msg ]
	[ "$(head -n 1 err.txt)" = 'msg-trickle: --state is required' ]
	grep -q '^usage: msg-trickle ' err.txt
	local -a bad=(
		'--retry-after 0' '--retry-after x' '--retry-after -5s' '--resend-after 5x'
		'--max-attempts x' '--max-attempts -1' '--max-in-flight x' '--version-order date'
		'--no-such-option' '-z' '--latest=yes'
	)
	local args
	for args in "${bad[@]}"; do
		# shellcheck disable=SC2086 # the options are words
		run -64 trickle --state st $args in.msg
		echo "$args: $(cat err.txt)"
		[ ! -s out.msg ]
		[ "$(grep -c . err.txt)" -ge 2 ]
		grep -q '^msg-trickle: ' err.txt
		grep -q '^usage: msg-trickle ' err.txt
	done
	run -64 trickle --state st --retry-after 5x in.msg
	[ "$(head -n 1 err.txt)" = "msg-trickle: --retry-after takes a duration such as 30s or 5m, not '5x'" ]
	run -64 trickle --state st --version-order date in.msg
	[ "$(head -n 1 err.txt)" = "msg-trickle: --version-order takes number or text, not 'date'" ]
	run -64 trickle --state st -k '/a[' in.msg
	[ "$(cat err.txt)" = "msg-trickle: invalid expression '/a[': Invalid expression at position 3" ]
	# Nothing was made for a store that was never opened.
	[ ! -e st ]
	run -66 trickle --state st no-such.msg
	[ "$(cat err.txt)" = "msg-trickle: cannot open 'no-such.msg': No such file or directory" ]
}
