/* aggregate-group: the open groups by key, their members and limits. */
#include "aggregate.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "aggregate-live.h"
#include "aggregate-table.h"

static const char *const reason_names[] = {
	[AGG_OPEN] = "open", [AGG_COMPLETE] = "complete", [AGG_COUNT] = "count",
	[AGG_UNTIL] = "until", [AGG_TIMEOUT] = "timeout", [AGG_IDLE] = "idle",
	[AGG_CLOSE] = "close", [AGG_END] = "end", [AGG_LIMIT] = "limit",
};

const char *agg_reason_name(enum agg_reason r)
{
	return reason_names[r];
}

struct agg_table *agg_table_new(const struct agg_limits *lim)
{
	struct agg_table *t = xmalloc(sizeof(*t));

	memset(t, 0, sizeof(*t));
	t->lim = *lim;
	t->nbuckets = 64;
	t->buckets = xmalloc(t->nbuckets * sizeof(*t->buckets));
	memset(t->buckets, 0, t->nbuckets * sizeof(*t->buckets));
	t->serial = 1;
	return t;
}

void agg_table_set_limits(struct agg_table *t, const struct agg_limits *lim)
{
	t->lim = *lim;
}

static void group_free(struct agg_group *g)
{
	free(g->m);
	free(g->ids);
	buf_release(&g->data);
	seqset_release(&g->seen);
	headers_release(&g->common);
	agg_live_free(g->live);
	free(g);
}

void agg_table_free(struct agg_table *t)
{
	if (!t)
		return;
	for (size_t b = 0; b < t->nbuckets; b++)
		for (struct agg_group *g = t->buckets[b], *next; g; g = next) {
			next = g->chain;
			group_free(g);
		}
	free(t->buckets);
	timeheap_release(&t->heap[0]);
	timeheap_release(&t->heap[1]);
	free(t);
}

struct agg_group *agg_find(struct agg_table *t, const char *key, size_t key_len)
{
	uint32_t h = agg_hash(key, key_len);

	for (struct agg_group *g = t->buckets[h & (t->nbuckets - 1)]; g; g = g->chain)
		if (g->hash == h && g->key_len == key_len &&
		    !memcmp(g->key, key, key_len))
			return g;
	return NULL;
}

/* Double the buckets when groups outnumber them: chains stay short. */
static void grow_buckets(struct agg_table *t)
{
	size_t n = t->nbuckets * 2;
	struct agg_group **b = xmalloc(n * sizeof(*b));

	memset(b, 0, n * sizeof(*b));
	for (size_t i = 0; i < t->nbuckets; i++)
		for (struct agg_group *g = t->buckets[i], *next; g; g = next) {
			next = g->chain;
			g->chain = b[g->hash & (n - 1)];
			b[g->hash & (n - 1)] = g;
		}
	free(t->buckets);
	t->buckets = b;
	t->nbuckets = n;
}

static struct agg_group *group_new(struct agg_table *t, const char *key,
				   size_t key_len, int64_t now)
{
	/* The key lives in the group's own block. */
	struct agg_group *g = xmalloc(sizeof(*g) + key_len + 1);
	size_t b;

	memset(g, 0, sizeof(*g));
	g->key = memcpy(g + 1, key, key_len);
	g->key[key_len] = '\0';
	buf_init(&g->data, 0);
	g->key_len = key_len;
	g->hash = agg_hash(key, key_len);
	g->first = g->last = now;
	g->created = t->created++;
	seqset_init(&g->seen);
	headers_init(&g->common);
	if (t->ngroups >= t->nbuckets)
		grow_buckets(t);
	b = g->hash & (t->nbuckets - 1);
	g->chain = t->buckets[b];
	t->buckets[b] = g;
	t->ngroups++;
	agg_heaps_insert(t, g);
	return g;
}

void agg_remove(struct agg_table *t, struct agg_group *g)
{
	struct agg_group **p = &t->buckets[g->hash & (t->nbuckets - 1)];

	while (*p != g)
		p = &(*p)->chain;
	*p = g->chain;
	agg_heaps_remove(t, g);
	t->ngroups--;
	t->bytes -= g->bytes;
	group_free(g);
}

uint64_t agg_groups(const struct agg_table *t)
{
	return t->ngroups;
}

uint64_t agg_bytes(const struct agg_table *t)
{
	return t->bytes;
}

uint64_t agg_next_serial(const struct agg_table *t)
{
	return t->serial;
}

struct agg_group *agg_next_group(struct agg_table *t, struct agg_group *after)
{
	size_t b = 0;

	if (after) {
		if (after->chain)
			return after->chain;
		b = (after->hash & (t->nbuckets - 1)) + 1;
	}
	for (; b < t->nbuckets; b++)
		if (t->buckets[b])
			return t->buckets[b];
	return NULL;
}

/* ---- duplicate Message-Ids: open addressing over member indices ---- */

static size_t id_slot(const struct agg_group *g, const char *id, size_t len)
{
	return agg_hash(id, len) & (g->ids_cap - 1);
}

static int id_is(const struct agg_group *g, const struct agg_member *m,
		 const char *id, size_t len)
{
	return len && m->id_len == len &&
	       !memcmp(g->data.ptr + m->off + m->len + 1, id, len);
}

static int id_seen(const struct agg_group *g, const char *id)
{
	size_t len = strlen(id);

	/* Small groups have no set: a scan of a few members is as quick. */
	if (!g->ids_cap) {
		for (size_t i = 0; i < g->n; i++)
			if (id_is(g, &g->m[i], id, len))
				return 1;
		return 0;
	}
	for (size_t i = id_slot(g, id, len); g->ids[i]; i = (i + 1) & (g->ids_cap - 1))
		if (id_is(g, &g->m[g->ids[i] - 1], id, len))
			return 1;
	return 0;
}

static void id_insert(struct agg_group *g, size_t member)
{
	const struct agg_member *m = &g->m[member];
	/* Only members with an id are inserted: its bytes follow the body. */
	size_t i = id_slot(g, g->data.ptr + m->off + m->len + 1, m->id_len);

	while (g->ids[i])
		i = (i + 1) & (g->ids_cap - 1);
	g->ids[i] = (uint32_t)(member + 1);
}

#define IDS_SCANNED 16	/* members a group holds before it has a set */

/* Keep the set under half full, so probes stay short. */
static void id_add(struct agg_group *g, size_t member)
{
	if (member < IDS_SCANNED)
		return;
	if (2 * (g->n + 1) > g->ids_cap) {
		size_t cap = g->ids_cap ? 2 * g->ids_cap : 4 * IDS_SCANNED;
		free(g->ids);
		g->ids = xmalloc(cap * sizeof(*g->ids));
		memset(g->ids, 0, cap * sizeof(*g->ids));
		g->ids_cap = cap;
		for (size_t i = 0; i < member; i++)
			if (g->m[i].id_len)
				id_insert(g, i);
	}
	id_insert(g, member);
}

/* ---- headers all members share ---- */

static const char *const per_message[] = {
	"Message-Id", "Timestamp", "Content-Length", "Error",
	"Aggregate-Size", "Aggregate-Reason", "Aggregate-Missing",
};

/* Set for the aggregate by agg_build, but where the first message had
 * them, so that a popped Sequence-Stack puts them back in place. */
static const char *const placed[] = {
	"Correlation-Id", "Sequence-Number", "Sequence-Size", "Sequence-End",
};

static int name_in(const char *name, size_t len, const char *const *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (header_name_eq(name, len, v[i], strlen(v[i])))
			return 1;
	return 0;
}

int agg_common_skip(const char *name, size_t len)
{
	return name_in(name, len, per_message, sizeof(per_message) / sizeof(*per_message));
}

static int is_placed(const char *name, size_t len)
{
	return name_in(name, len, placed, sizeof(placed) / sizeof(*placed));
}

static void common_first(struct agg_group *g, const struct headers *h)
{
	/* A copy is sized to fit: a group's headers take no slack. */
	headers_copy(&g->common, h);
	for (size_t i = 0; i < sizeof(per_message) / sizeof(*per_message); i++)
		headers_remove(&g->common, per_message[i]);
}

/* Drop what h does not carry with the same value. */
static void common_narrow(struct agg_group *g, const struct headers *h)
{
	char name[HEADER_NAME_MAX + 1];
	size_t i = 0;

	while (i < headers_count(&g->common)) {
		size_t nl, vl;
		const char *n = headers_name(&g->common, i, &nl);
		const char *v = headers_value(&g->common, i, &vl);
		const char *other = headers_get(h, n);
		if (is_placed(n, nl) ||
		    (other && strlen(other) == vl && !memcmp(other, v, vl))) {
			i++;
			continue;
		}
		memcpy(name, n, nl + 1);
		headers_remove(&g->common, name);
	}
}

/* ---- adding ---- */

struct seq_info {
	uint64_t number;	/* 0: none */
	uint64_t size;
	int has_size;
};

static enum agg_added read_seq(const struct headers *h, struct seq_info *s,
			       const char **why)
{
	const char *num = headers_get(h, "Sequence-Number");
	const char *size = headers_get(h, "Sequence-Size");
	const char *end = headers_get(h, "Sequence-End");
	const char *reason;

	memset(s, 0, sizeof(*s));
	if (num && seq_parse(num, 1, &s->number, &reason) < 0) {
		*why = !strcmp(reason, "not a number")
			? "Sequence-Number is not a number"
			: "Sequence-Number out of range";
		return AGG_INVALID;
	}
	if (size && seq_parse(size, 0, &s->size, &reason) < 0) {
		*why = !strcmp(reason, "not a number")
			? "Sequence-Size is not a number"
			: "Sequence-Size out of range";
		return AGG_INVALID;
	}
	s->has_size = size != NULL;
	/* The last of a sequence knows its size even when not told. */
	if (!size && num && end && !strcasecmp(end, "true")) {
		s->size = s->number;
		s->has_size = 1;
	}
	if (s->has_size && s->number > s->size) {
		*why = "Sequence-Number above Sequence-Size";
		return AGG_INVALID;
	}
	if (s->has_size && s->size > 0 && !num) {
		*why = "Sequence-Size without Sequence-Number";
		return AGG_INVALID;
	}
	return AGG_ADDED;
}

/* Does s agree with what g knows of its sequence? */
static enum agg_added check_seq(const struct agg_group *g, const struct seq_info *s,
				const char **why)
{
	if (s->has_size && g->size_known && s->size != g->size) {
		*why = "Sequence-Size differs from the group's";
		return AGG_INVALID;
	}
	if (s->has_size && seqset_max(&g->seen) > s->size) {
		*why = "Sequence-Size below a Sequence-Number in the group";
		return AGG_INVALID;
	}
	if (g->size_known && s->number > g->size) {
		*why = "Sequence-Number above the group's Sequence-Size";
		return AGG_INVALID;
	}
	if (s->number && seqset_has(&g->seen, s->number))
		return AGG_DUPLICATE;
	if (!s->number && s->has_size && g->marker)
		return AGG_DUPLICATE;
	return AGG_ADDED;
}

static enum agg_added check_limits(const struct agg_table *t,
				   const struct agg_group *g,
				   const struct agg_input *in, int marker)
{
	if (!g && t->lim.max_groups && t->ngroups >= t->lim.max_groups)
		return AGG_FULL_GROUPS;
	if (marker)
		return AGG_ADDED;
	if (g && t->lim.max_members && g->n >= t->lim.max_members)
		return AGG_FULL_MEMBERS;
	if (t->lim.max_bytes && in->len > t->lim.max_bytes - t->bytes)
		return AGG_FULL_BYTES;
	return AGG_ADDED;
}

static void add_member(struct agg_table *t, struct agg_group *g,
		       const struct agg_input *in, uint64_t seq, uint64_t serial)
{
	const char *id = headers_get(in->h, "Message-Id");
	struct agg_member *m;

	if (g->n == g->alloc) {
		/* With --count, the group's size is known from the start. */
		uint64_t want = t->lim.count && t->lim.count <= 64 ? t->lim.count : 8;
		g->alloc = g->alloc ? 2 * g->alloc : (size_t)want;
		g->m = xrealloc(g->m, g->alloc * sizeof(*g->m));
	}
	/* Room for the group at the first member's size: few regrowths. */
	if (!g->data.cap)
		buf_grow(&g->data, g->alloc * (in->len + 2 + (id ? strlen(id) : 0)));
	m = &g->m[g->n];
	m->off = g->data.len;
	m->len = in->len;
	m->id_len = id && *id ? (uint32_t)strlen(id) : 0;
	buf_add(&g->data, in->body, in->len);
	buf_addch(&g->data, '\0');
	if (m->id_len) {
		buf_add(&g->data, id, m->id_len);
		buf_addch(&g->data, '\0');
	}
	m->seq = seq;
	m->serial = serial;
	m->best = in->best;
	m->kind = in->kind;
	if (m->id_len)
		id_add(g, g->n);
	g->n++;
	g->bytes += in->len;
	t->bytes += in->len;
	if (seq)
		seqset_add(&g->seen, seq);
}

static void note_arrival(struct agg_table *t, struct agg_group *g,
			 const struct agg_input *in, const struct seq_info *s)
{
	uint64_t serial = in->serial ? in->serial : t->serial;

	if (serial >= t->serial)
		t->serial = serial + 1;
	if (s->has_size) {
		g->size = s->size;
		g->size_known = 1;
	}
	if (g->n == 0 && !g->marker)
		common_first(g, in->h);
	else
		common_narrow(g, in->h);
	if (!s->number && s->has_size)
		g->marker = serial;
	else
		add_member(t, g, in, s->number, serial);
	/* Restored members may come out of time order: keep the span. */
	if (in->now < g->first) {
		g->first = in->now;
		agg_heaps_first_moved(t, g);
	}
	if (in->now > g->last)
		g->last = in->now;
}

enum agg_added agg_add(struct agg_table *t, const struct agg_input *in,
		       struct agg_group **gp, const char **why)
{
	struct agg_group *g = agg_find(t, in->key, in->key_len);
	const char *id = headers_get(in->h, "Message-Id");
	struct seq_info s;
	enum agg_added r;

	*gp = g;
	*why = NULL;
	if ((r = read_seq(in->h, &s, why)) != AGG_ADDED)
		return r;
	if (g && id && *id && id_seen(g, id))
		r = AGG_DUPLICATE;
	else if (g)
		r = check_seq(g, &s, why);
	if (r == AGG_DUPLICATE)
		g->duplicates++;
	if (r != AGG_ADDED)
		return r;
	if ((r = check_limits(t, g, in, !s.number && s.has_size)) != AGG_ADDED)
		return r;
	if (!g)
		*gp = g = group_new(t, in->key, in->key_len, in->now);
	note_arrival(t, g, in, &s);
	return AGG_ADDED;
}

struct agg_group *agg_open_empty(struct agg_table *t, const char *key,
				 size_t key_len, const char *type, int64_t now)
{
	struct agg_group *g = group_new(t, key, key_len, now);

	/* In the place members would have put it. */
	headers_setn(&g->common, "Correlation-Id", key, key_len);
	if (type)
		headers_set(&g->common, "Content-Type", type);
	return g;
}

enum agg_reason agg_completed(const struct agg_table *t, const struct agg_group *g)
{
	if (g->size_known && seqset_complete(&g->seen, g->size) &&
	    (g->size > 0 || g->marker))
		return AGG_COMPLETE;
	if (t->lim.count && g->n >= t->lim.count)
		return AGG_COUNT;
	return AGG_OPEN;
}
