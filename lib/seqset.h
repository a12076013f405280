/*
 * seqset: which numbers of a sequence (Sequence-Number 1, 2, ...) have
 * arrived, as sorted disjoint ranges: memory follows the gaps, not the
 * numbers' values, so in-order arrival of any length is one range and a
 * number of 4000000000 costs what 4 costs.
 */
#ifndef MSG_SEQSET_H
#define MSG_SEQSET_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"

/* The largest Sequence-Number or Sequence-Size taken: what an XPath
 * number (a double) still holds exactly. */
#define SEQ_NUMBER_MAX 9007199254740991ull

struct seq_range {
	uint64_t lo, hi;	/* inclusive */
};

struct seqset {
	struct seq_range *v;
	size_t n, alloc;
	uint64_t count;		/* numbers in the set */
};

#define SEQSET_INIT { NULL, 0, 0, 0 }

void seqset_init(struct seqset *s);
void seqset_release(struct seqset *s);
/* Add n (1..SEQ_NUMBER_MAX): 1 if it was new, 0 if already there. */
int seqset_add(struct seqset *s, uint64_t n);
int seqset_has(const struct seqset *s, uint64_t n);
/* Add lo..hi, every number of which is above the set's highest (any
 * number, 0 included: the set does not look at what they mean). */
void seqset_append(struct seqset *s, uint64_t lo, uint64_t hi);
/* The highest number in the set, or 0 when it is empty. */
uint64_t seqset_max(const struct seqset *s);
/* Does the set hold exactly 1..size? (size 0: is it empty?) */
int seqset_complete(const struct seqset *s, uint64_t size);
/*
 * The numbers of 1..size not in the set, as Aggregate-Missing spells
 * them: "3,5-7", appended to out. size 0 means unknown: the gaps below
 * the highest number, then an open range after it ("3,9-").
 */
void seqset_missing(const struct seqset *s, uint64_t size, struct buf *out);

/*
 * Parse a Sequence-Number (min 1) or Sequence-Size (min 0): decimal
 * digits only, at most SEQ_NUMBER_MAX. 0, or -1 with why ("not a
 * number", "out of range").
 */
int seq_parse(const char *s, uint64_t min, uint64_t *out, const char **why);

#endif
