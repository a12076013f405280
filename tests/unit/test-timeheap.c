/* test-timeheap: the heap of items by time (timeheap.h) against a plain
 * search for the earliest, through random inserts, deletes and moves. */
#include <stdint.h>
#include <string.h>

#include "timeheap.h"
#include "unit.h"

#define ITEMS 300

struct item {
	int live;
	int64_t time;
	uint64_t order;
	size_t pos;
};

static struct item items[ITEMS];

static uint64_t seed = 0x9e3779b97f4a7c15ull;

/* The earliest live item by a plain search: time, then order. */
static struct item *earliest(void)
{
	struct item *best = NULL;

	for (int i = 0; i < ITEMS; i++) {
		struct item *it = &items[i];
		if (it->live && (!best || it->time < best->time ||
				 (it->time == best->time && it->order < best->order)))
			best = it;
	}
	return best;
}

/* Every live item where it says it is, with its time, no other, and no
 * entry earlier than its parent. */
static int consistent(const struct timeheap *h)
{
	size_t live = 0;

	for (size_t i = 1; i < h->n; i++) {
		const struct timeheap_entry *e = &h->v[i], *up = &h->v[(i - 1) / 2];
		if (e->time < up->time || (e->time == up->time && e->order < up->order))
			return 0;
	}

	for (int i = 0; i < ITEMS; i++) {
		const struct item *it = &items[i];
		if (!it->live)
			continue;
		live++;
		if (it->pos >= h->n || h->v[it->pos].item != it ||
		    h->v[it->pos].time != it->time || h->v[it->pos].pos != &it->pos)
			return 0;
	}
	return live == h->n;
}

static void test_against_search(void)
{
	struct timeheap h = TIMEHEAP_INIT;
	uint64_t order = 0, wrong = 0, steps = 0;
	int64_t t;

	CHECK(timeheap_top(&h, &t) == NULL);
	for (; steps < 100000; steps++) {
		uint64_t r = unit_random(&seed);
		struct item *it = &items[(r >> 8) % ITEMS], *want;
		/* Few distinct times: ties are common, and order breaks them. */
		int64_t time = (int64_t)((r >> 24) % 50) - 10;

		if (!it->live) {
			it->live = 1;
			it->time = time;
			it->order = ++order;
			timeheap_insert(&h, it, &it->pos, time, it->order);
		} else if (r % 3 == 0) {
			it->live = 0;
			timeheap_delete(&h, it->pos);
		} else if (r % 3 == 1) {
			it->time = time;
			h.v[it->pos].time = time;
			timeheap_fix(&h, it->pos);
		} else if (time >= it->time) {
			it->time = time;
			h.v[it->pos].time = time;
			timeheap_sift_down(&h, it->pos);
		}
		want = earliest();
		t = INT64_MIN;
		if (timeheap_top(&h, &t) != want || (want && t != want->time) ||
		    !consistent(&h)) {
			if (!wrong++)
				printf("# step %llu: the top or a position is wrong\n",
				       (unsigned long long)steps);
		}
	}
	CHECK(wrong == 0);
	CHECK(h.n > 50);
	/* Emptied from the top: the times never go back. */
	wrong = 0;
	for (int64_t last = INT64_MIN; h.n; ) {
		struct item *it = timeheap_top(&h, &t);
		wrong += t < last || it != earliest();
		last = t;
		it->live = 0;
		timeheap_delete(&h, 0);
	}
	CHECK(wrong == 0);
	timeheap_release(&h);
	CHECK(h.n == 0 && h.v == NULL);
}

int main(void)
{
	test_against_search();
	return unit_done();
}
