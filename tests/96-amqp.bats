#!/usr/bin/env bats
# amqp: channels (msg-tools(7)) against a RabbitMQ broker of the suite's
# own, on the loopback address (tests/fixtures/amqp/broker.bash): round
# trips of bytes and headers, publisher confirms, an unroutable message,
# --once, competing consumers, a consumer killed before its batch was
# out, and the broker killed in the middle of a flow. Each test has
# queues of its own (the test's number in their names).

load test_helper
bats_require_minimum_version 1.5.0
load fixtures/amqp/broker

setup_file() {
	[ -x "$RABBITMQ_BIN/rabbitmq-server" ] || return 0
	broker_start "$BATS_FILE_TMPDIR/broker"
}

teardown_file() {
	broker_stop
}

setup() {
	broker_skip_unless_installed
	cd "$BATS_TEST_TMPDIR" || return 1
	Q="amqp://127.0.0.1:$AMQP_PORT?queue=t$BATS_TEST_NUMBER"
}

# drain ADDR: every message the queue holds now, as read back.
drain() {
	timeout -k 5 120 msg-route -f 'true()' --once "$1"
}

# ids FILE: the X-N headers of the messages in FILE, one a line.
ids() {
	sed -n 's/^X-N: //p' "$1"
}

@test "amqp: a round trip gives back the bytes and the headers exactly, in the documented order" {
	local long
	long=$(printf 'c%.0s' {1..300})
	{
		printf 'Message-Id: m-1\nCorrelation-Id: c-1\nReply-To: %s\n' "$Q"
		printf 'Content-Type: application/octet-stream\n'
		printf 'Timestamp: 2026-12-02T08:14:59.123Z\nX-Empty: \nX-Region: north\n'
		printf 'Expires: 2099-01-01T00:00:00.000Z\nContent-Length: 6\n\n'
		printf 'a\0b\377\n\n\n'
		# Values over 255 bytes stay in the table, after the properties.
		printf 'Content-Type: text/plain\nMessage-Id: %s\nCorrelation-Id: %s\n' "$long" "$long"
		printf 'Content-Length: 0\n\n\n'
	} >in.msg
	run -0 msg-route -f 'true()' --output "$Q" in.msg
	drain "$Q" >out.msg
	cmp in.msg out.msg
}

@test "amqp: a dir: spool is emptied only as the broker confirms, in windows smaller than the batch" {
	seq 1 1000 | while read -r n; do frame "$n" "X-N: $n"; done |
		msg-route -f 'true()' --output dir:in
	run -0 msg-route -f 'true()' --once --output "$Q&confirm-window=7" dir:in
	[ "$(find in/new in/cur -type f | wc -l)" -eq 0 ]
	drain "$Q" >out.msg
	ids out.msg >got
	seq 1 1000 | diff - got
}

@test "amqp: an unroutable message is an error naming it (69), and stays in the spool" {
	frame 'lost?' 'Message-Id: m-unroutable' | msg-route -f 'true()' --output dir:in
	run -69 --separate-stderr msg-route -f 'true()' --once \
		--output "amqp://127.0.0.1:$AMQP_PORT?exchange=amq.direct&key=nowhere" dir:in
	[ "${stderr_lines[0]}" = "msg-route: 'amqp://127.0.0.1:$AMQP_PORT?exchange=amq.direct&key=nowhere': message 'm-unroutable' returned by the broker: 312 NO_ROUTE" ]
	[ "$(find in/new in/cur -type f | wc -l)" -eq 1 ]
	# Routed to a queue that exists (through the default exchange, named
	# by its empty name), it goes.
	run -0 drain "$Q"
	run -0 msg-route -f 'true()' --once \
		--output "amqp://127.0.0.1:$AMQP_PORT?exchange=&key=t$BATS_TEST_NUMBER" dir:in
	[ "$(find in/new in/cur -type f | wc -l)" -eq 0 ]
	run -0 drain "$Q"
	[ "${lines[0]}" = "Message-Id: m-unroutable" ]
}

@test "amqp: --once takes what the queue holds and exits; on an empty queue at once" {
	run -0 --separate-stderr drain "$Q"
	[ -z "$output" ]
	[ -z "$stderr" ]
	seq 1 300 | while read -r n; do frame "$n" "X-N: $n"; done >in.msg
	run -0 msg-route -f 'true()' --output "$Q&prefetch=16" in.msg
	drain "$Q&prefetch=16" >out.msg
	ids out.msg >got
	seq 1 300 >want
	diff want got
	run -0 --separate-stderr drain "$Q"
	[ -z "$output" ]
}

@test "amqp: a queue that cannot be reached or declared ends the run, 75 or 66, nothing deleted upstream" {
	frame 'x' 'X-N: 1' | msg-route -f 'true()' --output dir:in
	run -75 --separate-stderr msg-route -f 'true()' --once --output "amqp://127.0.0.1:1?queue=q" dir:in
	[[ "${stderr_lines[0]}" == "msg-route: cannot connect to 'amqp://127.0.0.1:1?queue=q' (127.0.0.1 port 1): "* ]]
	[ "$(find in/new -type f | wc -l)" -eq 1 ]
	run -75 --separate-stderr drain "amqp://127.0.0.1:1?queue=q"
	# A queue of another type than the address asks for.
	run -0 drain "$Q"
	run -66 --separate-stderr drain "$Q&queue-type=classic"
	[[ "$stderr" == *"cannot declare the queue: the broker said 406 PRECONDITION_FAILED"* ]]
}

@test "amqp: a password never goes in the address, and a password file others can read is refused" {
	run -73 --separate-stderr msg-route -f 'true()' --output "amqp://guest:s3cret@127.0.0.1:$AMQP_PORT?queue=q" /dev/null
	[[ "$stderr" == *"holds a password"* && "$stderr" != *s3cret* ]]
	printf 'guest\n' >pw
	chmod 644 pw
	MSG_AMQP_PASSWORD_FILE=$PWD/pw run -73 --separate-stderr \
		msg-route -f 'true()' --output "amqp://guest@127.0.0.1:$AMQP_PORT?queue=q" /dev/null
	[[ "$stderr" == *"password file '$PWD/pw' is readable by others (mode 0644)"* ]]
	chmod 600 pw
	frame 'x' 'X-N: 1' >in.msg
	MSG_AMQP_PASSWORD_FILE=$PWD/pw run -0 msg-route -f 'true()' \
		--output "amqp://guest@127.0.0.1:$AMQP_PORT?queue=t$BATS_TEST_NUMBER" in.msg
	MSG_AMQP_PASSWORD=wrong run --separate-stderr msg-route -f 'true()' \
		--output "amqp://guest@127.0.0.1:$AMQP_PORT?queue=q" in.msg
	[ "$status" -eq 73 ]
	[[ "$stderr" == *"cannot log in: the broker said 403 ACCESS_REFUSED"* && "$stderr" != *wrong* ]]
	drain "$Q" >out.msg
	[ "$(ids out.msg)" = 1 ]
}

@test "amqp: two consumers share a queue, every message once" {
	seq 1 2000 | while read -r n; do frame "$n" "X-N: $n"; done >in.msg
	run -0 msg-route -f 'true()' --output "$Q" in.msg
	drain "$Q&prefetch=1" >a.msg &
	local a=$!
	drain "$Q&prefetch=1" >b.msg
	wait "$a"
	[ "$(ids a.msg | wc -l)" -gt 0 ]
	[ "$(ids b.msg | wc -l)" -gt 0 ]
	ids a.msg >got
	ids b.msg >>got
	seq 1 2000 >want
	sort -n got | diff want -
}

@test "amqp: a consumer killed before its batch is out has its deliveries redelivered, marked" {
	local body
	body=$(printf 'b%.0s' {1..20000})
	for n in 1 2 3 4 5 6 7 8; do frame "$body" "X-N: $n"; done >in.msg
	run -0 msg-route -f 'true()' --output "$Q" in.msg
	mkfifo out.fifo
	exec 5<>out.fifo
	spawn msg-route -f 'true()' --output out.fifo "$Q"
	# Its first frame is on its way: its deliveries are taken, and the
	# FIFO no one reads holds the rest of its batch back.
	read -r -t 60 -u 5 line
	[ "$line" = "X-N: 1" ]
	kill -KILL "$spawned"
	wait "$spawned" || true
	exec 5>&-
	drain "$Q" >out.msg
	ids out.msg >got
	seq 1 8 | diff - got
	grep -c '^Redelivered: yes$' out.msg >redelivered
	[ "$(cat redelivered)" -ge 1 ]
}

@test "amqp: a reader waiting on an empty queue stops on SIGTERM, its batch acknowledged" {
	seq 1 5 | while read -r n; do frame "$n" "X-N: $n"; done >in.msg
	run -0 msg-route -f 'true()' --output "$Q" in.msg
	# timeout(1) passes the TERM on, and ends a reader deaf to it.
	timeout -k 5 60 msg-route -f 'true()' "$Q" >out.msg &
	local reader=$!
	wait_until 60 eval '[ "$(ids out.msg | wc -l)" -eq 5 ]'
	kill -TERM "$reader"
	local status=0
	wait "$reader" || status=$?
	[ "$status" -eq 0 ]
	run -0 --separate-stderr drain "$Q"
	[ -z "$output" ]
}

# Last: the broker it restarts is this test's child, which the test's
# teardown kills (teardown_file then stops what is left of it).
@test "amqp: the broker killed in the middle of a flow, then restarted: nothing lost" {
	# The queue is declared, and on the broker's disk, before the flow:
	# what this test asks of the broker is to keep what it confirmed.
	run -0 drain "$Q"
	broker_restart
	seq 1 3000 | while read -r n; do frame "$n" "X-N: $n"; done | msg-route -f 'true()' --output dir:in
	spawn msg-route -f 'true()' --once --output "$Q&confirm-window=32" dir:in
	local pub=$spawned
	wait_until 120 eval '[ "$(find in/new -type f | wc -l)" -lt 2900 ]'
	broker_kill
	local status=0
	wait "$pub" || status=$?
	[ "$status" -eq 75 ]
	broker_run
	# What the broker confirmed survived; the rest is still in the spool.
	run -0 timeout -k 5 120 msg-route -f 'true()' --once --output "$Q" dir:in
	[ "$(find in/new in/cur -type f | wc -l)" -eq 0 ]
	drain "$Q" >out.msg
	ids out.msg | sort -n -u >got
	seq 1 3000 | diff - got
	# Duplicates only of what was in flight: at most a window's worth.
	[ "$(ids out.msg | wc -l)" -le $((3000 + 32 + 64)) ]
}
