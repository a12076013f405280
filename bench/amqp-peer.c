/*
 * amqp-peer: the peer bench/amqp.sh measures msg-route against, a
 * minimal rabbitmq-c client doing the same work with nothing else:
 *
 *   amqp-peer publish PORT QUEUE COUNT WINDOW   COUNT persistent,
 *       mandatory messages of 200 bytes into a quorum queue, at most
 *       WINDOW unconfirmed; each with the properties msg-route gives
 *       the frames msg-wrap -l makes (a Message-Id of 36 characters,
 *       the timestamp, Content-Type text/plain, and the headers table
 *       that keeps the Timestamp header to the millisecond), so that
 *       both sides put the same messages on the wire
 *   amqp-peer consume PORT QUEUE COUNT PREFETCH   COUNT deliveries,
 *       acknowledged with multiple every 64, as msg-route's batches
 */
#include <amqp.h>
#include <amqp_tcp_socket.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BODY_LEN 200
#define ACK_EVERY 64

static void fail(const char *what)
{
	fprintf(stderr, "amqp-peer: %s\n", what);
	exit(1);
}

static void check_rpc(amqp_connection_state_t c, const char *what)
{
	if (amqp_get_rpc_reply(c).reply_type != AMQP_RESPONSE_NORMAL)
		fail(what);
}

static amqp_connection_state_t connect_to(int port, const char *queue)
{
	amqp_connection_state_t c = amqp_new_connection();
	amqp_socket_t *s = amqp_tcp_socket_new(c);
	amqp_table_entry_t type = {
		.key = amqp_cstring_bytes("x-queue-type"),
		.value = { .kind = AMQP_FIELD_KIND_UTF8,
			   .value.bytes = amqp_cstring_bytes("quorum") },
	};
	amqp_table_t args = { 1, &type };

	if (!s || amqp_socket_open(s, "127.0.0.1", port) != AMQP_STATUS_OK)
		fail("cannot connect");
	if (amqp_login(c, "/", 0, 131072, 0, AMQP_SASL_METHOD_PLAIN, "guest",
		       "guest").reply_type != AMQP_RESPONSE_NORMAL)
		fail("cannot log in");
	amqp_channel_open(c, 1);
	check_rpc(c, "cannot open a channel");
	amqp_queue_declare(c, 1, amqp_cstring_bytes(queue), 0, 1, 0, 0, args);
	check_rpc(c, "cannot declare the queue");
	return c;
}

static void publish(amqp_connection_state_t c, const char *queue, long n,
		    long window)
{
	char id[37], stamp[] = "2026-12-07T13:12:05.789Z";
	amqp_table_entry_t kept = {
		.key = amqp_cstring_bytes("Timestamp"),
		.value = { .kind = AMQP_FIELD_KIND_UTF8,
			   .value.bytes = amqp_cstring_bytes(stamp) },
	};
	amqp_basic_properties_t p = {
		._flags = AMQP_BASIC_DELIVERY_MODE_FLAG | AMQP_BASIC_MESSAGE_ID_FLAG |
			  AMQP_BASIC_TIMESTAMP_FLAG | AMQP_BASIC_CONTENT_TYPE_FLAG |
			  AMQP_BASIC_HEADERS_FLAG,
		.delivery_mode = AMQP_DELIVERY_PERSISTENT,
		.content_type = amqp_cstring_bytes("text/plain"),
		.timestamp = (uint64_t)time(NULL),
		.headers = { 1, &kept },
	};
	char body[BODY_LEN];
	long sent = 0, confirmed = 0;
	amqp_frame_t f;

	memset(body, 'x', sizeof(body));
	amqp_confirm_select(c, 1);
	check_rpc(c, "cannot ask for confirms");
	while (confirmed < n) {
		for (; sent < n && sent - confirmed < window; sent++) {
			snprintf(id, sizeof(id), "01a250a2-079d-72b1-9ac8-%012ld", sent);
			p.message_id = amqp_cstring_bytes(id);
			if (amqp_basic_publish(c, 1, amqp_empty_bytes,
					       amqp_cstring_bytes(queue), 1, 0, &p,
					       (amqp_bytes_t){ sizeof(body), body }))
				fail("cannot publish");
		}
		if (amqp_simple_wait_frame(c, &f) != AMQP_STATUS_OK)
			fail("no confirm");
		if (f.frame_type != AMQP_FRAME_METHOD)
			continue;
		if (f.payload.method.id != AMQP_BASIC_ACK_METHOD)
			fail("a message refused or returned");
		/* RabbitMQ confirms in order, a run at a time (multiple). */
		confirmed = (long)((amqp_basic_ack_t *)f.payload.method.decoded)->delivery_tag;
		amqp_maybe_release_buffers(c);
	}
}

static void consume(amqp_connection_state_t c, const char *queue, long n,
		    int prefetch)
{
	amqp_envelope_t env;
	uint64_t last = 0;

	amqp_basic_qos(c, 1, 0, (uint16_t)prefetch, 0);
	check_rpc(c, "cannot set the prefetch");
	amqp_basic_consume(c, 1, amqp_cstring_bytes(queue), amqp_empty_bytes, 0,
			   0, 0, amqp_empty_table);
	check_rpc(c, "cannot consume");
	for (long got = 1; got <= n; got++) {
		amqp_maybe_release_buffers(c);
		if (amqp_consume_message(c, &env, NULL, 0).reply_type !=
		    AMQP_RESPONSE_NORMAL)
			fail("cannot take a delivery");
		last = env.delivery_tag;
		amqp_destroy_envelope(&env);
		if (got % ACK_EVERY == 0 && amqp_basic_ack(c, 1, last, 1))
			fail("cannot acknowledge");
	}
	if (amqp_basic_ack(c, 1, last, 1))
		fail("cannot acknowledge");
}

int main(int argc, char **argv)
{
	amqp_connection_state_t c;

	if (argc != 6 || (strcmp(argv[1], "publish") && strcmp(argv[1], "consume"))) {
		fprintf(stderr, "usage: amqp-peer publish|consume PORT QUEUE COUNT "
			"WINDOW|PREFETCH\n");
		return 64;
	}
	c = connect_to(atoi(argv[2]), argv[3]);
	if (!strcmp(argv[1], "publish"))
		publish(c, argv[3], atol(argv[4]), atol(argv[5]));
	else
		consume(c, argv[3], atol(argv[4]), atoi(argv[5]));
	amqp_connection_close(c, AMQP_REPLY_SUCCESS);
	amqp_destroy_connection(c);
	return 0;
}
