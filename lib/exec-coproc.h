/*
 * exec-coproc: msg-exec --coprocess, one process spoken to in frames
 * (exec-coproc.c). The same jobs, results and counters as exec-pool.h.
 */
#ifndef MSG_EXEC_COPROC_H
#define MSG_EXEC_COPROC_H

#include "exec-pool.h"

struct exec_coproc;

/* argv and envp stay the caller's; done as exec_pool_new's. */
struct exec_coproc *exec_coproc_new(const struct exec_opt *o, char **argv,
				    char **envp,
				    void (*done)(void *ctx, struct exec_job *j),
				    void *ctx);
/* Close its stdin, give it --kill-after to end, then kill it; requests
 * still without a reply are counted cut short. */
void exec_coproc_end(struct exec_coproc *c);
void exec_coproc_free(struct exec_coproc *c);
/* Take j (owned from here), waiting while the window is full: 0, or -1
 * with errno when the process could not be started. */
int exec_coproc_submit(struct exec_coproc *c, struct exec_job *j);
/* Until every request taken is answered or failed: 0 or -1. */
int exec_coproc_drain(struct exec_coproc *c);
/* runs: processes started. */
const struct exec_pool_counts *exec_coproc_counts(const struct exec_coproc *c);

#endif
