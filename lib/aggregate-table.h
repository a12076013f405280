/*
 * aggregate-table: the group table's insides, shared by the parts that
 * keep it (aggregate-group.c, aggregate-timer.c) and by nothing else.
 */
#ifndef MSG_AGGREGATE_TABLE_H
#define MSG_AGGREGATE_TABLE_H

#include "aggregate.h"
#include "timeheap.h"

/* Groups by arrival of their first member (heap 0) and of their latest
 * (heap 1), earliest on top: the oldest group, and both deadlines. */
enum { HEAP_FIRST, HEAP_LAST };

struct agg_table {
	struct agg_limits lim;
	struct agg_group **buckets;	/* chained by agg_group.chain */
	size_t nbuckets;		/* a power of two */
	uint64_t ngroups;
	uint64_t bytes;
	uint64_t serial;		/* the next member's */
	uint64_t created;		/* groups ever made */
	struct timeheap heap[2];
};

/* FNV-1a: keys are short, and the tables only need them spread. */
static inline uint32_t agg_hash(const char *p, size_t n)
{
	uint32_t h = 2166136261u;

	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)p[i]) * 16777619u;
	return h;
}

void agg_heaps_insert(struct agg_table *t, struct agg_group *g);
/* After g's first arrival moved earlier (its last may move later
 * without a word: the idle heap catches up lazily). */
void agg_heaps_first_moved(struct agg_table *t, struct agg_group *g);
void agg_heaps_remove(struct agg_table *t, struct agg_group *g);

#endif
