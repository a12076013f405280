/*
 * aggregate-closed: the groups msg-aggregate released, remembered for
 * --remember by their key and a 64-bit digest of each member's
 * Message-Id, so that a message for a released group is told apart: one
 * of its members again (a redelivery, as after a crash: a duplicate) or
 * a member that came too late. Memory is bounded by a count of keys and
 * of digests, the oldest forgotten first; with --state each closed group
 * is one store record (AGG_KIND_CLOSED), read back after a restart.
 */
#ifndef MSG_AGGREGATE_CLOSED_H
#define MSG_AGGREGATE_CLOSED_H

#include <stddef.h>
#include <stdint.h>

#include "aggregate.h"
#include "buf.h"

struct store;
struct agg_closed;

/* Keys live remember_ms after their release; at most max_keys of them
 * and max_ids member digests in all. */
struct agg_closed *agg_closed_new(int64_t remember_ms, uint64_t max_keys,
				  uint64_t max_ids);
void agg_closed_free(struct agg_closed *c);

/* The store record's value for g released at now: the time, a space,
 * the digests of its members' Message-Ids (8 bytes each, in order). */
void agg_closed_value(struct buf *out, const struct agg_group *g, int64_t now);
/* Remember g as released at now. */
void agg_closed_add(struct agg_closed *c, const struct agg_group *g, int64_t now);

enum agg_closed_verdict {
	AGG_NOT_CLOSED,		/* no group of the key was released (or it was
				 * forgotten) */
	AGG_REDELIVERED,	/* a member of the released group, again */
	AGG_LATE,		/* any other message for the key */
};
/* A message for key with Message-Id id (NULL: none, never a member
 * known again) at now. */
enum agg_closed_verdict agg_closed_check(struct agg_closed *c, const char *key,
					 size_t key_len, const char *id, int64_t now);
/* Forget what expired at now. */
void agg_closed_expire(struct agg_closed *c, int64_t now);
/* The released groups of the store's AGG_KIND_CLOSED records, those
 * without digests (written before they were kept) as groups no member
 * is known of: 0, or -1 with errno (EINVAL: a damaged record). */
int agg_closed_restore(struct agg_closed *c, struct store *s, int64_t now);

#endif
