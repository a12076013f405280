/*
 * resequencer-parts: the run's insides, shared by resequencer.c (in and
 * out) and resequence-record.c (restoring from the store), and by
 * nothing else.
 */
#ifndef MSG_RESEQUENCER_PARTS_H
#define MSG_RESEQUENCER_PARTS_H

#include "keyset.h"
#include "resequencer.h"
#include "store-later.h"

/* A message going out, held until the batch it comes from is committed
 * (with a store only). */
struct held {
	struct buf rec;		/* msgrec bytes */
	struct buf key;		/* its RSQ_KIND_WAIT record's key */
	uint64_t gap_lo, gap_hi;
	int gap;
};

struct resequencer {
	struct resequencer_opt opt;
	struct resequencer_out out;
	struct store *store;
	struct rsq_table *table;
	struct keyset *done;	/* keys of complete groups */
	struct resequencer_stats stats;
	struct held *held;
	size_t nheld, aheld;
	/* Groups changed since the last sync, their records to rewrite;
	 * a group's dirty is its index here + 1. */
	struct rsq_group **dirty;
	size_t ndirty, adirty;
	/* Store changes that wait for the held messages to be out: their
	 * records deleted, forgotten groups' too, complete keys kept. */
	struct store_later after;
	struct buf rec, key, value, block;
	int encoded;		/* rec holds the message being added */
};

/* Send on what g has ready, the first after a gap marked; a complete
 * group is forgotten: 1 then, else 0. */
int rsq_run_drain(struct resequencer *r, struct rsq_group *g,
		  const uint64_t *gap, int64_t now);

#endif
