#!/bin/sh
# inbox: BENCH_INBOX_FILES (default 10,000) files of 2 KiB in an inbox
# directory, each made a message by one msg-wrap --once into a dir: spool
# and deleted, moved into a done directory with --done, and with
# --done --idempotent (each file hashed, its record committed once a
# batch), in files per second, against the shell loop that does the same
# by hand, the peer:
#
#     for f in *; do msg-wrap "$f" >>out && mv "$f" done/; done
#
# usage: sh bench/inbox.sh [BUILD]
#
# A file in the inbox costs its share of a listing, a lease asked for and
# given back, a claim (a rename into DIR/.msg/work), the read, a file in
# the spool (written, fsynced, renamed into new/) and the deletion; new/
# and the work directory are synced once for each batch of 64 files. The
# peer starts two processes a file and syncs nothing: a crash between
# its msg-wrap and its mv wraps the file twice, one inside msg-wrap may
# leave half a message in out. Reported with the times: the syncs per
# file (the fault shim with FAULT_ERRNO=none lists each, unmade) and the
# time with the syncs skipped that way, which says how much is the
# disk's. The runs use --settle 0: every file is whole before they start,
# and a settle time is one wait a listing (2 s by default), whatever the
# number of files. The directories live in the scratch directory under
# TMPDIR, whose file system is named in the output: on a tmpfs an fsync
# costs nothing.
set -u

here=$(dirname "$0")
. "$here/lib.sh"

bench_init "${1:-build}"
N=${BENCH_INBOX_FILES:-10000}
bench_need_positive BENCH_INBOX_FILES "$N"
TARGET=2000	# files per second, every sync made
SIZE=2048
wrap=$(bench_tool msg-wrap)
unwrap=$(bench_tool msg-unwrap)
bench_nosync_init

# drop DIR: the N files, fNNNNN holding NNNNN, blanks and x up to SIZE
# bytes with a newline, in DIR, made afresh.
drop() {
	rm -rf "$1"
	mkdir "$1" || bench_die "cannot make '$1'"
	awk -v dir="$1" -v n="$N" -v size="$SIZE" 'BEGIN {
		pad = sprintf("%" (size - 7) "s", ""); gsub(/ /, "x", pad)
		for (i = 1; i <= n; i++) {
			f = sprintf("%s/f%05d", dir, i)
			printf "%05d %s\n", i, pad >f
			close(f)
		}
	}' || bench_die "cannot fill '$1'"
}

# check_messages FILE...: the frames in FILE... are the N files, once
# each, whole.
check_messages() {
	cat "$@" | "$unwrap" -H | awk -v n="$N" -v size="$SIZE" '
		/^File-Name: / { names[$2]++ }
		/^Content-Length: / { if ($2 != size) bad++; count++ }
		END {
			for (f in names) { distinct++; if (names[f] > 1) bad++ }
			exit !(count == n && distinct == n && !bad)
		}' || bench_die "the messages are not the $N files, once each"
}

# check_inbox DIR: nothing is left in the inbox DIR, nor claimed.
check_inbox() {
	_left=$(find "$1" -type f ! -name lock ! -path '*/.msg/seen/*' | wc -l)
	[ "$_left" -eq 0 ] || bench_die "$_left files left in '$1'"
}

# check_spool DIR: the spool DIR holds the N messages.
check_spool() {
	_got=$(find "$1/new" -type f | wc -l)
	[ "$_got" -eq "$N" ] || bench_die "'$1' holds $_got messages, not $N"
	find "$1/new" -type f -exec cat {} + >"$BENCH_TMP/spooled.msg"
	check_messages "$BENCH_TMP/spooled.msg"
}

# best PREFIX [ARG...]: the best of RUNS (default BENCH_RUNS) runs of
# PREFIX ARG... msg-wrap --once over a new inbox into a new spool, each
# checked; BEST_US. Set DONE to a directory to pass as --done, IDEM to
# anything to pass --idempotent.
best() {
	BEST_US=
	_r=0
	while [ "$_r" -lt "${RUNS:-$BENCH_RUNS}" ]; do
		inbox=$BENCH_TMP/in out=$BENCH_TMP/out
		drop "$inbox"
		rm -rf "$out" "$BENCH_TMP/done"
		bench_elapsed_us "$@" "$wrap" --once --settle 0 ${DONE:+--done "$DONE"} \
			${IDEM:+--idempotent} --output "dir:$out" "inbox:$inbox"
		[ -z "$BEST_US" ] || [ "$_us" -lt "$BEST_US" ] && BEST_US=$_us
		check_inbox "$inbox"
		check_spool "$out"
		if [ -n "${DONE:-}" ]; then
			_kept=$(find "$DONE" -type f | wc -l)
			[ "$_kept" -eq "$N" ] || bench_die "'$DONE' holds $_kept files, not $N"
		fi
		_r=$((_r + 1))
	done
}

# shell_loop DIR: the peer's loop over the inbox DIR, as an operator
# writes it.
shell_loop() {
	(cd "$1" && for f in *; do
		"$_pwrap" "$f" >>"$BENCH_TMP/peer.msg" && mv "$f" "$BENCH_TMP/peer-done/" ||
			exit 1
	done)
}

# The peer, once: it takes long, and it is the same every time. It runs
# in the inbox, so it is given msg-wrap's absolute path.
peer() {
	_pwrap=$(cd "$(dirname "$wrap")" && pwd)/msg-wrap
	inbox=$BENCH_TMP/in
	drop "$inbox"
	rm -rf "$BENCH_TMP/peer-done" "$BENCH_TMP/peer.msg"
	mkdir "$BENCH_TMP/peer-done" || bench_die "cannot make the done directory"
	bench_elapsed_us shell_loop "$inbox"
	PEER_US=$_us
	check_inbox "$inbox"
	check_messages "$BENCH_TMP/peer.msg"
}

# syncs_of_a_run: one run with every sync listed (and skipped); prints
# "FILES DIRECTORIES", the syncs of the spool's files and of directories.
syncs_of_a_run() {
	drop "$BENCH_TMP/in"
	rm -rf "$BENCH_TMP/out" "$BENCH_TMP/syncs.log"
	bench_count_syncs "$BENCH_TMP/syncs.log" "$wrap" --once --settle 0 \
		--output "dir:$BENCH_TMP/out" "inbox:$BENCH_TMP/in" >/dev/null
	check_spool "$BENCH_TMP/out"
	awk '$2 ~ /\/tmp\/[^\/]*$/ { f++; next } { d++ }
		END { printf "%d %d\n", f, d }' "$BENCH_TMP/syncs.log"
}

fs=$(stat -f -c %T "$BENCH_TMP" 2>/dev/null || echo unknown)
echo "inbox: $N files of $SIZE bytes to a dir: spool, directories on $fs"

best
tool_us=$BEST_US
best bench_nosync
nosync_us=$BEST_US
DONE=$BENCH_TMP/done
best
done_us=$BEST_US
IDEM=yes
best
idem_us=$BEST_US
DONE='' IDEM=''
syncs=$(syncs_of_a_run)
file_syncs=${syncs% *} dir_syncs=${syncs#* }
[ -n "$syncs" ] || bench_die "the syncs could not be counted"
peer

bench_result "msg-wrap --once inbox: (files deleted)" "$tool_us" "" \
	"$(bench_per_sec "$N" "$tool_us") files/s"
bench_result "the same, fsyncs skipped (unsafe)" "$nosync_us" "" \
	"$(bench_per_sec "$N" "$nosync_us") files/s"
bench_result "msg-wrap --once --done DIR inbox:" "$done_us" "" \
	"$(bench_per_sec "$N" "$done_us") files/s"
bench_result "msg-wrap --once --done DIR --idempotent inbox:" "$idem_us" "" \
	"$(bench_per_sec "$N" "$idem_us") files/s"
bench_result "sh loop: msg-wrap >>out && mv (no sync)" "$PEER_US" "" \
	"$(bench_per_sec "$N" "$PEER_US") files/s"
bench_report "syncs per file" \
	"$(awk -v f="$file_syncs" -v d="$dir_syncs" -v n="$N" \
		'BEGIN { printf "%.3f", (f + d) / n }')" \
	" ($file_syncs of the spool's files, $dir_syncs of directories, for $N files)"
bench_report "time with fsync / time without" "$(bench_ratio "$tool_us" "$nosync_us")" "x"
bench_report "msg-wrap inbox: vs the sh loop, times faster" \
	"$(bench_ratio "$PEER_US" "$tool_us")" "x"
bench_verdict "files per second, files deleted, every sync made" \
	"$(bench_per_sec "$N" "$tool_us")" ">=" "$TARGET" " files/s"
bench_report "msg-wrap --done vs the sh loop, times faster" \
	"$(bench_ratio "$PEER_US" "$done_us")" "x"
bench_verdict "files per second, files moved to --done, every sync made" \
	"$(bench_per_sec "$N" "$done_us")" ">=" "$TARGET" " files/s"
