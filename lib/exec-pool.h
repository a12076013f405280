/*
 * exec-pool: msg-exec's children at once (-P): jobs started as slots
 * come free, retried after a delay that doubles, and handed back when
 * final, in input order unless unordered. Memory is bounded: no more
 * than 4 x parallel jobs are held, running or waiting for their turn.
 */
#ifndef MSG_EXEC_POOL_H
#define MSG_EXEC_POOL_H

#include "exec.h"

struct exec_pool_counts {
	uint64_t runs, retried, timed_out, cut_short;
};

struct exec_pool;

/* done gets each job once final (the pool frees it after). */
struct exec_pool *exec_pool_new(const struct exec_opt *o,
				void (*done)(void *ctx, struct exec_job *j),
				void *ctx);
void exec_pool_free(struct exec_pool *p);
/* Take j (the pool owns it), waiting while the pool is full: 0, or -1
 * with errno when a child could not be made. */
int exec_pool_submit(struct exec_pool *p, struct exec_job *j);
/* Run until every job taken is final and handed back: 0 or -1. After a
 * stop request, children in hand get --kill-after to finish, then are
 * killed, and jobs not started are dropped (counted cut_short). */
int exec_pool_drain(struct exec_pool *p);
const struct exec_pool_counts *exec_pool_counts(const struct exec_pool *p);

/* The retry rules, the pool's and the coprocess's: how long j waits
 * before its next attempt (--retry-delay doubled per attempt made, up
 * to --retry-max, at least 1 ms), or 0 when its last attempt is final
 * (a success, not a --retry-on failure, or no attempt left). */
int64_t exec_retry_delay(const struct exec_opt *o, const struct exec_job *j);

#endif
