#!/bin/bash
# run.sh: kill a writer with SIGKILL at random points, again and again.
#
# usage: tests/crash/run.sh ROUNDS ACKS WRITER [ARG...]
#
# Each round starts WRITER ARG... afresh, lets it run for a random time
# (from CRASH_MIN_MS to CRASH_MAX_MS milliseconds, default 5 to 100),
# and kills it with SIGKILL. The writer prints what it has acknowledged
# (made durable) on stdout, one item a line; the whole lines each round
# printed are appended to ACKS. A line cut short by the kill is dropped:
# the item it names may or may not be durable, and either is allowed.
#
# The harness knows nothing of what is written: the caller checks the
# state against ACKS afterwards (for the store, store-writer --check).
# A writer that exits on its own before it is killed fails the run,
# with its stderr shown. Prints "ROUNDS rounds, N killed, M acknowledged".
# CRASH_SEED makes the sequence of delays repeatable.
set -u

if [ $# -lt 3 ]; then
	echo "usage: run.sh ROUNDS ACKS WRITER [ARG...]" >&2
	exit 64
fi
rounds=$1 acks=$2
shift 2
min=${CRASH_MIN_MS:-5} max=${CRASH_MAX_MS:-100}
case $rounds$min$max in
*[!0-9]*)
	echo "run.sh: ROUNDS, CRASH_MIN_MS and CRASH_MAX_MS must be numbers" >&2
	exit 64
	;;
esac
[ "$max" -ge "$min" ] || max=$min
RANDOM=${CRASH_SEED:-$$}

work=$(mktemp -d "${TMPDIR:-/tmp}/crash.XXXXXX") || exit 70
trap 'rm -rf "$work"' EXIT
: >>"$acks" || exit 73

# Starting a process costs tens of milliseconds on a small machine, so a
# round starts only the writer: the waiting and the line filtering are
# builtins. read -t on a FIFO that nobody writes is a fractional sleep.
mkfifo "$work/never" || exit 70
exec 3<>"$work/never"
pause() {
	read -r -t "$1" -u 3 _
}

# Append the whole lines of $1 to ACKS: read fails on a last line that
# has no newline, so that one is left out.
keep_whole_lines() {
	local line
	while IFS= read -r line; do
		printf '%s\n' "$line"
	done <"$1" >>"$acks"
}

# bash reports each job that died of a signal on its stderr; this one
# kills on purpose, so the reports go to /dev/null and ours to fd 4.
exec 4>&2 2>/dev/null
killed=0
for ((i = 1; i <= rounds; i++)); do
	"$@" >"$work/out" 2>"$work/err" &
	pid=$!
	# $RANDOM is 0..32767: scale it to the window, in milliseconds.
	ms=$((min + RANDOM * (max - min + 1) / 32768))
	pause "$((ms / 1000)).$((ms % 1000 / 100))$((ms % 100 / 10))$((ms % 10))"
	if kill -KILL "$pid"; then
		killed=$((killed + 1))
	fi
	wait "$pid"
	status=$?
	keep_whole_lines "$work/out"
	# 137 is 128 + SIGKILL; anything else means the writer stopped by itself.
	if [ "$status" -ne 137 ]; then
		echo "run.sh: round $i: the writer exited with status $status" >&4
		while IFS= read -r line; do echo "$line" >&4; done <"$work/err"
		exit 1
	fi
done
n=0
while IFS= read -r line; do n=$((n + 1)); done <"$acks"
echo "$rounds rounds, $killed killed, $n acknowledged"
