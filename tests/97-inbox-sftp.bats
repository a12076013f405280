#!/usr/bin/env bats
# inbox:DIR against a real upload: OpenSSH's sftp client and its
# sftp-server write a file into the inbox in place, slowly (sftp -l
# paces it to several seconds), as a partner's upload lands. The server
# runs as sftp's subprocess (sftp -D): no daemon and no network, but the
# very program that writes a partner's uploads on an SFTP host. Readers
# look again and again while the upload goes on; the file must be taken
# once, whole, and only when complete.

load test_helper
bats_require_minimum_version 1.5.0
load fixtures/dir/dir

SFTP_SERVER=${SFTP_SERVER:-/usr/lib/openssh/sftp-server}

setup() {
	cd "$BATS_TEST_TMPDIR" || return 1
	if ! command -v sftp >/dev/null || [ ! -x "$SFTP_SERVER" ]; then
		skip "needs sftp and $SFTP_SERVER (Debian: openssh-client, openssh-sftp-server)"
	fi
	mkdir in
	# 300,000 bytes of text at 600 Kbit/s: about four seconds.
	head -c 225000 /dev/urandom | base64 >upload.txt
}

# upload BATCH: run the sftp commands in BATCH against the local
# sftp-server, paced to 600 Kbit/s.
upload() {
	timeout -k 5 60 sftp -q -D "$SFTP_SERVER" -l 600 -b "$1" >/dev/null
}

# look_until STOPFILE: run the reader as cron would, every tenth of a
# second, until STOPFILE exists; each run's status and stats are kept in
# looks.log, one line a run.
look_until() {
	local rc
	until [ -e "$1" ]; do
		rc=0
		msg-wrap --once --settle 0 --stats --output dir:out inbox:in 2>look.err || rc=$?
		echo "$rc $(tr '\n' ' ' <look.err)" >>looks.log
		sleep 0.1
	done
}

# spooled: a message is in the dir: output out.
spooled() {
	[ -n "$(ls out/new 2>/dev/null)" ]
}

# taken_once_whole NAME: the reader runs took one file in all, and out
# holds exactly one message, named NAME, whose body is upload.txt byte
# for byte; no run failed; nothing is left in the inbox or claimed.
taken_once_whole() {
	[ -z "$(awk '$1 != 0' looks.log)" ]
	[ "$(grep -c 'stats: in 1, out 1,' looks.log)" = 1 ]
	[ "$(grep -c -v 'stats: in 0, out 0,' looks.log)" = 1 ]
	[ "$(nfiles out/new)" = 1 ]
	[ "$(msg-unwrap -H out/new/* | sed -n 's/^File-Name: //p')" = "$1" ]
	msg-unwrap --once dir:out >got.txt
	cmp got.txt upload.txt
	[ "$(ls -A in)" = .msg ]
	[ -z "$(ls -A in/.msg/work)" ]
}

# looks: how many reader runs have ended.
looks() {
	[ -e looks.log ] && wc -l <looks.log || echo 0
}

# more_looks_than N: more than N reader runs have ended.
more_looks_than() {
	[ "$(looks)" -gt "$1" ]
}

# upload_while_looking BATCH: the reader runs look again and again while
# the sftp commands in BATCH upload, and three more times once a message
# is out (a second take would show there); at least ten looks in all,
# none failed to end.
upload_while_looking() {
	local looker
	spawn look_until upload.done
	looker=$spawned
	upload "$1"
	wait_until 30 spooled
	wait_until 30 more_looks_than "$(($(looks) + 2))"
	touch upload.done
	status_of "$looker" 30
	[ "$status" = 0 ]
	echo "reader runs: $(looks)"
	[ "$(looks)" -ge 10 ]
}

@test "sftp: a file uploaded in place through sftp over several seconds is never taken half-written: taken once, whole, once complete (the read lease, --settle 0)" {
	echo "put upload.txt in/orders.txt" >sftp.batch
	upload_while_looking sftp.batch
	taken_once_whole orders.txt
}

@test "sftp: an upload under NAME.part, renamed to NAME when complete, is taken once, as NAME" {
	printf '%s\n' "put upload.txt in/orders.txt.part" \
		"rename in/orders.txt.part in/orders.txt" >sftp.batch
	upload_while_looking sftp.batch
	taken_once_whole orders.txt
}
