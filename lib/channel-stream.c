/* channel-stream: delivery to a stream (stdio, fd:N, a FIFO or a file):
 * frames go out on one shared descriptor, in order. */
#include "channel.h"

#include <stdlib.h>
#include <string.h>
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
	struct stream_sink *ss = xcalloc(1, sizeof(*ss));

	ss->base.ops = &stream_out_ops;
	ss->fd = fd;
	ss->owns_fd = owns_fd;
	return &ss->base;
}

struct stream_in {
	struct channel_in base;
	int fd;
	int handed;		/* its one source is out */
	char *name;
	struct headers file_headers;	/* File-Name of a raw file */
};

static int stream_next(struct channel_in *in, int wait,
		       struct channel_source *src)
{
	struct stream_in *si = (struct stream_in *)in;

	(void)wait;
	if (si->handed)
		return CHANNEL_NONE;
	si->handed = 1;
	memset(src, 0, sizeof(*src));
	src->fd = si->fd;
	src->name = si->name;
	src->file_headers = headers_count(&si->file_headers) ? &si->file_headers
							      : NULL;
	return CHANNEL_MESSAGE;
}

/* Its bytes were consumed by reading them. */
static int stream_done(struct channel_in *in)
{
	(void)in;
	return 0;
}

static void stream_release(struct channel_in *in)
{
	(void)in;
}

/* stdin belongs to whoever started us; what we opened is closed. */
static void stream_in_close(struct channel_in *in)
{
	struct stream_in *si = (struct stream_in *)in;

	if (si->fd != STDIN_FILENO)
		close(si->fd);
	free(si->name);
	headers_release(&si->file_headers);
	free(si);
}

static const struct channel_in_ops stream_in_ops = {
	.next = stream_next,
	.done = stream_done,
	.set_aside = NULL,	/* a stream cannot: the tool exits 65 */
	.release = stream_release,
	.close = stream_in_close,
};

struct channel_in *channel_stream_in(int fd, const char *name,
				     const char *file_name)
{
	struct stream_in *si = xcalloc(1, sizeof(*si));

	si->base.ops = &stream_in_ops;
	si->fd = fd;
	si->handed = 0;
	si->name = xstrdup(name);
	headers_init(&si->file_headers);
	if (file_name)
		headers_set(&si->file_headers, "File-Name", file_name);
	return &si->base;
}
