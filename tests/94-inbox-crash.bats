#!/usr/bin/env bats
# inbox:DIR across crashes, overlapping runs and a failing disk: msg-wrap
# killed with SIGKILL again and again (at random, and aimed between the
# publication of its output and the deletion of its files) loses no file
# and repeats only files it held claimed at a kill; ten overlapping
# --once runs beside a writer still dropping files take each file once;
# EIO and ENOSPC at each step (the claim, the read, the output, the
# deletion) end the run with a clean error, and the next run delivers
# every file once.

load test_helper
bats_require_minimum_version 1.5.0
load fixtures/dir/dir
load crash/build
load crash/startup

setup_file() {
	cc_preload "$BATS_FILE_TMPDIR/faultinject.so" "$MSG_TOP/tests/faults/faultinject.c"
	cc_program "$BATS_FILE_TMPDIR/seen-list" "$MSG_TOP/tests/crash/seen-list.c"
	local cal=$BATS_FILE_TMPDIR/calibrate t0 work_ms
	mkdir "$cal.empty"
	STARTUP_MS=$(fastest_ms msg-wrap --once --settle 0 --output "dir:$cal.out" \
		"inbox:$cal.empty")
	export STARTUP_MS
	# The kill windows follow from the time the work of the crash test
	# takes here uninterrupted (its files, from the inbox to a spool): a
	# quarter of it, from 20 ms to 3 s, so that a run killed at random
	# often gets through a batch or two and the kills fall all along the
	# work, whatever the machine's speed, its load or a sanitizer's cost.
	inbox_fill "$cal" 1 "$(crash_files)"
	t0=${EPOCHREALTIME/./}
	msg-wrap --once --settle 0 --output "dir:$cal.out" "inbox:$cal"
	work_ms=$(((${EPOCHREALTIME/./} - t0) / 1000))
	kill_plan "$work_ms"
	WINDOW_MS=$((work_ms / 4))
	[ "$WINDOW_MS" -ge 20 ] || WINDOW_MS=20
	[ "$WINDOW_MS" -le 3000 ] || WINDOW_MS=3000
}

# crash_files: how many files the crash test drops, fewer under the
# sanitizers, whose every run costs a third of a second more.
crash_files() {
	case $MSG_BIN in
	*san*) echo 100 ;;
	*) echo 300 ;;
	esac
}

# inbox_fill DIR FIRST LAST: files fNNNN (N from FIRST to LAST, four
# digits) holding bNNNN in the inbox DIR, made if missing. One perl
# process: a thousand printf(1) redirections cost seconds.
inbox_fill() {
	perl -e '
		my ($dir, $first, $last) = @ARGV;
		mkdir $dir or $!{EEXIST} or die "$dir: $!";
		for my $i ($first .. $last) {
			my $n = sprintf "%04d", $i;
			open my $f, ">", "$dir/f$n" or die "$dir/f$n: $!";
			print $f "b$n";
			close $f or die "$dir/f$n: $!";
		}' "$@"
}

# names FIRST LAST: the names inbox_fill gives, one a line.
names() {
	perl -e 'printf "f%04d\n", $_ for $ARGV[0] .. $ARGV[1]' "$1" "$2"
}

# claimed: the names of the files claimed in in/.msg/work, one a line.
claimed() {
	find in/.msg/work -mindepth 2 -type f ! -name lock -printf '%f\n' 2>/dev/null
}

# delivered: the File-Name of each message in the spool out, one a line,
# sorted; each message's body must be its file's content.
delivered() {
	spooled out | msg-unwrap -e | perl -ne '
		my ($name) = /"File-Name":"([^"]*)"/ or die "no File-Name: $_";
		my ($body) = /"body":"([^"]*)"/ or die "no body: $_";
		$body eq "b" . substr($name, 1) or die "$name holds $body";
		print "$name\n"' | sort
}

# inbox_drained: no file is left in the inbox in, none claimed, no run's
# directory left in in/.msg/work, nothing set aside.
inbox_drained() {
	[ -z "$(ls in)" ] && [ -z "$(ls -A in/.msg/work)" ] && [ ! -e in/.msg/failed ]
}

# once_each FIRST LAST: out holds the message of each of the files
# FIRST..LAST exactly once, and nothing else.
once_each() {
	delivered >got
	names "$1" "$2" | diff - got
}

# ---- SIGKILL ----

# after_kill N: what kill N left: the names claimed in claims.N, and
# with --idempotent the names its store holds committed in seen.N and
# the names delivered so far in got.N (all sorted).
after_kill() {
	claimed | sort >"claims.$1"
	if [ -d in/.msg/seen ]; then
		"$BATS_FILE_TMPDIR/seen-list" in >"seen.$1" || return 1
		delivered >"got.$1" || return 1
	fi
}

# kill_at_random ARG...: msg-wrap --settle 0 ARG... from the inbox in
# to the spool out, killed with SIGKILL at a random point of the kill
# windows and started again, until the inbox is empty or the rounds are
# up (at least MIN_KILLS times), each kill counted on in kills and
# looked at by after_kill.
kill_at_random() {
	local pid deadline=$((SECONDS + 240)) first=$kills
	echo "kill windows: $((STARTUP_MS * 2 / 3)) to $((STARTUP_MS + WINDOW_MS)) ms"
	while [ $((kills - first)) -lt "$MIN_KILLS" ] ||
		{ [ $((kills - first)) -lt "$ROUNDS" ] && [ -n "$(ls in)" ]; }; do
		spawn msg-wrap --settle 0 "$@" --output dir:out inbox:in 2>run.err
		pid=$spawned
		sleep_ms $((STARTUP_MS * 2 / 3 + RANDOM * (STARTUP_MS / 3 + WINDOW_MS) / 32768))
		kill_run "$pid" run.err $((kills + 1)) || return 1
		kills=$((kills + 1))
		after_kill "$kills" || return 1
		[ "$SECONDS" -lt "$deadline" ] || return 1
	done 2>/dev/null
	echo "$kills kills; left in the inbox: $(ls in | wc -l)"
}

@test "crash: msg-wrap inbox: killed again and again, at random and between publishing and deleting, loses no file and repeats only files claimed at a kill" {
	local n kills=0 extra
	n=$(crash_files)
	RANDOM=94
	inbox_fill in 1 "$n"
	# The first kill is aimed: after the first batch's messages are
	# published in out/new and synced, at the deletion of its first
	# file, so the files of that batch are always delivered again.
	run -137 faulty FAULT_FUNCS=unlinkat FAULT_PATH="$PWD/in/.msg/work/*/f*" \
		FAULT_ERRNO=kill -- timeout -k 5 60 msg-wrap --settle 0 --output dir:out inbox:in
	[[ $(cat faults.log) == "unlinkat $PWD/in/.msg/work/"*"/f"[0-9][0-9][0-9][0-9]" killed" ]]
	claimed >inflight
	[ -s inflight ]
	[ "$(nfiles out/new)" = "$(wc -l <inflight)" ]
	kill_at_random
	cat claims.* >>inflight
	# The last run, without kills, takes back what the killed ones held.
	run -0 --separate-stderr timeout -k 5 120 msg-wrap --once --settle 0 \
		--output dir:out inbox:in
	[ -z "$stderr" ]
	inbox_drained
	# A killed writer may leave files in out/tmp, never in out/new: every
	# message there is whole and holds its file's content.
	delivered >got
	names 1 "$n" | diff - <(uniq got)
	# A file is there more than once only if it was claimed at a kill,
	# once more at most for each such kill.
	uniq -c got | awk '
		FILENAME == ARGV[1] { inflight[$1]++; next }
		$1 - 1 > inflight[$2] + 0 {
			print $2 ": " $1 " copies, claimed at " inflight[$2] + 0 " kills"
		}' inflight - >violations
	cat violations
	[ ! -s violations ]
	extra=$(($(wc -l <got) - n))
	echo "extra copies: $extra"
	# The aimed kill's batch came again.
	[ "$extra" -gt 0 ]
}

# idempotent_kills_kept KILLS: the copies of each file in out (got)
# follow from what the kills 1..KILLS left (after_kill): a file whose
# record the store held committed at a kill has as many copies at the
# end as then, one at least (its record comes after its message); a
# file has one copy more than the first only for each kill that found
# it claimed with its record not committed.
idempotent_kills_kept() {
	perl -e '
		sub lines { open my $f, "<", $_[0] or die "$_[0]: $!"; map { chomp; $_ } <$f> }
		my $kills = shift;
		my (%final, %budget, $bad);
		$final{$_}++ for lines("got");
		for my $k (1 .. $kills) {
			my %seen = map { $_ => 1 } lines("seen.$k");
			my %then;
			$then{$_}++ for lines("got.$k");
			for (lines("claims.$k")) {
				if (!$seen{$_}) {
					$budget{$_}++;
				} elsif (!$then{$_} || $final{$_} != $then{$_}) {
					printf "%s: committed at kill %d with %d copies out, %d at the end\n",
						$_, $k, $then{$_} // 0, $final{$_};
					$bad = 1;
				}
			}
		}
		for (sort keys %final) {
			next if $final{$_} - 1 <= ($budget{$_} // 0);
			printf "%s: %d copies, claimed uncommitted at %d kills\n",
				$_, $final{$_}, $budget{$_} // 0;
			$bad = 1;
		}
		exit($bad // 0)' "$1"
}

@test "crash: msg-wrap inbox --idempotent: killed again and again loses no file; a file comes again only after a kill that found its record not yet committed, never after one that found it committed" {
	local n kills=0
	n=$(crash_files)
	RANDOM=9416
	inbox_fill in 1 "$n"
	# Aimed first: at the deletion of the first batch's first file, its
	# records committed just before. That batch must never come again.
	run -137 faulty FAULT_FUNCS=unlinkat FAULT_PATH="$PWD/in/.msg/work/*/f*" \
		FAULT_ERRNO=kill -- timeout -k 5 60 msg-wrap --settle 0 --idempotent \
		--output dir:out inbox:in
	kills=1
	after_kill 1
	[ -s claims.1 ]
	diff claims.1 seen.1
	diff claims.1 got.1
	# Aimed second: at the store's write of the next batch's records to
	# its log, their messages out and synced (a kill after that write,
	# even before its sync, leaves the records to the next run: the
	# system has them). None of them is there, so that batch comes
	# again.
	run -137 faulty FAULT_FUNCS=write FAULT_PATH="$PWD/in/.msg/seen/log.*" \
		FAULT_ERRNO=kill -- timeout -k 5 60 msg-wrap --settle 0 --idempotent \
		--output dir:out inbox:in
	kills=2
	after_kill 2
	comm -23 claims.2 seen.2 >uncommitted
	[ -s uncommitted ]
	comm -12 uncommitted got.2 | diff uncommitted -
	diff seen.1 seen.2
	kill_at_random --idempotent
	run -0 --separate-stderr timeout -k 5 120 msg-wrap --once --settle 0 \
		--idempotent --output dir:out inbox:in
	[ -z "$stderr" ]
	[ -z "$(ls in)" ]
	[ -z "$(ls -A in/.msg/work)" ]
	[ ! -e in/.msg/failed ]
	# Nothing lost: every file's message is out, each whole, and every
	# file is remembered.
	delivered >got
	names 1 "$n" | diff - <(uniq got)
	"$BATS_FILE_TMPDIR/seen-list" in | diff <(names 1 "$n") -
	idempotent_kills_kept "$kills"
	# The batch of the second aimed kill came again (more than twice
	# only for a random kill that found it claimed again: checked above),
	# that of the first did not.
	grep -x -F -f uncommitted got | uniq -c | awk '$1 < 2' >once
	cat once
	[ ! -s once ]
	grep -x -F -f claims.1 got | uniq -d >again
	[ ! -s again ]
	echo "extra copies: $(($(wc -l <got) - n))"
}

# ---- overlapping runs ----

# once_run N: one --once run in the background, moving each file into
# done once its message is out; its exit status in run.N.status and its
# stderr, the counts of --stats, in run.N.err; its pid added to the
# caller's pids.
once_run() {
	spawn sh -c 'msg-wrap --once --stats --settle 0 --done done \
		--output dir:out inbox:in 2>"run.$1.err"; echo $? >"run.$1.status"' _ "$1"
	pids+=("$spawned")
}

# shellcheck disable=SC2030 # status_of's $status is for this test alone
@test "overlap: ten --once runs with --done, some started at the same instant, beside a writer dropping 1,000 files: each file's message once, each file in done/ once, the inbox empty" {
	local i writer pids=()
	mkdir in
	# The writer writes each file in place under its final name, as a
	# partner's upload does, pausing every 50 files so that the runs
	# meet it at work: a file still open is left to it (the lease).
	spawn perl -e '
		for my $i (1 .. 1000) {
			my $n = sprintf "in/f%04d", $i;
			open my $f, ">", $n or die "$n: $!";
			print $f sprintf "b%04d", $i;
			close $f or die "$n: $!";
			select undef, undef, undef, 0.05 if $i % 50 == 0;
		}'
	writer=$spawned
	# Three at the same instant as the writer starts, three more at the
	# same instant once it is a third through, two at two thirds, and two
	# more at the same instant once it is done, for what came last.
	for i in 1 2 3; do once_run "$i"; done
	wait_until 60 eval '[ "$(ls in | wc -l)" -ge 300 ] || gone "$writer"'
	for i in 4 5 6; do once_run "$i"; done
	wait_until 60 eval '[ -e in/f0700 ] || gone "$writer"'
	once_run 7
	once_run 8
	status_of "$writer" 120
	[ "$status" = 0 ]
	# Those still going may or may not see the last files: the last two
	# start after the writer is done, so every file is listed by one.
	for i in 9 10; do once_run "$i"; done
	for i in "${pids[@]}"; do
		wait_until 120 gone "$i"
	done
	[ "$(cat run.*.status | sort -u)" = 0 ]
	[ "$(ls run.*.status | wc -l)" = 10 ]
	# Nothing said but the counts; between them, 1,000 files, shared.
	cat run.*.err
	perl -ne '/^msg-wrap: stats: in (\d+), out \1, invalid 0$/ or die "run said: $_";
		$sum += $1; $runs++ if $1 > 0;
		END { print "$runs runs took files\n"; exit !($sum == 1000 && $runs >= 2) }' \
		run.*.err
	inbox_drained
	once_each 1 1000
	# Each file moved into done/ by the one run that took it, under its
	# own name: none twice (NAME.1 beside NAME), none missing, each
	# whole.
	names 1 1000 | diff - <(ls -A done/)
	perl -e 'opendir my $d, "done" or die "done: $!";
		for (grep !/^\.\.?$/, readdir $d) {
			open my $f, "<", "done/$_" or die "done/$_: $!";
			my $b = <$f> // "";
			$b eq "b" . substr($_, 1) or die "done/$_ holds $b\n";
		}'
}

# ---- a failing disk ----

# faulty_wrap ERRNO FUNCS PATH [AT]: a fresh inbox in of ten files, and
# msg-wrap --once over it into the spool out with the AT-th (default
# 3rd) call of FUNCS on a file that PATH matches failing with ERRNO:
# it exits 74, its stderr shown. (Its $status is run's, not the one
# status_of sets in a test.)
# shellcheck disable=SC2031
faulty_wrap() {
	rm -rf in out faults.log
	inbox_fill in 1 10
	run --separate-stderr faulty FAULT_ERRNO="$1" FAULT_FUNCS="$2" FAULT_PATH="$3" \
		FAULT_AT="${4:-3}" -- timeout -k 5 60 msg-wrap --once --settle 0 \
		--output dir:out inbox:in
	echo "status $status: $stderr"
	[ "$status" = 74 ]
	[ "$(wc -l <faults.log)" = 1 ]
}

# rerun: the next run, without faults, succeeds and drains the inbox.
rerun() {
	run -0 --separate-stderr timeout -k 5 60 msg-wrap --once --settle 0 \
		--output dir:out inbox:in
	[ -z "$stderr" ]
	inbox_drained
}

# rerun_once N: rerun, which leaves each of the N files' messages in out
# exactly once.
rerun_once() {
	rerun
	once_each 1 "$1"
}

# errtext ERRNO: what strerror says of it.
errtext() {
	case $1 in
	EIO) echo 'Input/output error' ;;
	ENOSPC) echo 'No space left on device' ;;
	esac
}

@test "faults: EIO and ENOSPC reading a claimed file: exit 74 naming it, the files before it done, the next run takes it once" {
	local e
	for e in EIO ENOSPC; do
		faulty_wrap "$e" read "$PWD/in/.msg/work/*"
		[ "$stderr" = "msg-wrap: cannot read 'inbox:in/f0003': $(errtext "$e")" ]
		# Not the file's fault: back in the inbox, never set aside.
		[ "$(cat in/f0003)" = b0003 ]
		[ ! -e in/.msg/failed ]
		# The two before it are out and gone; the rest wait.
		delivered >got
		names 1 2 | diff - got
		[ ! -e in/f0001 ]
		[ ! -e in/f0002 ]
		rerun_once 10
	done
}

@test "faults: EIO and ENOSPC claiming a file: named on stderr, left in the inbox, the others taken, exit 74; the next run takes it once" {
	local e
	for e in EIO ENOSPC; do
		# The claim is a rename out of the inbox into in/.msg/work.
		faulty_wrap "$e" renameat "$PWD/in/f*"
		[ "$stderr" = "msg-wrap: cannot claim 'inbox:in/f0003': $(errtext "$e")" ]
		[ "$(ls in)" = f0003 ]
		[ "$(cat in/f0003)" = b0003 ]
		[ -z "$(ls -A in/.msg/work)" ]
		delivered >got
		names 1 10 | grep -v -x f0003 | diff - got
		rerun_once 10
	done
}

@test "faults: EIO and ENOSPC writing or syncing the dir: output's files: exit 74 naming the output, no file deleted, the next run delivers each once" {
	local e step
	for e in EIO ENOSPC; do
		for step in write fsync; do
			# The third message's file in out/tmp: its write, or its
			# sync before it is published.
			faulty_wrap "$e" "$step" "$PWD/out/tmp/*"
			[ "$stderr" = "msg-wrap: cannot write 'dir:out': $(errtext "$e")" ]
			# Nothing published, so nothing taken: the two files
			# before it stay claimed for the next run, the third is
			# given back.
			[ "$(nfiles out/new)" = 0 ]
			claimed | sort | paste -sd ' ' | grep -qx 'f0001 f0002'
			[ "$(ls in | wc -l)" = 8 ]
			rerun_once 10
		done
	done
}

@test "faults: EIO and ENOSPC syncing the dir: output's new/ after publishing: exit 74, the batch kept claimed and delivered again, nothing lost" {
	local e
	for e in EIO ENOSPC; do
		faulty_wrap "$e" dirsync "$PWD/out/new" 1
		[ "$stderr" = "msg-wrap: cannot write 'dir:out': $(errtext "$e")" ]
		# Published but not known to be on the disk: the files are kept
		# claimed, and the next run delivers them again.
		delivered >got
		claimed | sort | diff - got
		names 1 10 | diff - got
		rerun
		delivered >got
		names 1 10 | sed p | diff - got
	done
}

@test "faults: EIO and ENOSPC deleting a file whose messages are out: exit 74, only that file delivered again; a failed sync of the deletions repeats none" {
	local e failed
	for e in EIO ENOSPC; do
		faulty_wrap "$e" unlinkat "$PWD/in/.msg/work/*/f*"
		[ "$stderr" = "msg-wrap: cannot finish with what was read from 'inbox:in': $(errtext "$e")" ]
		# The others are deleted; the one that could not be stays
		# claimed, its message already out.
		failed=$(awk '{ sub(/.*\//, "", $2); print $2 }' faults.log)
		[ "$(claimed)" = "$failed" ]
		[ "$(ls in)" = '' ]
		rerun
		delivered >got
		{ names 1 10; echo "$failed"; } | sort | diff - got
		# The deletions made but not synced: none is delivered again.
		faulty_wrap "$e" dirsync "$PWD/in/.msg/work/*" 1
		[ "$stderr" = "msg-wrap: cannot finish with what was read from 'inbox:in': $(errtext "$e")" ]
		[ -z "$(claimed)" ]
		rerun_once 10
	done
}
