/*
 * aggregator: members in, released groups out, in the order that makes
 * --state crash-safe (aggregator.h).
 */
#include "aggregator.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aggregate-closed.h"
#include "aggregate-live.h"
#include "clock.h"
#include "frame.h"
#include "hash128.h"
#include "message.h"
#include "store.h"
#include "store-later.h"

/* A released group's message, held until the state it comes from is
 * committed (with a store only). */
struct held {
	struct headers h;
	struct buf body;
	int partial;
	char *invalid;		/* why it is invalid, or NULL */
};

struct aggregator {
	struct aggregator_opt opt;
	struct aggregator_out out;
	struct agg_eval *eval;
	struct store *store;
	struct agg_table *table;
	struct agg_closed *closed;
	struct aggregator_stats stats;
	struct held *held;
	size_t nheld, aheld;
	/* Store changes that wait for the held results to be out: members
	 * deleted, closed keys kept. */
	struct store_later after;
	struct buf scratch, value;
};

/* Kept closed keys, and digests of their members' ids (8 bytes each),
 * beyond which the oldest are forgotten: a bound on their memory
 * whatever --remember says. */
#define CLOSED_KEYS_MAX 1000000
#define CLOSED_IDS_MAX 8000000

struct aggregator *aggregator_new(const struct aggregator_opt *opt,
				  const struct aggregator_out *out,
				  struct agg_eval *eval, struct store *store)
{
	struct aggregator *a = xmalloc(sizeof(*a));

	memset(a, 0, sizeof(*a));
	a->opt = *opt;
	a->out = *out;
	a->eval = eval;
	a->store = store;
	a->table = agg_table_new(&opt->lim);
	a->closed = agg_closed_new(opt->remember_ms, CLOSED_KEYS_MAX, CLOSED_IDS_MAX);
	store_later_init(&a->after);
	buf_init(&a->scratch, 0);
	buf_init(&a->value, 0);
	return a;
}

static void held_release(struct held *h)
{
	headers_release(&h->h);
	buf_release(&h->body);
	free(h->invalid);
}

void aggregator_free(struct aggregator *a)
{
	if (!a)
		return;
	for (size_t i = 0; i < a->nheld; i++)
		held_release(&a->held[i]);
	free(a->held);
	agg_table_free(a->table);
	agg_closed_free(a->closed);
	store_later_release(&a->after);
	buf_release(&a->scratch);
	buf_release(&a->value);
	free(a);
}

/* ---- identities ---- */

/* A UUID of version 8 (RFC 9562: custom) from the group's identity. */
static void deterministic_id(const struct agg_group *g, char out[37])
{
	/* The group key and its members' Message-Ids in order name the
	 * result, so the same group gives the same id. */
	hash128_t h = hash128_init();
	unsigned char b[16];

	hash128_add(&h, g->key, g->key_len + 1);
	for (size_t i = 0; i < g->n; i++) {
		const char *id = agg_member_id(g, &g->m[i]);
		if (id)
			hash128_add(&h, id, g->m[i].id_len);
		hash128_add(&h, "", 1);
	}
	hash128_bytes(h, b);
	b[6] = (unsigned char)((b[6] & 0x0f) | 0x80);
	b[8] = (unsigned char)((b[8] & 0x3f) | 0x80);
	snprintf(out, 37, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-"
		 "%02x%02x%02x%02x%02x%02x", b[0], b[1], b[2], b[3], b[4], b[5],
		 b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
}

static void stamp(struct aggregator *a, const struct agg_group *g,
		  struct headers *h)
{
	char id[37], ts[TIMESTAMP_LEN + 1];
	struct headers rest;

	/* A new message's identity comes first, as msg-split writes it. */
	headers_init(&rest);
	headers_copy(&rest, h);
	headers_reset(h);
	message_stamp(h);
	if (a->opt.deterministic_ids) {
		deterministic_id(g, id);
		timestamp_format(ts, g->last);
		headers_set(h, "Message-Id", id);
		headers_set(h, "Timestamp", ts);
	}
	for (size_t i = 0; i < headers_count(&rest); i++) {
		size_t nl, vl;
		const char *n = headers_name(&rest, i, &nl);
		const char *v = headers_value(&rest, i, &vl);
		headers_add(h, n, nl, v, vl);
	}
	headers_release(&rest);
}

/* ---- store records ----
 * A failed store call returns -1 with errno set and store_last_error()
 * saying why; those -1s are passed up as they are. */

/* The group's records go, and its key is remembered as closed, once
 * its result is out. */
static void forget_in_store(struct aggregator *a, const struct agg_group *g,
			    int64_t closed_at)
{
	for (size_t i = 0; i < agg_group_records(g); i++) {
		agg_group_record_key(&a->scratch, g, i);
		store_later_delete(&a->after, AGG_KIND_MEMBER, a->scratch.ptr,
				   a->scratch.len);
	}
	agg_closed_value(&a->value, g, closed_at);
	store_later_put(&a->after, AGG_KIND_CLOSED, g->key, g->key_len, a->value.ptr,
			a->value.len, closed_at + a->opt.remember_ms);
}

/* ---- releasing ---- */

/* Released before meeting a condition it could meet. */
static int is_partial(const struct aggregator *a, const struct agg_group *g,
		      enum agg_reason why)
{
	if (why == AGG_COMPLETE || why == AGG_COUNT || why == AGG_UNTIL)
		return 0;
	return g->seen.count || g->size_known || a->opt.lim.count ||
	       agg_eval_has_until(a->eval);
}

/* What --invalid gets for a group that is not one message: its members'
 * bodies, joined as text is. */
static void joined(const struct aggregator *a, const struct agg_group *g,
		   struct headers *h, struct buf *body)
{
	headers_reset(h);
	buf_reset(body);
	for (size_t i = 0; i < g->n; i++) {
		if (i && a->opt.build.separator)
			buf_add(body, a->opt.build.separator, a->opt.build.separator_len);
		buf_add(body, agg_member_body(g, &g->m[i]), g->m[i].len);
	}
	headers_setn(h, "Correlation-Id", g->key, g->key_len);
	headers_set_u64(h, "Aggregate-Size", g->n);
}

static void hold(struct aggregator *a, struct headers *h, struct buf *body,
		 int partial, const char *invalid)
{
	struct held *x;

	if (a->nheld == a->aheld) {
		a->aheld = a->aheld ? a->aheld * 2 : 16;
		a->held = xrealloc(a->held, a->aheld * sizeof(*a->held));
	}
	x = &a->held[a->nheld++];
	headers_init(&x->h);
	headers_copy(&x->h, h);
	x->body = *body;
	buf_init(body, 0);
	x->partial = partial;
	x->invalid = invalid ? xstrdup(invalid) : NULL;
}

static void deliver(struct aggregator *a, struct headers *h,
		    const struct buf *body, int partial, const char *invalid)
{
	struct buf why = BUF_INIT;

	if (!invalid && a->out.emit(a->out.ctx, h, body, partial, &why) == 0) {
		buf_release(&why);
		return;
	}
	a->out.invalid(a->out.ctx, h, body, invalid ? invalid : why.ptr);
	buf_release(&why);
}

/* The message g becomes: 0, or -1 with why when it cannot be one. */
static int make_result(struct aggregator *a, struct agg_group *g,
		       enum agg_reason reason, struct headers *h,
		       struct buf *body, struct buf *why)
{
	int r = agg_build(g, &a->opt.build, reason, h, body, why);

	if (r == MSG_NO_MEMORY) {
		errno = ENOMEM;
		return MSG_NO_MEMORY;
	}
	if (r == 0 && agg_eval_has_condense(a->eval))
		r = agg_eval_condense(a->eval, h, body, why);
	if (r < 0)
		joined(a, g, h, body);
	stamp(a, g, h);
	return r < 0 ? -1 : 0;
}

/* Release g for reason: its message goes out (or is held for the next
 * sync), its key is remembered, the group goes. 0, or MSG_NO_MEMORY. */
static int release(struct aggregator *a, struct agg_group *g,
		   enum agg_reason reason, int64_t now)
{
	struct headers h;
	struct buf body = BUF_INIT, why = BUF_INIT;
	int partial = is_partial(a, g, reason);
	int r;

	headers_init(&h);
	r = make_result(a, g, reason, &h, &body, &why);
	if (r == MSG_NO_MEMORY) {
		headers_release(&h);
		buf_release(&body);
		buf_release(&why);
		return r;
	}
	if (a->store)
		hold(a, &h, &body, partial, r < 0 ? why.ptr : NULL);
	else
		deliver(a, &h, &body, partial, r < 0 ? why.ptr : NULL);
	a->stats.released++;
	a->stats.by_reason[reason]++;
	a->stats.partial += partial;
	if (a->store)
		forget_in_store(a, g, now);
	agg_closed_add(a->closed, g, now);
	agg_remove(a->table, g);
	headers_release(&h);
	buf_release(&body);
	buf_release(&why);
	return 0;
}

int aggregator_close(struct aggregator *a, const char *key, size_t len,
		     const struct headers *h, int empty, int64_t now)
{
	struct agg_group *g = agg_find(a->table, key, len);

	if (!g) {
		if (!empty || agg_closed_check(a->closed, key, len, NULL, now))
			return 0;
		g = agg_open_empty(a->table, key, len,
				   headers_get(h, "Content-Type"), now);
	}
	return release(a, g, AGG_CLOSE, now) < 0 ? -1 : 1;
}

enum agg_closed_verdict aggregator_closed(struct aggregator *a, const char *key,
					  size_t len, const char *id, int64_t now)
{
	if (agg_find(a->table, key, len))
		return AGG_NOT_CLOSED;
	return agg_closed_check(a->closed, key, len, id, now);
}

/* ---- adding ---- */

static const char *limit_name(enum agg_added r)
{
	switch (r) {
	case AGG_FULL_GROUPS: return "--max-groups";
	case AGG_FULL_MEMBERS: return "--max-members";
	default: return "--max-bytes";
	}
}

/* --until on the aggregate built whole: with -b, or for a group that
 * has only a Sequence-Size 0 marker. */
static int until_met_built(struct aggregator *a, const struct agg_group *g)
{
	struct headers h;
	struct buf body = BUF_INIT, err = BUF_INIT;
	int met = 0;

	headers_init(&h);
	if (agg_build(g, &a->opt.build, AGG_OPEN, &h, &body, &err) == 0)
		met = agg_eval_until(a->eval, &h, &body, NULL) == 1;
	headers_release(&h);
	buf_release(&body);
	buf_release(&err);
	return met;
}

/* --until on the aggregate so far, kept with the group as it grows, so
 * that a group of n members costs O(n) to follow, not O(n^2). */
static int until_met(struct aggregator *a, struct agg_group *g)
{
	struct headers h;
	struct buf err = BUF_INIT;
	const char *type;
	int met = 0;

	if (a->opt.build.best != AGG_BEST_NONE || !g->n)
		return until_met_built(a, g);
	if (!g->live)
		g->live = agg_live_new(&a->opt.build,
				       (agg_eval_until_needs(a->eval) & EXPR_NEEDS_DOC) != 0);
	if (agg_live_update(g->live, g) < 0)
		return 0;
	headers_init(&h);
	if (agg_build_headers(g, AGG_OPEN, &h, &err) == 0) {
		if ((type = agg_kind_type(agg_live_kind(g->live))))
			headers_set(&h, "Content-Type", type);
		met = agg_eval_until(a->eval, &h, agg_live_body(g->live),
				     agg_live_doc(g->live)) == 1;
	}
	headers_release(&h);
	buf_release(&err);
	return met;
}

static int record_member(struct aggregator *a, const struct agg_input *in,
			 uint64_t serial)
{
	if (!a->store)
		return 0;
	agg_member_key(&a->scratch, in->key, in->key_len, serial);
	agg_member_value(&a->value, in);
	return store_put(a->store, AGG_KIND_MEMBER, a->scratch.ptr,
			 a->scratch.len, a->value.ptr, a->value.len, 0);
}

/* Make room by release-oldest: 1 when something was released. */
static int make_room(struct aggregator *a, enum agg_added full,
		     struct agg_group *g, const struct agg_input *in)
{
	struct agg_group *victim = full == AGG_FULL_MEMBERS ? g : agg_oldest(a->table);

	/* A body over --max-bytes by itself fits in no table: releasing
	 * groups for it would only cut them short, and make their next
	 * members late. */
	if (full == AGG_FULL_BYTES && in->len > a->opt.lim.max_bytes)
		return 0;
	if (!victim)
		return 0;
	return release(a, victim, AGG_LIMIT, in->now) == 0;
}

int aggregator_add(struct aggregator *a, struct agg_input *in,
		   enum agg_added *res, const char **why)
{
	struct agg_group *g;
	enum agg_reason done;
	uint64_t serial = agg_next_serial(a->table);

	for (;;) {
		*res = agg_add(a->table, in, &g, why);
		if (*res < AGG_FULL_GROUPS || a->opt.on_limit != AGGR_RELEASE_OLDEST ||
		    !make_room(a, *res, g, in))
			break;
	}
	if (*res >= AGG_FULL_GROUPS)
		*why = limit_name(*res);
	if (*res != AGG_ADDED)
		return 0;
	a->stats.members++;
	if (record_member(a, in, serial) < 0)
		return -1;
	done = agg_completed(a->table, g);
	if (done == AGG_OPEN && agg_eval_has_until(a->eval) && until_met(a, g))
		done = AGG_UNTIL;
	if (done != AGG_OPEN && release(a, g, done, in->now) < 0)
		return -1;
	return 0;
}

/* ---- time ---- */

int aggregator_tick(struct aggregator *a, int64_t now)
{
	struct agg_group *g;
	enum agg_reason reason;

	while ((g = agg_expired(a->table, now, &reason)))
		if (release(a, g, reason, now) < 0)
			return -1;
	agg_closed_expire(a->closed, now);
	if (!a->store)
		return 0;
	/* Closed keys are the only records with deadlines. */
	return store_delete_expired(a->store, now);
}

int64_t aggregator_next_deadline(struct aggregator *a)
{
	return agg_next_deadline(a->table);
}

int64_t aggregator_end(struct aggregator *a, enum aggregator_at_end how,
		       int64_t now)
{
	int64_t open = (int64_t)agg_groups(a->table);
	struct agg_group *g;

	/* keep leaves them for the next run; fail too, so nothing is lost. */
	if (how == AGGR_KEEP || how == AGGR_FAIL_END)
		return open;
	while ((g = agg_next_group(a->table, NULL))) {
		if (how == AGGR_FLUSH) {
			if (release(a, g, AGG_END, now) < 0)
				return -1;
			continue;
		}
		a->stats.discarded++;
		if (a->store)
			forget_in_store(a, g, now);
		agg_remove(a->table, g);
	}
	return open;
}

/* ---- durability ---- */

int aggregator_sync(struct aggregator *a)
{
	if (!a->store)
		return 0;
	if (store_commit(a->store) < 0)
		return -1;
	for (size_t i = 0; i < a->nheld; i++) {
		struct held *x = &a->held[i];
		deliver(a, &x->h, &x->body, x->partial, x->invalid);
		held_release(x);
	}
	a->nheld = 0;
	if (frame_writers_flush_all() < 0)
		return -1;
	return store_later_apply(&a->after, a->store);
}

uint64_t aggregator_held(const struct aggregator *a)
{
	return a->nheld;
}

/* ---- restoring ---- */

static int restore_members(struct aggregator *a)
{
	struct store_iter it;
	struct store_rec rec;
	struct buf value = BUF_INIT;
	struct headers h;
	int r;

	headers_init(&h);
	store_iter_init(&it, a->store, AGG_KIND_MEMBER, NULL, 0);
	while ((r = store_iter_next(&it, &rec, &value)) == 1) {
		struct agg_input in;
		struct agg_group *g;
		enum agg_added added;
		const char *why;

		if (agg_member_decode(rec.key, rec.key_len, value.ptr, value.len,
				      &in, &h) < 0) {
			r = -1;
			break;
		}
		agg_eval_classify(a->eval, &in);
		added = agg_add(a->table, &in, &g, &why);
		if (added == AGG_INVALID) {	/* it was valid when it came */
			errno = EINVAL;
			r = -1;
			break;
		}
	}
	store_iter_release(&it);
	headers_release(&h);
	buf_release(&value);
	return r;
}

/* A group whose last member was committed but whose result was not yet
 * out when the tool stopped is released again now. */
static int release_completed(struct aggregator *a, int64_t now)
{
	struct agg_group *g, *next;

	for (g = agg_next_group(a->table, NULL); g; g = next) {
		enum agg_reason done = agg_completed(a->table, g);

		next = agg_next_group(a->table, g);
		if (done == AGG_OPEN && agg_eval_has_until(a->eval) && until_met(a, g))
			done = AGG_UNTIL;
		if (done != AGG_OPEN && release(a, g, done, now) < 0)
			return -1;
	}
	return 0;
}

int aggregator_restore(struct aggregator *a, int64_t now)
{
	if (!a->store)
		return 0;
	struct agg_limits none = { 0 };
	int r;

	/* Every member committed is taken back, whatever the limits of this
	 * run: the next member that finds them passed makes room first. */
	none.count = a->opt.lim.count;
	none.timeout_ms = a->opt.lim.timeout_ms;
	none.idle_ms = a->opt.lim.idle_ms;
	agg_table_set_limits(a->table, &none);
	r = restore_members(a);
	agg_table_set_limits(a->table, &a->opt.lim);
	if (r < 0 || agg_closed_restore(a->closed, a->store, now) < 0)
		return -1;
	return release_completed(a, now);
}

uint64_t aggregator_open_groups(const struct aggregator *a)
{
	return agg_groups(a->table);
}

const struct aggregator_stats *aggregator_stats(const struct aggregator *a)
{
	return &a->stats;
}
