/*
 * resequence-batch: msg-resequence --batch: every message is kept until
 * the end of input, then each group comes out sorted by number (stable),
 * in the order the groups were first seen. The messages' bytes are kept
 * in memory up to max_bytes and in an unlinked temporary file (TMPDIR)
 * beyond, so that only an index of 40 bytes a message grows in memory.
 */
#ifndef MSG_RESEQUENCE_BATCH_H
#define MSG_RESEQUENCE_BATCH_H

#include "resequencer.h"

struct rsq_batch_out {
	void *ctx;
	/* A message going out, as resequencer_out.emit. */
	int (*emit)(void *ctx, const char *block, size_t block_len,
		    const char *body, size_t len, struct buf *why);
	void (*invalid)(void *ctx, const char *block, size_t block_len,
			const char *body, size_t len, const char *why);
	/* The second and later message of a number. */
	void (*duplicate)(void *ctx, const char *block, size_t block_len,
			  const char *body, size_t len, uint64_t num);
};

struct rsq_batch;

struct rsq_batch *rsq_batch_new(const struct rsq_limits *lim);
void rsq_batch_free(struct rsq_batch *b);
/*
 * Keep one message. 0 with *res RSQR_WAITS (kept), RSQR_OUT (a marker:
 * out now, through out) or RSQR_INVALID (why, reset first, says how, as
 * resequencer_add says it); -1 with errno when the temporary file
 * failed.
 */
int rsq_batch_add(struct rsq_batch *b, const struct rsq_input *in,
		  const struct rsq_batch_out *out, enum rsq_result *res,
		  struct buf *why);
/* Everything out, gaps marked, and what is past its group's
 * Sequence-Size to invalid: 0, or -1 with errno (the temporary file). */
int rsq_batch_finish(struct rsq_batch *b, const struct rsq_batch_out *out,
		     struct resequencer_stats *st);
/* Messages kept, and whether they spilled to the file. */
uint64_t rsq_batch_count(const struct rsq_batch *b);
int rsq_batch_spilled(const struct rsq_batch *b);

#endif
