#!/usr/bin/env bats
# msg-aggregate with --state: groups kept across runs (one file per run,
# as from cron), timers that keep their deadlines across a restart, late
# members told across runs; SIGKILL at random points while it aggregates
# a spool (tests/crash/run.sh): restarted until done, every group comes
# out, whole, nothing lost; a second instance is kept out; and a store
# whose disk fails (tests/faults) stops it cleanly for a rerun to finish.

load test_helper
bats_require_minimum_version 1.5.0
load fixtures/aggregate/aggregate
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
	grep -q "^msg-aggregate: group 'M' of 2 members cannot be one message: mixed bodies in one group: XML and text$" err.txt
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

@test "crash: SIGKILL at random points, restarted until done: every group out, whole" {
	local kills
	# 10,000 members in 1,000 groups of 10, 50 groups open at a time.
	member_spool in 1000 10 50
	kill_until_drained in 13 msg-aggregate --state st --separator , \
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
