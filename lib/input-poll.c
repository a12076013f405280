/* input-poll: several operands read at once (input-poll.h). */
#include "input-poll.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "channel.h"
#include "clock.h"
#include "diag.h"
#include "input-parts.h"
#include "io.h"
#include "spool-parts.h"
#include "spool.h"
#include "timer.h"

struct operand {
	char *addr;
	const struct input_ops *ops;
	void *ctx;
	unsigned flags;
	struct channel_in *ch;
	/* A stream: its descriptor and reader. A spool has none of its own:
	 * wait_fd is its change notices (or -1: look every POLL_MS). */
	int fd, wait_fd;
	int fifo;
	struct frame_reader fr;
	int ended;
	int used;		/* read from since the batch was last done */
};

struct input_poll {
	struct input *in;
	int once;
	struct operand *ops;
	size_t n;
	struct headers h;
	int draining;		/* the write wait below is set */
	struct pollfd *pf;	/* its poll list: the output, then streams */
	struct operand **pf_of;
};

struct input_poll *input_poll_new(struct input *in, int once)
{
	struct input_poll *p = xcalloc(1, sizeof(*p));

	p->in = in;
	p->once = once;
	headers_init(&p->h);
	return p;
}

static void close_stream(struct operand *o)
{
	frame_reader_release(&o->fr);
	o->ch->ops->close(o->ch);
	o->ch = NULL;
	o->fd = -1;
}

void input_poll_free(struct input_poll *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->n; i++) {
		struct operand *o = &p->ops[i];
		if (o->ch && o->fd >= 0)
			close_stream(o);
		else if (o->ch)
			o->ch->ops->close(o->ch);
		free(o->addr);
	}
	if (p->draining)
		io_set_write_wait(NULL, NULL);
	free(p->ops);
	free(p->pf);
	free(p->pf_of);
	headers_release(&p->h);
	free(p);
}

/*
 * A FIFO is opened without waiting for a writer (the others would wait
 * with it), then read blocking as any stream: poll says when. Until a
 * writer comes, poll reports nothing for it, not an end.
 */
static int open_fifo(const char *path)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);

	if (fd >= 0)
		fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	return fd;
}

static int is_fifo(const char *addr)
{
	struct channel_addr a;
	struct buf err = BUF_INIT;
	struct stat st;
	int r = channel_parse(addr, &a, &err) == 0 && a.kind == CHANNEL_PATH &&
		stat(a.path, &st) == 0 && S_ISFIFO(st.st_mode);

	buf_release(&err);
	return r;
}

/* Open o as a stream or a spool, or end the tool (66). */
static void open_operand(struct input_poll *p, struct operand *o)
{
	struct buf err = BUF_INIT;
	struct channel_source src;

	o->fd = o->wait_fd = -1;
	if (o->fifo) {
		int fd = open_fifo(o->addr);
		if (fd < 0)
			die_errno(EX_NOINPUT, "cannot open '%s'", o->addr);
		o->ch = channel_stream_in(fd, o->addr, NULL);
	} else {
		o->ch = channel_in_open(o->addr, 0, &err);
		if (!o->ch)
			die(EX_NOINPUT, "%s", err.ptr);
	}
	buf_release(&err);
	if (o->ch->ops->wait_fd) {
		/* A spool read beside others is read to its end each round,
		 * unless --once fixed what it holds at the first one. */
		if (!p->once)
			o->wait_fd = o->ch->ops->wait_fd(o->ch);
		return;
	}
	if (o->ch->ops->next(o->ch, 0, &src) != CHANNEL_MESSAGE)
		die(EX_NOINPUT, "cannot read '%s'", o->addr);
	o->fd = src.fd;
	frame_reader_init(&o->fr, o->fd, src.name);
	/* Reads wait only inside a frame, whose bytes are on their way:
	 * the batch ends before poll(2), not there. */
	o->fr.may_wait = 0;
}

/* May o's stream be read ahead now (INPUT_POLL_DRAIN)? */
static int drainable(const struct operand *o)
{
	return (o->flags & INPUT_POLL_DRAIN) && !o->ended && o->fd >= 0 &&
	       !o->fr.eof && !o->fr.ahead_eof && !o->fr.ahead_err &&
	       o->fr.ahead.len - o->fr.ahead_pos < INPUT_POLL_AHEAD_MAX;
}

/*
 * io's write wait (io.h): until the output fd has room, read ahead what
 * the streams to drain hold, so that their writers, which may be what
 * the output waits for, go on. 1 when no stream is to be drained.
 */
static int wait_writable(int fd, void *arg)
{
	struct input_poll *p = arg;

	for (;;) {
		nfds_t nfds = 1;

		p->pf[0] = (struct pollfd){ .fd = fd, .events = POLLOUT };
		for (size_t i = 0; i < p->n; i++) {
			if (!drainable(&p->ops[i]))
				continue;
			p->pf_of[nfds] = &p->ops[i];
			p->pf[nfds++] = (struct pollfd){ .fd = p->ops[i].fd,
							 .events = POLLIN };
		}
		if (nfds == 1)
			return 1;
		if (poll(p->pf, nfds, -1) < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		for (nfds_t i = 1; i < nfds; i++)
			if (p->pf[i].revents)
				frame_reader_read_ahead(&p->pf_of[i]->fr,
							INPUT_POLL_AHEAD_MAX);
		if (p->pf[0].revents)
			return 0;	/* room, or an error the write reports */
	}
}

void input_poll_add(struct input_poll *p, const char *addr,
		    const struct input_ops *ops, void *ctx, unsigned flags)
{
	struct operand *o;

	p->pf = xrealloc(p->pf, (p->n + 2) * sizeof(*p->pf));
	p->pf_of = xrealloc(p->pf_of, (p->n + 2) * sizeof(*p->pf_of));
	if ((flags & INPUT_POLL_DRAIN) && !p->draining) {
		io_set_write_wait(wait_writable, p);
		p->draining = 1;
	}
	p->ops = xrealloc(p->ops, (p->n + 1) * sizeof(*p->ops));
	o = &p->ops[p->n++];
	memset(o, 0, sizeof(*o));
	o->addr = xstrdup(addr);
	o->ops = ops;
	o->ctx = ctx;
	o->flags = flags;
	o->fifo = is_fifo(addr);
	open_operand(p, o);
}

int input_poll_open(const struct input_poll *p, unsigned mask)
{
	int n = 0;

	for (size_t i = 0; i < p->n; i++)
		n += !p->ops[i].ended && (p->ops[i].flags & mask);
	return n;
}

/* Hand the frames in hand to o's tool, as input.c's loop does. */
static void reading(struct input_poll *p, struct operand *o)
{
	p->in->ops = o->ops;
	p->in->ctx = o->ctx;
	p->in->current = o->ch;
	p->in->current_refused = 0;
	o->used = 1;
}

/* Are bytes (or the end) there to read without waiting? */
static int readable_now(int fd)
{
	struct pollfd pf = { .fd = fd, .events = POLLIN };

	return poll(&pf, 1, 0) > 0;
}

/* A stream at its end: a FIFO that must outlive its writers is opened
 * again; anything else is done with. */
static void stream_ended(struct input_poll *p, struct operand *o)
{
	close_stream(o);
	if ((o->flags & INPUT_POLL_REOPEN) && o->fifo && !p->once) {
		open_operand(p, o);
		return;
	}
	o->ended = 1;
}

/* The frames a stream holds now; a frame begun is read to its end. */
static unsigned long read_stream(struct input_poll *p, struct operand *o)
{
	unsigned long n = 0;
	int r;

	while (!io_stop_requested && n < SPOOL_CLAIMS_MAX &&
	       (frame_reader_buffered(&o->fr) || readable_now(o->fd))) {
		r = frame_reader_next(&o->fr, &p->h);
		if (r < 0)
			die(frame_reader_exit_code(&o->fr), "%s",
			    frame_reader_error(&o->fr));
		if (r == 0) {
			stream_ended(p, o);
			break;
		}
		reading(p, o);
		p->in->current_name = o->fr.name;
		p->in->batch_messages++;
		n++;
		if (o->ops->frame(o->ctx, &o->fr, &p->h) < 0)
			die(frame_reader_exit_code(&o->fr), "%s",
			    frame_reader_error(&o->fr));
		/* The rest of a body the tool left goes now, while its bytes
		 * are known to be coming. */
		if (o->fr.in_body && frame_reader_skip(&o->fr) < 0)
			die(frame_reader_exit_code(&o->fr), "%s",
			    frame_reader_error(&o->fr));
	}
	p->in->current = NULL;
	return n;
}

/* The files a spool holds now, up to SPOOL_CLAIMS_MAX. */
static unsigned long read_spool(struct input_poll *p, struct operand *o)
{
	struct channel_source src;
	unsigned long n = 0;
	int found;

	while (!io_stop_requested && n < SPOOL_CLAIMS_MAX) {
		found = o->ch->ops->next(o->ch, 0, &src);
		if (found < 0)
			die_errno(EX_IOERR, "cannot read '%s'", o->addr);
		if (found == CHANNEL_NONE)
			break;
		if (found != CHANNEL_MESSAGE) {
			input_report_entry(p->in, o->ch, o->addr, found, &src);
			continue;
		}
		reading(p, o);
		p->in->current_name = src.name;
		n++;
		if (!input_frames_of(p->in, &src, &p->h)) {
			o->ch->ops->release(o->ch);	/* stopped: not read */
			break;
		}
		if (p->in->current_refused)
			input_set_aside_current(p->in);
	}
	p->in->current = NULL;
	if (p->once && !n)
		o->ended = 1;	/* all it held when first read */
	return n;
}

/* The batch read: the tool's batch_end, the outputs durable, then each
 * channel read from done (a spool deletes its claims). */
static void end_round(struct input_poll *p)
{
	input_tool_batch_end(p->in);
	input_outputs_durable();
	for (size_t i = 0; i < p->n; i++) {
		struct operand *o = &p->ops[i];
		if (!o->used)
			continue;
		o->used = 0;
		if (o->ch && o->ch->ops->done(o->ch) < 0)
			die_errno(EX_IOERR, "cannot finish with what was read from '%s'", o->addr);
	}
}

unsigned long input_poll_round(struct input_poll *p)
{
	unsigned long n = 0;

	p->in->batch_messages = 0;
	for (size_t i = 0; i < p->n && !io_stop_requested; i++) {
		struct operand *o = &p->ops[i];
		if (o->ended)
			continue;
		n += o->fd >= 0 ? read_stream(p, o) : read_spool(p, o);
	}
	end_round(p);
	return n;
}

int input_poll_wait(struct input_poll *p, int64_t deadline)
{
	struct pollfd *pf = xcalloc(p->n ? p->n : 1, sizeof(*pf));
	int timeout = -1, nfds = 0, looking = 0;

	for (size_t i = 0; i < p->n; i++) {
		struct operand *o = &p->ops[i];
		int fd = o->fd >= 0 ? o->fd : o->wait_fd;
		if (o->ended)
			continue;
		if (o->fd >= 0 && frame_reader_buffered(&o->fr))
			deadline = -1;	/* frames read but not taken: no wait */
		if (fd < 0) {
			looking = 1;	/* a spool without notices: look again */
			continue;
		}
		pf[nfds].fd = fd;
		pf[nfds++].events = POLLIN;
	}
	if (deadline < 0) {
		timeout = 0;
	} else if (deadline) {
		int64_t left = deadline - clock_now_ms();
		timeout = left <= 0 ? 0 : left > 3600000 ? 3600000 : (int)left;
	}
	if (looking && (timeout < 0 || timeout > POLL_MS))
		timeout = POLL_MS;
	if (!nfds && timeout < 0) {
		free(pf);
		return -1;
	}
	/* The process's timers (an amqp: writer's heartbeats) run meanwhile. */
	timeout = timer_wait_ms(timeout < 0 ? 3600000 : timeout);
	if (poll(pf, (nfds_t)nfds, timeout) > 0)
		for (size_t i = 0; i < p->n; i++)
			if (!p->ops[i].ended && p->ops[i].fd < 0 && p->ops[i].wait_fd >= 0)
				p->ops[i].ch->ops->wait_fd(p->ops[i].ch);	/* drained */
	free(pf);
	return 0;
}
