#!/usr/bin/env bats
# inbox:DIR against a real upload: OpenSSH's sftp client and its
# sftp-server write a file into the inbox in place, slowly (sftp -l
# paces it to several seconds), as a partner's upload lands. The server
# runs first as sftp's subprocess (sftp -D): no daemon and no network,
# but the very program that writes a partner's uploads on an SFTP host;
# then behind a private sshd on 127.0.0.1, as a partner reaches it,
# started by this file for its tests and stopped at its end. Readers
# look again and again while the upload goes on; the file must be taken
# once, whole, and only when complete.

load test_helper
bats_require_minimum_version 1.5.0
load fixtures/dir/dir

SFTP_SERVER=${SFTP_SERVER:-/usr/lib/openssh/sftp-server}
# sshd must be started by its absolute path (it re-executes itself).
SSHD=${SSHD:-/usr/sbin/sshd}

setup_file() {
	sshd_start
}

teardown_file() {
	sshd_stop
}

# ---- a private sshd ----
#
# It listens on 127.0.0.1 only, on a free high port, runs as the user
# running the tests (root or not), knows only a host key and a client
# key made for it under $BATS_FILE_TMPDIR/sshd, and serves sftp in
# process (internal-sftp). Its state is in that directory: the config,
# the keys, the known_hosts of the client, its log, its pid file.
# SSHD_PORT is set once it listens; SSHD_SKIP says why it could not
# start (the tests that need it skip, naming the reason).

sshd_start() {
	local d=$BATS_FILE_TMPDIR/sshd try port pid
	export SSHD_DIR=$d SSHD_SKIP='' SSHD_PORT='' SSHD_PID=''
	if [ ! -x "$SSHD" ] || ! command -v ssh-keygen >/dev/null ||
		! command -v sftp >/dev/null; then
		SSHD_SKIP="needs $SSHD, ssh-keygen and sftp (Debian: openssh-server, openssh-client)"
		return 0
	fi
	mkdir -p "$d"
	ssh-keygen -q -t ed25519 -N '' -C msgtools-test-host -f "$d/host_key"
	ssh-keygen -q -t ed25519 -N '' -C msgtools-test-client -f "$d/client_key"
	# As root, sshd separates privileges into a chroot in /run/sshd,
	# made by the system's service when it first starts (and here none
	# may ever have): made if missing, removed again at the end.
	if [ "$(id -u)" = 0 ] && [ ! -d /run/sshd ]; then
		mkdir -m 755 /run/sshd
		: >"$d/made-run-sshd"
	fi
	# A port taken by another program makes sshd -D exit at once
	# ("Cannot bind any address"): another is tried.
	for ((try = 0; try < 20; try++)); do
		port=$((20000 + RANDOM % 40000))
		sshd_config "$port" >"$d/sshd_config"
		rm -f "$d/sshd.pid" "$d/sshd.log"
		# In a process group of its own (setsid: a background job of
		# this shell is no group leader, so it execs in place and $! is
		# sshd), killed whole at the end with the sessions it forked.
		setsid "$SSHD" -D -f "$d/sshd_config" -E "$d/sshd.log" \
			</dev/null >/dev/null 2>&1 3>&- &
		pid=$!
		# The pid file is written once it listens.
		wait_until 30 eval '[ -s "$SSHD_DIR/sshd.pid" ] || ! kill -0 '"$pid"' 2>/dev/null' ||
			{ sshd_kill "$pid"; return 1; }
		if [ -s "$d/sshd.pid" ]; then
			SSHD_PID=$pid SSHD_PORT=$port
			sshd_lets_in
			return
		fi
		wait "$pid" || true
		grep -q 'Cannot bind' "$d/sshd.log" || { cat "$d/sshd.log" >&2; return 1; }
	done
	echo "no free port found for sshd in $try tries" >&2
	return 1
}

# sshd_lets_in: a first session through the private sshd works. Without
# PAM, sshd refuses an account whose password is locked ('!' or '*' in
# /etc/shadow, as for system users): the tests skip there, naming it;
# any other failure fails the file.
sshd_lets_in() {
	local refused
	echo pwd >"$SSHD_DIR/probe.batch"
	UPLOAD_LIMIT_KBIT=100000 upload_sshd "$SSHD_DIR/probe.batch" 2>"$SSHD_DIR/probe.err" &&
		return 0
	refused=$(grep -m 1 'not allowed because' "$SSHD_DIR/sshd.log") || {
		cat "$SSHD_DIR/probe.err" "$SSHD_DIR/sshd.log" >&2
		return 1
	}
	SSHD_SKIP="the private sshd refuses this user without PAM: $refused"
}

# sshd_config PORT: the private sshd's configuration.
sshd_config() {
	cat <<-EOF
	ListenAddress 127.0.0.1
	Port $1
	HostKey $SSHD_DIR/host_key
	PidFile $SSHD_DIR/sshd.pid
	AuthorizedKeysFile $SSHD_DIR/client_key.pub
	AllowUsers $(id -un)
	PubkeyAuthentication yes
	PasswordAuthentication no
	KbdInteractiveAuthentication no
	PermitRootLogin prohibit-password
	UsePAM no
	StrictModes no
	UseDNS no
	LogLevel VERBOSE
	Subsystem sftp internal-sftp
	EOF
}

# sshd_kill PID: end the process group PID leads (the sshd and the
# sessions it forked): TERM, then KILL if it lingers.
sshd_kill() {
	kill -TERM -- "-$1" 2>/dev/null || return 0
	wait_until 10 eval '! kill -0 '"$1"' 2>/dev/null' ||
		kill -KILL -- "-$1" 2>/dev/null || true
	wait "$1" 2>/dev/null || true
}

sshd_stop() {
	[ -z "${SSHD_PID:-}" ] || sshd_kill "$SSHD_PID"
	if [ -n "${SSHD_DIR:-}" ] && [ -e "$SSHD_DIR/made-run-sshd" ]; then
		rmdir /run/sshd 2>/dev/null || true
	fi
}

# upload_sshd BATCH: run the sftp commands in BATCH through the private
# sshd, as the partner's client would, paced to 600 Kbit/s. No user or
# system configuration of ssh is read (-F /dev/null), the host key is
# learnt into a known_hosts of the test's own.
upload_sshd() {
	timeout -k 5 60 sftp -q -F /dev/null -P "$SSHD_PORT" -i "$SSHD_DIR/client_key" \
		-o IdentitiesOnly=yes -o BatchMode=yes -o StrictHostKeyChecking=no \
		-o UserKnownHostsFile="$SSHD_DIR/known_hosts" -o LogLevel=ERROR \
		-l "${UPLOAD_LIMIT_KBIT:-600}" -b "$1" "$(id -un)@127.0.0.1" >/dev/null
}

# needs_sshd: skip unless the private sshd is listening.
needs_sshd() {
	[ -z "$SSHD_SKIP" ] || skip "$SSHD_SKIP"
	[ -n "$SSHD_PORT" ]
}

setup() {
	cd "$BATS_TEST_TMPDIR" || return 1
	mkdir in
	# 300,000 bytes of text at 600 Kbit/s: about four seconds.
	head -c 225000 /dev/urandom | base64 >upload.txt
}

# needs_sftp_server: skip unless sftp can run the local sftp-server.
needs_sftp_server() {
	if ! command -v sftp >/dev/null || [ ! -x "$SFTP_SERVER" ]; then
		skip "needs sftp and $SFTP_SERVER (Debian: openssh-client, openssh-sftp-server)"
	fi
}

# upload_local BATCH: run the sftp commands in BATCH against the local
# sftp-server, paced to 600 Kbit/s.
upload_local() {
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

# upload_while_looking UPLOAD BATCH: the reader runs look again and
# again while UPLOAD (upload_local or upload_sshd) runs the sftp
# commands in BATCH, and three more times once a message is out (a
# second take would show there); at least ten looks in all, none failed
# to end.
upload_while_looking() {
	local looker
	spawn look_until upload.done
	looker=$spawned
	"$1" "$2"
	wait_until 30 spooled
	wait_until 30 more_looks_than "$(($(looks) + 2))"
	touch upload.done
	status_of "$looker" 30
	[ "$status" = 0 ]
	echo "reader runs: $(looks)"
	[ "$(looks)" -ge 10 ]
}

@test "sftp: a file uploaded in place through sftp over several seconds is never taken half-written: taken once, whole, once complete (the read lease, --settle 0)" {
	needs_sftp_server
	echo "put upload.txt in/orders.txt" >sftp.batch
	upload_while_looking upload_local sftp.batch
	taken_once_whole orders.txt
}

@test "sftp: an upload under NAME.part, renamed to NAME when complete, is taken once, as NAME" {
	needs_sftp_server
	printf '%s\n' "put upload.txt in/orders.txt.part" \
		"rename in/orders.txt.part in/orders.txt" >sftp.batch
	upload_while_looking upload_local sftp.batch
	taken_once_whole orders.txt
}

# Through the sshd the session starts in the user's home: the batch
# names the inbox by its absolute path.

@test "sshd: a file uploaded through a private sshd on 127.0.0.1 over several seconds is taken once, whole, once complete (the read lease, --settle 0)" {
	needs_sshd
	echo "put upload.txt $PWD/in/orders.txt" >sftp.batch
	upload_while_looking upload_sshd sftp.batch
	taken_once_whole orders.txt
	# The upload went through the daemon, as this user, by the key.
	grep -q "Accepted publickey for $(id -un) from 127.0.0.1" "$SSHD_DIR/sshd.log"
}

@test "sshd: an upload through the private sshd under NAME.part, renamed to NAME when complete, is taken once, as NAME" {
	needs_sshd
	printf '%s\n' "put upload.txt $PWD/in/orders.txt.part" \
		"rename $PWD/in/orders.txt.part $PWD/in/orders.txt" >sftp.batch
	upload_while_looking upload_sshd sftp.batch
	taken_once_whole orders.txt
}
