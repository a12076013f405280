/*
 * channel-amqp-out: an amqp: address (amqp-addr.h) as a channel a tool
 * writes to. Each frame is published as one persistent, mandatory
 * message, and a batch is out once the broker confirmed every message
 * of it. A lost connection is made again and what was not confirmed is
 * published again: at least once, duplicates possible, never a loss.
 */
#include "channel.h"

#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>

#include "amqp-conn.h"
#include "amqp-map.h"
#include "clock.h"
#include "diag.h"
#include "timer.h"

/* The frames a writer keeps to publish again after a lost connection:
 * once their bytes pass this, it waits for confirms before it publishes
 * more (one message larger than this is still sent, alone). */
#define RETAINED_MAX (16u << 20)

/* One published message the broker has not confirmed yet. */
struct unconfirmed {
	uint64_t tag;		/* 0 once confirmed */
	int confirmed;
	char id[80];		/* its Message-Id, to name it */
	struct buf frame;	/* to publish it again */
};

struct amqp_sink {
	struct channel_sink base;
	struct mq_conn c;
	struct headers h;
	struct buf err;
	struct mq_props props;
	uint64_t published;	/* delivery tags are 1, 2, ... (again after
				 * a reconnect) */
	struct unconfirmed *ring;	/* oldest at head */
	size_t head, count, window;
	size_t retained;	/* bytes of the frames in the ring */
	int failed;		/* errno of the broker's failure, or 0 */
	int64_t next_beat;	/* when the idle connection is looked after */
	int lost;		/* errno of a connection lost while idle, or 0 */
	struct amqp_sink *next_beating;	/* the next sink that beats */
};

static struct amqp_sink *as_sink(struct channel_sink *s)
{
	return (struct amqp_sink *)s;
}

/*
 * The broker's error, said once on stderr (the frame writer keeps only
 * errno) and kept: -1. Nothing more is published, and the batch is
 * refused at make_durable, before anything upstream is done with, so
 * that the run ends with the status the failure calls for (a tool's own
 * check of a write would say 74 for any kind).
 */
static int sink_failed(struct amqp_sink *as)
{
	if (!as->failed) {
		as->failed = errno;
		warnx_msg("%s", as->err.ptr);
		as->base.failure_said = 1;
	}
	buf_reset(&as->err);
	errno = as->failed;
	return -1;
}

static struct unconfirmed *ring_at(struct amqp_sink *as, size_t i)
{
	return &as->ring[(as->head + i) % as->window];
}

/* Acks mark messages confirmed; the oldest confirmed ones leave. */
static void confirm(struct amqp_sink *as, uint64_t tag, int multiple)
{
	for (size_t i = 0; i < as->count; i++) {
		struct unconfirmed *u = ring_at(as, i);
		if (u->tag == tag || (multiple && u->tag < tag))
			u->confirmed = 1;
	}
	while (as->count && ring_at(as, 0)->confirmed) {
		struct unconfirmed *u = ring_at(as, 0);

		as->retained -= u->frame.len;
		/* A large message's room is not kept for every slot. */
		if (u->frame.cap > (1u << 20))
			buf_release(&u->frame);
		else
			buf_reset(&u->frame);
		as->head = (as->head + 1) % as->window;
		as->count--;
	}
}

/* A message named by its Message-Id, or by its place in the run. */
static void add_message_name(struct buf *out, const char *id, uint64_t tag)
{
	if (*id) {
		buf_addch(out, '\'');
		diag_escape(out, id, strlen(id));
		buf_addch(out, '\'');
	} else {
		buf_addf(out, "%llu of the run (it has no Message-Id)",
			 (unsigned long long)tag);
	}
}

static const char *id_of_tag(struct amqp_sink *as, uint64_t tag)
{
	for (size_t i = 0; i < as->count; i++)
		if (ring_at(as, i)->tag == tag)
			return ring_at(as, i)->id;
	return "";
}

/* A message the broker could not route (mandatory): named, ENXIO. */
static int returned(struct amqp_sink *as, const amqp_basic_return_t *ret)
{
	amqp_message_t msg;
	amqp_rpc_reply_t r = amqp_read_message(as->c.conn, MQ_CHANNEL, &msg, 0);

	if (r.reply_type != AMQP_RESPONSE_NORMAL)
		return mq_conn_reply_error(&as->c, r, "cannot read a returned message",
					   &as->err);
	buf_addf(&as->err, "'%s': message '", as->c.name);
	if (msg.properties._flags & AMQP_BASIC_MESSAGE_ID_FLAG)
		diag_escape(&as->err, msg.properties.message_id.bytes,
			    msg.properties.message_id.len);
	buf_addf(&as->err, "' returned by the broker: %d ", ret->reply_code);
	diag_escape(&as->err, ret->reply_text.bytes, ret->reply_text.len);
	amqp_destroy_message(&msg);
	errno = ENXIO;
	return -1;
}

/* One frame from the broker: a confirm, a return or a close; what: what
 * the writer was doing, for a lost connection's diagnostic. */
static int take_frame(struct amqp_sink *as, const struct timeval *timeout,
		      const char *what)
{
	amqp_frame_t frame;
	int status = amqp_simple_wait_frame_noblock(as->c.conn, &frame,
						    (struct timeval *)timeout);
	amqp_method_t m;

	if (status == AMQP_STATUS_TIMEOUT)
		return 0;
	if (status != AMQP_STATUS_OK)
		return mq_conn_status_error(&as->c, status, what, &as->err);
	if (frame.frame_type != AMQP_FRAME_METHOD)
		return 0;
	m = frame.payload.method;
	switch (m.id) {
	case AMQP_BASIC_ACK_METHOD: {
		amqp_basic_ack_t *ack = m.decoded;
		confirm(as, ack->delivery_tag, ack->multiple);
		return 0;
	}
	case AMQP_BASIC_NACK_METHOD: {
		amqp_basic_nack_t *nack = m.decoded;
		buf_addf(&as->err, "'%s': message ", as->c.name);
		add_message_name(&as->err, id_of_tag(as, nack->delivery_tag),
				 nack->delivery_tag);
		buf_addstr(&as->err, " refused by the broker (nack)");
		errno = EAGAIN;
		return -1;
	}
	case AMQP_BASIC_RETURN_METHOD:
		return returned(as, m.decoded);
	default:
		return mq_conn_closed(&as->c, &frame, &as->err);
	}
}

/* The frame, whole in memory, parsed where it lies and published: 0, or
 * -1 with errno EIO (it is not one frame: the writer is broken) or the
 * broker's (amqp-conn.h), said in as->err. */
static int publish(struct amqp_sink *as, const char *frame, size_t n)
{
	struct frame_reader fr;
	amqp_bytes_t body;
	size_t block_len;
	int status, r;

	frame_reader_init_mem(&fr, frame, n, as->c.name);
	r = frame_reader_next(&fr, &as->h);
	block_len = fr.block_len;
	body.len = (size_t)frame_reader_body_length(&fr);
	frame_reader_release(&fr);
	if (r <= 0 || block_len + body.len + 1 != n) {
		errno = EIO;
		return -1;
	}
	body.bytes = (void *)(frame + block_len);
	buf_addf(&as->err, "'%s': ", as->c.name);
	if (mq_props_set(&as->props, &as->h, clock_now_ms(), &as->err) < 0)
		return -1;
	buf_reset(&as->err);
	status = amqp_basic_publish(as->c.conn, MQ_CHANNEL,
				    amqp_cstring_bytes(mq_addr_exchange(&as->c.addr)),
				    amqp_cstring_bytes(mq_addr_routing_key(&as->c.addr)),
				    1, 0, &as->props.p, body);
	if (status != AMQP_STATUS_OK)
		return mq_conn_status_error(&as->c, status, "cannot publish", &as->err);
	return 0;
}

/* The frame kept in the ring, unconfirmed, under the next tag. */
static void keep(struct amqp_sink *as, const char *frame, size_t n)
{
	struct unconfirmed *u = ring_at(as, as->count++);
	const char *id = headers_get(&as->h, "Message-Id");

	u->tag = ++as->published;
	u->confirmed = 0;
	snprintf(u->id, sizeof(u->id), "%s", id ? id : "");
	buf_reset(&u->frame);
	buf_add(&u->frame, frame, n);
	as->retained += n;
}

/* Every message not confirmed published again, in order, under new tags
 * (a new connection counts from 1). */
static int publish_again(struct amqp_sink *as)
{
	as->published = 0;
	for (size_t i = 0; i < as->count; i++) {
		struct unconfirmed *u = ring_at(as, i);

		u->tag = 0;
		if (u->confirmed)
			continue;
		u->tag = ++as->published;
		if (publish(as, u->frame.ptr, u->frame.len) < 0)
			return -1;
	}
	return 0;
}

/* After a lost connection: a new one, and what the broker had not
 * confirmed sent on it (again, for what it did receive: a duplicate,
 * never a loss). -1 with the reason in as->err when it cannot be. */
static int recover(struct amqp_sink *as)
{
	for (;;) {
		if (mq_conn_reconnect(&as->c, &as->err) < 0)
			return -1;
		if (publish_again(as) == 0)
			return 0;
		if (!mq_conn_lost(errno))
			return -1;
	}
}

/* A failure while publishing or waiting: recovered from when it is a
 * lost connection and reconnect= allows, else the writer's failure. */
static int failure(struct amqp_sink *as)
{
	if (mq_conn_lost(errno) && recover(as) == 0)
		return 0;
	return sink_failed(as);
}

/* Wait until at most limit messages are unconfirmed, holding at most
 * room bytes of frames between them. */
static int wait_confirms(struct amqp_sink *as, size_t limit, size_t room)
{
	if (as->failed) {
		errno = as->failed;
		return -1;
	}
	while (as->count > limit || (as->count && as->retained > room))
		if (take_frame(as, NULL, "waiting for confirms") < 0 &&
		    failure(as) < 0)
			return -1;
	amqp_maybe_release_buffers(as->c.conn);
	return 0;
}

/* What the broker sent already (a confirm, a return, a close) taken,
 * without waiting: a return or a close is found early. */
static void take_arrived(struct amqp_sink *as)
{
	static const struct timeval now = { 0 };

	while (!as->failed && (amqp_data_in_buffer(as->c.conn) ||
			       amqp_frames_enqueued(as->c.conn)))
		if (take_frame(as, &now, "reading from the broker") < 0 &&
		    failure(as) < 0)
			break;
}

/*
 * Heartbeats. While the tool waits for input nothing of this writer
 * runs, and rabbitmq-c sends heartbeats and notices the broker's missing
 * only inside its own calls: the broker would close an idle writer's
 * connection, and a broker gone silent would go unnoticed. So the
 * tool's waits call beat every half interval (timer.h): a heartbeat
 * out, what came in taken. A connection found lost with nothing
 * unconfirmed is made again only when the next message goes out, so
 * an idle writer outlasts a broker's restart of any length. One timer
 * serves every writer of the process (msg-route may have one per
 * partition, more than the timers there are), through this list.
 */
static struct amqp_sink *beating;

static void beat_schedule(struct amqp_sink *as)
{
	as->next_beat = clock_now_ms() + amqp_get_heartbeat(as->c.conn) * 500;
}

static int64_t beat_due(struct amqp_sink *as)
{
	return as->failed || as->lost ? 0 : as->next_beat;
}

static void beat(struct amqp_sink *as)
{
	static const struct timeval now = { 0 };
	amqp_frame_t heartbeat = { .frame_type = AMQP_FRAME_HEARTBEAT };
	int status, r;

	beat_schedule(as);
	status = amqp_send_frame(as->c.conn, &heartbeat);
	if (status != AMQP_STATUS_OK)
		r = mq_conn_status_error(&as->c, status, "cannot send a heartbeat",
					 &as->err);
	else
		r = take_frame(as, &now, "idle");	/* its silence noticed */
	if (r == 0) {
		take_arrived(as);
		return;
	}
	if (as->count || !mq_conn_lost(errno)) {
		failure(as);	/* what is unconfirmed goes out again now */
		return;
	}
	as->lost = errno;	/* as->err says how, when it is made again */
}

/* The timer's deadline: the first of every writer's. (Its arg, &beating,
 * only names the timer.) */
static int64_t beats_due(void *arg)
{
	int64_t first = 0;

	(void)arg;
	for (struct amqp_sink *as = beating; as; as = as->next_beating) {
		int64_t d = beat_due(as);

		if (d && (!first || d < first))
			first = d;
	}
	return first;
}

static void beats_fire(void *arg)
{
	int64_t now = clock_now_ms();

	(void)arg;
	for (struct amqp_sink *as = beating; as; as = as->next_beating) {
		int64_t d = beat_due(as);

		if (d && d <= now)
			beat(as);
	}
}

static int beats_join(struct amqp_sink *as, struct buf *err)
{
	if (amqp_get_heartbeat(as->c.conn) <= 0)
		return 0;
	beat_schedule(as);
	if (!beating && timer_add(beats_due, beats_fire, &beating) < 0) {
		buf_addf(err, "'%s': cannot keep its heartbeats: %s",
			 as->c.name, strerror(errno));
		return -1;
	}
	as->next_beating = beating;
	beating = as;
	return 0;
}

static void beats_leave(struct amqp_sink *as)
{
	for (struct amqp_sink **p = &beating; *p; p = &(*p)->next_beating)
		if (*p == as) {
			*p = as->next_beating;
			break;
		}
	if (!beating)
		timer_remove(&beating);
}

/* The frame, whole in the writer's buffer, published and kept until it
 * is confirmed; the window kept. */
static int sink_take_frame(struct channel_sink *s, const char *frame, size_t n)
{
	struct amqp_sink *as = as_sink(s);
	size_t room = n < RETAINED_MAX ? RETAINED_MAX - n : 0;

	if (as->lost) {
		errno = as->lost;
		as->lost = 0;
		if (failure(as) < 0)
			return 0;	/* refused at make_durable */
	}
	if (as->failed || wait_confirms(as, as->window - 1, room) < 0)
		return 0;	/* refused at make_durable */
	if (publish(as, frame, n) < 0) {
		if (errno == EIO)
			return -1;	/* the writer made the frame */
		if (!mq_conn_lost(errno)) {
			sink_failed(as);
			return 0;
		}
		/* Kept, to go out on the next connection with the others. */
		keep(as, frame, n);
		failure(as);
		return 0;
	}
	keep(as, frame, n);
	take_arrived(as);
	return 0;
}

static void sink_abort_frame(struct channel_sink *s)
{
	(void)s;	/* nothing left the process */
}

/* Out once the broker confirmed every message published. */
static int sink_make_durable(struct channel_sink *s)
{
	return wait_confirms(as_sink(s), 0, 0);
}

static int sink_close(struct channel_sink *s)
{
	return wait_confirms(as_sink(s), 0, 0);
}

static void sink_free(struct channel_sink *s)
{
	struct amqp_sink *as = as_sink(s);

	beats_leave(as);
	mq_conn_close(&as->c);
	headers_release(&as->h);
	buf_release(&as->err);
	mq_props_release(&as->props);
	for (size_t i = 0; as->ring && i < as->window; i++)
		buf_release(&as->ring[i].frame);
	free(as->ring);
	free(as);
}

static const struct channel_out_ops amqp_out_ops = {
	.separate_frames = 1,
	.abort_frame = sink_abort_frame,
	.take_frame = sink_take_frame,
	.make_durable = sink_make_durable,
	.close = sink_close,
	.free = sink_free,
};

struct channel_sink *channel_amqp_sink(const char *addr, struct buf *err)
{
	struct amqp_sink *as = xcalloc(1, sizeof(*as));

	as->base.ops = &amqp_out_ops;
	headers_init(&as->h);
	buf_init(&as->err, 0);
	mq_props_init(&as->props);
	if (mq_conn_open(&as->c, addr, err) < 0 ||
	    mq_conn_confirm(&as->c, err) < 0 || beats_join(as, err) < 0) {
		int saved = errno;
		sink_free(&as->base);
		errno = saved;
		return NULL;
	}
	as->window = as->c.addr.confirm_window;
	as->ring = xcalloc(as->window, sizeof(*as->ring));
	for (size_t i = 0; i < as->window; i++)
		buf_init(&as->ring[i].frame, 0);
	return &as->base;
}
