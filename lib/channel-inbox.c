/* channel-inbox: an inbox:DIR (inbox.h) as an input channel, its files
 * raw sources let go once what was made of them is out. */
#include "channel.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "inbox.h"

struct inbox_in {
	struct channel_in base;
	struct inbox *ib;
	int fd;			/* of the file in hand, or -1 */
};

static void close_in_hand(struct inbox_in *ii)
{
	if (ii->fd >= 0)
		close(ii->fd);
	ii->fd = -1;
}

static int inbox_in_next(struct channel_in *in, int wait,
			 struct channel_source *src)
{
	struct inbox_in *ii = (struct inbox_in *)in;
	struct inbox_file f;
	int found;

	close_in_hand(ii);
	found = inbox_next(ii->ib, wait, &f);
	if (found < 0)
		return -1;
	memset(src, 0, sizeof(*src));
	src->fd = f.fd;
	src->name = f.name;
	switch (found) {
	case INBOX_FILE:
		ii->fd = f.fd;
		src->file_headers = f.headers;
		/* Read whole, once taken, even when asked to stop. */
		src->whole = 1;
		return CHANNEL_MESSAGE;
	case INBOX_PASSED:
		src->kind = f.kind;
		return CHANNEL_PASSED;
	case INBOX_SKIPPED:
		src->action = f.action;
		src->err = f.err;
		return CHANNEL_SKIPPED;
	case INBOX_REPEATED:
		return CHANNEL_REPEATED;
	default:
		return CHANNEL_NONE;
	}
}

static int inbox_in_done(struct channel_in *in)
{
	struct inbox_in *ii = (struct inbox_in *)in;

	close_in_hand(ii);
	return inbox_done(ii->ib);
}

static int inbox_in_set_aside(struct channel_in *in, const char *why,
			      struct buf *where)
{
	struct inbox_in *ii = (struct inbox_in *)in;

	close_in_hand(ii);
	return inbox_set_aside(ii->ib, why, where);
}

static void inbox_in_release(struct channel_in *in)
{
	struct inbox_in *ii = (struct inbox_in *)in;

	close_in_hand(ii);
	inbox_release(ii->ib);
}

static void inbox_in_close(struct channel_in *in)
{
	struct inbox_in *ii = (struct inbox_in *)in;

	close_in_hand(ii);
	inbox_close(ii->ib);
	free(ii);
}

static const struct channel_in_ops inbox_in_ops = {
	.next = inbox_in_next,
	.done = inbox_in_done,
	.set_aside = inbox_in_set_aside,
	.release = inbox_in_release,
	.close = inbox_in_close,
};

struct channel_in *channel_inbox_in(const char *addr,
				    const struct inbox_options *opt,
				    struct buf *err)
{
	struct inbox *ib = inbox_open(addr, opt, err);
	struct inbox_in *ii;

	if (!ib)
		return NULL;
	ii = xcalloc(1, sizeof(*ii));
	ii->base.ops = &inbox_in_ops;
	ii->ib = ib;
	ii->fd = -1;
	return &ii->base;
}
