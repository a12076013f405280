#!/usr/bin/env bats
# msg-aggregate without time or state: correlation, completion by
# sequence, count, until, closing message and end of input; late and
# duplicate members; the limits and their policies; how members become
# one body and which headers the result has; invalid messages, --stats
# and usage errors. Each result is checked byte for byte, less the new
# Message-Id and Timestamp every result gets.

load test_helper
bats_require_minimum_version 1.5.0
load fixtures/aggregate/aggregate

# agg ARG...: msg-aggregate ARG..., its results in out.msg and its
# diagnostics in err.txt, for run.
agg() {
	timeout -k 5 60 msg-aggregate "$@" >out.msg 2>err.txt
}

# ---- completion ----

@test "sequence: members out of order, the size on any one, each group complete when all came" {
	{
		last_member a3 A 3 c
		seq_member b1 B 1 x
		seq_member a1 A 1 a
		seq_member c1 C 1 p
		seq_member a2 A 2 b
		seq_member c2 C 2 q
		last_member c3 C 3 r
		seq_member b2 B 2 y
	} >in.msg
	run -0 agg in.msg
	[ ! -s err.txt ]
	{
		result abc A 3 complete
		result pqr C 3 complete
		# B never got its size: what is missing is open-ended.
		result xy B 2 end 3-
	} | results_are out.msg
	one_new_id out.msg
	# The results are new messages, not members passed on.
	run -1 grep -E '^Message-Id: (a|b|c)[0-9]$' out.msg
	grep -Eq '^Timestamp: [0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z$' out.msg
}

@test "sequence: a partial group goes to --partial, complete ones to the output" {
	{
		seq_member a1 A 1 a
		seq_member b2 B 2 y
		last_member a2 A 2 b
		seq_member b1 B 1 x
		seq_member b4 B 4 z "Sequence-Size: 7"
	} >in.msg
	run -0 agg --partial part.msg in.msg
	[ ! -s err.txt ]
	result ab A 2 complete | results_are out.msg
	result xyz B 3 end 3,5-7 | results_are part.msg
}

@test "sequence: a marker of Sequence-Size 0 completes an empty group of its kind" {
	{
		frame '' 'Message-Id: t0' 'Correlation-Id: T' 'Content-Type: text/plain' \
			'Sequence-Size: 0' 'Sequence-End: true'
		frame '' 'Message-Id: j0' 'Correlation-Id: J' 'Content-Type: application/json' \
			'Sequence-Size: 0' 'Sequence-End: true'
	} >in.msg
	run -0 agg in.msg
	{
		result '' T 0 complete
		frame '[]' 'Correlation-Id: J' 'Content-Type: application/json' \
			'Aggregate-Size: 0' 'Aggregate-Reason: complete'
	} | results_are out.msg
	# msg-split writes such a marker for an order without items: the
	# order comes back, empty, at once.
	printf '<order/>' >empty.xml
	msg-wrap empty.xml >wrapped.msg
	msg-split -x /order/item wrapped.msg >marker.msg
	run -0 agg -W order marker.msg
	[ ! -s err.txt ]
	frame '<order></order>' 'File-Name: empty.xml' 'Content-Type: application/xml' \
		"Correlation-Id: $(sed -n 's/^Message-Id: //p' wrapped.msg)" \
		'Aggregate-Size: 0' 'Aggregate-Reason: complete' | results_are out.msg
}

@test "count: -n completes a group at n members; the rest go out at the end as partial" {
	{
		member a1 A a1
		member b1 B b1
		member a2 A a2
		member c1 C c1
		member b2 B b2
	} >in.msg
	run -0 agg -n 2 --partial part.msg in.msg
	[ ! -s err.txt ]
	{
		result a1a2 A 2 count
		result b1b2 B 2 count
	} | results_are out.msg
	result c1 C 1 end | results_are part.msg
}

@test "count and sequence together: the first condition met completes the group" {
	{
		member d1 D d1
		last_member s2 S 2 y
		member d2 D d2
		seq_member s1 S 1 x
		member d3 D d3
	} >in.msg
	# S is whole at two members, before it has three.
	run -0 agg -n 3 in.msg
	[ ! -s err.txt ]
	{
		result xy S 2 complete
		result d1d2d3 D 3 count
	} | results_are out.msg
}

@test "until: -u is true of the aggregate the group would give, body or headers" {
	{
		frame '<item n="1"/>' 'Message-Id: a1' 'Correlation-Id: A' 'Content-Type: application/xml'
		frame '<item n="9"/>' 'Message-Id: b1' 'Correlation-Id: B' 'Content-Type: application/xml'
		frame '<item n="2"/>' 'Message-Id: a2' 'Correlation-Id: A' 'Content-Type: application/xml'
	} >in.msg
	run -0 agg -u 'count(/aggregate/item) = 2' --partial part.msg in.msg
	[ ! -s err.txt ]
	frame '<aggregate><item n="1"/><item n="2"/></aggregate>' 'Correlation-Id: A' \
		'Content-Type: application/xml' 'Aggregate-Size: 2' 'Aggregate-Reason: until' | results_are out.msg
	# B could still have met -u: partial.
	frame '<aggregate><item n="9"/></aggregate>' 'Correlation-Id: B' \
		'Content-Type: application/xml' 'Aggregate-Size: 1' 'Aggregate-Reason: end' | results_are part.msg

	for i in 1 2 3 4; do
		member "t$i" T "t$i"
	done >in.msg
	run -0 agg -u "header('Aggregate-Size') = 3" --partial part2.msg in.msg
	result t1t2t3 T 3 until | results_are out.msg
	# The group was released: the fourth is late, dropped with a warning.
	[ ! -s part2.msg ]
	[ "$(grep -c . err.txt)" = 1 ]
	grep -q '^msg-aggregate: warning: .*\bt4\b' err.txt
}

@test "until: the aggregate so far puts members out of order in their place, XML and JSON" {
	# Numbers 3, 1, 2: each new member goes last, first, then between.
	{
		frame '<i n="3"/>' 'Message-Id: x3' 'Correlation-Id: X' 'Sequence-Number: 3' 'Content-Type: application/xml'
		frame '<i n="1"/>' 'Message-Id: x1' 'Correlation-Id: X' 'Sequence-Number: 1' 'Content-Type: application/xml'
		frame '<i n="2"/>' 'Message-Id: x2' 'Correlation-Id: X' 'Sequence-Number: 2' 'Content-Type: application/xml'
		frame '{"n": 3}' 'Message-Id: j3' 'Correlation-Id: J' 'Sequence-Number: 3' 'Content-Type: application/json'
		frame '{"n": 1}' 'Message-Id: j1' 'Correlation-Id: J' 'Sequence-Number: 1' 'Content-Type: application/json'
		frame '{"n": 2}' 'Message-Id: j2' 'Correlation-Id: J' 'Sequence-Number: 2' 'Content-Type: application/json'
	} >in.msg
	# True only when the three are in number order.
	run -0 agg -u "string(/aggregate) = '' and /aggregate/i[1]/@n = 1 and /aggregate/i[2]/@n = 2 and /aggregate/i[3]/@n = 3
		or /array/map[1]/number = 1 and /array/map[2]/number = 2 and /array/map[3]/number = 3" in.msg
	[ ! -s err.txt ]
	{
		frame '<aggregate><i n="1"/><i n="2"/><i n="3"/></aggregate>' 'Correlation-Id: X' \
			'Content-Type: application/xml' 'Aggregate-Size: 3' 'Aggregate-Reason: until' \
			'Aggregate-Missing: 4-'
		frame '[{"n": 1},{"n": 2},{"n": 3}]' 'Correlation-Id: J' \
			'Content-Type: application/json' 'Aggregate-Size: 3' 'Aggregate-Reason: until' \
			'Aggregate-Missing: 4-'
	} | results_are out.msg
	# json() reads the text of the aggregate so far, in the same order;
	# the sizes never came, so what is missing is open-ended.
	run -0 agg -u "json('/0/n') = 1 and json('/2/n') = 3" --partial part.msg in.msg
	frame '[{"n": 1},{"n": 2},{"n": 3}]' 'Correlation-Id: J' 'Content-Type: application/json' \
		'Aggregate-Size: 3' 'Aggregate-Reason: until' 'Aggregate-Missing: 4-' | results_are out.msg
	frame '<aggregate><i n="1"/><i n="2"/><i n="3"/></aggregate>' 'Correlation-Id: X' 'Content-Type: application/xml' \
		'Aggregate-Size: 3' 'Aggregate-Reason: end' 'Aggregate-Missing: 4-' | results_are part.msg
}

@test "close-on: a closing message releases its group and is no member" {
	{
		member a1 A a
		member b1 B x
		member a2 A b
		member ca A EOD 'X-Event: close'
		member b2 B y
		member cb B EOD 'X-Event: close'
		member cz Z EOD 'X-Event: close'
	} >in.msg
	run -0 agg --close-on "header('X-Event') = 'close'" --stats in.msg
	# A closing message for a key with no open group releases an empty
	# aggregate: the event happened, with no member before it.
	{
		result ab A 2 close
		result xy B 2 close
		result '' Z 0 close
	} | results_are out.msg
	msg-unwrap out.msg >bodies
	[ "$(cat bodies)" = abxy ]
	stats_line in=7 members=4 released=3 close=3 >expect
	expect_same expect err.txt
}

@test "close-on: an empty aggregate is of the closing message's kind, and its key is closed" {
	{
		frame '<end/>' 'Message-Id: c1' 'Correlation-Id: X' 'Content-Type: application/xml' \
			'X-Event: close'
		frame '{}' 'Message-Id: c2' 'Correlation-Id: J' 'Content-Type: application/json' \
			'X-Event: close'
		member x1 X after
	} >in.msg
	run -0 agg --close-on "header('X-Event') = 'close'" -W day --stats in.msg
	{
		frame '<day></day>' 'Correlation-Id: X' 'Content-Type: application/xml' \
			'Aggregate-Size: 0' 'Aggregate-Reason: close'
		frame '[]' 'Correlation-Id: J' 'Content-Type: application/json' \
			'Aggregate-Size: 0' 'Aggregate-Reason: close'
	} | results_are out.msg
	# What comes after the event for its key is late, as after any close.
	grep -q '^msg-aggregate: warning: .*\bx1\b.*late' err.txt
	stats_line in=3 members=0 late=1 released=2 close=2 >expect
	tail -n 1 err.txt >got
	expect_same expect got
}

@test "close-on: a closing member that completes its group by --count releases no empty aggregate after it" {
	{
		member a1 A a
		member ca A b 'X-Event: close'
	} >in.msg
	run -0 agg --close-on "header('X-Event') = 'close'" --include-close -n 2 in.msg
	[ ! -s err.txt ]
	result ab A 2 count | results_are out.msg
}

@test "close-on with --include-close: the closing message is the last member" {
	{
		member a1 A a
		member a2 A b
		member ca A EOD 'X-Event: close'
		member cz Z EOD 'X-Event: close'
	} >in.msg
	run -0 agg --close-on "header('X-Event') = 'close'" --include-close --separator '\n' in.msg
	[ ! -s err.txt ]
	{
		printf -v body 'a\nb\nEOD'
		result "$body" A 3 close
		frame EOD 'Correlation-Id: Z' 'Content-Type: text/plain' 'X-Event: close' \
			'Aggregate-Size: 1' 'Aggregate-Reason: close'
	} | results_are out.msg
}

# ---- the end of input ----

# A complete group, then one that is still open at the end.
complete_and_open() {
	{
		seq_member a1 A 1 a
		last_member a2 A 2 b
		seq_member b1 B 1 x
		seq_member c2 C 2 z
	} >in.msg
}

@test "at-end flush (the default): open groups go out as they stand" {
	complete_and_open
	run -0 agg --stats in.msg
	{
		result ab A 2 complete
		result x B 1 end 2-
		result z C 1 end 1,3-
	} >expect
	stable out.msg >got
	# The order of the groups released at the end is not fixed.
	expect_same <(head -n 7 expect) <(head -n 7 got)
	expect_same <(summary out.msg | sort) \
		<(printf '%s\n' 'A complete 2 -' 'B end 1 2-' 'C end 1 1,3-')
	[ "$(grep -c . got)" = "$(grep -c . expect)" ]
	stats_line in=4 members=4 released=3 complete=1 end=2 partial=2 >expect
	expect_same expect err.txt
	run -0 agg --at-end flush in.msg
	expect_same <(summary out.msg | sort) \
		<(printf '%s\n' 'A complete 2 -' 'B end 1 2-' 'C end 1 1,3-')
}

@test "at-end discard: open groups are dropped and counted" {
	complete_and_open
	run -0 agg --at-end discard in.msg
	[ ! -s err.txt ]
	result ab A 2 complete | results_are out.msg
	# Counted as discarded; none is left open.
	run -0 agg --at-end discard --stats in.msg
	stats_line in=4 members=4 released=1 complete=1 discarded=2 >expect
	expect_same expect err.txt
}

@test "at-end fail: open groups are not released, exit 65 naming how many" {
	complete_and_open
	run -65 agg --at-end fail in.msg
	result ab A 2 complete | results_are out.msg
	[ "$(grep -c . err.txt)" = 1 ]
	grep -q '^msg-aggregate: .*\b2\b' err.txt
}

@test "at-end keep without --state is a usage error" {
	complete_and_open
	run -64 agg --at-end keep in.msg
	[ ! -s out.msg ]
	grep -q '^msg-aggregate: \|^usage: msg-aggregate' err.txt
	run -64 agg --at-end later in.msg
	[ ! -s out.msg ]
}

# ---- late and duplicate members ----

# late_input: a sequence A of two, complete, then a3 and a4 for it.
late_input() {
	{
		seq_member a1 A 1 a
		last_member a2 A 2 b
		seq_member a3 A 3 c
		seq_member a4 A 1 again
	} >in.msg
}

@test "late: members of a released group are dropped with a warning and counted" {
	late_input
	run -0 agg --stats in.msg
	result ab A 2 complete | results_are out.msg
	[ "$(grep -c . err.txt)" = 3 ]
	[ "$(grep -c '^msg-aggregate: warning: .*\ba3\b' err.txt)" = 1 ]
	[ "$(grep -c '^msg-aggregate: warning: .*\ba4\b' err.txt)" = 1 ]
	stats_line in=4 members=2 late=2 released=1 complete=1 >expect
	expect_same expect <(tail -n 1 err.txt)
}

@test "late: --late takes late members, each with an Error header" {
	late_input
	run -0 agg --late late.msg in.msg
	[ ! -s err.txt ]
	result ab A 2 complete | results_are out.msg
	# The late members as they came, with the reason added.
	[ "$(grep -c '^Error: msg-aggregate: ' late.msg)" = 2 ]
	grep -v '^Error: ' late.msg >got
	expect_same <(tail -n +17 in.msg) got
}

@test "late: a member of a released group come again is a duplicate, counted and dropped without a word" {
	late_input
	{
		# a2 again, and a1 with another body: the Message-Id tells.
		last_member a2 A 2 b
		seq_member a1 A 1 changed
	} >>in.msg
	run -0 agg --stats --late late.msg in.msg
	result ab A 2 complete | results_are out.msg
	# a3 and a4 were never members: late.
	[ "$(sed -n 's/^Message-Id: //p' late.msg | tr '\n' ' ')" = "a3 a4 " ]
	stats_line in=6 members=2 duplicates=2 late=2 released=1 complete=1 >expect
	expect_same expect err.txt
}

@test "late: a late member whose header block is full still goes to --late, its longest header named" {
	local big
	big=$(head -c 65420 /dev/zero | tr '\0' x)
	{
		member a1 A a
		member a2 A b
		member a3 A c "X-Big: $big"
	} >in.msg
	run -0 agg -n 2 --late late.msg in.msg
	[ ! -s err.txt ]
	[ "$(count_frames late.msg)" = 1 ]
	grep -qx "Error: msg-aggregate: late: its group was already released; header 'X-Big' of 65420 bytes dropped" late.msg
	grep -qx 'Message-Id: a3' late.msg
	[ "$(msg-unwrap late.msg)" = c ]
}

@test "duplicates: the same Message-Id, or the same Sequence-Number, is ignored and counted" {
	{
		seq_member a1 A 1 a
		seq_member a1 A 1 copy
		seq_member a9 A 1 other
		last_member a2 A 2 b
	} >in.msg
	run -0 agg --stats in.msg
	result ab A 2 complete | results_are out.msg
	stats_line in=4 members=2 duplicates=2 released=1 complete=1 >expect
	expect_same expect err.txt
	# Without a sequence, by Message-Id alone.
	{
		member x1 X 1
		member x1 X 1
		member x2 X 2
		member x1 X 1
		member x3 X 3
	} >in.msg
	run -0 agg -n 3 --stats in.msg
	result 123 X 3 count | results_are out.msg
	stats_line in=5 members=3 duplicates=2 released=1 count=1 >expect
	expect_same expect err.txt
}

# ---- limits ----

# big ID KEY CHAR: a member whose body is 4000 times CHAR.
big() {
	member "$1" "$2" "$(printf "%4000s" '' | tr ' ' "$3")"
}

@test "limits, release-oldest: --max-groups releases the oldest group, partial" {
	{
		member a1 A a1
		member b1 B b1
		member c1 C c1
		member b2 B b2
		member c2 C c2
	} >in.msg
	run -0 agg -n 2 --max-groups 2 --partial part.msg --stats in.msg
	{
		result b1b2 B 2 count
		result c1c2 C 2 count
	} | results_are out.msg
	result a1 A 1 limit | results_are part.msg
	stats_line in=5 members=5 released=3 count=2 limit=1 partial=1 >expect
	expect_same expect err.txt
}

@test "limits, release-oldest: a group at --max-members is released before the next member joins" {
	for i in 1 2 3; do
		member "a$i" A "a$i"
	done >in.msg
	run -0 agg -n 5 --max-members 2 --on-limit release-oldest in.msg
	[ ! -s err.txt ]
	{
		result a1a2 A 2 limit
		result a3 A 1 end
	} | results_are out.msg
}

@test "limits, release-oldest: --max-bytes releases the oldest groups until the member fits" {
	{
		big a1 A a
		big b1 B b
		big c1 C c
	} >in.msg
	run -0 agg -n 2 --max-bytes 10k in.msg
	[ ! -s err.txt ]
	summary out.msg >got
	[ "$(head -n 1 got)" = 'A limit 1 -' ]
	expect_same <(tail -n +2 got | sort) <(printf '%s\n' 'B end 1 -' 'C end 1 -')
}

@test "limits, every policy: a message alone over --max-bytes is invalid and releases no group" {
	local body policy
	body=$(printf "%4000s" '' | tr ' ' b)
	{
		member a1 A a1
		member b1 B "$body"
		member a2 A a2
	} >in.msg
	member b1 B "$body" 'Error: msg-aggregate: the message alone is over --max-bytes' >expect.inv
	{
		echo "msg-aggregate: warning: message b1: the message alone is over --max-bytes: diverted to 'inv.msg'"
		stats_line in=3 members=2 invalid=1 released=1 count=1
	} >expect.err
	# No table has room for b1, so A is not cut short for it nor waited
	# on: a2 still completes A, and is not late; under fail and block it
	# is no limit to retry either, which would stop every run at b1.
	for policy in release-oldest block fail; do
		rm -f inv.msg	# a file channel is appended to
		run -0 agg -n 2 --max-bytes 3k --on-limit "$policy" --invalid inv.msg --stats in.msg
		result a1a2 A 2 count | results_are out.msg
		cmp expect.inv inv.msg
		expect_same expect.err err.txt
		# Without --invalid the run stops at b1, naming it; A is still open.
		run -65 agg -n 2 --max-bytes 3k --on-limit "$policy" in.msg
		[ ! -s out.msg ]
		[ "$(cat err.txt)" = 'msg-aggregate: in.msg: message 2 (Message-Id b1): the message alone is over --max-bytes' ]
	done
}

# over_limit POLICY: each limit passed, with --on-limit POLICY and no
# timer: exit 75, what was released before is out, the diagnostic names
# the limit and the message (d1, a3 and c1).
over_limit() {
	{
		member a1 A a1
		member a2 A a2
		member b1 B b1
		member c1 C c1
		member d1 D d1
	} >groups.msg
	run -75 agg -n 2 --max-groups 2 --on-limit "$1" groups.msg
	result a1a2 A 2 count >expect
	stable out.msg | head -n 7 >got
	expect_same expect got
	# d1 was left unread.
	run -1 grep -q '^D ' <(summary out.msg)
	[ "$(grep -c . err.txt)" = 1 ]
	grep -q '^msg-aggregate: .*max-groups.*\bd1\b' err.txt

	for i in 1 2 3; do
		member "a$i" A "a$i"
	done >members.msg
	run -75 agg -n 5 --max-members 2 --on-limit "$1" members.msg
	run -1 grep -q a3 <(msg-unwrap out.msg)
	[ "$(grep -c . err.txt)" = 1 ]
	grep -q '^msg-aggregate: .*max-members.*\ba3\b' err.txt

	{
		big a1 A a
		big b1 B b
		big c1 C c
	} >bytes.msg
	run -75 agg -n 2 --max-bytes 10k --on-limit "$1" bytes.msg
	run -1 grep -q '^C ' <(summary out.msg)
	[ "$(grep -c . err.txt)" = 1 ]
	grep -q '^msg-aggregate: .*max-bytes.*\bc1\b' err.txt
}

@test "limits, fail: every limit stops with 75, naming it and the message" {
	over_limit fail
}

@test "limits, block without -T or -i: no room can come, so it fails as fail does" {
	over_limit block
}

# ---- aggregation ----

@test "bodies: XML under -W, without declarations, namespaces kept" {
	{
		frame "$(printf '<?xml version="1.0"?>\n<item n="1">a &amp; b</item>\n')" \
			'Message-Id: x1' 'Correlation-Id: X' 'Content-Type: application/xml' \
			'Sequence-Number: 1'
		frame '<!-- c --><p:i xmlns:p="urn:p"><p:j/></p:i>' 'Message-Id: x2' \
			'Correlation-Id: X' 'Content-Type: application/xml' 'Sequence-Number: 2' \
			'Sequence-Size: 2' 'Sequence-End: true'
	} >in.msg
	run -0 agg -W items in.msg
	[ ! -s err.txt ]
	frame '<items><item n="1">a &amp; b</item><p:i xmlns:p="urn:p"><p:j/></p:i></items>' \
		'Correlation-Id: X' 'Content-Type: application/xml' 'Aggregate-Size: 2' \
		'Aggregate-Reason: complete' | results_are out.msg
	run -0 agg in.msg
	msg-unwrap out.msg >body
	[ "$(cat body)" = '<aggregate><item n="1">a &amp; b</item><p:i xmlns:p="urn:p"><p:j/></p:i></aggregate>' ]
}

@test "bodies: JSON values become one array, their bytes as they came, trimmed" {
	{
		frame $' {"a": 1}\n' 'Message-Id: j1' 'Correlation-Id: J' \
			'Content-Type: application/json'
		frame '[1, 2]' 'Message-Id: j2' 'Correlation-Id: J' 'Content-Type: application/json'
		frame "$(printf '\t"s" ')" 'Message-Id: j3' 'Correlation-Id: J' \
			'Content-Type: application/json'
	} >in.msg
	run -0 agg -n 3 in.msg
	[ ! -s err.txt ]
	frame '[{"a": 1},[1, 2],"s"]' 'Correlation-Id: J' 'Content-Type: application/json' \
		'Aggregate-Size: 3' 'Aggregate-Reason: count' | results_are out.msg
}

@test "bodies: text joined by --separator, with its escapes" {
	{
		member t1 T 'a,b'
		member t2 T 'c,d'
		member t3 T 'e'
	} >in.msg
	run -0 agg -n 3 in.msg
	result 'a,bc,de' T 3 count | results_are out.msg
	run -0 agg -n 3 --separator '\n--\t\\\n' in.msg
	[ ! -s err.txt ]
	printf -v body 'a,b\n--\t\\\nc,d\n--\t\\\ne'
	result "$body" T 3 count | results_are out.msg
}

@test "bodies: a group of mixed kinds is invalid, one message to --invalid; exit 65 without" {
	{
		frame '<a/>' 'Message-Id: m1' 'Correlation-Id: M' 'Content-Type: application/xml'
		member m2 M plain
		member n1 N n1
		member n2 N n2
	} >in.msg
	local why='mixed bodies in one group: XML (message m1) and text (message m2)' id
	run -0 agg -n 2 --invalid inv.msg --stats in.msg
	result n1n2 N 2 count | results_are out.msg
	[ "$(count_frames inv.msg)" = 1 ]
	[ "$(msg-unwrap inv.msg)" = '<a/>plain' ]
	[ "$(grep -c "^Error: msg-aggregate: $why\$" inv.msg)" = 1 ]
	[ "$(grep -c '^Correlation-Id: M$' inv.msg)" = 1 ]
	# The warning names the message diverted, the group's new one.
	id=$(sed -n 's/^Message-Id: //p' inv.msg)
	[ "$(head -n 1 err.txt)" = "msg-aggregate: warning: message $id: $why: diverted to 'inv.msg'" ]
	[ "$(grep -c . err.txt)" = 2 ]

	# The stop names the message it came to (m2 released the group, by
	# -n), the group's key and the members of each kind, not the new
	# message's Message-Id: that one is found nowhere.
	run -65 agg -n 2 in.msg
	[ ! -s out.msg ]
	[ "$(cat err.txt)" = "msg-aggregate: in.msg: message 2 (Message-Id m2): group 'M' of 2 members cannot be one message: $why" ]
}

@test "best: -b keeps the member with the lowest or highest number, the earliest of a tie" {
	{
		frame '{"s": "a", "p": 5}' 'Message-Id: q1' 'Correlation-Id: Q' 'Content-Type: application/json'
		frame '{"s": "b", "p": 3}' 'Message-Id: q2' 'Correlation-Id: Q' 'Content-Type: application/json'
		frame '{"s": "c", "p": 3.0}' 'Message-Id: q3' 'Correlation-Id: Q' 'Content-Type: application/json'
		frame '{"s": "d", "p": 9}' 'Message-Id: q4' 'Correlation-Id: Q' 'Content-Type: application/json'
	} >in.msg
	run -0 agg -n 4 -b "json('/p')" --min in.msg
	[ ! -s err.txt ]
	frame '{"s": "b", "p": 3}' 'Correlation-Id: Q' 'Content-Type: application/json' \
		'Aggregate-Size: 4' 'Aggregate-Reason: count' | results_are out.msg
	run -0 agg -n 4 --best "json('/p')" --max in.msg
	[ "$(msg-unwrap out.msg)" = '{"s": "d", "p": 9}' ]
}

@test "best: a member whose -b value is no number is invalid" {
	{
		frame '{"s": "a", "p": 5}' 'Message-Id: q1' 'Correlation-Id: Q' 'Content-Type: application/json'
		frame '{"s": "e", "p": "none"}' 'Message-Id: q2' 'Correlation-Id: Q' 'Content-Type: application/json'
		frame '{"s": "b", "p": 3}' 'Message-Id: q3' 'Correlation-Id: Q' 'Content-Type: application/json'
	} >in.msg
	run -0 agg -n 2 -b "json('/p')" --min --invalid inv.msg in.msg
	[ "$(msg-unwrap out.msg)" = '{"s": "b", "p": 3}' ]
	grep -q '^Aggregate-Size: 2$' out.msg
	[ "$(count_frames inv.msg)" = 1 ]
	grep -q '^Message-Id: q2$' inv.msg
	grep -q '^Error: msg-aggregate: ' inv.msg
	[ "$(msg-unwrap inv.msg)" = '{"s": "e", "p": "none"}' ]
	run -65 agg -n 2 -b "json('/p')" --min in.msg
	[ ! -s out.msg ]
	[ "$(grep -c . err.txt)" = 1 ]
	grep -q '^msg-aggregate: in\.msg: message 2 (Message-Id q2): ' err.txt
}

@test "xslt: -x condenses the aggregate, with -s and -p parameters" {
	cat >total.xsl <<'EOF'
<xsl:stylesheet version="1.0" xmlns:xsl="http://www.w3.org/1999/XSL/Transform">
  <xsl:output method="text"/>
  <xsl:param name="label" select="'total'"/>
  <xsl:param name="factor" select="1"/>
  <xsl:template match="/">
    <xsl:value-of select="concat($label, '=', sum(/aggregate/item/@price) * $factor,
      ' n=', count(/aggregate/item))"/>
  </xsl:template>
</xsl:stylesheet>
EOF
	for i in 1 2 3; do
		frame "<item price=\"$((i * 2))\"/>" "Message-Id: i$i" 'Correlation-Id: I' \
			'Content-Type: application/xml'
	done >in.msg
	run -0 agg -n 3 -x total.xsl in.msg
	[ ! -s err.txt ]
	frame 'total=12 n=3' 'Correlation-Id: I' 'Content-Type: text/plain' \
		'Aggregate-Size: 3' 'Aggregate-Reason: count' | results_are out.msg
	run -0 agg -n 3 --xslt total.xsl -s label=Total -p factor=10 in.msg
	[ "$(msg-unwrap out.msg)" = 'Total=120 n=3' ]
}

# ---- headers of the result ----

@test "headers: the key from -c, the headers all members share, in the first one's order" {
	{
		frame a 'Message-Id: h1' 'Timestamp: 2026-12-01T00:00:00.000Z' 'Order: 7' \
			'X-Same: v' 'X-Diff: 1' 'Error: msg-route: old' 'Aggregate-Size: 9' \
			'Message-History: msg-wrap, msg-split' 'Content-Type: text/plain' \
			'Correlation-Id: c1' 'X-Only: first'
		frame b 'Message-Id: h2' 'Timestamp: 2026-12-01T00:00:01.000Z' 'Order: 7' \
			'x-same: v' 'X-Diff: 2' 'Error: msg-route: old' 'Aggregate-Size: 9' \
			'Message-History: msg-wrap, msg-split' 'Content-Type: text/plain' \
			'Correlation-Id: c2'
	} >in.msg
	run -0 agg -n 2 -c "header('Order')" in.msg
	[ ! -s err.txt ]
	frame ab 'Order: 7' 'X-Same: v' 'Message-History: msg-wrap, msg-split' \
		'Content-Type: text/plain' 'Correlation-Id: 7' 'Aggregate-Size: 2' \
		'Aggregate-Reason: count' | results_are out.msg
}

@test "headers: Content-Type is the kind's for XML and JSON, the members' own if shared, else none" {
	{
		frame '<a/>' 'Message-Id: x1' 'Correlation-Id: X' 'Content-Type: text/xml'
		frame '<b/>' 'Message-Id: x2' 'Correlation-Id: X' 'Content-Type: application/atom+xml'
		frame '1' 'Message-Id: j1' 'Correlation-Id: J' 'Content-Type: application/json'
		frame '[2]' 'Message-Id: j2' 'Correlation-Id: J' 'Content-Type: application/json'
		frame 'a,b' 'Message-Id: t1' 'Correlation-Id: T' 'Content-Type: text/csv'
		frame 'c' 'Message-Id: t2' 'Correlation-Id: T' 'Content-Type: text/plain'
		frame 'u' 'Message-Id: u1' 'Correlation-Id: U' 'Content-Type: text/csv'
		frame 'v' 'Message-Id: u2' 'Correlation-Id: U' 'Content-Type: text/csv'
	} >in.msg
	run -0 agg -n 2 in.msg
	[ ! -s err.txt ]
	fields out.msg Correlation-Id Content-Type >got
	printf '%s\t%s\t%s\n' X application/xml '<aggregate><a/><b/></aggregate>' \
		J application/json '[1,[2]]' T - 'a,bc' U text/csv uv >expect
	expect_same expect got
}

@test "headers: a Message-History the members share is kept, and MSG_HISTORY adds this step" {
	{
		member a1 A a 'Message-History: intake, split'
		member a2 A b 'Message-History: intake, split'
	} >in.msg
	MSG_HISTORY=gather run -0 agg -n 2 in.msg
	[ ! -s err.txt ]
	[ "$(grep '^Message-History: ' out.msg)" = 'Message-History: intake, split, gather' ]
	# Members that came different ways share no history.
	{
		member b1 B a 'Message-History: intake, split'
		member b2 B b 'Message-History: intake, retry, split'
	} >in.msg
	MSG_HISTORY=gather run -0 agg -n 2 in.msg
	[ "$(grep '^Message-History: ' out.msg)" = 'Message-History: gather' ]
}

# stacked STACK: a sequence of two text members carrying Sequence-Stack
# STACK, aggregated; the stable result in got.
stacked() {
	{
		seq_member s1 K 1 a "Sequence-Stack: $1"
		seq_member s2 K 2 b "Sequence-Stack: $1" 'Sequence-Size: 2' 'Sequence-End: true'
	} >in.msg
	run -0 agg in.msg
	[ ! -s err.txt ]
	stable out.msg >got
}

@test "headers: the innermost Sequence-Stack entry gives the result its place in the outer sequence" {
	stacked 'P 2 3'
	frame ab 'Correlation-Id: P' 'Content-Type: text/plain' 'Sequence-Number: 2' \
		'Sequence-Size: 3' 'Aggregate-Size: 2' 'Aggregate-Reason: complete' >expect
	expect_same expect got
	stacked 'P 3 3'
	frame ab 'Correlation-Id: P' 'Content-Type: text/plain' 'Sequence-Number: 3' \
		'Sequence-Size: 3' 'Sequence-End: true' 'Aggregate-Size: 2' \
		'Aggregate-Reason: complete' >expect
	expect_same expect got
	# The parent did not know its sequence's size, nor had a correlation.
	stacked '- 4 -'
	frame ab 'Content-Type: text/plain' 'Sequence-Number: 4' 'Aggregate-Size: 2' \
		'Aggregate-Reason: complete' >expect
	expect_same expect got
	# Only the innermost entry is taken off.
	stacked 'Q 1 2, P 2 -'
	frame ab 'Correlation-Id: P' 'Content-Type: text/plain' 'Sequence-Number: 2' \
		'Sequence-Stack: Q 1 2' 'Aggregate-Size: 2' 'Aggregate-Reason: complete' >expect
	expect_same expect got
}

@test "headers: Aggregate-Missing lists what never came, as ranges" {
	{
		seq_member a1 A 1 a
		seq_member a4 A 4 d 'Sequence-Size: 7'
		seq_member a2 A 2 b
		seq_member b3 B 3 c
		seq_member b5 B 5 e
		seq_member c9 C 9 i 'Sequence-Size: 12'
		seq_member c10 C 10 j
		seq_member c12 C 12 l
	} >in.msg
	run -0 agg --partial part.msg in.msg
	[ ! -s out.msg ]
	expect_same <(summary part.msg | sort) \
		<(printf '%s\n' 'A end 3 3,5-7' 'B end 2 1-2,4,6-' 'C end 3 1-8,11')
}

# ---- invalid messages ----

@test "invalid: a message with an empty key goes to --invalid with a warning" {
	{
		member a1 A a
		frame k 'Message-Id: k1' 'Content-Type: text/plain'
		member a2 A b
		frame k2 'Message-Id: k2' 'Correlation-Id: ' 'Content-Type: text/plain'
	} >in.msg
	run -0 agg -n 2 --invalid inv.msg in.msg
	result ab A 2 count | results_are out.msg
	[ "$(grep -c '^msg-aggregate: warning: ' err.txt)" = 2 ]
	[ "$(grep -c . err.txt)" = 2 ]
	{
		frame k 'Message-Id: k1' 'Content-Type: text/plain'
		frame k2 'Message-Id: k2' 'Correlation-Id: ' 'Content-Type: text/plain'
	} >expect
	grep -v '^Error: ' inv.msg | sed 's/^Correlation-Id:$/Correlation-Id: /' >got
	expect_same expect got
	[ "$(grep -c '^Error: msg-aggregate: ' inv.msg)" = 2 ]
	# $MSG_INVALID names the channel as well.
	MSG_INVALID=inv2.msg run -0 agg -n 2 in.msg
	[ "$(count_frames inv2.msg)" = 2 ]
}

@test "invalid: without --invalid, exit 65 naming the message, after the results before it" {
	{
		member a1 A a
		member a2 A b
		frame k 'Message-Id: k1' 'Content-Type: text/plain'
		member b1 B c
		member b2 B d
	} >in.msg
	run -65 agg -n 2 in.msg
	result ab A 2 count | results_are out.msg
	[ "$(grep -c . err.txt)" = 1 ]
	grep -q '^msg-aggregate: in\.msg: message 3 (Message-Id k1): ' err.txt
	# An expression that finds nothing gives an empty key too.
	run -65 agg -n 2 -c 'string(/order/@id)' in.msg
	[ ! -s out.msg ]
	grep -q '^msg-aggregate: in\.msg: message 1 (Message-Id a1): ' err.txt
}

@test "expired: an expired message is no member: to --dead-letter, or dropped with a warning" {
	{
		member a1 A a
		member e1 A e 'Expires: 2000-01-01T00:00:00.000Z'
		member a2 A b
	} >in.msg
	run -0 agg -n 2 --dead-letter dead.msg in.msg
	result ab A 2 count | results_are out.msg
	[ ! -s err.txt ]
	[ "$(count_frames dead.msg)" = 1 ]
	[ "$(grep -c '^Error: msg-aggregate: ' dead.msg)" = 1 ]
	grep -v '^Error: ' dead.msg >got
	member e1 A e 'Expires: 2000-01-01T00:00:00.000Z' | expect_same - got
	run -0 agg -n 2 --stats in.msg
	result ab A 2 count | results_are out.msg
	[ "$(grep -c . err.txt)" = 2 ]
	grep -q '^msg-aggregate: .*\be1\b' err.txt
	stats_line in=3 members=2 expired=1 released=1 count=1 >expect
	expect_same expect <(tail -n 1 err.txt)
}

# ---- statistics and usage ----

@test "stats: every counter, on one line at exit" {
	{
		seq_member a1 A 1 a
		seq_member a1 A 1 a
		seq_member b1 B 1 x
		last_member a2 A 2 b
		seq_member a3 A 3 c
		seq_member b2 B 2 y
		frame k 'Message-Id: k1' 'Content-Type: text/plain'
		member e1 E e 'Expires: 2000-01-01T00:00:00.000Z'
	} >in.msg
	run -0 agg --stats --invalid inv.msg in.msg
	{
		result ab A 2 complete
		result xy B 2 end 3-
	} | results_are out.msg
	[ "$(count_frames inv.msg)" = 1 ]
	# A warning each for the late, the invalid and the expired message.
	[ "$(grep -c . err.txt)" = 4 ]
	stats_line in=8 members=4 duplicates=1 late=1 invalid=1 expired=1 released=2 \
		complete=1 end=1 partial=1 >expect
	expect_same expect <(tail -n 1 err.txt)
}

@test "usage: bad options exit 64 before reading anything" {
	member a1 A a >in.msg
	local -a bad=(
		'-n 0' '-n x' '-n -3' '-T 5x' '-T 0' '-i soon' '--max-groups 0'
		'--max-members many' '--max-bytes 0' '--max-bytes 5x' '--remember x'
		'--on-limit wait' '--at-end later' '--clock moon' '-b 1'
		'--no-such-option'
	)
	local args
	for args in "${bad[@]}"; do
		# shellcheck disable=SC2086 # the options are words
		run -64 agg $args in.msg
		echo "$args: $(cat err.txt)"
		[ ! -s out.msg ]
		[ -s err.txt ]
		grep -q '^msg-aggregate: \|^usage: msg-aggregate' err.txt
	done
	run -64 agg -c '/a[' in.msg
	[ "$(cat err.txt)" = "msg-aggregate: invalid expression '/a[': Invalid expression at position 3" ]
	run -64 agg -u 'nope(1)' in.msg
	[ "$(cat err.txt)" = "msg-aggregate: unknown function 'nope' in expression 'nope(1)'" ]
}

@test "usage: an input that cannot be opened exits 66" {
	run -66 agg no-such.msg
	[ "$(cat err.txt)" = "msg-aggregate: cannot open 'no-such.msg': No such file or directory" ]
	[ ! -s out.msg ]
}

@test "framing: a truncated stream exits 65 after the results before it" {
	{
		member a1 A a
		member a2 A b
		printf 'Message-Id: t1\nCorrelation-Id: T\nContent-Length: 10\n\nabc'
	} >in.msg
	run -65 agg -n 2 in.msg
	result ab A 2 count | results_are out.msg
	[[ $(cat err.txt) == "msg-aggregate: in.msg: offset "*": truncated frame: end of input after 3 of 10 body bytes (Message-Id t1)" ]]
}
