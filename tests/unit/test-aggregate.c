/* test-aggregate: the Aggregator's core: sequences, the group table,
 * deadlines, limits, closed keys and the store records. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "aggregate.h"
#include "aggregate-closed.h"
#include "unit.h"
#include "unit-headers.h"

/* Add one message to group key at time now; the status of agg_add. */
static enum agg_added add(struct agg_table *t, const char *key, const char *lines,
			  const char *body, int64_t now, struct agg_group **g)
{
	struct headers h = HEADERS_INIT;
	struct agg_input in = {
		.key = key, .key_len = strlen(key), .h = &h, .body = body,
		.len = strlen(body), .kind = BODY_TEXT, .now = now, .best = NAN,
	};
	struct agg_group *dummy;
	const char *why;
	enum agg_added r;

	make_headers(&h, lines);
	r = agg_add(t, &in, g ? g : &dummy, &why);
	headers_release(&h);
	return r;
}

static const char *missing(const struct seqset *s, uint64_t size)
{
	static struct buf out = BUF_INIT;

	buf_reset(&out);
	seqset_missing(s, size, &out);
	return out.ptr;
}

/* ---- seqset ---- */

static void test_seqset_ranges(void)
{
	struct seqset s = SEQSET_INIT;
	uint64_t order[] = { 1, 2, 4, 8, 9, 10, 3 };

	for (size_t i = 0; i < sizeof(order) / sizeof(*order); i++)
		CHECK(seqset_add(&s, order[i]) == 1);
	CHECK(seqset_add(&s, 4) == 0);
	CHECK(s.count == 7 && s.n == 2);
	CHECK(seqset_has(&s, 3) && !seqset_has(&s, 5) && seqset_has(&s, 10));
	CHECK(!seqset_has(&s, 11) && !seqset_has(&s, 0));
	CHECK_STR(missing(&s, 10), "5-7");
	CHECK_STR(missing(&s, 12), "5-7,11-12");
	CHECK_STR(missing(&s, 0), "5-7,11-");
	CHECK(seqset_max(&s) == 10);
	CHECK(!seqset_complete(&s, 10));
	for (uint64_t n = 5; n <= 7; n++)
		seqset_add(&s, n);
	CHECK(s.n == 1 && seqset_complete(&s, 10) && !seqset_complete(&s, 11));
	CHECK_STR(missing(&s, 10), "");
	seqset_release(&s);
}

static void test_seqset_sparse(void)
{
	struct seqset s = SEQSET_INIT;

	CHECK(seqset_complete(&s, 0));
	CHECK_STR(missing(&s, 3), "1-3");
	CHECK_STR(missing(&s, 0), "1-");
	/* A huge number is one range, not a bitmap of four billion. */
	CHECK(seqset_add(&s, 4000000000u) == 1);
	CHECK(seqset_add(&s, 2) == 1);
	CHECK(s.n == 2 && s.alloc <= 4);
	CHECK_STR(missing(&s, 4000000001u), "1,3-3999999999,4000000001");
	CHECK(seqset_add(&s, SEQ_NUMBER_MAX) == 1);
	CHECK(seqset_max(&s) == SEQ_NUMBER_MAX);
	/* Reverse arrival merges from the other side. */
	seqset_release(&s);
	for (uint64_t n = 1000; n >= 1; n--)
		seqset_add(&s, n);
	CHECK(s.n == 1 && seqset_complete(&s, 1000));
	seqset_release(&s);
}

static void test_seq_parse(void)
{
	uint64_t v = 7;
	const char *why = NULL;

	CHECK(seq_parse("42", 1, &v, &why) == 0 && v == 42);
	CHECK(seq_parse("0", 0, &v, &why) == 0 && v == 0);
	CHECK(seq_parse("0", 1, &v, &why) == -1);
	CHECK_STR(why, "out of range");
	CHECK(seq_parse("9007199254740991", 1, &v, &why) == 0 && v == SEQ_NUMBER_MAX);
	CHECK(seq_parse("9007199254740992", 1, &v, &why) == -1);
	CHECK_STR(why, "out of range");
	CHECK(seq_parse("99999999999999999999999", 1, &v, &why) == -1);
	CHECK_STR(why, "out of range");
	CHECK(seq_parse("", 1, &v, &why) == -1);
	CHECK_STR(why, "not a number");
	CHECK(seq_parse("-1", 0, &v, &why) == -1);
	CHECK(seq_parse("1.0", 1, &v, &why) == -1);
	CHECK(seq_parse("+3", 1, &v, &why) == -1);
	CHECK_STR(why, "not a number");
}

/* ---- completion ---- */

static const struct agg_limits no_limits;

static void test_sequence_completion(void)
{
	struct agg_table *t = agg_table_new(&no_limits);
	struct agg_group *g;

	/* Out of order, and the size on the last member only. */
	CHECK(add(t, "k", "Message-Id: 3|Sequence-Number: 3", "c", 1, &g) == AGG_ADDED);
	CHECK(agg_completed(t, g) == AGG_OPEN);
	CHECK(add(t, "k", "Message-Id: 1|Sequence-Number: 1", "a", 2, &g) == AGG_ADDED);
	CHECK(add(t, "k", "Message-Id: 4|Sequence-Number: 4|Sequence-Size: 4|Sequence-End: true",
		  "d", 3, &g) == AGG_ADDED);
	CHECK(g->size_known && g->size == 4);
	CHECK(agg_completed(t, g) == AGG_OPEN);
	CHECK(add(t, "k", "Message-Id: 2|Sequence-Number: 2", "b", 4, &g) == AGG_ADDED);
	CHECK(agg_completed(t, g) == AGG_COMPLETE);
	CHECK(g->n == 4 && g->first == 1 && g->last == 4 && g->bytes == 4);
	CHECK(agg_groups(t) == 1 && agg_bytes(t) == 4);
	agg_remove(t, g);
	CHECK(agg_groups(t) == 0 && agg_bytes(t) == 0);

	/* Sequence-End alone tells the size. */
	add(t, "e", "Sequence-Number: 1", "a", 1, &g);
	add(t, "e", "Sequence-Number: 2|Sequence-End: true", "b", 1, &g);
	CHECK(g->size_known && g->size == 2 && agg_completed(t, g) == AGG_COMPLETE);

	/* A Sequence-Size 0 marker completes an empty group. */
	CHECK(add(t, "m", "Message-Id: z|Sequence-Size: 0|Sequence-End: true", "", 1, &g)
	      == AGG_ADDED);
	CHECK(g->n == 0 && g->marker && agg_completed(t, g) == AGG_COMPLETE);
	CHECK(agg_group_records(g) == 1);
	CHECK(add(t, "m", "Message-Id: y|Sequence-Size: 0", "", 1, &g) == AGG_DUPLICATE);
	agg_table_free(t);
}

static void test_count_completion(void)
{
	struct agg_limits lim = { .count = 3 };
	struct agg_table *t = agg_table_new(&lim);
	struct agg_group *g;

	add(t, "k", "Message-Id: a", "1", 0, &g);
	add(t, "k", "Message-Id: b", "2", 0, &g);
	CHECK(agg_completed(t, g) == AGG_OPEN);
	add(t, "k", "Message-Id: c", "3", 0, &g);
	CHECK(agg_completed(t, g) == AGG_COUNT);
	/* Combined: the sequence that ends first wins over the count. */
	add(t, "s", "Sequence-Number: 1", "1", 0, &g);
	add(t, "s", "Sequence-Number: 2|Sequence-Size: 2", "2", 0, &g);
	CHECK(agg_completed(t, g) == AGG_COMPLETE);
	/* And a count reached before the sequence ends completes it. */
	add(t, "u", "Sequence-Number: 1", "1", 0, &g);
	add(t, "u", "Sequence-Number: 2", "2", 0, &g);
	CHECK(agg_completed(t, g) == AGG_OPEN);
	add(t, "u", "Sequence-Number: 5|Sequence-Size: 5", "5", 0, &g);
	CHECK(agg_completed(t, g) == AGG_COUNT);
	agg_table_free(t);
}

static void test_duplicates(void)
{
	struct agg_table *t = agg_table_new(&no_limits);
	struct agg_group *g;
	char id[32];

	add(t, "k", "Message-Id: a|Sequence-Number: 1", "x", 0, &g);
	CHECK(add(t, "k", "Message-Id: a|Sequence-Number: 2", "y", 0, &g) == AGG_DUPLICATE);
	/* A redelivery with a new id is known by its number. */
	CHECK(add(t, "k", "Message-Id: b|Sequence-Number: 1", "x", 0, &g) == AGG_DUPLICATE);
	CHECK(g->n == 1 && g->duplicates == 2 && g->bytes == 1);
	/* The same id in another group is no duplicate. */
	CHECK(add(t, "other", "Message-Id: a", "x", 0, &g) == AGG_ADDED);
	/* Many members: the id set grows and still finds each. */
	for (int i = 0; i < 200; i++) {
		snprintf(id, sizeof(id), "Message-Id: m%d", i);
		CHECK(add(t, "big", id, "b", 0, &g) == AGG_ADDED);
	}
	for (int i = 0; i < 200; i += 37) {
		snprintf(id, sizeof(id), "Message-Id: m%d", i);
		CHECK(add(t, "big", id, "b", 0, &g) == AGG_DUPLICATE);
	}
	CHECK(g->n == 200 && g->duplicates == 6);
	agg_table_free(t);
}

static void test_invalid_sequences(void)
{
	static const struct {
		const char *key, *lines, *why;	/* why NULL: added */
	} cases[] = {
		{ "k", "Sequence-Number: 4000000000", NULL },
		{ "k", "Sequence-Number: 90071992547409920", "Sequence-Number out of range" },
		{ "k", "Sequence-Number: 0", "Sequence-Number out of range" },
		{ "k", "Sequence-Number: two", "Sequence-Number is not a number" },
		{ "k", "Sequence-Number: 1|Sequence-Size: x", "Sequence-Size is not a number" },
		{ "k", "Sequence-Number: 5|Sequence-Size: 4", "Sequence-Number above Sequence-Size" },
		{ "k", "Sequence-Number: 1|Sequence-Size: 4",
		  "Sequence-Size below a Sequence-Number in the group" },
		{ "j", "Sequence-Number: 1|Sequence-Size: 2", NULL },
		{ "j", "Sequence-Number: 2|Sequence-Size: 3", "Sequence-Size differs from the group's" },
		{ "j", "Sequence-Number: 3", "Sequence-Number above the group's Sequence-Size" },
		{ "j", "Sequence-Size: 2", "Sequence-Size without Sequence-Number" },
	};
	struct agg_table *t = agg_table_new(&no_limits);
	struct headers h = HEADERS_INIT;
	struct agg_input in = { .key_len = 1, .h = &h, .body = "", .best = NAN };
	struct agg_group *g = NULL;
	const char *why;

	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		enum agg_added r;
		in.key = cases[i].key;
		make_headers(&h, cases[i].lines);
		r = agg_add(t, &in, &g, &why);
		CHECK(r == (cases[i].why ? AGG_INVALID : AGG_ADDED));
		if (cases[i].why)
			CHECK_STR(why, cases[i].why);
	}
	/* Nothing refused changed a group. */
	CHECK(g->n == 1 && agg_groups(t) == 2);
	CHECK(agg_find(t, "k", 1)->n == 1);
	headers_release(&h);
	agg_table_free(t);
}

/* ---- deadlines and limits ---- */

static void test_deadlines(void)
{
	struct agg_limits lim = { .timeout_ms = 100, .idle_ms = 30 };
	struct agg_table *t = agg_table_new(&lim);
	struct agg_group *a, *b, *c, *g;
	enum agg_reason why = AGG_OPEN;

	CHECK(agg_next_deadline(t) == 0 && !agg_expired(t, 1000, &why));
	add(t, "a", "", "1", 0, &a);
	add(t, "b", "", "1", 10, &b);
	add(t, "c", "", "1", 20, &c);
	CHECK(agg_next_deadline(t) == 30);	/* a idle */
	add(t, "a", "", "2", 25, &a);
	add(t, "a", "", "3", 50, &a);
	CHECK(agg_next_deadline(t) == 40);	/* b idle */
	CHECK(!agg_expired(t, 39, &why));
	g = agg_expired(t, 45, &why);
	CHECK(g == b && why == AGG_IDLE);
	agg_remove(t, b);
	g = agg_expired(t, 45, &why);
	CHECK(g == NULL);
	CHECK(agg_next_deadline(t) == 50);	/* c idle */
	agg_remove(t, c);
	/* a keeps arriving: idle never ends it, the timeout does. */
	add(t, "a", "", "4", 70, &a);
	add(t, "a", "", "5", 95, &a);
	CHECK(agg_next_deadline(t) == 100);
	g = agg_expired(t, 100, &why);
	CHECK(g == a && why == AGG_TIMEOUT);
	agg_table_free(t);
}

static void test_deadline_order(void)
{
	struct agg_limits lim = { .timeout_ms = 1000 };
	struct agg_table *t = agg_table_new(&lim);
	enum agg_reason why;
	struct agg_group *g;
	char key[16];
	int64_t last = -1;
	int ordered = 1, n = 0;

	/* Groups made in a scrambled time order expire in time order. */
	for (int i = 0; i < 500; i++) {
		snprintf(key, sizeof(key), "g%d", i);
		add(t, key, "", "x", (i * 7919) % 500, NULL);
	}
	while ((g = agg_expired(t, 10000, &why))) {
		if (g->first < last)
			ordered = 0;
		last = g->first;
		n++;
		agg_remove(t, g);
	}
	CHECK(ordered && n == 500 && agg_groups(t) == 0);
	agg_table_free(t);
}

static void test_limits_and_oldest(void)
{
	struct agg_limits lim = { .max_groups = 2, .max_members = 2, .max_bytes = 10 };
	struct agg_table *t = agg_table_new(&lim);
	struct agg_group *g, *a;

	CHECK(agg_oldest(t) == NULL);
	CHECK(add(t, "a", "", "1234", 5, &a) == AGG_ADDED);
	CHECK(add(t, "b", "", "1", 3, &g) == AGG_ADDED);
	CHECK(agg_oldest(t) == g);
	CHECK(add(t, "c", "", "1", 1, &g) == AGG_FULL_GROUPS && g == NULL);
	CHECK(agg_groups(t) == 2);
	CHECK(add(t, "a", "", "123456", 6, &g) == AGG_FULL_BYTES && g == a);
	CHECK(add(t, "a", "", "1234", 6, &g) == AGG_ADDED);
	CHECK(agg_bytes(t) == 9);
	CHECK(add(t, "a", "", "", 7, &g) == AGG_FULL_MEMBERS && g == a && a->n == 2);
	/* release-oldest: the oldest goes, and the refused message fits. */
	agg_remove(t, agg_oldest(t));
	CHECK(add(t, "c", "", "1", 8, &g) == AGG_ADDED);
	CHECK(agg_oldest(t) == a);
	agg_table_free(t);
}

static void test_iteration(void)
{
	struct agg_table *t = agg_table_new(&no_limits);
	struct agg_group *g;
	char key[16];
	int n = 0;

	for (int i = 0; i < 300; i++) {
		snprintf(key, sizeof(key), "k%d", i);
		add(t, key, "", "x", 0, NULL);
	}
	for (g = agg_next_group(t, NULL); g; g = agg_next_group(t, g))
		n++;
	CHECK(n == 300);
	CHECK(agg_find(t, "k299", 4) && !agg_find(t, "k300", 4));
	agg_table_free(t);
}

/* ---- closed keys ---- */

static void test_closed(void)
{
	struct keyset *c = keyset_new(100, 3);

	keyset_add(c, "a", 1, 0);
	keyset_add(c, "b", 1, 10);
	CHECK(keyset_has(c, "a", 1, 50) && keyset_has(c, "b", 1, 50));
	CHECK(!keyset_has(c, "x", 1, 50));
	CHECK(keyset_expiry(c, "b", 1) == 110);
	/* a expires at 100, b at 110. */
	CHECK(!keyset_has(c, "a", 1, 100) && keyset_has(c, "b", 1, 100));
	CHECK(keyset_count(c) == 1);
	/* Closing again renews. */
	keyset_add(c, "b", 1, 105);
	CHECK(keyset_has(c, "b", 1, 200) && !keyset_has(c, "b", 1, 205));
	/* Bounded: the fourth key pushes the oldest out. */
	keyset_add(c, "p", 1, 300);
	keyset_add(c, "q", 1, 301);
	keyset_add(c, "r", 1, 302);
	keyset_add(c, "s", 1, 303);
	CHECK(keyset_count(c) == 3 && !keyset_has(c, "p", 1, 303));
	CHECK(keyset_has(c, "s", 1, 303));
	/* An older event time never expires before what came earlier. */
	keyset_add(c, "old", 3, 10);
	CHECK(keyset_expiry(c, "old", 3) == 403);
	CHECK(keyset_count(c) == 3 && !keyset_has(c, "q", 1, 303));
	CHECK(keyset_expire(c, 10000) == 3 && keyset_count(c) == 0);
	keyset_free(c);

	c = keyset_new(1000, 0);
	for (int i = 0; i < 5000; i++) {
		char k[16];
		snprintf(k, sizeof(k), "key%d", i);
		keyset_add(c, k, strlen(k), i);
	}
	CHECK(keyset_count(c) == 5000 && keyset_has(c, "key4000", 7, 4999));
	/* The lookup forgot those closed before 4000. */
	CHECK(keyset_count(c) == 1000);
	CHECK(keyset_expire(c, 5500) == 501);
	keyset_free(c);
}

/* Released groups know their members again by Message-Id; the digests
 * are bounded in all, the oldest key going first. */
static void test_closed_members(void)
{
	static const struct agg_limits none;
	struct agg_table *t = agg_table_new(&none);
	struct agg_closed *c = agg_closed_new(1000, 10, 3);
	struct agg_group *g;
	struct buf value = BUF_INIT;

	CHECK(add(t, "A", "Message-Id: a1", "x", 0, &g) == AGG_ADDED);
	CHECK(add(t, "A", "", "no id", 0, &g) == AGG_ADDED);
	CHECK(add(t, "A", "Message-Id: a2", "y", 0, &g) == AGG_ADDED);
	agg_closed_add(c, g, 10);
	/* The record: the time, a space, a digest of 8 bytes for each id. */
	agg_closed_value(&value, g, 10);
	CHECK(value.len == 3 + 2 * 8 && !memcmp(value.ptr, "10 ", 3));
	agg_remove(t, g);
	CHECK(agg_closed_check(c, "A", 1, "a1", 20) == AGG_REDELIVERED);
	CHECK(agg_closed_check(c, "A", 1, "a2", 20) == AGG_REDELIVERED);
	CHECK(agg_closed_check(c, "A", 1, "a3", 20) == AGG_LATE);
	CHECK(agg_closed_check(c, "A", 1, NULL, 20) == AGG_LATE);
	CHECK(agg_closed_check(c, "B", 1, "a1", 20) == AGG_NOT_CLOSED);

	/* Two more ids pass the bound of 3: A, the oldest, is forgotten. */
	CHECK(add(t, "B", "Message-Id: b1", "x", 0, &g) == AGG_ADDED);
	CHECK(add(t, "B", "Message-Id: b2", "x", 0, &g) == AGG_ADDED);
	agg_closed_add(c, g, 30);
	agg_remove(t, g);
	CHECK(agg_closed_check(c, "A", 1, "a1", 40) == AGG_NOT_CLOSED);
	CHECK(agg_closed_check(c, "B", 1, "b2", 40) == AGG_REDELIVERED);
	/* And all of it after --remember. */
	agg_closed_expire(c, 1030);
	CHECK(agg_closed_check(c, "B", 1, "b2", 1030) == AGG_NOT_CLOSED);
	buf_release(&value);
	agg_closed_free(c);
	agg_table_free(t);
}

/* ---- records ---- */

static void test_member_record(void)
{
	struct agg_table *t = agg_table_new(&no_limits), *u = agg_table_new(&no_limits);
	struct headers h = HEADERS_INIT, back = HEADERS_INIT;
	struct buf key = BUF_INIT, val = BUF_INIT;
	struct agg_input in = { .key = "or\0der", .key_len = 6, .h = &h,
				.body = "a\0b\n\nc", .len = 6, .now = -42,
				.best = NAN };
	struct agg_input out;
	struct agg_group *g, *g2;
	const char *why;

	make_headers(&h, "Message-Id: m1|Sequence-Number: 2|X-Empty:|X-Colon: a: b");
	CHECK(agg_add(t, &in, &g, &why) == AGG_ADDED);
	CHECK(g->m[0].serial == 1 && agg_next_serial(t) == 2);
	agg_group_record_key(&key, g, 0);
	CHECK(key.len == 6 + 9 && !memcmp(key.ptr, "or\0der\0\0\0\0\0\0\0\0\1", 15));
	agg_member_value(&val, &in);
	CHECK(agg_member_decode(key.ptr, key.len, val.ptr, val.len, &out, &back) == 0);
	CHECK(out.key_len == 6 && !memcmp(out.key, "or\0der", 6));
	CHECK(out.serial == 1 && out.now == -42 && isnan(out.best));
	CHECK(out.len == 6 && !memcmp(out.body, "a\0b\n\nc", 6));
	CHECK(headers_count(&back) == 4);
	CHECK_STR(headers_get(&back, "X-Colon"), "a: b");
	CHECK_STR(headers_get(&back, "X-Empty"), "");
	/* Restored into a new table, the member has its old serial. */
	CHECK(agg_add(u, &out, &g2, &why) == AGG_ADDED);
	CHECK(g2->m[0].serial == 1 && g2->first == -42 && agg_next_serial(u) == 2);
	CHECK(g2->m[0].seq == 2 && !strcmp(agg_member_id(g2, &g2->m[0]), "m1"));
	/* Damaged records are refused. */
	errno = 0;
	CHECK(agg_member_decode(key.ptr, 8, val.ptr, val.len, &out, &back) == -1 &&
	      errno == EINVAL);
	CHECK(agg_member_decode(key.ptr, key.len, "x\n\n", 3, &out, &back) == -1);
	CHECK(agg_member_decode(key.ptr, key.len, "1\nno colon\n\n", 12, &out, &back) == -1);
	CHECK(agg_member_decode(key.ptr, key.len, "1\nA: b\n", 7, &out, &back) == -1);
	CHECK(agg_member_decode(key.ptr, key.len, "1\n\n", 3, &out, &back) == 0 &&
	      out.len == 0 && headers_count(&back) == 0);
	buf_release(&key);
	buf_release(&val);
	headers_release(&h);
	headers_release(&back);
	agg_table_free(t);
	agg_table_free(u);
}

/* Every record of a table, decoded into another, gives the same groups. */
static void test_restore(void)
{
	struct agg_limits lim = { .idle_ms = 50 };
	struct agg_table *t = agg_table_new(&lim), *u = agg_table_new(&lim);
	struct buf key = BUF_INIT, val = BUF_INIT;
	struct headers h = HEADERS_INIT, back = HEADERS_INIT;
	struct agg_input in = { .h = &h, .best = NAN }, out;
	struct agg_group *g;
	const char *why;
	int same = 1;

	for (int i = 0; i < 30; i++) {
		char k[8], lines[64];
		snprintf(k, sizeof(k), "g%d", i % 7);
		snprintf(lines, sizeof(lines), "Sequence-Number: %d", i / 7 + 1);
		make_headers(&h, i == 29 ? "Sequence-Size: 0" : lines);
		in.key = i == 29 ? "empty" : k;
		in.key_len = strlen(in.key);
		in.body = k;
		in.len = strlen(k);
		in.now = 1000 + i;
		CHECK(agg_add(t, &in, &g, &why) == AGG_ADDED);
		/* what the tool puts, and what it reads back after a crash */
		agg_member_key(&key, in.key, in.key_len, g->n ? g->m[g->n - 1].serial : g->marker);
		agg_member_value(&val, &in);
		CHECK(agg_member_decode(key.ptr, key.len, val.ptr, val.len, &out, &back) == 0);
		CHECK(agg_add(u, &out, &g, &why) == AGG_ADDED);
	}
	CHECK(agg_groups(u) == agg_groups(t) && agg_bytes(u) == agg_bytes(t));
	CHECK(agg_next_serial(u) == agg_next_serial(t));
	CHECK(agg_next_deadline(u) == agg_next_deadline(t));
	for (g = agg_next_group(t, NULL); g; g = agg_next_group(t, g)) {
		struct agg_group *r = agg_find(u, g->key, g->key_len);
		if (!r || r->n != g->n || r->first != g->first || r->last != g->last ||
		    r->seen.count != g->seen.count || r->marker != g->marker)
			same = 0;
		for (size_t i = 0; r && same && i < agg_group_records(g); i++) {
			struct buf k2 = BUF_INIT;
			agg_group_record_key(&key, g, i);
			agg_group_record_key(&k2, r, i);
			same = key.len == k2.len && !memcmp(key.ptr, k2.ptr, key.len);
			buf_release(&k2);
		}
	}
	CHECK(same);
	buf_release(&key);
	buf_release(&val);
	headers_release(&h);
	headers_release(&back);
	agg_table_free(t);
	agg_table_free(u);
}

static void test_closed_record(void)
{
	struct buf v = BUF_INIT;
	int64_t at = 0;

	keyset_value(&v, 1796199299123);
	CHECK_STR(v.ptr, "1796199299123");
	CHECK(keyset_decode(v.ptr, v.len, &at) == 0 && at == 1796199299123);
	keyset_value(&v, -5);
	CHECK(keyset_decode(v.ptr, v.len, &at) == 0 && at == -5);
	CHECK(keyset_decode("12x", 3, &at) == -1);
	CHECK(keyset_decode("", 0, &at) == -1);
	CHECK(keyset_decode("1\n2", 3, &at) == -1);
	buf_release(&v);
}

int main(void)
{
	test_seqset_ranges();
	test_seqset_sparse();
	test_seq_parse();
	test_sequence_completion();
	test_count_completion();
	test_duplicates();
	test_invalid_sequences();
	test_deadlines();
	test_deadline_order();
	test_limits_and_oldest();
	test_iteration();
	test_closed();
	test_closed_members();
	test_member_record();
	test_restore();
	test_closed_record();
	return unit_done();
}
