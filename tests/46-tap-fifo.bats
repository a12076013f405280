#!/usr/bin/env bats
# msg-tap to FIFOs: a stalled, absent, late or departing reader never holds
# up the flow; whole frames are dropped, never partial ones, and counted;
# a reader that comes (back) gets whole frames.

load test_helper
bats_require_minimum_version 1.5.0
load fixtures/route/route

setup_file() {
	# 100 MB: 1,600 messages of 65,536 bytes, each body "NNNNNN xxx...".
	perl -e 'printf "%06d %s\n", $_, "x" x 65529 for 1 .. 1600' |
		msg-wrap -l >"$BATS_FILE_TMPDIR/big.msg"
}

# stalled FIFO OUT: a process that opens FIFO (read and write, so it is
# there before any writer) and does not read; when the file "go" appears
# it copies what the FIFO holds, without waiting for more, to OUT and
# exits. Its pid is in $spawned.
stalled() {
	spawn timeout -k 10 60 perl -e '
		use Fcntl;
		my ($fifo, $out) = @ARGV;
		sysopen(my $f, $fifo, O_RDWR) or die "$fifo: $!";
		open(my $r, ">", "$out.ready") or die; close $r;
		select(undef, undef, undef, 0.05) until -e "go";
		my $fl = fcntl($f, F_GETFL, 0);
		fcntl($f, F_SETFL, $fl | O_NONBLOCK);
		open(my $o, ">", $out) or die;
		binmode $o;
		my $buf;
		while (my $n = sysread($f, $buf, 65536)) { print $o $buf }
		close $o or die;' "$1" "$2"
	wait_until 60 test -e "$2.ready"
}

# tap_report STDERR FIFO: "COPIED DROPPED REOPENED" from msg-tap's report.
tap_report() {
	sed -n "s/^msg-tap: tap '$2': \([0-9]*\) copied, \([0-9]*\) dropped, reopened \([0-9]*\) times$/\1 \2 \3/p" <<<"$1"
}

# open_input: the FIFO "in", for a tap to read as its stdin, held open by
# the test on fd 7. Opened read-write, so neither the test nor the tap
# waits in open(2) for the other; closing fd 7 ends the tap's input.
open_input() {
	mkfifo in
	exec 7<>in
}

# big N: message N of a stream of 200 KB messages "NNNNNN yyy..." with
# Seq: N, to the FIFO the test holds open on fd 7 (given up after 10
# seconds, should the tap not read).
big() {
	perl -e 'printf "%06d %s", $ARGV[0], "y" x 199993' "$1" |
		timeout -k 10 10 msg-wrap -H "Seq: $1" >&7
}

@test "tap fifo: a reader that never reads: a 100 MB flow completes, drops reported" {
	local big=$BATS_FILE_TMPDIR/big.msg
	mkfifo tap.fifo
	stalled tap.fifo got.msg
	timeout -k 10 60 msg-tap --stats --if-full drop tap.fifo <"$big" >out.msg 2>err
	cmp out.msg "$big"
	local report copied dropped
	report=$(tap_report "$(cat err)" tap.fifo)
	read -r copied dropped _ <<<"$report"
	echo "copied $copied, dropped $dropped"
	[ "$dropped" -gt 1000 ]
	[ "$((copied + dropped))" = 1600 ]
	[ "$report" = "$copied $dropped 0" ]
	grep -qx "msg-tap: stats: in 1600, tapped $copied, dropped $dropped" err
}

@test "tap fifo: a stalled reader that reads at last finds whole frames, as many as reported" {
	local big=$BATS_FILE_TMPDIR/big.msg
	mkfifo tap.fifo
	stalled tap.fifo got.msg
	timeout -k 10 60 msg-tap tap.fifo <"$big" >/dev/null 2>err
	touch go
	wait "$spawned"
	local copied
	read -r copied _ <<<"$(tap_report "$(cat err)" tap.fifo)"
	# Every frame it holds is whole, and a frame counted as copied is
	# one the reader can read.
	msg-unwrap -e got.msg >got.jsonl
	[ "$(wc -l <got.jsonl)" = "$copied" ]
}

@test "tap fifo: no reader at all: the flow completes, every copy dropped and counted" {
	local big=$BATS_FILE_TMPDIR/big.msg
	mkfifo tap.fifo
	# Drop is the default for a FIFO.
	timeout -k 10 60 msg-tap --stats tap.fifo <"$big" >out.msg 2>err
	[ "$(cat err)" = "msg-tap: tap 'tap.fifo': 0 copied, 1600 dropped, reopened 0 times
msg-tap: stats: in 1600, tapped 0, dropped 1600" ]
	cmp out.msg "$big"
	# The same for a summary tap.
	frame one >in.msg
	run -0 --separate-stderr timeout -k 10 60 msg-tap -F summary tap.fifo <in.msg
	[ "$stderr" = "msg-tap: tap 'tap.fifo': 0 copied, 1 dropped, reopened 0 times" ]
}

@test "tap fifo: a reader that comes late gets whole frames only" {
	local tap reader i
	mkfifo tap.fifo
	open_input
	spawn timeout -k 10 60 msg-tap --stats tap.fifo <in >out.msg 2>err
	tap=$spawned
	for i in 1 2 3; do big $i; done
	wait_until 60 has 3 out.msg
	spawn timeout -k 10 60 msg-unwrap -e tap.fifo >got.jsonl
	reader=$spawned
	# The tap looks for a reader when a message comes: send until one
	# reaches it, then five more.
	while [ ! -s got.jsonl ] && [ "$i" -lt 200 ]; do
		i=$((i + 1))
		big $i
		sleep 0.05
	done
	for _ in 1 2 3 4 5; do
		i=$((i + 1))
		big $i
	done
	exec 7>&-
	wait "$tap"
	wait "$reader"
	[ "$(count out.msg)" = "$i" ]
	# Whole frames only (msg-unwrap read them all without a fault), each
	# body intact, and none of the three sent before the reader came.
	local n
	n=$(wc -l <got.jsonl)
	[ "$n" -ge 5 ]
	[ "$(jq -r '.body | length' got.jsonl | sort -u)" = 200000 ]
	[ -z "$(jq -r 'select((.body[0:6] | tonumber) != (.headers.Seq | tonumber)) | "bad"' got.jsonl)" ]
	[ "$(jq -r '.headers.Seq' got.jsonl | head -1)" -gt 3 ]
	jq -r '.body[0:6]' got.jsonl >seqs
	increasing seqs
	# What came before the reader was dropped; it was opened once it came.
	local report copied dropped
	report=$(tap_report "$(cat err)" tap.fifo)
	read -r copied dropped _ <<<"$report"
	[ "$report" = "$copied $dropped 1" ]
	[ "$((copied + dropped))" = "$i" ]
	[ "$dropped" -ge 3 ]
	[ "$copied" -ge "$n" ]
}

@test "tap fifo: a reader that goes away and comes back: the flow goes on, reopened" {
	local tap first second i=0
	mkfifo tap.fifo
	open_input
	# The first reader, there before the tap, takes 1,000 bytes and
	# leaves in the middle of a frame.
	spawn timeout -k 10 60 perl -e '
		use Fcntl;
		sysopen(my $f, $ARGV[0], O_RDWR) or die "$ARGV[0]: $!";
		open(my $r, ">", "ready") or die; close $r;
		my ($buf, $got) = ("", 0);
		while ($got < 1000) {
			my $n = sysread($f, $buf, 1000 - $got, $got) or die;
			$got += $n;
		}
		print $buf;' tap.fifo >first.bin
	first=$spawned
	wait_until 60 test -e ready
	spawn timeout -k 10 60 msg-tap --stats tap.fifo <in >out.msg 2>err
	tap=$spawned
	while kill -0 "$first" 2>/dev/null && [ "$i" -lt 100 ]; do
		i=$((i + 1))
		big $i
		sleep 0.05
	done
	wait "$first"
	[ "$(wc -c <first.bin)" = 1000 ]
	# Two more with nobody there.
	for _ in 1 2; do
		i=$((i + 1))
		big $i
	done
	wait_until 60 has "$i" out.msg
	spawn timeout -k 10 60 msg-unwrap -e tap.fifo >second.jsonl
	second=$spawned
	while [ ! -s second.jsonl ] && [ "$i" -lt 200 ]; do
		i=$((i + 1))
		big $i
		sleep 0.05
	done
	for _ in 1 2 3; do
		i=$((i + 1))
		big $i
	done
	exec 7>&-
	wait "$tap"
	wait "$second"
	# The flow lost nothing.
	[ "$(count out.msg)" = "$i" ]
	[ "$(msg-unwrap -H out.msg | sed -n 's/^Seq: //p' | paste -sd ' ')" = "$(seq -s ' ' "$i")" ]
	# The second reader got whole, intact frames, in order.
	[ "$(wc -l <second.jsonl)" -ge 3 ]
	[ "$(jq -r '.body | length' second.jsonl | sort -u)" = 200000 ]
	jq -r '.body[0:6]' second.jsonl >seqs
	increasing seqs
	# Each whole frame the second reader got was counted as copied.
	local report copied dropped
	report=$(tap_report "$(cat err)" tap.fifo)
	read -r copied dropped _ <<<"$report"
	[ "$report" = "$copied $dropped 1" ]
	[ "$((copied + dropped))" = "$i" ]
	[ "$copied" -ge "$(wc -l <second.jsonl)" ]
}

@test "tap fifo: --if-full block waits for the reader and copies everything" {
	local big=$BATS_FILE_TMPDIR/big.msg reader
	mkfifo tap.fifo
	spawn timeout -k 10 60 cat tap.fifo >got.msg
	reader=$spawned
	run -0 --separate-stderr timeout -k 10 60 msg-tap --stats --if-full block tap.fifo <"$big"
	wait "$reader"
	[ "$stderr" = "msg-tap: stats: in 1600, tapped 1600, dropped 0" ]
	cmp got.msg "$big"
}

@test "tap fifo: a body larger than --buffer is dropped whole from a drop tap, counted" {
	local frames sums
	frame small1 'Message-Id: s1' >in.msg
	head -c 300000 /dev/zero | tr '\0' z | msg-wrap -H 'Message-Id: big' >>in.msg
	frame small2 'Message-Id: s2' >>in.msg
	mkfifo tap.fifo sum.fifo
	stalled tap.fifo got.msg
	frames=$spawned
	timeout -k 10 30 msg-tap --buffer 64K --stats tap.fifo <in.msg >out.msg 2>err
	cmp out.msg in.msg
	[ "$(cat err)" = "msg-tap: tap 'tap.fifo': 2 copied, 1 dropped, reopened 0 times
msg-tap: stats: in 3, tapped 2, dropped 1" ]
	# A summary tap still gets a line for it.
	stalled sum.fifo sum.txt
	sums=$spawned
	timeout -k 10 30 msg-tap --buffer 64K -F summary sum.fifo <in.msg | cmp - in.msg
	touch go
	wait "$frames"
	wait "$sums"
	frames in.msg 1 3 | cmp - got.msg
	[ "$(cut -d' ' -f2,4 sum.txt | paste -sd ' ')" = "s1 6 big 300000 s2 6" ]
}

@test "tap fifo: --stats-interval reports drops while the flow runs" {
	local tap i
	mkfifo tap.fifo
	open_input
	spawn timeout -k 10 60 msg-tap --stats-interval 100ms tap.fifo <in >out.msg 2>err
	tap=$spawned
	for i in 1 2 3 4 5; do
		frame "$i" >&7
		sleep 0.15
	done
	exec 7>&-
	wait "$tap"
	[ "$(count out.msg)" = 5 ]
	# At least two reports while it ran, then the one at the end.
	[ "$(grep -c "^msg-tap: tap 'tap.fifo': 0 copied, [1-5] dropped, reopened 0 times$" err)" -ge 3 ]
	[ "$(tail -n 1 err)" = "msg-tap: tap 'tap.fifo': 0 copied, 5 dropped, reopened 0 times" ]
}
