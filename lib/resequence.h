/*
 * resequence: the core of the Resequencer (msg-resequence): groups of
 * numbered messages, each group with the number it expects next, the
 * messages that came early and wait for it, the gaps it skipped, and
 * the limits on what may wait. Nothing here reads input, writes output,
 * keeps a store or evaluates expressions: the run (resequencer.h) does,
 * and hands numbers in.
 *
 * For each message, in short:
 *
 *	g = rsq_group(t, key, len, 1);
 *	switch (rsq_place(t, g, num)) {
 *	case RSQ_NEXT:	emit it; rsq_advance(t, g); then
 *			while ((m = rsq_take_next(t, g))) emit m;
 *	case RSQ_LATER:	rsq_wait(t, g, ...) (RSQ_FULL: make room first)
 *	default:	a duplicate, late, or invalid
 *	}
 *	timers:	while ((g = rsq_expired(t, now))) rsq_skip(t, g, ...), emit
 */
#ifndef MSG_RESEQUENCE_H
#define MSG_RESEQUENCE_H

#include <stddef.h>
#include <stdint.h>

#include "seqset.h"

struct rsq_limits {
	uint64_t start;		/* every group's first number */
	int start_first;	/* --start first: the lowest of the first window */
	uint64_t window;
	int64_t timeout_ms;	/* -T: how long a gap is waited for; 0: for ever */
	uint64_t capacity;	/* messages waiting in all groups; 0: no limit */
	uint64_t max_bytes;	/* their bytes; 0: no limit */
};

struct rsq_group;

/* A message that waits: its bytes are the caller's (msgrec.h). */
struct rsq_msg {
	struct rsq_group *g;
	struct rsq_msg *older, *newer;	/* the group's waiting, by arrival */
	uint64_t num;
	int64_t arrived;
	size_t len;
	char rec[];
};

/* A heap entry keeps the number beside the message, so that sifting
 * does not reach into messages scattered in memory. */
struct rsq_wait {
	uint64_t num;
	struct rsq_msg *m;
};

struct rsq_group {
	char *key;		/* NUL-terminated */
	size_t key_len;
	uint64_t first;		/* its start, once started */
	uint64_t next;		/* the number it expects, once started */
	int started;		/* 0 only while --start first looks */
	uint64_t size;		/* Sequence-Size, when size_known */
	int size_known;
	struct seqset skipped;	/* numbers passed over as gaps */
	struct rsq_wait *wait;	/* a min-heap by number */
	size_t nwait, await;
	struct rsq_msg *oldest, *newest;
	int64_t latest;		/* when it last took a message */
	uint64_t created;	/* order of creation */
	/* the table's bookkeeping */
	uint32_t hash;
	struct rsq_group *chain;
	struct rsq_group *prev, *next_made;	/* in order of creation */
	size_t heap_pos, idle_pos;
	int dirty;		/* the run's: changed since it kept g */
};

struct rsq_table;

struct rsq_table *rsq_table_new(const struct rsq_limits *lim);
void rsq_table_free(struct rsq_table *t);
void rsq_table_set_limits(struct rsq_table *t, const struct rsq_limits *lim);

/* The group of key, made (started per the limits) when create is set
 * and there is none; NULL otherwise. */
struct rsq_group *rsq_group(struct rsq_table *t, const char *key, size_t len,
			    int create, int64_t now);
/* Forget g and free it with what waits in it. */
void rsq_forget(struct rsq_table *t, struct rsq_group *g);
/* After restoring groups and setting their latest and created from
 * records: creation order and idle times as the records say, and new
 * groups made after them. */
void rsq_restored(struct rsq_table *t);
/* Groups in order of creation: first with NULL. */
struct rsq_group *rsq_next_group(const struct rsq_table *t,
				 const struct rsq_group *after);

/* Where number num stands in g. */
enum rsq_place {
	RSQ_NEXT,		/* what g expects now */
	RSQ_LATER,		/* to wait */
	RSQ_EMITTED,		/* below next, and out: a duplicate */
	RSQ_WAITING,		/* waiting already: a duplicate */
	RSQ_SKIPPED,		/* below next, passed over as a gap: late */
	RSQ_BELOW_START,	/* below the start given: invalid */
	RSQ_PAST_END,		/* past Sequence-Size: invalid */
};
enum rsq_place rsq_place(const struct rsq_table *t, const struct rsq_group *g,
			 uint64_t num);

/* A Sequence-Size for g: 0, or -1 when g knows another. */
int rsq_set_size(struct rsq_group *g, uint64_t size);
/* Has g's last number gone out? */
int rsq_complete(const struct rsq_group *g);

#define RSQ_FULL (-2)
/*
 * Let a message wait in g (its place RSQ_LATER): the table takes rec
 * (len bytes) and arrival. 0; RSQ_FULL when a limit would be passed,
 * nothing changed, *why the option ("-C", "--max-bytes").
 */
int rsq_wait(struct rsq_table *t, struct rsq_group *g, uint64_t num,
	     int64_t arrived, const void *rec, size_t len, const char **why);
/* g's next number went out by other means (it never waited). */
void rsq_advance(struct rsq_table *t, struct rsq_group *g);
/* The waiting message g expects now, out of the table and next moved
 * past it (the caller frees it), or NULL. Restoring puts back messages
 * below next: those come out first. */
struct rsq_msg *rsq_take_next(struct rsq_table *t, struct rsq_group *g);
/*
 * Stop waiting for g's gap: next becomes its lowest waiting number, and
 * the numbers passed over (*lo..*hi) are remembered as skipped. 1 when
 * a gap was skipped; 0 when g had not started and now has (--start
 * first: the lowest waiting is the start; no gap); -1 when nothing waits.
 */
int rsq_skip(struct rsq_table *t, struct rsq_group *g, uint64_t *lo,
	     uint64_t *hi);
/* Mark the numbers lo..hi of g skipped and next past them (restoring). */
void rsq_restore_skipped(struct rsq_group *g, uint64_t lo, uint64_t hi);

/* The waiting group whose oldest waiting message came first: the oldest
 * gap. NULL when nothing waits. */
struct rsq_group *rsq_oldest(const struct rsq_table *t);
/* The earliest -T deadline, 0 if none. */
int64_t rsq_next_deadline(const struct rsq_table *t);
/* A group whose gap deadline is at or before now, or NULL. */
struct rsq_group *rsq_expired(const struct rsq_table *t, int64_t now);
/* A group with nothing waiting that took no message since before
 * now - idle_ms, or NULL. */
struct rsq_group *rsq_idle(struct rsq_table *t, int64_t now, int64_t idle_ms);

uint64_t rsq_waiting(const struct rsq_table *t);
uint64_t rsq_waiting_bytes(const struct rsq_table *t);
uint64_t rsq_groups(const struct rsq_table *t);

#endif
