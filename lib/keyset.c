/*
 * keyset: keys remembered for a time and up to a count (keyset.h). A
 * hash set for the lookup and a list in order of expiry for the
 * forgetting, so both are O(1) and memory is bounded by time and by
 * count.
 */
#include "keyset.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "msgrec.h"
#include "store.h"

struct held_key {
	struct held_key *chain;	/* in its bucket */
	struct held_key *prev, *next;	/* in order of expiry */
	uint32_t hash;
	int64_t expires;
	size_t len;
	size_t data_len;
	char key[];		/* the key, a NUL, its data */
};

struct keyset {
	int64_t remember;
	uint64_t max, count, evicted;
	uint64_t max_data, data;	/* bytes of data: the limit, held */
	void (*on_evict)(void *ctx, const char *key, size_t len);
	void *evict_ctx;
	struct held_key **buckets;
	size_t nbuckets;		/* a power of two */
	struct held_key *oldest, *newest;
};

struct keyset *keyset_new(int64_t remember_ms, uint64_t max)
{
	struct keyset *c = xmalloc(sizeof(*c));

	memset(c, 0, sizeof(*c));
	c->remember = remember_ms;
	c->max = max;
	c->nbuckets = 64;
	c->buckets = xmalloc(c->nbuckets * sizeof(*c->buckets));
	memset(c->buckets, 0, c->nbuckets * sizeof(*c->buckets));
	return c;
}

void keyset_free(struct keyset *c)
{
	if (!c)
		return;
	for (struct held_key *k = c->oldest, *next; k; k = next) {
		next = k->next;
		free(k);
	}
	free(c->buckets);
	free(c);
}

/* FNV-1a: keys are short, and the table only needs them spread. */
static uint32_t key_hash(const char *p, size_t n)
{
	uint32_t h = 2166136261u;

	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)p[i]) * 16777619u;
	return h;
}

void keyset_on_evict(struct keyset *c,
		     void (*fn)(void *ctx, const char *key, size_t len),
		     void *ctx)
{
	c->on_evict = fn;
	c->evict_ctx = ctx;
}

static struct held_key **find_slot(struct keyset *c, const char *key,
				     size_t len, uint32_t h)
{
	struct held_key **p = &c->buckets[h & (c->nbuckets - 1)];

	while (*p && !((*p)->hash == h && (*p)->len == len &&
		       !memcmp((*p)->key, key, len)))
		p = &(*p)->chain;
	return p;
}

static void unlink_key(struct keyset *c, struct held_key *k)
{
	*(k->prev ? &k->prev->next : &c->oldest) = k->next;
	*(k->next ? &k->next->prev : &c->newest) = k->prev;
	k->prev = k->next = NULL;
}

static void append_key(struct keyset *c, struct held_key *k)
{
	k->prev = c->newest;
	k->next = NULL;
	*(c->newest ? &c->newest->next : &c->oldest) = k;
	c->newest = k;
}

static void forget(struct keyset *c, struct held_key *k)
{
	struct held_key **p = find_slot(c, k->key, k->len, k->hash);

	*p = k->chain;
	unlink_key(c, k);
	c->count--;
	c->data -= k->data_len;
	free(k);
}

static void grow(struct keyset *c)
{
	size_t n = 2 * c->nbuckets;
	struct held_key **b = xmalloc(n * sizeof(*b));

	memset(b, 0, n * sizeof(*b));
	for (struct held_key *k = c->oldest; k; k = k->next) {
		k->chain = b[k->hash & (n - 1)];
		b[k->hash & (n - 1)] = k;
	}
	free(c->buckets);
	c->buckets = b;
	c->nbuckets = n;
}

uint64_t keyset_expire(struct keyset *c, int64_t now)
{
	uint64_t n = 0;

	while (c->oldest && c->oldest->expires <= now) {
		forget(c, c->oldest);
		n++;
	}
	return n;
}

/* Make room for one more key by forgetting the oldest. */
static void evict_oldest(struct keyset *c)
{
	c->evicted++;
	if (c->on_evict)
		c->on_evict(c->evict_ctx, c->oldest->key, c->oldest->len);
	forget(c, c->oldest);
}

static struct held_key *new_key(struct keyset *c, const char *key, size_t len,
				uint32_t h, const void *data, size_t data_len)
{
	struct held_key *k, **p;

	if (c->max && c->count >= c->max)
		evict_oldest(c);
	if (c->count >= c->nbuckets)
		grow(c);
	k = xmalloc(sizeof(*k) + len + 1 + data_len);
	memcpy(k->key, key, len);
	k->key[len] = '\0';
	if (data_len)
		memcpy(k->key + len + 1, data, data_len);
	k->len = len;
	k->data_len = data_len;
	k->hash = h;
	p = find_slot(c, key, len, h);
	k->chain = *p;
	*p = k;
	c->count++;
	c->data += data_len;
	return k;
}

/*
 * Expiry times are kept in list order, never earlier than the newest's:
 * with event time a member may carry an older Timestamp than one before
 * it, and a key then lives a little longer rather than the list
 * needing a sort.
 */
void keyset_add_data(struct keyset *c, const char *key, size_t len, int64_t now,
		     const void *data, size_t data_len)
{
	uint32_t h = key_hash(key, len);
	struct held_key *k = *find_slot(c, key, len, h);
	int64_t expires = now + c->remember;

	if (c->newest && c->newest->expires > expires)
		expires = c->newest->expires;
	/* Data replaced: the key is made again at its new size. */
	if (k && (data || k->data_len)) {
		forget(c, k);
		k = NULL;
	}
	if (k)
		unlink_key(c, k);
	else
		k = new_key(c, key, len, h, data, data_len);
	k->expires = expires;
	append_key(c, k);
	while (c->max_data && c->data > c->max_data && c->oldest != k)
		evict_oldest(c);
}

void keyset_add(struct keyset *c, const char *key, size_t len, int64_t now)
{
	keyset_add_data(c, key, len, now, NULL, 0);
}

const char *keyset_data(const struct keyset *c, const char *key, size_t len,
			size_t *data_len)
{
	struct held_key *k = *find_slot((struct keyset *)c, key, len,
					  key_hash(key, len));

	*data_len = k ? k->data_len : 0;
	return k ? k->key + len + 1 : NULL;
}

void keyset_limit_data(struct keyset *c, uint64_t max)
{
	c->max_data = max;
}

int keyset_has(struct keyset *c, const char *key, size_t len, int64_t now)
{
	keyset_expire(c, now);
	return *find_slot(c, key, len, key_hash(key, len)) != NULL;
}

uint64_t keyset_count(const struct keyset *c)
{
	return c->count;
}

int64_t keyset_expiry(const struct keyset *c, const char *key, size_t len)
{
	struct held_key *k = *find_slot((struct keyset *)c, key, len,
					  key_hash(key, len));

	return k ? k->expires : 0;
}

int keyset_insert(struct keyset *c, const char *key, size_t len, int64_t now)
{
	if (keyset_has(c, key, len, now))
		return 0;
	keyset_add(c, key, len, now);
	return 1;
}

uint64_t keyset_evicted(const struct keyset *c)
{
	return c->evicted;
}

void keyset_value(struct buf *out, int64_t at)
{
	buf_reset(out);
	buf_addf(out, "%lld", (long long)at);
}

int keyset_decode(const char *value, size_t value_len, int64_t *at)
{
	struct buf v = BUF_INIT;
	const char *end;
	int r;

	buf_add(&v, value, value_len);
	buf_addch(&v, '\n');
	end = msgrec_read_ms(v.ptr, v.ptr + v.len, at);
	r = end == v.ptr + v.len ? 0 : -1;
	buf_release(&v);
	if (r < 0)
		errno = EINVAL;
	return r;
}

/* Restore keys of kind, and with data the bytes after their time. */
static int restore(struct keyset *c, struct store *s, const char *kind,
		   int64_t now, int with_data)
{
	struct store_iter it;
	struct store_rec rec;
	struct buf value = BUF_INIT;
	int r;

	store_iter_init(&it, s, kind, NULL, 0);
	while ((r = store_iter_next(&it, &rec, &value)) == 1) {
		const char *space = memchr(value.ptr, ' ', value.len);
		size_t len = space ? (size_t)(space - value.ptr) : value.len;
		int64_t at;

		if (keyset_decode(value.ptr, len, &at) < 0) {
			r = -1;
			break;
		}
		if (rec.deadline <= now)
			continue;
		if (with_data && space)
			keyset_add_data(c, rec.key, rec.key_len, at, space + 1,
					value.len - len - 1);
		else
			keyset_add(c, rec.key, rec.key_len, at);
	}
	store_iter_release(&it);
	buf_release(&value);
	return r;
}

int keyset_restore(struct keyset *c, struct store *s, const char *kind,
		   int64_t now)
{
	return restore(c, s, kind, now, 0);
}

int keyset_restore_data(struct keyset *c, struct store *s, const char *kind,
			int64_t now)
{
	return restore(c, s, kind, now, 1);
}
