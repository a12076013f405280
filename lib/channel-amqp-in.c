/*
 * channel-amqp-in: an amqp: queue (amqp-addr.h) as a channel a tool
 * reads from. Deliveries are taken with manual acknowledgement, each one
 * a source that holds one frame, and a batch is acknowledged (with
 * multiple) once it is done. A lost connection is made again and the
 * broker delivers again what was not acknowledged: at least once,
 * duplicates possible, never a loss.
 */
#include "channel.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include "amqp-conn.h"
#include "amqp-map.h"
#include "diag.h"
#include "io.h"
#include "timer.h"

/* How often a reader waiting for a delivery looks at a stop request. */
#define STOP_CHECK_MS 200
/* How long a reader that may stop waits for the deliveries a queue
 * still counts as ready before it counts them again. */
#define READY_WAIT_MS 1000

struct amqp_in {
	struct channel_in base;
	struct mq_conn c;
	struct buf frame;	/* the delivery in hand, as a frame */
	struct buf name, err;
	uint64_t tag;		/* of the delivery in hand */
	uint64_t ack_upto;	/* every delivery up to it is finished */
	uint64_t acked;		/* acknowledged up to */
	unsigned held;		/* deliveries handed out, not acknowledged */
};

/* The broker's error said on stderr, and -1 with errno kept. */
static int in_failed(struct amqp_in *ai)
{
	int saved = errno;

	warnx_msg("%s", ai->err.ptr);
	ai->base.failure_said = 1;
	buf_reset(&ai->err);
	errno = saved;
	return -1;
}

/* The delivery as a frame in ai->frame, read from there (a source in
 * memory): its properties' headers, then its body. */
static void delivery_frame(struct amqp_in *ai, const amqp_envelope_t *env)
{
	const amqp_bytes_t *body = &env->message.body;

	buf_reset(&ai->frame);
	mq_props_to_block(&env->message.properties, env->redelivered, &ai->frame);
	buf_addf(&ai->frame, "Content-Length: %zu\n\n", body->len);
	buf_add(&ai->frame, body->bytes, body->len);
	buf_addch(&ai->frame, '\n');
}

/* A frame other than a delivery: only a close or a cancel matter. */
static int other_frame(struct amqp_in *ai)
{
	amqp_frame_t frame;
	int status = amqp_simple_wait_frame(ai->c.conn, &frame);

	if (status != AMQP_STATUS_OK)
		return mq_conn_status_error(&ai->c, status, "cannot read",
					    &ai->err);
	if (frame.frame_type != AMQP_FRAME_METHOD)
		return 0;
	if (frame.payload.method.id == AMQP_BASIC_CANCEL_METHOD) {
		buf_addf(&ai->err, "'%s': the broker cancelled the consumer "
			 "(the queue was deleted)", ai->c.name);
		errno = ENXIO;
		return -1;
	}
	if (frame.payload.method.id == AMQP_CHANNEL_CLOSE_METHOD ||
	    frame.payload.method.id == AMQP_CONNECTION_CLOSE_METHOD)
		return mq_conn_closed(&ai->c, &frame, &ai->err);
	return 0;
}

/* The next delivery within timeout_ms into ai->frame: 1, 0 (none came), or
 * -1 with the reason in ai->err. */
static int take_delivery(struct amqp_in *ai, int timeout_ms)
{
	struct timeval tv = { timeout_ms / 1000, timeout_ms % 1000 * 1000 };
	amqp_envelope_t env;
	amqp_rpc_reply_t r;

	amqp_maybe_release_buffers(ai->c.conn);
	r = amqp_consume_message(ai->c.conn, &env, &tv, 0);
	if (r.reply_type == AMQP_RESPONSE_LIBRARY_EXCEPTION &&
	    r.library_error == AMQP_STATUS_TIMEOUT)
		return 0;
	if (r.reply_type == AMQP_RESPONSE_LIBRARY_EXCEPTION &&
	    r.library_error == AMQP_STATUS_UNEXPECTED_STATE)
		return other_frame(ai);
	if (r.reply_type != AMQP_RESPONSE_NORMAL)
		return mq_conn_reply_error(&ai->c, r, "cannot read", &ai->err);
	delivery_frame(ai, &env);
	ai->tag = env.delivery_tag;
	ai->ack_upto = ai->tag;
	ai->held++;
	amqp_destroy_envelope(&env);
	return 1;
}

static unsigned ack_batch(const struct amqp_in *ai)
{
	return ai->c.addr.prefetch >= 4 ? ai->c.addr.prefetch / 4 : 1;
}

/*
 * Without waiting: a delivery already here, or one the queue still
 * counts as ready (on its way, or taken by another reader meanwhile: the
 * queue is counted again). None once the queue counts none twice, or
 * once prefetch deliveries are held (no more come until they are acked).
 *
 * Twice, because the broker may answer a count before it writes the
 * deliveries it had already handed to this reader: the channel answers
 * the count first and sends them after. They are no longer ready, so
 * one zero would end a --once run with them on their way (they come
 * again only to the next run). The second count is answered after them.
 */
static int take_ready(struct amqp_in *ai)
{
	int zeros = 0;
	long ready;
	int r;

	/* A batch ends every quarter of the prefetch: its acknowledgement
	 * lets the broker send on while the rest is processed, where one at
	 * the prefetch would leave it waiting for the whole batch. */
	if (ai->held >= ack_batch(ai))
		return 0;
	r = take_delivery(ai, 0);

	while (r == 0 && ai->held < ai->c.addr.prefetch && !io_stop_requested) {
		ready = mq_conn_ready(&ai->c, &ai->err);
		if (ready < 0)
			return -1;
		r = take_delivery(ai, ready ? READY_WAIT_MS : 0);
		zeros = ready ? 0 : zeros + 1;
		if (zeros == 2)
			break;
	}
	return r;
}

/*
 * After a lost connection: a new one, consuming again. What the old one
 * had handed out and not acknowledged comes again from the broker (the
 * tool may have passed some of it on: a duplicate, never a loss), so
 * nothing of it is acknowledged on the new one.
 */
static int in_recover(struct amqp_in *ai)
{
	if (!mq_conn_lost(errno) || mq_conn_reconnect(&ai->c, &ai->err) < 0)
		return -1;
	ai->tag = ai->ack_upto = ai->acked = 0;
	ai->held = 0;
	return 0;
}

static int take_next(struct amqp_in *ai, int wait)
{
	int r;

	if (!wait)
		return take_ready(ai);
	/* The process's timers (msg-aggregate's --timeout, a writer's
	 * heartbeats) run while the queue is empty. */
	while ((r = take_delivery(ai, timer_wait_ms(STOP_CHECK_MS))) == 0 &&
	       !io_stop_requested)
		;
	return r;
}

static int amqp_next(struct channel_in *in, int wait, struct channel_source *src)
{
	struct amqp_in *ai = (struct amqp_in *)in;
	int r;

	while ((r = take_next(ai, wait)) < 0 && in_recover(ai) == 0)
		;
	if (r < 0)
		return in_failed(ai);
	if (r == 0)
		return CHANNEL_NONE;
	memset(src, 0, sizeof(*src));
	buf_reset(&ai->name);
	buf_addf(&ai->name, "%s delivery %llu", ai->c.name,
		 (unsigned long long)ai->tag);
	src->fd = -1;
	src->mem = ai->frame.ptr;
	src->mem_len = ai->frame.len;
	src->name = ai->name.ptr;
	src->whole = 1;
	return CHANNEL_MESSAGE;
}

/* What was made of the deliveries is out: acknowledged, all at once. */
static int amqp_done(struct channel_in *in)
{
	struct amqp_in *ai = (struct amqp_in *)in;
	int status;

	if (ai->ack_upto <= ai->acked)
		return 0;
	status = amqp_basic_ack(ai->c.conn, MQ_CHANNEL, ai->ack_upto, 1);
	if (status != AMQP_STATUS_OK) {
		mq_conn_status_error(&ai->c, status, "cannot acknowledge", &ai->err);
		/* Its deliveries come again, on the new connection. */
		return in_recover(ai) == 0 ? 0 : in_failed(ai);
	}
	ai->acked = ai->ack_upto;
	ai->held = 0;
	return 0;
}

/* The delivery in hand back to the queue, for the next reader. */
static void amqp_release(struct channel_in *in)
{
	struct amqp_in *ai = (struct amqp_in *)in;

	if (ai->tag > ai->acked && ai->ack_upto == ai->tag) {
		amqp_basic_nack(ai->c.conn, MQ_CHANNEL, ai->tag, 0, 1);
		ai->ack_upto = ai->tag - 1;
	}
}

static void amqp_in_close(struct channel_in *in)
{
	struct amqp_in *ai = (struct amqp_in *)in;

	mq_conn_close(&ai->c);
	buf_release(&ai->frame);
	buf_release(&ai->name);
	buf_release(&ai->err);
	free(ai);
}

/* Deliveries may wait in the library's buffer, where poll(2) does not
 * see them: a reader of several channels looks every little while. */
static int amqp_wait_fd(struct channel_in *in)
{
	(void)in;
	return -1;
}

static const struct channel_in_ops amqp_in_ops = {
	.next = amqp_next,
	.done = amqp_done,
	.set_aside = NULL,	/* unacknowledged, it stays in the queue */
	.release = amqp_release,
	.close = amqp_in_close,
	.wait_fd = amqp_wait_fd,
};

struct channel_in *channel_amqp_in(const char *addr, struct buf *err)
{
	struct amqp_in *ai = xcalloc(1, sizeof(*ai));

	ai->base.ops = &amqp_in_ops;
	buf_init(&ai->frame, 0);
	buf_init(&ai->name, 0);
	buf_init(&ai->err, 0);
	if (mq_conn_open(&ai->c, addr, err) < 0)
		goto fail;
	if (!ai->c.addr.queue) {
		buf_addf(err, "cannot read '%s': an exchange is for publishing; "
			 "read from a queue (?queue=NAME)", addr);
		errno = EINVAL;
		goto fail;
	}
	if (mq_conn_consume(&ai->c, err) == 0)
		return &ai->base;
fail:
	{
		int saved = errno;
		amqp_in_close(&ai->base);
		errno = saved;
	}
	return NULL;
}
