#!/bin/sh
# dir: spool channels: BENCH_DIR_MESSAGES (default 10,000) small messages
# written into a spool by msg-wrap and drained out of it by msg-unwrap
# --once, against the same messages through a plain file.
# usage: sh bench/dir.sh [BUILD]
#
# A message into a spool costs a file, its fsync and a rename, and a share
# of one fsync of new/ for each group of messages committed together;
# out of it a lock, a rename and an unlink. The third figure is a flow
# from spool to spool through msg-route, whose reader commits up to 64
# messages' outputs at once. Reported with the times: the fsync calls
# (counted by tests/faults/faultinject with FAULT_ERRNO=none, which lets
# every sync through unmade) and the times of the same runs with the
# syncs skipped that way: the ratio says how much of the time is the
# disk's. The reader makes no fsync, but on a journalling file system
# renaming and deleting files that are on the disk waits for the journal,
# so it is timed on a spool written both ways. The reader has a target of
# its own: it lists new/ once per 4096 messages, so draining a spool must
# cost the same per message however full the spool is; a reader that
# listed the directory for every message took minutes over 10,000.
#
# The spool lives in the scratch directory under TMPDIR, whose file
# system is named in the output: on a tmpfs an fsync costs nothing.
set -u

here=$(dirname "$0")
. "$here/lib.sh"

bench_init "${1:-build}"
N=${BENCH_DIR_MESSAGES:-10000}
bench_need_positive BENCH_DIR_MESSAGES "$N"
READ_TARGET=10000	# messages per second out of a spool, fsyncs skipped
wrap=$(bench_tool msg-wrap)
unwrap=$(bench_tool msg-unwrap)
route=$(bench_tool msg-route)
lines=$BENCH_TMP/dir-lines.txt
awk -v n="$N" 'BEGIN { for (i = 1; i <= n; i++) printf "message %08d %s\n", i, "payload-payload-payload-payload" }' >"$lines"

# One round trip through dir:SPOOL, as PREFIX (nothing, or bench_nosync) runs
# it; best of BENCH_RUNS: IN_US and OUT_US. Every run checks that what
# came out is what went in and that the spool is empty after.
round_trip() {
	IN_US='' OUT_US=''
	_r=0
	while [ "$_r" -lt "$BENCH_RUNS" ]; do
		_sp=$BENCH_TMP/spool.$_r.$#
		bench_elapsed_us "$@" "$wrap" -l "$lines" --output "dir:$_sp"
		[ -z "$IN_US" ] || [ "$_us" -lt "$IN_US" ] && IN_US=$_us
		_got=$(find "$_sp/new" -type f | wc -l)
		[ "$_got" -eq "$N" ] || bench_die "spool holds $_got messages, not $N"
		bench_elapsed_us "$@" "$unwrap" --once -s '\n' --output "$BENCH_TMP/out.txt" "dir:$_sp"
		[ -z "$OUT_US" ] || [ "$_us" -lt "$OUT_US" ] && OUT_US=$_us
		printf '\n' >>"$BENCH_TMP/out.txt"
		cmp -s "$lines" "$BENCH_TMP/out.txt" ||
			bench_die "what came out of the spool is not what went in"
		rm -f "$BENCH_TMP/out.txt"
		_left=$(find "$_sp" -type f | wc -l)
		[ "$_left" -eq 0 ] || bench_die "$_left files left in the spool"
		rm -rf "$_sp"
		_r=$((_r + 1))
	done
}

# From one spool into another through msg-route, as PREFIX runs it; best
# of BENCH_RUNS: THROUGH_US. The input spool is filled outside the timing.
through() {
	THROUGH_US=
	_r=0
	while [ "$_r" -lt "$BENCH_RUNS" ]; do
		_a=$BENCH_TMP/from.$_r.$# _b=$BENCH_TMP/to.$_r.$#
		bench_nosync "$wrap" -l "$lines" --output "dir:$_a" ||
			bench_die "filling '$_a' failed"
		bench_elapsed_us "$@" "$route" --once -f 'true()' --output "dir:$_b" "dir:$_a"
		[ -z "$THROUGH_US" ] || [ "$_us" -lt "$THROUGH_US" ] && THROUGH_US=$_us
		_got=$(find "$_b/new" -type f | wc -l)
		[ "$_got" -eq "$N" ] || bench_die "the output spool holds $_got messages, not $N"
		_left=$(find "$_a" -type f | wc -l)
		[ "$_left" -eq 0 ] || bench_die "$_left files left in the input spool"
		rm -rf "$_a" "$_b"
		_r=$((_r + 1))
	done
}

bench_nosync_init

fs=$(stat -f -c %T "$BENCH_TMP" 2>/dev/null || echo unknown)
echo "dir: $N messages of $(($(wc -c <"$lines") / N)) bytes, spool on $fs"

round_trip
sync_in=$IN_US sync_out=$OUT_US
round_trip bench_nosync
nosync_in=$IN_US nosync_out=$OUT_US

through
sync_through=$THROUGH_US
through bench_nosync
nosync_through=$THROUGH_US

bench_measure "$lines" null "$wrap" -l
plain_in=$BENCH_US
"$wrap" -l "$lines" --output "$BENCH_TMP/plain.msg" || bench_die "msg-wrap into a file failed"
bench_measure "$BENCH_TMP/plain.msg" null "$unwrap" -s '\n'
plain_out=$BENCH_US
bench_measure "$BENCH_TMP/plain.msg" null "$route" -f 'true()'
plain_through=$BENCH_US

fsyncs_in=$(bench_count_syncs "$BENCH_TMP/in.log" "$wrap" -l "$lines" --output "dir:$BENCH_TMP/counted")
fsyncs_out=$(bench_count_syncs "$BENCH_TMP/out.log" "$unwrap" --once "dir:$BENCH_TMP/counted" --output /dev/null)
bench_nosync "$wrap" -l "$lines" --output "dir:$BENCH_TMP/counted" ||
	bench_die "msg-wrap failed"
fsyncs_through=$(bench_count_syncs "$BENCH_TMP/through.log" "$route" --once -f 'true()' \
	--output "dir:$BENCH_TMP/counted-out" "dir:$BENCH_TMP/counted")

# report TITLE LABEL-SYNC LABEL-NOSYNC SYNC_US NOSYNC_US PLAIN_US FSYNCS
report() {
	echo "$1"
	bench_result "$2" "$4" "" "$(bench_per_sec "$N" "$4") msg/s"
	bench_result "$3" "$5" "" "$(bench_per_sec "$N" "$5") msg/s"
	bench_result "a plain file (at most once)" "$6" "" "$(bench_per_sec "$N" "$6") msg/s"
	echo "  fsync calls: $7; with/without fsync $(bench_ratio "$4" "$5")x," \
		"spool/plain file $(bench_ratio "$4" "$6")x"
}
report "into the spool (msg-wrap -l --output dir:):" "with fsync" \
	"fsyncs skipped (unsafe)" "$sync_in" "$nosync_in" "$plain_in" "$fsyncs_in"
report "out of the spool (msg-unwrap --once dir:), which makes no fsync itself:" \
	"spool written with fsync" "spool written with fsyncs skipped" \
	"$sync_out" "$nosync_out" "$plain_out" "$fsyncs_out"
report "from spool to spool (msg-route --once -f 'true()' --output dir: dir:):" \
	"with fsync" "fsyncs skipped (unsafe)" \
	"$sync_through" "$nosync_through" "$plain_through" "$fsyncs_through"
# On a journalling file system, renaming and unlinking files that are on
# the disk waits for the journal; files still in the page cache do not.
bench_verdict "reading a spool of $N (written with syncs skipped)" \
	"$(bench_per_sec "$N" "$nosync_out")" ">=" "$READ_TARGET" " msg/s"
