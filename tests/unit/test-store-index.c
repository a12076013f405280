/* test-store-index: the store's skip list and deadline heap against a
 * plain array, through thousands of random puts and deletes. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store-index.h"
#include "unit.h"

#define KEYS 300

/* The model: per key, whether it is there, its value length (standing
 * for the record) and its deadline. Keys are "k" and three digits, so
 * their byte order is their number order. */
struct model {
	int present[KEYS];
	uint64_t vlen[KEYS];
	int64_t deadline[KEYS];
};

static uint64_t rng = 88172645463325252ull;

static uint64_t next_random(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static void name_of(int k, char key[16], struct rec_name *nm)
{
	snprintf(key, 16, "k%03d", k);
	*nm = (struct rec_name){ "msg", 3, key, 4 };
}

static void put(struct store_index *x, struct model *m, int k, uint64_t vlen,
		int64_t deadline)
{
	char key[16];
	struct rec_name nm;
	struct index_node *n;

	name_of(k, key, &nm);
	n = index_node_new(x, &nm);
	n->vlen = vlen;
	n->deadline = deadline;
	index_put(x, n);
	m->present[k] = 1;
	m->vlen[k] = vlen;
	m->deadline[k] = deadline;
}

static void delete(struct store_index *x, struct model *m, int k)
{
	char key[16];
	struct rec_name nm;

	name_of(k, key, &nm);
	index_delete(x, &nm);
	m->present[k] = 0;
}

/* 0 if the index holds what the model does, in order, with the right
 * counts and the right earliest deadline. */
static int differs(struct store_index *x, const struct model *m)
{
	struct index_node *n = index_first(x), *early = index_earliest(x);
	uint64_t records = 0, bytes = 0;
	int want_early = -1;
	char key[16];

	for (int k = 0; k < KEYS; k++) {
		if (!m->present[k])
			continue;
		snprintf(key, sizeof(key), "k%03d", k);
		if (!n || strcmp(node_key(n), key) || strcmp(node_kind(n), "msg") ||
		    n->vlen != m->vlen[k] || n->deadline != m->deadline[k])
			return 1;
		records++;
		bytes += rec_len(3, 4, m->vlen[k]);
		if (m->deadline[k] && (want_early < 0 ||
				       m->deadline[k] < m->deadline[want_early]))
			want_early = k;
		n = n->next[0];
	}
	if (n || x->records != records || x->live_bytes != bytes)
		return 1;
	if (want_early < 0)
		return early != NULL;
	snprintf(key, sizeof(key), "k%03d", want_early);
	return !early || strcmp(node_key(early), key);
}

static void test_random(void)
{
	struct store_index x;
	struct model m;
	int bad = 0;

	index_init(&x);
	memset(&m, 0, sizeof(m));
	for (int i = 0; i < 20000; i++) {
		int k = (int)(next_random() % KEYS);
		if (next_random() % 3 == 0)
			delete(&x, &m, k);
		else
			put(&x, &m, k, next_random() % 100,
			    next_random() % 4 ? (int64_t)(next_random() % 50) : 0);
		if (i % 97 == 0)
			bad += differs(&x, &m);
	}
	bad += differs(&x, &m);
	CHECK(bad == 0);
	index_release(&x);
	CHECK(index_first(&x) == NULL && index_earliest(&x) == NULL);
	CHECK(x.records == 0 && x.live_bytes == 0);
}

static void test_seek_and_ties(void)
{
	struct store_index x;
	struct model m;
	struct rec_name nm = { "msg", 3, "k0", 2 };
	struct index_node *n;

	index_init(&x);
	memset(&m, 0, sizeof(m));
	put(&x, &m, 20, 1, 7);
	put(&x, &m, 10, 1, 7);
	put(&x, &m, 30, 1, 0);
	/* Ties in deadline go in key order. */
	CHECK_STR(node_key(index_earliest(&x)), "k010");
	n = index_seek(&x, &nm);
	CHECK(n && !strcmp(node_key(n), "k010"));
	nm.key = "k011";
	nm.key_len = 4;
	n = index_seek(&x, &nm);
	CHECK(n && !strcmp(node_key(n), "k020"));
	CHECK(index_find(&x, &nm) == NULL);
	nm.key = "k030";
	CHECK(index_find(&x, &nm) != NULL);
	/* Another kind sorts by kind first. */
	nm = (struct rec_name){ "msh", 3, "", 0 };
	CHECK(index_seek(&x, &nm) == NULL);
	/* A put with no deadline leaves the heap. */
	put(&x, &m, 10, 2, 0);
	CHECK_STR(node_key(index_earliest(&x)), "k020");
	delete(&x, &m, 20);
	CHECK(index_earliest(&x) == NULL);
	CHECK(differs(&x, &m) == 0);
	index_release(&x);
}

int main(void)
{
	test_random();
	test_seek_and_ties();
	return unit_done();
}
