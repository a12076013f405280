/*
 * resequence: groups, their waiting messages and their gaps
 * (resequence.h).
 *
 * Each group keeps what waits in it twice over: a min-heap by number,
 * which gives the next one out, and a list by arrival, which gives its
 * oldest for the -T deadline. Across groups, a hash of (group, number)
 * tells a duplicate in O(1); a heap of the waiting groups by their
 * oldest message gives the earliest deadline and the oldest gap; a heap
 * of the others by their latest message gives those to forget.
 */
#include "resequence.h"

#include <stdlib.h>
#include <string.h>

#include "timeheap.h"

struct rsq_table {
	struct rsq_limits lim;
	struct rsq_group **buckets;	/* chained by rsq_group.chain */
	size_t nbuckets;		/* a power of two */
	uint64_t ngroups, created;
	struct rsq_group *first_made, *last_made;
	struct rsq_msg **slots;		/* (group, number): open addressing */
	size_t nslots;			/* a power of two */
	uint64_t waiting, bytes;
	struct timeheap waiters;	/* by oldest waiting arrival */
	struct timeheap idle;		/* by latest; times caught up lazily */
};

struct rsq_table *rsq_table_new(const struct rsq_limits *lim)
{
	struct rsq_table *t = xmalloc(sizeof(*t));

	memset(t, 0, sizeof(*t));
	t->lim = *lim;
	t->nbuckets = 64;
	t->buckets = xcalloc(t->nbuckets, sizeof(*t->buckets));
	t->nslots = 64;
	t->slots = xcalloc(t->nslots, sizeof(*t->slots));
	return t;
}

void rsq_table_free(struct rsq_table *t)
{
	if (!t)
		return;
	while (t->first_made)
		rsq_forget(t, t->first_made);
	free(t->buckets);
	free(t->slots);
	timeheap_release(&t->waiters);
	timeheap_release(&t->idle);
	free(t);
}

void rsq_table_set_limits(struct rsq_table *t, const struct rsq_limits *lim)
{
	t->lim = *lim;
}

/* ---- the hash of waiting messages ---- */

static size_t slot_of(const struct rsq_table *t, const struct rsq_group *g,
		      uint64_t num)
{
	uint64_t x = (uint64_t)(uintptr_t)g * 0x9e3779b97f4a7c15ull ^ num;

	x ^= x >> 31;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 29;
	return (size_t)x & (t->nslots - 1);
}

static struct rsq_msg *slot_find(const struct rsq_table *t,
				 const struct rsq_group *g, uint64_t num)
{
	for (size_t i = slot_of(t, g, num);; i = (i + 1) & (t->nslots - 1)) {
		struct rsq_msg *m = t->slots[i];
		if (!m || (m->g == g && m->num == num))
			return m;
	}
}

static void slot_put(struct rsq_table *t, struct rsq_msg *m)
{
	size_t i = slot_of(t, m->g, m->num);

	while (t->slots[i])
		i = (i + 1) & (t->nslots - 1);
	t->slots[i] = m;
}

static void slots_grow(struct rsq_table *t)
{
	struct rsq_msg **old = t->slots;
	size_t n = t->nslots;

	t->nslots *= 2;
	t->slots = xcalloc(t->nslots, sizeof(*t->slots));
	for (size_t i = 0; i < n; i++)
		if (old[i])
			slot_put(t, old[i]);
	free(old);
}

/* Linear probing deletes by moving later entries of the run back, so
 * that no lookup stops early at the hole. */
static void slot_delete(struct rsq_table *t, const struct rsq_msg *m)
{
	size_t mask = t->nslots - 1, i = slot_of(t, m->g, m->num);

	while (t->slots[i] != m)
		i = (i + 1) & mask;
	for (size_t j = (i + 1) & mask; t->slots[j]; j = (j + 1) & mask) {
		size_t home = slot_of(t, t->slots[j]->g, t->slots[j]->num);
		/* Can the entry at j move to i? Only if its home is not in
		 * the cyclic range (i, j]. */
		if (((j - home) & mask) >= ((j - i) & mask)) {
			t->slots[i] = t->slots[j];
			i = j;
		}
	}
	t->slots[i] = NULL;
}

/* ---- groups ---- */

/* FNV-1a: keys are short, and the table only needs them spread. */
static uint32_t key_hash(const char *p, size_t n)
{
	uint32_t h = 2166136261u;

	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)p[i]) * 16777619u;
	return h;
}

static struct rsq_group **bucket(const struct rsq_table *t, uint32_t hash)
{
	return &t->buckets[hash & (t->nbuckets - 1)];
}

static void buckets_grow(struct rsq_table *t)
{
	struct rsq_group **old = t->buckets;
	size_t n = t->nbuckets;

	t->nbuckets *= 2;
	t->buckets = xcalloc(t->nbuckets, sizeof(*t->buckets));
	for (size_t i = 0; i < n; i++)
		for (struct rsq_group *g = old[i], *next; g; g = next) {
			next = g->chain;
			g->chain = *bucket(t, g->hash);
			*bucket(t, g->hash) = g;
		}
	free(old);
}

static struct rsq_group *make_group(struct rsq_table *t, const char *key,
				    size_t len, uint32_t hash, int64_t now)
{
	struct rsq_group *g = xcalloc(1, sizeof(*g));

	g->key = xmalloc(len + 1);
	memcpy(g->key, key, len);
	g->key[len] = '\0';
	g->key_len = len;
	g->hash = hash;
	g->started = !t->lim.start_first;
	g->first = g->next = t->lim.start;
	g->latest = now;
	g->created = ++t->created;
	seqset_init(&g->skipped);
	if (++t->ngroups > 2 * t->nbuckets)
		buckets_grow(t);
	g->chain = *bucket(t, hash);
	*bucket(t, hash) = g;
	g->prev = t->last_made;
	if (t->last_made)
		t->last_made->next_made = g;
	else
		t->first_made = g;
	t->last_made = g;
	timeheap_insert(&t->idle, g, &g->idle_pos, now, g->created);
	return g;
}

struct rsq_group *rsq_group(struct rsq_table *t, const char *key, size_t len,
			    int create, int64_t now)
{
	uint32_t hash = key_hash(key, len);

	for (struct rsq_group *g = *bucket(t, hash); g; g = g->chain)
		if (g->hash == hash && g->key_len == len && !memcmp(g->key, key, len)) {
			if (now > g->latest)
				g->latest = now;
			return g;
		}
	return create ? make_group(t, key, len, hash, now) : NULL;
}

static void unlink_group(struct rsq_table *t, struct rsq_group *g)
{
	struct rsq_group **p = bucket(t, g->hash);

	while (*p != g)
		p = &(*p)->chain;
	*p = g->chain;
	if (g->prev)
		g->prev->next_made = g->next_made;
	else
		t->first_made = g->next_made;
	if (g->next_made)
		g->next_made->prev = g->prev;
	else
		t->last_made = g->prev;
	t->ngroups--;
}

void rsq_forget(struct rsq_table *t, struct rsq_group *g)
{
	if (g->nwait)
		timeheap_delete(&t->waiters, g->heap_pos);
	else
		timeheap_delete(&t->idle, g->idle_pos);
	for (size_t i = 0; i < g->nwait; i++) {
		slot_delete(t, g->wait[i].m);
		t->bytes -= g->wait[i].m->len;
		free(g->wait[i].m);
	}
	t->waiting -= g->nwait;
	unlink_group(t, g);
	seqset_release(&g->skipped);
	free(g->wait);
	free(g->key);
	free(g);
}

static int by_created(const void *a, const void *b)
{
	const struct rsq_group *x = *(struct rsq_group *const *)a;
	const struct rsq_group *y = *(struct rsq_group *const *)b;

	return x->created < y->created ? -1 : x->created > y->created;
}

void rsq_restored(struct rsq_table *t)
{
	struct rsq_group **v = xmalloc((t->ngroups + 1) * sizeof(*v));
	size_t n = 0;

	for (struct rsq_group *g = t->first_made; g; g = g->next_made)
		v[n++] = g;
	qsort(v, n, sizeof(*v), by_created);
	t->first_made = t->last_made = NULL;
	for (size_t i = 0; i < n; i++) {
		struct rsq_group *g = v[i];

		g->prev = t->last_made;
		g->next_made = NULL;
		*(t->last_made ? &t->last_made->next_made : &t->first_made) = g;
		t->last_made = g;
		if (g->created > t->created)
			t->created = g->created;
		if (!g->nwait) {
			t->idle.v[g->idle_pos].time = g->latest;
			t->idle.v[g->idle_pos].order = g->created;
			timeheap_fix(&t->idle, g->idle_pos);
		}
	}
	free(v);
}

struct rsq_group *rsq_next_group(const struct rsq_table *t,
				 const struct rsq_group *after)
{
	return after ? after->next_made : t->first_made;
}

/* ---- numbers ---- */

static uint64_t lowest_waiting(const struct rsq_group *g)
{
	return g->wait[0].num;
}

enum rsq_place rsq_place(const struct rsq_table *t, const struct rsq_group *g,
			 uint64_t num)
{
	if (!t->lim.start_first && num < t->lim.start)
		return RSQ_BELOW_START;
	if (g->size_known && g->started && num - g->first >= g->size &&
	    num >= g->first)
		return RSQ_PAST_END;
	if (g->started && num < g->next)
		return num < g->first || seqset_has(&g->skipped, num) ?
		       RSQ_SKIPPED : RSQ_EMITTED;
	if (g->nwait && slot_find(t, g, num))
		return RSQ_WAITING;
	if (g->started && num == g->next)
		return RSQ_NEXT;
	return RSQ_LATER;
}

int rsq_set_size(struct rsq_group *g, uint64_t size)
{
	if (g->size_known)
		return g->size == size ? 0 : -1;
	g->size = size;
	g->size_known = 1;
	return 0;
}

int rsq_complete(const struct rsq_group *g)
{
	return g->started && g->size_known && g->next - g->first >= g->size;
}

/* ---- the group's heap by number ---- */

static void num_sift_up(struct rsq_wait *h, size_t i)
{
	struct rsq_wait w = h[i];

	while (i > 0 && h[(i - 1) / 2].num > w.num) {
		h[i] = h[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	h[i] = w;
}

static void num_sift_down(struct rsq_wait *h, size_t n, size_t i)
{
	struct rsq_wait w = h[i];

	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= n)
			break;
		if (c + 1 < n && h[c + 1].num < h[c].num)
			c++;
		if (h[c].num >= w.num)
			break;
		h[i] = h[c];
		i = c;
	}
	h[i] = w;
}

/* ---- waiting ---- */

static void start_waiting(struct rsq_table *t, struct rsq_group *g)
{
	timeheap_delete(&t->idle, g->idle_pos);
	timeheap_insert(&t->waiters, g, &g->heap_pos, g->oldest->arrived,
			g->created);
}

static void stop_waiting(struct rsq_table *t, struct rsq_group *g)
{
	timeheap_delete(&t->waiters, g->heap_pos);
	timeheap_insert(&t->idle, g, &g->idle_pos, g->latest, g->created);
}

/* --start first: the window is full, or time or input ran out. */
static void start(struct rsq_group *g)
{
	g->started = 1;
	g->first = g->next = lowest_waiting(g);
}

int rsq_wait(struct rsq_table *t, struct rsq_group *g, uint64_t num,
	     int64_t arrived, const void *rec, size_t len, const char **why)
{
	struct rsq_msg *m;

	if (t->lim.capacity && t->waiting >= t->lim.capacity) {
		*why = "-C";
		return RSQ_FULL;
	}
	if (t->lim.max_bytes && t->bytes + len > t->lim.max_bytes) {
		*why = "--max-bytes";
		return RSQ_FULL;
	}
	m = xmalloc(sizeof(*m) + len);
	m->g = g;
	m->num = num;
	m->arrived = arrived;
	m->len = len;
	memcpy(m->rec, rec, len);
	m->newer = NULL;
	m->older = g->newest;
	if (g->newest)
		g->newest->newer = m;
	else
		g->oldest = m;
	g->newest = m;
	if (g->nwait == g->await) {
		g->await = g->await ? 2 * g->await : 8;
		g->wait = xrealloc(g->wait, g->await * sizeof(*g->wait));
	}
	g->wait[g->nwait].num = num;
	g->wait[g->nwait++].m = m;
	num_sift_up(g->wait, g->nwait - 1);
	if (++t->waiting * 2 > t->nslots)
		slots_grow(t);
	slot_put(t, m);
	t->bytes += len;
	if (g->nwait == 1)
		start_waiting(t, g);
	if (!g->started && g->nwait >= t->lim.window)
		start(g);
	return 0;
}

void rsq_advance(struct rsq_table *t, struct rsq_group *g)
{
	(void)t;
	g->next++;
}

/* Out of every structure but the group's heap, whose top it was. */
static void unlink_msg(struct rsq_table *t, struct rsq_group *g,
		       struct rsq_msg *m)
{
	int was_oldest = g->oldest == m;

	if (m->older)
		m->older->newer = m->newer;
	else
		g->oldest = m->newer;
	if (m->newer)
		m->newer->older = m->older;
	else
		g->newest = m->older;
	slot_delete(t, m);
	t->waiting--;
	t->bytes -= m->len;
	if (!g->nwait) {
		stop_waiting(t, g);
	} else if (was_oldest) {
		t->waiters.v[g->heap_pos].time = g->oldest->arrived;
		timeheap_sift_down(&t->waiters, g->heap_pos);
	}
}

struct rsq_msg *rsq_take_next(struct rsq_table *t, struct rsq_group *g)
{
	struct rsq_msg *m;

	if (!g->started || !g->nwait || lowest_waiting(g) > g->next)
		return NULL;
	m = g->wait[0].m;
	g->wait[0] = g->wait[--g->nwait];
	if (g->nwait)
		num_sift_down(g->wait, g->nwait, 0);
	unlink_msg(t, g, m);
	if (m->num == g->next)
		g->next++;
	return m;
}

int rsq_skip(struct rsq_table *t, struct rsq_group *g, uint64_t *lo,
	     uint64_t *hi)
{
	(void)t;
	if (!g->nwait)
		return -1;
	if (!g->started) {
		start(g);
		return 0;
	}
	*lo = g->next;
	*hi = lowest_waiting(g) - 1;
	seqset_append(&g->skipped, *lo, *hi);
	g->next = *hi + 1;
	return 1;
}

void rsq_restore_skipped(struct rsq_group *g, uint64_t lo, uint64_t hi)
{
	seqset_append(&g->skipped, lo, hi);
}

/* ---- time ---- */

struct rsq_group *rsq_oldest(const struct rsq_table *t)
{
	return timeheap_top(&t->waiters, NULL);
}

int64_t rsq_next_deadline(const struct rsq_table *t)
{
	int64_t oldest;

	if (!t->lim.timeout_ms || !timeheap_top(&t->waiters, &oldest))
		return 0;
	return oldest + t->lim.timeout_ms;
}

struct rsq_group *rsq_expired(const struct rsq_table *t, int64_t now)
{
	int64_t d = rsq_next_deadline(t);

	return d && d <= now ? rsq_oldest(t) : NULL;
}

struct rsq_group *rsq_idle(struct rsq_table *t, int64_t now, int64_t idle_ms)
{
	struct rsq_group *g;
	int64_t told;

	/* A group's latest moves on without a word to the heap: catch up
	 * at the top until it is current. */
	while ((g = timeheap_top(&t->idle, &told)) && told != g->latest) {
		t->idle.v[0].time = g->latest;
		timeheap_sift_down(&t->idle, 0);
	}
	return g && told + idle_ms <= now ? g : NULL;
}

uint64_t rsq_waiting(const struct rsq_table *t) { return t->waiting; }
uint64_t rsq_waiting_bytes(const struct rsq_table *t) { return t->bytes; }
uint64_t rsq_groups(const struct rsq_table *t) { return t->ngroups; }
