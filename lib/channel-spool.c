/* channel-spool: delivery to and from a dir: spool (spool.h), one file a
 * message, published and deleted in groups. */
#include "channel.h"

#include <stdlib.h>
#include <string.h>

#include "spool.h"

struct spool_sink {
	struct channel_sink base;
	struct spool *sp;
};

static struct spool *sink_spool(struct channel_sink *s)
{
	return ((struct spool_sink *)s)->sp;
}

/* Every frame a temporary file of its own. */
static int spool_begin_frame(struct channel_sink *s)
{
	return spool_begin(sink_spool(s));
}

/* Whole and synced in tmp/, waiting to be published, or not there. */
static int spool_end_frame(struct channel_sink *s)
{
	return spool_commit(sink_spool(s));
}

static void spool_abort_frame(struct channel_sink *s)
{
	spool_abort(sink_spool(s));
}

/* The committed messages into new/, durably. */
static int spool_make_durable(struct channel_sink *s)
{
	return spool_publish(sink_spool(s));
}

/* Published by make_durable, or left for free to remove. */
static int spool_close_sink(struct channel_sink *s)
{
	(void)s;
	return 0;
}

static void spool_free_sink(struct channel_sink *s)
{
	spool_close(sink_spool(s));
	free(s);
}

static void spool_name_frame(struct channel_sink *s, const char *id)
{
	spool_name_next(sink_spool(s), id);
}

static int spool_adopt_frame(struct channel_sink *s, const char *id)
{
	return spool_adopt(sink_spool(s), id);
}

static const struct channel_out_ops spool_out_ops = {
	.separate_frames = 1,
	.begin_frame = spool_begin_frame,
	.end_frame = spool_end_frame,
	.abort_frame = spool_abort_frame,
	.make_durable = spool_make_durable,
	.close = spool_close_sink,
	.free = spool_free_sink,
	.name_next = spool_name_frame,
	.adopt = spool_adopt_frame,
};

struct channel_sink *channel_spool_sink(struct spool *sp)
{
	struct spool_sink *ss = xcalloc(1, sizeof(*ss));

	ss->base.ops = &spool_out_ops;
	ss->sp = sp;
	return &ss->base;
}

struct spool_in {
	struct channel_in base;
	struct spool *sp;
	char *addr;
	struct spool_entry e;
	struct buf name;	/* of the entry in hand, for diagnostics */
	struct headers file_headers;	/* its File-Name */
};

static int spool_next(struct channel_in *in, int wait,
		      struct channel_source *src)
{
	struct spool_in *si = (struct spool_in *)in;
	int found = spool_claim(si->sp, wait, &si->e);

	if (found < 0)
		return -1;
	memset(src, 0, sizeof(*src));
	buf_reset(&si->name);
	if (found == SPOOL_NONE)
		return CHANNEL_NONE;
	if (found == SPOOL_MESSAGE) {
		buf_addf(&si->name, "%s/cur/%s", si->addr, si->e.name.ptr);
		src->fd = si->e.fd;
		src->name = si->name.ptr;
		headers_set(&si->file_headers, "File-Name", si->e.name.ptr);
		src->file_headers = &si->file_headers;
		src->whole = 1;
		return CHANNEL_MESSAGE;
	}
	buf_addf(&si->name, "%s/%s/%s", si->addr, si->e.dir, si->e.name.ptr);
	src->fd = -1;
	src->name = si->name.ptr;
	src->kind = si->e.kind;
	if (found == SPOOL_SET_ASIDE) {
		src->where = si->e.where.ptr;
		return CHANNEL_SET_ASIDE;
	}
	src->action = si->e.action;
	src->err = si->e.err;
	return CHANNEL_SKIPPED;
}

static int spool_in_done(struct channel_in *in)
{
	return spool_done(((struct spool_in *)in)->sp);
}

static int spool_in_set_aside(struct channel_in *in, const char *why,
			      struct buf *where)
{
	(void)why;	/* said on stderr; bad/ keeps the message as it was */
	return spool_set_aside(((struct spool_in *)in)->sp, where);
}

static void spool_in_release(struct channel_in *in)
{
	spool_release(((struct spool_in *)in)->sp);
}

static void spool_in_close(struct channel_in *in)
{
	struct spool_in *si = (struct spool_in *)in;

	spool_close(si->sp);
	spool_entry_release(&si->e);
	buf_release(&si->name);
	headers_release(&si->file_headers);
	free(si->addr);
	free(si);
}

static int spool_in_wait_fd(struct channel_in *in)
{
	return spool_wait_fd(((struct spool_in *)in)->sp);
}

static const struct channel_in_ops spool_in_ops = {
	.next = spool_next,
	.wait_fd = spool_in_wait_fd,
	.done = spool_in_done,
	.set_aside = spool_in_set_aside,
	.release = spool_in_release,
	.close = spool_in_close,
};

struct channel_in *channel_spool_in(const char *addr, struct buf *err)
{
	struct spool *sp = spool_open(addr + 4, 0, err);
	struct spool_in *si;

	if (!sp)
		return NULL;
	si = xcalloc(1, sizeof(*si));
	si->base.ops = &spool_in_ops;
	si->sp = sp;
	si->addr = xstrdup(addr);
	si->e = (struct spool_entry)SPOOL_ENTRY_INIT;
	buf_init(&si->name, 0);
	headers_init(&si->file_headers);
	return &si->base;
}
