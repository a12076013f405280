#!/usr/bin/env bats
# What msg-dedupe is for: a pipeline of dir: spools whose stages are
# killed delivers some messages twice; msg-dedupe --state behind it,
# itself killed with SIGKILL again and again, at random and the instant
# it commits its keys or publishes its output, and restarted until its
# input is empty, leaves every message in its output spool exactly
# once. Writing to a stream instead, it loses nothing and repeats only
# what was in flight at a kill. Across clean runs into a spool: copies
# of earlier runs' messages are duplicates, a key forgotten for
# --max-keys stays forgotten, and SIGTERM leaves everything published
# and stored. A store or a spool that fails under it stops it, and the
# next run finishes the work, each message once.

load test_helper
bats_require_minimum_version 1.5.0
load fixtures/dir/dir
load fixtures/aggregate/aggregate
load fixtures/dedupe/dedupe
load crash/build
load crash/startup

# window_ms CMD...: a quarter of the time CMD takes, in milliseconds,
# from 20 ms to 3 s.
window_ms() {
	local t0 ms
	t0=${EPOCHREALTIME/./}
	"$@"
	ms=$(((${EPOCHREALTIME/./} - t0) / 4000))
	[ "$ms" -ge 20 ] || ms=20
	[ "$ms" -le 3000 ] || ms=3000
	echo "$ms"
}

setup_file() {
	cc_preload "$BATS_FILE_TMPDIR/faultinject.so" "$MSG_TOP/tests/faults/faultinject.c"
	# The kill windows start from the time msg-dedupe takes to start on
	# an empty store: milliseconds as built, a third of a second more
	# under AddressSanitizer.
	STARTUP_MS=$(fastest_ms msg-dedupe --state "$BATS_FILE_TMPDIR/probe" --once </dev/null)
	export STARTUP_MS
	# They are scaled to the time the work of each crash test takes here
	# uninterrupted, a twentieth of it, so that the kills fall all along
	# it, whatever the machine's speed, its load or a sanitizer's cost:
	# 1,000 messages from spool to spool (five times 200), or 5,000 from
	# a spool to a stream (five times 1,000).
	local cal=$BATS_FILE_TMPDIR/calibrate
	with_copies "$cal" 200 10
	WINDOW_MS=$(window_ms msg-dedupe --state "$cal.st" --once --output "dir:$cal.out" "dir:$cal")
	with_copies "$cal.s" 1000 10
	STREAM_WINDOW_MS=$(window_ms msg-dedupe --state "$cal.s.st" --once --output "$cal.msg" \
		"dir:$cal.s")
	export WINDOW_MS STREAM_WINDOW_MS
	# At least 20 kills as built, and as many more as it takes to drain
	# the spool, up to 60; under the sanitizers half of them run the
	# same paths for memory errors, and the last run does what is left.
	case $MSG_BIN in
	*san*) export ROUNDS=30 MIN_KILLS=10 ;;
	*) export ROUNDS=60 MIN_KILLS=20 ;;
	esac
}

# dedupe_once ARG...: msg-dedupe --once --stats ARG..., to its end; its
# stderr in $stderr, which is shown.
dedupe_once() {
	run --separate-stderr timeout -k 5 120 msg-dedupe --once --stats "$@"
	echo "$stderr"
}

# changed_since MARK PATTERN: a file PATTERN matches was changed after
# the file MARK was.
changed_since() {
	local f
	# shellcheck disable=SC2086 # the pattern is for the shell to expand
	for f in $2; do
		[ "$f" -nt "$1" ] && return 0
	done
	return 1
}

# kill_repeatedly SPOOL WATCH CMD...: start CMD, a reader of the dir:
# spool SPOOL that waits for more, and kill it with SIGKILL; again and
# again, at least MIN_KILLS times, and on until SPOOL is empty or ROUNDS
# runs were killed. The rounds take turns: a kill after a random time
# from KILL_MIN_MS to KILL_MAX_MS, then one for each file pattern in
# WATCH (words, such as 'out/new st/log.*'): a kill the moment a file
# it matches changes, such as a spool's new/ when a batch is published
# or the store's log when a batch is committed, where a crash has the
# most to get wrong and a random time seldom falls. After each kill
# the Message-Ids of the messages it held in SPOOL/cur, those in
# flight, are added to the file inflight. Sets $kills; a run that ends
# by itself fails, its stderr shown.
kill_repeatedly() {
	local spool=$1 pid turn watch limit deadline=$((SECONDS + 300))
	local -a watches
	read -r -a watches <<<"$2"
	shift 2
	kills=0
	: >>inflight
	: >kills.log
	while [ "$kills" -lt "$MIN_KILLS" ] ||
		{ [ "$kills" -lt "$ROUNDS" ] && ! empty_spool "$spool"; }; do
		turn=$((kills % (${#watches[@]} + 1)))
		watch=
		# Nothing changes once the spool is empty: a random time then.
		if [ "$turn" -gt 0 ] && ! empty_spool "$spool"; then
			watch=${watches[turn - 1]}
		fi
		touch round.mark
		spawn "$@" 2>run.err
		pid=$spawned
		if [ -n "$watch" ]; then
			limit=$((SECONDS + 30))
			until changed_since round.mark "$watch" || gone "$pid" ||
				[ "$SECONDS" -ge "$limit" ]; do
				:
			done
		else
			sleep_ms $((KILL_MIN_MS + RANDOM * (KILL_MAX_MS - KILL_MIN_MS + 1) / 32768))
		fi
		kill_run "$pid" run.err $((kills + 1))
		kills=$((kills + 1))
		echo "${watch:-at random}" >>kills.log
		# The bodies never start a line with a header's name.
		find "$spool/cur" -type f -exec sed -n 's/^Message-Id: //p' {} + >>inflight
		if [ "$SECONDS" -ge "$deadline" ]; then
			echo "still not done after $kills kills"
			return 1
		fi
	done 2>/dev/null
	echo "$kills kills; left in $spool: $(find "$spool/new" "$spool/cur" -type f | wc -l)"
	echo "kills by kind:"
	sort kills.log | uniq -c
}

# rerun_once N: without faults, the next run drains the spool in and
# leaves each of its N messages in out exactly once.
rerun_once() {
	dedupe_once --state st --output dir:out dir:in
	[ "$status" = 0 ]
	[[ $stderr == "msg-dedupe: stats: "*", keys $1, forgotten 0" ]]
	empty_spool in
	run copies_of once "$1" out/new/*
	echo "$output"
	[ "$status" = 0 ]
}

# ---- without kills ----

@test "state: a spool read in two runs, the second holding copies of the first's: each message once in the output spool" {
	spool_fill in 1 20
	dedupe_once --state st --output dir:out dir:in
	[ "$status" = 0 ]
	[ "$stderr" = "$(dedupe_stats in=20 out=20 keys=20)" ]
	empty_spool in
	# Messages 11 to 20 come again, beside 21 to 30.
	spool_fill in 11 30
	dedupe_once --state st --output dir:out dir:in
	[ "$status" = 0 ]
	[ "$stderr" = "$(dedupe_stats in=20 out=10 duplicates=10 keys=30)" ]
	empty_spool in
	run -0 copies_of once 30 out/new/*
	[ "${lines[-1]}" = 'extra copies: 0' ]
	is 0 out/tmp
	is 30 out/new
}

@test "state: a key forgotten for --max-keys stays forgotten in the next run, into a spool as into a stream" {
	local to
	for to in dir:out stream.msg; do
		rm -rf st in
		spool_fill in 1 3
		dedupe_once --state st --max-keys 2 --output "$to" dir:in
		[ "$status" = 0 ]
		[ "$stderr" = "$(dedupe_stats in=3 out=3 keys=2 forgotten=1)" ]
		# Nothing comes: the two keys held are all there is.
		dedupe_once --state st --max-keys 2 --output "$to" dir:in
		[ "$status" = 0 ]
		[ "$stderr" = "$(dedupe_stats keys=2)" ]
		# With room for more, the first message is new again.
		spool_fill in 1 1
		dedupe_once --state st --max-keys 10 --output "$to" dir:in
		[ "$status" = 0 ]
		[ "$stderr" = "$(dedupe_stats in=1 out=1 keys=3)" ]
	done
	run -0 copies_of stream 3 out/new/*
	[ "${lines[0]}" = 'copies id-000001 2' ]
	run -0 copies_of stream 3 stream.msg
	[ "${lines[0]}" = 'copies id-000001 2' ]
}

@test "stop: SIGTERM on a waiting msg-dedupe --state: exit 0, every message published once, every key stored" {
	local pid
	spool_fill in 1 300
	spawn msg-dedupe --state st --stats --output dir:out dir:in 2>err.txt
	pid=$spawned
	wait_until 60 empty_spool in
	kill -TERM "$pid"
	status_of "$pid" 30
	[ "$status" = 0 ]
	[ "$(cat err.txt)" = "$(dedupe_stats in=300 out=300 keys=300)" ]
	# Nothing waits in tmp/ to be published.
	is 0 out/tmp
	run -0 copies_of once 300 out/new/*
	spool_fill in 1 300
	dedupe_once --state st --output dir:out dir:in
	[ "$status" = 0 ]
	[ "$stderr" = "$(dedupe_stats in=300 duplicates=300 keys=300)" ]
	is 300 out/new
}

@test "faults: the output spool cannot publish after the keys are stored: exit 74, and the next run publishes each message once" {
	with_copies in 100 10
	run --separate-stderr faulty FAULT_FUNCS=rename,renameat,renameat2,linkat \
		FAULT_PATH='*/out/tmp/*' FAULT_AT=3 -- \
		timeout -k 5 60 msg-dedupe --state st --once --output dir:out dir:in
	echo "status $status: $stderr"
	[ "$status" = 74 ]
	[ "${#stderr_lines[@]}" = 1 ]
	# Named: the spool it could not publish to, and why.
	[[ $stderr == "msg-dedupe: "*"'"*out*"': Input/output error" ]]
	[ "$(wc -l <faults.log)" = 1 ]
	# Nothing was taken from the input before its outputs were out.
	[ "$(find in/new in/cur -type f | wc -l)" -gt 0 ]
	rerun_once 100
}

@test "faults: EIO writing the store: exit 74, and the next run leaves each message once" {
	with_copies in 100 10
	# The second batch's commit fails.
	run --separate-stderr faulty FAULT_FUNCS=write FAULT_PATH='*/st/log.*' FAULT_AT=2 -- \
		timeout -k 5 60 msg-dedupe --state st --once --output dir:out dir:in
	echo "status $status: $stderr"
	[ "$status" = 74 ]
	[ "${#stderr_lines[@]}" = 1 ]
	[[ $stderr == "msg-dedupe: "*"cannot write 'st/log.0000000000000001': Input/output error" ]]
	[ "$(find in/new in/cur -type f | wc -l)" -gt 0 ]
	rerun_once 100
}

@test "faults: a disk that stays full under the store: exit 75, and the next run leaves each message once" {
	with_copies in 100 10
	run --separate-stderr faulty FAULT_FUNCS=fsync FAULT_PATH='*/st/log.*' FAULT_AT=2 \
		FAULT_COUNT=0 FAULT_ERRNO=ENOSPC -- \
		timeout -k 5 60 msg-dedupe --state st --once --output dir:out dir:in
	echo "status $status: $stderr"
	[ "$status" = 75 ]
	[ "${#stderr_lines[@]}" = 1 ]
	[[ $stderr == "msg-dedupe: "*"cannot sync 'st/log.0000000000000001': No space left on device" ]]
	rerun_once 100
}

# ---- SIGKILL at random points ----

@test "crash: a spool pipeline killed again and again repeats messages; msg-dedupe --state behind it, killed as often, leaves each exactly once" {
	local n=1000 route_kills extra
	RANDOM=88
	echo "kill windows: $((STARTUP_MS * 2 / 3)) to $((STARTUP_MS + WINDOW_MS)) ms"
	# The first stage: msg-route from spool to spool, killed while it
	# moves batches. A batch whose outputs were out, but not yet taken
	# from its input, is delivered again by the next run.
	spool_fill src 1 "$n"
	# The first kill is aimed: after msg-route's first batch is renamed
	# into mid/new, before that directory's sync and so before the
	# batch's input is deleted. The rounds below aim only as near as a
	# watcher gets, so without this one the copies might never be made.
	run -137 faulty FAULT_FUNCS=dirsync FAULT_PATH="$PWD/mid/new" FAULT_ERRNO=kill -- \
		timeout -k 5 60 msg-route -f 'true()' --output dir:mid dir:src
	[ "$(cat faults.log)" = "dirsync $PWD/mid/new killed" ]
	[ "$(nfiles mid/new)" -gt 0 ]
	KILL_MIN_MS=10 KILL_MAX_MS=$((WINDOW_MS + 10)) \
		kill_repeatedly src mid/new msg-route -f 'true()' --output dir:mid dir:src
	route_kills=$kills
	run -0 timeout -k 5 120 msg-route --once -f 'true()' --output dir:mid dir:src
	empty_spool src
	run copies_of stream "$n" mid/new/*
	[ "$status" = 0 ]
	extra=${lines[-2]#extra copies: }
	echo "msg-route: $route_kills kills, $extra extra copies in mid"
	[ "$extra" -gt 0 ]

	# The second stage, killed at random points, the start and the
	# recovery of the store among them.
	: >inflight
	KILL_MIN_MS=$((STARTUP_MS * 2 / 3)) KILL_MAX_MS=$((STARTUP_MS + WINDOW_MS)) \
		kill_repeatedly mid 'st/log.* out/new' msg-dedupe --state st --output dir:out dir:mid
	# The last run drains the spool and stops; every key is still held.
	dedupe_once --state st --output dir:out dir:mid
	[ "$status" = 0 ]
	[[ $stderr == "msg-dedupe: stats: "*", keys $n, forgotten 0" ]]
	empty_spool mid
	[ "$(find mid/bad -type f 2>/dev/null | wc -l)" = 0 ]
	# A killed writer may leave files in out/tmp, never a partial one in
	# out/new: every file there is one whole message, each once.
	echo "left in out/tmp: $(nfiles out/tmp)"
	run copies_of once "$n" out/new/*
	echo "$output"
	[ "$status" = 0 ]
	[ "${lines[-1]}" = 'extra copies: 0' ]
	is "$n" out/new
}

@test "crash: writing to a stream, msg-dedupe --state killed again and again loses nothing and repeats only what was in flight" {
	local n=5000 kills
	RANDOM=87
	echo "kill windows: $((STARTUP_MS * 2 / 3)) to $((STARTUP_MS + STREAM_WINDOW_MS)) ms"
	# Every tenth message comes twice, as from a pipeline that crashed.
	with_copies in "$n" 10
	# A file of its own for each run: a kill may cut the last message
	# of a stream short, and a reader of the stream sees that.
	mkdir streams
	: >inflight
	KILL_MIN_MS=$((STARTUP_MS * 2 / 3)) KILL_MAX_MS=$((STARTUP_MS + STREAM_WINDOW_MS)) \
		kill_repeatedly in 'st/log.*' \
		sh -c 'exec msg-dedupe --state st --output "streams/$$.msg" dir:in'
	dedupe_once --state st --output streams/last.msg dir:in
	[ "$status" = 0 ]
	[[ $stderr == "msg-dedupe: stats: "*", keys $n, forgotten 0" ]]
	empty_spool in
	# Cut short only where a run was killed: never in the last one.
	run -0 msg-unwrap -H streams/last.msg
	run copies_of stream "$n" streams/*.msg
	echo "$output" | tail -n 3
	[ "$status" = 0 ]
	echo "after $kills kills: ${lines[-2]}, ${lines[-1]}"
	# A message comes out again only if it was in flight at a kill: in
	# a batch that was written but whose keys were not yet stored, which
	# stays in in/cur.
	printf '%s\n' "${lines[@]}" | awk '
		FILENAME == ARGV[1] { inflight[$1]++; next }
		$1 == "copies" && $3 - 1 > inflight[$2] + 0 {
			print $2 ": " $3 " copies, in flight at " inflight[$2] + 0 " kills"
		}' inflight - >violations
	cat violations
	[ ! -s violations ]
}
