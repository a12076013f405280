#!/usr/bin/env bats
# dir: channels and the disk: group commit (a reader's outputs into a
# spool are synced together, up to 64 messages a time, so a message costs
# one sync of its file and a share of one sync of new/), and syncs that
# fail (tests/faults/faultinject.so): the tool exits 74, nothing half
# written is left behind, and every message is either out or still in
# the input spool, never both, never neither.

load test_helper
bats_require_minimum_version 1.5.0
load crash/build
load fixtures/dir/dir

setup_file() {
	cc_preload "$BATS_FILE_TMPDIR/faultinject.so" "$MSG_TOP/tests/faults/faultinject.c"
}

# syncing FAULT_...=... -- CMD...: CMD with its fsync calls failed as the
# settings say, or with FAULT_ERRNO=none skipped (counted only), each one
# logged in syncs.log.
syncing() {
	faulty FAULT_FUNCS=fsync,fdatasync FAULT_LOG="$PWD/syncs.log" "$@"
}

# syncs_of PATTERN: how many logged syncs were of paths matching PATTERN.
syncs_of() {
	grep -c -E "^f(data)?sync [^ ]*$1 " syncs.log || true
}

@test "faults: a reader's dir: outputs are synced in groups of up to 64" {
	spool_fill a 1 300
	syncing FAULT_ERRNO=none FAULT_COUNT=0 -- msg-route --once -f 'true()' --output dir:b dir:a
	empty_spool a
	is 300 b/new
	# Each message's file once; new/ once for each group of 64.
	[ "$(syncs_of '/b/tmp/[^/]*')" = 300 ]
	[ "$(syncs_of '/b/new')" = 5 ]
	[ "$(grep -c . syncs.log)" = 305 ]
	msg-unwrap --once -e dir:b >got.jsonl
	bodies got.jsonl | cmp - <(expect_bodies 1 300)
}

@test "faults: a writer's messages are published in groups of 256, and all at its end" {
	seq 1 600 >lines
	syncing FAULT_ERRNO=none FAULT_COUNT=0 -- msg-wrap -l --output dir:w lines
	is 600 w/new
	is 0 w/tmp
	[ "$(syncs_of '/w/tmp/[^/]*')" = 600 ]
	# 256, 512, then the last 88 at the end.
	[ "$(syncs_of '/w/new')" = 3 ]
}

@test "faults: a failed sync of an output file: exit 74, nothing lost, nothing twice" {
	spool_fill a 1 300
	# The 100th sync is of message 99's file (the first group of 64
	# took 65 syncs): the group 65-128 fails before it is published.
	run -74 --separate-stderr syncing FAULT_AT=100 FAULT_ERRNO=EIO -- \
		msg-route --once -f 'true()' --output dir:b dir:a
	[[ "$stderr" == "msg-route: cannot write 'dir:b': "*"Input/output error"* ]]
	[ "$(grep -c . syncs.log)" = 1 ]
	# Nothing half done: no file left in b/tmp, the first group out, the
	# rest (the failed group among them) still in a/.
	is 0 b/tmp
	is 64 b/new
	[ "$(($(nfiles a/new) + $(nfiles a/cur)))" = 236 ]
	# A second run without faults finishes the job, with no duplicate.
	msg-route --once -f 'true()' --output dir:b dir:a
	empty_spool a
	msg-unwrap --once -e dir:b >got.jsonl
	bodies got.jsonl | sort | cmp - <(expect_bodies 1 300)
}

@test "faults: a failed sync of new/: exit 74, the group's inputs kept, nothing lost" {
	spool_fill a 1 100
	run -74 --separate-stderr syncing FAULT_PATH='*/b/new' FAULT_ERRNO=ENOSPC -- \
		msg-route --once -f 'true()' --output dir:b dir:a
	[[ "$stderr" == "msg-route: cannot write 'dir:b': "*"No space left on device"* ]]
	# The renames of the first group may stand, but none of its inputs
	# was deleted: at worst a message is read again, never lost.
	is 0 b/tmp
	[ "$(($(nfiles a/new) + $(nfiles a/cur)))" = 100 ]
	msg-route --once -f 'true()' --output dir:b dir:a
	empty_spool a
	msg-unwrap --once -e dir:b >got.jsonl
	bodies got.jsonl | sort -u | cmp - <(expect_bodies 1 100)
}

# ---- entries a reader cannot read or claim ----
# The tests run as root too, which file modes do not stop: the shim
# fails the calls instead.

@test "faults: an entry the reader may not open is named, left in place, the rest read: exit 74" {
	spool_fill s 1 3
	run -74 --separate-stderr faulty FAULT_FUNCS=openat FAULT_PATH='*/s/new/000002.msg' \
		FAULT_COUNT=0 FAULT_ERRNO=EACCES -- msg-unwrap --once -s ' ' --stats dir:s
	[ "$output" = 'm000001 m000003' ]
	[ "$stderr" = "msg-unwrap: cannot read 'dir:s/new/000002.msg': Permission denied
msg-unwrap: stats: in 2, out 2, invalid 0, expired 0" ]
	[ "$(ls s/new)" = 000002.msg ]
	is 0 s/cur
	[ ! -e s/bad ]
	# Once it can be read, the next run takes it.
	run -0 msg-unwrap --once dir:s
	[ "$output" = m000002 ]
	empty_spool s
}

@test "faults: a raw inbox entry the reader may not open: named, exit 74, the others wrapped" {
	mkdir -p inbox/new
	printf one >inbox/new/a
	printf two >inbox/new/b
	run -74 --separate-stderr faulty FAULT_FUNCS=openat FAULT_PATH='*/inbox/new/a' \
		FAULT_COUNT=0 FAULT_ERRNO=EACCES -- msg-wrap --once dir:inbox
	[ "$(msg-unwrap <<<"$output")" = two ]
	[ "$stderr" = "msg-wrap: cannot read 'dir:inbox/new/a': Permission denied" ]
	[ "$(ls inbox/new)" = a ]
}

@test "faults: a waiting reader names an unreadable entry once, reads the rest, and exits 74 when stopped" {
	local reader
	spool_fill s 1 1
	# Through env, which becomes the tool: the signal reaches the tool.
	spawn env LD_PRELOAD="$BATS_FILE_TMPDIR/faultinject.so" \
		ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0" \
		FAULT_FUNCS=openat FAULT_PATH='*/s/new/000001.msg' FAULT_COUNT=0 \
		FAULT_ERRNO=EACCES FAULT_LOG="$PWD/faults.log" msg-unwrap -s '\n' dir:s >got 2>err
	reader=$spawned
	spool_fill s 2 2
	wait_until 20 eval '[ "$(cat got)" = m000002 ]'
	# Listed again while it waits, named only the first time.
	sleep 2.5
	spool_fill s 3 3
	wait_until 20 eval '[ "$(grep -c . got)" = 2 ]'
	alive "$reader"
	kill -TERM "$reader"
	status_of "$reader" 20
	[ "$status" = 74 ]
	[ "$(cat err)" = "msg-unwrap: cannot read 'dir:s/new/000001.msg': Permission denied" ]
	[ "$(ls s/new)" = 000001.msg ]
}

@test "faults: a spool on a read-only mount: the claim fails, named, exit 74, nothing lost" {
	spool_fill s 1 3
	run -74 --separate-stderr faulty FAULT_FUNCS=renameat FAULT_PATH='*/s/new/*' \
		FAULT_COUNT=0 FAULT_ERRNO=EROFS -- msg-unwrap --once dir:s
	[ -z "$output" ]
	[ "$stderr" = "msg-unwrap: cannot claim 'dir:s/new/000001.msg': Read-only file system" ]
	is 3 s/new
	is 0 s/cur
	# Messages claimed before the failure are delivered and deleted first.
	run -74 --separate-stderr faulty FAULT_FUNCS=renameat FAULT_PATH='*/s/new/*' \
		FAULT_AT=2 FAULT_COUNT=0 FAULT_ERRNO=EROFS -- msg-unwrap --once -s ' ' dir:s
	[ "$output" = m000001 ]
	[ "$stderr" = "msg-unwrap: cannot claim 'dir:s/new/000002.msg': Read-only file system" ]
	[ "$(ls s/new | paste -sd ' ')" = '000002.msg 000003.msg' ]
	is 0 s/cur
}

@test "faults: a file that cannot be set aside stays in the spool, named: exit 74" {
	spool_fill s 2 2
	printf 'garbage\n' >s/new/000001.msg
	mkfifo s/new/000001f.msg
	run -74 --separate-stderr faulty FAULT_FUNCS=openat FAULT_PATH='*/s/bad' \
		FAULT_COUNT=0 FAULT_ERRNO=EACCES -- msg-unwrap --once dir:s
	[ "$output" = m000002 ]
	[ "$stderr" = "msg-unwrap: dir:s/cur/000001.msg: offset 8: truncated frame: end of input in the header block; not a message stream; wrap raw data with msg-wrap
msg-unwrap: cannot set 'dir:s/cur/000001.msg' aside; it stays in the spool: Permission denied
msg-unwrap: 'dir:s/new/000001f.msg' is a FIFO, not a regular file
msg-unwrap: cannot set 'dir:s/new/000001f.msg' aside; it stays in the spool: Permission denied" ]
	[ "$(cat s/cur/000001.msg)" = garbage ]
	[ -p s/new/000001f.msg ]
}

@test "faults: without RENAME_NOREPLACE, entries are set aside by link(2), or looked for first: none replaced" {
	mkdir -p s/bad
	printf 'first\n' >s/bad/000001.msg
	mkdir s/bad/000002.msg
	spool_fill s 3 3
	printf 'garbage\n' >s/new/000001.msg
	mkdir s/new/000002.msg
	run -65 --separate-stderr faulty FAULT_FUNCS=renameat2 FAULT_COUNT=0 FAULT_ERRNO=EINVAL -- \
		msg-unwrap --once dir:s
	[ "$output" = m000003 ]
	[ "${stderr_lines[1]}" = "msg-unwrap: 'dir:s/cur/000001.msg' set aside as 'dir:s/bad/000001-2.msg'" ]
	[ "${stderr_lines[3]}" = "msg-unwrap: 'dir:s/new/000002.msg' set aside as 'dir:s/bad/000002-2.msg'" ]
	[ "$(cat s/bad/000001.msg)" = first ]
	[ "$(cat s/bad/000001-2.msg)" = garbage ]
	# A directory cannot be linked: its new name is looked for first.
	[ -d s/bad/000002.msg ]
	[ -d s/bad/000002-2.msg ]
	empty_spool s
}
