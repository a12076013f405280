#!/bin/sh
# store: durable ingest through lib/store with group commit.
# usage: sh bench/store.sh [BUILD]
#
# BENCH_MESSAGES (default 100000) small messages (a frame of about 190
# bytes each: BENCH_VALUE, default 150, bytes of body) are put into a new
# store in batches of BENCH_BATCH (default 256), each batch made durable
# by one store_commit(), that is one fsync. The driver is the crash tests'
# tests/crash/store-writer, compiled here against BUILD/libmsg.a with the
# build's flags. Target: at least 20,000 messages per second.
#
# Reported with it: the number of fsync calls (the store's own count, and
# strace -c -f's on a run of BENCH_STRACE_MESSAGES, default 10000, when
# strace is installed), and the time of the same run with fsync turned
# off (MSG_STORE_NOSYNC=1, unsafe, for this comparison only): the ratio
# says how much of the time is the disk's.
#
# The store lives in the scratch directory under TMPDIR: on a tmpfs fsync
# costs nothing and the figures say nothing about durability, so the
# file system is named in the output. Before anything is timed, a run is
# checked message by message (store-writer --check); a store that loses
# or garbles messages is a broken run, however fast.
set -u

here=$(dirname "$0")
. "$here/lib.sh"

bench_init "${1:-build}"
[ -f "$BENCH_BUILD/libmsg.a" ] ||
	bench_die "'$BENCH_BUILD/libmsg.a' not found; run make first"

MESSAGES=${BENCH_MESSAGES:-100000}
VALUE=${BENCH_VALUE:-150}
BATCH=${BENCH_BATCH:-256}
STRACE_MESSAGES=${BENCH_STRACE_MESSAGES:-10000}
bench_need_positive \
	"BENCH_MESSAGES, BENCH_VALUE, BENCH_BATCH and BENCH_STRACE_MESSAGES" \
	"$MESSAGES" "$VALUE" "$BATCH" "$STRACE_MESSAGES"
RATE_TARGET=20000	# messages per second, with fsync

# The driver, with the flags the Makefile gives everything it builds.
writer=$BENCH_TMP/store-writer
pkgs="libxml-2.0 libxslt libexslt jansson"
san=
case $BENCH_BUILD in
*san*) san="-fsanitize=address,undefined" ;;
esac
# shellcheck disable=SC2046,SC2086 # the flags are words
${CC:-cc} -std=gnu11 -D_GNU_SOURCE -O2 -g $san -I"$here/../lib" \
	$(pkg-config --cflags $pkgs) -o "$writer" "$here/../tests/crash/store-writer.c" \
	"$BENCH_BUILD/libmsg.a" $(pkg-config --libs $pkgs) -lm ||
	bench_die "cannot compile tests/crash/store-writer.c"

# Each run writes a new store in a directory of its own; sh -c rather
# than a function, as time(1) runs it too.
# Usage: sh -c "$ingest" sh SCRATCH WRITER COUNT BATCH VALUE
ingest='d=$(mktemp -d "$1/store.XXXXXX") && exec "$2" -q -n "$3" -b "$4" -v "$5" "$d/st"'

# The fsync count of one run, as the store counts them ("syncs N").
store_syncs() {
	_sd=$BENCH_TMP/count.$1
	"$writer" -q --stats -n "$1" -b "$BATCH" -v "$VALUE" "$_sd" 2>"$BENCH_TMP/stats" ||
		bench_die "store-writer -n $1 failed: $(cat "$BENCH_TMP/stats")"
	sed -n 's/.* syncs \([0-9]*\) .*/\1/p' "$BENCH_TMP/stats"
}

# Check a store of all the messages, one by one, outside the timed runs.
check_store() {
	_cd=$BENCH_TMP/checked
	"$writer" -q -n "$MESSAGES" -b "$BATCH" -v "$VALUE" "$_cd" ||
		bench_die "store-writer failed"
	_out=$("$writer" --check /dev/null -v "$VALUE" "$_cd" 2>&1) ||
		bench_die "the store does not hold what was put: $_out"
	case $_out in
	"ok: $MESSAGES messages in "*) ;;
	*) bench_die "store-writer --check: $_out" ;;
	esac
	rm -rf "$_cd"
}

check_store
fs=$(stat -f -c %T "$BENCH_TMP" 2>/dev/null || echo unknown)
echo "store: durable ingest of $MESSAGES messages ($VALUE-byte bodies)," \
	"batches of $BATCH, on $fs"

bench_measure /dev/null null sh -c "$ingest" sh "$BENCH_TMP" "$writer" \
	"$MESSAGES" "$BATCH" "$VALUE"
sync_us=$BENCH_US
rm -rf "$BENCH_TMP"/store.*
rate=$(bench_per_sec "$MESSAGES" "$sync_us")
bench_result "store-writer, fsync per commit" "$sync_us" "$BENCH_RSS" "$rate msg/s"

export MSG_STORE_NOSYNC=1
bench_measure /dev/null null sh -c "$ingest" sh \
	"$BENCH_TMP" "$writer" "$MESSAGES" "$BATCH" "$VALUE"
unset MSG_STORE_NOSYNC
nosync_us=$BENCH_US
rm -rf "$BENCH_TMP"/store.*
bench_result "store-writer, MSG_STORE_NOSYNC=1 (unsafe)" "$nosync_us" \
	"$BENCH_RSS" "$(bench_per_sec "$MESSAGES" "$nosync_us") msg/s"

commits=$(((MESSAGES + BATCH - 1) / BATCH))
echo "  fsync calls: $(store_syncs "$MESSAGES") for $commits commits" \
	"(the store's count; the rest make the new store's files durable)"
if command -v strace >/dev/null; then
	_sd=$BENCH_TMP/strace
	strace -c -f -e trace=fsync,fdatasync -o "$BENCH_TMP/strace.out" \
		"$writer" -q --stats -n "$STRACE_MESSAGES" -b "$BATCH" -v "$VALUE" \
		"$_sd" 2>"$BENCH_TMP/stats" || bench_die "strace of store-writer failed"
	# The summary's fourth column is the number of calls.
	_traced=$(awk '$NF == "fsync" || $NF == "fdatasync" { n += $4 }
		END { print n + 0 }' "$BENCH_TMP/strace.out")
	_counted=$(sed -n 's/.* syncs \([0-9]*\) .*/\1/p' "$BENCH_TMP/stats")
	echo "  strace -c -f on $STRACE_MESSAGES messages: $_traced fsync calls" \
		"(the store counted $_counted)"
else
	echo "  strace not found: fsync calls not traced"
fi

bench_verdict "durable ingest, messages per second" "$rate" ">=" \
	"$RATE_TARGET" " msg/s"
echo "  time with fsync / time without: $(bench_ratio "$sync_us" "$nosync_us")x" \
	"(for reference)"
