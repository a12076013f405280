/* resequence-batch: everything kept, then sorted out (resequence-batch.h). */
#include "resequence-batch.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "msgrec.h"

struct entry {
	uint64_t group;		/* the group's order of creation */
	uint64_t num;
	uint64_t serial;	/* arrival: equal numbers keep it */
	uint64_t off;		/* in the bytes kept, memory or file */
	uint64_t len;
};

struct rsq_batch {
	struct rsq_limits lim;
	struct rsq_table *groups;	/* only for the groups' keys and sizes */
	struct entry *v;
	size_t n, alloc;
	struct buf mem;		/* the bytes, until they pass max_bytes */
	FILE *spill;		/* then all of them, here */
	uint64_t spill_len;
	struct buf rec, block;
};

struct rsq_batch *rsq_batch_new(const struct rsq_limits *lim)
{
	struct rsq_batch *b = xcalloc(1, sizeof(*b));
	struct rsq_limits none = *lim;

	b->lim = *lim;
	/* The table checks numbers; it holds no message. */
	none.start_first = 0;
	none.capacity = none.max_bytes = 0;
	if (lim->start_first)
		none.start = 0;
	b->groups = rsq_table_new(&none);
	buf_init(&b->mem, 0);
	buf_init(&b->rec, 0);
	buf_init(&b->block, 0);
	return b;
}

void rsq_batch_free(struct rsq_batch *b)
{
	if (!b)
		return;
	rsq_table_free(b->groups);
	free(b->v);
	buf_release(&b->mem);
	buf_release(&b->rec);
	buf_release(&b->block);
	if (b->spill)
		fclose(b->spill);
	free(b);
}

/* A file nobody else can open: unlinked as soon as it is made. */
static FILE *temporary(void)
{
	const char *dir = getenv("TMPDIR");
	struct buf path = BUF_INIT;
	FILE *f = NULL;
	int fd;

	buf_addf(&path, "%s/msg-resequence.XXXXXX", dir && *dir ? dir : "/tmp");
	fd = mkstemp(path.ptr);
	if (fd >= 0) {
		unlink(path.ptr);
		if (!(f = fdopen(fd, "w+")))
			close(fd);
	}
	buf_release(&path);
	return f;
}

/* Keep rec's bytes; 0 or -1 (the file). */
static int keep(struct rsq_batch *b, struct entry *e)
{
	e->len = b->rec.len;
	if (!b->spill && b->lim.max_bytes && b->mem.len + b->rec.len > b->lim.max_bytes) {
		if (!(b->spill = temporary()) ||
		    fwrite(b->mem.ptr, 1, b->mem.len, b->spill) != b->mem.len)
			return -1;
		b->spill_len = b->mem.len;
		buf_release(&b->mem);
		buf_init(&b->mem, 0);
	}
	if (!b->spill) {
		e->off = b->mem.len;
		buf_add(&b->mem, b->rec.ptr, b->rec.len);
		return 0;
	}
	e->off = b->spill_len;
	if (fwrite(b->rec.ptr, 1, b->rec.len, b->spill) != b->rec.len)
		return -1;
	b->spill_len += b->rec.len;
	return 0;
}

static void send(const struct rsq_batch_out *out, const char *block,
		 size_t block_len, const char *body, size_t len)
{
	struct buf why = BUF_INIT;

	if (out->emit(out->ctx, block, block_len, body, len, &why) < 0)
		out->invalid(out->ctx, block, block_len, body, len, why.ptr);
	buf_release(&why);
}

int rsq_batch_add(struct rsq_batch *b, const struct rsq_input *in,
		  const struct rsq_batch_out *out, enum rsq_result *res,
		  struct buf *why)
{
	struct rsq_group *g;
	struct entry *e;
	enum rsq_place p;

	*res = RSQR_OUT;
	buf_reset(why);
	if (in->marker) {
		send(out, in->block, in->block_len, in->body, in->len);
		return 0;
	}
	g = rsq_group(b->groups, in->key, in->key_len, 1, 0);
	if (in->size_known && rsq_set_size(g, in->size) < 0) {
		*res = RSQR_INVALID;
		buf_addf(why, "Sequence-Size %llu differs from the group's %llu",
			 (unsigned long long)in->size, (unsigned long long)g->size);
		return 0;
	}
	p = rsq_place(b->groups, g, in->num);
	/* With --start first the end is known only at the finish. */
	if (p == RSQ_BELOW_START || (p == RSQ_PAST_END && !b->lim.start_first)) {
		*res = RSQR_INVALID;
		rsq_place_why(why, p, g, in->num, b->lim.start);
		return 0;
	}
	if (b->n == b->alloc) {
		b->alloc = b->alloc ? 2 * b->alloc : 1024;
		b->v = xrealloc(b->v, b->alloc * sizeof(*b->v));
	}
	e = &b->v[b->n];
	e->group = g->created;
	e->num = in->num;
	e->serial = b->n;
	msgrec_encode_block(&b->rec, in->now, in->block, in->block_len, in->body,
			    in->len);
	if (keep(b, e) < 0)
		return -1;
	b->n++;
	*res = RSQR_WAITS;
	return 0;
}

static int by_group_number_arrival(const void *pa, const void *pb)
{
	const struct entry *a = pa, *b = pb;

	if (a->group != b->group)
		return a->group < b->group ? -1 : 1;
	if (a->num != b->num)
		return a->num < b->num ? -1 : 1;
	return a->serial < b->serial ? -1 : a->serial > b->serial;
}

/* The bytes of e into b->rec: 0, or -1 (the file). */
static int fetch(struct rsq_batch *b, const struct entry *e)
{
	if (!b->spill) {
		buf_reset(&b->rec);
		buf_add(&b->rec, b->mem.ptr + e->off, e->len);
		return 0;
	}
	ssize_t got;

	buf_reset(&b->rec);
	buf_grow(&b->rec, e->len);
	got = pread(fileno(b->spill), b->rec.ptr, e->len, (off_t)e->off);
	if (got < 0)
		return -1;
	if ((uint64_t)got != e->len) {
		errno = EIO;	/* the file is shorter than what was written */
		return -1;
	}
	buf_setlen(&b->rec, e->len);
	return 0;
}

/* The group made group-th, after g (groups are never forgotten here,
 * and entries are sorted by group). */
static const struct rsq_group *group_made(const struct rsq_batch *b,
					  const struct rsq_group *g,
					  uint64_t group)
{
	g = rsq_next_group(b->groups, g);
	while (g->created != group)
		g = rsq_next_group(b->groups, g);
	return g;
}

/* Past the end its start and a Sequence-Size put, whenever that came:
 * to invalid, 1. */
static int past_end(const struct rsq_batch_out *out, const struct rsq_group *g,
		    uint64_t first, uint64_t num, const char *block,
		    size_t block_len, const char *body, size_t len)
{
	struct buf why = BUF_INIT;

	if (!g->size_known || num - first < g->size)
		return 0;
	rsq_place_why(&why, RSQ_PAST_END, g, num, 0);
	out->invalid(out->ctx, block, block_len, body, len, why.ptr);
	buf_release(&why);
	return 1;
}

int rsq_batch_finish(struct rsq_batch *b, const struct rsq_batch_out *out,
		     struct resequencer_stats *st)
{
	const struct rsq_group *g = NULL;
	uint64_t group = 0, expect = 0, first = 0;
	int started = 0;

	if (b->spill && fflush(b->spill) != 0)
		return -1;
	st->most = b->n;
	qsort(b->v, b->n, sizeof(*b->v), by_group_number_arrival);
	for (size_t i = 0; i < b->n; i++) {
		const struct entry *e = &b->v[i];
		const char *block, *body;
		size_t block_len, len;
		int64_t at;

		if (!started || e->group != group) {
			group = e->group;
			g = group_made(b, g, group);
			first = expect = b->lim.start_first ? e->num : b->lim.start;
			started = 1;
		}
		if (fetch(b, e) < 0)
			return -1;
		if (msgrec_split(b->rec.ptr, b->rec.len, &at, &block, &block_len,
				 &body, &len) < 0)
			return -1;
		if (past_end(out, g, first, e->num, block, block_len, body, len))
			continue;
		if (e->num < expect) {
			out->duplicate(out->ctx, block, block_len, body, len, e->num);
			continue;
		}
		if (e->num > expect) {
			rsq_gap_block(&b->block, block, block_len, expect, e->num - 1);
			block = b->block.ptr;
			block_len = b->block.len;
			st->gaps++;
			st->skipped += e->num - expect;
		}
		st->out++;
		send(out, block, block_len, body, len);
		expect = e->num + 1;
	}
	return 0;
}

uint64_t rsq_batch_count(const struct rsq_batch *b)
{
	return b->n;
}

int rsq_batch_spilled(const struct rsq_batch *b)
{
	return b->spill != NULL;
}
