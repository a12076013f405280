#!/usr/bin/env bats
# The store under SIGKILL at random points: tests/crash/run.sh kills
# tests/crash/store-writer again and again while it commits batches;
# afterwards every acknowledged message must be in the store exactly once
# and whole, every batch all there or not at all, and the store must open
# with nothing left to repair.

load test_helper
bats_require_minimum_version 1.5.0
load crash/build

setup_file() {
	local w=$BATS_FILE_TMPDIR/store-writer t0 t1 us
	cc_program "$w" "$MSG_TOP/tests/crash/store-writer.c"
	# The kill windows start from the writer's start-up time, which is
	# milliseconds as built and a third of a second under AddressSanitizer:
	# the best of three opens of a small store (bash's clock: no fork).
	"$w" -q -n 100 "$BATS_FILE_TMPDIR/probe"
	for _ in 1 2 3; do
		t0=${EPOCHREALTIME/./}
		"$w" -q -n 100 "$BATS_FILE_TMPDIR/probe"
		t1=${EPOCHREALTIME/./}
		if [ -z "${us:-}" ] || [ $((t1 - t0)) -lt "$us" ]; then
			us=$((t1 - t0))
		fi
	done
	export STARTUP_MS=$((us / 1000 + 1))
	# 200 rounds as built. Under the sanitizers each start costs that
	# third of a second more, so the same paths are run for memory errors
	# with a quarter of the rounds; the crash guarantees are the plain
	# build's 200.
	case $MSG_BIN in
	*san*) export ROUNDS=50 COMPACT_ROUNDS=20 ;;
	*) export ROUNDS=200 COMPACT_ROUNDS=60 ;;
	esac
}

setup() {
	cd "$BATS_TEST_TMPDIR" || return 1
	W=$BATS_FILE_TMPDIR/store-writer
	CRASH=$MSG_TOP/tests/crash/run.sh
}

@test "crash: kills at random points (200 as built) lose no acknowledged message" {
	# Batches of up to 1000 messages, most larger than the write buffer
	# (so a kill can leave part of a batch in the log), a little work
	# between puts, and a compaction every 8 batches.
	# Some kills land while the writer starts and recovers.
	CRASH_SEED=42 CRASH_MIN_MS=$((STARTUP_MS * 2 / 3 + 5)) \
		CRASH_MAX_MS=$((STARTUP_MS + 100)) \
		run bash "$CRASH" "$ROUNDS" acks "$W" -b 1000 -r 7 -d 20 -c 8 -l recovered st
	echo "$output"
	[ "$status" -eq 0 ]
	[[ $output == "$ROUNDS rounds, $ROUNDS killed, "*" acknowledged" ]]
	[ -s acks ]
	run "$W" --check acks st
	echo "$output"
	[ "$status" -eq 0 ]
	[[ $output == "ok: "* ]]
	# Some kills fell between a flush and its commit: the restart dropped
	# that part of a batch, and the check above found no trace of it.
	grep -q '^discarded [1-9]' recovered
	[ "$(stat -c %a st)" = 700 ]
	[ "$(stat -c %a st/log.* st/lock st/version | sort -u)" = 600 ]
}

@test "crash: kills during compaction leave one whole log" {
	# A store large enough that each compaction takes a while, and
	# rounds long enough to reach one after the start and a commit.
	"$W" -q -n 10000 -b 1000 st
	CRASH_SEED=7 CRASH_MIN_MS=$((STARTUP_MS + 20)) \
		CRASH_MAX_MS=$((STARTUP_MS + 250)) \
		run bash "$CRASH" "$COMPACT_ROUNDS" acks "$W" -b 50 -r 3 -c 1 -l recovered st
	echo "$output"
	[ "$status" -eq 0 ]
	run "$W" --check acks st
	echo "$output"
	[ "$status" -eq 0 ]
	# Kills hit compactions: a temporary log or an old one was left over.
	grep -q 'removed [1-9]' recovered
	[ "$(ls st | grep -c '^log\.')" -eq 1 ]
	[ "$(ls st | grep -c '^tmp\.')" -eq 0 ]
}

@test "crash: the check finds a lost acknowledgement and a lost batch" {
	"$W" -b 10 -n 100 st >acks
	run "$W" --check acks st
	[ "$status" -eq 0 ]
	[ "$output" = "ok: 100 messages in 10 batches, 100 acknowledged" ]

	cp acks acks2
	echo m0000000999 >>acks2
	run -1 --separate-stderr "$W" --check acks2 st
	[ "$stderr" = "store-writer: acknowledged message 'm0000000999' is missing" ]

	# Cutting into the last commit loses that batch: its ten messages were
	# acknowledged, so the check must say so.
	truncate -s -10 st/log.0000000000000001
	run -1 --separate-stderr "$W" --check acks st
	[ "$(grep -c 'is missing' <<<"$stderr")" -eq 10 ]
	[[ $stderr == *"acknowledged message 'm0000000090' is missing"* ]]
}

@test "crash: the harness fails a writer that stops by itself" {
	CRASH_MIN_MS=$((STARTUP_MS * 3 + 200)) \
		run -1 --separate-stderr bash "$CRASH" 3 acks "$W" --no-such-option st
	[[ $stderr == "run.sh: round 1: the writer exited with status 64"* ]]
	[[ $stderr == *"usage: store-writer"* ]]
}
