#!/usr/bin/env bats
# Outputs that fail: a full device, a reader that goes away, a directory
# that cannot be written. Each is reported, named, and never exits 0.

load test_helper
bats_require_minimum_version 1.5.0

export LC_ALL=C

# A scratch file system is a private tmpfs mount: that needs root and a
# mount namespace. Prints nothing and fails when either is missing.
can_mount() {
	[ "$(id -u)" = 0 ] &&
		unshare -m --propagation private sh -c 'mount -t tmpfs -o size=64k none "$1"' sh "$PWD" 2>/dev/null
}

# in_tmpfs OPTS DIR CMD...: run CMD with a tmpfs mounted on DIR (OPTS as
# for mount -o) in a mount namespace of its own, so nothing outlives it.
in_tmpfs() {
	local opts=$1 dir=$2
	shift 2
	unshare -m --propagation private sh -c \
		'mount -t tmpfs -o "$1" none "$2" || exit 99; shift 2; exec "$@"' \
		sh "$opts" "$dir" "$@"
}

@test "faults: msg-wrap to a full stdout exits 74" {
	printf 'body' >in.txt
	run -74 --separate-stderr sh -c 'msg-wrap in.txt >/dev/full'
	[ "$stderr" = "msg-wrap: cannot write 'stdout': No space left on device" ]
}

@test "faults: msg-wrap of a large body to a full stdout exits 74" {
	head -c 5000000 /dev/zero >big
	run -74 --separate-stderr sh -c 'msg-wrap big >/dev/full'
	[ "$stderr" = "msg-wrap: cannot write 'stdout': No space left on device" ]
	run -74 --separate-stderr sh -c 'msg-wrap -l big >/dev/full'
	[ "$stderr" = "msg-wrap: cannot write 'stdout': No space left on device" ]
}

@test "faults: msg-wrap --output /dev/full exits 74 naming it" {
	run -74 --separate-stderr msg-wrap --output /dev/full </dev/null
	[ "$stderr" = "msg-wrap: cannot write '/dev/full': No space left on device" ]
	[ -z "$output" ]
}

@test "faults: msg-wrap --invalid /dev/full exits 74 on the first invalid line" {
	printf '%s\n' '{"body":"ok"}' 'bad' >env.jsonl
	run -74 --separate-stderr msg-wrap -e --invalid /dev/full --output good.msg env.jsonl
	[ "${#stderr_lines[@]}" = 2 ]
	[[ ${stderr_lines[0]} == "msg-wrap: warning: message "*": File-Name env.jsonl: env.jsonl: line 2: invalid envelope: not JSON: "*": diverted to '/dev/full'" ]]
	[ "${stderr_lines[1]}" = "msg-wrap: cannot write '/dev/full': No space left on device" ]
	[ "$(msg-unwrap good.msg)" = ok ]
}

@test "faults: msg-unwrap to a full stdout exits 74, in every mode" {
	local mode
	frame body 'Message-Id: m1' >in.msg
	for mode in '' -e -H '-s ,'; do
		run -74 --separate-stderr sh -c "msg-unwrap $mode in.msg >/dev/full"
		[ "$stderr" = "msg-unwrap: cannot write 'stdout': No space left on device" ]
	done
}

@test "faults: msg-unwrap --output /dev/full exits 74 naming it" {
	frame body >in.msg
	run -74 --separate-stderr msg-unwrap --output /dev/full in.msg
	[ "$stderr" = "msg-unwrap: cannot write '/dev/full': No space left on device" ]
}

@test "faults: msg-unwrap of a large body to a full stdout exits 74" {
	head -c 5000000 /dev/zero | msg-wrap >in.msg
	run -74 --separate-stderr sh -c 'msg-unwrap in.msg >/dev/full'
	[ "$stderr" = "msg-unwrap: cannot write 'stdout': No space left on device" ]
}

@test "faults: --output to a path that cannot be created exits 73" {
	run -73 --separate-stderr msg-wrap --output no/such/dir.msg </dev/null
	[ "$stderr" = "msg-wrap: cannot open 'no/such/dir.msg': No such file or directory" ]
	[ ! -e no ]
	frame x >in.msg
	run -73 --separate-stderr msg-unwrap --output no/such/dir.out in.msg
	[ "$stderr" = "msg-unwrap: cannot open 'no/such/dir.out': No such file or directory" ]
}

@test "faults: a reader that closes early ends msg-wrap -l" {
	seq 1000000 >lines
	run -0 --separate-stderr bash -c \
		'timeout -k 10 10 msg-wrap -l lines | head -c 10; echo " ${PIPESTATUS[*]}"'
	# msg-wrap dies of SIGPIPE (141) or reports EPIPE (74), and never hangs
	# (124) or claims success.
	[[ $output == "Message-Id 141 0" && -z $stderr ]] ||
		[[ $output == "Message-Id 74 0" && $stderr == "msg-wrap: cannot write 'stdout': Broken pipe" ]]
}

@test "faults: a reader that closes early ends msg-wrap of a large body" {
	head -c 50000000 /dev/zero >big
	run -0 --separate-stderr bash -c \
		'timeout -k 10 10 msg-wrap big | head -c 10; echo " ${PIPESTATUS[*]}"'
	[[ $output == "Message-Id 141 0" && -z $stderr ]] ||
		[[ $output == "Message-Id 74 0" && $stderr == "msg-wrap: cannot write 'stdout': Broken pipe" ]]
}

@test "faults: a reader that closes early ends msg-wrap | msg-unwrap" {
	seq 1000000 >lines
	run -0 --separate-stderr bash -c \
		'timeout -k 10 10 msg-wrap -l lines | timeout -k 10 10 msg-unwrap -s "\n" | head -n 3; echo "${PIPESTATUS[*]}"'
	[ "${lines[0]}" = 1 ]
	[ "${lines[1]}" = 2 ]
	[ "${lines[2]}" = 3 ]
	# The upstream writer may finish first or be cut off; neither may hang.
	[[ ${lines[3]} =~ ^(0|141|74)\ (141|74)\ 0$ ]]
}

@test "faults: with --invalid set, a closed stdout is reported as EPIPE" {
	# Several outputs: SIGPIPE is ignored and the failing one is named.
	seq 1000000 >lines
	run -0 --separate-stderr bash -c \
		'timeout -k 10 10 msg-wrap -l --invalid bad.msg lines | head -c 10; echo " ${PIPESTATUS[*]}"'
	[ "$output" = "Message-Id 74 0" ]
	[ "$stderr" = "msg-wrap: cannot write 'stdout': Broken pipe" ]
}

@test "faults: msg-unwrap -d on a directory it cannot make exits 73" {
	frame x 'File-Name: x' >in.msg
	: >plain
	run -73 --separate-stderr msg-unwrap -d plain in.msg
	[ "$stderr" = "msg-unwrap: cannot open directory 'plain': Not a directory" ]
	run -73 --separate-stderr msg-unwrap -d plain/nodir/sub in.msg
	[ "$stderr" = "msg-unwrap: cannot open directory 'plain/nodir/sub': Not a directory" ]
}

@test "faults: msg-unwrap -d on a read-only directory exits 73" {
	mkdir ro
	frame x 'File-Name: x' >in.msg
	if can_mount; then
		run -73 --separate-stderr in_tmpfs ro,size=64k ro msg-unwrap -d ro in.msg
		[ "$stderr" = "msg-unwrap: cannot create a file in 'ro': Read-only file system" ]
	else
		chmod 555 ro
		if touch ro/probe 2>/dev/null; then
			skip "cannot make a directory read-only here"
		fi
		run -73 --separate-stderr msg-unwrap -d ro in.msg
		[ "$stderr" = "msg-unwrap: cannot create a file in 'ro': Permission denied" ]
	fi
	[ -z "$(ls -A ro)" ]
}

@test "faults: msg-unwrap -d on a full file system exits 74 and leaves no temporary file" {
	can_mount || skip "needs root and unshare to mount a small tmpfs"
	mkdir small
	{ frame first 'File-Name: first.txt'; head -c 300000 /dev/urandom | msg-wrap -H 'File-Name: big.bin'; } >in.msg
	run -74 --separate-stderr in_tmpfs size=128k small \
		sh -c 'msg-unwrap -d small in.msg; s=$?; ls -A small >&2; exit $s'
	[[ ${stderr_lines[0]} =~ ^msg-unwrap:\ cannot\ write\ \'small/[^\']+\':\ No\ space\ left\ on\ device$ ]]
	# The first file made it; no temporary file is left of the second.
	[ "${stderr_lines[1]}" = first.txt ]
	[ "${#stderr_lines[@]}" = 2 ]
}
