/*
 * resequencer: messages in, messages out in order, in the order of
 * store changes that makes --state crash-safe (resequencer.h).
 */
#include "resequencer.h"
#include "resequencer-parts.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aggregate.h"
#include "frame.h"
#include "msgrec.h"
#include "store.h"
#include "store-later.h"

/* The message being added as a record (once per resequencer_add). */
static void encode(struct resequencer *r, const struct rsq_input *in)
{
	if (r->encoded)
		return;
	msgrec_encode_block(&r->rec, in->now, in->block, in->block_len, in->body,
			    in->len);
	r->encoded = 1;
}

/* Complete keys kept at most, the oldest forgotten first: a bound on
 * their memory whatever --forget says. */
#define DONE_KEYS_MAX 1000000

struct resequencer *resequencer_new(const struct resequencer_opt *opt,
				    const struct resequencer_out *out,
				    struct store *store)
{
	struct resequencer *r = xcalloc(1, sizeof(*r));

	r->opt = *opt;
	r->out = *out;
	r->store = store;
	r->table = rsq_table_new(&opt->lim);
	r->done = keyset_new(opt->forget_ms, DONE_KEYS_MAX);
	store_later_init(&r->after);
	buf_init(&r->rec, 0);
	buf_init(&r->key, 0);
	buf_init(&r->value, 0);
	buf_init(&r->block, 0);
	return r;
}

static void held_release(struct held *x)
{
	buf_release(&x->rec);
	buf_release(&x->key);
}

void resequencer_free(struct resequencer *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->nheld; i++)
		held_release(&r->held[i]);
	free(r->held);
	free(r->dirty);
	rsq_table_free(r->table);
	keyset_free(r->done);
	store_later_release(&r->after);
	buf_release(&r->rec);
	buf_release(&r->key);
	buf_release(&r->value);
	buf_release(&r->block);
	free(r);
}

/* ---- store changes ----
 * A failed store call returns -1 with errno set and store_last_error()
 * saying why; those -1s are passed up as they are. */

static void touched(struct resequencer *r, struct rsq_group *g)
{
	if (!r->store || g->dirty > 1)
		return;
	if (r->ndirty == r->adirty) {
		r->adirty = r->adirty ? 2 * r->adirty : 64;
		r->dirty = xrealloc(r->dirty, r->adirty * sizeof(*r->dirty));
	}
	r->dirty[r->ndirty++] = g;
	g->dirty = (int)r->ndirty + 1;
}

/* g goes from memory; with a store its record goes once what it sent
 * is out, and a complete group's key is kept. */
static void forget(struct resequencer *r, struct rsq_group *g, int complete,
		   int64_t now)
{
	if (complete)
		keyset_add(r->done, g->key, g->key_len, now);
	if (r->store) {
		if (g->dirty > 1)
			r->dirty[g->dirty - 2] = NULL;
		store_later_delete(&r->after, RSQ_KIND_GROUP, g->key, g->key_len);
		if (complete) {
			keyset_value(&r->value, now);
			store_later_put(&r->after, RSQ_KIND_DONE, g->key, g->key_len,
					r->value.ptr, r->value.len, now + r->opt.forget_ms);
		}
	}
	rsq_forget(r->table, g);
}

/* Once the held messages are out: the queued changes, and the changed
 * groups' numbers. */
static int apply_after(struct resequencer *r)
{
	if (store_later_apply(&r->after, r->store) < 0)
		return -1;
	for (size_t i = 0; i < r->ndirty; i++) {
		struct rsq_group *g = r->dirty[i];
		if (!g)
			continue;
		g->dirty = 0;
		rsq_group_value(&r->value, g);
		if (store_put(r->store, RSQ_KIND_GROUP, g->key, g->key_len,
			      r->value.ptr, r->value.len, 0) < 0)
			return -1;
	}
	r->ndirty = 0;
	return 0;
}

/* ---- out ---- */

void rsq_gap_block(struct buf *out, const char *block, size_t n, uint64_t lo,
		   uint64_t hi)
{
	char v[48];

	if (lo == hi)
		snprintf(v, sizeof(v), "%llu", (unsigned long long)lo);
	else
		snprintf(v, sizeof(v), "%llu-%llu", (unsigned long long)lo,
			 (unsigned long long)hi);
	frame_block_set(out, block, n, "Resequence-Gap", v);
}

void rsq_place_why(struct buf *why, enum rsq_place p, const struct rsq_group *g,
		   uint64_t num, uint64_t start)
{
	if (p == RSQ_BELOW_START)
		buf_addf(why, "sequence number %llu is below the start %llu",
			 (unsigned long long)num, (unsigned long long)start);
	else
		buf_addf(why, "sequence number %llu is past Sequence-Size %llu",
			 (unsigned long long)num, (unsigned long long)g->size);
}

/* Write one message: its block, its body, a gap before it or not. */
static void deliver(struct resequencer *r, const char *block, size_t n,
		    const char *body, size_t len, const uint64_t *gap)
{
	struct buf why = BUF_INIT;

	if (gap) {
		rsq_gap_block(&r->block, block, n, gap[0], gap[1]);
		block = r->block.ptr;
		n = r->block.len;
	}
	if (r->out.emit(r->out.ctx, block, n, body, len, &why) < 0)
		r->out.invalid(r->out.ctx, block, n, body, len, why.ptr);
	buf_release(&why);
}

static int deliver_rec(struct resequencer *r, const char *rec, size_t len,
		       const uint64_t *gap)
{
	const char *block, *body;
	size_t block_len, body_len;
	int64_t arrived;

	if (msgrec_split(rec, len, &arrived, &block, &block_len, &body, &body_len) < 0)
		return -1;
	deliver(r, block, block_len, body, body_len, gap);
	return 0;
}

/* Hold a message to go out at the next sync; g NULL when it has no
 * record to delete then. */
static void hold(struct resequencer *r, const char *rec, size_t len,
		 const struct rsq_group *g, uint64_t num, const uint64_t *gap)
{
	struct held *x;

	if (r->nheld == r->aheld) {
		r->aheld = r->aheld ? 2 * r->aheld : 64;
		r->held = xrealloc(r->held, r->aheld * sizeof(*r->held));
	}
	x = &r->held[r->nheld++];
	buf_init(&x->rec, len);
	buf_add(&x->rec, rec, len);
	buf_init(&x->key, 0);
	if (g)
		msgrec_key(&x->key, g->key, g->key_len, num);
	x->gap = gap != NULL;
	x->gap_lo = gap ? gap[0] : 0;
	x->gap_hi = gap ? gap[1] : 0;
}

/* A message of g that waited goes out (or is held to). */
static int send_waited(struct resequencer *r, struct rsq_msg *m,
		       const uint64_t *gap)
{
	int rc = 0;

	r->stats.out++;
	if (r->store)
		hold(r, m->rec, m->len, m->g, m->num, gap);
	else
		rc = deliver_rec(r, m->rec, m->len, gap);
	free(m);
	return rc;
}

/* A message that waited cannot go out: the tool diverts it, and with a
 * store its record goes once that is out. */
static void refuse(struct resequencer *r, struct rsq_msg *m, const char *why)
{
	const char *block, *body;
	size_t block_len, len;
	int64_t at;

	if (msgrec_split(m->rec, m->len, &at, &block, &block_len, &body, &len) == 0)
		r->out.invalid(r->out.ctx, block, block_len, body, len, why);
	if (r->store) {
		msgrec_key(&r->key, m->g->key, m->g->key_len, m->num);
		store_later_delete(&r->after, RSQ_KIND_WAIT, r->key.ptr, r->key.len);
	}
	free(m);
}

/* A number that waited before g's Sequence-Size came, and is past it. */
static void refuse_past_end(struct resequencer *r, struct rsq_msg *m)
{
	struct buf why = BUF_INIT;

	rsq_place_why(&why, RSQ_PAST_END, m->g, m->num, 0);
	refuse(r, m, why.ptr);
	buf_release(&why);
}

/* Send on what g has ready, the first after a gap marked; a complete
 * group is forgotten: 1 then, else 0. Numbers past its end waited
 * before its size was known: they are refused, not lost with it. */
int rsq_run_drain(struct resequencer *r, struct rsq_group *g,
		  const uint64_t *gap, int64_t now)
{
	struct rsq_msg *m;
	uint64_t lo, hi;

	while ((m = rsq_take_next(r->table, g))) {
		if (rsq_place(r->table, g, m->num) == RSQ_PAST_END) {
			refuse_past_end(r, m);
			continue;
		}
		/* The bytes were made here from a valid message. */
		(void)send_waited(r, m, gap);
		gap = NULL;
	}
	touched(r, g);
	if (!rsq_complete(g))
		return 0;
	while (rsq_skip(r->table, g, &lo, &hi) >= 0)
		while ((m = rsq_take_next(r->table, g)))
			refuse_past_end(r, m);
	forget(r, g, 1, now);
	return 1;
}

/* Stop waiting for g's gap and send on what follows it: 1 when g was
 * complete then and is gone. */
static int skip(struct resequencer *r, struct rsq_group *g, int64_t now)
{
	uint64_t gap[2];
	int s = rsq_skip(r->table, g, &gap[0], &gap[1]);

	if (s < 0)
		return 0;
	if (s == 1) {
		r->stats.gaps++;
		r->stats.skipped += gap[1] - gap[0] + 1;
	}
	return rsq_run_drain(r, g, s == 1 ? gap : NULL, now);
}

/* ---- in ---- */

static int put_record(struct resequencer *r, const struct rsq_group *g,
		      uint64_t num)
{
	if (!r->store)
		return 0;
	msgrec_key(&r->key, g->key, g->key_len, num);
	return store_put(r->store, RSQ_KIND_WAIT, r->key.ptr, r->key.len,
			 r->rec.ptr, r->rec.len, 0);
}

/* The message g expects: out at once, then what waited behind it. */
static int send_next(struct resequencer *r, struct rsq_group *g,
		     const struct rsq_input *in)
{
	r->stats.out++;
	if (r->store) {
		encode(r, in);
		if (put_record(r, g, in->num) < 0)
			return -1;
		hold(r, r->rec.ptr, r->rec.len, g, in->num, NULL);
	} else {
		deliver(r, in->block, in->block_len, in->body, in->len, NULL);
	}
	rsq_advance(r->table, g);
	(void)rsq_run_drain(r, g, NULL, in->now);
	return 0;
}

/* Let it wait: 0, or RSQ_FULL with why; -1 (store). */
static int let_wait(struct resequencer *r, struct rsq_group *g,
		    const struct rsq_input *in, struct buf *why)
{
	const char *limit;
	int w;

	encode(r, in);
	w = rsq_wait(r->table, g, in->num, in->now, r->rec.ptr, r->rec.len,
			 &limit);

	if (w < 0) {
		buf_addstr(why, limit);
		return w;
	}
	if (rsq_waiting(r->table) > r->stats.most)
		r->stats.most = rsq_waiting(r->table);
	if (put_record(r, g, in->num) < 0)
		return -1;
	/* --start first may have started it. */
	(void)rsq_run_drain(r, g, NULL, in->now);
	return 0;
}

static enum rsq_result placed(struct resequencer *r, enum rsq_place p,
			      const struct rsq_group *g, uint64_t num,
			      struct buf *why)
{
	switch (p) {
	case RSQ_EMITTED: return RSQR_DUP_EMITTED;
	case RSQ_WAITING: return RSQR_DUP_WAITING;
	case RSQ_SKIPPED: return RSQR_LATE_SKIPPED;
	default:
		rsq_place_why(why, p, g, num, r->opt.lim.start);
		return RSQR_INVALID;
	}
}

/* A marker of an empty sequence: nothing to order; its group is done. */
static int pass_marker(struct resequencer *r, const struct rsq_input *in)
{
	struct rsq_group *g = rsq_group(r->table, in->key, in->key_len, 0, in->now);

	r->stats.out++;
	if (r->store) {
		/* No record: it moves no group's number, and until it is
		 * out its input is not done with. */
		encode(r, in);
		hold(r, r->rec.ptr, r->rec.len, NULL, 0, NULL);
	} else {
		deliver(r, in->block, in->block_len, in->body, in->len, NULL);
	}
	if (g)
		forget(r, g, 1, in->now);
	else
		keyset_add(r->done, in->key, in->key_len, in->now);
	return 0;
}

/* One try at placing the message: 1 when done (*res set), 0 when it
 * must wait and there is no room (*why the limit), -1 (store). */
static int place(struct resequencer *r, const struct rsq_input *in,
		 enum rsq_result *res, struct buf *why)
{
	struct rsq_group *g = rsq_group(r->table, in->key, in->key_len, 0, in->now);
	enum rsq_place p;
	int w;

	*res = RSQR_OUT;
	if (!g && keyset_has(r->done, in->key, in->key_len, in->now)) {
		*res = RSQR_LATE_COMPLETE;
		return 1;
	}
	if (in->marker)
		return pass_marker(r, in) < 0 ? -1 : 1;
	if (!g)
		g = rsq_group(r->table, in->key, in->key_len, 1, in->now);
	if (in->size_known && rsq_set_size(g, in->size) < 0) {
		*res = RSQR_INVALID;
		buf_addf(why, "Sequence-Size %llu differs from the group's %llu",
			 (unsigned long long)in->size, (unsigned long long)g->size);
		return 1;
	}
	touched(r, g);
	p = rsq_place(r->table, g, in->num);
	if (p == RSQ_NEXT)
		return send_next(r, g, in) < 0 ? -1 : 1;
	if (p != RSQ_LATER) {
		*res = placed(r, p, g, in->num, why);
		return 1;
	}
	encode(r, in);
	if (r->opt.lim.max_bytes && r->rec.len > r->opt.lim.max_bytes) {
		*res = RSQR_INVALID;
		buf_addstr(why, "the message alone is over --max-bytes");
		return 1;
	}
	*res = RSQR_WAITS;
	if ((w = let_wait(r, g, in, why)) == RSQ_FULL)
		return 0;
	return w < 0 ? -1 : 1;
}

int resequencer_add(struct resequencer *r, const struct rsq_input *in,
		    enum rsq_result *res, struct buf *why)
{
	struct rsq_group *victim;
	int done;

	/* Encoded when it must be kept: a message that goes out at once
	 * without a store is never copied. */
	r->encoded = 0;
	/* Making room may skip the very gap this message was to fill:
	 * each try places it afresh. */
	while (buf_reset(why), (done = place(r, in, res, why)) == 0) {
		if (r->opt.on_full != RSQR_SKIP || !(victim = rsq_oldest(r->table))) {
			*res = RSQR_FULL;
			return 0;
		}
		(void)skip(r, victim, in->now);
	}
	return done < 0 ? -1 : 0;
}

/* ---- time and room ---- */

int resequencer_tick(struct resequencer *r, int64_t now)
{
	struct rsq_group *g;

	while ((g = rsq_expired(r->table, now)))
		(void)skip(r, g, now);
	while ((g = rsq_idle(r->table, now, r->opt.forget_ms)))
		forget(r, g, 0, now);
	keyset_expire(r->done, now);
	if (!r->store)
		return 0;
	/* Complete keys are the only records with deadlines. */
	return store_delete_expired(r->store, now);
}

int64_t resequencer_next_deadline(const struct resequencer *r)
{
	return rsq_next_deadline(r->table);
}

int resequencer_skip_oldest(struct resequencer *r, int64_t now)
{
	struct rsq_group *g = rsq_oldest(r->table);

	if (!g)
		return 0;
	(void)skip(r, g, now);
	return 1;
}

/* --at-end fail without a store: what waits cannot stay; the tool
 * diverts it. */
static void refuse_waiting(struct resequencer *r, struct rsq_group *g)
{
	struct rsq_msg *m;
	uint64_t lo, hi;

	while (rsq_skip(r->table, g, &lo, &hi) >= 0)
		while ((m = rsq_take_next(r->table, g)))
			refuse(r, m, "still waiting at the end of input");
}

int64_t resequencer_end(struct resequencer *r, enum resequencer_at_end how,
			uint64_t *groups, int64_t now)
{
	int64_t waiting = (int64_t)rsq_waiting(r->table);
	struct rsq_group *g, *next;

	*groups = 0;
	for (g = rsq_next_group(r->table, NULL); g; g = next) {
		next = rsq_next_group(r->table, g);
		if (!g->nwait)
			continue;
		++*groups;
		if (how == RSQR_FLUSH) {
			/* Gap after gap, until it is empty or complete (gone). */
			while (!skip(r, g, now) && g->nwait)
				;
		} else if (how == RSQR_FAIL_END && !r->store) {
			refuse_waiting(r, g);
		}
	}
	return waiting;
}

/* ---- durability ---- */

int resequencer_sync(struct resequencer *r)
{
	if (!r->store)
		return 0;
	if (store_commit(r->store) < 0)
		return -1;
	for (size_t i = 0; i < r->nheld; i++) {
		struct held *x = &r->held[i];
		uint64_t gap[2] = { x->gap_lo, x->gap_hi };

		if (deliver_rec(r, x->rec.ptr, x->rec.len, x->gap ? gap : NULL) < 0)
			return -1;
		if (x->key.len)
			store_later_delete(&r->after, RSQ_KIND_WAIT, x->key.ptr,
					   x->key.len);
		held_release(x);
	}
	r->nheld = 0;
	if (frame_writers_flush_all() < 0)
		return -1;
	return apply_after(r);
}

uint64_t resequencer_held(const struct resequencer *r)
{
	return r->nheld;
}

uint64_t resequencer_waiting(const struct resequencer *r)
{
	return rsq_waiting(r->table);
}

const struct resequencer_stats *resequencer_stats(const struct resequencer *r)
{
	return &r->stats;
}
