/* store-index: the skip list and the deadline heap of the store's
 * records (see store-index.h). */
#include "store-index.h"

#include <stdlib.h>
#include <string.h>

#include "buf.h"

#define NOT_IN_HEAP ((size_t)-1)

void index_init(struct store_index *x)
{
	memset(x, 0, sizeof(*x));
	x->rng = 0x9e3779b97f4a7c15ull;
}

static char *name_bytes(const struct index_node *n)
{
	return (char *)&n->next[n->level];
}

const char *node_kind(const struct index_node *n)
{
	return name_bytes(n);
}

const char *node_key(const struct index_node *n)
{
	return name_bytes(n) + n->kind_len + 1;
}

uint64_t node_rlen(const struct index_node *n)
{
	return rec_len(n->kind_len, n->key_len, n->vlen);
}

int bytes_cmp(const char *a, size_t an, const char *b, size_t bn)
{
	size_t m = an < bn ? an : bn;
	int c = m ? memcmp(a, b, m) : 0;

	return c ? c : (an > bn) - (an < bn);
}

int node_cmp(const struct index_node *n, const struct rec_name *nm)
{
	int c = bytes_cmp(node_kind(n), n->kind_len, nm->kind, nm->kind_len);

	return c ? c : bytes_cmp(node_key(n), n->key_len, nm->key, nm->key_len);
}

/* ---- deadline heap: earliest first, ties in key order -------------------- */

static int heap_before(const struct index_node *a, const struct index_node *b)
{
	struct rec_name nm = { node_kind(b), b->kind_len, node_key(b), b->key_len };

	if (a->deadline != b->deadline)
		return a->deadline < b->deadline;
	return node_cmp(a, &nm) < 0;
}

static void heap_set(struct store_index *x, size_t i, struct index_node *n)
{
	x->heap[i] = n;
	n->heap_pos = i;
}

static void heap_up(struct store_index *x, size_t i)
{
	struct index_node *n = x->heap[i];

	while (i > 0 && heap_before(n, x->heap[(i - 1) / 2])) {
		heap_set(x, i, x->heap[(i - 1) / 2]);
		i = (i - 1) / 2;
	}
	heap_set(x, i, n);
}

static void heap_down(struct store_index *x, size_t i)
{
	struct index_node *n = x->heap[i];

	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= x->heap_len)
			break;
		if (c + 1 < x->heap_len && heap_before(x->heap[c + 1], x->heap[c]))
			c++;
		if (!heap_before(x->heap[c], n))
			break;
		heap_set(x, i, x->heap[c]);
		i = c;
	}
	heap_set(x, i, n);
}

static void heap_add(struct store_index *x, struct index_node *n)
{
	if (x->heap_len == x->heap_cap) {
		x->heap_cap = x->heap_cap ? 2 * x->heap_cap : 64;
		x->heap = xrealloc(x->heap, x->heap_cap * sizeof(*x->heap));
	}
	heap_set(x, x->heap_len++, n);
	heap_up(x, n->heap_pos);
}

static void heap_remove(struct store_index *x, struct index_node *n)
{
	size_t i = n->heap_pos;
	struct index_node *last = x->heap[--x->heap_len];

	n->heap_pos = NOT_IN_HEAP;
	if (last == n)
		return;
	heap_set(x, i, last);
	heap_up(x, i);
	heap_down(x, last->heap_pos);
}

struct index_node *index_earliest(const struct store_index *x)
{
	return x->heap_len ? x->heap[0] : NULL;
}

/* ---- skip list ------------------------------------------------------------ */

static int random_level(struct store_index *x)
{
	int level = 1;

	/* xorshift64: a fixed seed keeps runs repeatable. */
	for (;;) {
		x->rng ^= x->rng << 13;
		x->rng ^= x->rng >> 7;
		x->rng ^= x->rng << 17;
		if ((x->rng & 3) || level == INDEX_LEVEL_MAX)
			return level;
		level++;
	}
}

struct index_node *index_node_new(struct store_index *x, const struct rec_name *nm)
{
	int level = random_level(x);
	struct index_node *n = xmalloc(sizeof(*n) + level * sizeof(n->next[0]) +
				       nm->kind_len + nm->key_len + 2);
	char *kind, *key;

	memset(n, 0, sizeof(*n));
	n->level = (uint8_t)level;
	n->kind_len = (uint8_t)nm->kind_len;
	n->key_len = (uint16_t)nm->key_len;
	n->heap_pos = NOT_IN_HEAP;
	kind = name_bytes(n);
	key = kind + n->kind_len + 1;
	memcpy(kind, nm->kind, nm->kind_len);
	kind[nm->kind_len] = '\0';
	if (nm->key_len)
		memcpy(key, nm->key, nm->key_len);
	key[nm->key_len] = '\0';
	return n;
}

/*
 * The first node at or after nm, or NULL. When slot is not NULL, slot[i]
 * is set to the link at level i that points to where nm belongs, for
 * every level up to INDEX_LEVEL_MAX.
 */
static struct index_node *seek(struct store_index *x, const struct rec_name *nm,
			       struct index_node ***slot)
{
	struct index_node **links = x->head;

	for (int i = x->levels - 1; i >= 0; i--) {
		while (links[i] && node_cmp(links[i], nm) < 0)
			links = links[i]->next;
		if (slot)
			slot[i] = &links[i];
	}
	/* Levels the index does not use yet start at the head. */
	for (int i = x->levels; slot && i < INDEX_LEVEL_MAX; i++)
		slot[i] = &x->head[i];
	return links[0];
}

static struct index_node *find(struct store_index *x, const struct rec_name *nm,
			       struct index_node ***slot)
{
	struct index_node *n = seek(x, nm, slot);

	return n && node_cmp(n, nm) == 0 ? n : NULL;
}

struct index_node *index_seek(struct store_index *x, const struct rec_name *nm)
{
	return seek(x, nm, NULL);
}

struct index_node *index_find(struct store_index *x, const struct rec_name *nm)
{
	return find(x, nm, NULL);
}

struct index_node *index_first(const struct store_index *x)
{
	return x->head[0];
}

static void unlink_node(struct store_index *x, struct index_node *n,
			struct index_node ***slot)
{
	for (int i = 0; i < n->level; i++)
		*slot[i] = n->next[i];
	if (n->heap_pos != NOT_IN_HEAP)
		heap_remove(x, n);
	x->records--;
	x->live_bytes -= node_rlen(n);
}

void index_put(struct store_index *x, struct index_node *n)
{
	struct rec_name nm = { node_kind(n), n->kind_len, node_key(n), n->key_len };
	struct index_node **slot[INDEX_LEVEL_MAX];
	struct index_node *old = find(x, &nm, slot);

	if (old) {
		unlink_node(x, old, slot);
		free(old);
	}
	if (n->level > x->levels)
		x->levels = n->level;
	for (int i = 0; i < n->level; i++) {
		n->next[i] = *slot[i];
		*slot[i] = n;
	}
	if (n->deadline)
		heap_add(x, n);
	x->records++;
	x->live_bytes += node_rlen(n);
}

void index_delete(struct store_index *x, const struct rec_name *nm)
{
	struct index_node **slot[INDEX_LEVEL_MAX];
	struct index_node *n = find(x, nm, slot);

	if (n) {
		unlink_node(x, n, slot);
		free(n);
	}
}

void index_release(struct store_index *x)
{
	struct index_node *n = x->head[0];

	while (n) {
		struct index_node *next = n->next[0];
		free(n);
		n = next;
	}
	free(x->heap);
	index_init(x);
}
