/*
 * resequence-record: the resequencer's state as store records, written
 * as it changes and read back after a restart (the kinds and their bytes
 * are described in resequencer.h).
 */
#include "resequencer.h"
#include "resequencer-parts.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "msgrec.h"
#include "store.h"

void rsq_group_value(struct buf *out, const struct rsq_group *g)
{
	buf_reset(out);
	buf_addf(out, "%" PRIu64 " %" PRIu64 " %d %d %" PRIu64 " %" PRId64 " %" PRIu64 "\n",
		 g->first, g->next, g->started, g->size_known, g->size, g->latest,
		 g->created);
	for (size_t i = 0; i < g->skipped.n; i++)
		buf_addf(out, "%s%" PRIu64 "-%" PRIu64, i ? "," : "",
			 g->skipped.v[i].lo, g->skipped.v[i].hi);
}

/* The skipped ranges "LO-HI,...", each above the one before. */
static int decode_skipped(struct rsq_group *g, const char *p)
{
	while (*p) {
		uint64_t lo, hi;
		int used;

		if (sscanf(p, "%" SCNu64 "-%" SCNu64 "%n", &lo, &hi, &used) != 2 ||
		    hi < lo || (g->skipped.n && lo <= seqset_max(&g->skipped)))
			return -1;
		rsq_restore_skipped(g, lo, hi);
		p += used;
		if (*p == ',' && p[1])
			p++;
		else if (*p)
			return -1;
	}
	return 0;
}

int rsq_group_decode(struct rsq_group *g, const char *value, size_t len)
{
	struct buf v = BUF_INIT;
	const char *nl;
	int used = 0, r = -1;

	buf_add(&v, value, len);
	if (!memchr(v.ptr, '\0', v.len) && (nl = strchr(v.ptr, '\n')) &&
	    sscanf(v.ptr, "%" SCNu64 " %" SCNu64 " %d %d %" SCNu64 " %" SCNd64 " %" SCNu64 "%n",
		   &g->first, &g->next, &g->started, &g->size_known, &g->size,
		   &g->latest, &g->created, &used) == 7 &&
	    v.ptr + used == nl && g->next >= g->first)
		r = decode_skipped(g, nl + 1);
	buf_release(&v);
	if (r < 0)
		errno = EINVAL;
	return r;
}

/* ---- restoring ---- */

static int restore_groups(struct resequencer *r, int64_t now)
{
	struct store_iter it;
	struct store_rec rec;
	struct buf value = BUF_INIT;
	int rc;

	store_iter_init(&it, r->store, RSQ_KIND_GROUP, NULL, 0);
	while ((rc = store_iter_next(&it, &rec, &value)) == 1) {
		struct rsq_group *g = rsq_group(r->table, rec.key, rec.key_len, 1, now);
		if (rsq_group_decode(g, value.ptr, value.len) < 0) {
			rc = -1;
			break;
		}
	}
	store_iter_release(&it);
	buf_release(&value);
	return rc;
}

static int restore_waiting(struct resequencer *r)
{
	struct store_iter it;
	struct store_rec rec;
	struct buf value = BUF_INIT;
	const char *block, *body, *why;
	int rc;

	store_iter_init(&it, r->store, RSQ_KIND_WAIT, NULL, 0);
	while ((rc = store_iter_next(&it, &rec, &value)) == 1) {
		struct rsq_group *g;
		size_t key_len, block_len, len;
		uint64_t num;
		int64_t at;

		if (msgrec_key_decode(rec.key, rec.key_len, &key_len, &num) < 0 ||
		    msgrec_split(value.ptr, value.len, &at, &block, &block_len,
				 &body, &len) < 0) {
			rc = -1;
			break;
		}
		g = rsq_group(r->table, rec.key, key_len, 1, at);
		/* Below next: it was going out when the run stopped, and
		 * goes out first now. */
		if (rsq_wait(r->table, g, num, at, value.ptr, value.len, &why) < 0) {
			errno = EINVAL;
			rc = -1;
			break;
		}
	}
	store_iter_release(&it);
	buf_release(&value);
	return rc;
}

int resequencer_restore(struct resequencer *r, int64_t now)
{
	struct rsq_limits none = r->opt.lim;
	struct rsq_group *g, *next;
	int rc;

	if (!r->store)
		return 0;
	/* Every message committed is taken back, whatever the limits of
	 * this run: the next one that finds them passed makes room first. */
	none.capacity = none.max_bytes = 0;
	rsq_table_set_limits(r->table, &none);
	rc = restore_groups(r, now);
	if (rc == 0) {
		rsq_restored(r->table);
		rc = restore_waiting(r);
	}
	rsq_table_set_limits(r->table, &r->opt.lim);
	if (rc < 0 || keyset_restore(r->done, r->store, RSQ_KIND_DONE, now) < 0)
		return -1;
	for (g = rsq_next_group(r->table, NULL); g; g = next) {
		next = rsq_next_group(r->table, g);
		(void)rsq_run_drain(r, g, NULL, now);
	}
	if (rsq_waiting(r->table) > r->stats.most)
		r->stats.most = rsq_waiting(r->table);
	return 0;
}
