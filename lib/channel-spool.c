/* channel-spool: delivery to and from a dir: spool (spool.h), one file a
 * message, published and deleted in groups. */
#include "channel.h"

#include <stdlib.h>

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

static const struct channel_out_ops spool_out_ops = {
	.separate_frames = 1,
	.begin_frame = spool_begin_frame,
	.end_frame = spool_end_frame,
	.abort_frame = spool_abort_frame,
	.make_durable = spool_make_durable,
	.close = spool_close_sink,
	.free = spool_free_sink,
};

struct channel_sink *channel_spool_sink(struct spool *sp)
{
	struct spool_sink *ss = xmalloc(sizeof(*ss));

	ss->base.ops = &spool_out_ops;
	ss->sp = sp;
	return &ss->base;
}
