/*
 * resequencer: the run of msg-resequence over the core of resequence.h:
 * numbered messages in, messages out in order, gaps skipped by time or
 * to make room, and with a store the order that keeps every waiting
 * message across a crash. The tool evaluates expressions and owns the
 * channels; it hands messages in and gets them back through struct
 * resequencer_out.
 *
 * With a store, every message is a store record from the batch it came
 * in, and what goes out is held until resequencer_sync(): there the
 * batch's records are committed, then the held messages written, and
 * only once they are out are their records deleted and the groups'
 * next numbers moved on (in the next commit). A crash in between writes
 * them again after the restart, never loses one: doc/design.md,
 * "Stateful tools".
 */
#ifndef MSG_RESEQUENCER_H
#define MSG_RESEQUENCER_H

#include <stdint.h>

#include "buf.h"
#include "header.h"
#include "resequence.h"

struct store;

struct resequencer_out {
	void *ctx;
	/* A message going out: its header block as read (with
	 * Resequence-Gap set when a gap was skipped before it) and its
	 * body: 0, or -1 with why when it cannot be written (its header
	 * block is then over the limit): it goes to invalid. */
	int (*emit)(void *ctx, const char *block, size_t block_len,
		    const char *body, size_t len, struct buf *why);
	/* A message that cannot go out: the tool diverts or refuses it. */
	void (*invalid)(void *ctx, const char *block, size_t block_len,
			const char *body, size_t len, const char *why);
};

enum resequencer_on_full { RSQR_SKIP, RSQR_BLOCK, RSQR_FAIL };
enum resequencer_at_end { RSQR_FLUSH, RSQR_FAIL_END, RSQR_KEEP };

struct resequencer_opt {
	struct rsq_limits lim;
	enum resequencer_on_full on_full;
	int64_t forget_ms;
};

/* One message for resequencer_add. */
struct rsq_input {
	const char *key;	/* the group (may be empty) */
	size_t key_len;
	uint64_t num;
	int marker;		/* Sequence-Size 0 and no number: pass it */
	int size_known;
	uint64_t size;		/* its Sequence-Size */
	const char *block;	/* its header block as read */
	size_t block_len;
	const char *body;
	size_t len;
	int64_t now;		/* ms: wall clock or the Timestamp (--clock) */
};

/* What became of a message. */
enum rsq_result {
	RSQR_OUT,		/* out (or held to go out), maybe more behind */
	RSQR_WAITS,
	RSQR_DUP_EMITTED,	/* duplicate: out already */
	RSQR_DUP_WAITING,	/* duplicate: waiting already */
	RSQR_LATE_SKIPPED,	/* late: passed over as a gap */
	RSQR_LATE_COMPLETE,	/* late: its group is complete */
	RSQR_INVALID,		/* why says how */
	RSQR_FULL,		/* block and fail: why is "-C" or "--max-bytes" */
};

struct resequencer_stats {
	uint64_t out, gaps, skipped, most;
};

struct resequencer;

/* store may be NULL (state in memory only). */
struct resequencer *resequencer_new(const struct resequencer_opt *opt,
				    const struct resequencer_out *out,
				    struct store *store);
void resequencer_free(struct resequencer *r);
/* Take the waiting messages, groups and complete keys back from the
 * store, and send on what is ready: 0, or -1 with errno (EIO: a record
 * failed its check; EINVAL: a damaged record). */
int resequencer_restore(struct resequencer *r, int64_t now);
/* One message: 0 with *res (and why, reset first, for RSQR_INVALID and
 * RSQR_FULL), or -1 with errno when the store failed. */
int resequencer_add(struct resequencer *r, const struct rsq_input *in,
		    enum rsq_result *res, struct buf *why);
/* Skip the gaps whose time ran out by now, forget idle groups and
 * complete keys past --forget: 0, or -1 (store). */
int resequencer_tick(struct resequencer *r, int64_t now);
/* The next -T deadline, 0 if none (absolute ms). */
int64_t resequencer_next_deadline(const struct resequencer *r);
/* Skip the oldest gap (--on-full block after its wait): 1 skipped, 0
 * nothing waits, -1 (store). */
int resequencer_skip_oldest(struct resequencer *r, int64_t now);
/* The end of input: what becomes of the waiting messages (flush: out,
 * gaps marked; fail without a store: to invalid; else they stay);
 * returns how many waited, and in how many groups. */
int64_t resequencer_end(struct resequencer *r, enum resequencer_at_end how,
			uint64_t *groups, int64_t now);
/* Messages held for a commit: commit the batch, write them, queue
 * their records' deletion. 0, or -1 with errno. Without a store: 0. */
int resequencer_sync(struct resequencer *r);
uint64_t resequencer_held(const struct resequencer *r);

uint64_t resequencer_waiting(const struct resequencer *r);
const struct resequencer_stats *resequencer_stats(const struct resequencer *r);

/* block with Resequence-Gap: LO (one number) or LO-HI, in place of any,
 * into out (frame_block_set). */
void rsq_gap_block(struct buf *out, const char *block, size_t n, uint64_t lo,
		   uint64_t hi);
/* Why a number cannot be placed (RSQ_BELOW_START, RSQ_PAST_END), into
 * why: "sequence number 9 is past Sequence-Size 5". */
void rsq_place_why(struct buf *why, enum rsq_place p, const struct rsq_group *g,
		   uint64_t num, uint64_t start);

/* ---- store records (resequence-record.c) ----
 * RSQ_KIND_WAIT: a message of a group: key msgrec_key of the group key
 * and its number (a walk meets a group's messages in order); value its
 * msgrec bytes. Put when it comes, deleted once it is
 * out. RSQ_KIND_GROUP: a group's numbers: key the group key; value
 * "FIRST NEXT STARTED SIZE-KNOWN SIZE LATEST CREATED\n" (LATEST: when
 * it last took a message; CREATED: its order among groups) and its
 * skipped ranges as
 * "LO-HI,..." . RSQ_KIND_DONE: a complete group's key, value when it
 * completed, deadline when it is forgotten. */
#define RSQ_KIND_WAIT "rsq-wait"
#define RSQ_KIND_GROUP "rsq-group"
#define RSQ_KIND_DONE "rsq-done"

void rsq_group_value(struct buf *out, const struct rsq_group *g);
/* Set g's numbers from a value: 0, or -1 (EINVAL). */
int rsq_group_decode(struct rsq_group *g, const char *value, size_t len);

#endif
