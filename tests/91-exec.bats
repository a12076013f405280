#!/usr/bin/env bats
# msg-exec, the Service Activator: COMMAND runs once per message, the
# headers in its environment and in {Name} arguments as exact bytes,
# never through a shell; the reply carries its output, its exit status
# and the request's headers; --reply-frames, --pass and --failed,
# --max-output, invalid messages, a command that cannot be run, usage
# errors, --stats, and requests taken from a dir: spool. Timeouts,
# retries, parallel runs and misbehaving children are in
# tests/92-exec-robust.bats.

load test_helper
bats_require_minimum_version 1.5.0
load fixtures/aggregate/aggregate
load fixtures/dir/dir
load fixtures/dedupe/dedupe
load fixtures/exec/exec

# Every kind of byte a shell would act on, and two blanks and a tab
# inside (the frame format trims them only at the ends).
HOSTILE=$'a  b\t"dq" \'sq\' $(touch pwned) ; touch pwned; `touch pwned` && touch pwned | tee pwned > pwned < x * ? [ab] ~ $HOME \\ %s %n {V} é'

# ---- the environment and the arguments ----

@test "env: every header as MSG_ and its name upper-cased, other bytes as _, the first of a repeated one, beside the inherited environment" {
	frame body 'Message-Id: e1' 'Content-Type: text/plain' 'x-lower.case_2: v' \
		'X-Repeat: first' 'X-Repeat: second' 'Order-Id: 42' >in.msg
	# A variable the message also sets has the message's value.
	mx_env=(MSG_X_REPEAT=inherited EXEC_SUITE=kept)
	run -0 mx "$EXEC/show-env" EXEC_SUITE
	[ ! -s err.txt ]
	[ "$(count_frames out.msg)" = 1 ]
	body_is out.msg 1 <<-'EOF'
		MSG_CONTENT_LENGTH=4
		MSG_CONTENT_TYPE=text/plain
		MSG_MESSAGE_ID=e1
		MSG_ORDER_ID=42
		MSG_X_LOWER_CASE_2=v
		MSG_X_REPEAT=first
		EXEC_SUITE=kept
	EOF
	# The next message has none of the variables of the one before.
	# shellcheck disable=SC2034 # read by mx
	mx_env=()
	{
		frame body 'Message-Id: e1' 'X-Only-Here: 1'
		frame body 'Message-Id: e2'
	} >in.msg
	run -0 mx "$EXEC/show-env"
	[ ! -s err.txt ]
	printf 'MSG_CONTENT_LENGTH=4\nMSG_MESSAGE_ID=e2\n' | body_is out.msg 2
}

@test "env: hostile header values reach the command as exact bytes, and no shell acts on them" {
	touch a-file b-file
	frame body 'Message-Id: h1' "V: $HOSTILE" 'W: {V}' >in.msg
	run -0 mx "$EXEC/show-env"
	[ ! -s err.txt ]
	{
		echo 'MSG_CONTENT_LENGTH=4'
		echo 'MSG_MESSAGE_ID=h1'
		printf 'MSG_V=%s\n' "$HOSTILE"
		echo 'MSG_W={V}'
	} | body_is out.msg 1
	[ ! -e pwned ]
	[ "$(ls | paste -sd ' ')" = 'a-file b-file err.txt in.msg out.msg' ]
}

@test "{Name}: the header's value as one argument, never re-split, globbed or run; {{ and }} are braces" {
	touch a-file b-file
	frame body 'Message-Id: h1' "V: $HOSTILE" 'W: {V}' 'X: first' 'X: second' \
		'Order-Id: 42' 'Empty: ' >in.msg
	run -0 mx "$EXEC/args" '{V}' 'pre {V} post' '{{V}}' '{{{V}}}' 'a}}b{{c' '{W}' \
		'{X}' '{order-id}' '$(touch pwned)' '*' '' '{V}{X}' '{Empty}'
	[ ! -s err.txt ]
	{
		echo '13 args'
		printf '<%s>\n' "$HOSTILE" "pre $HOSTILE post" '{V}' "{$HOSTILE}" 'a}b{c'
		# A value is not searched for names again.
		echo '<{V}>'
		# The first of a repeated header; names in any case.
		printf '<%s>\n' first 42 '$(touch pwned)' '*' '' "${HOSTILE}first"
		# An empty value is a value: an empty argument.
		echo '<>'
	} | body_is out.msg 1
	[ ! -e pwned ]
	[ "$(ls | paste -sd ' ')" = 'a-file b-file err.txt in.msg out.msg' ]
	# Options after COMMAND are its own; -- ends msg-exec's.
	run -0 mx "$EXEC/args" -t x --stats --
	[ ! -s err.txt ]
	printf '4 args\n<-t>\n<x>\n<--stats>\n<-->\n' | body_is out.msg 1
	run -0 mx -- "$EXEC/args" --stats
	[ ! -s err.txt ]
	printf '1 args\n<--stats>\n' | body_is out.msg 1
}

@test "{Name}: a message without the header is invalid: to --invalid with a warning, and the rest runs" {
	{
		text m1 one 'Name: first'
		text m2 two 'X-Other: kept'
		text m3 three 'Name: third'
	} >in.msg
	run -0 mx --invalid inv.msg "$EXEC/args" '{Name}'
	[ "$(fields out.msg Correlation-Id Status | paste -sd ' ')" = \
		"$(printf 'm1\tsuccess\t1 args\\n<first>\\n m3\tsuccess\t1 args\\n<third>\\n')" ]
	text m2 two 'X-Other: kept' "Error: msg-exec: no header 'Name' for {Name}" |
		expect_same - inv.msg
	echo "msg-exec: warning: message m2: no header 'Name' for {Name}: diverted to 'inv.msg'" |
		expect_same - err.txt
}

@test "{Name}: a message without the header, without --invalid: exit 65 naming it, after the replies before it" {
	{
		text m1 one 'Name: first' 'Keep: yes'
		text m2 two 'Keep: yes'
		text m3 three 'Name: third' 'Keep: yes'
	} >in.msg
	run -65 mx "$EXEC/logs-id" ran.log '{Name}'
	echo "msg-exec: stdin: message 2 (Message-Id m2): no header 'Name' for {Name}" |
		expect_same - err.txt
	[ "$(fields out.msg Correlation-Id Status | paste -sd ' ')" = "$(printf 'm1\tsuccess\t')" ]
	# m3 never ran.
	[ "$(cat ran.log)" = m1 ]
}

@test "env: the largest header a frame holds reaches the command whole; a longer one is a framing error before any run" {
	local big
	big=$(head -c 65000 /dev/zero | tr '\0' v)
	frame body 'Message-Id: b1' "X-Big: $big" >in.msg
	run -0 mx "$EXEC/args" '{X-Big}'
	[ ! -s err.txt ]
	printf '1 args\n<%s>\n' "$big" | body_is out.msg 1
	run -0 mx "$EXEC/show-env"
	[ ! -s err.txt ]
	printf 'MSG_CONTENT_LENGTH=4\nMSG_MESSAGE_ID=b1\nMSG_X_BIG=%s\n' "$big" | body_is out.msg 1
	# 130 KiB, over what one environment string may hold: a frame
	# reader refuses the header block long before, and nothing runs.
	big=$(head -c 133120 /dev/zero | tr '\0' v)
	frame body 'Message-Id: b2' "X-Big: $big" 'Keep: yes' >in.msg
	run -65 mx "$EXEC/logs-id" ran.log
	echo 'msg-exec: stdin: offset 0: header block over 64 KiB' | expect_same - err.txt
	[ ! -s out.msg ]
	[ ! -e ran.log ]
}

# ---- the reply ----

@test "reply: new Message-Id and Timestamp, Correlation-Id, Exit-Status, Status, the request's other headers, the output as body" {
	frame $'line one\nline two' 'Message-Id: r1' 'Timestamp: 2026-01-01T00:00:00.000Z' \
		'Content-Type: application/xml' 'Correlation-Id: older' 'Status: pending' \
		'Exit-Status: 9' 'Error: msg-route: an earlier failure' 'Exec-Attempt: 4' \
		'X-Order: 7' 'X-Repeat: a' 'X-Repeat: b' 'Sequence-Number: 3' >in.msg
	run -0 mx cat
	[ ! -s err.txt ]
	[ "$(count_frames out.msg)" = 1 ]
	made_anew out.msg 1 r1
	printf '%s\n' 'Content-Length: 17' 'Content-Type: text/plain' 'Correlation-Id: r1' \
		'Exit-Status: 0' 'Sequence-Number: 3' 'Status: success' 'X-Order: 7' \
		'X-Repeat: a' 'X-Repeat: b' | expect_same - <(reply_headers out.msg 1)
	# A repeated header keeps its order.
	[ "$(frame_part out.msg 1 head | grep '^X-Repeat: ' | paste -sd ' ')" = 'X-Repeat: a X-Repeat: b' ]
	printf 'line one\nline two' | body_is out.msg 1
	# --no-copy-headers: only what the reply itself says.
	run -0 mx --no-copy-headers cat
	[ ! -s err.txt ]
	made_anew out.msg 1 r1
	printf '%s\n' 'Content-Length: 17' 'Content-Type: text/plain' 'Correlation-Id: r1' \
		'Exit-Status: 0' 'Status: success' | expect_same - <(reply_headers out.msg 1)
	printf 'line one\nline two' | body_is out.msg 1
}

@test "reply: the body is the output byte for byte, its Content-Type detected, or -t" {
	{
		frame '<order id="1"/>' 'Message-Id: x1' 'Content-Type: text/plain'
		frame '{"id": 1}' 'Message-Id: x2' 'Content-Type: text/plain'
		frame '[1, 2]' 'Message-Id: x3'
		frame 'plain words' 'Message-Id: x4' 'Content-Type: application/json'
		printf 'Message-Id: x5\nContent-Type: text/plain\nContent-Length: 7\n\na\0b\r\n\377z\n'
	} >in.msg
	run -0 mx cat
	[ ! -s err.txt ]
	[ "$(fields out.msg Correlation-Id Content-Type Status | cut -f 1-3 | paste -sd ' ')" = \
		"$(printf 'x1\tapplication/xml\tsuccess x2\tapplication/json\tsuccess x3\tapplication/json\tsuccess x4\ttext/plain\tsuccess x5\tapplication/octet-stream\tsuccess')" ]
	local n
	for n in 1 2 3 4 5; do
		frame_part in.msg "$n" body | body_is out.msg "$n"
	done
	run -0 mx -t text/csv cat
	[ ! -s err.txt ]
	[ "$(fields out.msg Content-Type | cut -f 1 | sort -u)" = text/csv ]
	for n in 1 2 3 4 5; do
		frame_part in.msg "$n" body | body_is out.msg "$n"
	done
	# A megabyte a command never reads, or stops reading, does not stop
	# msg-exec (no SIGPIPE); a megabyte it copies comes back whole.
	head -c 1048576 /dev/urandom >big.bin
	msg-wrap -H 'Message-Id: g1' big.bin >in.msg
	run -0 mx true
	[ ! -s err.txt ]
	[ "$(fields out.msg Correlation-Id Exit-Status Status Content-Length | cut -f 1-4)" = \
		"$(printf 'g1\t0\tsuccess\t0')" ]
	run -0 mx "$EXEC/closes-stdin"
	[ ! -s err.txt ]
	[ "$(fields out.msg Correlation-Id Exit-Status Status Content-Length | cut -f 1-4)" = \
		"$(printf 'g1\t0\tsuccess\t13')" ]
	echo 'closed early' | body_is out.msg 1
	run -0 mx cat
	[ ! -s err.txt ]
	body_is out.msg 1 <big.bin
}

@test "reply: a failure is a reply: Status failure, Exit-Status, Error from the last line of stderr, every line passed through" {
	text f1 input 'X-Order: 7' >in.msg
	run -0 mx "$EXEC/exits" 3 'warming up' 'boom: disk on fire' ''
	[ "$(count_frames out.msg)" = 1 ]
	made_anew out.msg 1 f1
	printf '%s\n' 'Content-Length: 5' 'Content-Type: text/plain' 'Correlation-Id: f1' \
		'Error: msg-exec: boom: disk on fire' 'Exit-Status: 3' 'Status: failure' \
		'X-Order: 7' | expect_same - <(reply_headers out.msg 1)
	printf input | body_is out.msg 1
	# Its stderr, each line named by the request's Message-Id (the
	# empty line, whichever way it is shown, aside).
	printf '%s\n' 'msg-exec: f1: warming up' 'msg-exec: f1: boom: disk on fire' |
		expect_same - <(grep -v -x -E 'msg-exec: f1: ?' err.txt)
}

@test "reply: stderr passes through line by line, prefixed with the request's Message-Id, on success too" {
	{
		text s-1 one
		text s-2 two
	} >in.msg
	run -0 mx "$EXEC/exits" 0 'first line' 'second  line, two blanks'
	{
		echo 'msg-exec: s-1: first line'
		echo 'msg-exec: s-1: second  line, two blanks'
		echo 'msg-exec: s-2: first line'
		echo 'msg-exec: s-2: second  line, two blanks'
	} | expect_same - err.txt
	[ "$(fields out.msg Correlation-Id Exit-Status Status Error | cut -f 1-4 | paste -sd ' ')" = \
		"$(printf 's-1\t0\tsuccess\t- s-2\t0\tsuccess\t-')" ]
}

@test "reply: without stderr the Error says the exit status, or the signal that killed the command" {
	text q1 input >in.msg
	run -0 mx "$EXEC/exits" 4
	[ ! -s err.txt ]
	printf '%s\n' 'Content-Length: 5' 'Content-Type: text/plain' 'Correlation-Id: q1' \
		'Error: msg-exec: exit status 4' 'Exit-Status: 4' 'Status: failure' |
		expect_same - <(reply_headers out.msg 1)
	printf input | body_is out.msg 1
	run -0 mx "$EXEC/dies-by" KILL
	[ ! -s err.txt ]
	printf '%s\n' 'Content-Length: 13' 'Content-Type: text/plain' 'Correlation-Id: q1' \
		'Error: msg-exec: killed by signal 9' 'Exit-Status: signal 9' 'Status: failure' |
		expect_same - <(reply_headers out.msg 1)
	echo 'about to die' | body_is out.msg 1
	run -0 mx "$EXEC/dies-by" TERM
	[ ! -s err.txt ]
	[ "$(fields out.msg Exit-Status Status Error | cut -f 1-3)" = \
		"$(printf 'signal 15\tfailure\tmsg-exec: killed by signal 15')" ]
}

# ---- --reply-frames ----

@test "--reply-frames: the command's frame is the reply, its headers winning over msg-exec's" {
	printf 'Message-Id: rf1\nX-Req: from-request\nX-Keep: kept\nStatus: pending\nContent-Type: text/plain\nContent-Length: 7\n\na\0b\r\n\377z\n' >in.msg
	run -0 mx --reply-frames "$EXEC/reply-frame" 'Status: partial' 'Correlation-Id: mine' \
		'X-Req: from-command' 'Content-Type: application/x-own' 'X-Own: 1'
	[ ! -s err.txt ]
	[ "$(count_frames out.msg)" = 1 ]
	made_anew out.msg 1 rf1
	printf '%s\n' 'Content-Length: 7' 'Content-Type: application/x-own' 'Correlation-Id: mine' \
		'Exit-Status: 0' 'Status: partial' 'X-Keep: kept' 'X-Own: 1' 'X-Req: from-command' |
		expect_same - <(reply_headers out.msg 1)
	frame_part in.msg 1 body | body_is out.msg 1
	# Its Message-Id too.
	run -0 mx --reply-frames "$EXEC/reply-frame" 'Message-Id: own-1'
	[ ! -s err.txt ]
	[ "$(fields out.msg Message-Id Correlation-Id Status | cut -f 1-3)" = \
		"$(printf 'own-1\trf1\tsuccess')" ]
	[ "$(frame_part out.msg 1 head | grep -c '^Message-Id: ')" = 1 ]
}

@test "--reply-frames: output that is not one whole frame is a failure, and the run goes on" {
	{
		text n1 'just text'
		text n2 two
		text n3 three
		text n4 four
	} >in.msg
	# n1 plain text, n2 two frames, n3 a frame cut short, n4 one frame.
	cat >answer <<-'EOF'
		case $MSG_MESSAGE_ID in
		n1) cat ;;
		n2) "$1" 'X-A: 1' </dev/null && "$1" 'X-B: 2' </dev/null ;;
		n3) printf 'X-A: 1\nContent-Length: 99\n\nshort\n' ;;
		n4) "$1" 'X-A: 1' ;;
		esac
	EOF
	run -0 mx --reply-frames sh answer "$EXEC/reply-frame"
	[ ! -s err.txt ]
	[ "$(count_frames out.msg)" = 4 ]
	fields out.msg Correlation-Id Exit-Status Status X-A | cut -f 1-4 >got
	printf 'n1\t0\tfailure\t-\nn2\t0\tfailure\t-\nn3\t0\tfailure\t-\nn4\t0\tsuccess\t1\n' |
		expect_same - got
	local n
	for n in 1 2 3; do
		[[ $(frame_part out.msg "$n" head | grep '^Error: ') == 'Error: msg-exec: output is not one message frame: '?* ]]
	done
	run ! grep -q '^Error: ' <(frame_part out.msg 4 head)
	printf four | body_is out.msg 4
}

# ---- --pass ----

@test "--pass: a request the command accepts passes byte for byte; --failed takes the rest with an Error header" {
	{
		text p1 $'one\n' 'Keep: yes'
		text p2 two 'Keep: no' 'X-Note: kept'
		printf 'Message-Id: p3\r\nKeep: yes\r\nX-A:  v \r\nContent-Length: 7\r\n\r\na\0b\r\n\377z\n'
	} >in.msg
	{
		frame_part in.msg 1 head
		printf '\none\n\n'
		printf 'Message-Id: p3\r\nKeep: yes\r\nX-A:  v \r\nContent-Length: 7\r\n\r\na\0b\r\n\377z\n'
	} >passed.msg
	run -0 mx --pass --failed fail.msg "$EXEC/logs-id" ran.log
	[ ! -s err.txt ]
	cmp passed.msg out.msg
	text p2 two 'Keep: no' 'X-Note: kept' 'Error: msg-exec: exit status 1' | expect_same - fail.msg
	[ "$(paste -sd ' ' ran.log)" = 'p1 p2 p3' ]
	# A {Name} test as the command: a Message Filter by program.
	rm fail.msg
	run -0 mx --pass --failed fail.msg test '{Keep}' = yes
	[ ! -s err.txt ]
	cmp passed.msg out.msg
	text p2 two 'Keep: no' 'X-Note: kept' 'Error: msg-exec: exit status 1' | expect_same - fail.msg
}

@test "--pass without --failed: the first failure stops msg-exec with 70, naming the message, after what passed" {
	{
		text p1 one 'Keep: yes'
		text p2 two 'Keep: no'
		text p3 three 'Keep: yes'
	} >in.msg
	run -70 mx --pass "$EXEC/logs-id" ran.log
	echo 'msg-exec: message p2: command failed: exit status 1' | expect_same - err.txt
	frame_part in.msg 1 head >expect
	printf '\none\n' >>expect
	cmp expect out.msg
	[ "$(paste -sd ' ' ran.log)" = 'p1 p2' ]
	# The reason is the one a reply's Error would give.
	run -70 mx --pass "$EXEC/exits" 2 'no such customer'
	{
		echo 'msg-exec: p1: no such customer'
		echo 'msg-exec: message p1: command failed: no such customer'
	} | expect_same - err.txt
	[ ! -s out.msg ]
}

# ---- limits and errors ----

@test "--max-output: more output is a failure and the command is killed; as much passes" {
	text o1 one >in.msg
	run -0 mx --max-output 4K "$EXEC/floods" 2000000 survived
	[ ! -s err.txt ]
	[ "$(count_frames out.msg)" = 1 ]
	fields out.msg Correlation-Id Status Error Exit-Status | cut -f 1-4 >got
	[[ $(cat got) == "$(printf 'o1\tfailure\tmsg-exec: output over 4K\tsignal ')"[0-9]* ]]
	# Killed, not only cut off: the script never went on past its write.
	sleep 2
	[ ! -e survived ]
	# Exactly the limit is no failure.
	run -0 mx --max-output 4K "$EXEC/floods" 4096 full
	[ ! -s err.txt ]
	[ "$(fields out.msg Status Exit-Status | cut -f 1-2)" = "$(printf 'success\t0')" ]
	head -c 4096 /dev/zero | body_is out.msg 1
	[ -e full ]
	run -0 mx --max-output 4K "$EXEC/floods" 4097 past
	[ "$(fields out.msg Status Error | cut -f 1-2)" = "$(printf 'failure\tmsg-exec: output over 4K')" ]
}

@test "command not found or not executable: exit 69 before reading anything" {
	text n1 one >in.msg
	local name
	for name in no-such-command-anywhere here-only; do
		run -69 bash -c 'timeout -k 5 30 msg-exec "$1" >out.msg 2>err.txt; s=$?
			cat >rest.msg; exit $s' - "$name" <in.msg
		echo "msg-exec: cannot run '$name': No such file or directory" | expect_same - err.txt
		[ ! -s out.msg ]
		# All of the input is still there for the next reader.
		cmp in.msg rest.msg
		# A name without / is looked for in PATH only, as execvp does.
		printf '#!/bin/sh\necho ran\n' >here-only
		chmod +x here-only
	done
	printf '#!/bin/sh\necho ran\n' >not-exec
	chmod 644 not-exec
	run -69 mx ./not-exec
	echo "msg-exec: cannot run './not-exec': Permission denied" | expect_same - err.txt
	[ ! -s out.msg ]
}

@test "usage: bad options exit 64 before reading anything" {
	text u1 one >in.msg
	local -a bad=(
		'' '--no-such-option cat' '-z cat' '-P 0 cat' '-P x cat' '--parallel -1 cat'
		'--timeout x cat' '--kill-after x cat' '--retry x cat' '--retry -1 cat'
		'--retry-delay x cat' '--retry-max x cat' '--retry-on x cat' '--retry-on 75,x cat'
		'--max-output x cat' '--max-output 5Q cat' '-P' '-t'
	)
	local args
	for args in "${bad[@]}"; do
		# shellcheck disable=SC2086 # the options are words
		run -64 bash -c 'timeout -k 5 30 msg-exec "$@" >out.msg 2>err.txt; s=$?
			cat >rest.msg; exit $s' - $args <in.msg
		echo "$args: $(cat err.txt)"
		[ ! -s out.msg ]
		cmp in.msg rest.msg
		grep -q '^msg-exec: ' err.txt
		grep -q '^usage: msg-exec ' err.txt
	done
	run -64 mx --no-such-option cat
	[ "$(head -n 1 err.txt)" = "msg-exec: unknown option '--no-such-option'" ]
	run -64 mx -P x cat
	[[ $(head -n 1 err.txt) == "msg-exec: "*"'x'"* ]]
	run -64 mx --max-output 5Q cat
	[[ $(head -n 1 err.txt) == "msg-exec: "*"'5Q'"* ]]
}

@test "stats: every counter, on one line at exit" {
	{
		text s1 one 'Code: 0'
		text s2 two 'Code: 3'
		text s3 three
		text s4 four 'Code: 0'
	} >in.msg
	run -0 mx --stats --invalid inv.msg "$EXEC/exits" '{Code}'
	[ "$(fields out.msg Correlation-Id Status | cut -f 1-2 | paste -sd ' ')" = \
		"$(printf 's1\tsuccess s2\tfailure s4\tsuccess')" ]
	[ "$(fields inv.msg Message-Id | cut -f 1)" = s3 ]
	{
		echo "msg-exec: warning: message s3: no header 'Code' for {Code}: diverted to 'inv.msg'"
		exec_stats in=4 runs=3 succeeded=2 failed=1 invalid=1 replies=3
	} | expect_same - err.txt
	# --pass: the copies and failures are not replies.
	rm inv.msg
	run -0 mx --stats --pass --failed fail.msg --invalid inv.msg "$EXEC/exits" '{Code}'
	[ "$(fields out.msg Message-Id | cut -f 1 | paste -sd ' ')" = 's1 s4' ]
	[ "$(fields fail.msg Message-Id | cut -f 1)" = s2 ]
	{
		echo "msg-exec: warning: message s3: no header 'Code' for {Code}: diverted to 'inv.msg'"
		exec_stats in=4 runs=3 succeeded=2 failed=1 invalid=1
	} | expect_same - err.txt
}

# ---- dir: spools ----

@test "dir: requests are deleted only after their replies are out, a failed one too" {
	{
		text r1 one 'X-Order: 1'
		text r2 two 'Outcome: fail'
		text r3 three
	} >in.msg
	msg-route -f 'true()' --output dir:req in.msg
	is 3 req/new
	# Standard input is no input once -i names one.
	text stray 'not a request' >in.msg
	run -0 mx --once -i dir:req --output dir:rep "$EXEC/sees-request" req
	[ ! -s out.msg ]
	echo 'msg-exec: r2: refused r2' | expect_same - err.txt
	empty_spool req
	is 3 rep/new
	spooled rep >replies.msg
	fields replies.msg Correlation-Id Status Exit-Status Error X-Order >got
	{
		printf 'r1\tsuccess\t0\t-\t1\trequest r1 still in the spool\\n\n'
		printf 'r2\tfailure\t1\tmsg-exec: refused r2\t-\trequest r2 still in the spool\\n\n'
		printf 'r3\tsuccess\t0\t-\t-\trequest r3 still in the spool\\n\n'
	} | expect_same - got
	# Each reply is a file of one frame.
	local f
	for f in rep/new/*; do
		[ "$(count_frames "$f")" = 1 ]
	done
	# A second run finds nothing left to do.
	run -0 mx --once -i dir:req --output dir:rep "$EXEC/sees-request" req
	[ ! -s out.msg ]
	[ ! -s err.txt ]
	is 3 rep/new
}

@test "dir: -i names several inputs, each drained, and a stream input beside them" {
	{
		text a1 one
		text a2 two
	} >a.msg
	{
		text b1 three
		text b2 four
	} >b.msg
	msg-route -f 'true()' --output dir:a a.msg
	msg-route -f 'true()' --output dir:b b.msg
	text c1 five >c.msg
	text stray 'not a request' >in.msg
	run -0 mx --once -i dir:a -i dir:b --input c.msg --output dir:rep cat
	[ ! -s out.msg ]
	[ ! -s err.txt ]
	empty_spool a
	empty_spool b
	is 5 rep/new
	spooled rep >replies.msg
	fields replies.msg Correlation-Id Status >got
	sort -o got got
	printf 'a1\tsuccess\tone\na2\tsuccess\ttwo\nb1\tsuccess\tthree\nb2\tsuccess\tfour\nc1\tsuccess\tfive\n' |
		expect_same - got
}

# ---- Return Address ----

@test "--reply-to: a reply goes to its request's Reply-To when --allow names it, else to the output; one not allowed is invalid and not run" {
	{
		frame one 'Message-Id: r1' 'Reply-To: back.msg'
		frame two 'Message-Id: r2'
		frame six 'Message-Id: r3' 'Reply-To: elsewhere.msg'
		frame ten 'Message-Id: r4' 'Reply-To: back.msg'
	} >in.msg
	run -0 mx --reply-to --allow back.msg --invalid inv.msg --stats cat
	[ "$(count_frames back.msg)" = 2 ]
	[ "$(frame_part back.msg 1 head | grep '^Correlation-Id: ')" = 'Correlation-Id: r1' ]
	[ "$(frame_part back.msg 2 head | grep '^Correlation-Id: ')" = 'Correlation-Id: r4' ]
	printf ten | body_is back.msg 2
	[ "$(count_frames out.msg)" = 1 ]
	[ "$(frame_part out.msg 1 head | grep '^Correlation-Id: ')" = 'Correlation-Id: r2' ]
	[ "$(count_frames inv.msg)" = 1 ]
	[ "$(frame_part inv.msg 1 head | grep '^Error: ')" = "Error: msg-exec: Reply-To 'elsewhere.msg' is not a channel given with --allow" ]
	[ ! -e elsewhere.msg ]
	{
		echo "msg-exec: warning: message r3: Reply-To 'elsewhere.msg' is not a channel given with --allow: diverted to 'inv.msg'"
		exec_stats in=4 runs=3 succeeded=3 invalid=1 replies=3
	} | cmp - err.txt
	# Without --reply-to the header is only copied: every reply to the output.
	run -0 mx cat
	[ "$(count_frames out.msg)" = 4 ]
	# --allow alone is a usage error.
	run -64 mx --allow back.msg cat
	[ "$(head -1 err.txt)" = "msg-exec: --allow goes with --reply-to" ]
}
