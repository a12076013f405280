#!/usr/bin/env bats
# msg-exec against children that misbehave and a world that kills it:
# replies in input order under -P whatever the children's durations (or
# as they finish with --unordered); --timeout ending a child's whole
# process group, grandchildren that hold the pipes included, without
# waiting for their end of file; retries counted and spaced out; children
# that do not read, close their output early, die of a signal or flood
# their stderr; only descriptors 0, 1 and 2 in a child and no zombie left
# behind; SIGTERM finishing what is in hand and writing whole frames;
# SIGKILL again and again between spools losing no request; and the loop
# it was made for, msg-trickle feeding a target that fails now and then,
# every version delivered in order.

load test_helper
bats_require_minimum_version 1.5.0
load fixtures/dir/dir
load crash/startup
load fixtures/exec-robust/exec-robust

setup() {
	exec_robust_setup
}

teardown() {
	reap_test_processes
	kill_sessions
}

# ---- order ----

@test "exec robust: -P 4 with children of random durations replies in input order" {
	local -a secs=()
	for ((i = 0; i < 200; i++)); do
		secs+=("0.0$((RANDOM % 10))")
	done
	requests 200 "${secs[@]}" >req.msg
	run -0 --separate-stderr exec_to out.msg -P 4 "$FX/sleepy" <req.msg
	[ -z "$stderr" ]
	[ "$(msg-unwrap out.msg)" = "$(seq 1 200)" ]
	[ "$(header_column Correlation-Id out.msg)" = "$(seq -f 'req-%g' 1 200)" ]
	[ "$(header_column Status out.msg | sort | uniq -c | tr -s ' ')" = " 200 success" ]
}

@test "exec robust: --unordered writes each reply as its child ends, every one of them" {
	# The first child takes two seconds, the nine others none: nine
	# replies are there before the first.
	requests 10 2 0 0 0 0 0 0 0 0 0 >req.msg
	run -0 --separate-stderr exec_to out.msg -P 4 --unordered "$FX/sleepy" <req.msg
	[ -z "$stderr" ]
	run -0 msg-unwrap out.msg
	echo "$output"
	[ "${lines[0]}" != 1 ]
	[ "$(sort -n <<<"$output")" = "$(seq 1 10)" ]
	[ "$(header_column Correlation-Id out.msg | sort -V)" = "$(seq -f 'req-%g' 1 10)" ]
}

# ---- timeouts ----

@test "exec robust: --timeout ends the child's whole process group, not waiting for the grandchild's end of file" {
	frame x "Message-Id: req-1" >req.msg
	local t0=$SECONDS
	run -0 --separate-stderr exec_to out.msg --timeout 1s "$FX/grandchild" "$MARK" <req.msg
	echo "$stderr"
	# Waiting for the grandchild's end of file would take its minute.
	[ $((SECONDS - t0)) -lt 30 ]
	# Both sleeps of the group are gone, the grandchild that kept the
	# pipes included.
	wait_until 5 none_marked
	[ "$(header_column Status out.msg)" = failure ]
	[ "$(header_column Error out.msg)" = "msg-exec: timeout after 1s" ]
	[ "$(header_column Correlation-Id out.msg)" = req-1 ]
	run -0 --separate-stderr exec_to out2.msg --stats --timeout 1s "$FX/grandchild" "$MARK" <req.msg
	[ "$(stat_of timed-out "$stderr")" = 1 ]
	[ "$(stat_of replies "$stderr")" = 1 ]
	# The child died of the SIGTERM.
	[ "$(header_column Exit-Status out.msg)" = "signal 15" ]
}

@test "exec robust: --kill-after ends a grandchild that ignores SIGTERM with SIGKILL" {
	frame x "Message-Id: req-1" >req.msg
	local t0=$SECONDS
	run -0 --separate-stderr exec_to out.msg --timeout 1s --kill-after 1s \
		"$FX/grandchild" "$MARK" ignore-term <req.msg
	echo "$stderr"
	[ $((SECONDS - t0)) -lt 30 ]
	wait_until 5 none_marked
	[ "$(header_column Status out.msg)" = failure ]
	[ "$(header_column Error out.msg)" = "msg-exec: timeout after 1s" ]
}

# ---- retries ----

@test "exec robust: --retry runs again on exit 75, the attempts counted and spaced out, doubling up to --retry-max" {
	frame x "Message-Id: req-1" >req.msg
	run -0 --separate-stderr exec_to out.msg --stats --retry 5 --retry-delay 300ms \
		--retry-max 1s "$FX/flaky" runs 5 <req.msg
	echo "$stderr"
	[ "$(msg-unwrap out.msg)" = "ok after 5" ]
	[ "$(header_column Status out.msg)" = success ]
	[ "$(header_column Exit-Status out.msg)" = 0 ]
	[ "$(header_column Exec-Attempt out.msg)" = 5 ]
	[ "$(header_column Correlation-Id out.msg)" = req-1 ]
	[ "$(stat_of in "$stderr")" = 1 ]
	[ "$(stat_of runs "$stderr")" = 5 ]
	[ "$(stat_of retried "$stderr")" = 4 ]
	[ "$(stat_of replies "$stderr")" = 1 ]
	# 300 ms, 600 ms, then 1 s twice (not 1.2 s and 2.4 s): as long at
	# least, and well under twice as long even on a loaded machine.
	gaps runs
	gaps runs | awk 'BEGIN { split("300 600 1000 1000", low); split("1500 1800 2200 2200", high) }
		$1 < low[NR] || $1 >= high[NR] { print "gap " NR ": " $1 " ms"; bad = 1 }
		END { exit bad || NR != 4 }'
}

@test "exec robust: --coprocess waits --retry-delay, doubling up to --retry-max, before the process that tries again" {
	requests 2 0 >req.msg
	run -0 --separate-stderr exec_to out.msg --stats --coprocess --retry 3 \
		--retry-delay 300ms --retry-max 500ms "$FX/flaky-coproc" starts 4 <req.msg
	echo "$stderr"
	[ "$(msg-unwrap -s '\n' out.msg)" = "$(printf '1 0\n2 0')" ]
	[ "$(header_column Status out.msg)" = "$(printf 'success\nsuccess')" ]
	[ "$(header_column Correlation-Id out.msg)" = "$(printf 'req-1\nreq-2')" ]
	[ "$(header_column Exec-Attempt out.msg)" = "$(printf '4\n-')" ]
	[ "$(stat_of runs "$stderr")" = 4 ]
	[ "$(stat_of retried "$stderr")" = 3 ]
	[ "$(stat_of replies "$stderr")" = 2 ]
	# 300 ms, then 500 ms twice (--retry-max, not 600 ms): as long at
	# least; a loaded machine may make them longer.
	gaps starts
	gaps starts | awk 'BEGIN { split("300 500 500", low) }
		$1 < low[NR] { print "gap " NR ": " $1 " ms"; bad = 1 }
		END { exit bad || NR != 3 }'
}

@test "exec robust: --retry gives up after N more attempts, the last failure in the reply" {
	frame x "Message-Id: req-1" >req.msg
	run -0 --separate-stderr exec_to out.msg --retry 2 --retry-delay 10ms "$FX/flaky" runs 9 <req.msg
	echo "$stderr"
	lines 3 runs
	[ "$(header_column Status out.msg)" = failure ]
	[ "$(header_column Exit-Status out.msg)" = 75 ]
	[ "$(header_column Exec-Attempt out.msg)" = 3 ]
	[ "$(header_column Error out.msg)" = "msg-exec: run 3 failed" ]
}

@test "exec robust: an exit status not in --retry-on is not retried; --retry-on lists and any" {
	frame x "Message-Id: req-1" >req.msg
	# The default is 75 only.
	run -0 --separate-stderr exec_to out.msg --retry 3 --retry-delay 10ms "$FX/flaky" runs 2 1 <req.msg
	lines 1 runs
	[ "$(header_column Status out.msg)" = failure ]
	[ "$(header_column Exit-Status out.msg)" = 1 ]
	[ "$(header_column Exec-Attempt out.msg)" = - ]
	[ "$(header_column Error out.msg)" = "msg-exec: run 1 failed" ]
	rm runs
	run -0 --separate-stderr exec_to out.msg --retry 3 --retry-delay 10ms --retry-on 3,4 \
		"$FX/flaky" runs 2 4 <req.msg
	lines 2 runs
	[ "$(header_column Status out.msg)" = success ]
	[ "$(header_column Exec-Attempt out.msg)" = 2 ]
	rm runs
	run -0 --separate-stderr exec_to out.msg --retry 3 --retry-delay 10ms --retry-on 3,4 \
		"$FX/flaky" runs 2 75 <req.msg
	lines 1 runs
	[ "$(header_column Exit-Status out.msg)" = 75 ]
	rm runs
	run -0 --separate-stderr exec_to out.msg --retry 3 --retry-delay 10ms --retry-on any \
		"$FX/flaky" runs 3 1 <req.msg
	lines 3 runs
	[ "$(msg-unwrap out.msg)" = "ok after 3" ]
	[ "$(header_column Status out.msg)" = success ]
	[ "$(header_column Exec-Attempt out.msg)" = 3 ]
}

@test "exec robust: a timeout is retried under --retry-on any only" {
	frame x "Message-Id: req-1" >req.msg
	# The first run hangs; the second would succeed.
	run -0 --separate-stderr exec_to out.msg --retry 2 --retry-delay 10ms --timeout 500ms \
		"$FX/flaky" runs 2 75 30 <req.msg
	lines 1 runs
	[ "$(header_column Status out.msg)" = failure ]
	[ "$(header_column Error out.msg)" = "msg-exec: timeout after 500ms" ]
	rm runs
	run -0 --separate-stderr exec_to out.msg --retry 2 --retry-delay 10ms --timeout 500ms \
		--retry-on any "$FX/flaky" runs 2 75 30 <req.msg
	lines 2 runs
	[ "$(msg-unwrap out.msg)" = "ok after 2" ]
	[ "$(header_column Exec-Attempt out.msg)" = 2 ]
}

# ---- children that misbehave ----

@test "exec robust: children that exit without reading 1 MiB of stdin, or read 10 bytes of it, are no trouble" {
	{
		big_request req-1 1048576
		big_request req-2 1048576
		big_request req-3 1048576
	} >req.msg
	run -0 --separate-stderr exec_to out.msg true <req.msg
	[ -z "$stderr" ]
	[ "$(header_column Status out.msg)" = "$(printf 'success\n%.0s' 1 2 3)" ]
	[ "$(header_column Content-Length out.msg)" = "$(printf '0\n%.0s' 1 2 3)" ]
	run -0 --separate-stderr exec_to out.msg head -c 10 <req.msg
	[ -z "$stderr" ]
	[ "$(header_column Status out.msg)" = "$(printf 'success\n%.0s' 1 2 3)" ]
	[ "$(msg-unwrap out.msg)" = aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa ]
}

@test "exec robust: a child that closes its stdout early is waited for, its output kept" {
	{
		big_request req-1 1048576
		big_request req-2 10
	} >req.msg
	run -0 --separate-stderr exec_to out.msg "$FX/closes-stdout" <req.msg
	[ -z "$stderr" ]
	[ "$(header_column Status out.msg)" = "$(printf 'success\nsuccess')" ]
	[ "$(msg-unwrap out.msg)" = "$(printf 'early\nearly')" ]
}

@test "exec robust: a child killed by a signal is a failure with Exit-Status: signal 9" {
	requests 2 0 >req.msg
	run -0 --separate-stderr exec_to out.msg "$FX/killed" <req.msg
	[ "$(header_column Status out.msg)" = "$(printf 'failure\nfailure')" ]
	[ "$(header_column Exit-Status out.msg)" = "$(printf 'signal 9\nsignal 9')" ]
	[ "$(header_column Error out.msg)" = "$(printf 'msg-exec: killed by signal 9\n%.0s' 1 2)" ]
}

@test "exec robust: a child flooding stderr with 1 MiB before it reads 1 MiB of stdin does not deadlock" {
	big_request req-1 1048576 >req.msg
	run -0 --separate-stderr exec_to out.msg "$FX/floods" <req.msg
	[ "$(msg-unwrap out.msg)" = 1048576 ]
	[ "$(header_column Status out.msg)" = success ]
	# Every line passed through, in order, prefixed with the request's id.
	[ "$stderr" = "$(awk 'BEGIN { for (i = 0; i < 16384; i++) printf "msg-exec: req-1: %063d\n", i }')" ]
}

# ---- descriptors and zombies ----

@test "exec robust: a child gets descriptors 0, 1 and 2 only, none of msg-exec's own" {
	# Four children at once, so that each runs while the others' pipes
	# are open; the input is a spool, the output a file.
	mkdir REQ
	spool_fill REQ 1 8
	run -0 --separate-stderr only_std_fds timeout -k 5 60 msg-exec --once -P 4 \
		-i dir:REQ --output out.msg "$FX/fd-list"
	echo "$stderr"
	[ "$(header_column Status out.msg | sort | uniq -c | tr -s ' ')" = " 8 success" ]
	# Each body "0\n1\n2\n".
	[ "$(msg-unwrap out.msg | sort | uniq -c | tr -s ' ')" = "$(printf ' 8 0\n 8 1\n 8 2')" ]
}

@test "exec robust: a child gets descriptors 0, 1 and 2 only, none msg-exec inherited" {
	requests 2 0 >req.msg
	# Opened after only_std_fds closed the others: descriptors 5 and 9.
	run -0 --separate-stderr only_std_fds sh -c 'exec "$@" 5<req.msg 9>/dev/null' sh \
		timeout -k 5 60 msg-exec --output out.msg "$FX/fd-list" <req.msg
	[ "$(msg-unwrap out.msg)" = "$(printf '0\n1\n2\n0\n1\n2')" ]
}

@test "exec robust: no zombie is left while msg-exec -P 4 waits on its input" {
	mkfifo in
	exec 7<>in
	spawn "${IN_SESSION[@]}" msg-exec -P 4 "$FX/echo-id" runs "$MARK" <in >out.msg
	local pid=$spawned
	for ((i = 1; i <= 8; i++)); do
		frame "m$i" "Message-Id: req-$i" >&7
	done
	wait_until 30 lines 8 runs
	# Every child ended and was waited for, while msg-exec waits for more.
	wait_until 10 no_children "$pid" || { ps -o pid,ppid,stat,etimes,args --ppid "$pid"; ps -o pid,stat,args -p "$pid"; false; }
	alive "$pid"
	exec 7>&-
	status_of "$pid" 30
	[ "$status" = 0 ]
	[ "$(msg-unwrap out.msg)" = "$(printf 'm%d' 1 2 3 4 5 6 7 8)" ]
	[ "$(header_column Correlation-Id out.msg)" = "$(seq -f 'req-%g' 1 8)" ]
}

# ---- signals to msg-exec ----

@test "exec robust: SIGTERM stops the reading, the children in hand finish, their replies whole, exit 0" {
	# Four requests of half a second each, replies of 64 KiB, from a
	# FIFO that stays open: four children in hand, nothing else read.
	mkfifo in
	exec 7<>in
	spawn "${IN_SESSION[@]}" msg-exec -P 4 "$FX/sleepy" started 65536 <in >out.msg 2>err
	local pid=$spawned
	requests 4 0.5 >&7
	wait_until 30 lines 4 started
	kill -TERM "$pid"
	status_of "$pid" 30
	cat err
	[ "$status" = 0 ]
	[ ! -s err ]
	# Every child finished and has its reply, in order, whole.
	run -0 msg-unwrap -H out.msg
	[ "$(header_column Status out.msg)" = "$(printf 'success\n%.0s' 1 2 3 4)" ]
	[ "$(msg-unwrap out.msg | grep -v x)" = "$(seq 1 4)" ]
	[ "$(msg-unwrap out.msg | awk 'length($0) == 65536 && !/[^x]/' | wc -l)" = 4 ]
}

@test "exec robust: SIGTERM kills children that outlast --kill-after, writes what completed, exits 75" {
	# Two quick requests, then ones that would take a minute.
	requests 10 0 0 60 60 60 60 60 60 60 60 >req.msg
	spawn "${IN_SESSION[@]}" msg-exec -P 4 --kill-after 1s "$FX/sleepy" started <req.msg >out.msg 2>err
	local pid=$spawned
	# 1 and 2 done, 3 to 6 in hand.
	wait_until 30 lines 6 started
	local t0=$SECONDS
	kill -TERM "$pid"
	status_of "$pid" 30
	cat err
	[ "$status" = 75 ]
	[ $((SECONDS - t0)) -lt 20 ]
	lines 6 started
	run -0 msg-unwrap -H out.msg
	[ "$(msg-unwrap out.msg)" = "$(printf '1\n2')" ]
	[ "$(header_column Status out.msg)" = "$(printf 'success\nsuccess')" ]
	# The children killed, sleep and all.
	wait_until 5 session_ended "$pid"
}

@test "exec robust: SIGTERM while --coprocess waits to try again ends msg-exec then, the requests cut short, exit 75" {
	mkfifo in
	exec 7<>in
	spawn "${IN_SESSION[@]}" msg-exec --coprocess --retry 1 --retry-delay 60s \
		"$FX/flaky-coproc" starts 5 <in >out.msg 2>err
	local pid=$spawned
	requests 2 0 >&7
	wait_until 30 grep -q 'start 1 failed' err
	local t0=$SECONDS
	kill -TERM "$pid"
	status_of "$pid" 50
	cat err
	[ "$status" = 75 ]
	# Not after the minute of --retry-delay, and no process started again.
	[ $((SECONDS - t0)) -lt 45 ]
	lines 1 starts
	[ ! -s out.msg ]
}

# ---- SIGKILL between spools ----

@test "exec robust: SIGKILL again and again between dir: spools: every request gets a reply, none lost" {
	# Calibrated on an uninterrupted run over a spool of the same size.
	mkdir cal CALOUT
	spool_fill cal 1 200
	local t0=${EPOCHREALTIME/./}
	timeout -k 5 120 msg-exec --once -i dir:cal --output dir:CALOUT "$FX/echo-id" cal.runs
	kill_plan $(((${EPOCHREALTIME/./} - t0) / 1000))
	STARTUP_MS=$(fastest_ms msg-exec --once -i dir:cal --output dir:CALOUT true)
	echo "kill windows: $((STARTUP_MS + 10)) to $((STARTUP_MS + WINDOW_MS)) ms"
	mkdir REQ OUT
	spool_fill REQ 1 200
	local kills=0 pid
	while [ "$kills" -lt "$MIN_KILLS" ] ||
		{ [ "$kills" -lt "$ROUNDS" ] && ! empty_spool REQ; }; do
		spawn "${IN_SESSION[@]}" msg-exec -i dir:REQ --output dir:OUT "$FX/echo-id" runs "$MARK" 2>run.err
		pid=$spawned
		sleep_ms $((STARTUP_MS + 10 + RANDOM * WINDOW_MS / 32768))
		kill_run "$pid" run.err $((kills + 1))
		kills=$((kills + 1))
	done 2>/dev/null
	echo "$kills kills; left in REQ: $(find REQ/new REQ/cur -type f | wc -l)"
	if ! empty_spool REQ; then
		run -0 timeout -k 5 120 msg-exec --once -i dir:REQ --output dir:OUT "$FX/echo-id" runs
	fi
	empty_spool REQ
	[ ! -d REQ/bad ] || is 0 REQ/bad
	# A reply for every request, each with the request's body; more
	# than one for a request that was in hand at a kill.
	find OUT/new -type f -exec cat {} + >replies.msg
	echo "replies: $(header_column Correlation-Id replies.msg | wc -l), runs: $(wc -l <runs)"
	[ "$(header_column Correlation-Id replies.msg | sort -u)" = "$(seq -f 'id-%06g' 1 200)" ]
	msg-unwrap -e replies.msg | perl -ne '
		/"Correlation-Id":"id-(\d+)".*"body":"m\1"/ or die "bad reply: $_";'
	[ "$(header_column Status replies.msg | sort -u)" = success ]
}

# ---- the trickle loop ----

@test "exec robust: msg-trickle through msg-exec to a target that fails now and then delivers every version in order" {
	# Five entities, twenty versions each; the target refuses once each
	# request whose id ends in 7 (versions 7 and 17).
	for ((v = 1; v <= 20; v++)); do
		for e in 1 2 3 4 5; do
			frame "order $e version $v" "Message-Id: req-$e-$v" "Entity-Id: e$e" \
				"Entity-Version: $v"
		done
	done >requests.msg
	mkfifo resp.fifo
	run -0 --separate-stderr in_session timeout -k 5 120 bash -c '
		set -o pipefail
		msg-trickle --state S -r resp.fifo --retry-after 200ms --stats <requests.msg |
			msg-exec "$1" "$PWD" >resp.fifo' target "$FX/target"
	echo "$stderr"
	for e in 1 2 3 4 5; do
		[ "$(awk -v e="e$e" '$1 == e { print $2 }' log)" = "$(seq 1 20)" ]
	done
	[ "$(find . -name 'refused-*' | wc -l)" = 10 ]
	local stats
	stats=$(grep '^msg-trickle: stats: ' <<<"$stderr")
	[[ $stats == *" in 100, responses 110, "* ]]
	[[ $stats == *", succeeded 100, failed 10, retried 10, "* ]]
	[[ $stats == *", blocked 0, waiting 0, in-flight 0" ]]
}
