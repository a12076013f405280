#!/usr/bin/env bats
# msg-resequence with --state: waiting messages kept across runs (one
# file a run, as from cron), gaps whose deadlines, skipped numbers,
# Sequence-Size, --forget and complete groups survive a restart; SIGKILL
# at random points while it reorders a spool (tests/crash/run.sh) and
# while it flushes at the end: restarted until done, every number of
# every group comes out, in order, nothing waiting lost, copies only of
# what was in flight; SIGTERM stops it with nothing twice; a disk that
# fails under the store or the output (tests/faults) stops it cleanly
# for a rerun to finish; a damaged store is refused, by name.

load test_helper
bats_require_minimum_version 1.5.0
load fixtures/aggregate/aggregate
load crash/build
load crash/startup

setup_file() {
	cc_preload "$BATS_FILE_TMPDIR/faultinject.so" "$MSG_TOP/tests/faults/faultinject.c"
	# The kill windows start from the time msg-resequence takes to start
	# on an empty store: milliseconds as built, a third of a second more
	# under AddressSanitizer.
	STARTUP_MS=$(fastest_ms msg-resequence --state "$BATS_FILE_TMPDIR/probe" --once </dev/null)
	export STARTUP_MS
	# The crash test's work is four times that of 500 messages.
	local cal=$BATS_FILE_TMPDIR/calibrate t0 t1
	shuffled_spool "$cal" 5 100 50 1
	t0=${EPOCHREALTIME/./}
	msg-resequence --state "$cal.st" --once --output "dir:$cal.out" "dir:$cal"
	t1=${EPOCHREALTIME/./}
	kill_plan $(((t1 - t0) * 4 / 1000))
}

rsq() {
	timeout -k 5 60 msg-resequence "$@" >out.msg 2>err.txt
}

# numbered ID KEY NUMBER [HEADER...]: message NUMBER of the sequence KEY
# (the global one when KEY is empty), its body its id.
numbered() {
	local id=$1 key=$2 num=$3
	shift 3
	frame "$id" "Message-Id: $id" ${key:+"Correlation-Id: $key"} \
		"Sequence-Number: $num" "$@"
}

# same_as FILE: FILE holds exactly the frames on the standard input.
same_as() {
	diff -u - "$1"
}

# rsq_stats NAME=VALUE...: the --stats line of msg-resequence with
# those counters (the rest are 0).
rsq_stats() {
	local -A c=()
	local kv name line='msg-resequence: stats:' sep=' '
	for kv in "$@"; do
		c[${kv%%=*}]=${kv#*=}
	done
	for name in in out gaps skipped late duplicates invalid expired waiting most; do
		line="$line$sep$name ${c[$name]:-0}"
		sep=', '
	done
	printf '%s\n' "$line"
}

# shuffled_spool DIR GROUPS COUNT WINDOW SEED [HOLE]: a dir: spool DIR
# holding GROUPS sequences g01.. of COUNT messages each, message n of
# group g with body and Message-Id "gGG-NNNN". They are sent round the
# groups, number after number, and then shuffled within each run of
# WINDOW messages (repeatably, by SEED), so that about WINDOW messages
# wait at once. The even groups carry Sequence-Size on every message,
# so they end complete; the odd ones never say how long they are, and
# lack number HOLE when it is given, so that all after it wait for the
# end of input. Written as a writer of the format does: to tmp/,
# renamed into new/ under names that sort in arrival order.
shuffled_spool() {
	perl -e '
		my ($dir, $groups, $count, $window, $seed, $hole) = @ARGV;
		srand($seed);
		for my $sub ("", "/tmp", "/new", "/cur") {
			mkdir "$dir$sub", 0700 or $!{EEXIST} or die "$dir$sub: $!";
		}
		my @order;
		for my $n (1 .. $count) {
			push @order, [$_, $n] for 1 .. $groups;
		}
		for (my $lo = 0; $lo < @order; $lo += $window) {
			my $hi = $lo + $window - 1;
			$hi = $#order if $hi > $#order;
			for (my $i = $hi; $i > $lo; $i--) {
				my $j = $lo + int(rand($i - $lo + 1));
				@order[$i, $j] = @order[$j, $i];
			}
		}
		my $k = 0;
		for my $m (@order) {
			my ($g, $n) = @$m;
			next if $hole && $g % 2 && $n == $hole;
			my $id = sprintf "g%02d-%04d", $g, $n;
			my $h = sprintf "Message-Id: %s\nCorrelation-Id: g%02d\n"
				. "Sequence-Number: %d\n", $id, $g, $n;
			$h .= "Sequence-Size: $count\n" if $g % 2 == 0;
			my $name = sprintf "%07d.msg", ++$k;
			open my $f, ">", "$dir/tmp/$name" or die "$dir/tmp/$name: $!";
			printf $f "%sContent-Length: %d\n\n%s\n", $h, length $id, $id;
			close $f or die "$dir/tmp/$name: $!";
			rename "$dir/tmp/$name", "$dir/new/$name" or die "$name: $!";
		}' "$@"
}

# check_sequences OUT GROUPS COUNT [HOLE]: the messages in the spool OUT,
# of a shuffled_spool of GROUPS groups of COUNT (and HOLE), in the order
# they were written: each whole and unchanged, and, once the second and
# later copies of a number are left out, every group's numbers 1 to
# COUNT in order, none missing but the hole of the odd groups, the
# number after it marked as a gap, and no other gap marked. Prints how
# many copies there were beyond one; fails, saying why, if anything is
# wrong.
check_sequences() {
	spooled_frames "$1" >results.msg
	fields results.msg Correlation-Id Sequence-Number Resequence-Gap >results.tsv
	awk -F '\t' -v groups="$2" -v count="$3" -v hole="${4:-0}" '
		{
			holed = hole && substr($1, 2) % 2
			gap = holed && $2 == hole + 1 ? hole : "-"
			if ($4 != sprintf("%s-%04d", $1, $2) || $3 != gap) {
				print "bad message: " $0
				bad = 1
			}
			if (($1, $2) in seen) {
				extra++
				next
			}
			seen[$1, $2] = 1
			want = last[$1] + 1
			if (holed && want == hole)
				want++
			if ($2 != want) {
				print "group " $1 ": " $2 " after " last[$1] + 0
				bad = 1
			}
			last[$1] = $2
		}
		END {
			for (g = 1; g <= groups; g++) {
				key = sprintf("g%02d", g)
				if (last[key] != count) {
					print "group " key " ends at " last[key] + 0
					bad = 1
				}
				delete last[key]
			}
			for (key in last) {
				print "unknown group " key
				bad = 1
			}
			print "extra copies: " extra + 0
			exit bad
		}' results.tsv
}

# only_rereads [GAPS]: each line of $stderr_lines but the last is the
# warning for a message read again after a stop, whose number was
# already emitted or stored, or whose group was complete; the last is
# the stats line of a run that ended with nothing waiting, having
# skipped GAPS gaps of one number each (default none).
only_rereads() {
	local line n=${#stderr_lines[@]} i gaps=${1:-0}
	for ((i = 0; i < n - 1; i++)); do
		line=${stderr_lines[i]}
		[[ $line =~ ^msg-resequence:\ warning:\ message\ g[0-9]{2}-[0-9]{4}:\ (duplicate:\ sequence\ number\ [0-9]+\ (was\ already\ emitted|is\ already\ waiting)|late:\ its\ group\ is\ complete)\;\ dropped$ ]] ||
			{ echo "unexpected: $line"; return 1; }
	done
	[[ ${stderr_lines[n - 1]} =~ ^msg-resequence:\ stats:\ in\ [0-9]+,\ out\ [0-9]+,\ gaps\ $gaps,\ skipped\ $gaps,\ late\ [0-9]+,\ duplicates\ [0-9]+,\ invalid\ 0,\ expired\ 0,\ waiting\ 0,\ most\ [0-9]+$ ]]
}

# spool_then_fault SETTING...: 200 messages in 10 groups, shuffled, in
# the spool in, resequenced with --state st and the faults SETTING...;
# $status and $stderr as run leaves them.
spool_then_fault() {
	shuffled_spool in 10 20 40 5
	run --separate-stderr faulty "$@" -- timeout -k 5 60 msg-resequence --state st \
		--once --output dir:out dir:in
	echo "status $status: $stderr"
}

# stopped STATUS TEXT: the run of spool_then_fault exited with STATUS
# and one diagnostic, ending in TEXT.
stopped() {
	[ "$status" = "$1" ]
	[[ $stderr == "msg-resequence: "*"$2" ]]
	[ "${#stderr_lines[@]}" = 1 ]
}

# rerun_completes: without faults, the next run finishes the spool:
# every number out, in order; a copy at most of one batch (64 messages
# and the 40 or so they release) written before the failed commit.
rerun_completes() {
	run -0 --separate-stderr timeout -k 5 60 msg-resequence --state st \
		--once --stats --output dir:out dir:in
	echo "$stderr"
	only_rereads
	[ "$(find in/new in/cur -type f | wc -l)" = 0 ]
	[ "$(find in/bad -type f 2>/dev/null | wc -l)" = 0 ]
	run -0 check_sequences out 10 20
	echo "$output"
	[[ ${lines[-1]} =~ ^extra\ copies:\ ([0-9]+)$ ]]
	[ "${BASH_REMATCH[1]}" -le 104 ]
}

# damage_values LOG KIND: every put of a record of KIND in the store log
# LOG gets as many bytes of garbage for its value, under a checksum that
# matches them: damage no checksum can catch (a bug, or a disk that
# returns another whole block). Prints how many records it damaged.
damage_values() {
	perl -e '
		my ($log, $kind) = @ARGV;
		my @table = map {
			my $c = $_;
			$c = $c & 1 ? ($c >> 1) ^ 0x82f63b78 : $c >> 1 for 1 .. 8;
			$c
		} 0 .. 255;
		sub crc32c {
			my $c = 0xffffffff;
			$c = ($c >> 8) ^ $table[($c ^ $_) & 0xff] for unpack "C*", $_[0];
			return $c ^ 0xffffffff;
		}
		open my $f, "+<:raw", $log or die "$log: $!\n";
		my $s = do { local $/; <$f> };
		my ($at, $n) = (32, 0);
		while ($at + 24 <= length $s) {
			my ($type, $kl, $keyl, $vl) = unpack "x4 a C v Q<", substr($s, $at, 16);
			my $len = 24 + $kl + $keyl + $vl;
			if ($type eq "P" && substr($s, $at + 24, $kl) eq $kind) {
				substr($s, $at + 24 + $kl + $keyl, $vl) = "\xff" x $vl;
				substr($s, $at, 4) = pack "V", crc32c(substr($s, $at + 4, $len - 4));
				$n++;
			}
			$at += $len;
		}
		seek $f, 0, 0 or die "$log: $!\n";
		print $f $s or die "$log: $!\n";
		close $f or die "$log: $!\n";
		print "$n\n";
	' "$@"
}

# ---- across runs ----

@test "state: --at-end keep across runs: 1, 3, 5 emit 1; then 2, 4 emit 2, 3, 4, 5" {
	{
		numbered m1 A 1
		numbered m3 A 3
		numbered m5 A 5
	} >run1.msg
	{
		numbered m2 A 2
		numbered m4 A 4
	} >run2.msg
	run -0 rsq --state st --stats run1.msg
	numbered m1 A 1 | same_as out.msg
	rsq_stats in=3 out=1 waiting=2 most=2 >expect
	expect_same expect err.txt
	[ "$(stat -c %a st)" = 700 ]
	[ "$(stat -c %a st/log.* st/lock st/version | sort -u)" = 600 ]

	run -0 rsq --state st --stats run2.msg
	{
		numbered m2 A 2
		numbered m3 A 3
		numbered m4 A 4
		numbered m5 A 5
	} | same_as out.msg
	rsq_stats in=2 out=4 waiting=0 most=2 >expect
	expect_same expect err.txt

	# Nothing is left for the next run.
	run -0 rsq --state st --at-end flush --stats </dev/null
	[ ! -s out.msg ]
	rsq_stats >expect
	expect_same expect err.txt
}

@test "state: --at-end flush ends what earlier runs kept, gaps marked, groups as first seen" {
	{
		numbered z1 Z 1
		numbered z3 Z 3
		numbered a2 A 2
		numbered z6 Z 6
	} >run1.msg
	run -0 rsq --state st run1.msg
	numbered z1 Z 1 | same_as out.msg
	[ ! -s err.txt ]
	run -0 rsq --state st --at-end flush --stats </dev/null
	{
		numbered z3 Z 3 'Resequence-Gap: 2'
		numbered z6 Z 6 'Resequence-Gap: 4-5'
		numbered a2 A 2 'Resequence-Gap: 1'
	} | same_as out.msg
	rsq_stats out=3 gaps=3 skipped=4 most=3 >expect
	expect_same expect err.txt
	# What each group expects next, and what it skipped, were kept: 7
	# follows at once, 2 is late.
	{
		numbered z7 Z 7
		numbered z2 Z 2
	} >run3.msg
	run -0 rsq --state st --late late.msg --stats run3.msg
	numbered z7 Z 7 | same_as out.msg
	numbered z2 Z 2 'Error: msg-resequence: late: sequence number 2 was skipped as a gap' |
		same_as late.msg
	rsq_stats in=2 out=1 late=1 >expect
	expect_same expect err.txt
}

@test "state: --at-end fail leaves what waits in the state for a later run" {
	{
		numbered a1 A 1
		numbered a3 A 3
		numbered b2 B 2
	} >run1.msg
	run -65 rsq --state st --at-end fail run1.msg
	numbered a1 A 1 | same_as out.msg
	echo 'msg-resequence: 2 messages in 2 groups still waiting at the end of input' >expect
	expect_same expect err.txt
	{
		numbered b1 B 1
		numbered a2 A 2
	} >run2.msg
	run -0 rsq --state st --at-end fail run2.msg
	{
		numbered b1 B 1
		numbered b2 B 2
		numbered a2 A 2
		numbered a3 A 3
	} | same_as out.msg
	[ ! -s err.txt ]
}

@test "state: duplicates and complete groups are told across runs" {
	{
		numbered a1 A 1
		numbered a3 A 3
		numbered c1 C 1 'Sequence-Size: 2'
		numbered c2 C 2 'Sequence-Size: 2'
	} >run1.msg
	{
		numbered a1 A 1
		numbered a3 A 3
		numbered c2 C 2 'Sequence-Size: 2'
		numbered a2 A 2
	} >run2.msg
	run -0 rsq --state st run1.msg
	[ ! -s err.txt ]
	run -0 rsq --state st --stats run2.msg
	{
		numbered a2 A 2
		numbered a3 A 3
	} | same_as out.msg
	{
		echo 'msg-resequence: warning: message a1: duplicate: sequence number 1 was already emitted; dropped'
		echo 'msg-resequence: warning: message a3: duplicate: sequence number 3 is already waiting; dropped'
		echo 'msg-resequence: warning: message c2: late: its group is complete; dropped'
		rsq_stats in=4 out=2 late=1 duplicates=2 most=1
	} >expect
	expect_same expect err.txt
}

@test "state: a Sequence-Size learnt in one run bounds the group in the next" {
	{
		numbered a1 A 1
		numbered a3 A 3 'Sequence-Size: 3'
	} >run1.msg
	{
		numbered a4 A 4
		numbered a2 A 2
		numbered a2b A 2
	} >run2.msg
	run -0 rsq --state st run1.msg
	numbered a1 A 1 | same_as out.msg
	run -0 rsq --state st --invalid inv.msg --late late.msg --stats run2.msg
	{
		numbered a2 A 2
		numbered a3 A 3 'Sequence-Size: 3'
	} | same_as out.msg
	numbered a4 A 4 'Error: msg-resequence: sequence number 4 is past Sequence-Size 3' |
		same_as inv.msg
	# A ended with its third number: complete, so a2b is late.
	numbered a2b A 2 'Error: msg-resequence: late: its group is complete' | same_as late.msg
	[ "$(grep -c '^msg-resequence: warning: ' err.txt)" = 1 ]
	[ "$(tail -n 1 err.txt)" = "$(rsq_stats in=3 out=2 late=1 invalid=1 most=1)" ]
}

@test "state: a gap keeps its deadline across restarts (--clock event)" {
	numbered a1 A 1 "$(at 0)" >run1.msg
	numbered a3 A 3 "$(at 10)" >>run1.msg
	numbered b1 B 1 "$(at 30)" >run2.msg
	numbered b2 B 2 "$(at 80)" >run3.msg
	numbered a2 A 2 "$(at 90)" >run4.msg
	run -0 rsq --state st -T 1m --clock event run1.msg
	numbered a1 A 1 "$(at 0)" | same_as out.msg
	# 30 s: A's gap, due at 70 s, still waits.
	run -0 rsq --state st -T 1m --clock event --stats run2.msg
	numbered b1 B 1 "$(at 30)" | same_as out.msg
	rsq_stats in=1 out=1 waiting=1 most=1 >expect
	expect_same expect err.txt
	# 80 s: past it, checked before b2 is handled: 3 goes out, marked.
	run -0 rsq --state st -T 1m --clock event --stats run3.msg
	{
		numbered a3 A 3 "$(at 10)" 'Resequence-Gap: 2'
		numbered b2 B 2 "$(at 80)"
	} | same_as out.msg
	rsq_stats in=1 out=2 gaps=1 skipped=1 most=1 >expect
	expect_same expect err.txt
	# The skipped number was kept too: 2 is late.
	run -0 rsq --state st -T 1m --clock event --late late.msg run4.msg
	[ ! -s out.msg ]
	[ ! -s err.txt ]
	numbered a2 A 2 "$(at 90)" \
		'Error: msg-resequence: late: sequence number 2 was skipped as a gap' | same_as late.msg
}

@test "state: a gap and an idle group keep their wall-clock deadlines across restarts" {
	local t0 ms
	{
		numbered a1 A 1
		numbered a3 A 3
		numbered b1 B 1
	} >run1.msg
	numbered b1x B 1 >run3.msg
	t0=${EPOCHREALTIME/./}
	run -0 rsq --state st -T 3s --forget 3s run1.msg
	{
		numbered a1 A 1
		numbered b1 B 1
	} | same_as out.msg
	# Within the deadline (when the machine was quick enough to tell):
	# still waiting.
	run -0 rsq --state st -T 3s --forget 3s </dev/null
	ms=$(((${EPOCHREALTIME/./} - t0) / 1000))
	if [ "$ms" -lt 2500 ]; then
		[ ! -s out.msg ]
	fi
	if [ "$ms" -lt 4000 ]; then
		sleep "$(((4000 - ms) / 1000)).$(printf %03d $(((4000 - ms) % 1000)))"
	fi
	# Past both: the next run skips A's gap at once, and B, which heard
	# nothing for longer than --forget, starts anew.
	run -0 rsq --state st -T 3s --forget 3s --stats run3.msg
	{
		numbered a3 A 3 'Resequence-Gap: 2'
		numbered b1x B 1
	} | same_as out.msg
	rsq_stats in=1 out=2 gaps=1 skipped=1 most=1 >expect
	expect_same expect err.txt
}

@test "state: --forget by event time across restarts: an idle group starts anew, a complete one is late until then" {
	numbered a1 A 1 "$(at 0)" >run1.msg
	numbered c1 C 1 "$(at 0)" 'Sequence-Size: 1' >>run1.msg
	numbered c1b C 1 "$(at 30)" 'Sequence-Size: 1' >run2.msg
	numbered b1 B 1 "$(at 120)" >run3.msg
	numbered a1x A 1 "$(at 130)" >run4.msg
	numbered c1c C 1 "$(at 131)" 'Sequence-Size: 1' >>run4.msg
	run -0 rsq --state st --clock event --forget 1m run1.msg
	[ "$(grep -c '^Message-Id: ' out.msg)" = 2 ]
	# 30 s: C completed at 0 is remembered for a minute.
	run -0 rsq --state st --clock event --forget 1m --late late.msg run2.msg
	[ ! -s out.msg ]
	numbered c1b C 1 "$(at 30)" 'Sequence-Size: 1' \
		'Error: msg-resequence: late: its group is complete' | same_as late.msg
	run -0 rsq --state st --clock event --forget 1m run3.msg
	numbered b1 B 1 "$(at 120)" | same_as out.msg
	# Past the minute: A, idle, and C, complete, were forgotten; each
	# starts again from 1.
	run -0 rsq --state st --clock event --forget 1m --stats run4.msg
	{
		numbered a1x A 1 "$(at 130)"
		numbered c1c C 1 "$(at 131)" 'Sequence-Size: 1'
	} | same_as out.msg
	rsq_stats in=2 out=2 >expect
	expect_same expect err.txt
}

@test "state: --start first keeps an undecided group across runs until its window fills" {
	{
		numbered a5 A 5
		numbered a7 A 7
	} >run1.msg
	{
		numbered a6 A 6
		numbered a4 A 4
	} >run2.msg
	run -0 rsq --state st --start first --window 3 --stats run1.msg
	[ ! -s out.msg ]
	rsq_stats in=2 waiting=2 most=2 >expect
	expect_same expect err.txt
	# The third message decides the start, 5: 4 then comes too late.
	run -0 rsq --state st --start first --window 3 --late late.msg --stats run2.msg
	{
		numbered a5 A 5
		numbered a6 A 6
		numbered a7 A 7
	} | same_as out.msg
	numbered a4 A 4 'Error: msg-resequence: late: sequence number 4 was skipped as a gap' |
		same_as late.msg
	rsq_stats in=2 out=3 late=1 most=3 >expect
	expect_same expect err.txt
}

@test "state: a restart takes back every waiting message whatever -C; the next that must wait makes room" {
	{
		numbered a1 A 1
		numbered a3 A 3
		numbered a5 A 5
		numbered a7 A 7
		numbered b2 B 2
	} >run1.msg
	numbered c2 C 2 >run2.msg
	{
		numbered a2 A 2
		numbered a6 A 6
		numbered b1 B 1
	} >run3.msg
	run -0 rsq --state st --stats run1.msg
	numbered a1 A 1 | same_as out.msg
	# One message allowed now: the four stored come back, and c2, which
	# must wait, skips gaps to fit, the oldest first: A's three, then B's.
	run -0 rsq --state st -C 1 --stats run2.msg
	{
		numbered a3 A 3 'Resequence-Gap: 2'
		numbered a5 A 5 'Resequence-Gap: 4'
		numbered a7 A 7 'Resequence-Gap: 6'
		numbered b2 B 2 'Resequence-Gap: 1'
	} | same_as out.msg
	rsq_stats in=1 out=4 gaps=4 skipped=4 waiting=1 most=4 >expect
	expect_same expect err.txt
	# The numbers skipped were kept: those that come now are late.
	run -0 rsq --state st --late late.msg --stats run3.msg
	[ ! -s out.msg ]
	[ "$(grep -c '^Error: msg-resequence: late: sequence number [216] was skipped as a gap$' late.msg)" = 3 ]
	rsq_stats in=3 late=3 waiting=1 most=1 >expect
	expect_same expect err.txt
}

@test "state: --on-full fail leaves the spool for a later run with more room" {
	shuffled_spool in 10 20 40 5
	run -75 rsq --state st -C 5 --on-full fail --once --output dir:out dir:in
	[ "$(grep -c . err.txt)" = 1 ]
	grep -qx 'msg-resequence: capacity of 5 messages (-C) reached at message g[0-9][0-9]-[0-9]\{4\}' err.txt
	[ "$(find in/new in/cur -type f | wc -l)" = 200 ]
	[ "$(find in/bad -type f 2>/dev/null | wc -l)" = 0 ]
	run -0 rsq --state st -C 100 --on-full fail --once --output dir:out dir:in
	[ ! -s err.txt ]
	[ "$(find in/new in/cur -type f | wc -l)" = 0 ]
	run -0 check_sequences out 10 20
	echo "$output"
	[ "${lines[-1]}" = 'extra copies: 0' ]
}

@test "state: a second instance on the same state directory exits 75" {
	shuffled_spool in 2 2 4 1
	run -0 rsq --state st </dev/null
	run -75 --separate-stderr flock st/lock msg-resequence --state st --once \
		--output dir:out dir:in
	[ "$stderr" = "msg-resequence: cannot lock 'st/lock': state directory busy" ]
	[ -z "$output" ]
	# Nothing was taken.
	[ "$(find in/new -type f | wc -l)" = 4 ]
	[ ! -e out ] || [ "$(find out -type f | wc -l)" = 0 ]
}

@test "state: --batch with --state, or --at-end keep without it, is a usage error that makes no store" {
	run -64 --separate-stderr msg-resequence --batch --state st </dev/null
	[ "${stderr_lines[0]}" = 'msg-resequence: --batch cannot be used with --state' ]
	[[ ${stderr_lines[1]} == 'usage: msg-resequence '* ]]
	[ -z "$output" ]
	[ ! -e st ]
	run -64 --separate-stderr msg-resequence --at-end keep </dev/null
	[ "${stderr_lines[0]}" = 'msg-resequence: --at-end keep needs --state' ]
	[[ ${stderr_lines[1]} == 'usage: msg-resequence '* ]]
	[ -z "$output" ]
}

# ---- a damaged store ----

@test "damaged: a log whose header is not a store's: exit 65, the spool untouched" {
	numbered a1 A 1 >run1.msg
	numbered a3 A 3 >>run1.msg
	run -0 rsq --state st run1.msg
	shuffled_spool in 2 2 4 1
	printf 'garbage!' | dd of=st/log.0000000000000001 conv=notrunc status=none
	run -65 --separate-stderr timeout -k 5 60 msg-resequence --state st --once \
		--output dir:out dir:in
	[[ $stderr == "msg-resequence: "*"'st/log.0000000000000001': not a message store log" ]]
	[ "${#stderr_lines[@]}" = 1 ]
	[ "$(find in/new -type f | wc -l)" = 4 ]
	[ ! -e out ] || [ "$(find out -type f | wc -l)" = 0 ]
}

@test "damaged: a store of a newer format: exit 65, left as it is" {
	run -0 rsq --state st </dev/null
	echo 'msg-store 2' >st/version
	run -65 --separate-stderr timeout -k 5 60 msg-resequence --state st </dev/null
	[[ $stderr == "msg-resequence: "*"'st': store format 2 was written by a newer msgtools; this one reads format 1 and older" ]]
	[ "${#stderr_lines[@]}" = 1 ]
	[ "$(cat st/version)" = 'msg-store 2' ]
}

@test "damaged: a record that does not decode: exit 65, the store named, nothing emitted or taken" {
	local kind
	{
		numbered a1 A 1
		numbered a3 A 3 'Sequence-Size: 3'
		numbered c1 C 1 'Sequence-Size: 1'
	} >run1.msg
	run -0 rsq --state st run1.msg
	# A message waiting, a group's numbers, a complete group's key.
	for kind in rsq-wait rsq-group rsq-done; do
		rm -rf "st.$kind" in out
		cp -a st "st.$kind"
		run -0 damage_values "st.$kind/log.0000000000000001" "$kind"
		[ "$output" -ge 1 ]
		cp "st.$kind/log.0000000000000001" damaged.log
		shuffled_spool in 2 2 4 1
		run -65 --separate-stderr timeout -k 5 60 msg-resequence --state "st.$kind" \
			--once --output dir:out dir:in
		echo "$kind: $stderr"
		[ "${#stderr_lines[@]}" = 1 ]
		[[ $stderr == "msg-resequence: "*"'st.$kind"* ]]
		[[ $stderr != *"no error"* ]]
		[ "$(find in/new -type f | wc -l)" = 4 ]
		[ ! -e out ] || [ "$(find out -type f | wc -l)" = 0 ]
		# The store is left as it was found, for someone to look at.
		cmp damaged.log "st.$kind/log.0000000000000001"
	done
}

# ---- a failing disk under the store ----

@test "faults: EIO writing the store: exit 74, then a rerun completes" {
	spool_then_fault FAULT_FUNCS=write FAULT_PATH='*/st/log.*' FAULT_AT=3
	stopped 74 "cannot write 'st/log.0000000000000001': Input/output error"
	[ "$(wc -l <faults.log)" = 1 ]
	[ "$(find in/new in/cur -type f | wc -l)" -gt 0 ]
	rerun_completes
}

@test "faults: a disk that stays full: exit 75, then a rerun completes" {
	spool_then_fault FAULT_FUNCS=write FAULT_PATH='*/st/log.*' FAULT_AT=3 \
		FAULT_COUNT=0 FAULT_ERRNO=ENOSPC
	stopped 75 "cannot write 'st/log.0000000000000001': No space left on device"
	[ "$(find in/new in/cur -type f | wc -l)" -gt 0 ]
	rerun_completes
}

@test "faults: a write that fills the disk halfway: exit 75, the torn tail is dropped" {
	spool_then_fault FAULT_FUNCS=write FAULT_PATH='*/st/log.*' FAULT_AT=3 \
		FAULT_ERRNO=ENOSPC FAULT_PARTIAL=1
	stopped 75 "cannot write 'st/log.0000000000000001': No space left on device"
	rerun_completes
}

@test "faults: fsync EIO on the store: exit 74, then a rerun completes" {
	spool_then_fault FAULT_FUNCS=fsync FAULT_PATH='*/st/log.*' FAULT_AT=2
	stopped 74 "cannot sync 'st/log.0000000000000001': Input/output error"
	rerun_completes
}

@test "faults: fsync ENOSPC on the store: exit 75, then a rerun completes" {
	spool_then_fault FAULT_FUNCS=fsync FAULT_PATH='*/st/log.*' FAULT_AT=2 FAULT_ERRNO=ENOSPC
	stopped 75 "cannot sync 'st/log.0000000000000001': No space left on device"
	rerun_completes
}

@test "faults: the output spool's disk fails: exit 74, nothing taken, then a rerun completes" {
	spool_then_fault FAULT_FUNCS=fsync FAULT_PATH='*/out/tmp/*' FAULT_AT=10
	stopped 74 "cannot write 'dir:out': Input/output error"
	[ "$(wc -l <faults.log)" = 1 ]
	# What the first batch let out was never renamed into out/new; its
	# messages stay in the spool in, and in the store.
	[ "$(find in/new in/cur -type f | wc -l)" = 200 ]
	[ ! -e out/new ] || [ "$(find out/new -type f | wc -l)" = 0 ]
	rerun_completes
}

@test "faults: below the store's free-space margin: exit 75, nothing taken" {
	shuffled_spool in 2 2 4 1
	MSG_STORE_MIN_FREE=1000000T run -75 --separate-stderr timeout -k 5 60 \
		msg-resequence --state st --once --output dir:out dir:in
	[[ $stderr == "msg-resequence: "*"cannot store in 'st': less than "*" bytes would be left free: No space left on device" ]]
	[ "${#stderr_lines[@]}" = 1 ]
	[ "$(find in/new in/cur -type f | wc -l)" = 4 ]
	[ ! -e out ] || [ "$(find out -type f | wc -l)" = 0 ]
}

# ---- SIGKILL at random points ----

@test "crash: SIGTERM mid-spool stops cleanly: the next run finishes with nothing twice" {
	local pid
	shuffled_spool in 20 100 50 11 50
	spawn msg-resequence --state st --output dir:out dir:in 2>term.err
	pid=$spawned
	wait_until 60 eval '[ "$(find out/new -type f 2>/dev/null | wc -l)" -ge 20 ]'
	kill -TERM "$pid"
	exit_status "$pid" 30
	[ "$status" = 0 ]
	[ ! -s term.err ]
	echo "out at the stop: $(find out/new -type f | wc -l)"
	[ "$(find in/new in/cur -type f | wc -l)" -gt 0 ]
	# What it took was committed, and what it let out is not let out
	# again: no message is read twice, none emitted twice.
	run -0 --separate-stderr timeout -k 5 120 msg-resequence --state st \
		--at-end flush --once --stats --output dir:out dir:in
	echo "$stderr"
	[ "${#stderr_lines[@]}" = 1 ]
	only_rereads 10
	[ "$(find in/new in/cur -type f | wc -l)" = 0 ]
	run -0 check_sequences out 20 100 50
	echo "$output"
	[ "${lines[-1]}" = 'extra copies: 0' ]
}

@test "crash: SIGKILL during the flush at the end of input: restarted, every waiting message out once at least" {
	local t0 flush_ms pct ms killed=0
	shuffled_spool in 20 100 50 11 50
	run -0 rsq --state st --once --output dir:out dir:in
	[ ! -s err.txt ]
	# How long the flush of the 500 that wait takes here, on a copy.
	cp -a st st.copy
	t0=${EPOCHREALTIME/./}
	msg-resequence --state st.copy --at-end flush --once --output dir:out.copy </dev/null
	flush_ms=$(((${EPOCHREALTIME/./} - t0) / 1000))
	echo "flush: $flush_ms ms"
	# Killed further into it each time.
	for pct in 10 25 40 55 70 85; do
		spawn msg-resequence --state st --at-end flush --once --output dir:out </dev/null
		ms=$((STARTUP_MS + flush_ms * pct / 100))
		sleep "$((ms / 1000)).$(printf %03d $((ms % 1000)))"
		kill -KILL "$spawned" 2>/dev/null || true
		exit_status "$spawned" 30
		echo "at $pct%: status $status, $(find out/new -type f | wc -l) out"
		[ "$status" = 137 ] || [ "$status" = 0 ]
		[ "$status" = 0 ] || killed=$((killed + 1))
	done
	run -0 --separate-stderr timeout -k 5 120 msg-resequence --state st \
		--at-end flush --once --stats --output dir:out </dev/null
	echo "$stderr"
	[[ $stderr =~ ^msg-resequence:\ stats:\ in\ 0,\ out\ [0-9]+,\ gaps\ (0|10),\ skipped\ (0|10),\ late\ 0,\ duplicates\ 0,\ invalid\ 0,\ expired\ 0,\ waiting\ 0,\ most\ [0-9]+$ ]]
	run -0 check_sequences out 20 100 50
	echo "$output"
	# A flush is one batch: until it is done, all it let out is in
	# flight, and may come again.
	[[ ${lines[-1]} =~ ^extra\ copies:\ ([0-9]+)$ ]]
	echo "copies: ${BASH_REMATCH[1]} after $killed kills"
	[ "${BASH_REMATCH[1]}" -le $((killed * 500)) ]
	# Nothing is left for the next run.
	run -0 rsq --state st --at-end flush --stats </dev/null
	[ ! -s out.msg ]
	rsq_stats >expect
	expect_same expect err.txt
}

@test "crash: SIGKILL at random points, restarted until done: every number out, in order" {
	local kills
	# 1,990 messages in 20 groups, shuffled within windows of 50; the odd
	# groups lack their 50th, so their second halves wait in the store
	# through all the kills, for the end of input.
	shuffled_spool in 20 100 50 11 50
	kill_until_drained in 17 msg-resequence --state st --output dir:out dir:in
	# The last run drains the spool, flushes what waits, and stops: the
	# second halves, each after a gap of one.
	run -0 --separate-stderr timeout -k 5 120 msg-resequence --state st \
		--at-end flush --once --stats --output dir:out dir:in
	# Messages read again after a kill, whose numbers were out or
	# stored, are duplicates (or late, their group complete): a warning
	# each.
	echo "$stderr"
	only_rereads 10
	[ "$(find in/new in/cur -type f | wc -l)" = 0 ]
	[ "$(find in/bad -type f 2>/dev/null | wc -l)" = 0 ]
	# A killed writer may leave files in out/tmp, a batch's at most,
	# never a partial one in new/ (check_sequences reads them all).
	echo "left in out/tmp: $(find out/tmp -type f | wc -l)"
	run check_sequences out 20 100 50
	echo "$output"
	[ "$status" -eq 0 ]
	# A copy only of what was in flight: a batch is at most 64 messages,
	# and what they release at most the 50 or so that wait for them, so
	# at most 114 messages a kill.
	[[ ${lines[-1]} =~ ^extra\ copies:\ ([0-9]+)$ ]]
	echo "copies of in-flight messages: ${BASH_REMATCH[1]} after $kills kills"
	[ "${BASH_REMATCH[1]}" -le $((kills * 114)) ]
	[ "$(find out/tmp -type f | wc -l)" -le $((kills * 114)) ]
}
