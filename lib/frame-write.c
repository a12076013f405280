/* frame-write: the buffered, locking writer of the message frame and the
 * registry of every writer (frame.h). */
#include "frame.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "channel.h"
#include "diag.h"
#include "io.h"
#include "sizes.h"

static struct frame_writer *writers;

/*
 * A pipe that holds two of our writes lets its reader take one while the
 * next is made. At the default size, that of one write, writer and reader
 * take turns, and with small messages the switches between them cost
 * more than the work (twice the time of msg-wrap -l | cat). Grown only,
 * and to no more than that: a pipe that cannot grow (the user's pipe
 * allowance spent, see pipe(7)) works as it is.
 */
static void widen_pipe(int fd)
{
	int size = fcntl(fd, F_GETPIPE_SZ);

	if (size >= 0 && size < 2 * WRITE_FLUSH_AT)
		(void)fcntl(fd, F_SETPIPE_SZ, 2 * WRITE_FLUSH_AT);
}

void frame_writer_init_sink(struct frame_writer *fw, struct channel_sink *sink,
			    int fd, const char *name)
{
	struct stat st;

	memset(fw, 0, sizeof(*fw));
	fw->fd = fd;
	fw->sink = sink;
	fw->separate_frames = sink->ops->separate_frames;
	fw->name = xstrdup(name);
	buf_init(&fw->out, WRITE_FLUSH_AT * 2);
	/* Others may share a FIFO, pipe or file; a sink without a
	 * descriptor of its own (a file per frame) is ours alone. */
	fw->lock = fd >= 0 && fstat(fd, &st) == 0 &&
		   (S_ISFIFO(st.st_mode) || S_ISREG(st.st_mode));
	if (fw->lock && S_ISFIFO(st.st_mode))
		widen_pipe(fd);
	fw->next_registered = writers;
	writers = fw;
}

void frame_writer_init(struct frame_writer *fw, int fd, const char *name)
{
	frame_writer_init_sink(fw, channel_stream_sink(fd, 0), fd, name);
}

void frame_writer_release(struct frame_writer *fw)
{
	struct frame_writer **pp;

	for (pp = &writers; *pp; pp = &(*pp)->next_registered)
		if (*pp == fw) {
			*pp = fw->next_registered;
			break;
		}
	free(fw->name);
	buf_release(&fw->out);
	fw->name = NULL;
	if (fw->sink)
		fw->sink->ops->free(fw->sink);
	fw->sink = NULL;
}

static int set_failed(struct frame_writer *fw, int err)
{
	fw->err = err;
	errno = err;
	return -1;
}

/*
 * POSIX record locks, not flock(2): flock locks belong to the open file
 * description, which writers started from one shell pipeline share (they
 * inherit one stdout), so they would not keep each other out. Record locks
 * belong to the process, whichever way the descriptor was obtained.
 */
static int lock_whole(int fd, short type, int wait)
{
	struct flock fl = { .l_type = type, .l_whence = SEEK_SET };
	int r;

	do
		r = fcntl(fd, wait ? F_SETLKW : F_SETLK, &fl);
	while (r < 0 && errno == EINTR);
	return r;
}

static int unlock(struct frame_writer *fw)
{
	if (fw->locked) {
		lock_whole(fw->fd, F_UNLCK, 0);
		fw->locked = 0;
	}
	return 0;
}

static int write_out(struct frame_writer *fw, const void *p, size_t n)
{
	if (fw->lock && !fw->locked) {
		int r = lock_whole(fw->fd, F_WRLCK, 1);
		/* Descriptors that cannot be locked are written unlocked. */
		fw->locked = r == 0;
		if (r < 0)
			fw->lock = 0;
	}
	if (write_all(fw->fd, p, n) < 0) {
		int err = errno;
		unlock(fw);
		return set_failed(fw, err);
	}
	return 0;
}

/* Large pieces go straight out, without a copy through the buffer. */
static int write_direct(struct frame_writer *fw, const void *p, size_t n)
{
	if (frame_writer_flush(fw) < 0 || write_out(fw, p, n) < 0)
		return -1;
	if (!fw->in_frame)
		unlock(fw);
	return 0;
}

int frame_writer_flush(struct frame_writer *fw)
{
	if (fw->err) {
		errno = fw->err;
		return -1;
	}
	if (fw->out.len) {
		if (write_out(fw, fw->out.ptr, fw->out.len) < 0)
			return -1;
		buf_reset(&fw->out);
	}
	fw->frame_start = 0;
	if (!fw->in_frame)
		unlock(fw);
	return 0;
}

/* The frames ended so far, made durable by the sink. */
static int make_durable(struct frame_writer *fw)
{
	if (fw->err) {
		errno = fw->err;
		return -1;
	}
	if (fw->sink->ops->make_durable(fw->sink) < 0)
		return set_failed(fw, errno);
	return 0;
}

/* A frame of its own has a descriptor of its own, gone with it. */
static void frame_gone(struct frame_writer *fw)
{
	if (fw->separate_frames)
		fw->fd = -1;
}

static void abort_frame(struct frame_writer *fw)
{
	fw->sink->ops->abort_frame(fw->sink);
	frame_gone(fw);
}

void frame_writers_flush_whole(void)
{
	for (struct frame_writer *fw = writers; fw; fw = fw->next_registered) {
		if (fw->err)
			continue;
		if (fw->in_frame) {
			/* Keep the whole frames before the open one. */
			buf_setlen(&fw->out, fw->frame_start);
			fw->in_frame = 0;
			abort_frame(fw);
		}
		if (frame_writer_flush(fw) == 0 && !fw->durable_by_tool)
			make_durable(fw);
	}
}

/* Write the whole frames buffered before an open one, keeping the open
 * frame's start: a frame is written out once it is known whole, unless it
 * outgrows the buffer. */
static int flush_ready(struct frame_writer *fw)
{
	size_t ready = fw->frame_start;

	if (!fw->in_frame)
		return frame_writer_flush(fw);
	if (fw->err) {
		errno = fw->err;
		return -1;
	}
	if (!ready)
		return 0;
	if (write_out(fw, fw->out.ptr, ready) < 0)
		return -1;
	memmove(fw->out.ptr, fw->out.ptr + ready, fw->out.len - ready);
	buf_setlen(&fw->out, fw->out.len - ready);
	fw->frame_start = 0;
	/* None of the open frame went out: others may write meanwhile. */
	unlock(fw);
	return 0;
}

struct frame_writer *frame_writers_failed(void)
{
	for (struct frame_writer *fw = writers; fw; fw = fw->next_registered)
		if (fw->err && !fw->tolerated)
			return fw;
	return NULL;
}

int frame_writers_flush_all(void)
{
	int r = 0;

	for (struct frame_writer *fw = writers; fw; fw = fw->next_registered)
		if ((flush_ready(fw) < 0 || make_durable(fw) < 0) && !fw->tolerated)
			r = -1;
	return r;
}

/* Bytes into the buffer, written out once it holds enough; large pieces
 * go straight out, without a copy through the buffer. */
static int buffer_out(struct frame_writer *fw, const void *p, size_t n)
{
	/* A sink that takes frames from memory gets each one whole. */
	if (fw->sink && fw->sink->ops->take_frame) {
		buf_add(&fw->out, p, n);
		return 0;
	}
	if (n >= WRITE_FLUSH_AT)
		return write_direct(fw, p, n);
	buf_add(&fw->out, p, n);
	if (fw->out.len >= WRITE_FLUSH_AT)
		return frame_writer_flush(fw);
	return 0;
}

/* The frame at frame, n bytes, to a sink that takes it from memory. */
static int hand_over(struct frame_writer *fw, const char *frame, size_t n)
{
	if (fw->sink->ops->take_frame(fw->sink, frame, n) < 0)
		return set_failed(fw, errno);
	return 0;
}

static int begin_checks(struct frame_writer *fw)
{
	if (fw->err) {
		errno = fw->err;
		return -1;
	}
	if (fw->in_frame)
		die(EX_SOFTWARE, "frame_writer_begin inside a frame on '%s'", fw->name);
	return 0;
}

/* The sink says where the frame's bytes go (a new file, for a spool). */
static int begin_file(struct frame_writer *fw)
{
	int fd;

	if (fw->sink->ops->take_frame)
		return 0;
	fd = fw->sink->ops->begin_frame(fw->sink);

	if (fd < 0)
		return set_failed(fw, errno);
	fw->fd = fd;
	return 0;
}

/* The frame's bytes are all buffered or written: deliver it. A frame
 * that goes alone is written out whole first: whole and durable (for a
 * spool, in new/ once published), or not there at all. */
static int end_file(struct frame_writer *fw)
{
	int r = 0;

	if (fw->sink->ops->take_frame) {
		/* The buffer holds this frame alone: frames go out one at a
		 * time, and nothing of it was written before. */
		r = hand_over(fw, fw->out.ptr + fw->frame_start,
			      fw->out.len - fw->frame_start);
		buf_setlen(&fw->out, fw->frame_start);
		return r;
	}
	if (fw->separate_frames || fw->out.len >= WRITE_FLUSH_AT || fw->locked)
		r = frame_writer_flush(fw);
	if (r < 0) {
		abort_frame(fw);
		return -1;
	}
	r = fw->sink->ops->end_frame(fw->sink);
	frame_gone(fw);
	return r < 0 ? set_failed(fw, errno) : 0;
}

int frame_writer_begin(struct frame_writer *fw, const struct headers *h,
		       uint64_t body_len)
{
	size_t start = fw->out.len;

	if (begin_checks(fw) < 0)
		return -1;
	frame_format_header(&fw->out, h, body_len);
	/* A block no reader would take is refused here, for this message
	 * only: the writer stays healthy. */
	if (fw->out.len - start > FRAME_HEADER_MAX) {
		buf_setlen(&fw->out, start);
		errno = EMSGSIZE;
		return -1;
	}
	if (begin_file(fw) < 0) {
		buf_setlen(&fw->out, start);
		return -1;
	}
	fw->frame_start = start;
	fw->in_frame = 1;
	fw->body_left = body_len;
	return 0;
}

int frame_writer_nameable(const struct frame_writer *fw)
{
	return fw->sink && fw->sink->ops->name_next && fw->sink->ops->adopt;
}

void frame_writer_name_next(struct frame_writer *fw, const char *id)
{
	fw->sink->ops->name_next(fw->sink, id);
}

int frame_writer_adopt(struct frame_writer *fw, const char *id)
{
	return fw->sink->ops->adopt(fw->sink, id);
}

int frame_writer_begin_raw(struct frame_writer *fw, const char *block,
			   size_t n, uint64_t body_len)
{
	if (begin_checks(fw) < 0 || begin_file(fw) < 0)
		return -1;
	fw->frame_start = fw->out.len;
	buf_add(&fw->out, block, n);
	fw->in_frame = 1;
	fw->body_left = body_len;
	return 0;
}

int frame_writer_body(struct frame_writer *fw, const void *p, size_t n)
{
	if (fw->err) {
		errno = fw->err;
		return -1;
	}
	if (!fw->in_frame || n > fw->body_left)
		die(EX_SOFTWARE, "body longer than its Content-Length on '%s'",
		    fw->name);
	fw->body_left -= n;
	return buffer_out(fw, p, n);
}

int frame_writer_end(struct frame_writer *fw)
{
	if (fw->err) {
		errno = fw->err;
		return -1;
	}
	if (!fw->in_frame || fw->body_left)
		die(EX_SOFTWARE, "body shorter than its Content-Length on '%s'",
		    fw->name);
	buf_addch(&fw->out, '\n');
	fw->in_frame = 0;
	fw->frames++;
	return end_file(fw);
}

int frame_writer_write(struct frame_writer *fw, const struct headers *h,
		       const void *body, size_t len)
{
	if (frame_writer_begin(fw, h, len) < 0 ||
	    frame_writer_body(fw, body, len) < 0)
		return -1;
	return frame_writer_end(fw);
}

int frame_writer_raw(struct frame_writer *fw, const void *p, size_t n)
{
	if (fw->err) {
		errno = fw->err;
		return -1;
	}
	if (fw->separate_frames)	/* it holds messages only */
		return set_failed(fw, EINVAL);
	return buffer_out(fw, p, n);
}

int frame_writer_whole(struct frame_writer *fw, const char *frame, size_t n)
{
	/* A stream's frames need nothing of its sink: the bytes go out with
	 * the buffer, which only ever holds whole frames outside a frame. */
	if (!fw->separate_frames) {
		if (begin_checks(fw) < 0 || buffer_out(fw, frame, n) < 0)
			return -1;
		fw->frames++;
		return 0;
	}
	if (begin_checks(fw) < 0)
		return -1;
	if (fw->sink->ops->take_frame) {
		if (hand_over(fw, frame, n) < 0)
			return -1;
		fw->frames++;
		return 0;
	}
	if (begin_file(fw) < 0)
		return -1;
	if (write_all(fw->fd, frame, n) < 0) {
		int err = errno;
		abort_frame(fw);
		return set_failed(fw, err);
	}
	if (fw->sink->ops->end_frame(fw->sink) < 0) {
		frame_gone(fw);
		return set_failed(fw, errno);
	}
	frame_gone(fw);
	fw->frames++;
	return 0;
}

int frame_writer_close(struct frame_writer *fw)
{
	int r = frame_writer_flush(fw);
	int err;

	if (r == 0)
		r = make_durable(fw);
	err = errno;
	if (fw->sink && fw->sink->ops->close(fw->sink) < 0 && r == 0) {
		err = errno;
		r = set_failed(fw, err);
	}
	fw->fd = -1;
	errno = err;
	return r;
}
