/* channel-stream: delivery to a stream (stdio, fd:N, a FIFO or a file):
 * frames go out on one shared descriptor, in order. */
#include "channel.h"

#include <stdlib.h>
#include <unistd.h>

struct stream_sink {
	struct channel_sink base;
	int fd;
	int owns_fd;
};

static int stream_begin_frame(struct channel_sink *s)
{
	return ((struct stream_sink *)s)->fd;
}

/* The writer has the frame's bytes; a stream has no more to do for it. */
static int stream_end_frame(struct channel_sink *s)
{
	(void)s;
	return 0;
}

static void stream_abort_frame(struct channel_sink *s)
{
	(void)s;
}

/* What write(2) took survives the tool, not the machine: nothing is
 * synced (doc/design.md, "Delivery"). */
static int stream_make_durable(struct channel_sink *s)
{
	(void)s;
	return 0;
}

static int stream_close(struct channel_sink *s)
{
	struct stream_sink *ss = (struct stream_sink *)s;
	int r = 0;

	if (ss->fd >= 0 && ss->owns_fd)
		r = close(ss->fd);
	ss->fd = -1;
	return r;
}

static void stream_free(struct channel_sink *s)
{
	free(s);
}

static const struct channel_out_ops stream_out_ops = {
	.separate_frames = 0,
	.begin_frame = stream_begin_frame,
	.end_frame = stream_end_frame,
	.abort_frame = stream_abort_frame,
	.make_durable = stream_make_durable,
	.close = stream_close,
	.free = stream_free,
};

struct channel_sink *channel_stream_sink(int fd, int owns_fd)
{
	struct stream_sink *ss = xmalloc(sizeof(*ss));

	ss->base.ops = &stream_out_ops;
	ss->fd = fd;
	ss->owns_fd = owns_fd;
	return &ss->base;
}
