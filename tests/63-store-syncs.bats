#!/usr/bin/env bats
# The store's syncs and renames, call by call, in the order msg-store(5)
# promises them (WRITING): a new store's directory, its parent, its two
# files each fsynced before its rename, the directory after; one fsync of
# the log per commit; a compaction's log fsynced, renamed, and the
# directory fsynced before anything goes to the new log; a torn tail cut
# and fsynced at open. The fault shim (tests/faults/faultinject.so)
# logs every call and skips the syncs (FAULT_ERRNO=none).

load test_helper
bats_require_minimum_version 1.5.0
load crash/build

setup_file() {
	store_helpers
}

setup() {
	cd "$BATS_TEST_TMPDIR" || return 1
	W=$BATS_FILE_TMPDIR/store-writer
}

# logged CMD...: CMD with every sync and rename logged in faults.log.
logged() {
	faulty FAULT_FUNCS=fsync,fdatasync,dirsync,rename,renameat,renameat2,linkat \
		FAULT_ERRNO=none FAULT_COUNT=0 -- "$@"
}

# calls: faults.log with the scratch directory as '.', one call a line.
calls() {
	sed -e "s|$(pwd -P)|.|" -e 's| skipped$||' faults.log
}

L1=log.0000000000000001
L2=log.0000000000000002

@test "store syncs: a new store: parent, files fsynced then renamed, directory; one fsync a commit" {
	run -0 logged "$W" -q -b 5 -n 15 st
	[ "$(calls)" = "dirsync .
fsync ./st/tmp.version
renameat ./st/tmp.version
fsync ./st/tmp.$L1
renameat ./st/tmp.$L1
dirsync ./st
fsync ./st/$L1
fsync ./st/$L1
fsync ./st/$L1" ]
	run -0 "$W" --check /dev/null st
	[[ $output == "ok: 15 messages in "* ]]
}

@test "store syncs: an existing store: only the commits are synced" {
	"$W" -q -b 5 -n 5 st
	run -0 logged "$W" -q -b 5 -n 15 st
	[ "$(calls)" = "fsync ./st/$L1
fsync ./st/$L1" ]
}

@test "store syncs: a compaction: new log fsynced, renamed, directory fsynced, then appended to" {
	"$W" -q -b 5 -n 10 st
	run -0 logged "$W" -q -b 5 -n 20 -c 2 st
	# Two commits, the second followed by its compaction.
	[ "$(calls)" = "fsync ./st/$L1
fsync ./st/$L1
fsync ./st/tmp.$L2
renameat ./st/tmp.$L2
dirsync ./st" ]
	[ ! -e "st/$L1" ]
	run -0 logged "$W" -q -b 5 -n 25 st
	[ "$(calls | tail -n 1)" = "fsync ./st/$L2" ]
	run -0 "$W" --check /dev/null st
	[[ $output == "ok: 25 messages in "* ]]
}

@test "store syncs: a torn tail is cut at open and the cut fsynced before anything else" {
	"$W" -q -b 5 -n 10 st
	size=$(stat -c %s "st/$L1")
	printf 'torn record' >>"st/$L1"
	run -0 logged "$W" -q -b 5 -n 15 st
	[ "$(calls)" = "fsync ./st/$L1
fsync ./st/$L1" ]
	[ "$(stat -c %s "st/$L1")" -gt "$size" ]
	run -0 "$W" --check /dev/null st
	[[ $output == "ok: 15 messages in "* ]]
}
