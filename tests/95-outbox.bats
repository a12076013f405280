#!/usr/bin/env bats
# msg-unwrap -d as an outbox that partners poll: files appear whole or not
# at all, --exists, --mode, --done-marker only once a file is durable,
# name templates refused when unsafe, a missing directory made, faults of
# the disk (tests/faults/faultinject.so), and a dir: input done only once
# the outbox is durable.

load test_helper
bats_require_minimum_version 1.5.0
load crash/build
load fixtures/dir/dir

# The frame helper counts characters; keep every count a byte count.
export LC_ALL=C

setup_file() {
	cc_preload "$BATS_FILE_TMPDIR/faultinject.so" "$MSG_TOP/tests/faults/faultinject.c"
}

# listing DIR: the names in DIR, hidden ones too, on one line.
listing() {
	ls -A "$1" | tr '\n' ' '
}

# calls: faults.log with the scratch directory as '.' and each temporary
# name as TMP, one call a line.
calls() {
	sed -e "s|$(pwd -P)/|./|" -e 's|/\.tmp\.[0-9]*\.[0-9a-f]*|/TMP|' faults.log
}

# ---- --exists ----

@test "outbox: --exists suffix (the default) gives a taken name .1, .2, ..." {
	mkdir out
	printf OLD >out/a.txt
	{ frame one 'File-Name: a.txt'; frame two 'File-Name: a.txt'; } >in.msg
	run -0 --separate-stderr msg-unwrap -d out --stats in.msg
	[ "$stderr" = "msg-unwrap: stats: in 2, out 2, invalid 0, expired 0, skipped 0, syncs 1" ]
	[ "$(listing out)" = "a.txt a.txt.1 a.txt.2 " ]
	[ "$(cat out/a.txt out/a.txt.1 out/a.txt.2)" = OLDonetwo ]
	# A name freed by a partner who took the file is used again.
	rm out/a.txt
	msg-unwrap -d out --exists suffix in.msg
	[ "$(listing out)" = "a.txt a.txt.1 a.txt.2 a.txt.3 " ]
	[ "$(cat out/a.txt out/a.txt.3)" = onetwo ]
}

@test "outbox: --exists fail makes a message whose name is taken invalid, body and all" {
	mkdir out
	printf OLD >out/a.txt
	{
		frame one 'Message-Id: m1' 'File-Name: a.txt'
		frame two 'Message-Id: m2' 'File-Name: b.txt'
	} >in.msg
	run -65 --separate-stderr msg-unwrap -d out --exists fail in.msg
	[ "$stderr" = "msg-unwrap: in.msg: message 1 (Message-Id m1): the file 'a.txt' exists" ]
	[ "$(listing out)" = "a.txt " ]
	[ "$(cat out/a.txt)" = OLD ]
	run -0 --separate-stderr msg-unwrap -d out --exists fail --invalid bad.msg in.msg
	[ "$stderr" = "msg-unwrap: warning: message m1: File-Name a.txt: the file 'a.txt' exists: diverted to 'bad.msg'" ]
	[ "$(listing out)" = "a.txt b.txt " ]
	[ "$(cat out/a.txt out/b.txt)" = OLDtwo ]
	[ "$(msg-unwrap bad.msg)" = one ]
	[ "$(msg-unwrap -H bad.msg | grep '^Error: ')" = "Error: msg-unwrap: the file 'a.txt' exists" ]
}

@test "outbox: --exists skip keeps the file there and counts the message skipped" {
	mkdir out
	printf OLD >out/a.txt
	{ frame one 'File-Name: a.txt'; frame two 'File-Name: b.txt'; frame three 'File-Name: b.txt'; } >in.msg
	run -0 --separate-stderr msg-unwrap -d out --exists skip --stats in.msg
	[ "$stderr" = "msg-unwrap: stats: in 3, out 1, invalid 0, expired 0, skipped 2, syncs 1" ]
	[ "$(listing out)" = "a.txt b.txt " ]
	[ "$(cat out/a.txt out/b.txt)" = OLDtwo ]
}

@test "outbox: --exists replace replaces the file in one step" {
	mkdir out
	printf OLD >out/a.txt
	ln out/a.txt held
	{ frame one 'File-Name: a.txt'; frame two 'File-Name: a.txt'; } >in.msg
	msg-unwrap -d out --exists replace in.msg
	[ "$(listing out)" = "a.txt " ]
	[ "$(cat out/a.txt)" = two ]
	# A new file took the name: the old one was never written into.
	[ "$(cat held)" = OLD ]
}

@test "outbox: --exists takes only its four words" {
	run -64 --separate-stderr msg-unwrap -d out --exists overwrite </dev/null
	[ "${stderr_lines[0]}" = "msg-unwrap: --exists takes suffix, fail, skip or replace, not 'overwrite'" ]
	[ ! -e out ]
	run -64 --separate-stderr msg-unwrap --exists skip </dev/null
	[ "${stderr_lines[0]}" = "msg-unwrap: --exists, --mode and --done-marker need -d" ]
}

# ---- --mode ----

@test "outbox: files are 0644 under the umask by default, exactly --mode with it" {
	frame a 'File-Name: a' >in.msg
	(umask 027 && msg-unwrap -d out in.msg)
	[ "$(stat -c %a out/a)" = 640 ]
	(umask 0 && msg-unwrap -d out2 in.msg)
	[ "$(stat -c %a out2/a)" = 644 ]
	(umask 077 && msg-unwrap -d out3 --mode 664 --done-marker .ok in.msg)
	[ "$(stat -c %a out3/a out3/a.ok | tr '\n' ' ')" = "664 664 " ]
	run -64 --separate-stderr msg-unwrap -d out --mode 0999 in.msg
	[ "${stderr_lines[0]}" = "msg-unwrap: --mode takes an octal mode, not '0999'" ]
}

# ---- --done-marker ----

@test "outbox: --done-marker makes NAME+SUFFIX empty, only after the directory is synced" {
	mkdir out
	{ frame one 'File-Name: a.txt'; frame two 'File-Name: a.txt'; frame three 'File-Name: b'; } >in.msg
	faulty FAULT_FUNCS=dirsync,renameat2,openat FAULT_PATH='*/out*' \
		FAULT_ERRNO=none FAULT_COUNT=0 -- msg-unwrap -d out --done-marker .done in.msg
	[ "$(listing out)" = "a.txt a.txt.1 a.txt.1.done a.txt.done b b.done " ]
	[ "$(cat out/a.txt out/a.txt.1 out/b)" = onetwothree ]
	[ "$(stat -c %s out/a.txt.done out/a.txt.1.done out/b.done | tr '\n' ' ')" = "0 0 0 " ]
	[ "$(grep -v '^openat ./out/TMP\|^renameat2 ./out/TMP' <(calls))" = "dirsync ./out skipped
openat ./out/a.txt.done skipped
openat ./out/a.txt.1.done skipped
openat ./out/b.done skipped
dirsync ./out skipped" ]
}

@test "outbox: a failed sync of the outbox makes no done marker: exit 74" {
	mkdir out
	{ frame one 'File-Name: a.txt'; frame two 'File-Name: b'; } >in.msg
	run -74 --separate-stderr faulty FAULT_FUNCS=dirsync FAULT_ERRNO=EIO -- \
		msg-unwrap -d out --done-marker .done in.msg
	[ "$stderr" = "msg-unwrap: cannot sync directory 'out': Input/output error" ]
	[ "$(listing out)" = "a.txt b " ]
}

# ---- names ----

@test "outbox: a template that would name a path, a hidden file or nothing makes the message invalid" {
	mkdir -p top/out
	{
		frame 1 'Message-Id: m1' 'X: ..'
		frame 2 'Message-Id: m2' 'X: a/b'
		frame 3 'Message-Id: m3' 'X: /etc/passwd'
		frame 4 'Message-Id: m4' "X: ctl$(printf '\033')x"
		frame 5 'Message-Id: m5' 'X: .hidden'
		frame 6 'Message-Id: m6' 'X: ok'
	} >in.msg
	run -0 --separate-stderr msg-unwrap -d top/out -n '{X}' --invalid bad.msg in.msg
	[ "$(listing top/out)" = "ok " ]
	[ "$(find top | sort | tr '\n' ' ')" = "top top/out top/out/ok " ]
	[ "$(msg-unwrap -s ' ' bad.msg)" = "1 2 3 4 5" ]
	[ "$(msg-unwrap -H bad.msg | sed -n 's/^Error: //p')" = "msg-unwrap: the file name '..' starts with '.'
msg-unwrap: the file name 'a/b' holds '/'
msg-unwrap: the file name '/etc/passwd' holds '/'
msg-unwrap: the file name holds the control byte 0x1b
msg-unwrap: the file name '.hidden' starts with '.'" ]
	# Literal text in the template is held to the same rules.
	frame 7 'X: a' >in7.msg
	run -65 --separate-stderr msg-unwrap -d top/out -n '../{X}' in7.msg
	[ "$stderr" = "msg-unwrap: in7.msg: message 1: the file name '../a' holds '/'" ]
	run -65 --separate-stderr msg-unwrap -d top/out -n '{X}{Y}' in7.msg
	[ "$stderr" = "msg-unwrap: in7.msg: message 1: no header 'Y' for the file name" ]
	[ "$(listing top/out)" = "ok " ]
}

@test "outbox: a template takes {Message-Id} and a date part of an RFC 3339 header" {
	{
		frame A 'Message-Id: m1' 'Timestamp: 2026-12-04T23:30:00-02:00'
		frame B 'Message-Id: m2' 'Timestamp: 2027-01-02T03:04:05.678Z'
		frame C 'Message-Id: m3' 'Timestamp: yesterday'
	} >in.msg
	run -0 --separate-stderr msg-unwrap -d out -n 'orders-{Timestamp:%Y%m%d-%H%M}-{Message-Id}.xml' \
		--invalid bad.msg in.msg
	[ "$stderr" = "msg-unwrap: warning: message m3: header 'Timestamp' is not an RFC 3339 date-time: 'yesterday': diverted to 'bad.msg'" ]
	# Dates are in UTC.
	[ "$(listing out)" = "orders-20261205-0130-m1.xml orders-20270102-0304-m2.xml " ]
	[ "$(cat out/orders-20270102-0304-m2.xml)" = B ]
}

@test "outbox: a missing directory is made with its parents; a file in the way is exit 73" {
	frame a 'File-Name: a' >in.msg
	(umask 022 && msg-unwrap -d new/sub/out in.msg)
	[ "$(cat new/sub/out/a)" = a ]
	[ "$(stat -c %a new new/sub new/sub/out | tr '\n' ' ')" = "755 755 755 " ]
	: >file
	run -73 --separate-stderr msg-unwrap -d file/out in.msg
	[ "$stderr" = "msg-unwrap: cannot open directory 'file/out': Not a directory" ]
}

@test "outbox: each directory made is synced into its parent" {
	frame a 'File-Name: a' >in.msg
	faulty FAULT_FUNCS=dirsync FAULT_ERRNO=none FAULT_COUNT=0 -- msg-unwrap -d new/sub/out in.msg
	[ "$(calls)" = "dirsync $(pwd -P) skipped
dirsync ./new skipped
dirsync ./new/sub skipped
dirsync ./new/sub/out skipped" ]
}

# ---- a partner polling ----

@test "outbox: a partner polling the directory never reads a partial file" {
	mkdir out
	# 300 bodies of 64 KiB to 1 MiB, each ending in END.
	perl -e 'for my $i (1 .. 300) {
			my $body = ("x" x (65536 * (1 + $i % 16))) . "END";
			printf "File-Name: f%03d\nContent-Length: %d\n\n%s\n", $i % 40, length $body, $body;
		}' >in.msg
	# The poller reads every visible file it sees, again and again,
	# until the writer is done; each must end in END.
	: >seen
	spawn bash -c 'while [ ! -e writer-done ]; do
			for f in out/*; do
				[ -e "$f" ] || continue
				tail -c 3 "$f" | grep -qx END || echo "partial $f" >>bad
				echo "$f" >>seen
			done
		done'
	poller=$spawned
	msg-unwrap -d out in.msg
	: >writer-done
	wait "$poller"
	[ ! -e bad ]
	[ "$(wc -l <seen)" -gt 0 ]
	[ "$(ls out | wc -l)" = 300 ]
	[ "$(ls -A out | grep -c '^\.')" = 0 ]
}

# ---- faults ----

@test "outbox: a run that stops at a bad frame first names the files of the messages before it" {
	{
		for i in 1 2 3; do frame "body $i" "File-Name: f$i"; done
		printf 'File-Name: f4\nContent-Length: 9\n\nshort\n'
	} >in.msg
	run -65 --separate-stderr msg-unwrap -d out in.msg
	[ "$stderr" = "msg-unwrap: in.msg: offset 159: truncated frame: end of input after 6 of 9 body bytes" ]
	[ "$(listing out)" = "f1 f2 f3 " ]
	[ "$(cat out/f1 out/f2 out/f3)" = "body 1body 2body 3" ]
}


@test "outbox: no space left while writing a body: exit 74, nothing half published" {
	mkdir out
	{ frame one 'File-Name: a'; frame two 'File-Name: b'; frame three 'File-Name: c'; } >in.msg
	run -74 --separate-stderr faulty FAULT_FUNCS=write FAULT_PATH='*/out/.tmp.*' \
		FAULT_AT=2 FAULT_ERRNO=ENOSPC FAULT_PARTIAL=1 -- msg-unwrap -d out in.msg
	[ "$stderr" = "msg-unwrap: cannot write 'out/b': No space left on device" ]
	[ "$(listing out)" = "a " ]
}

@test "outbox: a failed rename: exit 74, the temporary removed" {
	mkdir out
	{ frame one 'File-Name: a'; frame two 'File-Name: b'; } >in.msg
	run -74 --separate-stderr faulty FAULT_FUNCS=renameat FAULT_ERRNO=EIO -- \
		msg-unwrap -d out --exists replace in.msg
	[ "$stderr" = "msg-unwrap: cannot write 'out/a': Input/output error" ]
	[ "$(listing out)" = "" ]
}

# ---- dir: inputs ----

@test "outbox: a dir: input is done only once the outbox is synced, once per batch" {
	spool_fill s 1 150
	run -0 --separate-stderr msg-unwrap --once -d out -n '{Message-Id}' --stats dir:s
	# 150 messages are three batches (64, 64, 22): three syncs.
	[ "$stderr" = "msg-unwrap: stats: in 150, out 150, invalid 0, expired 0, skipped 0, syncs 3" ]
	[ "$(ls out | wc -l)" = 150 ]
	[ "$(find s -type f | wc -l)" = 0 ]
	# A failed sync of the outbox leaves the batch in the spool.
	spool_fill s 1 3
	run -74 --separate-stderr faulty FAULT_FUNCS=dirsync FAULT_PATH='*/out2' \
		FAULT_ERRNO=EIO -- msg-unwrap --once -d out2 -n '{Message-Id}' dir:s
	[ "$stderr" = "msg-unwrap: cannot sync directory 'out2': Input/output error" ]
	[ "$(listing out2)" = "id-000001 id-000002 id-000003 " ]
	[ "$(find s -type f | wc -l)" = 3 ]
	# The next run delivers them again: nothing is lost.
	msg-unwrap --once -d out2 -n '{Message-Id}' dir:s
	[ "$(find s -type f | wc -l)" = 0 ]
	[ "$(listing out2)" = "id-000001 id-000001.1 id-000002 id-000002.1 id-000003 id-000003.1 " ]
}
