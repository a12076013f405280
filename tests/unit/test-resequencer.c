/* test-resequencer: the run of the Resequencer (resequencer.h): messages
 * out in order with their gaps marked, late and duplicate ones told,
 * room made, the end of input; and over a store, messages held until
 * the sync and every waiting or unsent one back after a restart. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "msgrec.h"
#include "resequence-batch.h"
#include "resequencer.h"
#include "store.h"
#include "unit.h"
#include "unit-headers.h"

/* What came out: " BODY" per message, "[GAP]" after it when it has a
 * Resequence-Gap, "!" when its Id header is not its body. */
struct sink {
	struct buf out;
	struct buf invalid;	/* " BODY(why)" */
};

static struct sink sink;
static struct buf copy = BUF_INIT;	/* what out() and refused() return */

static void describe(struct buf *to, const char *block, size_t block_len,
		     const char *body, size_t len)
{
	struct headers h = HEADERS_INIT;
	const char *id, *gap;
	int parsed = msgrec_parse_block(block, block_len, &h) == 0;

	id = headers_get(&h, "Id");
	gap = headers_get(&h, "Resequence-Gap");
	buf_addch(to, ' ');
	buf_add(to, body, len);
	if (!parsed || !id || strlen(id) != len || memcmp(id, body, len))
		buf_addch(to, '!');
	if (gap)
		buf_addf(to, "[%s]", gap);
	headers_release(&h);
}

static int emit(void *ctx, const char *block, size_t block_len,
		const char *body, size_t len, struct buf *why)
{
	(void)ctx, (void)why;
	describe(&sink.out, block, block_len, body, len);
	return 0;
}

static void invalid(void *ctx, const char *block, size_t block_len,
		    const char *body, size_t len, const char *why)
{
	(void)ctx;
	describe(&sink.invalid, block, block_len, body, len);
	buf_addf(&sink.invalid, "(%s)", why);
}

static const struct resequencer_out to_sink = { NULL, emit, invalid };

/* What b holds, then empties it: valid until the next call. */
static const char *taken(struct buf *b)
{
	buf_reset(&copy);
	buf_add(&copy, b->ptr, b->len);
	buf_reset(b);
	return copy.ptr;
}

static const char *out(void) { return taken(&sink.out); }
static const char *refused(void) { return taken(&sink.invalid); }

static struct resequencer_opt options(int64_t timeout_ms)
{
	struct resequencer_opt opt;

	memset(&opt, 0, sizeof(opt));
	opt.lim.start = 1;
	opt.lim.window = 1;
	opt.lim.timeout_ms = timeout_ms;
	opt.on_full = RSQR_SKIP;
	opt.forget_ms = 3600 * 1000;
	return opt;
}

static struct buf reason = BUF_INIT;	/* the last refusal's why */
static const char *last_why;

/* Message num of group key, body and Id "KEYNUM", at now; size < 0: no
 * Sequence-Size. */
struct test_msg {
	char block[128];
	char body[64];
	struct rsq_input in;
};

static void msg_make(struct test_msg *m, const char *key, uint64_t num,
		     int64_t size, int64_t now)
{
	snprintf(m->body, sizeof(m->body), "%s%llu", key, (unsigned long long)num);
	snprintf(m->block, sizeof(m->block), "Id: %s\nContent-Length: %zu\n\n",
		 m->body, strlen(m->body));
	memset(&m->in, 0, sizeof(m->in));
	m->in.key = key;
	m->in.key_len = strlen(key);
	m->in.num = num;
	m->in.size_known = size >= 0;
	m->in.size = size >= 0 ? (uint64_t)size : 0;
	m->in.block = m->block;
	m->in.block_len = strlen(m->block);
	m->in.body = m->body;
	m->in.len = strlen(m->body);
	m->in.now = now;
}

/* What became of the message, or -1 when the store failed. */
static int add_sized(struct resequencer *r, const char *key, uint64_t num,
		     int64_t size, int64_t now)
{
	struct test_msg m;
	enum rsq_result res;

	msg_make(&m, key, num, size, now);
	if (resequencer_add(r, &m.in, &res, &reason) < 0)
		res = (enum rsq_result)-1;
	last_why = reason.ptr;
	return (int)res;
}

static int add(struct resequencer *r, const char *key, uint64_t num,
	       int64_t now)
{
	return add_sized(r, key, num, -1, now);
}

/* ---- in memory ---- */

/* -T: a gap waited for long enough is skipped and marked. */
static void test_gaps(void)
{
	struct resequencer_opt opt = options(100);
	struct resequencer *r = resequencer_new(&opt, &to_sink, NULL);
	const struct resequencer_stats *st = resequencer_stats(r);

	CHECK(add(r, "a", 1, 0) == RSQR_OUT);
	CHECK_STR(out(), " a1");
	CHECK(add(r, "a", 3, 1000) == RSQR_WAITS);
	CHECK(add(r, "a", 4, 1010) == RSQR_WAITS);
	CHECK(add(r, "b", 2, 1020) == RSQR_WAITS);
	CHECK(resequencer_waiting(r) == 3);
	CHECK(resequencer_next_deadline(r) == 1100);
	CHECK(resequencer_tick(r, 1099) == 0);
	CHECK_STR(out(), "");
	CHECK(resequencer_tick(r, 1100) == 0);
	CHECK_STR(out(), " a3[2] a4");
	CHECK(resequencer_next_deadline(r) == 1120);
	CHECK(add(r, "a", 2, 1101) == RSQR_LATE_SKIPPED);
	CHECK(add(r, "a", 3, 1102) == RSQR_DUP_EMITTED);
	CHECK(add(r, "b", 2, 1103) == RSQR_DUP_WAITING);
	CHECK(add(r, "a", 5, 1104) == RSQR_OUT);
	CHECK_STR(out(), " a5");
	CHECK(resequencer_tick(r, 1120) == 0);
	CHECK_STR(out(), " b2[1]");
	CHECK(resequencer_waiting(r) == 0 && resequencer_next_deadline(r) == 0);
	/* A gap of several numbers, marked LO-HI on the first after it. */
	CHECK(add(r, "b", 6, 2000) == RSQR_WAITS);
	CHECK(add(r, "b", 7, 2000) == RSQR_WAITS);
	CHECK(resequencer_skip_oldest(r, 2001) == 1);
	CHECK_STR(out(), " b6[3-5] b7");
	CHECK(resequencer_skip_oldest(r, 2002) == 0);
	CHECK(st->out == 7 && st->gaps == 3 && st->skipped == 5 && st->most == 3);
	CHECK_STR(refused(), "");
	resequencer_free(r);
}

/* Sequence-Size: a complete group is forgotten, its key remembered. */
static void test_complete(void)
{
	struct resequencer_opt opt = options(0);
	struct resequencer *r = resequencer_new(&opt, &to_sink, NULL);

	CHECK(add_sized(r, "c", 2, 2, 0) == RSQR_WAITS);
	CHECK(add_sized(r, "c", 3, 2, 0) == RSQR_INVALID);
	CHECK_STR(last_why, "sequence number 3 is past Sequence-Size 2");
	CHECK(add_sized(r, "c", 1, 3, 0) == RSQR_INVALID);
	CHECK_STR(last_why, "Sequence-Size 3 differs from the group's 2");
	CHECK(add_sized(r, "c", 1, 2, 0) == RSQR_OUT);
	CHECK_STR(out(), " c1 c2");
	CHECK(add_sized(r, "c", 1, 2, 1) == RSQR_LATE_COMPLETE);
	CHECK(add(r, "c", 3, 2) == RSQR_LATE_COMPLETE);
	/* Past --forget the key is new again. */
	CHECK(resequencer_tick(r, 3600 * 1000 + 1) == 0);
	CHECK(add(r, "c", 1, 3600 * 1000 + 2) == RSQR_OUT);
	CHECK_STR(out(), " c1");
	resequencer_free(r);
}

/* A number that waited before its group's Sequence-Size was known, and
 * is past it, is refused when the group completes, not lost with it. */
static void test_past_end_waiting(void)
{
	struct resequencer_opt opt = options(0);
	struct resequencer *r = resequencer_new(&opt, &to_sink, NULL);

	CHECK(add(r, "c", 5, 0) == RSQR_WAITS);
	CHECK(add_sized(r, "c", 1, 3, 0) == RSQR_OUT);
	CHECK(add(r, "c", 3, 0) == RSQR_WAITS);
	CHECK_STR(refused(), "");
	CHECK(add(r, "c", 2, 0) == RSQR_OUT);
	CHECK_STR(out(), " c1 c2 c3");
	CHECK_STR(refused(), " c5(sequence number 5 is past Sequence-Size 3)");
	CHECK(resequencer_waiting(r) == 0);
	CHECK(add(r, "c", 4, 0) == RSQR_LATE_COMPLETE);
	CHECK(resequencer_stats(r)->out == 3);
	resequencer_free(r);

	/* --start first: the window holds one past the end, next in line. */
	opt.lim.start_first = 1;
	opt.lim.window = 4;
	r = resequencer_new(&opt, &to_sink, NULL);
	CHECK(add_sized(r, "d", 8, 3, 0) == RSQR_WAITS);
	CHECK(add_sized(r, "d", 6, 3, 0) == RSQR_WAITS);
	CHECK(add_sized(r, "d", 5, 3, 0) == RSQR_WAITS);
	CHECK(add_sized(r, "d", 7, 3, 0) == RSQR_WAITS);
	CHECK_STR(out(), " d5 d6 d7");
	CHECK_STR(refused(), " d8(sequence number 8 is past Sequence-Size 3)");
	CHECK(resequencer_waiting(r) == 0);
	resequencer_free(r);
}

/* --forget: a group idle that long is forgotten, as if never seen. */
static void test_forget_idle(void)
{
	struct resequencer_opt opt = options(0);
	struct resequencer *r;

	opt.forget_ms = 1000;
	r = resequencer_new(&opt, &to_sink, NULL);
	CHECK(add(r, "a", 1, 0) == RSQR_OUT);
	CHECK(add(r, "b", 1, 0) == RSQR_OUT);
	CHECK(add(r, "b", 3, 500) == RSQR_WAITS);
	CHECK(resequencer_tick(r, 999) == 0);
	CHECK(add(r, "a", 1, 999) == RSQR_DUP_EMITTED);
	CHECK(resequencer_tick(r, 1999) == 0);
	CHECK(add(r, "a", 1, 1999) == RSQR_OUT);
	/* b waits: it is not idle, however long. */
	CHECK(add(r, "b", 1, 1999) == RSQR_DUP_EMITTED);
	CHECK_STR(out(), " a1 b1 a1");
	resequencer_free(r);
}

/* -C: --on-full skip makes room at the oldest gap; fail refuses. */
static void test_full(void)
{
	struct resequencer_opt opt = options(0);
	struct resequencer *r;

	opt.lim.capacity = 2;
	r = resequencer_new(&opt, &to_sink, NULL);
	CHECK(add(r, "a", 3, 10) == RSQR_WAITS);
	CHECK(add(r, "b", 2, 20) == RSQR_WAITS);
	CHECK(add(r, "a", 5, 30) == RSQR_WAITS);
	CHECK_STR(out(), " a3[1-2]");
	CHECK(resequencer_waiting(r) == 2);
	/* Making room skips the very gap 2 was to fill: it is late. */
	CHECK(add(r, "a", 7, 40) == RSQR_WAITS);
	CHECK_STR(out(), " b2[1]");
	CHECK(add(r, "b", 1, 50) == RSQR_LATE_SKIPPED);
	resequencer_free(r);

	opt.on_full = RSQR_FAIL;
	r = resequencer_new(&opt, &to_sink, NULL);
	CHECK(add(r, "a", 3, 10) == RSQR_WAITS);
	CHECK(add(r, "a", 4, 10) == RSQR_WAITS);
	CHECK(add(r, "a", 5, 10) == RSQR_FULL);
	CHECK_STR(last_why, "-C");
	CHECK(resequencer_waiting(r) == 2);
	CHECK(add(r, "a", 1, 10) == RSQR_OUT);
	CHECK_STR(out(), " a1");
	resequencer_free(r);

	opt.lim.capacity = 0;
	opt.lim.max_bytes = 10;
	r = resequencer_new(&opt, &to_sink, NULL);
	CHECK(add(r, "a", 2, 10) == RSQR_INVALID);
	CHECK_STR(last_why, "the message alone is over --max-bytes");
	CHECK_STR(out(), "");
	resequencer_free(r);
}

/* a waits 2 and 4, b waits 3: what the end of input makes of them. */
static struct resequencer *three_waiting(void)
{
	struct resequencer_opt opt = options(0);
	struct resequencer *r = resequencer_new(&opt, &to_sink, NULL);

	add(r, "a", 4, 0);
	add(r, "b", 3, 0);
	add(r, "a", 2, 0);
	CHECK(resequencer_waiting(r) == 3);
	return r;
}

static void test_end(void)
{
	struct resequencer *r = three_waiting();
	uint64_t groups = 0;

	CHECK(resequencer_end(r, RSQR_FLUSH, &groups, 0) == 3 && groups == 2);
	CHECK_STR(out(), " a2[1] a4[3] b3[1-2]");
	CHECK(resequencer_waiting(r) == 0);
	CHECK(resequencer_stats(r)->gaps == 3);
	resequencer_free(r);

	r = three_waiting();
	groups = 0;
	CHECK(resequencer_end(r, RSQR_FAIL_END, &groups, 0) == 3 && groups == 2);
	CHECK_STR(out(), "");
	CHECK_STR(refused(), " a2(still waiting at the end of input)"
		  " a4(still waiting at the end of input)"
		  " b3(still waiting at the end of input)");
	CHECK(resequencer_waiting(r) == 0);
	resequencer_free(r);

	r = three_waiting();
	groups = 0;
	CHECK(resequencer_end(r, RSQR_KEEP, &groups, 0) == 3 && groups == 2);
	CHECK_STR(out(), "");
	CHECK_STR(refused(), "");
	CHECK(resequencer_waiting(r) == 3);
	resequencer_free(r);

	r = three_waiting();
	add(r, "a", 1, 0);
	add(r, "b", 1, 0);
	add(r, "b", 2, 0);
	CHECK_STR(out(), " a1 a2 b1 b2 b3");
	CHECK(resequencer_end(r, RSQR_FLUSH, &groups, 0) == 1 && groups == 1);
	CHECK_STR(out(), " a4[3]");
	resequencer_free(r);
}

/* ---- --batch ---- */

static void duplicate(void *ctx, const char *block, size_t block_len,
		      const char *body, size_t len, uint64_t num)
{
	(void)ctx;
	describe(&sink.invalid, block, block_len, body, len);
	buf_addf(&sink.invalid, "(duplicate %llu)", (unsigned long long)num);
}

static const struct rsq_batch_out batch_sink = {
	NULL, emit, invalid, duplicate
};

static int batch_add(struct rsq_batch *b, const char *key, uint64_t num,
		     int64_t size)
{
	struct test_msg m;
	enum rsq_result res;

	msg_make(&m, key, num, size, 0);
	if (rsq_batch_add(b, &m.in, &batch_sink, &res, &reason) < 0)
		res = (enum rsq_result)-1;
	last_why = reason.ptr;
	return (int)res;
}

/* Sorted at the end, and the end of a group is where its start and its
 * Sequence-Size put it, whenever that size came. */
static void test_batch(void)
{
	struct resequencer_opt opt = options(0);
	struct resequencer_stats st;
	struct rsq_batch *b = rsq_batch_new(&opt.lim);

	CHECK(batch_add(b, "c", 5, -1) == RSQR_WAITS);
	CHECK(batch_add(b, "c", 3, 3) == RSQR_WAITS);
	CHECK(batch_add(b, "c", 4, -1) == RSQR_INVALID);
	CHECK_STR(last_why, "sequence number 4 is past Sequence-Size 3");
	CHECK(batch_add(b, "c", 1, -1) == RSQR_WAITS);
	CHECK(batch_add(b, "c", 1, -1) == RSQR_WAITS);
	CHECK(batch_add(b, "c", 0, -1) == RSQR_INVALID);
	CHECK(batch_add(b, "e", 2, -1) == RSQR_WAITS);
	memset(&st, 0, sizeof(st));
	CHECK(rsq_batch_finish(b, &batch_sink, &st) == 0);
	CHECK_STR(out(), " c1 c3[2] e2[1]");
	CHECK_STR(refused(), " c1(duplicate 1)"
		  " c5(sequence number 5 is past Sequence-Size 3)");
	CHECK(st.out == 3 && st.gaps == 2 && st.skipped == 2 && st.most == 5);
	rsq_batch_free(b);

	/* --start first: the group starts at its lowest number. */
	opt.lim.start_first = 1;
	b = rsq_batch_new(&opt.lim);
	CHECK(batch_add(b, "d", 8, -1) == RSQR_WAITS);
	CHECK(batch_add(b, "d", 6, 3) == RSQR_WAITS);
	CHECK(batch_add(b, "d", 5, 3) == RSQR_WAITS);
	CHECK(batch_add(b, "d", 7, 3) == RSQR_WAITS);
	CHECK(batch_add(b, "f", 9, 1) == RSQR_WAITS);
	memset(&st, 0, sizeof(st));
	CHECK(rsq_batch_finish(b, &batch_sink, &st) == 0);
	CHECK_STR(out(), " d5 d6 d7 f9");
	CHECK_STR(refused(), " d8(sequence number 8 is past Sequence-Size 3)");
	CHECK(st.out == 4 && st.gaps == 0);
	rsq_batch_free(b);
}

/* ---- over a store ---- */

static char top[4096];
static int dir_count;
static struct resequencer_opt stored_opt;

static struct store *open_store(const char *dir)
{
	struct store_err err;
	struct store *s = store_open(dir, &err);

	if (!s) {
		printf("# %s\n", err.msg);
		abort();
	}
	return s;
}

/* A run over a new store in *dir. */
static struct resequencer *start_stored(char *dir, size_t size,
					struct store **s)
{
	struct resequencer *r;

	snprintf(dir, size, "%s/s%d", top, dir_count++);
	*s = open_store(dir);
	r = resequencer_new(&stored_opt, &to_sink, *s);
	CHECK(resequencer_restore(r, 0) == 0);
	return r;
}

/* The process stops and starts again: what was not committed is lost. */
static struct resequencer *restart(struct resequencer *r, const char *dir,
				   struct store **s, int64_t now)
{
	resequencer_free(r);
	store_close(*s);
	*s = open_store(dir);
	r = resequencer_new(&stored_opt, &to_sink, *s);
	CHECK(resequencer_restore(r, now) == 0);
	return r;
}

/* Nothing goes out before the batch it came from is committed. */
static void test_held(void)
{
	char dir[4200];
	struct store *s;
	struct resequencer *r = start_stored(dir, sizeof(dir), &s);

	CHECK(add(r, "a", 1, 0) == RSQR_OUT);
	CHECK(add(r, "a", 3, 0) == RSQR_WAITS);
	CHECK_STR(out(), "");
	CHECK(resequencer_held(r) == 1);
	CHECK(add(r, "a", 2, 0) == RSQR_OUT);
	CHECK(resequencer_held(r) == 3);
	CHECK_STR(out(), "");
	CHECK(resequencer_sync(r) == 0);
	CHECK_STR(out(), " a1 a2 a3");
	CHECK(resequencer_held(r) == 0);
	/* A gap skipped by time is held like the rest, its mark with it. */
	stored_opt.lim.timeout_ms = 100;
	resequencer_free(r);
	r = resequencer_new(&stored_opt, &to_sink, s);
	CHECK(resequencer_restore(r, 0) == 0);
	CHECK(add(r, "a", 6, 1000) == RSQR_WAITS);
	CHECK(resequencer_tick(r, 1100) == 0);
	CHECK(resequencer_held(r) == 1);
	CHECK_STR(out(), "");
	CHECK(resequencer_sync(r) == 0);
	CHECK_STR(out(), " a6[4-5]");
	stored_opt.lim.timeout_ms = 0;
	resequencer_free(r);
	store_close(s);
}

/* Waiting messages come back after a restart and go out in order once
 * their gap fills; those out and committed twice stay out. */
static void test_restart(void)
{
	char dir[4200];
	struct store *s;
	struct resequencer *r = start_stored(dir, sizeof(dir), &s);

	add(r, "a", 1, 0);
	add(r, "a", 4, 10);
	add(r, "a", 3, 20);
	add(r, "b", 2, 30);
	CHECK(resequencer_sync(r) == 0);
	CHECK(resequencer_sync(r) == 0);
	CHECK_STR(out(), " a1");
	r = restart(r, dir, &s, 100);
	CHECK(resequencer_waiting(r) == 3);
	CHECK(resequencer_held(r) == 0);
	CHECK(add(r, "a", 3, 110) == RSQR_DUP_WAITING);
	CHECK(add(r, "a", 1, 110) == RSQR_DUP_EMITTED);
	CHECK(add(r, "a", 2, 110) == RSQR_OUT);
	CHECK(add(r, "b", 1, 110) == RSQR_OUT);
	CHECK_STR(out(), "");
	CHECK(resequencer_sync(r) == 0);
	CHECK_STR(out(), " a2 a3 a4 b1 b2");
	CHECK(resequencer_sync(r) == 0);
	r = restart(r, dir, &s, 200);
	CHECK(resequencer_waiting(r) == 0);
	CHECK(resequencer_sync(r) == 0);
	CHECK_STR(out(), "");
	CHECK(add(r, "a", 4, 210) == RSQR_DUP_EMITTED);
	CHECK(add(r, "b", 2, 210) == RSQR_DUP_EMITTED);
	CHECK(add(r, "a", 5, 210) == RSQR_OUT);
	CHECK(resequencer_sync(r) == 0);
	CHECK_STR(out(), " a5");
	/* The waiting arrival survives too: -T counts from it. */
	CHECK(add(r, "b", 5, 300) == RSQR_WAITS);
	CHECK(resequencer_sync(r) == 0);
	stored_opt.lim.timeout_ms = 100;
	r = restart(r, dir, &s, 350);
	CHECK(resequencer_next_deadline(r) == 400);
	stored_opt.lim.timeout_ms = 0;
	resequencer_free(r);
	store_close(s);
}

/* A message out but not yet known to be (synced once, not twice) goes
 * out again after a restart; one never committed is gone, its input not
 * done with. */
static void test_in_flight(void)
{
	char dir[4200];
	struct store *s;
	struct resequencer *r = start_stored(dir, sizeof(dir), &s);

	CHECK(add(r, "a", 1, 0) == RSQR_OUT);
	CHECK(add(r, "a", 3, 0) == RSQR_WAITS);
	CHECK(resequencer_sync(r) == 0);
	CHECK_STR(out(), " a1");
	r = restart(r, dir, &s, 10);
	CHECK(resequencer_held(r) == 1);
	CHECK(resequencer_waiting(r) == 1);
	CHECK_STR(out(), "");
	CHECK(resequencer_sync(r) == 0);
	CHECK_STR(out(), " a1");
	CHECK(resequencer_sync(r) == 0);
	r = restart(r, dir, &s, 20);
	CHECK(resequencer_held(r) == 0);
	CHECK(add(r, "a", 1, 20) == RSQR_DUP_EMITTED);
	CHECK(add(r, "a", 3, 20) == RSQR_DUP_WAITING);
	CHECK(add(r, "a", 2, 20) == RSQR_OUT);
	r = restart(r, dir, &s, 30);
	CHECK(resequencer_held(r) == 0);
	CHECK(resequencer_sync(r) == 0);
	CHECK_STR(out(), "");
	CHECK(add(r, "a", 2, 30) == RSQR_OUT);
	CHECK(resequencer_sync(r) == 0);
	CHECK_STR(out(), " a2 a3");
	resequencer_free(r);
	store_close(s);
}

/* Records as a run stopped between its steps may leave them: a message
 * below its group's next was going out, and goes out first. Damaged
 * records stop the restore. */
static void test_restore_records(void)
{
	char dir[4200];
	struct store *s;
	struct resequencer *r = start_stored(dir, sizeof(dir), &s);
	struct headers h = HEADERS_INIT;
	struct buf key = BUF_INIT, rec = BUF_INIT;
	static const char group[] = "1 3 1 0 0 0 1\n";

	resequencer_free(r);
	make_headers(&h, "Id: a2");
	msgrec_encode(&rec, 5, &h, "a2", 2);
	msgrec_key(&key, "a", 1, 2);
	CHECK(store_put(s, RSQ_KIND_WAIT, key.ptr, key.len, rec.ptr, rec.len, 0) == 0);
	CHECK(store_put(s, RSQ_KIND_GROUP, "a", 1, group, strlen(group), 0) == 0);
	CHECK(store_commit(s) == 0);
	r = restart(NULL, dir, &s, 10);
	CHECK(resequencer_held(r) == 1 && resequencer_waiting(r) == 0);
	CHECK(add(r, "a", 3, 10) == RSQR_OUT);
	CHECK(add(r, "a", 2, 10) == RSQR_DUP_EMITTED);
	CHECK(resequencer_sync(r) == 0);
	CHECK_STR(out(), " a2 a3");
	resequencer_free(r);

	CHECK(store_put(s, RSQ_KIND_GROUP, "b", 1, "1 x\n", 4, 0) == 0);
	CHECK(store_commit(s) == 0);
	r = resequencer_new(&stored_opt, &to_sink, s);
	errno = 0;
	CHECK(resequencer_restore(r, 20) == -1 && errno == EINVAL);
	resequencer_free(r);
	CHECK(store_delete(s, RSQ_KIND_GROUP, "b", 1) == 0);
	CHECK(store_put(s, RSQ_KIND_WAIT, "c", 1, rec.ptr, rec.len, 0) == 0);
	r = resequencer_new(&stored_opt, &to_sink, s);
	errno = 0;
	CHECK(resequencer_restore(r, 20) == -1 && errno == EINVAL);
	resequencer_free(r);
	CHECK(store_delete(s, RSQ_KIND_WAIT, "c", 1) == 0);
	CHECK(store_put(s, RSQ_KIND_WAIT, key.ptr, key.len, "5\nno blank line", 15, 0) == 0);
	r = resequencer_new(&stored_opt, &to_sink, s);
	errno = 0;
	CHECK(resequencer_restore(r, 20) == -1 && errno == EINVAL);
	resequencer_free(r);
	CHECK_STR(out(), "");
	store_close(s);
	headers_release(&h);
	buf_release(&key);
	buf_release(&rec);
}

/* A number past the end refused when its group completes: its record
 * goes too, once the refusal is out. */
static void test_past_end_stored(void)
{
	char dir[4200];
	struct store *s;
	struct resequencer *r = start_stored(dir, sizeof(dir), &s);

	CHECK(add(r, "c", 5, 0) == RSQR_WAITS);
	CHECK(resequencer_sync(r) == 0);
	r = restart(r, dir, &s, 10);
	CHECK(add_sized(r, "c", 1, 3, 10) == RSQR_OUT);
	CHECK(add(r, "c", 2, 10) == RSQR_OUT);
	CHECK(add(r, "c", 3, 10) == RSQR_OUT);
	CHECK(resequencer_sync(r) == 0);
	CHECK(resequencer_sync(r) == 0);
	CHECK_STR(out(), " c1 c2 c3");
	CHECK_STR(refused(), " c5(sequence number 5 is past Sequence-Size 3)");
	r = restart(r, dir, &s, 20);
	CHECK(resequencer_waiting(r) == 0 && resequencer_held(r) == 0);
	CHECK(add(r, "c", 5, 20) == RSQR_LATE_COMPLETE);
	CHECK(resequencer_sync(r) == 0);
	CHECK_STR(out(), "");
	CHECK_STR(refused(), "");
	resequencer_free(r);
	store_close(s);
}

/* A complete group's key is kept in the store until --forget. */
static void test_complete_stored(void)
{
	char dir[4200];
	struct store *s;
	struct resequencer *r = start_stored(dir, sizeof(dir), &s);

	CHECK(add_sized(r, "c", 1, 1, 0) == RSQR_OUT);
	CHECK(resequencer_sync(r) == 0);
	CHECK(resequencer_sync(r) == 0);
	CHECK_STR(out(), " c1");
	r = restart(r, dir, &s, 10);
	CHECK(add_sized(r, "c", 1, 1, 10) == RSQR_LATE_COMPLETE);
	CHECK(resequencer_tick(r, 3600 * 1000) == 0);
	CHECK(resequencer_sync(r) == 0);
	r = restart(r, dir, &s, 3600 * 1000 + 1);
	CHECK(add_sized(r, "c", 1, 1, 3600 * 1000 + 1) == RSQR_OUT);
	resequencer_free(r);
	store_close(s);
}

int main(void)
{
	buf_init(&sink.out, 0);
	buf_init(&sink.invalid, 0);
	test_gaps();
	test_complete();
	test_forget_idle();
	test_past_end_waiting();
	test_full();
	test_end();
	test_batch();

	if (unit_scratch_dir(top, sizeof(top), "test-resequencer") < 0)
		return 1;
	unsetenv("MSG_STORE_MIN_FREE");
	/* Restarts here are closes, not crashes: fsync proves nothing. */
	setenv("MSG_STORE_NOSYNC", "1", 1);
	stored_opt = options(0);
	test_held();
	test_restart();
	test_in_flight();
	test_restore_records();
	test_past_end_stored();
	test_complete_stored();
	unit_remove_tree(top);
	buf_release(&sink.out);
	buf_release(&sink.invalid);
	buf_release(&copy);
	buf_release(&reason);
	return unit_done();
}
