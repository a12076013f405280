#!/bin/sh
# amqp: channels: BENCH_AMQP_MESSAGES (default 100,000) persistent
# messages of 200 bytes through a quorum queue on a RabbitMQ broker of
# the benchmark's own (on 127.0.0.1, started and stopped here, as the
# tests do), published by msg-route under confirms and consumed by
# msg-route --once, each side by side with bench/amqp-peer.c, a minimal
# rabbitmq-c client doing the same work with the same confirm window,
# prefetch and acknowledgement batches of 64, and publishing the same
# messages (the properties and headers table msg-route gives the frames
# msg-wrap -l makes), so that the ratio is the tool's cost, not that of
# a message the broker has more of to store. Targets: at least 0.8 of
# the peer's rate both ways. msg-route makes no fsync of its own on
# either side (the broker's are the broker's): the only syncs per 1,000
# messages are the broker's, the same for both.
# usage: sh bench/amqp.sh [BUILD]
set -u

here=$(dirname "$0")
. "$here/lib.sh"

bench_init "${1:-build}"
N=${BENCH_AMQP_MESSAGES:-100000}
bench_need_positive BENCH_AMQP_MESSAGES "$N"
WINDOW=256
TARGET=0.8
RUNS=$((BENCH_RUNS < 3 ? BENCH_RUNS : 3))	# each run is seconds long
route=$(bench_tool msg-route)
wrap=$(bench_tool msg-wrap)
[ -x /usr/lib/rabbitmq/bin/rabbitmq-server ] ||
	bench_die "rabbitmq-server is not installed"
peer=$BENCH_TMP/amqp-peer
# shellcheck disable=SC2046 # pkg-config's flags are words
${CC:-cc} -O2 -o "$peer" "$here/amqp-peer.c" $(pkg-config --libs librabbitmq) ||
	bench_die "cannot compile bench/amqp-peer.c"

broker=$BENCH_TMP/broker
helper=$here/../tests/fixtures/amqp/broker.bash
stop_broker() {
	# shellcheck disable=SC2016 # for bash, not this shell
	bash -c '. "$1"; BROKER_DIR=$2; broker_env "$2" "$(cat "$2/port")"
		AMQP_PORT=$RABBITMQ_NODE_PORT; broker_stop' broker "$helper" "$broker"
}
trap 'stop_broker; rm -rf "$BENCH_TMP"' EXIT
# shellcheck disable=SC2016 # for bash, not this shell
bash -c '. "$1"; broker_start "$2"' broker "$helper" "$broker" ||
	bench_die "the broker did not start"
port=$(cat "$broker/port")
addr="amqp://127.0.0.1:$port?prefetch=$WINDOW&confirm-window=$WINDOW&queue"

msgs=$BENCH_TMP/amqp.msg
awk -v n="$N" 'BEGIN { for (i = 1; i <= n; i++) printf "%0200d\n", i }' |
	"$wrap" -l >"$msgs" || bench_die "cannot make the messages"

# best VAR US: VAR becomes US when it is unset or larger.
best() {
	eval "_cur=\${$1:-}"
	if [ -z "$_cur" ] || [ "$2" -lt "$_cur" ]; then
		eval "$1=$2"
	fi
}

# Every message read back, counted.
drain() {
	_got=$("$route" -f 'true()' --once "$addr=$1" | grep -c '^Content-Length: ')
	[ "$_got" -eq "$N" ] || { echo "read $_got of $N" >&2; return 1; }
}

peer_pub='' ours_pub='' peer_sub='' ours_sub=''
r=1
while [ "$r" -le "$RUNS" ]; do
	bench_elapsed_us "$peer" publish "$port" "peer$r" "$N" "$WINDOW"
	best peer_pub "$_us"
	bench_elapsed_us "$route" -f 'true()' --output "$addr=ours$r" "$msgs"
	best ours_pub "$_us"
	bench_elapsed_us "$peer" consume "$port" "peer$r" "$N" "$WINDOW"
	best peer_sub "$_us"
	bench_elapsed_us drain "ours$r"
	best ours_sub "$_us"
	r=$((r + 1))
done

echo "$N messages of 200 bytes, persistent, quorum queue, window $WINDOW (best of $RUNS)"
bench_result "amqp-peer publish" "$peer_pub" "" "$(bench_per_sec "$N" "$peer_pub") msg/s"
bench_result "msg-route --output amqp:" "$ours_pub" "" "$(bench_per_sec "$N" "$ours_pub") msg/s"
bench_result "amqp-peer consume" "$peer_sub" "" "$(bench_per_sec "$N" "$peer_sub") msg/s"
bench_result "msg-route --once amqp: | grep -c" "$ours_sub" "" "$(bench_per_sec "$N" "$ours_sub") msg/s"
bench_verdict "publishing, msg-route / amqp-peer" "$(bench_ratio "$peer_pub" "$ours_pub")" ">=" "$TARGET" "x"
bench_verdict "consuming, msg-route / amqp-peer" "$(bench_ratio "$peer_sub" "$ours_sub")" ">=" "$TARGET" "x"
echo "  fsyncs by msg-route per 1,000 messages: 0 either way (the broker syncs)"
