/*
 * store-compact: rewriting the log with only the live records, so that a
 * store that keeps changing does not grow without bound (see msg-store(5),
 * COMPACTION).
 */
#ifndef MSG_STORE_COMPACT_H
#define MSG_STORE_COMPACT_H

#include "store-index.h"
#include "store-log.h"

/* Whether enough of the log is dead for a compaction to pay. */
int compact_due(const struct store_log *l, const struct store_index *x);
/* Write the records of x and one commit to a new log, make it current
 * and durable, and drop the old one. 0, or -1 (the failure noted in l). */
int compact_log(struct store_log *l, struct store_index *x);

#endif
