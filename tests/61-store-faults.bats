#!/usr/bin/env bats
# The store when the disk fails: write, fsync, rename and openat made to
# fail with EIO or ENOSPC by tests/faults/faultinject.so at a chosen call.
# The store reports the error (the writer exits 74 for EIO, 75 for a full
# disk) and acknowledges nothing it could not make durable; started again
# without faults, it holds every acknowledged message and nothing partial.
# Also: the free-space margin, the lock, and a newer format.

load test_helper
bats_require_minimum_version 1.5.0
load crash/build

setup_file() {
	cc_program "$BATS_FILE_TMPDIR/store-writer" "$MSG_TOP/tests/crash/store-writer.c"
	cc_preload "$BATS_FILE_TMPDIR/faultinject.so" "$MSG_TOP/tests/faults/faultinject.c"
}

setup() {
	cd "$BATS_TEST_TMPDIR" || return 1
	W=$BATS_FILE_TMPDIR/store-writer
	: >acks
}

# The store holds every acknowledged message, whole, each batch all or
# nothing; and it takes more, up to 300 messages, checked again.
consistent() {
	run "$W" --check acks st
	echo "$output"
	[ "$status" -eq 0 ]
	"$W" -b 30 -n 300 st >>acks
	run "$W" --check acks st
	echo "$output"
	[ "$status" -eq 0 ]
	[[ $output == "ok: 300 messages in "*", $(wc -l <acks) acknowledged" ]]
}

@test "faults: the shim fails only the calls it is told to" {
	printf 'x' >data
	run -0 faulty FAULT_FUNCS=fsync -- dd if=data of=copy conv=fdatasync status=none
	[ "$(cat copy)" = x ]
	[ ! -e faults.log ]
	run -1 --separate-stderr faulty FAULT_FUNCS=fdatasync FAULT_ERRNO=ENOSPC -- \
		dd if=data of=copy2 conv=fdatasync status=none
	[[ $stderr == *"No space left on device"* ]]
	[ "$(cat faults.log)" = "fdatasync $(pwd -P)/copy2 No space left on device" ]
}

@test "faults: write EIO in a commit: exit 74, nothing acknowledged after it" {
	run -74 --separate-stderr faulty FAULT_FUNCS=write FAULT_PATH='*/log.*' \
		FAULT_AT=5 -- "$W" -b 10 -n 200 st
	[ "$stderr" = "store-writer: cannot write 'st/log.0000000000000001': Input/output error" ]
	printf '%s\n' "$output" >acks
	[ "$(wc -l <acks)" -eq 40 ]
	[ "$(wc -l <faults.log)" -eq 1 ]
	consistent
}

@test "faults: a write that fills the disk halfway: exit 75, the torn tail is dropped" {
	run -75 --separate-stderr faulty FAULT_FUNCS=write FAULT_PATH='*/log.*' \
		FAULT_AT=3 FAULT_ERRNO=ENOSPC FAULT_PARTIAL=1 -- "$W" -b 10 -n 200 st
	[ "$stderr" = "store-writer: cannot write 'st/log.0000000000000001': No space left on device" ]
	printf '%s\n' "$output" >acks
	[ "$(wc -l <acks)" -eq 20 ]
	"$W" -n 1 -l recovered st
	grep -q '^discarded [1-9]' recovered
	consistent
}

@test "faults: a disk that stays full: exit 75, and the store recovers" {
	run -75 --separate-stderr faulty FAULT_FUNCS=write FAULT_PATH='*/log.*' \
		FAULT_AT=4 FAULT_COUNT=0 FAULT_ERRNO=ENOSPC -- "$W" -b 10 -n 200 st
	[[ $stderr == *": No space left on device" ]]
	printf '%s\n' "$output" >acks
	[ "$(wc -l <acks)" -eq 30 ]
	consistent
}

@test "faults: fsync EIO in a commit: exit 74, that batch not acknowledged" {
	run -74 --separate-stderr faulty FAULT_FUNCS=fsync FAULT_PATH='*/log.*' \
		FAULT_AT=3 -- "$W" -b 10 -n 200 st
	[ "$stderr" = "store-writer: cannot sync 'st/log.0000000000000001': Input/output error" ]
	printf '%s\n' "$output" >acks
	[ "$(wc -l <acks)" -eq 20 ]
	consistent
}

@test "faults: fsync ENOSPC in a commit: exit 75" {
	run -75 --separate-stderr faulty FAULT_FUNCS=fsync FAULT_PATH='*/log.*' \
		FAULT_AT=2 FAULT_ERRNO=ENOSPC -- "$W" -b 10 -n 200 st
	[ "$stderr" = "store-writer: cannot sync 'st/log.0000000000000001': No space left on device" ]
	printf '%s\n' "$output" >acks
	[ "$(wc -l <acks)" -eq 10 ]
	consistent
}

@test "faults: a failed rename in a compaction: exit 74, the old log stays current" {
	# The first such rename is the store's creation.
	run -74 --separate-stderr faulty FAULT_FUNCS=renameat \
		FAULT_PATH='*/tmp.log.*' FAULT_AT=2 -- "$W" -b 10 -n 200 -c 3 st
	[ "$stderr" = "store-writer: cannot rename 'st/tmp.log.0000000000000002': Input/output error" ]
	printf '%s\n' "$output" >acks
	[ "$(wc -l <acks)" -eq 30 ]
	[ -e st/tmp.log.0000000000000002 ]
	consistent
	[ ! -e st/tmp.log.0000000000000002 ]
}

@test "faults: a failed directory fsync after a compaction's rename: exit 74" {
	# The first fsync of the directory itself is the store's creation;
	# the second follows the first compaction's rename.
	run -74 --separate-stderr faulty FAULT_FUNCS=fsync FAULT_PATH="$(pwd -P)/st" \
		FAULT_AT=2 -- "$W" -b 10 -n 200 -c 2 st
	[ "$stderr" = "store-writer: cannot sync 'st': Input/output error" ]
	printf '%s\n' "$output" >acks
	[ "$(wc -l <acks)" -eq 20 ]
	# Both logs are whole; the newer one is current and the older goes.
	[ -e st/log.0000000000000001 ]
	[ -e st/log.0000000000000002 ]
	consistent
	[ ! -e st/log.0000000000000001 ]
}

@test "faults: the compaction's file cannot be created: exit 74, nothing lost" {
	# The first such file is the store's first log.
	run -74 --separate-stderr faulty FAULT_FUNCS=openat FAULT_PATH='*/tmp.log.*' \
		FAULT_AT=2 -- "$W" -b 10 -n 200 -c 2 st
	[ "$stderr" = "store-writer: cannot create 'st/tmp.log.0000000000000002': Input/output error" ]
	printf '%s\n' "$output" >acks
	[ "$(wc -l <acks)" -eq 20 ]
	consistent
}

@test "faults: a new store whose version file cannot be renamed: exit 75" {
	run -75 --separate-stderr faulty FAULT_FUNCS=renameat FAULT_PATH='*/tmp.version' \
		FAULT_ERRNO=ENOSPC -- "$W" -b 10 -n 200 st
	[ "$stderr" = "store-writer: cannot rename 'st/tmp.version': No space left on device" ]
	[ -z "$output" ]
	consistent
	[ ! -e st/tmp.version ]
	[ "$(cat st/version)" = "msg-store 1" ]
}

@test "faults: the lock file cannot be created: exit 75 on a full disk, 73 otherwise" {
	run -75 --separate-stderr faulty FAULT_FUNCS=openat FAULT_PATH='*/st/lock' \
		FAULT_ERRNO=ENOSPC -- "$W" -n 10 st
	[ "$stderr" = "store-writer: cannot open 'st/lock': No space left on device" ]
	run -73 --separate-stderr faulty FAULT_FUNCS=openat FAULT_PATH='*/st/lock' \
		FAULT_ERRNO=EACCES -- "$W" -n 10 st
	[ "$stderr" = "store-writer: cannot open 'st/lock': Permission denied" ]
	consistent
}

@test "faults: below the free-space margin new data is refused with 75" {
	"$W" -b 10 -n 20 st >acks
	MSG_STORE_MIN_FREE=1000000T run -75 --separate-stderr "$W" -b 10 -n 200 st
	[[ $stderr == "store-writer: cannot store in 'st': less than "*" bytes would be left free: No space left on device" ]]
	[ -z "$output" ]
	MSG_STORE_MIN_FREE=nonsense run -64 --separate-stderr "$W" -n 10 st
	[ "$stderr" = "store-writer: MSG_STORE_MIN_FREE 'nonsense': Invalid argument" ]
	consistent
}

@test "faults: a second instance gets 75, state directory busy" {
	"$W" -b 10 -n 20 st >acks
	run -75 --separate-stderr flock st/lock "$W" -n 30 st
	[ "$stderr" = "store-writer: cannot lock 'st/lock': state directory busy" ]
	consistent
}

@test "faults: a store of a newer format is refused and left alone" {
	"$W" -b 10 -n 20 st >acks
	cp st/log.0000000000000001 saved
	echo 'msg-store 2' >st/version
	run -65 --separate-stderr "$W" -n 30 st
	[ "$stderr" = "store-writer: 'st': store format 2 was written by a newer msgtools; this one reads format 1 and older" ]
	cmp saved st/log.0000000000000001
	echo 'msg-store 1' >st/version
	consistent
}

@test "faults: a directory that is not a store is refused" {
	mkdir st
	echo keep >st/notes
	run -65 --separate-stderr "$W" -n 30 st
	[ "$stderr" = "store-writer: 'st': not a message store, and not empty" ]
	[ "$(ls st)" = notes ]
}
