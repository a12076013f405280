/*
 * aggregate-timer: the oldest group and the --timeout and --idle
 * deadlines, from two binary heaps of the open groups. Every member
 * moves its group's idle deadline later; rather than sift the heap for
 * each, the heap keeps the time it was last told, and a group that
 * comes to the top with a stale time is pushed down to where it now
 * belongs: a member then costs nothing here.
 */
#include "aggregate.h"

#include "aggregate-table.h"

/* Earlier time first; of equal times, the group made first. */
static int before(const struct agg_heap_entry *a, const struct agg_heap_entry *b)
{
	return a->time != b->time ? a->time < b->time : a->created < b->created;
}

static void place(struct agg_heap *h, size_t i, struct agg_heap_entry e,
		  int which)
{
	h->v[i] = e;
	e.g->heap_pos[which] = i;
}

static void sift_up(struct agg_heap *h, size_t i, int which)
{
	struct agg_heap_entry e = h->v[i];

	while (i > 0) {
		size_t parent = (i - 1) / 2;
		if (!before(&e, &h->v[parent]))
			break;
		place(h, i, h->v[parent], which);
		i = parent;
	}
	place(h, i, e, which);
}

static void sift_down(struct agg_heap *h, size_t i, int which)
{
	struct agg_heap_entry e = h->v[i];

	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= h->n)
			break;
		if (c + 1 < h->n && before(&h->v[c + 1], &h->v[c]))
			c++;
		if (!before(&h->v[c], &e))
			break;
		place(h, i, h->v[c], which);
		i = c;
	}
	place(h, i, e, which);
}

static void heap_insert(struct agg_heap *h, struct agg_group *g, int64_t time,
			int which)
{
	struct agg_heap_entry e = { time, g->created, g };

	if (h->n == h->cap) {
		h->cap = h->cap ? 2 * h->cap : 64;
		h->v = xrealloc(h->v, h->cap * sizeof(*h->v));
	}
	place(h, h->n++, e, which);
	sift_up(h, h->n - 1, which);
}

/* An entry's time moved either way: one of the sifts puts it back. */
static void heap_fix(struct agg_heap *h, size_t i, int which)
{
	sift_up(h, i, which);
	sift_down(h, i, which);
}

static void heap_delete(struct agg_heap *h, size_t i, int which)
{
	struct agg_heap_entry last = h->v[--h->n];

	if (i == h->n)
		return;
	place(h, i, last, which);
	heap_fix(h, i, which);
}

/* The idle heap is kept only with --idle: without, no one asks it, and
 * it would cost every group two sifts. */
static int idle_kept(const struct agg_table *t)
{
	return t->lim.idle_ms != 0;
}

void agg_heaps_insert(struct agg_table *t, struct agg_group *g)
{
	heap_insert(&t->heap[HEAP_FIRST], g, g->first, HEAP_FIRST);
	if (idle_kept(t))
		heap_insert(&t->heap[HEAP_LAST], g, g->last, HEAP_LAST);
}

void agg_heaps_first_moved(struct agg_table *t, struct agg_group *g)
{
	size_t i = g->heap_pos[HEAP_FIRST];

	t->heap[HEAP_FIRST].v[i].time = g->first;
	heap_fix(&t->heap[HEAP_FIRST], i, HEAP_FIRST);
}

/* Until the top of the idle heap is a group whose time is current. */
static void settle_idle(struct agg_table *t)
{
	struct agg_heap *h = &t->heap[HEAP_LAST];

	while (h->n && h->v[0].time != h->v[0].g->last) {
		h->v[0].time = h->v[0].g->last;
		sift_down(h, 0, HEAP_LAST);
	}
}

void agg_heaps_remove(struct agg_table *t, struct agg_group *g)
{
	heap_delete(&t->heap[HEAP_FIRST], g->heap_pos[HEAP_FIRST], HEAP_FIRST);
	if (idle_kept(t))
		heap_delete(&t->heap[HEAP_LAST], g->heap_pos[HEAP_LAST], HEAP_LAST);
}

struct agg_group *agg_oldest(const struct agg_table *t)
{
	return t->heap[HEAP_FIRST].n ? t->heap[HEAP_FIRST].v[0].g : NULL;
}

/* The top of a heap and its deadline, when that timer is on. */
static struct agg_group *next_of(const struct agg_table *t, int which,
				 int64_t *deadline)
{
	int64_t after = which == HEAP_FIRST ? t->lim.timeout_ms : t->lim.idle_ms;
	const struct agg_heap *h = &t->heap[which];

	if (!after || !h->n)
		return NULL;
	*deadline = h->v[0].time + after;
	return h->v[0].g;
}

int64_t agg_next_deadline(struct agg_table *t)
{
	int64_t a = 0, b = 0;
	struct agg_group *ga, *gb;

	settle_idle(t);
	ga = next_of(t, HEAP_FIRST, &a);
	gb = next_of(t, HEAP_LAST, &b);

	if (ga && gb)
		return a < b ? a : b;
	return ga ? a : gb ? b : 0;
}

struct agg_group *agg_expired(struct agg_table *t, int64_t now,
			      enum agg_reason *reason)
{
	int64_t da = 0, db = 0;
	struct agg_group *ga, *gb;

	settle_idle(t);
	ga = next_of(t, HEAP_FIRST, &da);
	gb = next_of(t, HEAP_LAST, &db);
	if (ga && da > now)
		ga = NULL;
	if (gb && db > now)
		gb = NULL;
	/* Both passed: the earlier deadline was met first. The top of each
	 * heap is the earliest of its kind, so the group of the earlier one
	 * met no deadline of the other kind before it. Ties: timeout. */
	if (gb && (!ga || db < da)) {
		*reason = AGG_IDLE;
		return gb;
	}
	if (ga)
		*reason = AGG_TIMEOUT;
	return ga;
}
