#!/bin/sh
# exec: msg-exec -P 2 /bin/cat, a process per message, against xargs and
# GNU parallel running cat once per file.
# usage: sh bench/exec.sh [BUILD] [all | exec | xargs | parallel | coprocess]
#
# Data: BENCH_EXEC_MESSAGES (default 20000) small messages, a text body of
# about 30 bytes each ("message N of the exec benchmark"); the same
# bodies as files, one a message, in a directory of the scratch
# directory, and their paths one a line, for the peers.
#
# exec:     msg-exec -P 2 /bin/cat on the messages: each body goes to a
#           cat of its own, started with posix_spawn (no shell), and its
#           output comes back as a reply. Target: at least 3,000 messages
#           per second.
# xargs:    xargs -P 2 -n 1 cat on the paths: a cat per file, two at a
#           time, as a shell user would run a program over files; the
#           ratio of msg-exec's time to its, reported.
# parallel: parallel -j 2 cat on the paths (GNU parallel, when it is
#           installed; skipped with a note when not); the ratio, reported.
# coprocess: msg-exec --coprocess cat over BENCH_EXEC_COPROC_MESSAGES
#           (default 200000) of the same messages: one process that
#           echoes each request frame as its reply, the round trip of
#           --coprocess with no work in it. Target: at least 300,000
#           round trips per second.
#
# Runs take seconds, so each is timed whole, best of BENCH_EXEC_RUNS
# (default BENCH_RUNS, at most 2), its output through a pipe into
# cat > /dev/null, under time(1) for its processor time and peak RSS at
# once. On a shared machine wall time includes the wait for a processor:
# the processor time of each is printed after it, with the load average.
#
# Before anything is timed, msg-exec must reply to each message once, in
# order, with a success carrying its body; xargs and parallel must print
# every body; else the run is broken (exit 1).
set -u

here=$(dirname "$0")
. "$here/lib.sh"

part=${2:-all}
bench_check_part exec.sh "$part" exec xargs parallel coprocess
bench_init "${1:-build}"
exec_tool=$(bench_tool msg-exec) || exit 1
unwrap=$(bench_tool msg-unwrap) || exit 1
# The figures are for msg-exec as it runs by default: a history header or
# an invalid channel from the environment would change what is written.
unset MSG_HISTORY MSG_INVALID MSG_DEAD_LETTER

MESSAGES=${BENCH_EXEC_MESSAGES:-20000}
RUNS=${BENCH_EXEC_RUNS:-$((BENCH_RUNS < 2 ? BENCH_RUNS : 2))}
bench_need_positive "BENCH_EXEC_MESSAGES and BENCH_EXEC_RUNS" "$MESSAGES" "$RUNS"
EXEC_TARGET=3000	# messages per second
COPROC_MESSAGES=${BENCH_EXEC_COPROC_MESSAGES:-200000}
bench_need_positive BENCH_EXEC_COPROC_MESSAGES "$COPROC_MESSAGES"
COPROC_TARGET=300000	# round trips per second
CAT=$(command -v cat)
exec_us=			# msg-exec's figures, for the ratios
exec_cpu=
exec_rss=

# gen_frames COUNT: the messages, as msg-wrap would frame them.
gen_frames() {
	awk -v n="$1" 'BEGIN {
		for (i = 1; i <= n; i++) {
			body = sprintf("message %d of the exec benchmark\n", i)
			printf "Message-Id: 01a23cc3-22e8-7081-95e2-%012x\n", i
			printf "Timestamp: 2026-12-03T16:35:51.%03dZ\n", i % 1000
			printf "Content-Type: text/plain\n"
			printf "Content-Length: %d\n\n%s\n", length(body), body
		}
	}'
}

# gen_bodies COUNT: the bodies one after another, as every tool here must
# print them (the peers in any order).
gen_bodies() {
	awk -v n="$1" 'BEGIN {
		for (i = 1; i <= n; i++)
			printf "message %d of the exec benchmark\n", i
	}'
}

# make_files: the bodies as files in $BENCH_TMP/bodies, and their paths
# one a line in $BENCH_TMP/paths, in message order.
make_files() {
	[ -s "$BENCH_TMP/paths" ] && return 0
	mkdir -p "$BENCH_TMP/bodies" || bench_die "cannot create '$BENCH_TMP/bodies'"
	awk -v n="$MESSAGES" -v dir="$BENCH_TMP/bodies" 'BEGIN {
		for (i = 1; i <= n; i++) {
			f = sprintf("%s/%06d", dir, i)
			printf "message %d of the exec benchmark\n", i > f
			close(f)
			print f
		}
	}' >"$BENCH_TMP/paths" || bench_die "cannot write the bodies as files"
}

# check_exec: msg-exec -P 2 cat replies to each message once, in order,
# with a success carrying its body, and counts as much in its --stats.
check_exec() {
	"$exec_tool" --stats -P 2 "$CAT" <"$frames" >"$BENCH_TMP/out" \
		2>"$BENCH_TMP/stats" ||
		bench_die "msg-exec -P 2 cat failed on '$frames':" \
			"$(cat "$BENCH_TMP/stats") (stale cache? remove $BENCH_CACHE)"
	"$unwrap" "$BENCH_TMP/out" | cmp -s - "$bodies" ||
		bench_die "msg-exec -P 2 cat did not reply with each body, in order"
	_cesucc=$("$unwrap" -H "$BENCH_TMP/out" | grep -c '^Status: success$')
	[ "$_cesucc" = "$MESSAGES" ] ||
		bench_die "msg-exec -P 2 cat: $_cesucc successes of $MESSAGES"
	grep -q "^msg-exec: stats: in $MESSAGES, runs $MESSAGES, succeeded $MESSAGES, " \
		"$BENCH_TMP/stats" ||
		bench_die "msg-exec --stats does not count $MESSAGES runs:" \
			"$(cat "$BENCH_TMP/stats")"
	rm -f "$BENCH_TMP/out" "$BENCH_TMP/stats"
}

# check_peer CMD...: CMD, run on the paths, prints every body (in any
# order: two at a time, they finish as they will). The output file is
# opened for appending: two cats writing into one file description
# without O_APPEND overwrite each other's lines.
check_peer() {
	rm -f "$BENCH_TMP/out"
	"$@" <"$BENCH_TMP/paths" >>"$BENCH_TMP/out" ||
		bench_die "'$*' failed on the bodies as files"
	sort "$BENCH_TMP/out" | cmp -s - "$sorted_bodies" ||
		bench_die "'$*' did not print every body once"
	rm -f "$BENCH_TMP/out"
}

# measure_exec: msg-exec checked, timed and judged. Sets exec_us,
# exec_cpu and exec_rss.
measure_exec() {
	[ -z "$exec_us" ] || return 0
	check_exec
	bench_measure_long "$RUNS" "$frames" "$exec_tool" -P 2 "$CAT"
	exec_us=$BENCH_US exec_cpu=$BENCH_CPU_MS exec_rss=$BENCH_RSS
	rate=$(bench_per_sec "$MESSAGES" "$exec_us")
	bench_result "msg-exec -P 2 cat | cat" "$exec_us" "$exec_rss" "$rate msg/s"
	bench_cpu_note "msg-exec (and its children)" "$MESSAGES" msg
	bench_verdict "msg-exec -P 2 cat, messages per second" "$rate" ">=" \
		"$EXEC_TARGET" " msg/s"
}

# measure_coprocess: msg-exec --coprocess cat checked (a success reply
# with each body, in order), timed and judged.
measure_coprocess() {
	bench_cache "exec-$COPROC_MESSAGES.msg" gen_frames "$COPROC_MESSAGES"
	_mcframes=$BENCH_FILE
	"$exec_tool" --coprocess "$CAT" <"$_mcframes" >"$BENCH_TMP/out" ||
		bench_die "msg-exec --coprocess cat failed on '$_mcframes'"
	"$unwrap" "$_mcframes" >"$BENCH_TMP/want" ||
		bench_die "cannot unwrap '$_mcframes'"
	"$unwrap" "$BENCH_TMP/out" | cmp -s - "$BENCH_TMP/want" ||
		bench_die "msg-exec --coprocess cat did not reply with each body, in order"
	_mcsucc=$("$unwrap" -H "$BENCH_TMP/out" | grep -c '^Status: success$')
	[ "$_mcsucc" = "$COPROC_MESSAGES" ] ||
		bench_die "msg-exec --coprocess cat: $_mcsucc successes of $COPROC_MESSAGES"
	rm -f "$BENCH_TMP/out" "$BENCH_TMP/want"
	bench_measure_long "$RUNS" "$_mcframes" "$exec_tool" --coprocess "$CAT"
	rate=$(bench_per_sec "$COPROC_MESSAGES" "$BENCH_US")
	bench_result "msg-exec --coprocess cat | cat ($COPROC_MESSAGES)" "$BENCH_US" \
		"$BENCH_RSS" "$rate round trips/s"
	bench_cpu_note "msg-exec --coprocess (and cat)" "$COPROC_MESSAGES" msg
	bench_verdict "msg-exec --coprocess, round trips per second" "$rate" ">=" \
		"$COPROC_TARGET" " /s"
}

# measure_peer NAME LABEL CMD...: the peer CMD on the paths, checked and
# timed, against msg-exec.
measure_peer() {
	_mpname=$1 _mplabel=$2
	shift 2
	make_files
	check_peer "$@"
	measure_exec
	bench_measure_long "$RUNS" "$BENCH_TMP/paths" "$@"
	bench_result "$_mplabel | cat" "$BENCH_US" "$BENCH_RSS" \
		"$(bench_per_sec "$MESSAGES" "$BENCH_US") files/s"
	bench_cpu_note "$_mpname (and its children)" "$MESSAGES" files
	bench_peer_ratios msg-exec "$_mpname" "$_mplabel" "$exec_us" "$exec_cpu" \
		"$exec_rss"
}

bench_cache "exec-$MESSAGES.msg" gen_frames "$MESSAGES"
frames=$BENCH_FILE
bench_cache "exec-$MESSAGES.bodies" gen_bodies "$MESSAGES"
bodies=$BENCH_FILE
sorted_bodies=$BENCH_TMP/bodies.sorted
sort "$bodies" >"$sorted_bodies" || bench_die "cannot sort '$bodies'"
echo "exec: a process per message, two at a time, $MESSAGES messages with" \
	"bodies of about 30 bytes ($(bench_mb "$(bench_size "$frames")") MB as" \
	"messages); best of $RUNS runs"
bench_load_note

case $part in
all | exec) measure_exec ;;
esac
case $part in
all | xargs)
	measure_peer xargs "xargs -P 2 -n 1 cat" xargs -P 2 -n 1 "$CAT"
	;;
esac
case $part in
all | parallel)
	if command -v parallel >/dev/null && parallel --version 2>/dev/null |
		grep -q 'GNU parallel'; then
		measure_peer parallel "parallel -j 2 cat" parallel -j 2 "$CAT"
	else
		echo "  GNU parallel not installed: the comparison with it is skipped"
	fi
	;;
esac
case $part in
all | coprocess) measure_coprocess ;;
esac
