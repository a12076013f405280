#!/bin/sh
# trickle: msg-trickle --state in a loop with its target, closed by a FIFO.
# usage: sh bench/trickle.sh [BUILD]
#
# Data: BENCH_ENTITIES (default 10000) entities of 5 versions each, the
# versions of each entity in order, the entities interleaved at random
# (the same each time), a JSON body of about 30 bytes each: the requests
# of tests/fixtures/trickle-loop/requests.
#
# The loop is that of tests/fixtures/trickle-loop/fifo-loop:
#
#     msg-trickle --state DIR -r resp.fifo < requests | respond > resp.fifo
#
# where respond, the target, is msg-translate setting Status: success and
# Correlation-Id from each request's Message-Id. A round trip is one
# request sent and its response taken in; the run ends when the last
# version of every entity has succeeded. Each run has a new state
# directory in the scratch directory (the file system is named in the
# output: on a tmpfs fsync costs nothing). Target: at least 10,000 round
# trips per second, best of BENCH_LOOP_RUNS (default BENCH_RUNS, at most
# 3), with the run timed whole: the target's processes and the start-up
# are part of the loop.
#
# Reported with it, without targets: the fsync(2) and fdatasync(2) calls
# per round trip, counted by strace -c -f on one run when it is
# installed, and the rate of the same loop with fsync turned off
# (MSG_STORE_NOSYNC=1, unsafe, for this comparison only): the ratio says
# how much of the time is the disk's.
#
# Before anything is timed, one run must deliver every version once and
# in order, byte for byte the request (tests/fixtures/trickle-loop/
# delivered), and its --stats must say that every request was sent and
# succeeded and nothing else happened; else the run is broken (exit 1).
set -u

here=$(dirname "$0")
. "$here/lib.sh"

bench_init "${1:-build}"
trickle=$(bench_tool msg-trickle) || exit 1
bench_tool msg-translate >/dev/null || exit 1
bench_tool msg-tap >/dev/null || exit 1
# fifo-loop and respond find the tools on PATH.
PATH=$(cd "$BENCH_BUILD" && pwd):$PATH
loop=$here/../tests/fixtures/trickle-loop
unset MSG_HISTORY MSG_INVALID MSG_DEAD_LETTER

ENTITIES=${BENCH_ENTITIES:-10000}
LOOP_RUNS=${BENCH_LOOP_RUNS:-$((BENCH_RUNS < 3 ? BENCH_RUNS : 3))}
bench_need_positive "BENCH_ENTITIES and BENCH_LOOP_RUNS" "$ENTITIES" "$LOOP_RUNS"
VERSIONS=5
TRIPS=$((ENTITIES * VERSIONS))
RATE_TARGET=10000	# round trips per second, with fsync

bench_cache "trickle-$ENTITIES-x$VERSIONS.msg" \
	perl "$loop/requests" "$ENTITIES" "$VERSIONS"
in=$BENCH_FILE

# One run of the loop with a new state directory in the scratch
# directory; sh -c rather than a function, as time(1) runs it too.
# Usage: sh -c "$trickle_loop" sh SCRATCH LOOP TAP TRICKLE ARG...
trickle_loop='d=$(mktemp -d "$1/loop.XXXXXX") || exit 1
loop=$2 tap=$3 t=$4
shift 4
exec "$loop/fifo-loop" "$d/resp.fifo" "$tap" -- \
	"$t" --state "$d/st" -r "$d/resp.fifo" "$@"'

remove_loops() {
	rm -rf "$BENCH_TMP"/loop.*
}

# check_loop: one run, under strace when there is one, whose target must
# have got every version once and in order, and whose --stats must say
# that every request went out and succeeded. Sets syncs.
check_loop() {
	bench_strace_syncs "$in" /dev/null "$BENCH_TMP/stats" \
		sh -c "$trickle_loop" sh "$BENCH_TMP" "$loop" "$BENCH_TMP/sent.msg" \
		"$trickle" --stats ||
		bench_die "the loop failed: $(cat "$BENCH_TMP/stats")"
	syncs=$BENCH_SYNCS
	remove_loops
	_clout=$(perl "$loop/delivered" once "$in" "$BENCH_TMP/sent.msg") ||
		bench_die "the target did not get every version once and in order:" \
			"$(echo "$_clout" | head -n 5)"
	rm -f "$BENCH_TMP/sent.msg"
	for _clfig in "in $TRIPS" "responses $TRIPS" "sent $TRIPS" \
		"succeeded $TRIPS" "failed 0" "retried 0" "resent 0" "stale 0" \
		"duplicates 0" "unmatched 0" "invalid 0" "blocked 0" \
		"waiting 0" "in-flight 0"; do
		grep -q "[:,] $_clfig\(,\|$\)" "$BENCH_TMP/stats" ||
			bench_die "msg-trickle --stats does not say '$_clfig':" \
				"$(cat "$BENCH_TMP/stats")"
	done
}

# measure_loop LABEL: the loop best of LOOP_RUNS runs, printed with
# LABEL; sets rate.
measure_loop() {
	BENCH_CPU_TIDY=remove_loops
	bench_measure_long "$LOOP_RUNS" "$in" sh -c "$trickle_loop" sh \
		"$BENCH_TMP" "$loop" - "$trickle"
	BENCH_CPU_TIDY=
	rate=$(bench_per_sec "$TRIPS" "$BENCH_US")
	bench_result "$1" "$BENCH_US" "$BENCH_RSS" "$rate trips/s"
	bench_cpu_note "the loop, all its processes" "$TRIPS" "trips"
}

fs=$(stat -f -c %T "$BENCH_TMP" 2>/dev/null || echo unknown)
echo "trickle: a FIFO loop with msg-translate as the target, $ENTITIES" \
	"entities x $VERSIONS versions ($TRIPS round trips), --state on $fs"
bench_load_note

check_loop
measure_loop "msg-trickle --state | msg-translate"
sync_rate=$rate
export MSG_STORE_NOSYNC=1
measure_loop "the same, MSG_STORE_NOSYNC=1 (unsafe)"
unset MSG_STORE_NOSYNC
nosync_rate=$rate

bench_verdict "round trips per second, with --state" "$sync_rate" ">=" \
	"$RATE_TARGET" " trips/s"
if [ -z "$syncs" ]; then
	echo "  strace not found: fsync calls not counted"
else
	bench_report "fsync + fdatasync calls per round trip" \
		"$(awk -v s="$syncs" -v n="$TRIPS" 'BEGIN { printf "%.3f", s / n }')" \
		" ($syncs in all, by strace -c -f)"
fi
bench_report "rate with fsync / rate with MSG_STORE_NOSYNC=1" \
	"$(bench_ratio "$sync_rate" "$nosync_rate")" "x"
