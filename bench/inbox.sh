#!/bin/sh
# inbox: msg-wrap --once inbox:DIR, BENCH_INBOX_FILES (default 10,000)
# files of 2 KiB into a dir: spool, each file moved to --done once its
# message is out, against the shell loop an operator writes for it:
#     for f in *; do msg-wrap "$f" >>out && mv "$f" done/; done
# (no claim, no sync: a crash can lose or repeat any file). Also timed:
# the files deleted (no --done), and --done with --idempotent (each file
# hashed, its record committed once per batch). --settle 0: the timing
# is the reader's, not the settle wait.
# usage: sh bench/inbox.sh [BUILD]
#
# Reported with the times: the fsync calls per file (strace -c). The
# inbox lives in the scratch directory under TMPDIR, whose file system is
# named in the output: on a tmpfs an fsync costs nothing.
set -u

here=$(dirname "$0")
. "$here/lib.sh"

bench_init "${1:-build}"
N=${BENCH_INBOX_FILES:-10000}
bench_need_positive BENCH_INBOX_FILES "$N"
TARGET=2000	# files per second, with --done and every sync made
wrap=$(bench_tool msg-wrap)
case $wrap in
/*) ;;
*) wrap=$PWD/$wrap ;;	# the loop runs in the inbox
esac

# fill: N files of 2 KiB in $BENCH_TMP/in, named by their number, and
# an empty done/ and out/ beside.
fill() {
	rm -rf "$BENCH_TMP/in" "$BENCH_TMP/done" "$BENCH_TMP/out" "$BENCH_TMP/seen"
	mkdir "$BENCH_TMP/in" "$BENCH_TMP/done" || bench_die "cannot make the inbox"
	perl -e 'my ($dir, $n) = @ARGV; my $pad = "x" x 2038;
		for my $i (1 .. $n) {
			my $f = sprintf "%s/f%06d", $dir, $i;
			open my $fh, ">", $f or die "$f: $!";
			printf $fh "%08d %s\n", $i, $pad; close $fh or die "$f: $!" }' \
		"$BENCH_TMP/in" "$N" || bench_die "cannot fill the inbox"
}

# check HOW: every file's message out once, every file gone from the
# inbox (and in done/ unless HOW is "deleted").
check() {
	_msgs=$(find "$BENCH_TMP/out/new" -type f 2>/dev/null | wc -l)
	[ "$_msgs" -eq "$N" ] || [ "$1" = loop ] ||
		bench_die "$1: $_msgs messages in out/new, not $N"
	_left=$(find "$BENCH_TMP/in" -maxdepth 1 -type f | wc -l)
	[ "$_left" -eq 0 ] || bench_die "$1: $_left files left in the inbox"
	if [ "$1" != deleted ]; then
		_done=$(find "$BENCH_TMP/done" -type f | wc -l)
		[ "$_done" -eq "$N" ] || bench_die "$1: $_done files in done/, not $N"
	fi
}

# best HOW CMD...: the best of BENCH_RUNS runs of CMD, each on a new
# inbox, checked after; BEST_US.
best() {
	_how=$1
	shift
	BEST_US=
	_r=0
	while [ "$_r" -lt "$BENCH_RUNS" ]; do
		fill
		_t0=$(date +%s%N)
		"$@" || bench_die "'$*' failed"
		_t1=$(date +%s%N)
		_us=$(((_t1 - _t0) / 1000))
		[ -z "$BEST_US" ] || [ "$_us" -lt "$BEST_US" ] && BEST_US=$_us
		check "$_how"
		_r=$((_r + 1))
	done
}

deleted() {
	"$wrap" --once --settle 0 --output "dir:$BENCH_TMP/out" "inbox:$BENCH_TMP/in"
}
moved() {
	"$wrap" --once --settle 0 --done "$BENCH_TMP/done" \
		--output "dir:$BENCH_TMP/out" "inbox:$BENCH_TMP/in"
}
remembered() {
	"$wrap" --once --settle 0 --done "$BENCH_TMP/done" --idempotent \
		--output "dir:$BENCH_TMP/out" "inbox:$BENCH_TMP/in"
}
peer_loop() {
	(cd "$BENCH_TMP/in" && for f in *; do
		"$wrap" "$f" >>../out.msg && mv "$f" ../done/ || exit 1
	done)
}

fs=$(stat -f -c %T "$BENCH_TMP" 2>/dev/null || echo unknown)
echo "inbox: $N files of 2 KiB to a dir: spool, inbox on $fs"
best deleted deleted
deleted_us=$BEST_US
best moved moved
moved_us=$BEST_US
best moved remembered
remembered_us=$BEST_US
BENCH_RUNS=1 best loop peer_loop
loop_us=$BEST_US

fill
bench_strace_syncs /dev/null /dev/null "$BENCH_TMP/strace.err" "$wrap" --once \
	--settle 0 --done "$BENCH_TMP/done" --output "dir:$BENCH_TMP/out" \
	"inbox:$BENCH_TMP/in" || bench_die "msg-wrap --done under strace failed"
moved_syncs=$BENCH_SYNCS
fill
bench_strace_syncs /dev/null /dev/null "$BENCH_TMP/strace.err" "$wrap" --once \
	--settle 0 --done "$BENCH_TMP/done" --idempotent --output "dir:$BENCH_TMP/out" \
	"inbox:$BENCH_TMP/in" || bench_die "msg-wrap --done --idempotent under strace failed"
remembered_syncs=$BENCH_SYNCS

bench_result "msg-wrap inbox:, files deleted" "$deleted_us" "" \
	"$(bench_per_sec "$N" "$deleted_us") files/s"
bench_result "msg-wrap inbox: --done" "$moved_us" "" \
	"$(bench_per_sec "$N" "$moved_us") files/s"
bench_result "msg-wrap inbox: --done --idempotent" "$remembered_us" "" \
	"$(bench_per_sec "$N" "$remembered_us") files/s"
bench_result "sh loop: msg-wrap \$f >>out && mv \$f done/" "$loop_us" "" \
	"$(bench_per_sec "$N" "$loop_us") files/s"
# syncs FOR COUNT: fsync calls per file.
syncs() {
	if [ -n "$2" ]; then
		bench_report "fsync calls per file, $1" \
			"$(awk -v s="$2" -v n="$N" 'BEGIN { printf "%.3f", s / n }')" \
			" ($2 for $N files, by strace -c -f)"
	else
		echo "  strace not found: fsync calls not counted"
	fi
}
syncs "--done" "$moved_syncs"
syncs "--done --idempotent" "$remembered_syncs"
bench_report "msg-wrap --done vs the sh loop, times faster" \
	"$(bench_ratio "$loop_us" "$moved_us")" "x"
bench_verdict "files per second with --done, every sync made" \
	"$(bench_per_sec "$N" "$moved_us")" ">=" "$TARGET" " files/s"
