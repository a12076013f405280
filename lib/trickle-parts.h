/*
 * trickle-parts: the feed's insides, shared by trickle.c (entities and
 * what comes in) and trickle-sync.c (what is sent after a commit, and the
 * state a run starts from), and by nothing else.
 */
#ifndef MSG_TRICKLE_PARTS_H
#define MSG_TRICKLE_PARTS_H

#include "header.h"
#include "trickle.h"

struct trickle {
	struct trickle_opt opt;
	struct store *store;
	struct trickle_out out;
	struct trickle_counts counts;
	uint64_t in_flight;
	/* Entities failed and waiting for a retry (a deadline), and whether
	 * tr->e was one as loaded: save moves the count by the difference. */
	uint64_t retry_waiting;
	int loaded_waiting;
	/* Sent once the batch is committed: each a version record key
	 * (length, 4 bytes, then the key) and the attempt (8 bytes). */
	struct buf sends;
	/* Entities ready but held back by --max-in-flight, first come
	 * first: each key's length (4 bytes), then the key. */
	struct buf ready;
	size_t ready_head;
	struct trickle_entity e;
	struct headers h;
	struct buf key, vkey, rec, scratch;
};

/* Is e failed and due to be tried again? */
int trickle_waits_for_retry(const struct trickle_entity *e);
/* key's entity into tr->e: 1, 0 when there is none (a new idle one), -1. */
int trickle_load(struct trickle *tr, const char *key, size_t klen);
/* tr->e as key's entity record, the count of those waiting kept with it. */
int trickle_save(struct trickle *tr, const char *key, size_t klen);
/* key waits for a slot under --max-in-flight. */
void trickle_hold_ready(struct trickle *tr, const char *key, size_t klen);
/* Entities held back go in flight while slots are free: 0 or -1. */
int trickle_fill_slots(struct trickle *tr, int64_t now);

#endif
