/* test-store-later: store changes queued until their results are out
 * (store-later.h): applied in order, and only when asked; and the
 * deletion of records whose deadline has come. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store.h"
#include "store-later.h"
#include "unit.h"

static const char kind[] = "later";
static const char other[] = "other";

static char top[4096];

static struct store *open_store(const char *name)
{
	char dir[4200];
	struct store_err err;
	struct store *s;

	snprintf(dir, sizeof(dir), "%s/%s", top, name);
	if (!(s = store_open(dir, &err))) {
		printf("# %s\n", err.msg);
		abort();
	}
	return s;
}

/* Bytes to out, a NUL as "\0". */
static void add_escaped(struct buf *out, const char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			buf_addch(out, p[i]);
		else
			buf_addstr(out, "\\0");
}

/* kind's records in key order as " KEY=VALUE@DEADLINE" ("@" only with
 * a deadline; a NUL as "\0"). */
static const char *records(struct store *s, const char *of)
{
	static struct buf out = BUF_INIT;
	struct buf value = BUF_INIT;
	struct store_iter it;
	struct store_rec rec;

	buf_reset(&out);
	store_iter_init(&it, s, of, NULL, 0);
	while (store_iter_next(&it, &rec, &value) == 1) {
		buf_addch(&out, ' ');
		add_escaped(&out, rec.key, rec.key_len);
		buf_addch(&out, '=');
		add_escaped(&out, value.ptr, value.len);
		if (rec.deadline)
			buf_addf(&out, "@%lld", (long long)rec.deadline);
	}
	store_iter_release(&it);
	buf_release(&value);
	return out.ptr;
}

static void put_later(struct store_later *l, const char *of, const char *key,
		      const char *value, int64_t deadline)
{
	store_later_put(l, of, key, strlen(key), value, strlen(value), deadline);
}

static void delete_later(struct store_later *l, const char *of,
			 const char *key)
{
	store_later_delete(l, of, key, strlen(key));
}

/* Nothing reaches the store before apply; then all of it, in order. */
static void test_order(void)
{
	struct store *s = open_store("order");
	struct store_later l;

	store_later_init(&l);
	CHECK(store_put(s, kind, "gone", 4, "old", 3, 0) == 0);
	CHECK(store_put(s, kind, "kept", 4, "old", 3, 0) == 0);
	put_later(&l, kind, "a", "1", 0);
	put_later(&l, kind, "b", "first", 0);
	delete_later(&l, kind, "gone");
	put_later(&l, kind, "b", "second", 500);
	delete_later(&l, kind, "a");
	put_later(&l, kind, "a", "again", 0);
	put_later(&l, kind, "c", "then gone", 0);
	delete_later(&l, kind, "c");
	put_later(&l, other, "a", "other kind", 0);
	delete_later(&l, kind, "never there");
	store_later_put(&l, kind, "nul\0key", 7, "v\0w", 3, 0);
	put_later(&l, kind, "empty", "", 0);
	CHECK_STR(records(s, kind), " gone=old kept=old");
	CHECK_STR(records(s, other), "");
	CHECK(store_later_apply(&l, s) == 0);
	CHECK_STR(records(s, kind), " a=again b=second@500 empty= kept=old nul\\0key=v\\0w");
	CHECK_STR(records(s, other), " a=other kind");
	/* Applied once: the queue is empty after. */
	CHECK(store_delete(s, kind, "a", 1) == 0);
	CHECK(store_later_apply(&l, s) == 0);
	CHECK_STR(records(s, kind), " b=second@500 empty= kept=old nul\\0key=v\\0w");
	/* The store holds it once committed. */
	put_later(&l, kind, "d", "4", 0);
	CHECK(store_later_apply(&l, s) == 0);
	CHECK(store_commit(s) == 0);
	store_close(s);
	s = open_store("order");
	CHECK_STR(records(s, kind), " b=second@500 d=4 empty= kept=old nul\\0key=v\\0w");
	store_later_release(&l);
	store_close(s);
}

/* A put the store refuses stops the apply there with its -1. */
static void test_refused(void)
{
	struct store *s = open_store("refused");
	struct store_later l;

	store_later_init(&l);
	put_later(&l, kind, "a", "1", 0);
	put_later(&l, "", "b", "no kind", 0);
	put_later(&l, kind, "c", "3", 0);
	errno = 0;
	CHECK(store_later_apply(&l, s) == -1 && errno == EINVAL);
	CHECK_STR(records(s, kind), " a=1");
	store_later_release(&l);
	store_close(s);
}

/* Records whose deadline is at or before now go; no deadline, or a
 * later one, stays. */
static void test_expired(void)
{
	struct store *s = open_store("expired");

	CHECK(store_put(s, kind, "t100", 4, "x", 1, 100) == 0);
	CHECK(store_put(s, kind, "t200", 4, "x", 1, 200) == 0);
	CHECK(store_put(s, other, "t200", 4, "x", 1, 200) == 0);
	CHECK(store_put(s, kind, "t300", 4, "x", 1, 300) == 0);
	CHECK(store_put(s, kind, "none", 4, "x", 1, 0) == 0);
	CHECK(store_delete_expired(s, 99) == 0);
	CHECK_STR(records(s, kind), " none=x t100=x@100 t200=x@200 t300=x@300");
	CHECK(store_delete_expired(s, 199) == 0);
	CHECK_STR(records(s, kind), " none=x t200=x@200 t300=x@300");
	CHECK(store_delete_expired(s, 200) == 0);
	CHECK_STR(records(s, kind), " none=x t300=x@300");
	CHECK_STR(records(s, other), "");
	CHECK(store_next_deadline(s) == 300);
	CHECK(store_delete_expired(s, INT64_MAX) == 0);
	CHECK_STR(records(s, kind), " none=x");
	CHECK(store_next_deadline(s) == 0);
	CHECK(store_delete_expired(s, INT64_MAX) == 0);
	CHECK_STR(records(s, kind), " none=x");
	store_close(s);
}

int main(void)
{
	if (unit_scratch_dir(top, sizeof(top), "test-store-later") < 0)
		return 1;
	unsetenv("MSG_STORE_MIN_FREE");
	setenv("MSG_STORE_NOSYNC", "1", 1);
	test_order();
	test_refused();
	test_expired();
	unit_remove_tree(top);
	return unit_done();
}
