/* fanout: many output channels, written together. */
#include "fanout.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "channel.h"

void fanout_init(struct fanout *f)
{
	memset(f, 0, sizeof(*f));
}

static size_t add(struct fanout *f, const char *addr, struct frame_writer *w,
		  int owned)
{
	struct fanout_channel *c;

	if (f->n == f->alloc) {
		f->alloc = f->alloc ? 2 * f->alloc : 8;
		f->v = xrealloc(f->v, f->alloc * sizeof(*f->v));
	}
	c = &f->v[f->n];
	memset(c, 0, sizeof(*c));
	c->addr = xstrdup(addr);
	c->w = w;
	c->owned = owned;
	buf_init(&c->why, 0);
	return f->n++;
}

long fanout_find(const struct fanout *f, const char *addr)
{
	for (size_t i = 0; i < f->n; i++)
		if (!strcmp(f->v[i].addr, addr))
			return (long)i;
	return -1;
}

size_t fanout_borrow(struct fanout *f, const char *addr, struct frame_writer *w)
{
	long i = fanout_find(f, addr);

	return i >= 0 ? (size_t)i : add(f, addr, w, 0);
}

long fanout_open(struct fanout *f, const char *addr, struct buf *err)
{
	long i = fanout_find(f, addr);
	struct frame_writer *w;

	if (i >= 0)
		return i;
	w = xmalloc(sizeof(*w));
	if (channel_writer_open(addr, w, err) < 0) {
		free(w);
		return -1;
	}
	return (long)add(f, addr, w, 1);
}

void fanout_set_add(struct fanout_set *s, size_t i)
{
	for (size_t k = 0; k < s->n; k++)
		if (s->idx[k] == i)
			return;
	if (s->n == s->alloc) {
		s->alloc = s->alloc ? 2 * s->alloc : 8;
		s->idx = xrealloc(s->idx, s->alloc * sizeof(*s->idx));
	}
	s->idx[s->n++] = i;
}

static void kill_channel(struct fanout_channel *c, size_t *failed)
{
	if (c->dead)
		return;
	c->dead = 1;
	buf_reset(&c->why);
	buf_addstr(&c->why, strerror(c->w->err ? c->w->err : errno));
	(*failed)++;
}

void fanout_write_whole(struct fanout *f, const struct fanout_set *s,
			const char *frame, size_t n, size_t *failed)
{
	*failed = 0;
	for (size_t k = 0; k < s->n; k++) {
		struct fanout_channel *c = &f->v[s->idx[k]];
		if (c->dead)
			continue;
		if (frame_writer_whole(c->w, frame, n) < 0)
			kill_channel(c, failed);
		else
			c->sent++;
	}
}

int fanout_write(struct fanout *f, const struct fanout_set *s,
		 const struct headers *h, const char *block, size_t block_len,
		 const char *body, uint64_t len,
		 int (*next)(void *arg, const char **p, size_t *n), void *arg,
		 size_t *failed)
{
	const char *p;
	size_t n;
	int r = 1;

	*failed = 0;
	for (size_t k = 0; k < s->n; k++) {
		struct fanout_channel *c = &f->v[s->idx[k]];
		if (c->dead)
			continue;
		if ((block ? frame_writer_begin_raw(c->w, block, block_len, len)
			   : frame_writer_begin(c->w, h, len)) < 0)
			kill_channel(c, failed);
	}
	if (body) {
		p = body;
		n = (size_t)len;
	}
	while (body ? n > 0 : (r = next(arg, &p, &n)) > 0) {
		for (size_t k = 0; k < s->n; k++) {
			struct fanout_channel *c = &f->v[s->idx[k]];
			if (!c->dead && frame_writer_body(c->w, p, n) < 0)
				kill_channel(c, failed);
		}
		if (body)
			break;
	}
	if (r < 0)
		return -1;
	for (size_t k = 0; k < s->n; k++) {
		struct fanout_channel *c = &f->v[s->idx[k]];
		if (c->dead)
			continue;
		if (frame_writer_end(c->w) < 0)
			kill_channel(c, failed);
		else
			c->sent++;
	}
	return 0;
}

int fanout_close(struct fanout *f)
{
	int r = 0;

	for (size_t i = 0; i < f->n; i++) {
		struct fanout_channel *c = &f->v[i];
		if (!c->owned || !c->w)
			continue;
		if (frame_writer_close(c->w) < 0 && !c->dead) {
			size_t failed = 0;
			kill_channel(c, &failed);
			r = -1;
		}
	}
	return r;
}

void fanout_release(struct fanout *f)
{
	for (size_t i = 0; i < f->n; i++) {
		struct fanout_channel *c = &f->v[i];
		if (c->owned && c->w) {
			frame_writer_release(c->w);
			free(c->w);
		}
		free(c->addr);
		buf_release(&c->why);
	}
	free(f->v);
	fanout_init(f);
}
