#!/bin/sh
# dir: spool channels: 10,000 messages written into a spool and read back
# out of it, against the same messages through a plain file. Every message
# costs a file, two fsyncs (the file and new/) and two renames on the way
# in, a lock, a rename and an unlink on the way out: the ratio says what
# at-least-once delivery costs over a pipe's at-most-once.
# usage: sh bench/dir.sh [BUILD]
set -u

here=$(dirname "$0")
. "$here/lib.sh"

bench_init "${1:-build}"
N=${BENCH_DIR_MESSAGES:-10000}
wrap=$BENCH_BUILD/msg-wrap
unwrap=$BENCH_BUILD/msg-unwrap
lines=$BENCH_TMP/dir-lines.txt
awk -v n="$N" 'BEGIN { for (i = 1; i <= n; i++) printf "message %08d %s\n", i, "payload-payload-payload-payload" }' >"$lines"

now() { date +%s%N; }

t0=$(now)
"$wrap" -l "$lines" --output "dir:$BENCH_TMP/spool" || bench_die "writing the spool failed"
t1=$(now)
got=$(find "$BENCH_TMP/spool/new" -type f | wc -l)
[ "$got" -eq "$N" ] || bench_die "spool holds $got messages, not $N"
"$unwrap" --once -s '\n' "dir:$BENCH_TMP/spool" >"$BENCH_TMP/out.txt" || bench_die "reading the spool failed"
t2=$(now)
printf '\n' >>"$BENCH_TMP/out.txt"
cmp -s "$lines" "$BENCH_TMP/out.txt" || bench_die "what came out of the spool is not what went in"
left=$(find "$BENCH_TMP/spool" -type f | wc -l)
[ "$left" -eq 0 ] || bench_die "$left files left in the spool"

t3=$(now)
"$wrap" -l "$lines" --output "$BENCH_TMP/plain.msg" || bench_die "writing the file failed"
t4=$(now)
"$unwrap" -s '\n' "$BENCH_TMP/plain.msg" >/dev/null || bench_die "reading the file failed"
t5=$(now)

in_ms=$(( (t1 - t0) / 1000000 )); out_ms=$(( (t2 - t1) / 1000000 ))
fin_ms=$(( (t4 - t3) / 1000000 )); fout_ms=$(( (t5 - t4) / 1000000 ))
[ "$in_ms" -gt 0 ] || in_ms=1; [ "$out_ms" -gt 0 ] || out_ms=1
[ "$fin_ms" -gt 0 ] || fin_ms=1; [ "$fout_ms" -gt 0 ] || fout_ms=1
fs=$(stat -f -c %T "$BENCH_TMP" 2>/dev/null || echo unknown)
echo "dir: $N messages on $fs"
echo "  into dir:  $in_ms ms, $(( N * 1000 / in_ms )) msg/s (plain file: $fin_ms ms, ${fin_ms}/${in_ms} of the time)"
echo "  out of dir: $out_ms ms, $(( N * 1000 / out_ms )) msg/s (plain file: $fout_ms ms)"
if command -v strace >/dev/null 2>&1; then
	"$wrap" -l "$lines" --output "dir:$BENCH_TMP/counted" 2>/dev/null &&
	strace -f -c -e trace=fsync -o "$BENCH_TMP/strace.txt" \
		"$unwrap" --once "dir:$BENCH_TMP/counted" >/dev/null &&
	strace -f -c -e trace=fsync -o "$BENCH_TMP/strace-in.txt" \
		"$wrap" -l "$lines" --output "dir:$BENCH_TMP/counted2" &&
	echo "  fsync calls: in $(awk '/fsync/ { print $4 }' "$BENCH_TMP/strace-in.txt"), out $(awk '/fsync/ { print $4 }' "$BENCH_TMP/strace.txt" | head -1)"
fi
