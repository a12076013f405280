/* timeheap: items by time, earliest on top (timeheap.h). */
#include "timeheap.h"

#include <stdlib.h>

#include "buf.h"

/* Earlier time first; of equal times, the lower order. */
static int before(const struct timeheap_entry *a, const struct timeheap_entry *b)
{
	return a->time != b->time ? a->time < b->time : a->order < b->order;
}

static void place(struct timeheap *h, size_t i, struct timeheap_entry e)
{
	h->v[i] = e;
	*e.pos = i;
}

static void sift_up(struct timeheap *h, size_t i)
{
	struct timeheap_entry e = h->v[i];

	while (i > 0) {
		size_t parent = (i - 1) / 2;
		if (!before(&e, &h->v[parent]))
			break;
		place(h, i, h->v[parent]);
		i = parent;
	}
	place(h, i, e);
}

void timeheap_sift_down(struct timeheap *h, size_t i)
{
	struct timeheap_entry e = h->v[i];

	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= h->n)
			break;
		if (c + 1 < h->n && before(&h->v[c + 1], &h->v[c]))
			c++;
		if (!before(&h->v[c], &e))
			break;
		place(h, i, h->v[c]);
		i = c;
	}
	place(h, i, e);
}

void timeheap_insert(struct timeheap *h, void *item, size_t *pos,
		     int64_t time, uint64_t order)
{
	struct timeheap_entry e = { time, order, item, pos };

	if (h->n == h->cap) {
		h->cap = h->cap ? 2 * h->cap : 64;
		h->v = xrealloc(h->v, h->cap * sizeof(*h->v));
	}
	place(h, h->n++, e);
	sift_up(h, h->n - 1);
}

void timeheap_fix(struct timeheap *h, size_t i)
{
	sift_up(h, i);
	timeheap_sift_down(h, i);
}

void timeheap_delete(struct timeheap *h, size_t i)
{
	struct timeheap_entry last = h->v[--h->n];

	if (i == h->n)
		return;
	place(h, i, last);
	timeheap_fix(h, i);
}

void timeheap_release(struct timeheap *h)
{
	free(h->v);
	h->v = NULL;
	h->n = h->cap = 0;
}
