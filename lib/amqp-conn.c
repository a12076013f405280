/* amqp-conn: a connection to the broker of an amqp: address (amqp-conn.h). */
#include "amqp-conn.h"

#include <amqp_tcp_socket.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include "clock.h"
#include "diag.h"
#include "io.h"

/* Connecting to a broker that does not answer ends in this time. */
#define CONNECT_TIMEOUT_S 30
/* How long a tool that is ending waits for the broker to answer its
 * close: one gone silent must not hold it (what it had not acknowledged
 * goes back to the queue either way). */
#define CLOSE_TIMEOUT_S 2
/* Tries to reconnect a lost connection are this far apart at first,
 * twice as far each time after, up to the most. */
#define RECONNECT_FIRST_PAUSE_MS 100
#define RECONNECT_MAX_PAUSE_MS 2000
/* A frame a little over the broker's default: bodies go in fewer frames. */
#define FRAME_MAX 131072

/* What a broker's reply code means for the run. */
static int code_errno(int code)
{
	switch (code) {
	case AMQP_ACCESS_REFUSED:
	case AMQP_NOT_ALLOWED:
		return EACCES;
	case AMQP_NOT_FOUND:
		return ENXIO;
	case AMQP_PRECONDITION_FAILED:
	case AMQP_COMMAND_INVALID:
		return EINVAL;
	default:		/* the broker going away, or out of resources */
		return ECONNREFUSED;
	}
}

static int close_error(struct mq_conn *c, const char *what, int code,
		       amqp_bytes_t text, struct buf *err)
{
	buf_addf(err, "'%s': %s: the broker said %d ", c->name, what, code);
	diag_escape(err, text.bytes, text.len);
	errno = code_errno(code);
	return -1;
}

/* A close answered and said, as what failed (or what was closed). */
static int closed_as(struct mq_conn *c, const amqp_frame_t *frame,
		     const char *what, struct buf *err)
{
	amqp_method_t m = frame->payload.method;

	if (m.id == AMQP_CHANNEL_CLOSE_METHOD) {
		amqp_channel_close_t *cc = m.decoded;
		amqp_channel_close_ok_t ok = { 0 };
		amqp_send_method(c->conn, frame->channel, AMQP_CHANNEL_CLOSE_OK_METHOD, &ok);
		return close_error(c, what ? what : "channel closed",
				   cc->reply_code, cc->reply_text, err);
	}
	if (m.id == AMQP_CONNECTION_CLOSE_METHOD) {
		amqp_connection_close_t *cc = m.decoded;
		amqp_connection_close_ok_t ok = { 0 };
		amqp_send_method(c->conn, 0, AMQP_CONNECTION_CLOSE_OK_METHOD, &ok);
		return close_error(c, what ? what : "connection closed",
				   cc->reply_code, cc->reply_text, err);
	}
	buf_addf(err, "'%s': unexpected method 0x%08x from the broker", c->name,
		 (unsigned)m.id);
	errno = EPROTO;
	return -1;
}

int mq_conn_closed(struct mq_conn *c, const amqp_frame_t *frame,
		   struct buf *err)
{
	return closed_as(c, frame, NULL, err);
}

int mq_conn_status_error(struct mq_conn *c, int status, const char *what,
			 struct buf *err)
{
	buf_addf(err, "'%s': %s: %s", c->name, what, amqp_error_string2(status));
	errno = status == AMQP_STATUS_NO_MEMORY ? ENOMEM : ECONNRESET;
	return -1;
}

int mq_conn_reply_error(struct mq_conn *c, amqp_rpc_reply_t r, const char *what,
			struct buf *err)
{
	amqp_frame_t frame = { 0 };

	switch (r.reply_type) {
	case AMQP_RESPONSE_SERVER_EXCEPTION:
		frame.payload.method = r.reply;
		frame.channel = r.reply.id == AMQP_CHANNEL_CLOSE_METHOD ? MQ_CHANNEL : 0;
		return closed_as(c, &frame, what, err);
	case AMQP_RESPONSE_LIBRARY_EXCEPTION:
		return mq_conn_status_error(c, r.library_error, what, err);
	default:
		buf_addf(err, "'%s': %s: no reply from the broker", c->name, what);
		errno = ECONNRESET;
		return -1;
	}
}

static int rpc_ok(struct mq_conn *c, const char *what, struct buf *err)
{
	amqp_rpc_reply_t r = amqp_get_rpc_reply(c->conn);

	if (r.reply_type == AMQP_RESPONSE_NORMAL)
		return 0;
	return mq_conn_reply_error(c, r, what, err);
}

static int connect_socket(struct mq_conn *c, int timeout_ms, struct buf *err)
{
	amqp_socket_t *sock = amqp_tcp_socket_new(c->conn);
	struct timeval tv = { timeout_ms / 1000, timeout_ms % 1000 * 1000 };
	int status;

	if (!sock) {
		buf_addf(err, "'%s': cannot make a socket", c->name);
		errno = ENOMEM;
		return -1;
	}
	status = amqp_socket_open_noblock(sock, c->addr.host, c->addr.port, &tv);
	if (status != AMQP_STATUS_OK) {
		buf_addf(err, "cannot connect to '%s' (%s port %d): %s", c->name,
			 c->addr.host, c->addr.port, amqp_error_string2(status));
		errno = ECONNREFUSED;
		return -1;
	}
	return 0;
}

static int log_in(struct mq_conn *c, struct buf *err)
{
	struct buf password = BUF_INIT;
	amqp_rpc_reply_t r;

	if (mq_password(&c->addr, &password, err) < 0) {
		buf_release(&password);
		errno = EACCES;
		return -1;
	}
	r = amqp_login(c->conn, c->addr.vhost, 0, FRAME_MAX, (int)c->addr.heartbeat_s,
		       AMQP_SASL_METHOD_PLAIN, c->addr.user, password.ptr);
	/* Not left in memory to be found in a core file. */
	explicit_bzero(password.ptr, password.len);
	buf_release(&password);
	if (r.reply_type == AMQP_RESPONSE_NORMAL)
		return 0;
	if (r.reply_type == AMQP_RESPONSE_LIBRARY_EXCEPTION &&
	    r.library_error == AMQP_STATUS_CONNECTION_CLOSED) {
		/* RabbitMQ closes the socket on a refused login. */
		buf_addf(err, "'%s': login as '%s' refused (or no vhost '%s')",
			 c->name, c->addr.user, c->addr.vhost);
		errno = EACCES;
		return -1;
	}
	return mq_conn_reply_error(c, r, "cannot log in", err);
}

/* Durable, and quorum unless the address says classic. */
static int declare_queue(struct mq_conn *c, struct buf *err)
{
	amqp_table_entry_t type = {
		.key = amqp_cstring_bytes("x-queue-type"),
		.value = { .kind = AMQP_FIELD_KIND_UTF8 },
	};
	amqp_table_t args = { .num_entries = 1, .entries = &type };

	type.value.value.bytes = amqp_cstring_bytes(
		c->addr.queue_type == MQ_QUORUM ? "quorum" : "classic");
	amqp_queue_declare(c->conn, MQ_CHANNEL, amqp_cstring_bytes(c->addr.queue),
			   0, 1, 0, 0, args);
	return rpc_ok(c, "cannot declare the queue", err);
}

static int confirm_select(struct mq_conn *c, struct buf *err)
{
	amqp_confirm_select(c->conn, MQ_CHANNEL);
	return rpc_ok(c, "cannot ask for publisher confirms", err);
}

static int start_consuming(struct mq_conn *c, struct buf *err)
{
	amqp_basic_qos(c->conn, MQ_CHANNEL, 0, (uint16_t)c->addr.prefetch, 0);
	if (rpc_ok(c, "cannot set the prefetch", err) < 0)
		return -1;
	amqp_basic_consume(c->conn, MQ_CHANNEL, amqp_cstring_bytes(c->addr.queue),
			   amqp_empty_bytes, 0, 0, 0, amqp_empty_table);
	return rpc_ok(c, "cannot consume from the queue", err);
}

/* Connected, logged in, the channel open, the queue declared, and in the
 * mode the connection was put in (confirms, consuming). */
static int connect_all(struct mq_conn *c, int timeout_ms, struct buf *err)
{
	c->conn = amqp_new_connection();
	if (!c->conn) {
		buf_addf(err, "'%s': out of memory", c->name);
		errno = ENOMEM;
		return -1;
	}
	if (connect_socket(c, timeout_ms, err) < 0 || log_in(c, err) < 0)
		return -1;
	amqp_channel_open(c->conn, MQ_CHANNEL);
	if (rpc_ok(c, "cannot open a channel", err) < 0)
		return -1;
	if (c->addr.queue && c->addr.declare && declare_queue(c, err) < 0)
		return -1;
	if (c->confirming && confirm_select(c, err) < 0)
		return -1;
	if (c->consuming && start_consuming(c, err) < 0)
		return -1;
	return 0;
}

int mq_conn_open(struct mq_conn *c, const char *addr, struct buf *err)
{
	memset(c, 0, sizeof(*c));
	c->name = xstrdup(addr);
	if (mq_addr_parse(addr, &c->addr, err) < 0) {
		errno = EINVAL;
		return -1;
	}
	return connect_all(c, CONNECT_TIMEOUT_S * 1000, err);
}

/* The connection's state gone without a word to the broker (which may be
 * gone too): what it had not acknowledged goes back to its queue. */
static void drop_connection(struct mq_conn *c)
{
	if (c->conn)
		amqp_destroy_connection(c->conn);
	c->conn = NULL;
}

void mq_conn_close(struct mq_conn *c)
{
	if (c->conn) {
		struct timeval bound = { CLOSE_TIMEOUT_S, 0 };

		/* Whatever is unacknowledged goes back to the queue. */
		amqp_set_rpc_timeout(c->conn, &bound);
		amqp_connection_close(c->conn, AMQP_REPLY_SUCCESS);
		amqp_destroy_connection(c->conn);
	}
	mq_addr_release(&c->addr);
	free(c->name);
	memset(c, 0, sizeof(*c));
}

int mq_conn_confirm(struct mq_conn *c, struct buf *err)
{
	c->confirming = 1;
	return confirm_select(c, err);
}

int mq_conn_consume(struct mq_conn *c, struct buf *err)
{
	c->consuming = 1;
	return start_consuming(c, err);
}

long mq_conn_ready(struct mq_conn *c, struct buf *err)
{
	amqp_queue_declare_ok_t *ok = amqp_queue_declare(
		c->conn, MQ_CHANNEL, amqp_cstring_bytes(c->addr.queue), 1, 0, 0,
		0, amqp_empty_table);

	if (!ok)
		return rpc_ok(c, "cannot count the queue's messages", err);
	return (long)ok->message_count;
}

int mq_conn_lost(int e)
{
	return e == ECONNRESET || e == ECONNREFUSED;
}

/* The lost connection's reason (in err) said, and that it is tried again. */
static void say_lost(struct mq_conn *c, struct buf *err)
{
	struct buf line = BUF_INIT;

	buf_addf(&line, "%s; reconnecting for up to ", err->ptr);
	duration_add(&line, c->addr.reconnect_ms);
	warnx_msg("%s", line.ptr);
	buf_release(&line);
}

static void give_up(struct mq_conn *c, int saved, struct buf *err)
{
	struct buf why = BUF_INIT;

	buf_add(&why, err->ptr, err->len);
	buf_reset(err);
	buf_addf(err, "'%s': gave up reconnecting after ", c->name);
	duration_add(err, c->addr.reconnect_ms);
	if (why.len)
		buf_addf(err, " (last: %s)", why.ptr);
	buf_release(&why);
	errno = saved;
}

int mq_conn_reconnect(struct mq_conn *c, struct buf *err)
{
	int64_t deadline = clock_now_ms() + c->addr.reconnect_ms;
	int pause_ms = RECONNECT_FIRST_PAUSE_MS, saved = errno;

	if (!c->addr.reconnect_ms)
		return -1;	/* err says why, errno is kept */
	say_lost(c, err);
	for (;;) {
		int64_t left = deadline - clock_now_ms();

		drop_connection(c);
		if (io_stop_requested) {
			buf_reset(err);
			buf_addf(err, "'%s': asked to stop while reconnecting", c->name);
			errno = saved;
			return -1;
		}
		if (left <= 0) {
			give_up(c, saved, err);
			return -1;
		}
		buf_reset(err);
		if (connect_all(c, left < CONNECT_TIMEOUT_S * 1000 ? (int)left :
				CONNECT_TIMEOUT_S * 1000, err) == 0) {
			warnx_msg("'%s': reconnected", c->name);
			return 0;
		}
		left = deadline - clock_now_ms();
		io_sleep_ms(pause_ms < left ? pause_ms : left > 0 ? (int)left : 0);
		if (pause_ms < RECONNECT_MAX_PAUSE_MS)
			pause_ms *= 2;
	}
}
