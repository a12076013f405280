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
