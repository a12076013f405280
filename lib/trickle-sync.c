/* trickle-sync: what the feed sends once its batch is committed, and the
 * state a run starts from (trickle.h). */
#include "trickle-parts.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "frame.h"
#include "msgrec.h"
#include "store.h"

/* ---- the batch ----------------------------------------------------------------- */

/* Send the version of record key vkey as attempt n: 0 (sent, or gone
 * meanwhile), -1 (store). */
static int send_one(struct trickle *tr, const char *vkey, size_t n,
		    uint64_t attempt)
{
	const char *block, *body;
	size_t blen, len;
	int64_t at;
	int r = store_get(tr->store, TRICKLE_VERSION, vkey, n, &tr->rec, NULL);

	if (r <= 0)
		return r;
	if (msgrec_split(tr->rec.ptr, tr->rec.len, &at, &block, &blen, &body, &len) < 0) {
		errno = EINVAL;
		return -1;
	}
	buf_reset(&tr->scratch);
	if (attempt > 1) {
		char a[24];
		snprintf(a, sizeof(a), "%" PRIu64, attempt);
		frame_block_set(&tr->key, block, blen, "Trickle-Attempt", a);
		block = tr->key.ptr;
		blen = tr->key.len;
	}
	if (tr->out.send(tr->out.ctx, block, blen, body, len, &tr->scratch) == 0)
		tr->counts.sent++;
	return 0;
}

int trickle_sync(struct trickle *tr)
{
	size_t off = 0;

	if (store_commit(tr->store) < 0)
		return -1;
	while (off < tr->sends.len) {
		uint32_t n;
		uint64_t attempt;
		memcpy(&n, tr->sends.ptr + off, sizeof(n));
		memcpy(&attempt, tr->sends.ptr + off + sizeof(n) + n, sizeof(attempt));
		if (send_one(tr, tr->sends.ptr + off + sizeof(n), n, attempt) < 0)
			return -1;
		off += sizeof(n) + n + sizeof(attempt);
	}
	buf_reset(&tr->sends);
	return 0;
}

/* ---- restart ------------------------------------------------------------------- */

/*
 * This run's --resend-after or --retry-after for an entity an earlier
 * run left without a deadline (it ran without the option): 1 when one
 * was set. One already set stays as it is.
 */
static int add_deadline(struct trickle *tr)
{
	struct trickle_entity *e = &tr->e;

	if (e->next_at || (tr->opt.max_attempts && e->attempts >= tr->opt.max_attempts))
		return 0;
	if (e->state == TR_IN_FLIGHT && tr->opt.resend_after)
		e->next_at = e->since + tr->opt.resend_after;
	else if (e->state == TR_FAILED && tr->opt.retry_after)
		e->next_at = e->failed_at + tr->opt.retry_after;
	return e->next_at != 0;
}

static int check_order(struct trickle *tr, struct buf *why)
{
	const char *mine = tr->opt.order == TRICKLE_TEXT ? "text" : "number";
	int r = store_get(tr->store, TRICKLE_META, "order", 5, &tr->rec, NULL);

	if (r < 0)
		return -1;
	if (r == 0)
		return store_put(tr->store, TRICKLE_META, "order", 5, mine, strlen(mine), 0);
	if (tr->rec.len == strlen(mine) && !memcmp(tr->rec.ptr, mine, tr->rec.len))
		return 0;
	buf_addf(why, "the state was kept with --version-order %.*s",
		 (int)tr->rec.len, tr->rec.ptr);
	errno = EINVAL;
	return -1;
}

int trickle_restore(struct trickle *tr, int64_t now, struct buf *why)
{
	struct store_iter it;
	struct store_rec rec;
	int r;

	if (check_order(tr, why) < 0)
		return -1;
	store_iter_init(&it, tr->store, TRICKLE_ENTITY, "", 0);
	while ((r = store_iter_next(&it, &rec, &tr->rec)) == 1) {
		if (trickle_entity_decode(&tr->e, tr->rec.ptr, tr->rec.len) < 0) {
			buf_addstr(why, "a damaged entity record");
			r = -1;
			break;
		}
		tr->loaded_waiting = trickle_waits_for_retry(&tr->e);
		tr->retry_waiting += (uint64_t)tr->loaded_waiting;
		if (tr->e.state == TR_IN_FLIGHT)
			tr->in_flight++;
		else if (tr->e.state == TR_READY)
			trickle_hold_ready(tr, rec.key, rec.key_len);
		if (add_deadline(tr)) {
			/* rec's name lasts only until the store changes */
			buf_reset(&tr->key);
			buf_add(&tr->key, rec.key, rec.key_len);
			if (trickle_save(tr, tr->key.ptr, tr->key.len) < 0) {
				r = -1;
				break;
			}
		}
	}
	store_iter_release(&it);
	if (r < 0)
		return -1;
	return trickle_fill_slots(tr, now);
}
