#!/bin/sh
# tap: msg-tap with a file tap against tee(1).
# usage: sh bench/tap.sh [BUILD]
#
# msg-tap TAPFILE on BENCH_TAP_MESSAGES (default 2000) frames with 64 KiB
# bodies, against tee TAPFILE on the same bytes. Target: at least 80% of
# tee's throughput.
#
# Both run twice, stdout into /dev/null and through a pipe into
# cat > /dev/null; the target is judged on the pipe, where a tap sits in
# a flow. Each run writes its tap to a new file (named after the process
# id of the sh that execs the tool): msg-tap appends to a file and tee
# truncates it, so a file left by an earlier run would cost them
# differently. The files are removed after each measurement, outside the
# timed runs; the sh costs both sides the same.
#
# On a shared machine wall time includes the wait for a processor, so the
# processor time (user + system, best of as many runs) of each tool is
# printed too, for reference, with the load average.
#
# Before anything is timed, msg-tap must pass its input to stdout and to
# the tap file byte for byte, or the run is broken (exit 1).
set -u

here=$(dirname "$0")
. "$here/lib.sh"

bench_init "${1:-build}"
tap=$(bench_tool msg-tap) || exit 1
wrap=$(bench_tool msg-wrap) || exit 1
# The figures are for msg-tap as it runs by default: a history header
# would make its copies differ from the input.
unset MSG_HISTORY

MESSAGES=${BENCH_TAP_MESSAGES:-2000}
case $MESSAGES in
'' | *[!0-9]* | 0) bench_die "BENCH_TAP_MESSAGES must be a positive number" ;;
esac
BODY_SIZE=65536
TEE_TARGET=0.80		# fraction of tee's throughput

gen_body() {
	head -c "$1" /dev/urandom
}

# N frames, each wrapping the same body file (one msg-wrap process).
gen_frames() {
	_n=$1 _body=$2
	set --
	while [ $# -lt "$_n" ]; do
		set -- "$@" "$_body"
	done
	"$wrap" "$@"
}

size_of() {
	_sz=$(wc -c <"$1") || bench_die "cannot read '$1'"
	echo $((_sz))
}

# A tap that loses or changes bytes must not pass for a fast one.
check_tap() {
	_copy=$BENCH_TMP/check.tap
	rm -f "$BENCH_TMP/st1" "$_copy"
	_got=$({
		"$tap" "$_copy" <"$1"
		echo $? >"$BENCH_TMP/st1"
	} | cksum)
	[ "$(cat "$BENCH_TMP/st1")" = 0 ] ||
		bench_die "msg-tap failed on '$1' (stale cache? remove $BENCH_CACHE)"
	_want=$(cksum <"$1")
	[ "$_got" = "$_want" ] || bench_die "msg-tap changed the flow on '$1'"
	[ "$(cksum <"$_copy")" = "$_want" ] ||
		bench_die "msg-tap's tap file differs from '$1'"
	rm -f "$_copy"
}

# Usage: sh -c "$to_new_file" TOOL DIR: TOOL DIR/tap.PID.
to_new_file='exec "$0" "$1/tap.$$"'

# cpu_best INPUT SINK CMD [ARG...]: sets CPU_MS to the least user + system
# time of CMD, in milliseconds, over BENCH_RUNS runs (empty without
# time(1)). Unlike wall time it does not grow with the wait for a
# processor, so on a busy machine it says what the work itself costs.
cpu_best() {
	CPU_MS=
	[ -n "$BENCH_TIME" ] || return 0
	_cin=$1 _csink=$2
	shift 2
	_ci=0
	while [ "$_ci" -lt "$BENCH_RUNS" ]; do
		rm -f "$BENCH_TMP/cpu"
		bench_run_once "$_cin" "$_csink" "$BENCH_TIME" -f '%U %S' \
			-o "$BENCH_TMP/cpu" "$@"
		rm -f "$BENCH_TMP"/tap.*
		_cms=$(tail -n 1 "$BENCH_TMP/cpu" |
			awk 'NF == 2 { printf "%.0f", ($1 + $2) * 1000 }')
		if [ -n "$_cms" ] && { [ -z "$CPU_MS" ] || [ "$_cms" -lt "$CPU_MS" ]; }; then
			CPU_MS=$_cms
		fi
		_ci=$((_ci + 1))
	done
}

load_note() {
	_load=$(cut -d ' ' -f 1-3 /proc/loadavg 2>/dev/null) || _load=
	[ -n "$_load" ] && echo "  (load average $_load;" \
		"$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo '?') cpus)"
	return 0
}

bench_cache "body-$BODY_SIZE.bin" gen_body "$BODY_SIZE"
body=$BENCH_FILE
bench_cache "tap-frames-${MESSAGES}x$BODY_SIZE.msg" gen_frames "$MESSAGES" "$body"
in=$BENCH_FILE
bytes=$(size_of "$in")
check_tap "$in"
echo "tap: msg-tap to a file, $MESSAGES frames with 64 KiB bodies" \
	"($(bench_mb "$bytes") MB of frames)"
load_note
for sink in null pipe; do
	case $sink in
	null) to="> /dev/null" ;;
	pipe) to="| cat > /dev/null" ;;
	esac
	bench_measure "$in" "$sink" cat
	bench_result "cat < frames $to" "$BENCH_US" "$BENCH_RSS" \
		"$(bench_mb_per_sec "$bytes" "$BENCH_US") MB/s"
	bench_measure "$in" "$sink" sh -c "$to_new_file" tee "$BENCH_TMP"
	rm -f "$BENCH_TMP"/tap.*
	tee_us=$BENCH_US
	bench_result "tee file < frames $to" "$BENCH_US" "$BENCH_RSS" \
		"$(bench_mb_per_sec "$bytes" "$BENCH_US") MB/s"
	bench_measure "$in" "$sink" sh -c "$to_new_file" "$tap" "$BENCH_TMP"
	rm -f "$BENCH_TMP"/tap.*
	bench_result "msg-tap file < frames $to" "$BENCH_US" "$BENCH_RSS" \
		"$(bench_mb_per_sec "$bytes" "$BENCH_US") MB/s"
	# Same bytes in, so the throughput ratio is the inverse time ratio.
	share=$(bench_ratio "$tee_us" "$BENCH_US")
	case $sink in
	null) echo "  msg-tap runs at ${share}x tee's throughput" \
		"(into /dev/null: for reference, not judged)" ;;
	pipe) bench_verdict "msg-tap through a pipe, throughput vs tee" \
		"$share" ">=" "$TEE_TARGET" "x" ;;
	esac
done
cpu_best "$in" pipe sh -c "$to_new_file" tee "$BENCH_TMP"
tee_cpu=$CPU_MS
cpu_best "$in" pipe sh -c "$to_new_file" "$tap" "$BENCH_TMP"
if [ -n "$tee_cpu" ] && [ -n "$CPU_MS" ]; then
	echo "  (processor time, user + system, through a pipe: tee $tee_cpu ms," \
		"msg-tap $CPU_MS ms; for reference)"
fi
