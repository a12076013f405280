/* test-resequence: the Resequencer's core (resequence.h): where a number
 * stands, every order of a short sequence, the limits, deadlines and idle
 * groups, the hash of waiting messages against a model, and a group's
 * store record. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "resequence.h"
#include "resequencer.h"
#include "unit.h"
#include "unit-headers.h"

static const struct rsq_limits plain = { .start = 1, .window = 1 };

/* Let num wait in g, its bytes "mNUM": what rsq_wait answers. */
static int wait_num(struct rsq_table *t, struct rsq_group *g, uint64_t num,
		    int64_t at)
{
	char rec[32];
	const char *why = NULL;
	int n = snprintf(rec, sizeof(rec), "m%llu", (unsigned long long)num);

	return rsq_wait(t, g, num, at, rec, (size_t)n, &why);
}

/* Take what g has ready, each number appended to out as " N" (" !N"
 * when its bytes or its group are not what waited). */
static void take_ready(struct rsq_table *t, struct rsq_group *g,
		       struct buf *out)
{
	struct rsq_msg *m;

	while ((m = rsq_take_next(t, g))) {
		char rec[32];
		int n = snprintf(rec, sizeof(rec), "m%llu", (unsigned long long)m->num);
		int same = m->g == g && m->len == (size_t)n && !memcmp(m->rec, rec, m->len);

		buf_addf(out, " %s%llu", same ? "" : "!", (unsigned long long)m->num);
		free(m);
	}
}

/* One message as the run places it: out with what it lets go, or left
 * to wait. Its place in g. */
static enum rsq_place feed(struct rsq_table *t, struct rsq_group *g,
			   uint64_t num, int64_t at, struct buf *out)
{
	enum rsq_place p = rsq_place(t, g, num);

	if (p == RSQ_NEXT) {
		buf_addf(out, " %llu", (unsigned long long)num);
		rsq_advance(t, g);
		take_ready(t, g, out);
	} else if (p == RSQ_LATER && wait_num(t, g, num, at) == 0) {
		/* --start first may have started g. */
		take_ready(t, g, out);
	}
	return p;
}

static struct rsq_group *group(struct rsq_table *t, const char *key,
			       int64_t now)
{
	return rsq_group(t, key, strlen(key), 1, now);
}

/* ---- the table ---- */

/* The next permutation in lexicographic order: 0 after the last. */
static int next_permutation(int *a, int n)
{
	int i = n - 2, j = n - 1;

	while (i >= 0 && a[i] >= a[i + 1])
		i--;
	if (i < 0)
		return 0;
	while (a[j] <= a[i])
		j--;
	int x = a[i];
	a[i] = a[j];
	a[j] = x;
	for (int lo = i + 1, hi = n - 1; lo < hi; lo++, hi--) {
		x = a[lo];
		a[lo] = a[hi];
		a[hi] = x;
	}
	return 1;
}

/* Whatever order 1..7 come in, they leave in order and nothing stays. */
static void test_permutations(void)
{
	int a[7] = { 1, 2, 3, 4, 5, 6, 7 };
	struct buf out = BUF_INIT;
	int count = 0, bad = 0;

	do {
		struct rsq_table *t = rsq_table_new(&plain);
		struct rsq_group *g = group(t, "k", 0);
		int ok = 1;

		buf_reset(&out);
		for (int i = 0; i < 7; i++) {
			enum rsq_place p = feed(t, g, (uint64_t)a[i], i, &out);
			ok &= p == RSQ_NEXT || p == RSQ_LATER;
		}
		ok &= !strcmp(out.ptr, " 1 2 3 4 5 6 7");
		ok &= rsq_waiting(t) == 0 && rsq_waiting_bytes(t) == 0;
		ok &= rsq_oldest(t) == NULL;
		for (uint64_t n = 1; n <= 7; n++)
			ok &= rsq_place(t, g, n) == RSQ_EMITTED;
		ok &= rsq_place(t, g, 8) == RSQ_NEXT;
		if (!ok && !bad++)
			printf("# %d %d %d %d %d %d %d gave '%s'\n", a[0], a[1],
			       a[2], a[3], a[4], a[5], a[6], out.ptr);
		count++;
		rsq_table_free(t);
	} while (next_permutation(a, 7));
	CHECK(count == 5040);
	CHECK(bad == 0);
	buf_release(&out);
}

static void test_duplicates(void)
{
	struct rsq_table *t = rsq_table_new(&plain);
	struct rsq_group *g = group(t, "k", 0);
	struct buf out = BUF_INIT;

	CHECK(feed(t, g, 3, 0, &out) == RSQ_LATER);
	CHECK(rsq_place(t, g, 3) == RSQ_WAITING);
	CHECK(rsq_waiting(t) == 1 && rsq_waiting_bytes(t) == 2);
	CHECK(rsq_place(t, g, 2) == RSQ_LATER);
	CHECK(feed(t, g, 1, 1, &out) == RSQ_NEXT);
	CHECK_STR(out.ptr, " 1");
	CHECK(rsq_place(t, g, 1) == RSQ_EMITTED);
	CHECK(rsq_place(t, g, 2) == RSQ_NEXT);
	CHECK(rsq_place(t, g, 3) == RSQ_WAITING);
	CHECK(feed(t, g, 2, 2, &out) == RSQ_NEXT);
	CHECK_STR(out.ptr, " 1 2 3");
	CHECK(rsq_place(t, g, 3) == RSQ_EMITTED);
	CHECK(rsq_waiting(t) == 0 && rsq_waiting_bytes(t) == 0);
	/* Another group's numbers are its own. */
	CHECK(rsq_place(t, group(t, "other", 0), 3) == RSQ_LATER);
	buf_release(&out);
	rsq_table_free(t);
}

static void test_skip(void)
{
	struct rsq_table *t = rsq_table_new(&plain);
	struct rsq_group *g = group(t, "k", 0);
	struct buf out = BUF_INIT;
	uint64_t lo = 0, hi = 0;

	CHECK(rsq_skip(t, g, &lo, &hi) == -1);
	feed(t, g, 4, 0, &out);
	feed(t, g, 5, 0, &out);
	feed(t, g, 8, 0, &out);
	CHECK(rsq_skip(t, g, &lo, &hi) == 1 && lo == 1 && hi == 3);
	take_ready(t, g, &out);
	CHECK_STR(out.ptr, " 4 5");
	CHECK(rsq_place(t, g, 1) == RSQ_SKIPPED);
	CHECK(rsq_place(t, g, 2) == RSQ_SKIPPED);
	CHECK(rsq_place(t, g, 3) == RSQ_SKIPPED);
	CHECK(rsq_place(t, g, 4) == RSQ_EMITTED);
	CHECK(rsq_place(t, g, 5) == RSQ_EMITTED);
	CHECK(rsq_place(t, g, 6) == RSQ_NEXT);
	CHECK(rsq_place(t, g, 7) == RSQ_LATER);
	CHECK(rsq_place(t, g, 8) == RSQ_WAITING);
	CHECK(rsq_skip(t, g, &lo, &hi) == 1 && lo == 6 && hi == 7);
	take_ready(t, g, &out);
	CHECK_STR(out.ptr, " 4 5 8");
	CHECK(rsq_place(t, g, 6) == RSQ_SKIPPED);
	CHECK(rsq_place(t, g, 8) == RSQ_EMITTED);
	CHECK(rsq_place(t, g, 9) == RSQ_NEXT);
	CHECK(g->skipped.n == 2 && g->skipped.count == 5);
	CHECK(rsq_skip(t, g, &lo, &hi) == -1);
	buf_release(&out);
	rsq_table_free(t);
}

static void test_start_and_size(void)
{
	struct rsq_limits lim = plain;
	struct rsq_table *t;
	struct rsq_group *g;
	struct buf out = BUF_INIT;

	lim.start = 10;
	t = rsq_table_new(&lim);
	g = group(t, "k", 0);
	CHECK(rsq_place(t, g, 0) == RSQ_BELOW_START);
	CHECK(rsq_place(t, g, 9) == RSQ_BELOW_START);
	CHECK(rsq_place(t, g, 10) == RSQ_NEXT);
	CHECK(rsq_place(t, g, 11) == RSQ_LATER);
	CHECK(rsq_place(t, g, 13) == RSQ_LATER);
	CHECK(rsq_set_size(g, 3) == 0);
	CHECK(rsq_set_size(g, 3) == 0);
	CHECK(rsq_set_size(g, 4) == -1);
	CHECK(rsq_set_size(g, 2) == -1);
	CHECK(g->size_known && g->size == 3);
	CHECK(rsq_place(t, g, 13) == RSQ_PAST_END);
	CHECK(rsq_place(t, g, 12) == RSQ_LATER);
	CHECK(!rsq_complete(g));
	feed(t, g, 12, 0, &out);
	feed(t, g, 10, 0, &out);
	CHECK_STR(out.ptr, " 10");
	CHECK(!rsq_complete(g));
	feed(t, g, 11, 0, &out);
	CHECK_STR(out.ptr, " 10 11 12");
	CHECK(rsq_complete(g));
	CHECK(rsq_place(t, g, 13) == RSQ_PAST_END);
	CHECK(rsq_place(t, g, 11) == RSQ_EMITTED);
	CHECK(rsq_place(t, g, 9) == RSQ_BELOW_START);
	/* An empty sequence is complete before anything comes. */
	g = group(t, "empty", 0);
	CHECK(!rsq_complete(g));
	CHECK(rsq_set_size(g, 0) == 0 && rsq_complete(g));
	CHECK(rsq_place(t, g, 10) == RSQ_PAST_END);
	buf_release(&out);
	rsq_table_free(t);
}

/* --start first: the group starts at the lowest of its first window. */
static void test_start_first(void)
{
	struct rsq_limits lim = plain;
	struct rsq_table *t;
	struct rsq_group *g, *h;
	struct buf out = BUF_INIT;
	uint64_t lo = 77, hi = 77;

	lim.start_first = 1;
	lim.window = 3;
	t = rsq_table_new(&lim);
	g = group(t, "k", 0);
	CHECK(feed(t, g, 5, 0, &out) == RSQ_LATER);
	CHECK(!g->started && rsq_take_next(t, g) == NULL);
	CHECK(rsq_place(t, g, 5) == RSQ_WAITING);
	CHECK(rsq_place(t, g, 1) == RSQ_LATER);
	CHECK(rsq_place(t, g, 0) == RSQ_LATER);
	CHECK(feed(t, g, 7, 0, &out) == RSQ_LATER);
	CHECK_STR(out.ptr, "");
	CHECK(feed(t, g, 6, 0, &out) == RSQ_LATER);
	CHECK(g->started && g->first == 5);
	CHECK_STR(out.ptr, " 5 6 7");
	CHECK(rsq_place(t, g, 4) == RSQ_SKIPPED);
	CHECK(rsq_place(t, g, 6) == RSQ_EMITTED);
	CHECK(rsq_place(t, g, 8) == RSQ_NEXT);

	/* Time ran out before the window filled: skipping starts it. */
	h = group(t, "h", 0);
	CHECK(rsq_skip(t, h, &lo, &hi) == -1 && !h->started);
	CHECK(feed(t, h, 12, 0, &out) == RSQ_LATER);
	CHECK(feed(t, h, 9, 0, &out) == RSQ_LATER);
	CHECK(rsq_skip(t, h, &lo, &hi) == 0);
	CHECK(lo == 77 && hi == 77);
	CHECK(h->started && h->first == 9 && h->skipped.n == 0);
	buf_reset(&out);
	take_ready(t, h, &out);
	CHECK_STR(out.ptr, " 9");
	CHECK(rsq_place(t, h, 10) == RSQ_NEXT && rsq_place(t, h, 12) == RSQ_WAITING);
	buf_release(&out);
	rsq_table_free(t);
}

/* A message over -C or --max-bytes is refused and changes nothing. */
static void test_full(void)
{
	struct rsq_limits lim = plain;
	struct rsq_table *t;
	struct rsq_group *g, *h;
	struct buf out = BUF_INIT;
	const char *why = NULL;

	lim.capacity = 2;
	t = rsq_table_new(&lim);
	g = group(t, "k", 0);
	h = group(t, "h", 0);
	CHECK(wait_num(t, g, 3, 10) == 0 && wait_num(t, g, 4, 20) == 0);
	CHECK(rsq_wait(t, g, 5, 30, "m5", 2, &why) == RSQ_FULL);
	CHECK_STR(why, "-C");
	why = NULL;
	CHECK(rsq_wait(t, h, 2, 30, "m2", 2, &why) == RSQ_FULL);
	CHECK_STR(why, "-C");
	CHECK(rsq_waiting(t) == 2 && rsq_waiting_bytes(t) == 4);
	CHECK(g->nwait == 2 && h->nwait == 0);
	CHECK(rsq_place(t, g, 5) == RSQ_LATER && rsq_place(t, h, 2) == RSQ_LATER);
	CHECK(rsq_oldest(t) == g);
	/* h never waited: it is still idle, and the first to be. */
	CHECK(rsq_idle(t, 1000, 10) == h);
	feed(t, g, 1, 40, &out);
	feed(t, g, 2, 40, &out);
	CHECK_STR(out.ptr, " 1 2 3 4");
	CHECK(wait_num(t, g, 6, 50) == 0);
	rsq_table_free(t);

	lim.capacity = 0;
	lim.max_bytes = 10;
	t = rsq_table_new(&lim);
	g = group(t, "k", 0);
	why = NULL;
	CHECK(rsq_wait(t, g, 3, 0, "abcdef", 6, &why) == 0);
	CHECK(rsq_wait(t, g, 5, 0, "abcde", 5, &why) == RSQ_FULL);
	CHECK_STR(why, "--max-bytes");
	CHECK(rsq_waiting(t) == 1 && rsq_waiting_bytes(t) == 6);
	CHECK(rsq_place(t, g, 5) == RSQ_LATER);
	why = NULL;
	CHECK(rsq_wait(t, g, 4, 0, "abcd", 4, &why) == 0 && why == NULL);
	CHECK(rsq_waiting(t) == 2 && rsq_waiting_bytes(t) == 10);
	CHECK(rsq_wait(t, g, 5, 0, "a", 1, &why) == RSQ_FULL);
	CHECK_STR(why, "--max-bytes");
	CHECK(rsq_place(t, g, 4) == RSQ_WAITING && rsq_place(t, g, 5) == RSQ_LATER);
	buf_release(&out);
	rsq_table_free(t);
}

/* The oldest gap and its deadline follow the oldest waiting arrival. */
static void test_deadlines(void)
{
	struct rsq_limits lim = plain;
	struct rsq_table *t;
	struct rsq_group *a, *b;
	struct buf out = BUF_INIT;
	uint64_t lo, hi;

	lim.timeout_ms = 100;
	t = rsq_table_new(&lim);
	a = group(t, "a", 0);
	b = group(t, "b", 0);
	CHECK(rsq_oldest(t) == NULL && rsq_next_deadline(t) == 0);
	CHECK(rsq_expired(t, INT64_MAX / 2) == NULL);
	feed(t, a, 2, 100, &out);
	feed(t, b, 3, 200, &out);
	feed(t, a, 5, 300, &out);
	CHECK(rsq_oldest(t) == a && rsq_next_deadline(t) == 200);
	CHECK(rsq_expired(t, 199) == NULL && rsq_expired(t, 200) == a);
	/* a's oldest goes out, its 5 stays: b's gap is the oldest now. */
	feed(t, a, 1, 310, &out);
	CHECK_STR(out.ptr, " 1 2");
	CHECK(rsq_oldest(t) == b && rsq_next_deadline(t) == 300);
	CHECK(rsq_expired(t, 299) == NULL && rsq_expired(t, 300) == b);
	/* A newer arrival does not move a's deadline. */
	feed(t, a, 4, 350, &out);
	CHECK(rsq_skip(t, b, &lo, &hi) == 1 && lo == 1 && hi == 2);
	take_ready(t, b, &out);
	CHECK_STR(out.ptr, " 1 2 3");
	CHECK(rsq_oldest(t) == a && rsq_next_deadline(t) == 400);
	CHECK(rsq_expired(t, 399) == NULL && rsq_expired(t, 400) == a);
	/* A forgotten group's gap is no one's. */
	feed(t, b, 5, 360, &out);
	rsq_forget(t, a);
	CHECK(rsq_oldest(t) == b && rsq_next_deadline(t) == 460);
	feed(t, b, 4, 370, &out);
	CHECK_STR(out.ptr, " 1 2 3 4 5");
	CHECK(rsq_oldest(t) == NULL && rsq_next_deadline(t) == 0);
	CHECK(rsq_expired(t, INT64_MAX / 2) == NULL);
	rsq_table_free(t);

	/* Without -T a gap is waited for for ever, but is still the oldest. */
	t = rsq_table_new(&plain);
	a = group(t, "a", 0);
	feed(t, a, 2, 100, &out);
	CHECK(rsq_oldest(t) == a && rsq_next_deadline(t) == 0);
	CHECK(rsq_expired(t, INT64_MAX / 2) == NULL);
	buf_release(&out);
	rsq_table_free(t);
}

/* Idle groups by the time they last took a message, caught up lazily. */
static void test_idle(void)
{
	struct rsq_table *t = rsq_table_new(&plain);
	struct rsq_group *a = group(t, "a", 0), *b = group(t, "b", 100);
	struct buf out = BUF_INIT;

	CHECK(rsq_idle(t, 999, 1000) == NULL);
	/* Finding a moves its latest without a word to the heap. */
	CHECK(rsq_group(t, "a", 1, 0, 900) == a && a->latest == 900);
	CHECK(rsq_idle(t, 1100, 1000) == b);
	rsq_forget(t, b);
	CHECK(rsq_idle(t, 1899, 1000) == NULL);
	CHECK(rsq_idle(t, 1900, 1000) == a);
	/* A group that waits is not idle, however old. */
	CHECK(rsq_group(t, "a", 1, 0, 2000) == a);
	feed(t, a, 2, 2000, &out);
	CHECK(rsq_idle(t, INT64_MAX / 2, 1000) == NULL);
	/* It is again once nothing waits, from when it last took one. */
	CHECK(rsq_group(t, "a", 1, 0, 2500) == a);
	feed(t, a, 1, 2500, &out);
	CHECK_STR(out.ptr, " 1 2");
	CHECK(rsq_idle(t, 3499, 1000) == NULL);
	CHECK(rsq_idle(t, 3500, 1000) == a);
	/* An earlier time never moves latest back. */
	CHECK(rsq_group(t, "a", 1, 0, 10) == a && a->latest == 2500);
	buf_release(&out);
	rsq_table_free(t);
}

static void test_forget(void)
{
	struct rsq_table *t = rsq_table_new(&plain);
	struct rsq_group *a = group(t, "a", 0), *b = group(t, "b", 0), *g;
	struct buf out = BUF_INIT;

	feed(t, a, 3, 10, &out);
	feed(t, a, 5, 20, &out);
	feed(t, a, 4, 30, &out);
	feed(t, b, 2, 40, &out);
	CHECK(rsq_groups(t) == 2 && rsq_waiting(t) == 4 && rsq_waiting_bytes(t) == 8);
	rsq_forget(t, a);
	CHECK(rsq_groups(t) == 1 && rsq_waiting(t) == 1 && rsq_waiting_bytes(t) == 2);
	CHECK(rsq_group(t, "a", 1, 0, 50) == NULL);
	CHECK(rsq_place(t, b, 2) == RSQ_WAITING);
	CHECK(rsq_oldest(t) == b);
	/* Made again, it starts afresh. */
	a = group(t, "a", 60);
	CHECK(rsq_place(t, a, 3) == RSQ_LATER && rsq_place(t, a, 1) == RSQ_NEXT);
	group(t, "c", 60);
	buf_reset(&out);
	for (g = rsq_next_group(t, NULL); g; g = rsq_next_group(t, g))
		buf_addf(&out, " %s", g->key);
	CHECK_STR(out.ptr, " b a c");
	/* Freed with a message still waiting in b. */
	buf_release(&out);
	rsq_table_free(t);
}

/* ---- the hash of waiting messages, against a model ---- */

#define MODEL_GROUPS 128
#define MODEL_MAX 2048		/* numbers a group may reach */
#define MODEL_AHEAD 160		/* how far past next a number may come */

/* A group as the model sees it: each number's state. */
struct model_group {
	int live;
	uint64_t next;
	uint64_t waiting;
	char state[MODEL_MAX + MODEL_AHEAD + 2];	/* 0, 'W', 'E', 'S' */
};

static uint64_t seed = 0x2545f4914f6cdd1dull;

static enum rsq_place model_place(const struct model_group *m, uint64_t num)
{
	if (num < m->next)
		return m->state[num] == 'S' ? RSQ_SKIPPED : RSQ_EMITTED;
	if (m->state[num] == 'W')
		return RSQ_WAITING;
	return num == m->next ? RSQ_NEXT : RSQ_LATER;
}

/* The numbers the model lets go from next on, as take_ready writes them. */
static void model_drain(struct model_group *m, struct buf *want)
{
	while (m->state[m->next] == 'W') {
		m->state[m->next] = 'E';
		m->waiting--;
		buf_addf(want, " %llu", (unsigned long long)m->next++);
	}
}

struct stress {
	struct rsq_table *t;
	struct model_group *m;
	struct buf got, want;
	uint64_t waiting, most, ops, wrong;
};

static void disagree(struct stress *s, const char *what, int gi, uint64_t num,
		     int got, int want)
{
	if (!s->wrong++)
		printf("# op %llu: %s of g%d %llu: %d, want %d\n",
		       (unsigned long long)s->ops, what, gi,
		       (unsigned long long)num, got, want);
}

static struct rsq_group *stress_group(struct stress *s, int gi)
{
	char key[16];
	struct rsq_group *g;

	snprintf(key, sizeof(key), "g%d", gi);
	g = rsq_group(s->t, key, strlen(key), 1, (int64_t)s->ops);
	if (!s->m[gi].live) {
		memset(&s->m[gi], 0, sizeof(s->m[gi]));
		s->m[gi].live = 1;
		s->m[gi].next = 1;
	}
	return g;
}

/* num comes to group gi: both must say the same of it and let the same
 * numbers go. */
static void stress_feed(struct stress *s, int gi, uint64_t num)
{
	struct model_group *m = &s->m[gi];
	struct rsq_group *g = stress_group(s, gi);
	enum rsq_place want = model_place(m, num);
	enum rsq_place got;

	buf_reset(&s->got);
	buf_reset(&s->want);
	got = feed(s->t, g, num, (int64_t)s->ops, &s->got);
	if (got != want)
		disagree(s, "place", gi, num, (int)got, (int)want);
	if (want == RSQ_NEXT) {
		buf_addf(&s->want, " %llu", (unsigned long long)num);
		m->state[m->next++] = 'E';
		model_drain(m, &s->want);
	} else if (want == RSQ_LATER) {
		m->state[num] = 'W';
		m->waiting++;
	}
	if (strcmp(s->got.ptr, s->want.ptr))
		disagree(s, "out", gi, num, (int)s->got.len, (int)s->want.len);
}

static void stress_skip(struct stress *s, int gi)
{
	struct model_group *m = &s->m[gi];
	struct rsq_group *g = stress_group(s, gi);
	uint64_t lo = 0, hi = 0, want_hi = m->next;
	int got = rsq_skip(s->t, g, &lo, &hi);

	if (!m->waiting) {
		if (got != -1)
			disagree(s, "skip", gi, 0, got, -1);
		return;
	}
	while (m->state[want_hi + 1] != 'W')
		want_hi++;
	if (got != 1 || lo != m->next || hi != want_hi)
		disagree(s, "skip", gi, lo, (int)hi, (int)want_hi);
	for (uint64_t n = m->next; n <= want_hi; n++)
		m->state[n] = 'S';
	m->next = want_hi + 1;
	buf_reset(&s->got);
	buf_reset(&s->want);
	take_ready(s->t, g, &s->got);
	model_drain(m, &s->want);
	if (strcmp(s->got.ptr, s->want.ptr))
		disagree(s, "skip out", gi, lo, (int)s->got.len, (int)s->want.len);
}

static void stress_forget(struct stress *s, int gi)
{
	char key[16];
	struct rsq_group *g;

	snprintf(key, sizeof(key), "g%d", gi);
	g = rsq_group(s->t, key, strlen(key), 0, 0);
	if ((g != NULL) != s->m[gi].live)
		disagree(s, "forget", gi, 0, g != NULL, s->m[gi].live);
	if (g)
		rsq_forget(s->t, g);
	s->m[gi].live = 0;
}

/* Every number of every group around where it stands. */
static void stress_sweep(struct stress *s)
{
	for (int gi = 0; gi < MODEL_GROUPS; gi++) {
		struct model_group *m = &s->m[gi];
		char key[16];
		struct rsq_group *g;

		if (!m->live)
			continue;
		snprintf(key, sizeof(key), "g%d", gi);
		g = rsq_group(s->t, key, strlen(key), 0, 0);
		for (uint64_t n = 1; g && n <= m->next + MODEL_AHEAD; n++) {
			enum rsq_place got = rsq_place(s->t, g, n);
			if (got != model_place(m, n))
				disagree(s, "sweep", gi, n, (int)got,
					 (int)model_place(m, n));
		}
	}
}

/*
 * Thousands of waits, takes, skips and forgets across many groups, at a
 * fixed seed: every answer agrees with a model of plain arrays. Takes
 * and forgets delete from the middle of probe runs, so this guards the
 * hash's deletion as well as its growth.
 */
static void test_hash_model(void)
{
	struct stress s;

	memset(&s, 0, sizeof(s));
	s.t = rsq_table_new(&plain);
	s.m = xcalloc(MODEL_GROUPS, sizeof(*s.m));
	buf_init(&s.got, 0);
	buf_init(&s.want, 0);
	for (s.ops = 0; s.ops < 200000; s.ops++) {
		uint64_t r = unit_random(&seed), op = r % 100;
		int gi = (int)((r >> 8) % MODEL_GROUPS);
		struct model_group *m = &s.m[gi];
		uint64_t next = m->live ? m->next : 1;

		if (next > MODEL_MAX) {
			stress_forget(&s, gi);
		} else if (op < 70) {
			stress_feed(&s, gi, next + 1 + (r >> 20) % MODEL_AHEAD);
		} else if (op < 84) {
			stress_feed(&s, gi, next);
		} else if (op < 90) {
			stress_feed(&s, gi, 1 + (r >> 20) % (next + MODEL_AHEAD));
		} else if (op < 97) {
			stress_skip(&s, gi);
		} else {
			stress_forget(&s, gi);
		}
		s.waiting = 0;
		for (int i = 0; i < MODEL_GROUPS; i++)
			s.waiting += s.m[i].live ? s.m[i].waiting : 0;
		if (rsq_waiting(s.t) != s.waiting)
			disagree(&s, "waiting", gi, 0, (int)rsq_waiting(s.t),
				 (int)s.waiting);
		if (s.waiting > s.most)
			s.most = s.waiting;
		if (s.ops % 20000 == 0)
			stress_sweep(&s);
	}
	stress_sweep(&s);
	printf("# %llu waited at most\n", (unsigned long long)s.most);
	CHECK(s.most > 2000);
	CHECK(s.wrong == 0);
	free(s.m);
	buf_release(&s.got);
	buf_release(&s.want);
	rsq_table_free(s.t);
}

/* ---- a group's record ---- */

/* g holds 1, 2-3 skipped, 4, 5, 6-7 skipped, 8; size 12; last took a
 * message at 250. */
static struct rsq_group *skipped_group(struct rsq_table *t)
{
	struct rsq_group *g = group(t, "k", 0);
	struct buf out = BUF_INIT;
	uint64_t lo, hi;

	feed(t, g, 1, 0, &out);
	feed(t, g, 4, 0, &out);
	feed(t, g, 5, 0, &out);
	rsq_skip(t, g, &lo, &hi);
	take_ready(t, g, &out);
	feed(t, g, 8, 0, &out);
	rsq_skip(t, g, &lo, &hi);
	take_ready(t, g, &out);
	rsq_set_size(g, 12);
	CHECK(rsq_group(t, "k", 1, 0, 250) == g);
	CHECK_STR(out.ptr, " 1 4 5 8");
	buf_release(&out);
	return g;
}

static int decodes(struct rsq_table *t, const char *key, const char *value,
		   size_t len)
{
	struct rsq_group *g = group(t, key, 0);

	errno = 0;
	if (rsq_group_decode(g, value, len) == 0)
		return 0;
	return errno == EINVAL ? -1 : -2;
}

static void test_group_record(void)
{
	struct rsq_limits first = plain;
	struct rsq_table *t = rsq_table_new(&plain), *t2 = rsq_table_new(&plain);
	struct rsq_group *g = skipped_group(t), *g2 = group(t2, "k", 0);
	struct buf v = BUF_INIT, v2 = BUF_INIT;
	static const char *const damaged[] = {
		"",
		"1 9 1 1 12 0 1",		/* no newline */
		"1 9 1 1 12 0\n",		/* a field short */
		"1 9 1 1 12 0 1 0\n",		/* one too many */
		"1 9 x 1 12\n",
		"5 3 1 0 0 0 1\n",		/* next below first */
		"1 9 1 1 12 0 1\n3-2",		/* a range backwards */
		"1 9 1 1 12 0 1\n2-3,3-4",	/* overlapping */
		"1 9 1 1 12 0 1\n6-7,2-3",	/* out of order */
		"1 9 1 1 12 0 1\n2-3,",		/* a range missing */
		"1 9 1 1 12 0 1\n2-3;6-7",
		"1 9 1 1 12 0 1\n2",
		"1 9 1 1 12 0 1\n2-3\n",
	};

	rsq_group_value(&v, g);
	CHECK_STR(v.ptr, "1 9 1 1 12 250 1\n2-3,6-7");
	CHECK(rsq_group_decode(g2, v.ptr, v.len) == 0);
	CHECK(g2->first == 1 && g2->next == 9 && g2->started);
	CHECK(g2->latest == 250 && g2->created == 1);
	CHECK(g2->size_known && g2->size == 12);
	CHECK(g2->skipped.n == 2 && g2->skipped.count == 4);
	CHECK(rsq_place(t2, g2, 3) == RSQ_SKIPPED);
	CHECK(rsq_place(t2, g2, 5) == RSQ_EMITTED);
	CHECK(rsq_place(t2, g2, 7) == RSQ_SKIPPED);
	CHECK(rsq_place(t2, g2, 9) == RSQ_NEXT);
	CHECK(rsq_place(t2, g2, 13) == RSQ_PAST_END);
	rsq_group_value(&v2, g2);
	CHECK_STR(v2.ptr, v.ptr);

	/* Nothing skipped, a group not yet started, large numbers. */
	g = group(t, "plain", 0);
	rsq_group_value(&v, g);
	CHECK_STR(v.ptr, "1 1 1 0 0 0 2\n");
	CHECK(decodes(t2, "plain", v.ptr, v.len) == 0);
	rsq_group_value(&v2, rsq_group(t2, "plain", 5, 0, 0));
	CHECK_STR(v2.ptr, v.ptr);
	first.start_first = 1;
	first.window = 5;
	rsq_table_set_limits(t, &first);
	g = group(t, "first", 0);
	rsq_group_value(&v, g);
	CHECK_STR(v.ptr, "1 1 0 0 0 0 3\n");
	CHECK(decodes(t2, "first", v.ptr, v.len) == 0);
	CHECK(!rsq_group(t2, "first", 5, 0, 0)->started);
	buf_reset(&v);
	buf_addstr(&v, "9007199254740990 9007199254740991 1 1 2 -250 7\n"
		   "9007199254740990-9007199254740990");
	CHECK(decodes(t2, "large", v.ptr, v.len) == 0);
	rsq_group_value(&v2, rsq_group(t2, "large", 5, 0, INT64_MIN));
	CHECK_STR(v2.ptr, v.ptr);

	for (size_t i = 0; i < sizeof(damaged) / sizeof(*damaged); i++) {
		char key[16];
		int r;

		snprintf(key, sizeof(key), "bad%zu", i);
		r = decodes(t2, key, damaged[i], strlen(damaged[i]));
		CHECK(r == -1);
		if (r != -1)
			printf("#   '%s' gave %d\n", damaged[i], r);
	}
	/* A NUL inside is damage too, wherever it is. */
	CHECK(decodes(t2, "nul1", "1 9 1 1 12 0 1\n2-3\0", 19) == -1);
	CHECK(decodes(t2, "nul2", "1 9\0 1 1 12 0 1\n", 16) == -1);
	buf_release(&v);
	buf_release(&v2);
	rsq_table_free(t);
	rsq_table_free(t2);
}

int main(void)
{
	test_permutations();
	test_duplicates();
	test_skip();
	test_start_and_size();
	test_start_first();
	test_full();
	test_deadlines();
	test_idle();
	test_forget();
	test_hash_model();
	test_group_record();
	return unit_done();
}
