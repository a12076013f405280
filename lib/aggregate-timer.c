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

/* The idle heap is kept only with --idle: without, no one asks it, and
 * it would cost every group two sifts. */
static int idle_kept(const struct agg_table *t)
{
	return t->lim.idle_ms != 0;
}

void agg_heaps_insert(struct agg_table *t, struct agg_group *g)
{
	timeheap_insert(&t->heap[HEAP_FIRST], g, &g->heap_pos[HEAP_FIRST],
			g->first, g->created);
	if (idle_kept(t))
		timeheap_insert(&t->heap[HEAP_LAST], g, &g->heap_pos[HEAP_LAST],
				g->last, g->created);
}

void agg_heaps_first_moved(struct agg_table *t, struct agg_group *g)
{
	size_t i = g->heap_pos[HEAP_FIRST];

	t->heap[HEAP_FIRST].v[i].time = g->first;
	timeheap_fix(&t->heap[HEAP_FIRST], i);
}

/* Until the top of the idle heap is a group whose time is current. */
static void settle_idle(struct agg_table *t)
{
	struct timeheap *h = &t->heap[HEAP_LAST];
	struct agg_group *g;
	int64_t told;

	while ((g = timeheap_top(h, &told)) && told != g->last) {
		h->v[0].time = g->last;
		timeheap_sift_down(h, 0);
	}
}

void agg_heaps_remove(struct agg_table *t, struct agg_group *g)
{
	timeheap_delete(&t->heap[HEAP_FIRST], g->heap_pos[HEAP_FIRST]);
	if (idle_kept(t))
		timeheap_delete(&t->heap[HEAP_LAST], g->heap_pos[HEAP_LAST]);
}

struct agg_group *agg_oldest(const struct agg_table *t)
{
	return timeheap_top(&t->heap[HEAP_FIRST], NULL);
}

/* The top of a heap and its deadline, when that timer is on. */
static struct agg_group *next_of(const struct agg_table *t, int which,
				 int64_t *deadline)
{
	int64_t after = which == HEAP_FIRST ? t->lim.timeout_ms : t->lim.idle_ms;
	struct agg_group *g;

	if (!after || !(g = timeheap_top(&t->heap[which], deadline)))
		return NULL;
	*deadline += after;
	return g;
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
