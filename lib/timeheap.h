/*
 * timeheap: a binary min-heap of items by time, ties by an order the
 * caller gives (the order items were made), for deadlines and "the
 * oldest". Each item keeps its position in the heap in a size_t of its
 * own, which the heap updates as entries move, so an item can be
 * found, moved and deleted in O(log n).
 *
 * An entry holds its time beside the item: sifting compares entries
 * without reaching into items, which lie scattered in memory.
 */
#ifndef MSG_TIMEHEAP_H
#define MSG_TIMEHEAP_H

#include <stddef.h>
#include <stdint.h>

struct timeheap_entry {
	int64_t time;
	uint64_t order;
	void *item;
	size_t *pos;		/* where the item keeps its position */
};

struct timeheap {
	struct timeheap_entry *v;
	size_t n, cap;
};

#define TIMEHEAP_INIT { NULL, 0, 0 }

void timeheap_release(struct timeheap *h);
void timeheap_insert(struct timeheap *h, void *item, size_t *pos,
		     int64_t time, uint64_t order);
/* The entry at i changed its time, either way. */
void timeheap_fix(struct timeheap *h, size_t i);
/* The entry at i changed its time to later only. */
void timeheap_sift_down(struct timeheap *h, size_t i);
void timeheap_delete(struct timeheap *h, size_t i);

/* The earliest item (its time in *time, if not NULL), or NULL. */
static inline void *timeheap_top(const struct timeheap *h, int64_t *time)
{
	if (!h->n)
		return NULL;
	if (time)
		*time = h->v[0].time;
	return h->v[0].item;
}

#endif
