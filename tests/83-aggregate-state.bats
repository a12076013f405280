#!/usr/bin/env bats
# msg-aggregate with --state: groups kept across runs (one file per run,
# as from cron), timers that keep their deadlines across a restart, late
# members told across runs; one store commit an input batch, before
# the batch's results go out and its files are deleted; SIGKILL at
# random points while it aggregates a spool: after each restart and at
# the end, every group out is whole, a copy only of what was in flight,
# and nothing is lost; a second instance is kept out; and a store whose
# disk fails (tests/faults) stops it cleanly, nothing out that the
# state does not hold, for a rerun to finish.

load test_helper
bats_require_minimum_version 1.5.0
load fixtures/aggregate/aggregate
load fixtures/dir/dir
load crash/build
load crash/startup

setup_file() {
	cc_preload "$BATS_FILE_TMPDIR/faultinject.so" "$MSG_TOP/tests/faults/faultinject.c"
	# The kill windows start from the time msg-aggregate takes to start
	# on an empty store: milliseconds as built, a third of a second more
	# under AddressSanitizer.
	STARTUP_MS=$(fastest_ms msg-aggregate --state "$BATS_FILE_TMPDIR/probe" --once </dev/null)
	export STARTUP_MS
	# The crash test's work is twenty times that of 500 members.
	local cal=$BATS_FILE_TMPDIR/calibrate t0 t1
	member_spool "$cal" 50 10 50
	t0=${EPOCHREALTIME/./}
	msg-aggregate --state "$cal.st" --separator , --once --output "dir:$cal.out" "dir:$cal"
	t1=${EPOCHREALTIME/./}
	kill_plan $(((t1 - t0) * 20 / 1000))
}

agg() {
	timeout -k 5 60 msg-aggregate "$@" >out.msg 2>err.txt
}

# spool_then_fault SETTING...: 20 groups of 10 in the spool in,
# aggregated with --state st and the faults SETTING...; $status and
# $stderr as run leaves them.
spool_then_fault() {
	member_spool in 20 10 5
	run --separate-stderr faulty "$@" -- timeout -k 5 60 msg-aggregate --state st \
		--separator , --once --output dir:out dir:in
	echo "status $status: $stderr"
}

# rerun_completes: without faults, the next run finishes the spool and
# every group is out, whole.
rerun_completes() {
	run -0 --separate-stderr timeout -k 5 60 msg-aggregate --state st --separator , \
		--once --output dir:out dir:in
	# Members the failed run had stored but not yet taken from the spool
	# come again: duplicates, or late when their group is out.
	echo "$stderr"
	local line
	for line in "${stderr_lines[@]}"; do
		[[ $line == "msg-aggregate: warning: message "* ]]
	done
	[ "$(find in/new in/cur -type f | wc -l)" = 0 ]
	run -0 check_groups out 20 10
	echo "$output"
}

# commit_fails STATUS DIAGNOSTIC SETTING...: 20 groups of 10 in the
# spool in, aggregated with --state st and the results on stdout, the
# first store commit failed by the faults SETTING...: it exits STATUS
# with the one line DIAGNOSTIC, nothing came out (the results of the
# batch wait for its commit), and every member is still in the spool
# (its files wait for the commit too); then the rerun completes, every
# group out once.
commit_fails() {
	local want_status=$1 want_stderr=$2
	shift 2
	member_spool in 20 10 5
	run --separate-stderr faulty "$@" -- timeout -k 5 60 msg-aggregate --state st \
		--separator , --once dir:in
	echo "status $status: $stderr"
	[ "$status" = "$want_status" ]
	[ "$stderr" = "$want_stderr" ]
	[ -z "$output" ]
	[ "$(find in/new in/cur -type f | wc -l)" = 200 ]
	[ ! -e in/bad ] || [ "$(find in/bad -type f | wc -l)" = 0 ]
	[ "$(wc -l <faults.log)" = 1 ]
	rerun_completes
	[ "${lines[-1]}" = 'extra copies: 0' ]
}

# ---- across runs ----

@test "state: groups are kept across runs, one file a run, and released when complete" {
	{
		seq_member a1 A 1 a
		seq_member b1 B 1 x
	} >run1.msg
	{
		last_member a2 A 2 b
		seq_member b2 B 2 y
	} >run2.msg
	{
		seq_member a3 A 3 c
		last_member b3 B 3 z
	} >run3.msg
	run -0 agg --state st --stats run1.msg
	[ ! -s out.msg ]
	stats_line in=2 members=2 open=2 >expect
	expect_same expect err.txt
	[ "$(stat -c %a st)" = 700 ]

	run -0 agg --state st --stats run2.msg
	result ab A 2 complete | results_are out.msg
	stats_line in=2 members=2 released=1 complete=1 open=1 >expect
	expect_same expect err.txt

	# a3 is late: A's key was remembered across the restart.
	run -0 agg --state st --at-end keep --late late.msg --stats run3.msg
	result xyz B 3 complete | results_are out.msg
	stats_line in=2 members=1 late=1 released=1 complete=1 open=0 >expect
	expect_same expect err.txt
	[ "$(grep -c '^Message-Id: a3$' late.msg)" = 1 ]
}

@test "state: a member of a released group read again in a later run is a duplicate; a new one is late" {
	{
		seq_member a1 A 1 a
		last_member a2 A 2 b
	} >run1.msg
	run -0 agg --state st run1.msg
	result ab A 2 complete | results_are out.msg
	# As after a crash: a member read again once its group was out.
	{
		seq_member a1 A 1 a
		seq_member a3 A 3 c
	} >run2.msg
	run -0 agg --state st --late late.msg --stats run2.msg
	[ ! -s out.msg ]
	stats_line in=2 duplicates=1 late=1 >expect
	expect_same expect err.txt
	[ "$(sed -n 's/^Message-Id: //p' late.msg)" = a3 ]
	# The ids stay with the key until --remember forgets it, in the
	# next run as well.
	run -0 agg --state st --late late2.msg --stats run1.msg
	stats_line in=2 duplicates=2 >expect
	expect_same expect err.txt
	[ ! -s late2.msg ]
}

# to_spool DIR NAME: the message on stdin into the dir: spool DIR as NAME,
# as a writer of the format puts it there.
to_spool() {
	mkdir -p "$1/tmp" "$1/new" "$1/cur"
	cat >"$1/tmp/$2"
	mv "$1/tmp/$2" "$1/new/$2"
}

@test "state: a group of mixed kinds without --invalid stops the run with 65 and loses no member" {
	frame '<a/>' 'Message-Id: m1' 'Correlation-Id: M' 'Content-Type: application/xml' >run1.msg
	member m2 M plain | to_spool in 1.msg
	run -0 agg --state st -n 2 run1.msg
	[ ! -s out.msg ]
	# m2 completes M, which cannot be one message: the run stops
	# naming the group, m2 stays in its spool, m1 in the state.
	run -65 agg --state st -n 2 --once dir:in
	[ ! -s out.msg ]
	[ "$(grep -c . err.txt)" = 1 ]
	# The results wait for the end of the batch, where no message is
	# in hand: the line names no place in the input, only the group.
	[ "$(cat err.txt)" = "msg-aggregate: group 'M' of 2 members cannot be one message: mixed bodies in one group: XML (message m1) and text (message m2)" ]
	[ "$(find in/new in/cur -type f | wc -l)" = 1 ]
	[ ! -e in/bad ] || [ "$(find in/bad -type f | wc -l)" = 0 ]
	# So does the next run, before it reads anything.
	run -65 agg --state st -n 2 --once dir:in
	[ ! -s out.msg ]
	[ "$(find in/new in/cur -type f | wc -l)" = 1 ]
	# With --invalid the group goes there whole, and the spool empties.
	run -0 agg --state st -n 2 --once --invalid inv.msg --late late.msg dir:in
	[ ! -s out.msg ]
	[ "$(count_frames inv.msg)" = 1 ]
	[ "$(msg-unwrap inv.msg)" = '<a/>plain' ]
	[ "$(grep -c '^Correlation-Id: M$' inv.msg)" = 1 ]
	[ "$(find in/new in/cur -type f | wc -l)" = 0 ]
	run -0 agg --state st --at-end flush </dev/null
	[ ! -s out.msg ]
}

@test "state: --at-end flush ends the groups kept by earlier runs" {
	seq_member a1 A 1 a >run1.msg
	seq_member b1 B 1 x >run2.msg
	run -0 agg --state st run1.msg
	[ ! -s out.msg ]
	run -0 agg --state st --at-end flush --stats run2.msg
	expect_same <(summary out.msg | sort) <(printf '%s\n' 'A end 1 2-' 'B end 1 2-')
	stats_line in=1 members=1 released=2 end=2 partial=2 >expect
	expect_same expect err.txt
	# Nothing is left for the next run.
	run -0 agg --state st --stats </dev/null
	[ ! -s out.msg ]
	stats_line >expect
	expect_same expect err.txt
}

@test "state: --at-end fail exits 65 and keeps the open groups; a later --at-end flush releases them" {
	{
		seq_member a1 A 1 a
		last_member a2 A 2 b
		seq_member b1 B 1 x
		seq_member c2 C 2 z
	} >in.msg
	run -65 agg --state st --at-end fail --stats in.msg
	result ab A 2 complete | results_are out.msg
	# The counters come first: open 2 is what the line after says.
	{
		stats_line in=4 members=4 released=1 complete=1 open=2
		echo 'msg-aggregate: 2 groups still open at the end of input'
	} >expect
	expect_same expect err.txt
	# B and C are in the state, neither released nor dropped: a run on
	# no input finds them still open, and A, released, is gone.
	run -65 agg --state st --at-end fail </dev/null
	[ ! -s out.msg ]
	[ "$(cat err.txt)" = 'msg-aggregate: 2 groups still open at the end of input' ]
	run -0 agg --state st --at-end flush --partial part.msg --stats </dev/null
	[ ! -s out.msg ]
	# The order of the groups released at the end is not fixed.
	expect_same <(summary part.msg | sort) <(printf '%s\n' 'B end 1 2-' 'C end 1 1,3-')
	expect_same <(stable part.msg | sort) <({
		result x B 1 end 2-
		result z C 1 end 1,3-
	} | sort)
	stats_line released=2 end=2 partial=2 >expect
	expect_same expect err.txt
	# Nothing is left for the next run.
	run -0 agg --state st --at-end fail </dev/null
	[ ! -s out.msg ]
	[ ! -s err.txt ]
}

@test "state: a timer keeps its deadline across a restart" {
	local t0 ms
	member a1 A a >run1.msg
	member b1 B b >run2.msg
	t0=${EPOCHREALTIME/./}
	run -0 agg --state st -T 3s run1.msg
	[ ! -s out.msg ]
	# Within the deadline (when the machine was quick enough to tell):
	# still open.
	run -0 agg --state st -T 3s </dev/null
	ms=$(((${EPOCHREALTIME/./} - t0) / 1000))
	if [ "$ms" -lt 2500 ]; then
		[ ! -s out.msg ]
	fi
	if [ "$ms" -lt 4000 ]; then
		sleep "$(((4000 - ms) / 1000)).$(printf %03d $(((4000 - ms) % 1000)))"
	fi
	# Past it: the next run releases A at once, for its timeout, and B
	# stays for its own.
	run -0 agg --state st -T 3s --stats run2.msg
	result a A 1 timeout | results_are out.msg
	stats_line in=1 members=1 released=1 timeout=1 open=1 >expect
	expect_same expect err.txt
}

@test "state: --on-limit fail leaves the spool for a later run with higher limits" {
	member_spool in 30 4 30
	run -75 agg --state st --max-groups 5 --on-limit fail --separator , \
		--once --output dir:out dir:in
	[ "$(grep -c . err.txt)" = 1 ]
	grep -q '^msg-aggregate: .*max-groups' err.txt
	[ "$(find in/new in/cur -type f | wc -l)" -gt 0 ]
	[ "$(find in/bad -type f 2>/dev/null | wc -l)" = 0 ]
	run -0 agg --state st --max-groups 50 --separator , --once --output dir:out dir:in
	[ ! -s err.txt ]
	[ "$(find in/new in/cur -type f | wc -l)" = 0 ]
	run -0 check_groups out 30 4
	echo "$output"
	[ "${lines[-1]}" = 'extra copies: 0' ]
}

@test "state: a restart takes back every stored group whatever the limits; the next member makes room" {
	{
		seq_member a1 A 1 a
		seq_member b1 B 1 b
		seq_member c1 C 1 c
	} >run1.msg
	seq_member d1 D 1 d >run2.msg
	run -0 agg --state st run1.msg
	[ ! -s out.msg ]
	# One group allowed now: the three stored come back, and D's first
	# member releases them, oldest first, to fit.
	run -0 agg --state st --max-groups 1 --stats run2.msg
	{
		result a A 1 limit 2-
		result b B 1 limit 2-
		result c C 1 limit 2-
	} | results_are out.msg
	stats_line in=1 members=1 released=3 limit=3 partial=3 open=1 >expect
	expect_same expect err.txt
}

@test "state: a second instance on the same state directory exits 75" {
	member_spool in 2 2 2
	run -0 agg --state st </dev/null
	run -75 --separate-stderr flock st/lock msg-aggregate --state st --once \
		--output dir:out dir:in
	[ "$stderr" = "msg-aggregate: cannot lock 'st/lock': state directory busy" ]
	[ -z "$output" ]
	# Nothing was taken.
	[ "$(find in/new -type f | wc -l)" = 4 ]
	[ ! -e out ] || [ "$(find out -type f | wc -l)" = 0 ]
}

# ---- commits ----

# steps CMD...: CMD with the fault shim logging its syncs and unlinks
# and making none of them fail (FAULT_ERRNO=none); then, in the order
# they came, one word for each that tells the batch's story, runs of
# the same word counted (uniq -c, its spaces squeezed): commit, an fsync
# of the store's log (log_commit: one a commit); result, a result's
# file fsynced in out/tmp; publish, out/new fsynced, where the results
# appear; taken, a member's file deleted from in/cur. The store's own
# start (its tmp.* files, its directory) is left out.
steps() {
	faulty FAULT_FUNCS=fsync,fdatasync,dirsync,unlink,unlinkat FAULT_ERRNO=none \
		FAULT_COUNT=0 FAULT_LOG="$PWD/steps.log" -- "$@" || return
	awk '
		$1 == "fsync" && $2 ~ /\/st\/log\.[0-9a-f]+$/ { print "commit" }
		$1 == "fsync" && $2 ~ /\/out\/tmp\// { print "result" }
		$1 == "dirsync" && $2 ~ /\/out\/new$/ { print "publish" }
		$1 == "unlinkat" && $2 ~ /\/in\/cur\// { print "taken" }
	' steps.log | uniq -c | sed 's/^ *//' >steps.txt
}

@test "state: a dir: batch is committed once, before its results are out and its files deleted" {
	# 200 members in 20 groups of 10, 5 groups open at a time: a group
	# completes every 10 x 5 = 50 members.
	member_spool in 20 10 5
	run -0 steps timeout -k 5 60 msg-aggregate --state st --separator , --once --output dir:out dir:in
	# A dir: batch is at most 64 messages (SPOOL_CLAIMS_MAX), so the 200
	# make four, 64 + 64 + 64 + 8, each with the 5 groups it completed:
	# one commit a batch, then its results, then its files deleted; a
	# last commit at the end deletes the last groups' records, which
	# waited for their results to be out. Five commits for 200 members.
	for batch in 64 64 64 8; do
		printf '%s\n' '1 commit' '5 result' '1 publish' "$batch taken"
	done >expect
	echo '1 commit' >>expect
	expect_same expect steps.txt
	[ "$(find in/new in/cur -type f | wc -l)" = 0 ]
	run -0 check_groups out 20 10
	[ "${lines[-1]}" = 'extra copies: 0' ]
}

@test "state: a batch that holds more than 256 results commits once for each 256, then at its end" {
	# A file is one batch: it never makes the reader wait. 300 groups of
	# 2, all open at once, each complete at its second member: 300
	# results in the batch. They are held in memory until a commit, so
	# at 256 held the run commits and writes them out before it goes
	# on (cmd/msg-aggregate.c): a batch whose messages release R results
	# one at a time commits R / 256 times more (rounded down) than the
	# one a batch, and the last commit deletes the last groups' records.
	# Here 1 + 1 + 1.
	member_spool src 300 2 300
	spooled_frames src >in.msg
	run -0 steps timeout -k 5 60 msg-aggregate --state st --separator , --output dir:out in.msg
	printf '%s\n' '1 commit' '256 result' '1 publish' '1 commit' '44 result' '1 publish' \
		'1 commit' >expect
	expect_same expect steps.txt
	run -0 check_groups out 300 2
	[ "${lines[-1]}" = 'extra copies: 0' ]
}

@test "faults: the first commit's fsync fails (ENOSPC): exit 75, nothing out, every member in the spool" {
	commit_fails 75 "msg-aggregate: cannot keep the state: cannot sync 'st/log.0000000000000001': No space left on device" \
		FAULT_FUNCS=fsync FAULT_PATH='*/st/log.*' FAULT_ERRNO=ENOSPC
}

@test "faults: the first commit's write fails (EIO): exit 74, nothing out, every member in the spool" {
	commit_fails 74 "msg-aggregate: cannot keep the state: cannot write 'st/log.0000000000000001': Input/output error" \
		FAULT_FUNCS=write FAULT_PATH='*/st/log.*' FAULT_ERRNO=EIO
}

# ---- a failing disk under the store ----

@test "faults: EIO writing the store: exit 74, then a rerun completes" {
	spool_then_fault FAULT_FUNCS=write FAULT_PATH='*/st/log.*' FAULT_AT=3
	[ "$status" = 74 ]
	[[ $stderr == "msg-aggregate: "*"cannot write 'st/log.0000000000000001': Input/output error" ]]
	[ "${#stderr_lines[@]}" = 1 ]
	[ "$(wc -l <faults.log)" = 1 ]
	[ "$(find in/new in/cur -type f | wc -l)" -gt 0 ]
	rerun_completes
}

@test "faults: a disk that stays full: exit 75, then a rerun completes" {
	spool_then_fault FAULT_FUNCS=write FAULT_PATH='*/st/log.*' FAULT_AT=3 \
		FAULT_COUNT=0 FAULT_ERRNO=ENOSPC
	[ "$status" = 75 ]
	[[ $stderr == "msg-aggregate: "*"cannot write 'st/log.0000000000000001': No space left on device" ]]
	[ "${#stderr_lines[@]}" = 1 ]
	[ "$(find in/new in/cur -type f | wc -l)" -gt 0 ]
	rerun_completes
}

@test "faults: a write that fills the disk halfway: exit 75, the torn tail is dropped" {
	spool_then_fault FAULT_FUNCS=write FAULT_PATH='*/st/log.*' FAULT_AT=3 \
		FAULT_ERRNO=ENOSPC FAULT_PARTIAL=1
	[ "$status" = 75 ]
	[[ $stderr == "msg-aggregate: "*"cannot write 'st/log.0000000000000001': No space left on device" ]]
	[ "${#stderr_lines[@]}" = 1 ]
	rerun_completes
}

@test "faults: fsync EIO on the store: exit 74, then a rerun completes" {
	spool_then_fault FAULT_FUNCS=fsync FAULT_PATH='*/st/log.*' FAULT_AT=2
	[ "$status" = 74 ]
	[[ $stderr == "msg-aggregate: "*"cannot sync 'st/log.0000000000000001': Input/output error" ]]
	[ "${#stderr_lines[@]}" = 1 ]
	rerun_completes
}

@test "faults: fsync ENOSPC on the store: exit 75, then a rerun completes" {
	spool_then_fault FAULT_FUNCS=fsync FAULT_PATH='*/st/log.*' FAULT_AT=2 FAULT_ERRNO=ENOSPC
	[ "$status" = 75 ]
	[[ $stderr == "msg-aggregate: "*"cannot sync 'st/log.0000000000000001': No space left on device" ]]
	[ "${#stderr_lines[@]}" = 1 ]
	rerun_completes
}

@test "faults: below the store's free-space margin: exit 75, nothing taken" {
	member_spool in 2 2 2
	MSG_STORE_MIN_FREE=1000000T run -75 --separate-stderr timeout -k 5 60 \
		msg-aggregate --state st --once --output dir:out dir:in
	[[ $stderr == "msg-aggregate: "*"cannot store in 'st': less than "*" bytes would be left free: No space left on device" ]]
	[ "${#stderr_lines[@]}" = 1 ]
	[ "$(find in/new in/cur -type f | wc -l)" = 4 ]
	[ ! -e out ] || [ "$(find out -type f | wc -l)" = 0 ]
}

# ---- SIGKILL at random points ----

# emitted_so_far OUT MEMBERS MAX_EXTRA: the results published in the
# spool OUT (its new/) since the last call, each checked as check_groups
# checks one: of a group of member_spool, complete, with its MEMBERS
# members in order. The names and groups seen so far are kept in
# emitted.tsv, so that each call reads only what is new; the copies of
# a group beyond its first are counted over all of them, and must be at
# most MAX_EXTRA. Prints the counts; fails, saying why, when a result is
# wrong or the copies are too many. One perl, not a pipeline: it runs
# after every kill of the crash test.
emitted_so_far() {
	perl -e '
		my ($out, $members, $max) = @ARGV;
		my (%seen, %copies, $bad);
		if (open my $f, "<", "emitted.tsv") {
			while (<$f>) {
				chomp;
				my ($name, $key) = split /\t/;
				$seen{$name} = 1;
				$copies{$key}++;
			}
		}
		open my $log, ">>", "emitted.tsv" or die "emitted.tsv: $!\n";
		# A run killed before it opened its output made none.
		my @names;
		if (opendir my $d, "$out/new") {
			@names = readdir $d;
		} elsif (!$!{ENOENT}) {
			die "$out/new: $!\n";
		}
		for my $name (sort grep { !/^\./ && !$seen{$_} } @names) {
			open my $in, "<", "$out/new/$name" or die "$name: $!\n";
			binmode $in;
			my $text = do { local $/; <$in> };
			my ($head, $rest) = split /\n\n/, $text, 2;
			my %h = map { /^([^:]+): (.*)$/ ? (lc $1, $2) : () } split /\n/, $head;
			my ($key, $len) = ($h{"correlation-id"} // "-", $h{"content-length"} // 0);
			my $want = join ",", map { sprintf "%s-%02d", $key, $_ } 1 .. $members;
			$rest //= "";
			if ($key !~ /^g\d{4}$/ || ($h{"aggregate-size"} // "") ne $members ||
			    ($h{"aggregate-reason"} // "") ne "complete" ||
			    $rest ne "$want\n" || $len != length $want) {
				print "bad result $name: $text";
				$bad = 1;
			}
			print $log "$name\t$key\n";
			$copies{$key}++;
		}
		my $extra = 0;
		$extra += $_ - 1 for values %copies;
		printf "%d groups out, extra copies: %d\n", scalar keys %copies, $extra;
		if ($extra > $max) {
			print "more than $max extra copies\n";
			$bad = 1;
		}
		exit($bad ? 1 : 0);
	' "$@"
}

# kill_checking SPOOL OUT SEED CMD...: CMD, a tool that reads the dir:
# spool SPOOL and never stops by itself, killed at random points of the
# windows of kill_until_drained (crash/startup; repeatably from SEED)
# and started again until the spool is empty, MIN_KILLS to ROUNDS
# times; but one kill at a time, as tests/92 does, so that after each
# the results so far in the spool OUT, of member_spool's groups of 10,
# are checked by emitted_so_far: a copy only of what was in flight, at
# most a batch (64 members, so 64 groups) a kill. Sets kills to how
# many there were.
kill_checking() {
	local spool=$1 out=$2 pid
	RANDOM=$3
	shift 3
	kills=0
	echo "kill windows: $((STARTUP_MS + 10)) to $((STARTUP_MS + WINDOW_MS)) ms"
	while [ "$kills" -lt "$MIN_KILLS" ] ||
		{ [ "$kills" -lt "$ROUNDS" ] && ! empty_spool "$spool"; }; do
		spawn "$@" 2>run.err
		pid=$spawned
		sleep_ms $((STARTUP_MS + 10 + RANDOM * (WINDOW_MS - 9) / 32768))
		kill_run "$pid" run.err $((kills + 1))
		kills=$((kills + 1))
		echo -n "after $kills kills: "
		emitted_so_far "$out" 10 $((kills * 64)) 2>&1
	done 2>/dev/null
}

@test "crash: SIGKILL at random points, restarted until done: every group out, whole" {
	local kills
	# 10,000 members in 1,000 groups of 10, 50 groups open at a time.
	member_spool in 1000 10 50
	kill_checking in out 13 msg-aggregate --state st --separator , \
		--output dir:out dir:in
	# The last run drains the spool and stops.
	run -0 --separate-stderr timeout -k 5 120 msg-aggregate --state st --separator , \
		--once --stats --output dir:out dir:in
	# Members read again after a kill, whose group was released, are
	# duplicates, not late: released groups keep their members' ids.
	echo "$stderr"
	[[ ${stderr_lines[-1]} == "msg-aggregate: stats: "*", late 0, "*", open 0" ]]
	[[ $stderr != *late:* ]]
	[ "$(find in/new in/cur -type f | wc -l)" = 0 ]
	[ "$(find in/bad -type f 2>/dev/null | wc -l)" = 0 ]
	# A killed writer may leave files in out/tmp, a batch's at most,
	# never a partial one in new/ (check_groups reads them all).
	echo "left in out/tmp: $(find out/tmp -type f | wc -l)"
	[ "$(find out/tmp -type f | wc -l)" -le $((kills * 64)) ]
	run check_groups out 1000 10
	echo "$output"
	[ "$status" -eq 0 ]
	# A copy only of what was in flight: a batch is at most 64 members,
	# so at most 64 groups a kill.
	[[ ${lines[-1]} =~ ^extra\ copies:\ ([0-9]+)$ ]]
	echo "duplicates of in-flight results: ${BASH_REMATCH[1]} after $kills kills"
	[ "${BASH_REMATCH[1]}" -le $((kills * 64)) ]
}
