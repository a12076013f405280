/*
 * aggregate-closed: keys of released groups, for --remember. A hash set
 * for the lookup and a list in order of expiry for the forgetting, so
 * both are O(1) and memory is bounded by time and by count.
 */
#include "aggregate.h"

#include <stdlib.h>
#include <string.h>

#include "aggregate-table.h"

struct closed_key {
	struct closed_key *chain;	/* in its bucket */
	struct closed_key *prev, *next;	/* in order of expiry */
	uint32_t hash;
	int64_t expires;
	size_t len;
	char key[];
};

struct agg_closed {
	int64_t remember;
	uint64_t max, count;
	struct closed_key **buckets;
	size_t nbuckets;		/* a power of two */
	struct closed_key *oldest, *newest;
};

struct agg_closed *agg_closed_new(int64_t remember_ms, uint64_t max)
{
	struct agg_closed *c = xmalloc(sizeof(*c));

	memset(c, 0, sizeof(*c));
	c->remember = remember_ms;
	c->max = max;
	c->nbuckets = 64;
	c->buckets = xmalloc(c->nbuckets * sizeof(*c->buckets));
	memset(c->buckets, 0, c->nbuckets * sizeof(*c->buckets));
	return c;
}

void agg_closed_free(struct agg_closed *c)
{
	if (!c)
		return;
	for (struct closed_key *k = c->oldest, *next; k; k = next) {
		next = k->next;
		free(k);
	}
	free(c->buckets);
	free(c);
}

static struct closed_key **find_slot(struct agg_closed *c, const char *key,
				     size_t len, uint32_t h)
{
	struct closed_key **p = &c->buckets[h & (c->nbuckets - 1)];

	while (*p && !((*p)->hash == h && (*p)->len == len &&
		       !memcmp((*p)->key, key, len)))
		p = &(*p)->chain;
	return p;
}

static void unlink_key(struct agg_closed *c, struct closed_key *k)
{
	*(k->prev ? &k->prev->next : &c->oldest) = k->next;
	*(k->next ? &k->next->prev : &c->newest) = k->prev;
	k->prev = k->next = NULL;
}

static void append_key(struct agg_closed *c, struct closed_key *k)
{
	k->prev = c->newest;
	k->next = NULL;
	*(c->newest ? &c->newest->next : &c->oldest) = k;
	c->newest = k;
}

static void forget(struct agg_closed *c, struct closed_key *k)
{
	struct closed_key **p = find_slot(c, k->key, k->len, k->hash);

	*p = k->chain;
	unlink_key(c, k);
	c->count--;
	free(k);
}

static void grow(struct agg_closed *c)
{
	size_t n = 2 * c->nbuckets;
	struct closed_key **b = xmalloc(n * sizeof(*b));

	memset(b, 0, n * sizeof(*b));
	for (struct closed_key *k = c->oldest; k; k = k->next) {
		k->chain = b[k->hash & (n - 1)];
		b[k->hash & (n - 1)] = k;
	}
	free(c->buckets);
	c->buckets = b;
	c->nbuckets = n;
}

uint64_t agg_closed_expire(struct agg_closed *c, int64_t now)
{
	uint64_t n = 0;

	while (c->oldest && c->oldest->expires <= now) {
		forget(c, c->oldest);
		n++;
	}
	return n;
}

/*
 * Expiry times are kept in list order, never earlier than the newest's:
 * with event time a member may carry an older Timestamp than one before
 * it, and a key then lives a little longer rather than the list
 * needing a sort.
 */
void agg_closed_add(struct agg_closed *c, const char *key, size_t len,
		    int64_t now)
{
	uint32_t h = agg_hash(key, len);
	struct closed_key **p = find_slot(c, key, len, h), *k = *p;
	int64_t expires = now + c->remember;

	if (c->newest && c->newest->expires > expires)
		expires = c->newest->expires;
	if (k) {
		unlink_key(c, k);
	} else {
		if (c->max && c->count >= c->max)
			forget(c, c->oldest);
		if (c->count >= c->nbuckets)
			grow(c);
		k = xmalloc(sizeof(*k) + len + 1);
		memcpy(k->key, key, len);
		k->key[len] = '\0';
		k->len = len;
		k->hash = h;
		p = find_slot(c, key, len, h);
		k->chain = *p;
		*p = k;
		c->count++;
	}
	k->expires = expires;
	append_key(c, k);
}

int agg_closed_has(struct agg_closed *c, const char *key, size_t len, int64_t now)
{
	agg_closed_expire(c, now);
	return *find_slot(c, key, len, agg_hash(key, len)) != NULL;
}

uint64_t agg_closed_count(const struct agg_closed *c)
{
	return c->count;
}

int64_t agg_closed_expiry(const struct agg_closed *c, const char *key, size_t len)
{
	struct closed_key *k = *find_slot((struct agg_closed *)c, key, len,
					  agg_hash(key, len));

	return k ? k->expires : 0;
}
