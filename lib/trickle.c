/* trickle: what goes to the target when, per entity (trickle.h). */
#include "trickle-parts.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "header.h"
#include "msgrec.h"
#include "store.h"

struct trickle *trickle_new(const struct trickle_opt *opt, struct store *s,
			    const struct trickle_out *out)
{
	struct trickle *tr = xcalloc(1, sizeof(*tr));

	tr->opt = *opt;
	tr->store = s;
	tr->out = *out;
	buf_init(&tr->sends, 0);
	buf_init(&tr->ready, 0);
	trickle_entity_init(&tr->e);
	headers_init(&tr->h);
	buf_init(&tr->key, 0);
	buf_init(&tr->vkey, 0);
	buf_init(&tr->rec, 0);
	buf_init(&tr->scratch, 0);
	return tr;
}

void trickle_free(struct trickle *tr)
{
	if (!tr)
		return;
	buf_release(&tr->sends);
	buf_release(&tr->ready);
	trickle_entity_release(&tr->e);
	headers_release(&tr->h);
	buf_release(&tr->key);
	buf_release(&tr->vkey);
	buf_release(&tr->rec);
	buf_release(&tr->scratch);
	free(tr);
}

const struct trickle_counts *trickle_counts(const struct trickle *tr)
{
	return &tr->counts;
}

uint64_t trickle_in_flight(const struct trickle *tr)
{
	return tr->in_flight;
}

int64_t trickle_deadline(const struct trickle *tr)
{
	return store_next_deadline(tr->store);
}

int trickle_retry_pending(const struct trickle *tr)
{
	return tr->retry_waiting != 0;
}

/* ---- entities ---------------------------------------------------------------- */

/* Is e failed and due to be tried again (--retry-after, or a retry
 * command)? */
int trickle_waits_for_retry(const struct trickle_entity *e)
{
	return e->state == TR_FAILED && e->next_at;
}

/* key's entity into tr->e: 1, 0 when there is none (a new idle one), -1. */
int trickle_load(struct trickle *tr, const char *key, size_t klen)
{
	int r = store_get(tr->store, TRICKLE_ENTITY, key, klen, &tr->rec, NULL);
	struct trickle_entity *e = &tr->e;

	if (r <= 0) {
		e->state = TR_IDLE;
		e->attempts = 0;
		e->since = e->next_at = e->failed_at = 0;
		buf_reset(&e->current);
		buf_reset(&e->horizon);
		buf_reset(&e->last_ok);
		buf_reset(&e->msgid);
		buf_reset(&e->status);
		buf_reset(&e->error);
		tr->loaded_waiting = 0;
		return r;
	}
	if (trickle_entity_decode(e, tr->rec.ptr, tr->rec.len) < 0)
		return -1;
	tr->loaded_waiting = trickle_waits_for_retry(e);
	return 1;
}

/* tr->e as key's entity record, the count of those waiting for a retry
 * kept with it. */
int trickle_save(struct trickle *tr, const char *key, size_t klen)
{
	int waiting = trickle_waits_for_retry(&tr->e);

	if (waiting && !tr->loaded_waiting)
		tr->retry_waiting++;
	else if (!waiting && tr->loaded_waiting)
		tr->retry_waiting--;
	tr->loaded_waiting = waiting;
	trickle_entity_encode(&tr->e, &tr->rec);
	return store_put(tr->store, TRICKLE_ENTITY, key, klen, tr->rec.ptr,
			 tr->rec.len, tr->e.next_at);
}

static int bytes_cmp(const struct buf *a, const char *b, size_t n)
{
	int c = memcmp(a->ptr, b, a->len < n ? a->len : n);

	return c ? c : (a->len > n) - (a->len < n);
}

/* The version record of key's sortkey into tr->vkey. */
static void version_key(struct trickle *tr, const char *key, size_t klen,
			const char *sk, size_t slen)
{
	trickle_version_key(&tr->vkey, key, klen, sk, slen);
}

/* The Message-Id of the stored version in tr->vkey into tr->e.msgid:
 * 0, or -1 (store, or EINVAL for a damaged record). */
static int stored_msgid(struct trickle *tr)
{
	const char *block, *body, *id;
	size_t blen, len;
	int64_t at;
	int r = store_get(tr->store, TRICKLE_VERSION, tr->vkey.ptr, tr->vkey.len,
			  &tr->scratch, NULL);

	if (r <= 0 || msgrec_split(tr->scratch.ptr, tr->scratch.len, &at, &block,
				   &blen, &body, &len) < 0 ||
	    msgrec_parse_block(block, blen, &tr->h) < 0 ||
	    !(id = headers_get(&tr->h, "Message-Id"))) {
		errno = r < 0 ? errno : EINVAL;
		return -1;
	}
	buf_reset(&tr->e.msgid);
	buf_addstr(&tr->e.msgid, id);
	return 0;
}

/* Send tr->vkey's version later (after the commit), as attempt n. */
static void queue_send(struct trickle *tr, uint64_t attempt)
{
	uint32_t n = (uint32_t)tr->vkey.len;

	buf_add(&tr->sends, &n, sizeof(n));
	buf_add(&tr->sends, tr->vkey.ptr, n);
	buf_add(&tr->sends, &attempt, sizeof(attempt));
}

static int64_t resend_time(const struct trickle *tr, int64_t now)
{
	if (!tr->opt.resend_after ||
	    (tr->opt.max_attempts && tr->e.attempts >= tr->opt.max_attempts))
		return 0;
	return now + tr->opt.resend_after;
}

/* tr->e goes in flight with the version in tr->vkey (key's sortkey sk),
 * as attempt n. Its Message-Id is e->msgid when known (the request in
 * hand, a version sent before), else read from its record. 0 or -1. */
static int go_in_flight(struct trickle *tr, const char *key, size_t klen,
			const char *sk, size_t slen, uint64_t attempt,
			int64_t now)
{
	struct trickle_entity *e = &tr->e;

	if (!e->msgid.len && stored_msgid(tr) < 0)
		return -1;
	if (e->state != TR_IN_FLIGHT)
		tr->in_flight++;
	e->state = TR_IN_FLIGHT;
	buf_reset(&e->current);
	buf_add(&e->current, sk, slen);
	if (bytes_cmp(&e->horizon, sk, slen) < 0) {
		buf_reset(&e->horizon);
		buf_add(&e->horizon, sk, slen);
	}
	e->attempts = attempt;
	e->since = now;
	e->next_at = resend_time(tr, now);
	queue_send(tr, attempt);
	if (store_put(tr->store, TRICKLE_SENT, e->msgid.ptr, e->msgid.len, key,
		      klen, 0) < 0)
		return -1;
	return trickle_save(tr, key, klen);
}

/* ---- choosing the next version ------------------------------------------------ */

/* Under --latest, every waiting version of key but the newest goes:
 * written to --superseded if given, counted, deleted. */
static int supersede(struct trickle *tr, const char *key, size_t klen,
		     struct buf *newest)
{
	struct store_iter it;
	struct store_rec rec;
	struct buf what = BUF_INIT;
	int r;

	buf_reset(&what);
	buf_addstr(&what, "superseded by version ");
	trickle_version_text(tr->opt.order, newest->ptr + 2 + klen,
			     newest->len - 2 - klen, &what);
	trickle_version_key(&tr->key, key, klen, NULL, 0);
	store_iter_init(&it, tr->store, TRICKLE_VERSION, tr->key.ptr, tr->key.len);
	while ((r = store_iter_next(&it, &rec, &tr->scratch)) == 1) {
		const char *block, *body;
		size_t blen, len;
		int64_t at;

		if (rec.key_len == newest->len && !memcmp(rec.key, newest->ptr, rec.key_len))
			break;
		if (msgrec_split(tr->scratch.ptr, tr->scratch.len, &at, &block, &blen,
				 &body, &len) == 0 && tr->out.superseded)
			tr->out.superseded(tr->out.ctx, block, blen, body, len, what.ptr);
		tr->counts.superseded++;
		if (store_delete(tr->store, TRICKLE_VERSION, rec.key, rec.key_len) < 0) {
			r = -1;
			break;
		}
	}
	store_iter_release(&it);
	buf_release(&what);
	return r < 0 ? -1 : 0;
}

/* The version to send next of key (free, nothing current) into
 * tr->vkey: 1, 0 when none waits, -1. */
static int next_version(struct trickle *tr, const char *key, size_t klen)
{
	struct store_iter it;
	struct store_rec rec;
	int r, found = 0;

	trickle_version_key(&tr->key, key, klen, NULL, 0);
	store_iter_init(&it, tr->store, TRICKLE_VERSION, tr->key.ptr, tr->key.len);
	while ((r = store_iter_next(&it, &rec, NULL)) == 1) {
		buf_reset(&tr->vkey);
		buf_add(&tr->vkey, rec.key, rec.key_len);
		found = 1;
		if (!tr->opt.latest)
			break;
	}
	store_iter_release(&it);
	if (r < 0)
		return -1;
	if (found && tr->opt.latest) {
		struct buf newest = BUF_INIT;
		buf_add(&newest, tr->vkey.ptr, tr->vkey.len);
		r = supersede(tr, key, klen, &newest);
		buf_reset(&tr->vkey);
		buf_add(&tr->vkey, newest.ptr, newest.len);
		buf_release(&newest);
		if (r < 0)
			return -1;
	}
	return found;
}

void trickle_hold_ready(struct trickle *tr, const char *key, size_t klen)
{
	uint32_t n = (uint32_t)klen;

	buf_add(&tr->ready, &n, sizeof(n));
	buf_add(&tr->ready, key, klen);
}

/* tr->e (key's) has nothing current: what it held for its last version
 * goes. */
static void clear_current(struct trickle_entity *e)
{
	e->attempts = 0;
	e->since = e->next_at = 0;
	buf_reset(&e->current);
	buf_reset(&e->msgid);
}

/*
 * tr->e (key's, nothing current) sends the version in tr->vkey, whose
 * Message-Id is msgid (NULL: read when it goes). Under the cap, or held
 * (--hold), it is ready instead. 0, -1.
 */
static int go_next(struct trickle *tr, const char *key, size_t klen,
		   const char *msgid, int64_t now)
{
	struct trickle_entity *e = &tr->e;
	size_t off = 2 + klen;

	clear_current(e);
	if (tr->opt.hold ||
	    (tr->opt.max_in_flight && tr->in_flight >= tr->opt.max_in_flight)) {
		if (e->state != TR_READY && !tr->opt.hold)
			trickle_hold_ready(tr, key, klen);
		e->state = TR_READY;
		return trickle_save(tr, key, klen);
	}
	e->state = TR_READY;
	if (msgid)
		buf_addstr(&e->msgid, msgid);
	return go_in_flight(tr, key, klen, tr->vkey.ptr + off, tr->vkey.len - off,
			    1, now);
}

/* tr->e (key's, nothing current) is free: its next version goes
 * (go_next), or it is idle. 0, -1. */
static int go_on(struct trickle *tr, const char *key, size_t klen, int64_t now)
{
	int r = next_version(tr, key, klen);

	if (r != 0)
		return r < 0 ? -1 : go_next(tr, key, klen, NULL, now);
	clear_current(&tr->e);
	tr->e.state = TR_IDLE;
	tr->e.next_at = tr->opt.forget ? now + tr->opt.forget : 0;
	return trickle_save(tr, key, klen);
}

/* A slot under the cap came free: the first entity held for one goes. */
int trickle_fill_slots(struct trickle *tr, int64_t now)
{
	while (tr->ready_head < tr->ready.len && !tr->opt.hold &&
	       (!tr->opt.max_in_flight || tr->in_flight < tr->opt.max_in_flight)) {
		uint32_t n;
		memcpy(&n, tr->ready.ptr + tr->ready_head, sizeof(n));
		struct buf key = BUF_INIT;
		buf_add(&key, tr->ready.ptr + tr->ready_head + sizeof(n), n);
		tr->ready_head += sizeof(n) + n;
		int r = trickle_load(tr, key.ptr, key.len);
		if (r > 0 && tr->e.state == TR_READY)
			r = go_on(tr, key.ptr, key.len, now);
		buf_release(&key);
		if (r < 0)
			return -1;
	}
	if (tr->ready_head == tr->ready.len)
		buf_reset(&tr->ready), tr->ready_head = 0;
	return 0;
}

/* ---- what comes in ------------------------------------------------------------ */

int trickle_request(struct trickle *tr, const char *key, size_t klen,
		    const char *version, size_t vlen, const char *msgid,
		    const char *block, size_t blen, const char *body,
		    size_t len, int64_t now, struct buf *why)
{
	struct trickle_entity *e = &tr->e;
	struct buf sk = BUF_INIT;
	int r = -1;

	if (trickle_version_sortkey(tr->opt.order, version, vlen, &sk, why) < 0) {
		buf_release(&sk);
		return TRICKLE_INVALID;
	}
	version_key(tr, key, klen, sk.ptr, sk.len);
	if (trickle_load(tr, key, klen) < 0)
		goto out;
	r = store_get(tr->store, TRICKLE_VERSION, tr->vkey.ptr, tr->vkey.len, NULL, NULL);
	if (r != 0) {
		r = r < 0 ? -1 : TRICKLE_DUPLICATE;
		goto out;
	}
	if (e->horizon.len && bytes_cmp(&e->horizon, sk.ptr, sk.len) >= 0) {
		buf_addstr(why, "stale: version ");
		buf_add(why, version, vlen);
		buf_addstr(why, " of entity '");
		buf_add(why, key, klen);
		buf_addstr(why, "' is at or below version ");
		trickle_version_text(tr->opt.order, e->horizon.ptr, e->horizon.len, why);
		buf_addstr(why, ", already sent");
		r = TRICKLE_STALE;
		goto out;
	}
	if (store_get(tr->store, TRICKLE_SENT, msgid, strlen(msgid), NULL, NULL) != 0) {
		buf_addstr(why, "Message-Id already in flight for another version");
		r = TRICKLE_INVALID;
		goto out;
	}
	msgrec_encode_block(&tr->rec, now, block, blen, body, len);
	r = -1;
	if (store_put(tr->store, TRICKLE_VERSION, tr->vkey.ptr, tr->vkey.len,
		      tr->rec.ptr, tr->rec.len, 0) < 0)
		goto out;
	/* An idle entity has no version waiting: this one, in tr->vkey, is
	 * its next, and its Message-Id is known. Anything else waits for
	 * the entity to be free. */
	r = e->state == TR_IDLE ? go_next(tr, key, klen, msgid, now) : 0;
	if (r == 0)
		r = TRICKLE_STORED;
out:
	buf_release(&sk);
	return r;
}

/* The current version of key (tr->e) is done with: deleted, the entity
 * goes on. ok: it succeeded (last_ok moves). */
static int finish_current(struct trickle *tr, const char *key, size_t klen,
			  int ok, int64_t now)
{
	struct trickle_entity *e = &tr->e;

	if (e->state == TR_IN_FLIGHT)
		tr->in_flight--;
	version_key(tr, key, klen, e->current.ptr, e->current.len);
	if (store_delete(tr->store, TRICKLE_VERSION, tr->vkey.ptr, tr->vkey.len) < 0 ||
	    (e->msgid.len && store_delete(tr->store, TRICKLE_SENT, e->msgid.ptr,
					  e->msgid.len) < 0))
		return -1;
	if (ok) {
		buf_reset(&e->last_ok);
		buf_add(&e->last_ok, e->current.ptr, e->current.len);
	}
	e->state = TR_IDLE;
	if (go_on(tr, key, klen, now) < 0)
		return -1;
	return trickle_fill_slots(tr, now);
}

static int failed(struct trickle *tr, const char *key, size_t klen,
		  const char *status, const char *error, int64_t now)
{
	struct trickle_entity *e = &tr->e;

	tr->in_flight--;
	tr->counts.failed++;
	if (store_delete(tr->store, TRICKLE_SENT, e->msgid.ptr, e->msgid.len) < 0)
		return -1;
	e->state = TR_FAILED;
	e->failed_at = now;
	e->next_at = 0;
	if (tr->opt.retry_after &&
	    (!tr->opt.max_attempts || e->attempts < tr->opt.max_attempts))
		e->next_at = now + tr->opt.retry_after;
	buf_reset(&e->status);
	buf_addstr(&e->status, status ? status : "");
	buf_reset(&e->error);
	buf_addstr(&e->error, error ? error : "");
	if (trickle_save(tr, key, klen) < 0)
		return -1;
	return trickle_fill_slots(tr, now);
}

int trickle_response(struct trickle *tr, const char *msgid, int success,
		     const char *status, const char *error, int64_t now)
{
	struct buf key = BUF_INIT;
	int r = store_get(tr->store, TRICKLE_SENT, msgid, strlen(msgid), &key, NULL);

	if (r > 0)
		r = trickle_load(tr, key.ptr, key.len);
	if (r > 0 && (tr->e.state != TR_IN_FLIGHT || strcmp(tr->e.msgid.ptr, msgid)))
		r = 0;
	if (r > 0 && success) {
		tr->counts.succeeded++;
		r = finish_current(tr, key.ptr, key.len, 1, now) < 0 ? -1 : 1;
	} else if (r > 0) {
		r = failed(tr, key.ptr, key.len, status, error, now) < 0 ? -1 : 1;
	}
	buf_release(&key);
	return r;
}

/* key's current version goes again, as the next attempt. */
static int send_again(struct trickle *tr, const char *key, size_t klen,
		      int64_t now)
{
	struct trickle_entity *e = &tr->e;
	struct buf sk = BUF_INIT;
	int r;

	buf_add(&sk, e->current.ptr, e->current.len);
	version_key(tr, key, klen, sk.ptr, sk.len);
	if (e->state == TR_IN_FLIGHT &&
	    store_delete(tr->store, TRICKLE_SENT, e->msgid.ptr, e->msgid.len) < 0)
		r = -1;
	else
		r = go_in_flight(tr, key, klen, sk.ptr, sk.len, e->attempts + 1, now);
	buf_release(&sk);
	return r;
}

int trickle_tick(struct trickle *tr, int64_t now)
{
	struct store_rec rec;

	if (tr->opt.hold)
		return 0;	/* what is due stays due for the next run */
	while (store_earliest(tr->store, &rec) == 1 && rec.deadline <= now) {
		struct buf key = BUF_INIT;
		int r;

		buf_add(&key, rec.key, rec.key_len);
		if (strcmp(rec.kind, TRICKLE_ENTITY)) {
			/* An applied command's id, kept long enough. */
			r = store_delete(tr->store, rec.kind, key.ptr, key.len);
			buf_release(&key);
			if (r < 0)
				return -1;
			continue;
		}
		r = trickle_load(tr, key.ptr, key.len);
		if (r > 0 && tr->e.state == TR_FAILED) {
			tr->counts.retried++;
			r = send_again(tr, key.ptr, key.len, now);
		} else if (r > 0 && tr->e.state == TR_IN_FLIGHT) {
			tr->counts.resent++;
			r = send_again(tr, key.ptr, key.len, now);
		} else if (r > 0 && tr->e.state == TR_IDLE) {
			/* Idle for --forget: what it remembered goes (a
			 * version at or below its last is no longer stale). */
			r = store_delete(tr->store, TRICKLE_ENTITY, key.ptr, key.len);
		} else if (r >= 0) {
			tr->e.next_at = 0;	/* nothing to do: no timer */
			r = trickle_save(tr, key.ptr, key.len);
		}
		buf_release(&key);
		if (r < 0)
			return -1;
	}
	return 0;
}

/* A week, in ms: how long an applied command's id is remembered. */
#define APPLIED_KEPT (7 * 24 * 3600 * 1000LL)

int trickle_command(struct trickle *tr, enum trickle_command c, const char *id,
		    const char *key, size_t klen, int64_t now, struct buf *why)
{
	static const char *const names[] = { "retry", "skip", "release" };
	struct trickle_entity *e = &tr->e;
	int r = store_get(tr->store, TRICKLE_APPLIED, id, strlen(id), NULL, NULL);

	if (r != 0)
		return r < 0 ? -1 : 2;
	/* Committed with what it did, in the same batch. */
	if (store_put(tr->store, TRICKLE_APPLIED, id, strlen(id), "", 0,
		      now + APPLIED_KEPT) < 0 || (r = trickle_load(tr, key, klen)) < 0)
		return -1;
	if ((c == TRICKLE_RELEASE && e->state == TR_IN_FLIGHT) ||
	    (c != TRICKLE_RELEASE && (e->state == TR_IN_FLIGHT || e->state == TR_FAILED))) {
		if (c == TRICKLE_RETRY) {
			/* Due now: the timers send it (a run that holds
			 * everything leaves it due for the next one). */
			e->next_at = now;
			r = trickle_save(tr, key, klen);
		} else {
			if (c == TRICKLE_SKIP)
				tr->counts.skipped++;
			else
				tr->counts.released++;
			r = finish_current(tr, key, klen, c == TRICKLE_RELEASE, now);
		}
		return r < 0 ? -1 : 1;
	}
	buf_addf(why, "%s: entity '", names[c]);
	buf_add(why, key, klen);
	buf_addf(why, "' is %s, not %s", r ? trickle_state_name(e->state) : "unknown",
		 c == TRICKLE_RELEASE ? "in flight" : "failed or in flight");
	return 0;
}

