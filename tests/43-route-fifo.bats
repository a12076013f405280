#!/usr/bin/env bats
# msg-route fanning out to FIFOs read by concurrent readers: counts add up,
# frames arrive whole and in order; FIFOs are opened at start-up, in order,
# waiting for their readers; several routers may share one FIFO.

load test_helper
bats_require_minimum_version 1.5.0
load fixtures/route/route
load fixtures/dir/dir
load crash/build

setup_file() {
	cc_preload "$BATS_FILE_TMPDIR/faultinject.so" "$MSG_TOP/tests/faults/faultinject.c"
}

@test "fifo: 100,000 messages to three FIFOs with concurrent readers" {
	local ra rb rc
	# Bodies "NNNNNN to=X": a sequence number and where the body belongs.
	perl -e 'printf "%06d to=%s\n", $_, qw(a b c)[$_ % 7 % 3] for 1 .. 100000' >lines
	msg-wrap -l lines >in.msg
	mkfifo a.fifo b.fifo c.fifo
	spawn timeout -k 10 60 msg-unwrap -e a.fifo >a.jsonl
	ra=$spawned
	spawn timeout -k 10 60 msg-unwrap -H b.fifo >b.headers
	rb=$spawned
	spawn timeout -k 10 60 msg-unwrap -e c.fifo >c.jsonl
	rc=$spawned
	run -0 --separate-stderr timeout -k 10 60 msg-route --stats \
		-w "substring-after(., ' ') = 'to=a'" -t a.fifo \
		-w "contains(., 'to=b')" -t b.fifo \
		-o c.fifo in.msg
	wait "$ra"
	wait "$rb"
	wait "$rc"
	[ -z "$output" ]
	# What each reader got is exactly the input's frames of its class, in
	# input order, headers and bodies intact.
	msg-unwrap -e in.msg >all.jsonl
	grep -F 'to=a"}' all.jsonl | cmp - a.jsonl
	grep -F 'to=c"}' all.jsonl | cmp - c.jsonl
	msg-unwrap -H in.msg | sed -n 's/^Message-Id: //p' | paste -d ' ' - lines |
		awk '$3 == "to=b" { print $1 }' >b.want
	sed -n 's/^Message-Id: //p' b.headers | cmp - b.want
	# Bodies count up in each output.
	grep -o '"body":"[0-9]*' a.jsonl | cut -d '"' -f 4 >a.seq
	increasing a.seq
	grep -o '"body":"[0-9]*' c.jsonl | cut -d '"' -f 4 >c.seq
	increasing c.seq
	# Counts add up.
	local na nb nc
	na=$(wc -l <a.jsonl)
	nb=$(grep -c '^Content-Length: 11$' b.headers)
	nc=$(wc -l <c.jsonl)
	[ "$nb" = "$(grep -c '^Message-Id: ' b.headers)" ]
	[ "$na" = "$(grep -c 'to=a' lines)" ]
	[ "$nb" = "$(grep -c 'to=b' lines)" ]
	[ "$nc" = "$(grep -c 'to=c' lines)" ]
	[ $((na + nb + nc)) = 100000 ]
	grep -qx "msg-route: stats: channel 'a.fifo': $na" <<<"$stderr"
	grep -qx "msg-route: stats: channel 'b.fifo': $nb" <<<"$stderr"
	grep -qx "msg-route: stats: channel 'c.fifo': $nc" <<<"$stderr"
	grep -qx "msg-route: stats: in 100000, routed $((na + nb)), otherwise $nc, dropped 0, invalid 0, expired 0, undeliverable 0" <<<"$stderr"
}

@test "fifo: --all gives every reader a copy of every message" {
	local ra rb
	seqs 5000 >lines
	msg-wrap -l lines >in.msg
	mkfifo a.fifo b.fifo
	spawn timeout -k 10 30 msg-unwrap -s '\n' a.fifo >a.txt
	ra=$spawned
	spawn timeout -k 10 30 msg-unwrap -s '\n' b.fifo >b.txt
	rb=$spawned
	timeout -k 10 30 msg-route -a -w 'true()' -t a.fifo -w "header('Content-Type') = 'text/plain'" -t b.fifo in.msg
	wait "$ra"
	wait "$rb"
	# -s puts the separator between bodies, not after the last.
	(cat a.txt; echo) | cmp - lines
	cmp a.txt b.txt
}

@test "fifo: channels are opened at start-up, waiting for readers that come late" {
	local router ra
	seqs 1000 >lines
	msg-wrap -l lines >in.msg
	mkfifo a.fifo b.fifo
	spawn timeout -k 10 30 msg-route -w 'number(substring(., 1, 6)) mod 2 = 0' -t a.fifo -o b.fifo in.msg
	router=$spawned
	# The router waits in open(2) for a reader of a.fifo.
	sleep 0.3
	kill -0 "$router"
	spawn timeout -k 10 30 msg-unwrap -s '\n' a.fifo >a.txt
	ra=$spawned
	sleep 0.3
	kill -0 "$router"
	timeout -k 10 30 msg-unwrap -s '\n' b.fifo >b.txt
	wait "$ra"
	wait "$router"
	awk 'NR % 2 == 0' lines | cmp - <(cat a.txt; echo)
	awk 'NR % 2 == 1' lines | cmp - <(cat b.txt; echo)
}

@test "fifo: two routers share one FIFO; frames of 100 KB never interleave" {
	local r1 r2 reader
	perl -e 'printf "%s%03d%s\n", "A", $_, "A" x 99996 for 0 .. 149' >a.lines
	perl -e 'printf "%s%03d%s\n", "B", $_, "B" x 99996 for 0 .. 149' >b.lines
	msg-wrap -l a.lines >a.msg
	msg-wrap -l b.lines >b.msg
	mkfifo shared.fifo
	spawn timeout -k 10 30 msg-unwrap -e shared.fifo >out.jsonl
	reader=$spawned
	# Hold the FIFO open for writing until both routers have it.
	exec 7>shared.fifo
	spawn timeout -k 10 30 msg-route -f 'true()' --output shared.fifo a.msg
	r1=$spawned
	spawn timeout -k 10 30 msg-route -w "starts-with(., 'B')" -t shared.fifo b.msg
	r2=$spawned
	wait "$r1"
	wait "$r2"
	exec 7>&-
	wait "$reader"
	[ "$(wc -l <out.jsonl)" = 300 ]
	# Every body whole: one letter throughout, in each router's order.
	jq -r .body out.jsonl >bodies
	grep '^A' bodies | cmp - a.lines
	grep '^B' bodies | cmp - b.lines
}

# waits_for_writer PID: PID holds in.fifo open for reading, waiting for
# a writer, with its SIGTERM handler set (a signal before that would
# kill it outright).
waits_for_writer() {
	local caught f
	caught=$(awk '$1 == "SigCgt:" { print $2 }' "/proc/$1/status")
	# SIGTERM is signal 15: bit 14 of the mask.
	(((16#$caught >> 14) & 1)) || return 1
	for f in "/proc/$1/fd/"*; do
		[ "$(readlink "$f")" = "$PWD/in.fifo" ] && return 0
	done
	return 1
}

@test "fifo: a reader asked to stop (SIGTERM) while it waits for a FIFO's first writer ends quietly, exit 0, frames and raw" {
	local pid tool
	mkfifo in.fifo
	for tool in "msg-unwrap" "msg-wrap -l"; do
		# shellcheck disable=SC2086 # the tool and its option are words
		spawn $tool in.fifo >out 2>err
		pid=$spawned
		wait_until 30 waits_for_writer "$pid"
		kill -TERM "$pid"
		status_of "$pid" 30
		echo "$tool: status $status; stderr: $(cat err)"
		[ "$status" = 0 ]
		[ ! -s err ]
		[ ! -s out ]
	done
}

@test "fifo: a reader asked to stop between two FIFO operands does not open the second (where it would wait for a writer that never comes): exit 0" {
	local pid
	mkfifo one.fifo two.fifo
	spawn msg-unwrap one.fifo two.fifo >out 2>err
	pid=$spawned
	exec 8>one.fifo
	frame x >&8
	wait_until 30 grep -qx x out
	# The stop comes while it waits on one.fifo: that operand ends
	# there, and two.fifo is not opened at all.
	kill -TERM "$pid"
	status_of "$pid" 30
	exec 8>&-
	echo "status $status; stderr: $(cat err)"
	[ "$status" = 0 ]
	[ ! -s err ]
	[ "$(cat out)" = x ]
}

@test "fifo: a stop asked at the very moment a reader opens a FIFO with no writer (the fault shim sends SIGTERM there) ends it quietly, exit 0" {
	local tool
	mkfifo in.fifo
	for tool in "msg-unwrap" "msg-wrap -l"; do
		# shellcheck disable=SC2086 # the tool and its option are words
		run --separate-stderr faulty FAULT_ERRNO=term FAULT_FUNCS=open,openat \
			FAULT_PATH="$PWD/in.fifo" -- timeout -k 5 20 $tool in.fifo
		echo "$tool: status $status; stderr: $stderr"
		[ "$status" = 0 ]
		[ -z "$stderr" ]
		[ -z "$output" ]
		[ "$(wc -l <faults.log)" = 1 ]
		[[ $(cat faults.log) == open*" $PWD/in.fifo stop asked" ]]
		rm faults.log
	done
}
