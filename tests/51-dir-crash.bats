#!/usr/bin/env bats
# dir: channels across crashes and stops: a reader killed with SIGKILL
# leaves the message it held for the next reader; SIGTERM finishes the
# message in hand and leaves the rest; a writer killed mid-write leaves
# no partial message; and a spool pipeline whose stages are killed over
# and over loses nothing and duplicates only what was in flight.

load test_helper
bats_require_minimum_version 1.5.0
load fixtures/dir/dir

# A spool x holding a 300,000-byte message "big" (x...x), then "s1" and
# "s2": a reader that writes big to a FIFO nobody reads is stuck in the
# middle of it, holding it claimed in x/cur.
three_messages() {
	head -c 300000 /dev/zero | tr '\0' x >big
	printf s1 >s1
	printf s2 >s2
	msg-wrap big s1 s2 --output dir:x
	is 3 x/new
}

# stuck_reader: msg-unwrap -e --once dir:x writing to the FIFO "slow",
# which the test holds open on fd 4 and does not read; returns once the
# reader has claimed big. Its pid is in $spawned.
stuck_reader() {
	mkfifo slow
	exec 4<>slow
	spawn msg-unwrap -e --once dir:x >slow
	wait_until 10 is 1 x/cur
	sleep 0.2
	is 1 x/cur
	is 2 x/new
	alive "$spawned"
}

@test "crash: a reader killed mid-message leaves it claimed for the next reader; live claims are respected" {
	local a
	three_messages
	stuck_reader
	a=$spawned
	# A second reader takes what is free and leaves big to its holder.
	run -0 --separate-stderr timeout -k 10 20 msg-unwrap -e --once dir:x
	[ "$(bodies <(echo "$output") | paste -sd ' ')" = 's1 s2' ]
	is 1 x/cur
	is 0 x/new
	kill -KILL "$a"
	status_of "$a" 10
	[ "$status" = 137 ]
	exec 4>&-
	# Dead, its reader left big in cur/; the next reader takes it.
	is 1 x/cur
	timeout -k 10 20 msg-unwrap --once dir:x >got
	cmp big got
	empty_spool x
}

@test "crash: a waiting reader takes over the message of a reader that died" {
	local a b
	three_messages
	stuck_reader
	a=$spawned
	spawn msg-unwrap -e dir:x >got.jsonl
	b=$spawned
	wait_until 10 eval '[ "$(grep -c . got.jsonl)" = 2 ]'
	sleep 0.3
	# Not while its holder lives.
	[ "$(grep -c . got.jsonl)" = 2 ]
	is 1 x/cur
	kill -KILL "$a"
	status_of "$a" 10
	[ "$status" = 137 ]
	wait_until 20 eval '[ "$(grep -c . got.jsonl)" = 3 ]'
	wait_until 10 empty_spool x
	kill -TERM "$b"
	status_of "$b" 10
	[ "$status" = 0 ]
	[ "$(bodies got.jsonl | cut -c1-3 | paste -sd ' ')" = 's1 s2 xxx' ]
	[ "$(bodies got.jsonl | sed -n 3p)" = "$(cat big)" ]
}

@test "crash: SIGTERM while a reader is busy: it finishes the message in hand and leaves the rest" {
	local a
	three_messages
	stuck_reader
	a=$spawned
	kill -TERM "$a"
	sleep 0.2
	# Now read what it writes, to its end: it has to finish big first.
	exec 5<slow
	exec 4>&-
	timeout -k 10 20 cat <&5 >got.jsonl
	exec 5<&-
	status_of "$a" 10
	[ "$status" = 0 ]
	bodies got.jsonl >delivered
	[ "$(sed -n 1p delivered)" = "$(cat big)" ]
	# Every message was either written out or is still in the spool.
	for f in x/new/* x/cur/*; do
		[ ! -e "$f" ] || cat "$f"
	done | msg-unwrap -e >left.jsonl
	bodies left.jsonl >>delivered
	echo "done or left: $(cut -c1-3 delivered | paste -sd ' ')"
	[ "$(cut -c1-3 delivered | sort | paste -sd ' ')" = 's1 s2 xxx' ]
}

@test "crash: SIGTERM on a reader with a backlog: nothing lost, nothing twice" {
	local a
	spool_fill x 1 1000
	spawn msg-unwrap -e dir:x >got.jsonl
	a=$spawned
	wait_until 30 eval '[ "$(grep -c . got.jsonl)" -ge 20 ]'
	kill -TERM "$a"
	status_of "$a" 10
	[ "$status" = 0 ]
	bodies got.jsonl >delivered
	for f in x/new/* x/cur/*; do
		[ ! -e "$f" ] || cat "$f"
	done | msg-unwrap -e >left.jsonl
	bodies left.jsonl >left
	echo "written $(wc -l <delivered), left $(wc -l <left)"
	sort delivered left | cmp - <(expect_bodies 1 1000)
}

@test "crash: a writer killed mid-write leaves no partial message in new/" {
	local w n killed
	head -c 64000000 /dev/zero >huge
	spawn msg-wrap huge --output dir:x
	w=$spawned
	# The writer may be caught writing (tmp/) or, on a machine slow to
	# poll, may have finished already (new/): both cases are checked.
	wait_until 120 eval '[ "$(nfiles x/tmp)" = 1 ] || [ "$(nfiles x/new)" = 1 ]'
	kill -KILL "$w" 2>/dev/null || true
	status_of "$w" 10
	killed=$status
	n=$(nfiles x/new)
	echo "writer status $killed, whole messages: $n"
	# Killed in time, the message is not there; too late, it is whole.
	run -0 --separate-stderr timeout -k 10 60 msg-unwrap --once -H dir:x
	if [ "$n" = 0 ]; then
		[ "$killed" = 137 ]
		[ -z "$output" ]
		# The partial file stays in tmp/, where no reader looks.
		is 1 x/tmp
	else
		grep -qx 'Content-Length: 64000000' <<<"$output"
	fi
	empty_spool x
	echo small >small
	msg-wrap small --output dir:x
	[ "$(timeout -k 10 20 msg-unwrap --once dir:x)" = small ]
}

# ---- a pipeline of spools, killed over and over ----

# usec: the time now in microseconds.
usec() {
	echo "${EPOCHREALTIME/./}"
}

# produce WINDOW: the writer side, a cron-style file transfer: wrap each
# file of inbox/ into dir:mid; a file is done when msg-wrap exits 0, else
# it is tried again. The first try of every file is killed with SIGKILL
# after a random time up to WINDOW microseconds; the window narrows when
# msg-wrap finished first and widens when it was killed, so that on any
# machine about two tries in three are killed, anywhere in their run.
# Logs "killed NAME", "ok NAME" and, at the end, "done".
produce() {
	local f d st window=$1
	for f in inbox/*; do
		d=$(((RANDOM * 32768 + RANDOM) % window + 200))
		st=0
		timeout -k 1 -s KILL "$(printf '%d.%06d' $((d / 1000000)) $((d % 1000000)))" \
			msg-wrap "$f" --output dir:mid || st=$?
		if [ "$st" = 137 ]; then
			echo "killed ${f#inbox/}"
			window=$((window * 9 / 8))
			st=0
			msg-wrap "$f" --output dir:mid || st=$?
		else
			window=$((window * 3 / 4 + 100))
		fi
		if [ "$st" != 0 ]; then
			echo "error $st ${f#inbox/}"
			return 1
		fi
		echo "ok ${f#inbox/}"
	done
	echo 'done'
}

@test "crash: a spool pipeline with both sides killed 20+ times loses nothing, duplicates only what was in flight" {
	local n=30 i t0 t lifetime='' c ckills=0 pkills rounds=0 prod deadline=$((SECONDS + 90))
	mkdir inbox mid
	for ((i = 1; i <= n; i++)); do
		printf 'item %04d\n' "$i" >"inbox/f$(printf %04d "$i")"
	done
	# How long a msg-wrap into a spool takes here: the quickest of three.
	msg-wrap inbox/f0001 --output dir:calibrate
	for i in 1 2 3; do
		t0=$(usec)
		msg-wrap inbox/f0001 --output dir:calibrate
		t=$(($(usec) - t0))
		if [ -z "$lifetime" ] || [ "$t" -lt "$lifetime" ]; then
			lifetime=$t
		fi
	done
	echo "msg-wrap takes ${lifetime} us"
	: >inflight
	spawn produce "$((lifetime * 3 / 2))" >producer.log 2>producer.err
	prod=$spawned
	# The reader side, msg-route dir:mid --output dir:out, killed every
	# 50-300 ms: in odd rounds a --once run (as from cron), in even rounds
	# a waiting reader. After each kill the messages it held, if any, are
	# orphans in mid/cur: in flight, so they may be in out/ twice.
	while :; do
		if ((rounds % 2)); then
			spawn msg-route --once -f 'true()' dir:mid --output dir:out
		else
			spawn msg-route -f 'true()' dir:mid --output dir:out
		fi
		c=$spawned
		sleep "$(printf '0.%02d' $((RANDOM % 26 + 5)))"
		if mine "$c"; then
			kill -KILL "$c" 2>/dev/null || true
		fi
		status_of "$c" 10
		if [ "$status" = 137 ]; then
			ckills=$((ckills + 1))
			# A reader holds at most 64 (their outputs synced as one).
			[ "$(nfiles mid/cur)" -le 64 ]
			for f in mid/cur/*; do
				[ ! -e "$f" ] || message_ids <"$f"
			done >>inflight
		else
			[ "$status" = 0 ]
		fi
		rounds=$((rounds + 1))
		if gone "$prod" && [ "$ckills" -ge 10 ]; then
			break
		fi
		[ "$SECONDS" -lt "$deadline" ]
	done
	status_of "$prod" 60
	[ "$status" = 0 ]
	[ "$(tail -n 1 producer.log)" = 'done' ]
	run -0 timeout -k 10 60 msg-route --once -f 'true()' dir:mid --output dir:out
	empty_spool mid
	pkills=$(grep -c '^killed ' producer.log || true)
	echo "rounds $rounds; kills: reader $ckills, writer $pkills"
	[ "$ckills" -ge 10 ]
	[ "$pkills" -ge 10 ]
	[ "$((ckills + pkills))" -ge 20 ]
	# Killed writers may leave partial files in tmp/, never in new/.
	[ "$(nfiles mid/tmp)" -le "$pkills" ]
	[ "$(nfiles out/tmp)" -le "$ckills" ]
	# Every message in out/ is whole; one line "FILE-NAME MESSAGE-ID" each.
	spooled out | msg-unwrap -H >out.headers
	awk '/^Message-Id: /{id = $2} /^File-Name: /{f = $2} /^Content-Length: /{print f, id}' \
		out.headers >copies
	# Nothing lost, nothing foreign.
	cut -d ' ' -f 1 copies | sort -u | cmp - <(ls inbox)
	# A file wrapped twice (two Message-Ids) only if a writer was killed
	# on it; a Message-Id twice only if it was in flight in a killed
	# reader; at most one extra copy per kill.
	awk -v kills="$((ckills + pkills))" '
		FILENAME == ARGV[1] { if ($1 == "killed") wkill[$2]++; next }
		FILENAME == ARGV[2] { rkill[$1]++; next }
		{
			if (!(($1, $2) in seen)) { seen[$1, $2] = 1; ids[$1]++ }
			copies[$2]++
		}
		END {
			for (f in ids) {
				extra += ids[f] - 1
				if (ids[f] - 1 > wkill[f] + 0)
					print "file " f ": " ids[f] " wrappings, writer killed on it " wkill[f] + 0 " times"
			}
			for (id in copies) {
				extra += copies[id] - 1
				if (copies[id] - 1 > rkill[id] + 0)
					print "message " id ": " copies[id] " copies, in flight at " rkill[id] + 0 " kills"
			}
			if (extra > kills)
				print extra " extra copies for " kills " kills"
			print "extra copies: " extra >"/dev/stderr"
		}' producer.log inflight copies >violations
	cat violations
	[ ! -s violations ]
}
