/* exec-pool: up to N children at once, results in order (exec-pool.h). */
#include "exec-pool.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "diag.h"
#include "io.h"

/* Without a pidfd a child's exit is looked for this often. */
#define REAP_POLL_MS 50

struct exec_pool {
	struct exec_opt opt;
	void (*done)(void *ctx, struct exec_job *j);
	void *ctx;
	struct exec_child *slots;	/* opt.parallel of them */
	unsigned running;
	/* Jobs taken and not yet handed back, in input order. */
	struct exec_job **jobs;
	size_t njobs, cap;
	struct exec_pool_counts counts;
	int stopping;
};

struct exec_pool *exec_pool_new(const struct exec_opt *o,
				void (*done)(void *ctx, struct exec_job *j),
				void *ctx)
{
	struct exec_pool *p = xcalloc(1, sizeof(*p));

	p->opt = *o;
	p->done = done;
	p->ctx = ctx;
	p->slots = xcalloc(o->parallel, sizeof(*p->slots));
	p->cap = 4 * (size_t)o->parallel;
	p->jobs = xcalloc(p->cap, sizeof(*p->jobs));
	return p;
}

void exec_pool_free(struct exec_pool *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->njobs; i++)
		exec_job_free(p->jobs[i]);
	free(p->jobs);
	free(p->slots);
	free(p);
}

const struct exec_pool_counts *exec_pool_counts(const struct exec_pool *p)
{
	return &p->counts;
}

/* May j's next attempt start at now? */
static int startable(const struct exec_job *j, int64_t now)
{
	return j->state == EXEC_JOB_WAITING ||
	       (j->state == EXEC_JOB_RETRY_WAIT && j->retry_at <= now);
}

/* Start what may start now in free slots: 0, or -1 (errno). */
static int start_jobs(struct exec_pool *p, int64_t now)
{
	for (size_t i = 0; i < p->njobs && p->running < p->opt.parallel && !p->stopping; i++) {
		struct exec_job *j = p->jobs[i];
		unsigned s = 0;
		if (!startable(j, now))
			continue;
		while (p->slots[s].job)
			s++;
		j->attempt++;
		if (exec_child_start(&p->slots[s], j, &p->opt, now) < 0) {
			p->slots[s].job = NULL;
			return -1;
		}
		j->state = EXEC_JOB_RUNNING;
		p->counts.runs++;
		p->running++;
	}
	return 0;
}

static int listed(const struct exec_opt *o, int code)
{
	for (size_t i = 0; i < o->nretry_on; i++)
		if (o->retry_on[i] == code)
			return 1;
	return 0;
}

int64_t exec_retry_delay(const struct exec_opt *o, const struct exec_job *j)
{
	int64_t delay = o->retry_delay;

	if (j->end == EXEC_STOPPED || exec_job_ok(j) || j->attempt > o->retries ||
	    !(o->retry_any || (j->end == EXEC_EXITED && listed(o, j->status))))
		return 0;
	for (unsigned a = 1; a < j->attempt && delay < o->retry_max; a++)
		delay *= 2;
	if (delay > o->retry_max)
		delay = o->retry_max;
	return delay ? delay : 1;
}

/* j's attempt ended: try again later, or it is final. */
static void attempt_ended(struct exec_pool *p, struct exec_job *j, int64_t now)
{
	int64_t delay = p->stopping ? 0 : exec_retry_delay(&p->opt, j);

	if (j->end == EXEC_TIMED_OUT)
		p->counts.timed_out++;
	j->state = delay ? EXEC_JOB_RETRY_WAIT : EXEC_JOB_FINAL;
	if (!delay)
		return;
	j->retry_at = now + delay;
	p->counts.retried++;
}

/* Hand back what is final: the first jobs in order, or any. */
static void hand_back(struct exec_pool *p)
{
	size_t i = 0;

	while (i < p->njobs) {
		struct exec_job *j = p->jobs[i];
		if (j->state != EXEC_JOB_FINAL) {
			if (!p->opt.unordered)
				break;
			i++;
			continue;
		}
		memmove(p->jobs + i, p->jobs + i + 1, (p->njobs - i - 1) * sizeof(*p->jobs));
		p->njobs--;
		if (j->end == EXEC_STOPPED)
			p->counts.cut_short++;
		else
			p->done(p->ctx, j);
		exec_job_free(j);
	}
}

/* The poll timeout: the nearest deadline of a child or a retry. */
static int wait_ms(const struct exec_pool *p, int64_t now, int no_pidfd)
{
	int64_t next = 0;

	for (unsigned i = 0; i < p->opt.parallel; i++) {
		int64_t d = p->slots[i].job ? exec_child_deadline(&p->slots[i]) : 0;
		if (d && (!next || d < next))
			next = d;
	}
	for (size_t i = 0; i < p->njobs; i++)
		if (p->jobs[i]->state == EXEC_JOB_RETRY_WAIT && !p->stopping &&
		    (!next || p->jobs[i]->retry_at < next))
			next = p->jobs[i]->retry_at;
	if (no_pidfd && (!next || next > now + REAP_POLL_MS))
		next = now + REAP_POLL_MS;
	if (!next)
		return -1;
	return next <= now ? 0 : next - now > 60000 ? 60000 : (int)(next - now);
}

/* A stop was asked for: children in hand get --kill-after to end. */
static void begin_stop(struct exec_pool *p, int64_t now)
{
	p->stopping = 1;
	for (unsigned i = 0; i < p->opt.parallel; i++) {
		struct exec_child *c = &p->slots[i];
		if (c->job && !c->killed_for &&
		    (!c->term_at || c->term_at > now + p->opt.kill_after))
			c->term_at = now + p->opt.kill_after;
		c->killed_for = c->job ? 0 : c->killed_for;
	}
	/* What has not started never will. */
	for (size_t i = 0; i < p->njobs; i++)
		if (p->jobs[i]->state == EXEC_JOB_WAITING ||
		    p->jobs[i]->state == EXEC_JOB_RETRY_WAIT) {
			p->jobs[i]->state = EXEC_JOB_FINAL;
			p->jobs[i]->end = EXEC_STOPPED;
		}
}

/* One round: start, wait, step every child, hand back. 0 or -1. */
static int round_once(struct exec_pool *p)
{
	struct pollfd fds[4 * 64];
	struct pollfd *pf = p->opt.parallel > 64 ?
		xcalloc(4 * (size_t)p->opt.parallel, sizeof(*pf)) : fds;
	int at[64 + 1], *pos = p->opt.parallel > 64 ?
		xcalloc((size_t)p->opt.parallel + 1, sizeof(int)) : at;
	int n = 0, no_pidfd = 0, r = 0;
	int64_t now = clock_now_ms();

	if (io_stop_requested && !p->stopping)
		begin_stop(p, now);
	if (start_jobs(p, now) < 0) {
		r = -1;
		goto out;
	}
	for (unsigned i = 0; i < p->opt.parallel; i++) {
		pos[i] = n;
		if (p->slots[i].job) {
			n += exec_child_poll(&p->slots[i], pf + n);
			no_pidfd |= p->slots[i].pidfd < 0;
		}
	}
	pos[p->opt.parallel] = n;
	if (n || wait_ms(p, now, no_pidfd) >= 0)
		poll(pf, (nfds_t)n, wait_ms(p, now, no_pidfd));
	now = clock_now_ms();
	for (unsigned i = 0; i < p->opt.parallel; i++) {
		struct exec_child *c = &p->slots[i];
		if (!c->job)
			continue;
		if (p->stopping && c->term_at && now >= c->term_at && !c->killed_for)
			exec_child_stop(c, &p->opt, now, EXEC_STOPPED);
		if (exec_child_step(c, pf + pos[i], pos[i + 1] - pos[i], &p->opt, now)) {
			attempt_ended(p, c->job, now);
			c->job = NULL;
			p->running--;
		}
	}
	hand_back(p);
out:
	if (pf != fds)
		free(pf);
	if (pos != at)
		free(pos);
	return r;
}

int exec_pool_submit(struct exec_pool *p, struct exec_job *j)
{
	size_t room = p->opt.unordered ? p->opt.parallel : p->cap;

	while (p->njobs >= room)
		if (round_once(p) < 0)
			return -1;
	if (p->stopping) {
		p->counts.cut_short++;
		exec_job_free(j);
		return 0;
	}
	p->jobs[p->njobs++] = j;
	/* Start it now if a slot is free: the reader may wait next. */
	return start_jobs(p, clock_now_ms());
}

int exec_pool_drain(struct exec_pool *p)
{
	while (p->njobs)
		if (round_once(p) < 0)
			return -1;
	return 0;
}
