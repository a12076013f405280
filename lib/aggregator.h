/*
 * aggregator: the run of msg-aggregate over the core of aggregate.h:
 * members in, released groups out, and with a store the order that
 * keeps them across a crash. The tool owns the channels: it hands
 * members in and gets results through struct aggregator_out; the
 * expressions and stylesheet that judge an aggregate are aggregate-eval's.
 *
 * With a store, every change is a store record (aggregate.h) and a
 * released group's message is held back until aggregator_sync(): there
 * the members are committed, then the held results written and made
 * durable, and only then are the released groups' records deleted (in
 * the next commit). A crash between the two commits writes a result
 * again after the restart, never loses one: doc/design.md,
 * "Stateful tools".
 */
#ifndef MSG_AGGREGATOR_H
#define MSG_AGGREGATOR_H

#include <stdint.h>

#include "aggregate.h"
#include "aggregate-closed.h"
#include "aggregate-eval.h"
#include "buf.h"
#include "header.h"

struct store;

struct aggregator_out {
	void *ctx;
	/* A released group's message: 0, or -1 with why when it cannot be
	 * written (its header block is over the limit): it is then
	 * handed to invalid. */
	int (*emit)(void *ctx, const struct headers *h, const struct buf *body,
		    int partial, struct buf *why);
	/* A group that cannot be one message (why), as one message of
	 * its members' bodies joined; the tool diverts or refuses it. */
	void (*invalid)(void *ctx, struct headers *h, const struct buf *body,
			const char *why);
};

enum aggregator_on_limit { AGGR_RELEASE_OLDEST, AGGR_BLOCK, AGGR_FAIL };
enum aggregator_at_end { AGGR_FLUSH, AGGR_DISCARD, AGGR_FAIL_END, AGGR_KEEP };

struct aggregator_opt {
	struct agg_limits lim;
	struct agg_build_opt build;
	int64_t remember_ms;
	enum aggregator_on_limit on_limit;
	int deterministic_ids;	/* ids from the group, Timestamp its latest */
};

struct aggregator_stats {
	uint64_t members, duplicates, released, partial, discarded;
	uint64_t by_reason[AGG_LIMIT + 1];
};

struct aggregator;

/* eval gives --until, -x and a restored member's kind (the caller's,
 * outliving the aggregator); store may be NULL (state in memory only). */
struct aggregator *aggregator_new(const struct aggregator_opt *opt,
				  const struct aggregator_out *out,
				  struct agg_eval *eval, struct store *store);
void aggregator_free(struct aggregator *a);

/* Rebuild the groups and closed keys from the store: 0, or -1 with
 * errno (EIO: a record failed its check; EINVAL: a damaged record). */
int aggregator_restore(struct aggregator *a, int64_t now);

/* A message for key with Message-Id id (or NULL), when no group of key
 * is open: is key's group released and remembered, and was the message
 * one of its members (a redelivery) or not (late)? */
enum agg_closed_verdict aggregator_closed(struct aggregator *a, const char *key,
					  size_t len, const char *id, int64_t now);

/*
 * Add a member (in->serial 0). Completion by sequence, count and until is
 * checked and the group released when met. AGG_FULL_* only when the
 * policy could not make room (block and fail; release-oldest only for
 * a body over max_bytes by itself, which no release would make room
 * for): *why names the limit. -1 (with errno) when the store failed.
 */
int aggregator_add(struct aggregator *a, struct agg_input *in,
		   enum agg_added *res, const char **why);
/* Release key's group now (reason close). With none open, and key not
 * just released (by the closing message as a member), release an empty
 * one of h's Content-Type when empty is set. 1 released, 0 none, -1
 * store failure. */
int aggregator_close(struct aggregator *a, const char *key, size_t len,
		     const struct headers *h, int empty, int64_t now);
/* Release the groups whose timers ran out by now, forget closed keys
 * past --remember: 0 or -1 (store). */
int aggregator_tick(struct aggregator *a, int64_t now);
/* The next timer, 0 if none (absolute ms). */
int64_t aggregator_next_deadline(struct aggregator *a);
/* The end of input: what becomes of the open groups; returns how many
 * were open (for --at-end fail), or -1 on a store failure. */
int64_t aggregator_end(struct aggregator *a, enum aggregator_at_end how,
		       int64_t now);
/* Results held for a commit waiting: make the state durable, write
 * them, make them durable, queue their groups' deletion. 0, or -1 with
 * errno (store: see store_exit_code; output: EIO after the writer's own
 * error). Without a store: 0. */
int aggregator_sync(struct aggregator *a);
/* Results held back now (a tool syncs when there are many). */
uint64_t aggregator_held(const struct aggregator *a);

uint64_t aggregator_open_groups(const struct aggregator *a);
const struct aggregator_stats *aggregator_stats(const struct aggregator *a);

#endif
