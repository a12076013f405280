#!/usr/bin/env bats
# The test harness itself: tests/run.sh counts what really happened
# (a unit binary that crashes after printing "ok" fails, a skipped test
# is not a pass, a hung suite fails within its limit, a process left
# running fails its suite and is killed), and every test's teardown
# kills the processes it started, however deep.

load test_helper
bats_require_minimum_version 1.5.0

HARNESS="$BATS_TEST_DIRNAME/fixtures/harness"

# runner SUITES...: tests/run.sh over a build directory with the fake
# unit binaries of ./bin/tests and the given bats files; its output in
# $output, its counts line in $counts. The inner bats gets none of this
# bats's variables, which would steer it, nor its libexec directory on
# PATH, where "bats" is not the command; its test limit is $TEST_LIMIT
# (default 600 s).
runner() {
	local v clean=() path
	path=$(tr : '\n' <<<"$PATH" | grep -v bats-core | paste -sd :)
	for v in $(compgen -e); do
		case $v in
		BATS_*) clean+=(-u "$v") ;;
		esac
	done
	mkdir -p bin/tests
	: >counts
	run --separate-stderr env "${clean[@]}" PATH="$path" MSG_SUITES="$*" \
		BATS_TEST_TIMEOUT="${TEST_LIMIT:-600}" \
		sh "$MSG_TOP/tests/run.sh" "$PWD/bin" label counts
	counts=$(cat counts)
}

# unit NAME EXIT LINES...: a fake unit binary printing LINES, exiting EXIT.
unit() {
	local name=$1 rc=$2
	shift 2
	{
		echo '#!/bin/sh'
		printf 'echo "%s"\n' "$@"
		echo "exit $rc"
	} >"bin/tests/$name"
	chmod +x "bin/tests/$name"
}

@test "harness: a unit binary that exits non-zero fails, whatever it printed" {
	mkdir -p bin/tests
	unit test-good 0 'ok 1 - fine' '1..1'
	unit test-crash 134 'ok 1 - fine' 'ok 2 - fine' '1..2'
	runner
	[ "$counts" = "label 3 1 0" ]
	grep -qx 'test-crash: not ok - test-crash exited with status 134' <<<"$output"
	[ "${lines[-1]}" = "label: 3 passed, 1 failed, 0 skipped" ]
}

@test "harness: a unit binary that stops before its plan fails" {
	mkdir -p bin/tests
	unit test-short 0 'ok 1 - fine'
	runner
	[ "$counts" = "label 1 1 0" ]
	grep -qx 'test-short: not ok - test-short reported no plan (it did not finish)' <<<"$output"
}

@test "harness: a skipped test is counted as skipped, not passed" {
	runner "$HARNESS/skips.bats"
	[ "$counts" = "label 1 0 1" ]
	[ "${lines[-1]}" = "label: 1 passed, 0 failed, 1 skipped" ]
}

@test "harness: a suite that leaves a process running fails, and the process is killed" {
	local pid
	HARNESS_PIDFILE=$PWD/pid runner "$HARNESS/leaves.bats"
	[ "$counts" = "label 1 1 0" ]
	grep -qx 'leaves.bats: not ok - leaves.bats left processes running when it ended' <<<"$output"
	pid=$(cat pid)
	[ -n "$pid" ]
	wait_until 10 eval "! kill -0 $pid 2>/dev/null"
}

@test "harness: the teardown that reaps a test's processes spares bats's own time limit" {
	TEST_LIMIT=600 runner "$HARNESS/reaps.bats"
	[ "$counts" = "label 3 0 0" ]
}

@test "harness: a hung test fails within its limit and the run goes on" {
	local start=$SECONDS
	# Named for this run alone: another run of the suite on the machine
	# hangs its own.
	export HANG_TAG="harness-hangs-$$-$RANDOM"
	TEST_LIMIT=2 MSG_SUITE_LIMIT=6 runner "$HARNESS/hangs.bats" "$HARNESS/skips.bats"
	# 2 s for the test, then at most 6 + 10 s for the suite.
	[ $((SECONDS - start)) -lt 40 ]
	[ "${counts% *}" = "label 2 1" ] || [ "${counts% *}" = "label 2 2" ]
	[ "${counts##* }" = 1 ]
	grep -q '^hangs.bats: not ok' <<<"$output"
	[ -z "$(pgrep -f -x "perl -e .* $HANG_TAG")" ]
}

# session: the session this suite runs in (tests/contain.sh gives each
# suite its own).
session() {
	ps -o sid= -p $$ | tr -d ' '
}

# running PID: PID is a process that has not ended.
running() {
	ps -o stat= -p "$1" | grep -q -v '^Z'
}

# The next two tests go together: the first starts processes three ways
# and leaves them; the second finds them gone.
@test "harness: a test starts processes and leaves them (teardown reaps)" {
	sleep 1001 &
	echo $! >"$BATS_FILE_TMPDIR/direct"
	# timeout(1) puts itself and its child in a process group of their own.
	timeout -k 5 1000 sleep 1002 &
	# A grandchild whose parent is still there.
	sh -c 'sleep 1003 & echo $! >"$1"; wait' sh "$BATS_FILE_TMPDIR/grand" &
	wait_until 10 test -s "$BATS_FILE_TMPDIR/grand"
	# Of this suite's session only: other runs may sleep as long.
	pgrep -s "$(session)" -f '^sleep 100[1-3]$' >"$BATS_FILE_TMPDIR/all"
	[ "$(wc -l <"$BATS_FILE_TMPDIR/all")" = 3 ]
}

@test "harness: ... and they are gone when the next test starts" {
	local p
	# Gone, or a zombie that only its (new) parent has to reap.
	while read -r p; do
		run -1 running "$p"
	done <"$BATS_FILE_TMPDIR/all"
	[ -z "$(pgrep -s "$(session)" -f '^sleep 100[1-3]$')" ]
}
