/*
 * aggregate-closed: released groups by key, with their members' ids as
 * digests (aggregate-closed.h), over a keyset whose data is the digests,
 * sorted, 8 bytes each, most significant byte first.
 */
#include "aggregate-closed.h"

#include <stdlib.h>
#include <string.h>

#include "hash128.h"
#include "keyset.h"

#define DIGEST 8

struct agg_closed {
	struct keyset *keys;
	struct buf digests;
};

struct agg_closed *agg_closed_new(int64_t remember_ms, uint64_t max_keys,
				  uint64_t max_ids)
{
	struct agg_closed *c = xcalloc(1, sizeof(*c));

	c->keys = keyset_new(remember_ms, max_keys);
	keyset_limit_data(c->keys, max_ids * DIGEST);
	buf_init(&c->digests, 0);
	return c;
}

void agg_closed_free(struct agg_closed *c)
{
	if (!c)
		return;
	keyset_free(c->keys);
	buf_release(&c->digests);
	free(c);
}

static void digest(const char *id, size_t len, unsigned char out[DIGEST])
{
	hash128_t h = hash128_init();
	unsigned char b[16];

	hash128_add(&h, id, len);
	hash128_bytes(h, b);
	memcpy(out, b, DIGEST);
}

static int digest_cmp(const void *a, const void *b)
{
	return memcmp(a, b, DIGEST);
}

/* The digests of g's members that have a Message-Id, sorted, into out. */
static void group_digests(const struct agg_group *g, struct buf *out)
{
	size_t n = 0;

	buf_reset(out);
	buf_grow(out, g->n * DIGEST);
	for (size_t i = 0; i < g->n; i++) {
		const char *id = agg_member_id(g, &g->m[i]);
		if (!id)
			continue;
		digest(id, g->m[i].id_len, (unsigned char *)out->ptr + n * DIGEST);
		n++;
	}
	buf_setlen(out, n * DIGEST);
	qsort(out->ptr, n, DIGEST, digest_cmp);
}

void agg_closed_value(struct buf *out, const struct agg_group *g, int64_t now)
{
	struct buf d = BUF_INIT;

	keyset_value(out, now);
	group_digests(g, &d);
	buf_addch(out, ' ');
	buf_add(out, d.ptr, d.len);
	buf_release(&d);
}

void agg_closed_add(struct agg_closed *c, const struct agg_group *g, int64_t now)
{
	group_digests(g, &c->digests);
	keyset_add_data(c->keys, g->key, g->key_len, now, c->digests.ptr,
			c->digests.len);
}

enum agg_closed_verdict agg_closed_check(struct agg_closed *c, const char *key,
					 size_t key_len, const char *id, int64_t now)
{
	unsigned char want[DIGEST];
	const char *data;
	size_t len;

	if (!keyset_has(c->keys, key, key_len, now))
		return AGG_NOT_CLOSED;
	data = keyset_data(c->keys, key, key_len, &len);
	if (!id || len < DIGEST)
		return AGG_LATE;
	digest(id, strlen(id), want);
	return bsearch(want, data, len / DIGEST, DIGEST, digest_cmp)
	       ? AGG_REDELIVERED : AGG_LATE;
}

void agg_closed_expire(struct agg_closed *c, int64_t now)
{
	keyset_expire(c->keys, now);
}

int agg_closed_restore(struct agg_closed *c, struct store *s, int64_t now)
{
	return keyset_restore_data(c->keys, s, AGG_KIND_CLOSED, now);
}
