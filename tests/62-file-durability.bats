#!/usr/bin/env bats
# Single files and the disk: what msg-unwrap(1) promises for -d, checked
# call by call through the fault shim (tests/faults/faultinject.so). Each
# file is fsynced under its hidden temporary name, then given its name
# with renameat2(RENAME_NOREPLACE) (or, where a file system lacks that,
# with link(2)), which never replaces a file; files go in groups of up to
# 128, all synced, then all named; the directory is fsynced once, after
# the last name. A failed sync is an I/O error (74) that
# leaves no half-named file behind.

load test_helper
bats_require_minimum_version 1.5.0
load crash/build

# The frame helper counts characters; keep every count a byte count.
export LC_ALL=C

setup_file() {
	cc_preload "$BATS_FILE_TMPDIR/faultinject.so" "$MSG_TOP/tests/faults/faultinject.c"
}

# listing DIR: the names in DIR, hidden ones too, on one line.
listing() {
	ls -A "$1" | tr '\n' ' '
}

# three: three messages for orders.xml, notes and orders.xml again.
three() {
	frame one 'File-Name: orders.xml'
	frame two 'File-Name: notes'
	frame three 'File-Name: orders.xml'
}

# calls: faults.log with the scratch directory as '.' and each temporary
# name as TMP, one call a line.
calls() {
	sed -e "s|$(pwd -P)/|./|" -e 's|/\.tmp\.[0-9]*\.[0-9a-f]*|/TMP|' faults.log
}

@test "durability: -d fsyncs each file before naming it, and the directory after the last name" {
	mkdir out
	three >in.msg
	faulty FAULT_FUNCS=fsync,fdatasync,dirsync,renameat2,linkat,renameat,rename \
		FAULT_ERRNO=none FAULT_COUNT=0 -- msg-unwrap -d out in.msg
	[ "$(listing out)" = "notes orders.xml orders.xml.1 " ]
	[ "$(cat out/orders.xml out/notes out/orders.xml.1)" = onetwothree ]
	# The files are synced, then named in the order they came; the
	# third tries orders.xml, taken, then orders.xml.1.
	[ "$(calls)" = "fsync ./out/TMP skipped
fsync ./out/TMP skipped
fsync ./out/TMP skipped
renameat2 ./out/TMP skipped
renameat2 ./out/TMP skipped
renameat2 ./out/TMP skipped
renameat2 ./out/TMP skipped
dirsync ./out skipped" ]
	# Each file is synced under the very name that is then renamed.
	run -0 awk '$1 == "fsync" { synced[$2] = 1 }
		$1 == "renameat2" && !($2 in synced) { exit 1 }' faults.log
}

# many N: N messages for the files f001, f002, ... in that order.
many() {
	local i
	for ((i = 1; i <= $1; i++)); do
		frame "body $i" "File-Name: $(printf 'f%03d' "$i")"
	done
}

@test "durability: -d publishes 300 files in groups of 128, each synced before any is named, the directory once" {
	mkdir out
	many 300 >in.msg
	faulty FAULT_FUNCS=fsync,dirsync,renameat2 FAULT_ERRNO=none FAULT_COUNT=0 -- \
		msg-unwrap -d out in.msg
	[ "$(ls -A out | wc -l)" = 300 ]
	[ "$(ls -A out | grep -c '^\.')" = 0 ]
	[ "$(cat out/f001 out/f300)" = "body 1body 300" ]
	# A group's files are all synced, then all named; the directory is
	# synced after the last name.
	[ "$(awk '{ print $1 }' faults.log | uniq -c | awk '{ printf "%s %s,", $1, $2 }')" = \
		"128 fsync,128 renameat2,128 fsync,128 renameat2,44 fsync,44 renameat2,1 dirsync," ]
	# Each renamed temporary was synced before, under that name.
	run -0 awk '$1 == "fsync" { synced[$2] = 1 }
		$1 == "renameat2" && !($2 in synced) { exit 1 }' faults.log
}

@test "durability: a failed fsync in the second group: exit 74 naming its file, the files before it named, none after" {
	mkdir out
	many 200 >in.msg
	run -74 --separate-stderr faulty FAULT_FUNCS=fsync FAULT_PATH='*/out/.tmp.*' \
		FAULT_AT=130 FAULT_ERRNO=EIO -- msg-unwrap -d out in.msg
	[ "$stderr" = "msg-unwrap: cannot write 'out/f130': Input/output error" ]
	[ "$(ls -A out | wc -l)" = 129 ]
	[ "$(ls -A out | tail -n 1)" = f129 ]
	[ "$(ls -A out | grep -c '^\.')" = 0 ]
}

@test "durability: a failed fsync of a -d file: exit 74, the file never gets its name" {
	mkdir out
	three >in.msg
	run -74 --separate-stderr faulty FAULT_FUNCS=fsync FAULT_PATH='*/out/.tmp.*' \
		FAULT_AT=2 FAULT_ERRNO=EIO -- msg-unwrap -d out in.msg
	[ "$stderr" = "msg-unwrap: cannot write 'out/notes': Input/output error" ]
	[ "$(listing out)" = "orders.xml " ]
	[ "$(cat out/orders.xml)" = one ]
	[ "$(grep -c . faults.log)" = 1 ]
}

@test "durability: a failed fsync of the -d directory: exit 74 after every file is named" {
	mkdir out
	three >in.msg
	run -74 --separate-stderr faulty FAULT_FUNCS=dirsync FAULT_ERRNO=EIO -- \
		msg-unwrap -d out in.msg
	[ "$stderr" = "msg-unwrap: cannot sync directory 'out': Input/output error" ]
	[ "$(listing out)" = "notes orders.xml orders.xml.1 " ]
	[ "$(calls)" = "dirsync ./out Input/output error" ]
}

# fallback ERRNO: -d with every renameat2 failing with ERRNO, into a
# directory where orders.xml and orders.xml.1 are taken.
fallback() {
	rm -rf out faults.log
	mkdir out
	printf 'OLD' >out/orders.xml
	printf 'OLD2' >out/orders.xml.1
	three >in.msg
	run -0 faulty FAULT_FUNCS=renameat2 FAULT_ERRNO="$1" FAULT_COUNT=0 -- \
		msg-unwrap -d out in.msg
	[ "$(cat out/orders.xml)" = OLD ]
	[ "$(cat out/orders.xml.1)" = OLD2 ]
	[ "$(cat out/orders.xml.2)" = one ]
	[ "$(cat out/notes)" = two ]
	[ "$(cat out/orders.xml.3)" = three ]
	# No temporary is left, and each file has one name only.
	[ "$(listing out)" = "notes orders.xml orders.xml.1 orders.xml.2 orders.xml.3 " ]
	[ "$(stat -c %h out/orders.xml.2 out/notes out/orders.xml.3 | tr '\n' ' ')" = "1 1 1 " ]
}

@test "durability: without RENAME_NOREPLACE (EINVAL) or renameat2 (ENOSYS) -d names files by link(2), never replacing one" {
	fallback EINVAL
	# Every name was tried with renameat2 first: orders.xml, orders.xml.1
	# and orders.xml.2 for the first file, notes for the second, and
	# orders.xml, then orders.xml.3 for the third (numbers go on where the
	# last search for that name stopped).
	[ "$(grep -c '^renameat2 .*/out/\.tmp\..* Invalid argument$' faults.log)" = 6 ]
	fallback ENOSYS
	[ "$(grep -c '^renameat2 .*/out/\.tmp\..* Function not implemented$' faults.log)" = 6 ]
}

@test "durability: a link that fails in the fallback: exit 74, no temporary left, nothing replaced" {
	mkdir out
	printf 'OLD' >out/orders.xml
	three >in.msg
	run -74 --separate-stderr faulty FAULT_FUNCS=renameat2,linkat FAULT_ERRNO=EINVAL \
		FAULT_COUNT=0 -- msg-unwrap -d out in.msg
	[ "$stderr" = "msg-unwrap: cannot write 'out/orders.xml': Invalid argument" ]
	[ "$(listing out)" = "orders.xml " ]
	[ "$(cat out/orders.xml)" = OLD ]
	[ "$(calls)" = "renameat2 ./out/TMP Invalid argument
linkat ./out/TMP Invalid argument" ]
}
