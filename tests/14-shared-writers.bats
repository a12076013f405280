#!/usr/bin/env bats
# Several writers on one channel: each frame is written under a flock, so
# frames from concurrent writers never interleave, even far above PIPE_BUF.

load test_helper
bats_require_minimum_version 1.5.0

export LC_ALL=C

# lines MARKER [PAUSE [SIZE]]: 200 lines of SIZE (100,000) bytes: the
# marker, a three-digit index, then the marker repeated. With a PAUSE
# (seconds) after each line, two writers fed this way are both busy for
# the whole run.
lines() {
	perl -e '$| = 1; my ($m, $pause, $size) = @ARGV;
		for my $i (0 .. 199) {
			printf "%s%03d%s\n", $m, $i, $m x ($size - 4);
			select(undef, undef, undef, $pause) if $pause;
		}' "$1" "${2:-0}" "${3:-100000}"
}

# check_bodies FILE [SIZE]: FILE holds every line of both writers, each
# writer's lines whole and in order.
check_bodies() {
	# How often the writers took turns; shown only when a check fails.
	echo "writer switches: $(cut -c1 "$1" | uniq | wc -l)"
	lines A 0 "${2:-100000}" >a.expect
	lines B 0 "${2:-100000}" >b.expect
	[ "$(grep -c '' "$1")" = 400 ]
	grep '^A' "$1" | cmp - a.expect
	grep '^B' "$1" | cmp - b.expect
}

@test "shared: two writers on one FIFO, 400 frames of 100 KB, none interleaved" {
	local reader wa wb
	mkfifo chan
	timeout -k 10 30 msg-unwrap -s '\n' chan >out.txt 3>&- &
	reader=$!
	# Hold a write end so the reader sees no end of input before both
	# writers have opened the FIFO; no child may inherit it. Write-only,
	# so writers still see EPIPE if the reader dies.
	exec 7>chan
	lines A 0.001 | timeout -k 10 30 msg-wrap -l --output chan 7>&- 3>&- &
	wa=$!
	lines B 0.001 | timeout -k 10 30 msg-wrap -l --output chan 7>&- 3>&- &
	wb=$!
	wait "$wa"
	wait "$wb"
	exec 7>&-
	wait "$reader"
	check_bodies out.txt
}

@test "shared: two writers on one FIFO, 400 frames of 20 KB read as envelopes" {
	local reader wa wb
	mkfifo chan
	timeout -k 10 30 msg-unwrap -e chan >out.jsonl 3>&- &
	reader=$!
	exec 7>chan
	lines A 0.001 20000 | timeout -k 10 30 msg-wrap -l -H 'Writer: A' --output chan 7>&- 3>&- &
	wa=$!
	lines B 0.001 20000 | timeout -k 10 30 msg-wrap -l -H 'Writer: B' --output chan 7>&- 3>&- &
	wb=$!
	wait "$wa"
	wait "$wb"
	exec 7>&-
	wait "$reader"
	[ "$(wc -l <out.jsonl)" = 400 ]
	# Each frame's Writer header matches its body's marker.
	jq -r 'if .headers.Writer == .body[0:1] then .body else "wrong writer" end' \
		out.jsonl >out.txt
	check_bodies out.txt 20000
}

@test "shared: two writers appending to one regular file" {
	local wa wb
	frame start >shared.msg
	lines A 0.001 | timeout -k 10 30 msg-wrap -l --output shared.msg 3>&- &
	wa=$!
	lines B 0.001 | timeout -k 10 30 msg-wrap -l --output shared.msg 3>&- &
	wb=$!
	wait "$wa"
	wait "$wb"
	# The frame that was there first is kept: the file is appended to.
	[ "$(msg-unwrap shared.msg | head -c 5)" = start ]
	msg-unwrap -s '\n' shared.msg | tail -n +2 >out.txt
	[ "$(msg-unwrap -H shared.msg | grep -c '^Content-Length: ')" = 401 ]
	check_bodies out.txt
}

@test "shared: --output appends to an existing file" {
	printf 'one' | msg-wrap --output out.msg
	printf 'two' | msg-wrap --output out.msg
	printf 'three' | msg-wrap -l --output out.msg
	[ "$(msg-unwrap -s '|' out.msg)" = "one|two|three" ]
	frame four | msg-unwrap --output out.raw
	frame five | msg-unwrap --output out.raw
	[ "$(cat out.raw)" = fourfive ]
}

@test "shared: fd:N channels for output and input" {
	printf 'via fd' | msg-wrap --output fd:5 5>out.msg
	[ "$(msg-unwrap out.msg)" = "via fd" ]
	run -0 msg-unwrap fd:6 6<out.msg
	[ "$output" = "via fd" ]
	run -73 --separate-stderr msg-wrap --output fd:9 </dev/null 9>&-
	[ "$stderr" = "msg-wrap: cannot use 'fd:9': Bad file descriptor" ]
	run -73 --separate-stderr msg-wrap --output fd:6 </dev/null 6<out.msg
	[ "$stderr" = "msg-wrap: cannot use 'fd:6': not open for writing" ]
}

# pipe_size_after_first_byte [SET]: on the pipe that is its stdin, wait
# for the first byte, then print the pipe's size (F_GETPIPE_SZ, 1032 on
# Linux); with SET, first grow the pipe to SET bytes (F_SETPIPE_SZ, 1031)
# and touch "ready".
pipe_size_after_first_byte() {
	perl -e 'my $set = 0 + (shift // 0);
		if ($set) { fcntl(STDIN, 1031, $set) or die "F_SETPIPE_SZ: $!";
			open(my $r, ">", "ready") or die; close $r }
		sysread(STDIN, my $b, 1) == 1 or die "no byte";
		print fcntl(STDIN, 1032, 0), "\n";' "$@"
}

@test "shared: a writer grows the pipe it writes to 128 KiB, and never shrinks a larger one" {
	local reader
	# The reader exits at the first byte: the writer may see EPIPE.
	seq 10 | msg-wrap -l | pipe_size_after_first_byte >size || true
	[ "$(cat size)" = 131072 ]
	# A FIFO its reader grew to 1 MiB first: held open read-write by the
	# test, so that neither side waits for the other to open it.
	mkfifo chan
	exec 5<>chan
	pipe_size_after_first_byte 1048576 <&5 >size &
	reader=$!
	timeout -k 5 10 sh -c 'until [ -e ready ]; do sleep 0.05; done'
	seq 10 | msg-wrap -l >chan
	wait "$reader"
	exec 5>&-
	[ "$(cat size)" = 1048576 ]
}
