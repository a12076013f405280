#!/bin/sh
# outbox: msg-unwrap -d, BENCH_OUTBOX_MESSAGES (default 10,000) messages
# of 1 KiB made into as many files in a directory, against peers that
# write one file per record: split -l 1 (each file written in place under
# its name, no sync: the least a file can cost) and a shell loop that
# writes each record to a hidden name and renames it with mv (what a
# partner-safe outbox costs by hand, still without a sync).
# usage: sh bench/outbox.sh [BUILD]
#
# msg-unwrap -d fsyncs each file before it is renamed (a partner must
# never find a name whose data a crash could lose) and the directory once
# per input batch. Reported with the times: the fsync calls per file
# (strace -c) and the time with the syncs skipped (tests/faults/
# faultinject with FAULT_ERRNO=none), which says how much is the disk's.
# The directory lives in the scratch directory under TMPDIR, whose file
# system is named in the output: on a tmpfs an fsync costs nothing.
set -u

here=$(dirname "$0")
. "$here/lib.sh"

bench_init "${1:-build}"
N=${BENCH_OUTBOX_MESSAGES:-10000}
bench_need_positive BENCH_OUTBOX_MESSAGES "$N"
TARGET=5000	# files per second, with every sync made
wrap=$(bench_tool msg-wrap)
unwrap=$(bench_tool msg-unwrap)

# One record a line, 1 KiB each with its newline, named by its number.
lines=$BENCH_TMP/records.txt
awk -v n="$N" 'BEGIN {
	pad = sprintf("%1010s", ""); gsub(/ /, "x", pad)
	for (i = 1; i <= n; i++) printf "%08d %s\n", i, pad
}' >"$lines"
frames=$BENCH_TMP/records.msg
"$wrap" -l "$lines" >"$frames" || bench_die "msg-wrap -l failed"

# check DIR: N files holding the records, every one whole (a body has
# no newline of its own, awk adds it); then DIR goes.
check() {
	_got=$(find "$1" -type f | wc -l)
	[ "$_got" -eq "$N" ] || bench_die "'$1' holds $_got files, not $N"
	find "$1" -type f -exec awk '{ print }' {} + | sort | cmp -s - "$lines" ||
		bench_die "the files in '$1' are not the records"
	rm -rf "$1"
	# The removal's own writes go to disk now, not into the next run's
	# syncs (on ext4 they can double that run's time).
	sync
}

# best LABEL CMD...: the best of BENCH_RUNS runs of CMD, each into a new
# directory $out, checked after; BEST_US.
best() {
	BEST_US=
	_r=0
	while [ "$_r" -lt "$BENCH_RUNS" ]; do
		out=$BENCH_TMP/out.$_r
		bench_elapsed_us "$@"
		[ -z "$BEST_US" ] || [ "$_us" -lt "$BEST_US" ] && BEST_US=$_us
		check "$out"
		_r=$((_r + 1))
	done
}

tool() {
	"$unwrap" -d "$out" <"$frames"
}
tool_nosync() {
	bench_nosync "$unwrap" -d "$out" <"$frames"
}
peer_split() {
	mkdir "$out" && (cd "$out" && split -l 1 -a 6 "$lines")
}
peer_loop() {
	mkdir "$out" && while IFS= read -r _rec; do
		printf '%s\n' "$_rec" >"$out/.tmp" && mv "$out/.tmp" "$out/${_rec%% *}"
	done <"$lines"
}

bench_nosync_init

fs=$(stat -f -c %T "$BENCH_TMP" 2>/dev/null || echo unknown)
echo "outbox: $N messages of 1 KiB to files, directory on $fs"
sync
best tool
tool_us=$BEST_US
best tool_nosync
nosync_us=$BEST_US
best peer_split
split_us=$BEST_US
BENCH_RUNS=1 best peer_loop
loop_us=$BEST_US

mkdir "$BENCH_TMP/counted"
bench_strace_syncs "$frames" /dev/null "$BENCH_TMP/strace.err" \
	"$unwrap" -d "$BENCH_TMP/counted" || bench_die "msg-unwrap -d under strace failed"

bench_result "msg-unwrap -d" "$tool_us" "" "$(bench_per_sec "$N" "$tool_us") files/s"
bench_result "msg-unwrap -d, fsyncs skipped (unsafe)" "$nosync_us" "" \
	"$(bench_per_sec "$N" "$nosync_us") files/s"
bench_result "split -l 1 (in place, no sync)" "$split_us" "" \
	"$(bench_per_sec "$N" "$split_us") files/s"
bench_result "sh loop: printf > .tmp && mv (no sync)" "$loop_us" "" \
	"$(bench_per_sec "$N" "$loop_us") files/s"
if [ -n "$BENCH_SYNCS" ]; then
	bench_report "fsync calls per file" \
		"$(awk -v s="$BENCH_SYNCS" -v n="$N" 'BEGIN { printf "%.3f", s / n }')" \
		" ($BENCH_SYNCS for $N files, by strace -c -f)"
else
	echo "  strace not found: fsync calls not counted"
fi
bench_report "msg-unwrap -d vs split -l 1, times faster" "$(bench_ratio "$split_us" "$tool_us")" "x"
bench_report "msg-unwrap -d vs the sh loop, times faster" "$(bench_ratio "$loop_us" "$tool_us")" "x"
bench_verdict "files per second, every sync made" \
	"$(bench_per_sec "$N" "$tool_us")" ">=" "$TARGET" " files/s"
