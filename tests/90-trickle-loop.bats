#!/usr/bin/env bats
# msg-trickle in real loops with a target made of msg tools: through a
# FIFO, 10,000 entities of 5 versions each (2,000 under the sanitizers)
# go out and their responses come back without a deadlock, each version
# delivered once and in order; a target that fails some versions once
# gets them again from --retry-after, still in order. With dir: channels,
# msg-trickle killed with SIGKILL once where a batch is marked in flight
# but not yet published, then again and again at random, while the target
# answers delivers every version in order at least once, a version again
# only as a resend, and loses nothing stored; run by cron with --once,
# each round sends the next version of every entity.

load test_helper
bats_require_minimum_version 1.5.0
load fixtures/dir/dir
load fixtures/trickle-loop/trickle-loop
load crash/startup
load crash/build

setup_file() {
	cc_preload "$BATS_FILE_TMPDIR/faultinject.so" "$MSG_TOP/tests/faults/faultinject.c"
	STARTUP_MS=$(fastest_ms msg-trickle --state "$BATS_FILE_TMPDIR/probe" --once </dev/null)
	export STARTUP_MS
	# The crash guarantees are the plain build's; under the sanitizers
	# fewer kills run the same paths for memory errors.
	case $MSG_BIN in
	*san*) export LOOP_ENTITIES=2000 ROUNDS=20 MIN_KILLS=10 ;;
	*) export LOOP_ENTITIES=10000 ROUNDS=60 MIN_KILLS=20 ;;
	esac
}

# ---- through a FIFO ----

@test "fifo: 10,000 entities x 5 versions through msg-translate and back: no deadlock, each version delivered once and in order, exit 0" {
	local n=$LOOP_ENTITIES
	requests "$n" 5 >requests.msg
	run -0 --separate-stderr timeout -k 5 120 fifo-loop resp.fifo sent.msg -- \
		msg-trickle --state st -r resp.fifo --stats <requests.msg
	[ "$stderr" = "$(trickle_stats in=$((n * 5)) responses=$((n * 5)) \
		sent=$((n * 5)) succeeded=$((n * 5)))" ]
	[ -z "$output" ]
	run -0 delivered once requests.msg sent.msg
	[ "$output" = "delivered $((n * 5)) frames of $((n * 5)) requests, 0 again" ]
	all_done st "$n" 5
}

@test "fifo: version 2 of every entity ending in 7 fails once, --retry-after 100ms sends it again: every version delivered in order" {
	local n=2000 fails=200
	requests "$n" 5 >requests.msg
	run -0 --separate-stderr timeout -k 5 120 fifo-loop resp.fifo sent.msg \
		--fail-sevens -- \
		msg-trickle --state st -r resp.fifo --retry-after 100ms --stats <requests.msg
	[ "$stderr" = "$(trickle_stats in=$((n * 5)) responses=$((n * 5 + fails)) \
		sent=$((n * 5 + fails)) succeeded=$((n * 5)) failed=$fails \
		retried=$fails)" ]
	run -0 delivered retried requests.msg sent.msg
	[ "${lines[-1]}" = "delivered $((n * 5 + fails)) frames of $((n * 5)) requests, $fails again" ]
	[ "$(printf '%s\n' "${lines[@]:0:${#lines[@]}-1}")" = "$(sevens "$n")" ]
	all_done st "$n" 5
}

@test "fifo: 1,000 entities of 8 KB versions all in flight at once, many times what the loop's pipes hold: the answers are read while the output waits, no deadlock" {
	# Each round sends up to 64 versions (512 KB) before it reads an
	# answer; the pipes and the FIFO of the loop hold 256 KB in all. A
	# tool that only reads between its writes locks up on the first.
	REQUEST_PAD=8000 requests 1000 2 >requests.msg
	run -0 --separate-stderr timeout -k 5 60 fifo-loop resp.fifo sent.msg -- \
		msg-trickle --state st -r resp.fifo --stats <requests.msg
	[ "$stderr" = "$(trickle_stats in=2000 responses=2000 sent=2000 succeeded=2000)" ]
	run -0 delivered once requests.msg sent.msg
	[ "$output" = "delivered 2000 frames of 2000 requests, 0 again" ]
	all_done st 1000 2
}

@test "fifo: a retry that falls due while nothing else comes or waits goes out then: the loop ends, every version delivered in order" {
	# One entity of ten fails, at its version 2; the others are done
	# long before its retry, a second later.
	requests 10 5 >requests.msg
	run -0 --separate-stderr timeout -k 5 30 fifo-loop resp.fifo sent.msg \
		--fail-sevens -- \
		msg-trickle --state st -r resp.fifo --retry-after 1s --stats <requests.msg
	[ "$stderr" = "$(trickle_stats in=50 responses=51 sent=51 succeeded=50 \
		failed=1 retried=1)" ]
	run -0 delivered retried requests.msg sent.msg
	[ "$output" = "retried e00007 2 1 2
delivered 51 frames of 50 requests, 1 again" ]
	all_done st 10 5
}

# ---- dir: channels ----

# dir_loop_spools N: the requests of N entities x 5 versions in the
# spool req, and as one stream in requests.msg; empty spools out and
# resp for what is sent and the responses.
dir_loop_spools() {
	requests "$1" 5 >requests.msg
	requests "$1" 5 req
	mkdir -p out/tmp out/new out/cur resp/tmp resp/new resp/cur
}

@test "crash: msg-trickle on dir: channels killed with SIGKILL again and again: every version delivered in order, again only as a resend, nothing stored lost" {
	local n=200 kills=0 seed=90 pid responder late staged
	dir_loop_spools "$n"
	spawn responder_rounds
	responder=$spawned
	# The first kill is aimed: at the publication of the first batch,
	# its versions marked in flight and none of them out. A random kill
	# lands there only by luck, so without this one the resends below
	# might never be tested.
	run -137 faulty FAULT_FUNCS=renameat FAULT_PATH="$PWD/out/tmp/*" \
		FAULT_ERRNO=kill -- timeout -k 5 60 msg-trickle --state st \
		-r dir:resp --output dir:out --resend-after 2s dir:req
	run -0 cat faults.log
	[ "${#lines[@]}" = 1 ]
	[[ $output == "renameat $PWD/out/tmp/"*" killed" ]]
	staged=${output#renameat }
	[ -f "${staged% killed}" ]
	[ "$(nfiles out/new)" = 0 ]
	echo "kill windows: $((STARTUP_MS * 2 / 3)) to $((STARTUP_MS + 400)) ms"
	while [ "$kills" -lt "$MIN_KILLS" ] ||
		{ [ "$kills" -lt "$ROUNDS" ] && ! all_done st "$n" 5; }; do
		CRASH_SEED=$seed CRASH_MIN_MS=$((STARTUP_MS * 2 / 3)) \
			CRASH_MAX_MS=$((STARTUP_MS + 400)) \
			run bash "$MSG_TOP/tests/crash/run.sh" 10 acks \
			msg-trickle --state st -r dir:resp --output dir:out \
			--resend-after 2s dir:req
		echo "$output"
		[ "$status" -eq 0 ]
		[[ $output == "10 rounds, 10 killed, "* ]]
		kills=$((kills + 10)) seed=$((seed + 1))
		[ ! -e responder.err ]
	done
	# One run left alone resends what was in flight at the last kill
	# and takes in the responses.
	spawn msg-trickle --state st -r dir:resp --output dir:out --resend-after 2s \
		--stats dir:req 2>last.err
	pid=$spawned
	wait_until 120 all_done st "$n" 5
	kill -TERM "$pid"
	status_of "$pid" 30
	cat last.err
	[ "$status" = 0 ]
	touch responder.stop
	wait_until 30 gone "$responder"
	[ ! -e responder.err ]
	empty_spool req
	[ "$(find req/bad -type f 2>/dev/null | wc -l)" = 0 ]
	empty_spool out
	echo "left in out/tmp: $(nfiles out/tmp)"
	run -0 delivered crashed requests.msg delivered.msg
	echo "after $kills kills and the aimed one: ${lines[-1]}"
	[[ ${lines[-1]} == "delivered "*" frames of $((n * 5)) requests, "*" again, "*" first as a resend" ]]
	# The aimed kill fell between the in-flight marks of a batch and
	# the publication of its messages: --resend-after made up for them.
	late=${lines[-1]##*again, }
	[ "${late% first as a resend}" -gt 0 ]
}

@test "once: msg-trickle --once and the target, each run by cron 10 times in turn on dir: channels: each round sends the next version of every entity, all delivered in order" {
	local n=60 round
	dir_loop_spools "$n"
	for ((round = 1; round <= 10; round++)); do
		run -0 --separate-stderr timeout -k 5 60 msg-trickle --state st --once \
			-r dir:resp --output dir:out --stats dir:req
		case $round in
		1) [ "$stderr" = "$(trickle_stats in=$((n * 5)) sent=$n \
			waiting=$((n * 4)) in-flight=$n)" ] ;;
		[2-5]) [ "$stderr" = "$(trickle_stats responses=$n sent=$n \
			succeeded=$n waiting=$((n * (5 - round))) in-flight=$n)" ] ;;
		6) [ "$stderr" = "$(trickle_stats responses=$n succeeded=$n)" ] ;;
		*) [ "$stderr" = "$(trickle_stats)" ] ;;
		esac
		is "$((round <= 5 ? n : 0))" out/new
		run -0 timeout -k 5 60 bash -o pipefail -c \
			'msg-tap --once -i dir:out delivered.msg | respond --output dir:resp'
		is 0 out/new
	done
	empty_spool req
	empty_spool resp
	run -0 delivered once requests.msg delivered.msg
	[ "$output" = "delivered $((n * 5)) frames of $((n * 5)) requests, 0 again" ]
	all_done st "$n" 5
}
