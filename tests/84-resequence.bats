#!/usr/bin/env bats
# msg-resequence: every order of short sequences comes out in order;
# groups, --start, Sequence-Size and msg-split's empty marker; late and
# duplicate numbers; invalid numbers; gaps skipped by -T (by the
# messages' Timestamps, so deterministic, and by the wall clock); each
# --at-end mode; the memory bounds and each --on-full policy, never
# hanging in a pipe; --batch, in memory and spilled; usage errors and
# --stats. Outputs are checked byte for byte: a message comes out as it
# went in, but for the Resequence-Gap header a skipped gap adds.

load test_helper
bats_require_minimum_version 1.5.0
load fixtures/aggregate/aggregate
load fixtures/resequence/resequence

PAST=2020-01-01T00:00:00Z

# ---- order ----

# permutations IN EXPECT: every permutation of 1..n for n = 1 to 7 in
# IN, each a group of its own, p1 to p5913 (40,319 messages), and in
# EXPECT the same frames with each group's put in order. Each group's
# messages come together, so a resequencer gives EXPECT exactly.
permutations() {
	perl -e '
		my ($in, $expect) = @ARGV;
		open my $i, ">", $in or die "$in: $!\n";
		open my $e, ">", $expect or die "$expect: $!\n";
		my $group = 0;
		sub frame {
			my ($key, $n) = @_;
			my $body = "$key-$n";
			return "Message-Id: $body\nCorrelation-Id: $key\n"
				. "Content-Type: text/plain\nSequence-Number: $n\n"
				. "Content-Length: " . length($body) . "\n\n$body\n";
		}
		sub permute {
			my ($done, @rest) = @_;
			unless (@rest) {
				my $key = "p" . ++$group;
				print $i frame($key, $_) for @$done;
				print $e frame($key, $_) for sort { $a <=> $b } @$done;
				return;
			}
			for my $k (0 .. $#rest) {
				my @others = @rest;
				my ($x) = splice @others, $k, 1;
				permute([@$done, $x], @others);
			}
		}
		permute([], 1 .. $_) for 1 .. 7;' "$@"
}

@test "order: every permutation of 1 to 7 messages comes out in order, 5,913 groups in one run" {
	permutations in.msg expect.msg
	[ "$(count_frames in.msg)" = 40319 ]
	[ "$(msg-unwrap -H in.msg | sed -n 's/^Correlation-Id: //p' | sort -u | wc -l)" = 5913 ]
	run -0 rsq --stats in.msg
	run -0 in_order out.msg
	[ "$output" = '5913 groups' ]
	cmp expect.msg out.msg
	# 2, 3, 4, 5, 6, 7 wait for 1.
	rsq_stats in=40319 out=40319 most=6 >expect
	expect_same expect err.txt
}

@test "order: the book's example, 1 3 5 2: 1 at once, then 2 and 3, then 5 waits for 4" {
	local resequencer
	fed_by_fifo --stats
	msg m1 - 1 >&4
	wait_until 10 has_frames out.msg 1
	msg m3 - 3 >&4
	msg m5 - 5 >&4
	# Given time, nothing more comes out: 3 and 5 wait for 2.
	sleep 1
	has_frames out.msg 1
	msg m2 - 2 >&4
	wait_until 10 has_frames out.msg 3
	sleep 1
	has_frames out.msg 3
	{
		msg m1 - 1
		msg m2 - 2
		msg m3 - 3
	} >expect
	expect_same expect out.msg
	kill -0 "$resequencer"
	# The end of input: 5 is flushed, 4 marked missing.
	exec 4>&-
	exit_status "$resequencer" 30
	[ "$status" = 0 ]
	msg m5 - 5 'Resequence-Gap: 4' >>expect
	expect_same expect out.msg
	rsq_stats in=4 out=4 gaps=1 skipped=1 most=2 >expect
	expect_same expect err.txt
}

@test "order: groups are independent sequences, interleaved as they become ready; no Correlation-Id is one group" {
	{
		msg a2 A 2
		msg b1 B 1
		msg a3 A 3
		msg g2 - 2
		msg b3 B 3
		msg a1 A 1
		msg g1 - 1
		msg b2 B 2
	} >in.msg
	run -0 rsq --stats in.msg
	{
		msg b1 B 1
		msg a1 A 1
		msg a2 A 2
		msg a3 A 3
		msg g1 - 1
		msg g2 - 2
		msg b2 B 2
		msg b3 B 3
	} >expect
	expect_same expect out.msg
	rsq_stats in=8 out=8 most=4 >expect
	expect_same expect err.txt
}

@test "order: -b and -g take the number and the group from the body" {
	local n k
	for n in 3 1 2; do
		for k in x y; do
			frame "{\"k\":\"$k\",\"n\":$n}" 'Content-Type: application/json'
		done
	done >in.msg
	run -0 rsq -b "json('/n')" -g "json('/k')" in.msg
	[ ! -s err.txt ]
	# Each 1 goes out at once; each 2 lets its group's 3 out.
	for kn in x1 y1 x2 x3 y2 y3; do
		frame "{\"k\":\"${kn:0:1}\",\"n\":${kn:1}}" 'Content-Type: application/json'
	done >expect
	expect_same expect out.msg
	# By default the headers are read; these have none.
	run -65 rsq in.msg
	[ ! -s out.msg ]
	[ "$(cat err.txt)" = 'msg-resequence: in.msg: message 1: no sequence number' ]
}

@test "start: --start 0 counts from 0; below the start a number is invalid" {
	{
		msg s1 S 1
		msg s0 S 0
		msg s2 S 2
	} >in.msg
	run -0 rsq --start 0 in.msg
	[ ! -s err.txt ]
	{
		msg s0 S 0
		msg s1 S 1
		msg s2 S 2
	} >expect
	expect_same expect out.msg
	run -0 rsq --invalid inv.msg in.msg
	msg s0 S 0 'Error: msg-resequence: sequence number 0 is below the start 1' >expect
	expect_same expect inv.msg
	{
		msg s1 S 1
		msg s2 S 2
	} >expect
	expect_same expect out.msg
	[ "$(cat err.txt)" = "msg-resequence: warning: message s0: sequence number 0 is below the start 1: diverted to 'inv.msg'" ]
	run -0 rsq --start 5 --invalid inv2.msg in.msg
	[ ! -s out.msg ]
	[ "$(count_frames inv2.msg)" = 3 ]
	grep -qx 'Error: msg-resequence: sequence number 2 is below the start 5' inv2.msg
}

@test "start: --start first waits for --window messages, then starts at the lowest; below it is late" {
	{
		msg a6 A 6
		msg a5 A 5
		msg b2 B 2
		msg b1 B 1
		msg b3 B 3
		msg a7 A 7
		msg a8 A 8
		msg a4 A 4
	} >in.msg
	run -0 rsq --start first --window 3 --late late.msg --stats in.msg
	# A holds 6 and 5 until its third message: B, whole at its third,
	# goes first.
	{
		msg b1 B 1
		msg b2 B 2
		msg b3 B 3
		msg a5 A 5
		msg a6 A 6
		msg a7 A 7
		msg a8 A 8
	} >expect
	expect_same expect out.msg
	msg a4 A 4 'Error: msg-resequence: late: sequence number 4 was skipped as a gap' >expect
	expect_same expect late.msg
	# B's third waits with the rest, then the window lets all go.
	rsq_stats in=8 out=7 late=1 most=5 >expect
	expect_same expect err.txt
}

@test "start: --start first decides at the end of input, or when -T passes, with fewer than --window" {
	{
		msg c9 C 9
		msg c7 C 7
	} >in.msg
	run -0 rsq --start first --window 3 in.msg
	[ ! -s err.txt ]
	{
		msg c7 C 7
		msg c9 C 9 'Resequence-Gap: 8'
	} >expect
	expect_same expect out.msg
	# By event time: D's deadline, 10 s after 6 came, passes at e1.
	{
		msg d6 D 6 "$(at 0)"
		msg d5 D 5 "$(at 1)"
		msg e1 E 1 "$(at 20)"
	} >in.msg
	run -0 rsq --start first --window 3 --clock event -T 10s in.msg
	[ ! -s err.txt ]
	{
		msg d5 D 5 "$(at 1)"
		msg d6 D 6 "$(at 0)"
		msg e1 E 1 "$(at 20)"
	} >expect
	expect_same expect out.msg
}

@test "size: Sequence-Size ends the group; after its last number a message for it is late; past the size is invalid" {
	{
		msg s3 S 3 'Sequence-Size: 3' 'Sequence-End: true'
		msg s1 S 1
		msg s2 S 2
		msg s2b S 2
		msg t1 T 1 'Sequence-Size: 5'
		msg t9 T 9
		msg u1 U 1 'Sequence-Size: x'
		msg s4 S 4
	} >in.msg
	run -0 rsq --late late.msg --invalid inv.msg --stats in.msg
	{
		msg s1 S 1
		msg s2 S 2
		msg s3 S 3 'Sequence-Size: 3' 'Sequence-End: true'
		msg t1 T 1 'Sequence-Size: 5'
	} >expect
	expect_same expect out.msg
	{
		msg s2b S 2 'Error: msg-resequence: late: its group is complete'
		msg s4 S 4 'Error: msg-resequence: late: its group is complete'
	} >expect
	expect_same expect late.msg
	{
		msg t9 T 9 'Error: msg-resequence: sequence number 9 is past Sequence-Size 5'
		msg u1 U 1 'Sequence-Size: x' "Error: msg-resequence: Sequence-Size 'x': not a number"
	} >expect
	expect_same expect inv.msg
	{
		echo "msg-resequence: warning: message t9: sequence number 9 is past Sequence-Size 5: diverted to 'inv.msg'"
		echo "msg-resequence: warning: message u1: Sequence-Size 'x': not a number: diverted to 'inv.msg'"
		rsq_stats in=8 out=4 late=2 invalid=2 most=1
	} >expect
	expect_same expect err.txt
}

@test "size: msg-split's marker of an empty split, Sequence-Size 0 without a number, passes at once and completes its group" {
	{
		msg a2 A 2
		frame '' 'Message-Id: e0' 'Correlation-Id: E' 'Content-Type: text/plain' \
			'Sequence-Size: 0' 'Sequence-End: true'
		msg a1 A 1
		msg e1 E 1
	} >in.msg
	run -0 rsq --late late.msg --stats in.msg
	{
		frame '' 'Message-Id: e0' 'Correlation-Id: E' 'Content-Type: text/plain' \
			'Sequence-Size: 0' 'Sequence-End: true'
		msg a1 A 1
		msg a2 A 2
	} >expect
	expect_same expect out.msg
	msg e1 E 1 'Error: msg-resequence: late: its group is complete' >expect
	expect_same expect late.msg
	rsq_stats in=4 out=3 late=1 most=1 >expect
	expect_same expect err.txt
	# As msg-split writes it, for an order without items: unchanged.
	printf '<order/>' >empty.xml
	msg-wrap empty.xml | msg-split -x /order/item >marker.msg
	run -0 rsq marker.msg
	[ ! -s err.txt ]
	cmp marker.msg out.msg
}

@test "size: Sequence-Size counts from --start: from 0, a size of 3 ends at 2" {
	{
		msg z2 Z 2 'Sequence-Size: 3'
		msg z0 Z 0
		msg z3 Z 3
		msg z1 Z 1
		msg z1b Z 1
	} >in.msg
	run -0 rsq --start 0 --late late.msg --invalid inv.msg in.msg
	{
		msg z0 Z 0
		msg z1 Z 1
		msg z2 Z 2 'Sequence-Size: 3'
	} >expect
	expect_same expect out.msg
	msg z3 Z 3 'Error: msg-resequence: sequence number 3 is past Sequence-Size 3' >expect
	expect_same expect inv.msg
	msg z1b Z 1 'Error: msg-resequence: late: its group is complete' >expect
	expect_same expect late.msg
}

# ---- bytes ----

@test "bytes: a message that waited comes out as it came, binary body and all" {
	local i
	for i in 3 1 2; do
		printf 'Message-Id: b%d\nCorrelation-Id: B\nSequence-Number: %d\nContent-Length: 9\n\n\0\n\r%d\n\377\0\n\n\n' "$i" "$i" "$i"
	done >in.msg
	[ "$(count_frames in.msg)" = 3 ]
	run -0 rsq in.msg
	[ ! -s err.txt ]
	# The frames of in.msg, 1, 2, 3.
	perl -0777 -ne 'my @f = /(Message-Id: .*?\n\n.{9}\n)/sg; print @f[1, 2, 0]' in.msg >expect.msg
	cmp expect.msg out.msg
}

@test "bytes: a header line comes out as it was read, blanks and all, whether its message waited or not" {
	{
		printf 'Message-Id: c2\nCorrelation-Id: C\nSequence-Number: 2\nX-Odd:   spaced  \nContent-Length: 2\n\nc2\n'
		printf 'Message-Id: c1\nCorrelation-Id: C\nSequence-Number:1\nX-Odd:\ttab\nContent-Length: 2\n\nc1\n'
	} >in.msg
	run -0 rsq in.msg
	[ ! -s err.txt ]
	perl -0777 -ne 'my @f = /(Message-Id: .*?\n\n..\n)/sg; print @f[1, 0]' in.msg >expect.msg
	cmp expect.msg out.msg
}

@test "history: \$MSG_HISTORY is appended to each message written, one that waited and one that closed a gap too" {
	{
		msg h2 H 2 'Message-History: split'
		msg h4 H 4 'Message-History: split'
		msg h1 H 1
	} >in.msg
	MSG_HISTORY=order run -0 rsq in.msg
	[ ! -s err.txt ]
	{
		msg h1 H 1 'Message-History: order'
		msg h2 H 2 'Message-History: split, order'
		msg h4 H 4 'Message-History: split, order' 'Resequence-Gap: 3'
	} >expect
	expect_same expect out.msg
}

# ---- duplicates and late messages ----

# duplicates_input: A 1 2, 2 again (emitted), 4, 4 again (waiting), 1
# again without a Message-Id, then 3.
duplicates_input() {
	{
		msg a1 A 1
		msg a2 A 2
		msg a2x A 2
		msg a4 A 4
		msg a4x A 4
		frame anon 'Correlation-Id: A' 'Content-Type: text/plain' 'Sequence-Number: 1'
		msg a3 A 3
	} >in.msg
	{
		msg a1 A 1
		msg a2 A 2
		msg a3 A 3
		msg a4 A 4
	} >expect.msg
}

@test "duplicates: a number already emitted or already waiting is dropped with a warning and counted" {
	duplicates_input
	run -0 rsq --stats in.msg
	expect_same expect.msg out.msg
	{
		echo 'msg-resequence: warning: message a2x: duplicate: sequence number 2 was already emitted; dropped'
		echo 'msg-resequence: warning: message a4x: duplicate: sequence number 4 is already waiting; dropped'
		echo 'msg-resequence: warning: message without Message-Id: duplicate: sequence number 1 was already emitted; dropped'
		rsq_stats in=7 out=4 duplicates=3 most=1
	} >expect
	expect_same expect err.txt
}

@test "duplicates: --late takes them as they came, with an Error header, and nothing is said" {
	duplicates_input
	run -0 rsq --late late.msg --stats in.msg
	expect_same expect.msg out.msg
	{
		msg a2x A 2 'Error: msg-resequence: duplicate: sequence number 2 was already emitted'
		msg a4x A 4 'Error: msg-resequence: duplicate: sequence number 4 is already waiting'
		frame anon 'Correlation-Id: A' 'Content-Type: text/plain' 'Sequence-Number: 1' \
			'Error: msg-resequence: duplicate: sequence number 1 was already emitted'
	} >expect
	expect_same expect late.msg
	rsq_stats in=7 out=4 duplicates=3 most=1 >expect
	expect_same expect err.txt
}

# ---- invalid messages ----

# bad_numbers: group V's 1 and 2 with every kind of bad number between
# them, and M's one message of the highest number there can be.
bad_numbers() {
	{
		msg v1 V 1
		msg v2 V -
		msg v3 V abc
		msg v4 V 99999999999999999999
		msg v5 V 9007199254740992
		msg v6 V -1
		msg v7 V 1.5
		msg v8 V 0
		msg v9 V ''
		msg m1 M 9007199254740991
		msg v10 V 2
	} >in.msg
}

@test "invalid: each bad number goes to --invalid with its reason, and a warning" {
	bad_numbers
	run -0 rsq --invalid inv.msg --stats in.msg
	{
		msg v1 V 1
		msg v10 V 2
		msg m1 M 9007199254740991 'Resequence-Gap: 1-9007199254740990'
	} >expect
	expect_same expect out.msg
	{
		msg v2 V - 'Error: msg-resequence: no sequence number'
		msg v3 V abc "Error: msg-resequence: sequence number 'abc': not a number"
		msg v4 V 99999999999999999999 \
			"Error: msg-resequence: sequence number '99999999999999999999': out of range"
		msg v5 V 9007199254740992 \
			"Error: msg-resequence: sequence number '9007199254740992': out of range"
		msg v6 V -1 "Error: msg-resequence: sequence number '-1': not a number"
		msg v7 V 1.5 "Error: msg-resequence: sequence number '1.5': not a number"
		msg v8 V 0 'Error: msg-resequence: sequence number 0 is below the start 1'
		msg v9 V '' 'Error: msg-resequence: no sequence number'
	} >expect
	expect_same expect inv.msg
	{
		echo "msg-resequence: warning: message v2: no sequence number: diverted to 'inv.msg'"
		echo "msg-resequence: warning: message v3: sequence number 'abc': not a number: diverted to 'inv.msg'"
		echo "msg-resequence: warning: message v4: sequence number '99999999999999999999': out of range: diverted to 'inv.msg'"
		echo "msg-resequence: warning: message v5: sequence number '9007199254740992': out of range: diverted to 'inv.msg'"
		echo "msg-resequence: warning: message v6: sequence number '-1': not a number: diverted to 'inv.msg'"
		echo "msg-resequence: warning: message v7: sequence number '1.5': not a number: diverted to 'inv.msg'"
		echo "msg-resequence: warning: message v8: sequence number 0 is below the start 1: diverted to 'inv.msg'"
		echo "msg-resequence: warning: message v9: no sequence number: diverted to 'inv.msg'"
		rsq_stats in=11 out=3 gaps=1 skipped=9007199254740990 invalid=8 most=1
	} >expect
	expect_same expect err.txt
}

@test "invalid: without --invalid the first bad number stops the run, exit 65, what came before written" {
	{
		msg v1 V 1
		msg w3 W 3
		msg v3 V abc
		msg v2 V 2
	} >in.msg
	run -65 rsq in.msg
	msg v1 V 1 >expect
	expect_same expect out.msg
	[ "$(cat err.txt)" = "msg-resequence: in.msg: message 3 (Message-Id v3): sequence number 'abc': not a number" ]
	run -65 rsq <in.msg
	expect_same expect out.msg
	[ "$(cat err.txt)" = "msg-resequence: stdin: message 3 (Message-Id v3): sequence number 'abc': not a number" ]
}

@test "invalid: with --clock event a message needs a Timestamp that is a time" {
	{
		msg a1 A 1 "$(at 0)"
		msg a2 A 2
		msg a3 A 3 'Timestamp: yesterday'
		msg a4 A 4 "$(at 1)"
	} >in.msg
	run -0 rsq --clock event --invalid inv.msg in.msg
	{
		msg a1 A 1 "$(at 0)"
		msg a4 A 4 "$(at 1)" 'Resequence-Gap: 2-3'
	} >expect
	expect_same expect out.msg
	{
		msg a2 A 2 'Error: msg-resequence: no Timestamp (--clock event)'
		msg a3 A 3 'Timestamp: yesterday' "Error: msg-resequence: Timestamp 'yesterday' is not a time (--clock event)"
	} >expect
	expect_same expect inv.msg
	run -65 rsq --clock event in.msg
	[ "$(cat err.txt)" = 'msg-resequence: in.msg: message 2 (Message-Id a2): no Timestamp (--clock event)' ]
	# By the wall clock the Timestamps do not matter.
	run -0 rsq in.msg
	[ ! -s err.txt ]
	cmp in.msg out.msg
}

@test "expired: an expired message goes to --dead-letter, or is dropped with a warning; counted" {
	{
		msg a2 A 2
		msg a1 A 1 "Expires: $PAST"
		msg a3 A 3
	} >in.msg
	run -0 rsq --dead-letter dead.msg --stats in.msg
	{
		msg a2 A 2 'Resequence-Gap: 1'
		msg a3 A 3
	} >expect
	expect_same expect out.msg
	msg a1 A 1 "Expires: $PAST" 'Error: msg-resequence: message expired' >expect
	expect_same expect dead.msg
	rsq_stats in=3 out=2 gaps=1 skipped=1 expired=1 most=2 >expect
	expect_same expect err.txt
	run -0 rsq in.msg
	[ "$(cat err.txt)" = 'msg-resequence: message expired; message a1 dropped' ]
}

# ---- gaps ----

@test "gaps: -T skips a missing number D after the first waiting one came (event clock); the number is late after" {
	{
		msg a1 A 1 "$(at 0)"
		msg a3 A 3 "$(at 1)"
		msg a4 A 4 "$(at 5)"
		msg x1 X 1 "$(at 12)"
		msg a2 A 2 "$(at 13)"
		msg a5 A 5 "$(at 14)"
	} >in.msg
	run -0 rsq --clock event -T 10s --late late.msg --stats in.msg
	# At x1's 12 s, A's deadline of 11 s has passed: 2 is skipped
	# before x1 is handled.
	{
		msg a1 A 1 "$(at 0)"
		msg a3 A 3 "$(at 1)" 'Resequence-Gap: 2'
		msg a4 A 4 "$(at 5)"
		msg x1 X 1 "$(at 12)"
		msg a5 A 5 "$(at 14)"
	} >expect.msg
	expect_same expect.msg out.msg
	msg a2 A 2 "$(at 13)" 'Error: msg-resequence: late: sequence number 2 was skipped as a gap' >expect
	expect_same expect late.msg
	rsq_stats in=6 out=5 gaps=1 skipped=1 late=1 most=2 >expect
	expect_same expect err.txt
	# Without --late: dropped with a warning.
	run -0 rsq --clock event -T 10s in.msg
	expect_same expect.msg out.msg
	[ "$(cat err.txt)" = 'msg-resequence: warning: message a2: late: sequence number 2 was skipped as a gap; dropped' ]
	# Without -T the gap waits: 2 fills it.
	run -0 rsq --clock event in.msg
	[ ! -s err.txt ]
	[ "$(msg-unwrap -s ' ' out.msg)" = 'a1 x1 a2 a3 a4 a5' ]
}

@test "gaps: a range is marked 2-4; the next gap waits D after the earliest message still waiting" {
	{
		msg b1 B 1 "$(at 0)"
		msg b5 B 5 "$(at 1)"
		msg b9 B 9 "$(at 8)"
		msg y1 Y 1 "$(at 12)"
		msg y2 Y 2 "$(at 15)"
		msg y3 Y 3 "$(at 19)"
	} >in.msg
	run -0 rsq --clock event -T 10s --stats in.msg
	# 2-4 at 11 s (5 came at 1); 6-8 at 18 s (9 came at 8), not at 15.
	{
		msg b1 B 1 "$(at 0)"
		msg b5 B 5 "$(at 1)" 'Resequence-Gap: 2-4'
		msg y1 Y 1 "$(at 12)"
		msg y2 Y 2 "$(at 15)"
		msg b9 B 9 "$(at 8)" 'Resequence-Gap: 6-8'
		msg y3 Y 3 "$(at 19)"
	} >expect
	expect_same expect out.msg
	rsq_stats in=6 out=6 gaps=2 skipped=6 most=2 >expect
	expect_same expect err.txt
}

@test "gaps: a Resequence-Gap the message carried is replaced, and the header comes last" {
	msg c2 C 2 'Resequence-Gap: 9' 'X-After: y' >in.msg
	run -0 rsq in.msg
	[ ! -s err.txt ]
	msg c2 C 2 'X-After: y' 'Resequence-Gap: 1' >expect
	expect_same expect out.msg
}

@test "gaps: by the wall clock -T skips a gap while the input is quiet" {
	local resequencer
	fed_by_fifo -T 300ms --stats
	msg a1 A 1 >&4
	msg a3 A 3 >&4
	# The input stays open and quiet: the timer alone lets a3 out.
	wait_until 6 has_frames out.msg 2
	{
		msg a1 A 1
		msg a3 A 3 'Resequence-Gap: 2'
	} >expect
	expect_same expect out.msg
	kill -0 "$resequencer"
	msg a2 A 2 >&4
	exec 4>&-
	exit_status "$resequencer" 30
	[ "$status" = 0 ]
	expect_same expect out.msg
	{
		echo 'msg-resequence: warning: message a2: late: sequence number 2 was skipped as a gap; dropped'
		rsq_stats in=3 out=2 gaps=1 skipped=1 late=1 most=1
	} >expect
	expect_same expect err.txt
}

# ---- forgetting ----

@test "forget: an idle group is forgotten after --forget and starts again; a complete one is late until then" {
	{
		msg a1 A 1 "$(at 0)"
		msg a2 A 2 "$(at 10)"
		msg s1 S 1 "$(at 20)" 'Sequence-Size: 1'
		msg s1b S 1 "$(at 30)"
		msg x1 X 1 "$(at 200)"
		msg a1b A 1 "$(at 210)"
		msg s1c S 1 "$(at 300)"
	} >in.msg
	run -0 rsq --clock event --forget 1m --late late.msg in.msg
	[ ! -s err.txt ]
	{
		msg a1 A 1 "$(at 0)"
		msg a2 A 2 "$(at 10)"
		msg s1 S 1 "$(at 20)" 'Sequence-Size: 1'
		msg x1 X 1 "$(at 200)"
		msg a1b A 1 "$(at 210)"
		msg s1c S 1 "$(at 300)"
	} >expect
	expect_same expect out.msg
	msg s1b S 1 "$(at 30)" 'Error: msg-resequence: late: its group is complete' >expect
	expect_same expect late.msg
	# Remembered for longer, A's 1 again is a duplicate, S's late.
	run -0 rsq --clock event --forget 10m --late late2.msg in.msg
	[ ! -s err.txt ]
	[ "$(msg-unwrap -s ' ' out.msg)" = 'a1 a2 s1 x1' ]
	{
		msg s1b S 1 "$(at 30)" 'Error: msg-resequence: late: its group is complete'
		msg a1b A 1 "$(at 210)" 'Error: msg-resequence: duplicate: sequence number 1 was already emitted'
		msg s1c S 1 "$(at 300)" 'Error: msg-resequence: late: its group is complete'
	} >expect
	expect_same expect late2.msg
}

# ---- the end of input ----

# waiting_at_end: F lacks 1, G lacks 4-6 (its 1-3 go out at once), H is
# whole; streamed.msg holds what goes out before the end of input.
waiting_at_end() {
	{
		msg g1 G 1
		msg g2 G 2
		msg g3 G 3
		msg h1 H 1
	} >streamed.msg
	{
		msg f3 F 3
		msg g1 G 1
		msg g2 G 2
		msg g3 G 3
		msg h1 H 1
		msg g7 G 7
		msg f2 F 2
	} >in.msg
}

@test "at-end flush (the default): the groups in the order first seen, each in order, gaps marked" {
	waiting_at_end
	run -0 rsq --stats in.msg
	{
		cat streamed.msg
		msg f2 F 2 'Resequence-Gap: 1'
		msg f3 F 3
		msg g7 G 7 'Resequence-Gap: 4-6'
	} >expect.msg
	expect_same expect.msg out.msg
	rsq_stats in=7 out=7 gaps=2 skipped=4 most=3 >expect
	expect_same expect err.txt
	run -0 rsq --at-end flush in.msg
	[ ! -s err.txt ]
	expect_same expect.msg out.msg
}

@test "at-end fail: exit 65 naming what waits; nothing of it is written" {
	waiting_at_end
	run -65 rsq --at-end fail in.msg
	expect_same streamed.msg out.msg
	[ "$(cat err.txt)" = 'msg-resequence: 3 messages in 2 groups still waiting at the end of input' ]
}

@test "at-end fail: with --invalid what waits goes there" {
	waiting_at_end
	run -65 rsq --at-end fail --invalid inv.msg in.msg
	expect_same streamed.msg out.msg
	{
		msg f2 F 2 'Error: msg-resequence: still waiting at the end of input'
		msg f3 F 3 'Error: msg-resequence: still waiting at the end of input'
		msg g7 G 7 'Error: msg-resequence: still waiting at the end of input'
	} >expect
	expect_same expect inv.msg
	{
		echo "msg-resequence: warning: message f2: still waiting at the end of input: diverted to 'inv.msg'"
		echo "msg-resequence: warning: message f3: still waiting at the end of input: diverted to 'inv.msg'"
		echo "msg-resequence: warning: message g7: still waiting at the end of input: diverted to 'inv.msg'"
		echo 'msg-resequence: 3 messages in 2 groups still waiting at the end of input'
	} >expect
	expect_same expect err.txt
}

@test "at-end fail: with --state what waits stays for the next run" {
	waiting_at_end
	run -65 rsq --at-end fail --state st in.msg
	expect_same streamed.msg out.msg
	[ "$(cat err.txt)" = 'msg-resequence: 3 messages in 2 groups still waiting at the end of input' ]
	{
		msg f1 F 1
		msg g4 G 4
		msg g5 G 5
		msg g6 G 6
	} >more.msg
	run -0 rsq --at-end fail --state st --stats more.msg
	{
		msg f1 F 1
		msg f2 F 2
		msg f3 F 3
		msg g4 G 4
		msg g5 G 5
		msg g6 G 6
		msg g7 G 7
	} >expect
	expect_same expect out.msg
	rsq_stats in=4 out=7 most=3 >expect
	expect_same expect err.txt
}

@test "at-end keep (the default with --state): what waits stays in the state for the next run" {
	{
		msg k1 K 1
		msg k3 K 3
		msg j2 J 2
	} >run1.msg
	run -0 rsq --state st --stats run1.msg
	msg k1 K 1 >expect
	expect_same expect out.msg
	rsq_stats in=3 out=1 waiting=2 most=2 >expect
	expect_same expect err.txt
	[ -d st ]
	# An empty run changes nothing.
	run -0 rsq --state st --stats </dev/null
	[ ! -s out.msg ]
	rsq_stats waiting=2 most=2 >expect
	expect_same expect err.txt
	{
		msg j1 J 1
		msg k2 K 2
	} >run2.msg
	run -0 rsq --state st --at-end keep --stats run2.msg
	{
		msg j1 J 1
		msg j2 J 2
		msg k2 K 2
		msg k3 K 3
	} >expect
	expect_same expect out.msg
	rsq_stats in=2 out=4 most=2 >expect
	expect_same expect err.txt
	# The next numbers are kept too: 3 again is a duplicate.
	msg k3b K 3 >run3.msg
	run -0 rsq --state st run3.msg
	[ ! -s out.msg ]
	[ "$(cat err.txt)" = 'msg-resequence: warning: message k3b: duplicate: sequence number 3 was already emitted; dropped' ]
}

# ---- memory bounds ----

# crowded: A and B each lack 1; A's 2 came first, then B's, then a
# third message that fits, then a fourth; c1 goes out at once first.
crowded() {
	{
		msg c1 C 1
		msg a2 A 2
		msg b2 B 2
		msg a3 A 3
		msg b3 B 3
	} >in.msg
}

@test "capacity: -C full, --on-full skip (the default) skips the oldest gap and goes on" {
	crowded
	msg a1 A 1 >>in.msg
	run -0 rsq -C 3 --late late.msg --stats in.msg
	# b3 finds 3 waiting: A's gap, whose 2 came first, is skipped.
	{
		msg c1 C 1
		msg a2 A 2 'Resequence-Gap: 1'
		msg a3 A 3
		msg b2 B 2 'Resequence-Gap: 1'
		msg b3 B 3
	} >expect
	expect_same expect out.msg
	msg a1 A 1 'Error: msg-resequence: late: sequence number 1 was skipped as a gap' >late.expect
	expect_same late.expect late.msg
	rsq_stats in=6 out=5 gaps=2 skipped=2 late=1 most=3 >expect
	expect_same expect err.txt
	run -0 rsq -C 3 --on-full skip --late late2.msg in.msg
	[ ! -s err.txt ]
	expect_same late.expect late2.msg
}

@test "capacity: --on-full fail exits 75 at the message that finds it full" {
	crowded
	run -75 rsq -C 3 --on-full fail in.msg
	[ "$(cat err.txt)" = 'msg-resequence: capacity of 3 messages (-C) reached at message b3' ]
	msg c1 C 1 >expect
	expect_same expect <(head -c "$(stat -c %s expect)" out.msg)
	run -1 grep -qx 'Message-Id: b3' out.msg
}

@test "capacity: --on-full block with no gap that can time out exits 75 in a pipe, never hangs" {
	crowded
	run -75 timeout -k 5 30 bash -c 'cat in.msg | msg-resequence -C 3 --on-full block >out.msg 2>err.txt'
	[ "$(cat err.txt)" = 'msg-resequence: capacity of 3 messages reached and no gap can time out (--on-full block)' ]
	run -1 grep -qx 'Message-Id: b3' out.msg
	# Event time does not pass while the input waits either.
	{
		msg a2 A 2 "$(at 0)"
		msg b2 B 2 "$(at 1)"
		msg a3 A 3 "$(at 2)"
		msg b3 B 3 "$(at 3)"
	} >in.msg
	run -75 timeout -k 5 30 bash -c 'cat in.msg | msg-resequence -C 3 --on-full block --clock event -T 1m \
		>out.msg 2>err.txt'
	[ "$(cat err.txt)" = 'msg-resequence: capacity of 3 messages reached and no gap can time out (--on-full block)' ]
}

@test "capacity: --on-full block waits for the earliest -T deadline, skips that gap and goes on" {
	local t0
	{
		msg a2 A 2
		msg a3 A 3
		msg a4 A 4
		msg a5 A 5
	} >in.msg
	t0=$(date +%s%N)
	run -0 timeout -k 5 30 bash -c 'cat in.msg | msg-resequence -C 2 -T 500ms --on-full block --stats \
		>out.msg 2>err.txt'
	[ $((($(date +%s%N) - t0) / 1000000)) -ge 500 ]
	{
		msg a2 A 2 'Resequence-Gap: 1'
		msg a3 A 3
		msg a4 A 4
		msg a5 A 5
	} >expect
	expect_same expect out.msg
	rsq_stats in=4 out=4 gaps=1 skipped=1 most=2 >expect
	expect_same expect err.txt
}

# big ID KEY NUMBER [HEADER...]: message NUMBER of group KEY, 4,000
# bytes of body, with the headers given last.
big() {
	local id=$1 key=$2 num=$3
	shift 3
	frame "$(printf '%4000s' "$id")" "Message-Id: $id" "Correlation-Id: $key" \
		'Content-Type: text/plain' "Sequence-Number: $num" "$@"
}

@test "capacity: --max-bytes bounds the bytes waiting as -C bounds the messages" {
	{
		big a2 A 2
		big a3 A 3
		big a4 A 4
	} >in.msg
	# Two of 4,000 bytes fit in 10k, three do not.
	run -0 rsq --max-bytes 10k --stats in.msg
	{
		big a2 A 2 'Resequence-Gap: 1'
		big a3 A 3
		big a4 A 4
	} >expect
	expect_same expect out.msg
	rsq_stats in=3 out=3 gaps=1 skipped=1 most=2 >expect
	expect_same expect err.txt
	run -75 rsq --max-bytes 10k --on-full fail in.msg
	[ "$(cat err.txt)" = 'msg-resequence: capacity of 10240 bytes (--max-bytes) reached at message a4' ]
	run -1 grep -qx 'Message-Id: a4' out.msg
}

@test "capacity: a message alone over --max-bytes is invalid if it would have to wait" {
	{
		big a1 A 1
		big a3 A 3
		big a2 A 2
	} >in.msg
	run -0 rsq --max-bytes 1k --invalid inv.msg in.msg
	{
		big a1 A 1
		big a2 A 2
	} >expect
	cmp expect out.msg
	big a3 A 3 'Error: msg-resequence: the message alone is over --max-bytes' >expect
	cmp expect inv.msg
	[ "$(cat err.txt)" = "msg-resequence: warning: message a3: the message alone is over --max-bytes: diverted to 'inv.msg'" ]
}

# ---- batch ----

@test "batch: every group in the order first seen, sorted by number, the first of a number kept, gaps marked" {
	{
		msg a3 A 3
		msg b2 B 2
		msg a1 A 1
		msg a3x A 3
		msg b1 B 1
		msg a5 A 5
		msg a3y A 3
		msg b4 B 4
	} >in.msg
	run -0 rsq --batch --late late.msg --stats in.msg
	{
		msg a1 A 1
		msg a3 A 3 'Resequence-Gap: 2'
		msg a5 A 5 'Resequence-Gap: 4'
		msg b1 B 1
		msg b2 B 2
		msg b4 B 4 'Resequence-Gap: 3'
	} >expect
	expect_same expect out.msg
	{
		msg a3x A 3 'Error: msg-resequence: duplicate: sequence number 3 was already emitted'
		msg a3y A 3 'Error: msg-resequence: duplicate: sequence number 3 was already emitted'
	} >expect
	expect_same expect late.msg
	# How many it held at once is its own affair in batch mode.
	[[ $(cat err.txt) =~ ^'msg-resequence: stats: in 8, out 6, gaps 3, skipped 3, late 0, duplicates 2, invalid 0, expired 0, waiting 0, most '[0-9]+$ ]]
}

@test "batch: nothing comes out before the end of input, not even a message that could" {
	local resequencer
	fed_by_fifo --batch
	msg b1 B 1 >&4
	sleep 1
	[ ! -s out.msg ]
	kill -0 "$resequencer"
	exec 4>&-
	exit_status "$resequencer" 30
	[ "$status" = 0 ]
	[ ! -s err.txt ]
	msg b1 B 1 >expect
	expect_same expect out.msg
}

# many_groups: 2,950 messages of 50 groups shuffled by windows of 500;
# every 17th number of each group missing, every 23rd twice.
many_groups() {
	perl -e '
		for my $n (1 .. 60) {
			next if $n % 17 == 0;
			for my $g (1 .. 50) {
				for my $copy (1 .. ($n % 23 == 0 ? 2 : 1)) {
					my $id = sprintf "g%02d-%02d-%d", $g, $n, $copy;
					my $body = $id . ("." x ($g * 7));
					printf "Message-Id: %s\nCorrelation-Id: g%02d\nSequence-Number: %d\n"
						. "Content-Length: %d\n\n%s\n", $id, $g, $n, length $body, $body;
				}
			}
		}' | "$BATS_TEST_DIRNAME/shuffle-frames" 84 500 >in.msg
}

@test "batch: above --max-bytes the messages spill to TMPDIR, the output the same" {
	many_groups
	mkdir tmp
	TMPDIR=$PWD/tmp run -0 rsq --batch --late mem-late.msg in.msg
	[ ! -s err.txt ]
	mv out.msg mem.msg
	# Each group in order, the first copy of each number, gaps marked.
	fields mem.msg Correlation-Id Sequence-Number Resequence-Gap | cut -f 1-4 >got
	fields in.msg Correlation-Id Sequence-Number | awk -F '\t' '
		!($1 in seen) { order[++groups] = $1; seen[$1] = 1 }
		!(($1, $2) in first) { first[$1, $2] = $3 }
		END {
			for (i = 1; i <= groups; i++) {
				g = order[i]
				for (n = 1; n <= 60; n++) {
					if (n % 17 == 0)
						continue
					gap = n == 18 || n == 35 || n == 52 ? n - 1 : "-"
					print g "\t" n "\t" gap "\t" first[g, n]
				}
			}
		}' >expect
	expect_same expect got
	[ "$(count_frames mem-late.msg)" = 100 ]
	TMPDIR=$PWD/tmp run -0 rsq --batch --max-bytes 4k --late spill-late.msg in.msg
	[ ! -s err.txt ]
	cmp mem.msg out.msg
	cmp mem-late.msg spill-late.msg
	# The spill file was unlinked.
	[ -z "$(ls -A tmp)" ]
	# A spill that cannot be made is a fault of the machine.
	TMPDIR=$PWD/missing run rsq --batch --max-bytes 4k in.msg
	[[ $status =~ ^(70|73|74|75)$ ]]
	[ "$(grep -c . err.txt)" = 1 ]
	grep -q '^msg-resequence: .*No such file or directory$' err.txt
	TMPDIR=$PWD/missing run -0 rsq --batch in.msg
	cmp mem.msg out.msg
}

# ---- usage ----

# usage_error FIRST-LINE ARG...: msg-resequence ARG... is a usage error:
# exit 64, FIRST-LINE (a pattern), then the usage; nothing written.
usage_error() {
	local want=$1
	shift
	run -64 rsq --output made.msg "$@" in.msg
	[[ $(head -n 1 err.txt) =~ ^$want$ ]] || { echo "got: $(head -n 1 err.txt)"; return 1; }
	[[ $(sed -n 2p err.txt) == 'usage: msg-resequence '* ]]
	[ ! -s out.msg ]
	[ ! -e made.msg ]
}

@test "usage: options that conflict or make no sense exit 64 before anything is written" {
	msg a1 A 1 >in.msg
	usage_error 'msg-resequence: --at-end keep needs --state' --at-end keep
	usage_error 'msg-resequence: --batch cannot be used with -T' --batch -T 1s
	usage_error 'msg-resequence: --batch cannot be used with --state' --batch --state st
	[ ! -e st ]
	usage_error 'msg-resequence: --batch cannot be used with -C or --on-full' --batch -C 5
	usage_error 'msg-resequence: --batch cannot be used with -C or --on-full' --batch --on-full fail
	usage_error 'msg-resequence: .*' --start x
	usage_error 'msg-resequence: .*' --start -1
	usage_error 'msg-resequence: .*' --window 0
	usage_error 'msg-resequence: .*' -C 0
	usage_error 'msg-resequence: .*' --on-full wait
	usage_error 'msg-resequence: .*' --at-end later
	usage_error 'msg-resequence: .*' --clock lunar
	usage_error 'msg-resequence: .*' -T soon
	usage_error 'msg-resequence: .*' --forget never
	usage_error 'msg-resequence: .*' --max-bytes lots
	# An expression that does not compile is named, without the usage.
	run -64 rsq -b '1 +' in.msg
	[ "$(cat err.txt)" = "msg-resequence: invalid expression '1 +': Invalid expression at position 3" ]
	[ ! -s out.msg ]
	run -64 rsq -g '[[' in.msg
	[ "$(cat err.txt)" = "msg-resequence: invalid expression '[[': Invalid expression at position 0" ]
	usage_error 'msg-resequence: .*' --bogus
	run -64 rsq --late
	run -0 rsq --help
	[[ $(head -n 1 out.msg) == 'usage: msg-resequence '* ]]
}

# ---- statistics ----

@test "stats: every counter, with --state keeping what waits" {
	{
		msg a1 A 1 "$(at 0)"
		msg a3 A 3 "$(at 1)"
		msg a4 A 4 "$(at 2)"
		msg x1 X 1 "$(at 20)"
		msg a2 A 2 "$(at 21)"
		msg x1b X 1 "$(at 22)"
		msg v1 V - "$(at 23)"
		msg e1 E 1 "$(at 24)" "Expires: $PAST"
		msg b2 B 2 "$(at 25)"
		msg b3 B 3 "$(at 26)"
		msg b4 B 4 "$(at 27)"
	} >in.msg
	run -0 rsq --state st --clock event -T 10s --late late.msg --invalid inv.msg \
		--dead-letter dead.msg --stats in.msg
	{
		msg a1 A 1 "$(at 0)"
		msg a3 A 3 "$(at 1)" 'Resequence-Gap: 2'
		msg a4 A 4 "$(at 2)"
		msg x1 X 1 "$(at 20)"
	} >expect
	expect_same expect out.msg
	[ "$(sed -n 's/^Message-Id: //p' late.msg | paste -sd ' ')" = 'a2 x1b' ]
	[ "$(sed -n 's/^Message-Id: //p' inv.msg)" = v1 ]
	[ "$(sed -n 's/^Message-Id: //p' dead.msg)" = e1 ]
	{
		echo "msg-resequence: warning: message v1: no sequence number: diverted to 'inv.msg'"
		rsq_stats in=11 out=4 gaps=1 skipped=1 late=1 duplicates=1 invalid=1 expired=1 waiting=3 most=3
	} >expect
	expect_same expect err.txt
}
