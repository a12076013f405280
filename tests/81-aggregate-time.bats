#!/usr/bin/env bats
# msg-aggregate and time: -T and -i by the members' Timestamps (--clock
# event: the same result however fast the machine is), --remember, and
# --deterministic-ids; then by the wall clock, with short timers and
# wide margins: a group times out while its writer is still asleep, and
# --on-limit block in a pipe waits for a timer instead of deadlocking.

load test_helper
bats_require_minimum_version 1.5.0
load fixtures/aggregate/aggregate

agg() {
	timeout -k 5 60 msg-aggregate "$@" >out.msg 2>err.txt
}

# ---- event time ----

@test "event clock: -T releases a group once a later Timestamp passes its deadline" {
	{
		member a1 A a1 "$(at 0)"
		member b1 B b1 "$(at 5)"
		member a2 A a2 "$(at 8)"
		member c1 C c1 "$(at 12)"
	} >in.msg
	run -0 agg --clock event -T 10s --stats in.msg
	result a1a2 A 2 timeout >expect
	stable out.msg | head -n 7 >got
	expect_same expect got
	# B (deadline 15) and C were still open when the input ended.
	expect_same <(summary out.msg | tail -n +2 | sort) <(printf '%s\n' 'B end 1 -' 'C end 1 -')
	stats_line in=4 members=4 released=3 timeout=1 end=2 >expect
	expect_same expect err.txt
}

@test "event clock: a group that could still have met -n times out as partial" {
	{
		member a1 A a1 "$(at 0)"
		member a2 A a2 "$(at 30)"
		member b1 B b1 "$(at 61)"
		member b2 B b2 "$(at 62)"
		member b3 B b3 "$(at 63)"
	} >in.msg
	run -0 agg --clock event -n 3 -T 1m --partial part.msg in.msg
	[ ! -s err.txt ]
	result b1b2b3 B 3 count | results_are out.msg
	result a1a2 A 2 timeout | results_are part.msg
}

@test "event clock: -i releases a group that heard nothing for the duration" {
	{
		member a1 A a1 "$(at 0)"
		member a2 A a2 "$(at 4)"
		member a3 A a3 "$(at 8)"
		member b1 B b1 "$(at 14)"
	} >in.msg
	run -0 agg --clock event -i 5s in.msg
	[ ! -s err.txt ]
	{
		result a1a2a3 A 3 idle
		result b1 B 1 end
	} | results_are out.msg
}

@test "event clock: -T and -i together, the first deadline wins; a member after it is late" {
	{
		member a1 A a1 "$(at 0)"
		member a2 A a2 "$(at 4)"
		member a3 A a3 "$(at 8)"
		member a4 A a4 "$(at 11)"
		member b1 B b1 "$(at 20)"
		member c1 C c1 "$(at 29)"
	} >in.msg
	# A: idle at 13, but its timeout at 10 comes first, at a4's 11,
	# before a4 joins. B: timeout at 30, idle at 25: idle, at c1's 29.
	run -0 agg --clock event -T 10s -i 5s --late late.msg in.msg
	[ ! -s err.txt ]
	{
		result a1a2a3 A 3 timeout
		result b1 B 1 idle
		result c1 C 1 end
	} | results_are out.msg
	member a4 A a4 "$(at 11)" >expect
	grep -v '^Error: ' late.msg >got
	expect_same expect got
}

@test "event clock: both deadlines passed between two messages: the earlier one is the reason" {
	{
		member b1 B b1 "$(at 20)"
		member c1 C c1 "$(at 40)"
	} >in.msg
	# B: idle at 25, timeout at 30; c1's 40 passes both, and the group
	# met -i first, as it would have by the wall clock.
	run -0 agg --clock event -T 10s -i 5s in.msg
	[ ! -s err.txt ]
	{
		result b1 B 1 idle
		result c1 C 1 end
	} | results_are out.msg
	# The other way round.
	run -0 agg --clock event -T 5s -i 10s in.msg
	{
		result b1 B 1 timeout
		result c1 C 1 end
	} | results_are out.msg
}

@test "event clock: --remember forgets a released key after the duration" {
	{
		member a1 A a1 "$(at 0)"
		member a2 A a2 "$(at 3)"
		member a3 A a3 "$(at 9)"
	} >in.msg
	run -0 agg --clock event -n 1 --remember 5s --late late.msg --stats in.msg
	{
		result a1 A 1 count
		result a3 A 1 count
	} | results_are out.msg
	[ "$(count_frames late.msg)" = 1 ]
	grep -q '^Message-Id: a2$' late.msg
	stats_line in=3 members=2 late=1 released=2 count=2 >expect
	expect_same expect err.txt
}

@test "event clock: --on-limit block fails as fail does, 75 at the message that finds no room" {
	{
		member a1 A a1 "$(at 0)"
		member b1 B b1 "$(at 20)"
		member c1 C c1 "$(at 21)"
	} >in.msg
	# b1's Timestamp passes A's deadline, so A times out and B has room;
	# c1's does not pass B's, and while input is stopped event time
	# stands still: no room would come, so c1 is left unread, at once.
	run -75 --separate-stderr timeout -k 5 10 msg-aggregate --clock event -T 10s \
		--max-groups 1 --on-limit block in.msg
	[ "$stderr" = 'msg-aggregate: limit --max-groups reached at message c1' ]
	printf '%s\n' "$output" >out.msg
	result a1 A 1 timeout | results_are out.msg
	# fail gives the same.
	run -75 agg --clock event -T 10s --max-groups 1 --on-limit fail in.msg
	[ "$(cat err.txt)" = 'msg-aggregate: limit --max-groups reached at message c1' ]
	result a1 A 1 timeout | results_are out.msg
}

@test "event clock: a message without a Timestamp, or with one that is no time, is invalid" {
	{
		member a1 A a1 "$(at 0)"
		member a2 A a2
		member a3 A a3 'Timestamp: yesterday'
		member a4 A a4 "$(at 1)"
	} >in.msg
	run -0 agg --clock event -n 2 --invalid inv.msg in.msg
	result a1a4 A 2 count | results_are out.msg
	[ "$(count_frames inv.msg)" = 2 ]
	[ "$(grep -c '^Error: msg-aggregate: ' inv.msg)" = 2 ]
	run -65 agg --clock event -n 2 in.msg
	[ ! -s out.msg ]
	[ "$(grep -c . err.txt)" = 1 ]
	grep -q '^msg-aggregate: in\.msg: message 2 (Message-Id a2): ' err.txt
	# By the wall clock the Timestamp does not matter.
	run -0 agg --clock wall -n 4 in.msg
	[ ! -s err.txt ]
	[ "$(msg-unwrap out.msg)" = a1a2a3a4 ]
}

@test "event clock with --deterministic-ids: a batch run again gives the same bytes" {
	local i id
	for i in 1 2 3 4 5 6; do
		member "m$i" "K$((i % 3))" "m$i" "$(at $((i * 60)))"
	done >in.msg
	run -0 agg --clock event -i 10m --deterministic-ids in.msg
	[ ! -s err.txt ]
	mv out.msg first.msg
	run -0 agg --clock event -i 10m --deterministic-ids in.msg
	cmp first.msg out.msg
	[ "$(count_frames out.msg)" = 3 ]
	one_new_id out.msg
	# Version 8 UUIDs, the Timestamp of each group's latest member.
	while IFS= read -r id; do
		[[ $id =~ ^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$ ]]
	done < <(sed -n 's/^Message-Id: //p' out.msg)
	[ "$(sed -n 's/^Timestamp: //p' out.msg | sort | paste -sd ' ')" = \
		'2026-12-01T00:04:00.000Z 2026-12-01T00:05:00.000Z 2026-12-01T00:06:00.000Z' ]
	# Other members, other ids.
	sed 's/^Message-Id: m1$/Message-Id: n1/' in.msg >in2.msg
	run -0 agg --clock event -i 10m --deterministic-ids in2.msg
	[ "$(sed -n 's/^Message-Id: //p' out.msg | sort)" != "$(sed -n 's/^Message-Id: //p' first.msg | sort)" ]
	[ "$(comm -12 <(sed -n 's/^Message-Id: //p' out.msg | sort) \
		<(sed -n 's/^Message-Id: //p' first.msg | sort) | grep -c .)" = 2 ]
	# Without the option each run gets new ids.
	run -0 agg --clock event -i 10m in.msg
	run -1 cmp -s first.msg out.msg
	[ "$(stable first.msg)" = "$(stable out.msg)" ]
}

# ---- wall-clock time ----

# slow_writer FIRST SECONDS SECOND: write the file FIRST to in.fifo,
# sleep SECONDS, write SECOND, and close; in the background (pid in
# $writer).
slow_writer() {
	spawn bash -c 'cat "$1"; sleep "$2"; cat "$3"' slow_writer "$@" >in.fifo
	writer=$spawned
}

@test "wall clock: -T releases a group while its writer is still asleep" {
	local t0 aggregator
	mkfifo in.fifo
	member a1 A a >first.msg
	member z1 Z z >second.msg
	t0=$SECONDS
	spawn msg-aggregate -T 300ms in.fifo >out.msg 2>err.txt
	aggregator=$spawned
	slow_writer first.msg 8 second.msg
	# Well before the writer wakes up, A is out.
	wait_until 5 grep -q '^Aggregate-Reason: timeout$' out.msg
	kill -0 "$writer"
	[ $((SECONDS - t0)) -lt 8 ]
	result a A 1 timeout | results_are out.msg
	exit_status "$aggregator" 30
	[ "$status" = 0 ]
	[ ! -s err.txt ]
	# Z's timer had not run out when the input ended.
	expect_same <(summary out.msg) <(printf '%s\n' 'A timeout 1 -' 'Z end 1 -')
}

@test "wall clock: -i releases a group after a quiet spell, not between close members" {
	local aggregator
	mkfifo in.fifo
	{
		member a1 A a
		member a2 A b
	} >first.msg
	member z1 Z z >second.msg
	spawn msg-aggregate -i 1500ms --clock wall in.fifo >out.msg 2>err.txt
	aggregator=$spawned
	slow_writer first.msg 10 second.msg
	wait_until 8 grep -q '^Aggregate-Reason: idle$' out.msg
	kill -0 "$writer"
	result ab A 2 idle | results_are out.msg
	exit_status "$aggregator" 30
	[ "$status" = 0 ]
	expect_same <(summary out.msg) <(printf '%s\n' 'A idle 2 -' 'Z end 1 -')
}

# wide N SIZE: N members of groups G01..GN, one each, SIZE bytes of
# body each, made of the group's name.
wide() {
	perl -e '
		my ($n, $size) = @ARGV;
		for my $i (1 .. $n) {
			my $k = sprintf "G%02d", $i;
			my $body = substr($k x $size, 0, $size);
			print "Message-Id: m$k\nCorrelation-Id: $k\nContent-Type: text/plain\n",
				"Content-Length: $size\n\n$body\n";
		}' "$@"
}

# blocked_run N ARG...: the members of wide in.msg through a pipe into
# msg-aggregate -n 2 -T 200ms --on-limit block --stats ARG...; the
# groups the table had no room for waited for a timer, so all but the
# last N (those still open when the input ended, or not) timed out; and
# every member came out once, in order but for those last N.
blocked_run() {
	local n=$1 groups
	shift
	run -0 timeout -k 5 60 bash -c 'cat in.msg | msg-aggregate -n 2 -T 200ms \
		--on-limit block --stats "$@" >out.msg 2>err.txt' blocked_run "$@"
	groups=$(count_frames in.msg)
	summary out.msg >got
	cat got
	# Those released at the end of input in any order.
	[ "$(head -n $((groups - n)) got | cut -d ' ' -f 1 | paste -sd ' ')" = \
		"$(seq -f 'G%02g' 1 $((groups - n)) | paste -sd ' ')" ]
	[ "$(tail -n "$n" got | cut -d ' ' -f 1 | sort | paste -sd ' ')" = \
		"$(seq -f 'G%02g' $((groups - n + 1)) "$groups" | paste -sd ' ')" ]
	[ "$(head -n $((groups - n)) got | grep -c ' timeout 1 -$')" = $((groups - n)) ]
	[ "$(tail -n "$n" got | grep -c -E ' (timeout|end) 1 -$')" = "$n" ]
	stats_line in="$groups" members="$groups" released="$groups" partial="$groups" \
		timeout="$(grep -c ' timeout ' got)" end="$(grep -c ' end ' got || true)" >expect
	expect_same expect err.txt
	msg-unwrap -s '\n' out.msg | sort | cmp - <(msg-unwrap -s '\n' in.msg | sort)
}

@test "limits, block: a full table stops reading until -T makes room; a pipe waits, nothing is lost" {
	# 20 groups of 20,000 bytes, 400,000 in all: the writer fills the
	# pipe and waits while the aggregator holds two groups at a time.
	wide 20 20000 >in.msg
	blocked_run 2 --max-groups 2
}

@test "limits, block: --max-bytes waits for a timer as --max-groups does" {
	# Two members of 4,000 bytes fit in 10k, three do not.
	wide 6 4000 >in.msg
	blocked_run 2 --max-bytes 10k
}

@test "limits, block: a group at --max-members waits for its timer; the next member starts a new group" {
	for i in 1 2 3 4 5; do
		member "a$i" A "a$i"
	done >in.msg
	# As with release-oldest, the group is released before the member
	# that would pass the limit joins: nothing is lost, nothing is late.
	run -0 timeout -k 5 60 bash -c 'cat in.msg | msg-aggregate -n 5 --max-members 2 \
		-T 300ms --on-limit block --late late.msg >out.msg 2>err.txt'
	[ ! -s err.txt ]
	[ ! -s late.msg ]
	summary out.msg >got
	cat got
	[ "$(head -n 2 got)" = "$(printf '%s\n' 'A timeout 2 -' 'A timeout 2 -')" ]
	[[ $(sed -n 3p got) =~ ^A\ (timeout|end)\ 1\ -$ ]]
	[ "$(grep -c . got)" = 3 ]
	[ "$(msg-unwrap -s ' ' out.msg)" = 'a1a2 a3a4 a5' ]
}
