/*
 * store-later: store changes that must wait. A stateful tool holds back
 * what it sends until the batch it comes from is committed; the records
 * those results came from may go only once the results are written, so
 * their deletion (and what is kept in their place) waits in this queue,
 * applied after the results are out and committed with the next batch.
 */
#ifndef MSG_STORE_LATER_H
#define MSG_STORE_LATER_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"

struct store;

struct store_later {
	struct buf q;
};

void store_later_init(struct store_later *l);
void store_later_release(struct store_later *l);
/* Queue a deletion or a put; kind is kept by address (a constant). */
void store_later_delete(struct store_later *l, const char *kind,
			const void *key, size_t key_len);
void store_later_put(struct store_later *l, const char *kind, const void *key,
		     size_t key_len, const void *value, size_t value_len,
		     int64_t deadline);
/* Hand the queue to the store in order and empty it: 0, or the store's
 * -1 (errno and store_last_error set). */
int store_later_apply(struct store_later *l, struct store *s);
/* Delete the records whose deadline is at or before now: 0 or -1. */
int store_delete_expired(struct store *s, int64_t now);

#endif
