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

# queue_counts: each queue's name and the messages it holds, ready or
# delivered and not acknowledged, a line each.
queue_counts() {
	"$RABBITMQ_BIN/rabbitmqctl" -q list_queues name messages </dev/null 3>&-
}

# queue_count NAME: the messages the queue NAME holds.
queue_count() {
	queue_counts | awk -v q="$1" '$1 == q { print $2 }'
}

# total_count: the messages this test's queues t<N>p0, t<N>p1, ... hold.
total_count() {
	queue_counts | awk -v q="t${BATS_TEST_NUMBER}p" \
		'index($1, q) == 1 { n += $2 } END { print n + 0 }'
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
	# The broker's reason alone: no second, vaguer line after it.
	[ "${#stderr_lines[@]}" -eq 1 ]
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

# With a prefetch as large as the queue, the broker hands every message
# to the reader at once: the queue then counts none ready while they are
# still on their way, and must not be taken for empty.
@test "amqp: --once with a prefetch larger than the queue takes every message" {
	seq 1 3000 | while read -r n; do frame "$n" "X-N: $n"; done >in.msg
	run -0 msg-route -f 'true()' --output "$Q" in.msg
	drain "$Q&prefetch=5000" >out.msg
	ids out.msg >got
	seq 1 3000 | diff - got
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
	seq 1 10000 | while read -r n; do frame "$n" "X-N: $n"; done >in.msg
	run -0 msg-route -f 'true()' --output "$Q" in.msg
	drain "$Q&prefetch=1" >a.msg &
	local a=$!
	drain "$Q&prefetch=1" >b.msg
	wait "$a"
	[ "$(ids a.msg | wc -l)" -gt 0 ]
	[ "$(ids b.msg | wc -l)" -gt 0 ]
	ids a.msg >got
	ids b.msg >>got
	seq 1 10000 >want
	sort -n got | diff want -
}

@test "amqp: a partitioned stage over four queues and four consumers, resequenced after, keeps each key's order" {
	local i k n
	# 20 keys of 50 messages each, interleaved: key k's i-th message has
	# Sequence-Number i.
	for ((i = 1; i <= 50; i++)); do
		for ((k = 0; k < 20; k++)); do
			frame "k$k-$i" "Correlation-Id: k$k" "Sequence-Number: $i" "X-N: k$k-$i"
		done
	done >in.msg
	run -0 msg-route -p "header('Correlation-Id')" -t "${Q}p0" -t "${Q}p1" \
		-t "${Q}p2" -t "${Q}p3" in.msg
	# Four consumers, one a partition, into one spool.
	for i in 0 1 2 3; do
		spawn msg-route -f 'true()' --once --output dir:merged "${Q}p$i&prefetch=8"
		eval "c$i=\$spawned"
	done
	for i in 0 1 2 3; do
		eval "wait \$c$i"
	done
	run -0 timeout -k 5 120 msg-resequence --batch --once --output out.msg dir:merged
	for ((k = 0; k < 20; k++)); do
		msg-unwrap -H out.msg | sed -n 's/^X-N: //p' | grep "^k$k-" >got
		seq 1 50 | sed "s/^/k$k-/" | diff - got
	done
	[ "$(ids out.msg | wc -l)" -eq 1000 ]
}

@test "amqp: a full queue refuses what does not fit (nack): exit 75, what was not confirmed stays upstream" {
	"$RABBITMQ_BIN/rabbitmqctl" -q set_policy --apply-to queues \
		"full$BATS_TEST_NUMBER" "^t$BATS_TEST_NUMBER\$" \
		'{"max-length": 3, "overflow": "reject-publish"}' </dev/null 3>&-
	run -0 drain "$Q"
	seq 1 8 | while read -r n; do frame "$n" "X-N: $n" "Message-Id: m$n"; done |
		msg-route -f 'true()' --output dir:in
	run -75 --separate-stderr msg-route -f 'true()' --once \
		--output "$Q&confirm-window=1" dir:in
	# Nothing lost: the queue holds the first messages, up to the one
	# the broker refused (named), and the spool still holds every one.
	drain "$Q" >out.msg
	local k
	k=$(ids out.msg | wc -l)
	[ "$k" -ge 3 ]
	[ "$k" -lt 8 ]
	seq 1 "$k" | diff - <(ids out.msg)
	[ "${stderr_lines[0]}" = "msg-route: '$Q&confirm-window=1': message 'm$((k + 1))' refused by the broker (nack)" ]
	[ "${#stderr_lines[@]}" -eq 1 ]
	msg-route -f 'true()' --once dir:in | ids /dev/stdin | sort -n >left
	seq 1 8 | diff - left
	"$RABBITMQ_BIN/rabbitmqctl" -q clear_policy "full$BATS_TEST_NUMBER" </dev/null 3>&-
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
	# timeout(1) passes the TERM on, and ends a reader deaf to it. With
	# --foreground it sends no SIGCONT after the TERM: under the
	# sanitizers, one that lands while LeakSanitizer stops the exiting
	# tool's threads (by ptrace: the SIGCONT discards that stop) leaves
	# the check waiting until the KILL.
	timeout --foreground -k 5 60 msg-route -f 'true()' "$Q" >out.msg &
	local reader=$!
	wait_until 60 eval '[ "$(ids out.msg | wc -l)" -eq 5 ]'
	kill -TERM "$reader"
	local status=0
	wait "$reader" || status=$?
	[ "$status" -eq 0 ]
	run -0 --separate-stderr drain "$Q"
	[ -z "$output" ]
}

@test "amqp: a writer idle between messages keeps its connection: heartbeats go out while the tool waits for input" {
	mkfifo in.fifo
	spawn msg-route -f 'true()' --output "$Q&heartbeat=1s" in.fifo 2>pub.err
	local pub=$spawned status=0
	exec 4>in.fifo
	frame one 'X-N: 1' >&4
	wait_until 60 eval '[ "$(queue_count "t$BATS_TEST_NUMBER")" = 1 ]'
	# Four intervals without a message: the broker closes a connection
	# silent for two, and the next message would find it lost.
	sleep 4
	frame two 'X-N: 2' >&4
	exec 4>&-
	wait "$pub" || status=$?
	cat pub.err
	[ "$status" -eq 0 ]
	[ ! -s pub.err ]
	drain "$Q" >out.msg
	[ "$(ids out.msg | tr '\n' ' ')" = "1 2 " ]
}

@test "amqp: every writer of a tool keeps its heartbeats, more writers than the process has timers" {
	local i k targets=()
	# Nine partitions, one connection each: more than TIMERS_MAX (8), so
	# a timer per writer would leave one without heartbeats.
	for ((i = 0; i < 9; i++)); do
		targets+=(-t "${Q}p$i&heartbeat=1s")
	done
	mkfifo in.fifo
	spawn msg-route -p "header('Correlation-Id')" "${targets[@]}" in.fifo 2>pub.err
	local pub=$spawned status=0
	exec 4>in.fifo
	for ((k = 0; k < 90; k++)); do
		frame "a$k" "Correlation-Id: k$k" "X-N: a$k"
	done >&4
	wait_until 60 eval '[ "$(total_count)" = 90 ]'
	sleep 4
	for ((k = 0; k < 90; k++)); do
		frame "b$k" "Correlation-Id: k$k" "X-N: b$k"
	done >&4
	exec 4>&-
	wait "$pub" || status=$?
	cat pub.err
	[ "$status" -eq 0 ]
	[ ! -s pub.err ]
	for ((i = 0; i < 9; i++)); do
		drain "${Q}p$i" >"p$i.msg"
		# Each connection carried messages after the silence.
		ids "p$i.msg" | grep -q '^b'
	done
	cat p*.msg >all.msg
	[ "$(ids all.msg | sort -u | wc -l)" -eq 180 ]
}

@test "amqp: a reader's timers run while the queue is empty: msg-aggregate --timeout closes a group with no message coming" {
	frame a 'Correlation-Id: g' 'X-N: 1' | msg-route -f 'true()' --output "$Q"
	# --foreground: no SIGCONT after the TERM (see above).
	spawn timeout --foreground -k 5 60 msg-aggregate -n 10 --timeout 1s "$Q" >out.msg 2>agg.err
	local agg=$spawned status=0
	wait_until 30 eval '[ -s out.msg ]'
	kill -TERM "$agg"
	wait "$agg" || status=$?
	cat agg.err
	[ "$status" -eq 0 ]
	grep -q '^Aggregate-Reason: timeout$' out.msg
	[ "$(grep -c '^Aggregate-Size: 1$' out.msg)" -eq 1 ]
}

# The broker killed and restarted by the tests below is the test's
# child, which the test's teardown kills (the next starts it again,
# teardown_file stops what is left of it). Each first shuts it down
# cleanly and starts it again, so that its queue is on the broker's disk
# before the flow: what these tests ask of the broker is to keep what it
# confirmed.

@test "amqp: with reconnect=0 the broker killed in the middle of a flow ends the run (75), nothing lost" {
	broker_running
	run -0 drain "$Q"
	broker_restart
	seq 1 3000 | while read -r n; do frame "$n" "X-N: $n"; done | msg-route -f 'true()' --output dir:in
	spawn msg-route -f 'true()' --once --output "$Q&confirm-window=32&reconnect=0" dir:in 2>pub.err
	local pub=$spawned
	wait_until 120 eval '[ "$(find in/new -type f | wc -l)" -lt 2900 ]'
	broker_kill
	local status=0
	wait "$pub" || status=$?
	[ "$status" -eq 75 ]
	grep -q "^msg-route: '$Q&confirm-window=32&reconnect=0': " pub.err
	[ "$(grep -c reconnecting pub.err)" = 0 ]
	broker_run
	# What the broker confirmed survived; the rest is still in the spool.
	run -0 timeout -k 5 120 msg-route -f 'true()' --once --output "$Q" dir:in
	[ "$(find in/new in/cur -type f | wc -l)" -eq 0 ]
	drain "$Q" >out.msg
	ids out.msg | sort -n -u >got
	seq 1 3000 | diff - got
	# Duplicates only of what was in flight: the window, and the
	# confirmed part of the input batch the run did not finish (its
	# files are deleted only once all of it is confirmed).
	[ "$(ids out.msg | wc -l)" -le $((3000 + 32 + 64)) ]
}

@test "amqp: the broker killed under a flow from a dir: spool to amqp: and from amqp: through msg-translate to a dir: spool: both ends reconnect, every message arrives" {
	broker_running
	run -0 drain "$Q"
	broker_restart
	seq 1 20000 | while read -r n; do frame "<n>$n</n>" "X-N: $n"; done |
		msg-route -f 'true()' --output dir:in
	# Restarting can take minutes beside other builds.
	local opts="reconnect=600s" pub con status
	spawn msg-route -f 'true()' --once --output "$Q&confirm-window=32&$opts" dir:in 2>pub.err
	pub=$spawned
	spawn msg-translate -H 'X-Stage: translated' --output dir:out "$Q&prefetch=64&$opts" 2>con.err
	con=$spawned
	wait_until 120 eval '[ "$(find in/new -type f | wc -l)" -lt 15000 ] && [ -n "$(ls out/new)" ]'
	broker_kill
	broker_run
	status=0
	wait "$pub" || status=$?
	cat pub.err
	[ "$status" -eq 0 ]
	[ "$(find in/new in/cur -type f | wc -l)" -eq 0 ]
	grep -q "; reconnecting for up to 600s\$" pub.err
	grep -q "^msg-route: '.*': reconnected\$" pub.err
	# The reader took every message once the broker was back: none is
	# left in the queue, ready or unacknowledged. A TERM then ends it.
	wait_until 300 eval '[ "$(queue_count "t$BATS_TEST_NUMBER")" = 0 ]'
	kill -TERM "$con"
	status=0
	wait "$con" || status=$?
	cat con.err
	[ "$status" -eq 0 ]
	grep -q "^msg-translate: '.*': reconnected\$" con.err
	msg-route -f 'true()' --once dir:out >out.msg
	ids out.msg | sort -n -u >got
	seq 1 20000 | diff - got
	[ "$(grep -c '^X-Stage: translated$' out.msg)" -eq "$(ids out.msg | wc -l)" ]
	# Duplicates only of what was in flight when the broker died: the
	# publisher's window and the reader's prefetch.
	local extra=$(($(ids out.msg | wc -l) - 20000))
	echo "duplicates: $extra"
	[ "$extra" -le $((32 + 64)) ]
	run -0 --separate-stderr drain "$Q"
	[ -z "$output" ]
}

# Last: the broker is stopped (SIGSTOP) and let go again; what a test
# after it would meet is a broker with a clock that jumped.
@test "amqp: a reader notices a broker gone silent by its missing heartbeats: exit 75, the loss named" {
	broker_running
	frame one 'X-N: 1' | msg-route -f 'true()' --output "$Q"
	spawn timeout -k 5 60 msg-route -f 'true()' "$Q&heartbeat=1s&reconnect=0" >out.msg 2>con.err
	local con=$spawned status=0 beam
	wait_until 60 eval '[ "$(ids out.msg)" = 1 ]'
	beam=$(cat "$RABBITMQ_PID_FILE")
	kill -STOP "$beam"
	wait "$con" || status=$?
	kill -CONT "$beam"
	cat con.err
	# Without heartbeats the reader waits on until timeout's TERM: 0.
	[ "$status" -eq 75 ]
	# The loss, said once: no second, vaguer line after it.
	[ "$(wc -l <con.err)" -eq 1 ]
	grep -q "^msg-route: '$Q&heartbeat=1s&reconnect=0': cannot read: heartbeat timeout" con.err
	# Without heartbeats, a reader asked to stop does not wait on the
	# silent broker's answer to its close for longer than a few seconds.
	local q2="${Q}b&heartbeat=0"
	frame two 'X-N: 2' | msg-route -f 'true()' --output "$q2"
	# timeout(1) sends its KILL 20 s after it passed the TERM on, and
	# with --foreground no SIGCONT (see above).
	spawn timeout --foreground -k 20 60 msg-route -f 'true()' "$q2" >out2.msg 2>con2.err
	con=$spawned
	wait_until 60 eval '[ "$(ids out2.msg)" = 2 ]'
	kill -STOP "$beam"
	kill -TERM "$con"
	status=0
	wait "$con" || status=$?
	kill -CONT "$beam"
	cat con2.err
	[ "$status" -eq 0 ]
	[ ! -s con2.err ]
	[ "$(ids out2.msg)" = 2 ]
}
