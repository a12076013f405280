/* test-store: the durable store: changes, order, deadlines, reopening,
 * refusals, and recovery from what a crash or a stray file leaves. */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sysexits.h>
#include <unistd.h>

#include "store.h"
#include "unit.h"

#define LOG1 "log.0000000000000001"

static char top[4096];	/* a scratch directory for the whole run */
static char **dirs;	/* the paths new_dir handed out, freed at the end */
static size_t n_dirs;

/* A new path under top, not yet created. */
static const char *new_dir(void)
{
	char *path = malloc(strlen(top) + 32);
	char **grown = realloc(dirs, (n_dirs + 1) * sizeof(*dirs));

	if (!path || !grown)
		abort();
	sprintf(path, "%s/s%zu", top, n_dirs);
	dirs = grown;
	dirs[n_dirs++] = path;
	return path;
}

static int rm_one(const char *path, const struct stat *st, int flag,
		  struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	return remove(path);
}

static void path_in(char *out, size_t size, const char *dir, const char *name)
{
	snprintf(out, size, "%s/%s", dir, name);
}

static long long file_size(const char *dir, const char *name)
{
	char p[4300];
	struct stat st;

	path_in(p, sizeof(p), dir, name);
	return stat(p, &st) < 0 ? -1 : (long long)st.st_size;
}

static int file_mode(const char *dir, const char *name)
{
	char p[4300];
	struct stat st;

	path_in(p, sizeof(p), dir, name);
	return stat(p, &st) < 0 ? -1 : (int)(st.st_mode & 07777);
}

static void write_file(const char *dir, const char *name, const void *data,
		       size_t n, int append)
{
	char p[4300];
	int fd;

	path_in(p, sizeof(p), dir, name);
	fd = open(p, O_WRONLY | O_CREAT | (append ? O_APPEND : O_TRUNC), 0600);
	CHECK(fd >= 0 && write(fd, data, n) == (ssize_t)n);
	if (fd >= 0)
		close(fd);
}


/* Copy the files a store is made of into a new directory: 0 or -1. */
static int clone_store(const char *from, const char *to)
{
	static const char *const names[] = { "version", LOG1 };
	char src[4300], dst[4300], data[8192];
	int r = mkdir(to, 0700);

	for (int i = 0; i < 2 && r == 0; i++) {
		int in, out;
		ssize_t n;
		path_in(src, sizeof(src), from, names[i]);
		path_in(dst, sizeof(dst), to, names[i]);
		in = open(src, O_RDONLY);
		out = open(dst, O_WRONLY | O_CREAT | O_EXCL, 0600);
		while (in >= 0 && out >= 0 && (n = read(in, data, sizeof(data))) > 0)
			if (write(out, data, (size_t)n) != n)
				break;
		r = in >= 0 && out >= 0 ? 0 : -1;
		close(in);
		close(out);
	}
	return r;
}

static struct store *open_ok(const char *dir)
{
	struct store_err err;
	struct store *s = store_open(dir, &err);

	CHECK(s != NULL);
	if (!s)
		printf("#   %s\n", err.msg);
	return s;
}

static void put(struct store *s, const char *kind, const char *key,
		const char *value, int64_t deadline)
{
	CHECK(store_put(s, kind, key, strlen(key), value, strlen(value),
			deadline) == 0);
}

/* 1 if kind/key holds exactly want, 0 if absent, -1 if different. */
static int holds(struct store *s, const char *kind, const char *key,
		 const char *want)
{
	struct buf v = BUF_INIT;
	int r = store_get(s, kind, key, strlen(key), &v, NULL);

	if (r == 1 && (v.len != strlen(want) || memcmp(v.ptr, want, v.len)))
		r = -1;
	buf_release(&v);
	return r;
}

/* The keys of kind with prefix, in order, joined by spaces. */
static void keys(struct store *s, const char *kind, const char *prefix,
		 struct buf *out)
{
	struct store_iter it;
	struct store_rec rec;

	buf_reset(out);
	store_iter_init(&it, s, kind, prefix, prefix ? strlen(prefix) : 0);
	while (store_iter_next(&it, &rec, NULL) == 1) {
		if (out->len)
			buf_addch(out, ' ');
		if (!kind)
			buf_addf(out, "%s:", rec.kind);
		buf_add(out, rec.key, rec.key_len);
	}
	store_iter_release(&it);
}

static void test_basics(void)
{
	const char *dir = new_dir();
	struct store *s = open_ok(dir);
	struct store_stats st;
	struct buf v = BUF_INIT;
	int64_t dl = -1;

	CHECK(file_mode(dir, ".") == 0700);
	CHECK(file_mode(dir, "lock") == 0600);
	CHECK(file_mode(dir, "version") == 0600);
	CHECK(file_mode(dir, LOG1) == 0600);
	CHECK(file_size(dir, LOG1) == 32);

	put(s, "msg", "a", "alpha", 0);
	put(s, "msg", "b", "beta", 1234);
	put(s, "state", "a", "other kind", 0);
	CHECK(holds(s, "msg", "a", "alpha") == 1);
	CHECK(store_get(s, "msg", "b", 1, &v, &dl) == 1 && dl == 1234);
	CHECK(holds(s, "state", "a", "other kind") == 1);
	CHECK(holds(s, "msg", "c", "") == 0);
	CHECK(holds(s, "other", "a", "") == 0);
	/* Replace and delete, before and after a commit. */
	put(s, "msg", "a", "ALPHA", 0);
	CHECK(holds(s, "msg", "a", "ALPHA") == 1);
	CHECK(store_commit(s) == 0);
	CHECK(store_delete(s, "msg", "b", 1) == 0);
	CHECK(holds(s, "msg", "b", "") == 0);
	CHECK(store_delete(s, "msg", "nothing", 7) == 0);
	CHECK(store_commit(s) == 0);
	CHECK(store_commit(s) == 0);	/* nothing queued: no fsync */
	store_get_stats(s, &st);
	CHECK(st.records == 2);
	CHECK(st.commits == 2);
	CHECK(st.log_bytes == (uint64_t)file_size(dir, LOG1));
	CHECK(store_get(s, "msg", "a", 1, NULL, NULL) == 1);
	buf_release(&v);
	store_close(s);
}

static void test_values(void)
{
	const char *dir = new_dir();
	struct store *s = open_ok(dir);
	size_t big_len = 300000;
	char *big = malloc(big_len);
	struct buf v = BUF_INIT;

	for (size_t i = 0; i < big_len; i++)
		big[i] = (char)(i * 7 + i / 251);
	CHECK(store_put(s, "msg", "big", 3, big, big_len, 0) == 0);
	CHECK(store_put(s, "msg", "nul\0key", 7, "a\0b", 3, 0) == 0);
	CHECK(store_put(s, "msg", "", 0, "", 0, 0) == 0);
	CHECK(store_commit(s) == 0);
	store_close(s);

	s = open_ok(dir);
	CHECK(store_get(s, "msg", "big", 3, &v, NULL) == 1);
	CHECK(v.len == big_len && !memcmp(v.ptr, big, big_len));
	CHECK(store_get(s, "msg", "nul\0key", 7, &v, NULL) == 1);
	CHECK(v.len == 3 && !memcmp(v.ptr, "a\0b", 3));
	CHECK(store_get(s, "msg", "nul", 3, &v, NULL) == 0);
	CHECK(store_get(s, "msg", "", 0, &v, NULL) == 1 && v.len == 0);
	store_close(s);
	buf_release(&v);
	free(big);
}

static void test_bad_names(void)
{
	const char *dir = new_dir();
	struct store *s = open_ok(dir);
	char kind[300], key[70000];

	memset(kind, 'k', sizeof(kind) - 1);
	kind[sizeof(kind) - 1] = '\0';
	memset(key, 'x', sizeof(key));
	errno = 0;
	CHECK(store_put(s, "", "a", 1, "v", 1, 0) == -1 && errno == EINVAL);
	CHECK(store_put(s, kind, "a", 1, "v", 1, 0) == -1 && errno == EINVAL);
	CHECK(store_put(s, "msg", key, STORE_KEY_MAX + 1, "v", 1, 0) == -1 &&
	      errno == EINVAL);
	CHECK(strstr(store_last_error(s), "key of 65536") != NULL);
	kind[STORE_KIND_MAX] = '\0';
	CHECK(store_put(s, kind, key, STORE_KEY_MAX, "v", 1, 0) == 0);
	CHECK(store_commit(s) == 0);	/* a bad name does not stop the store */
	store_close(s);
	s = open_ok(dir);
	CHECK(store_get(s, kind, key, STORE_KEY_MAX, NULL, NULL) == 1);
	store_close(s);
}

static void test_iterate(void)
{
	const char *dir = new_dir();
	struct store *s = open_ok(dir);
	struct buf out = BUF_INIT, v = BUF_INIT;
	struct store_iter it;
	struct store_rec rec;
	int n = 0;

	put(s, "msg", "g2/1", "x", 0);
	put(s, "msg", "g1/2", "x", 0);
	put(s, "msg", "g1/10", "x", 0);
	put(s, "msg", "g1/1", "x", 0);
	put(s, "msg", "g10/1", "x", 0);
	put(s, "state", "g1", "s", 0);
	put(s, "a", "z", "first kind", 0);
	keys(s, "msg", "g1/", &out);
	CHECK_STR(out.ptr, "g1/1 g1/10 g1/2");
	keys(s, "msg", NULL, &out);
	CHECK_STR(out.ptr, "g1/1 g1/10 g1/2 g10/1 g2/1");
	keys(s, "msg", "g3", &out);
	CHECK_STR(out.ptr, "");
	keys(s, "nothing", NULL, &out);
	CHECK_STR(out.ptr, "");
	keys(s, NULL, NULL, &out);
	CHECK_STR(out.ptr, "a:z msg:g1/1 msg:g1/10 msg:g1/2 msg:g10/1 msg:g2/1 state:g1");
	keys(s, NULL, "g1", &out);
	CHECK_STR(out.ptr, "msg:g1/1 msg:g1/10 msg:g1/2 msg:g10/1 state:g1");

	/* Deleting what was just returned, and adding ahead, while walking. */
	store_iter_init(&it, s, "msg", "g1", 2);
	buf_reset(&out);
	while (store_iter_next(&it, &rec, &v) == 1) {
		buf_add(&out, rec.key, rec.key_len);
		buf_addch(&out, ' ');
		CHECK(v.len == 1 && v.ptr[0] == 'x');
		CHECK(store_delete(s, "msg", rec.key, rec.key_len) == 0);
		if (n++ == 0)
			put(s, "msg", "g1/3", "x", 0);
	}
	store_iter_release(&it);
	CHECK_STR(out.ptr, "g1/1 g1/10 g1/2 g1/3 g10/1 ");
	keys(s, "msg", NULL, &out);
	CHECK_STR(out.ptr, "g2/1");
	buf_release(&out);
	buf_release(&v);
	store_close(s);
}

static void test_many(void)
{
	const char *dir = new_dir();
	struct store *s = open_ok(dir);
	struct store_iter it;
	struct store_rec rec;
	char key[32], prev[32] = "";
	int n = 0, ordered = 1, failed = 0;

	/* Keys in a scrambled order come back sorted. */
	for (int i = 0; i < 5000; i++) {
		snprintf(key, sizeof(key), "k%05d", (i * 7919) % 5000);
		failed += store_put(s, "msg", key, 6, key, 6, 0) < 0;
	}
	CHECK(failed == 0);
	CHECK(store_commit(s) == 0);
	store_close(s);
	s = open_ok(dir);
	store_iter_init(&it, s, "msg", NULL, 0);
	while (store_iter_next(&it, &rec, NULL) == 1) {
		ordered &= strcmp(prev, rec.key) < 0;
		snprintf(prev, sizeof(prev), "%s", rec.key);
		n++;
	}
	store_iter_release(&it);
	CHECK(n == 5000);
	CHECK(ordered);
	CHECK(holds(s, "msg", "k04999", "k04999") == 1);
	store_close(s);
}

static void test_deadlines(void)
{
	const char *dir = new_dir();
	struct store *s = open_ok(dir);
	struct store_rec rec;

	CHECK(store_next_deadline(s) == 0);
	CHECK(store_earliest(s, &rec) == 0);
	put(s, "state", "c", "", 300);
	put(s, "state", "b", "", 100);
	put(s, "state", "a", "", 200);
	put(s, "state", "none", "", 0);
	put(s, "msg", "tie", "", 100);
	CHECK(store_next_deadline(s) == 100);
	/* Ties go in (kind, key) order: msg before state. */
	CHECK(store_earliest(s, &rec) == 1 && !strcmp(rec.kind, "msg"));
	CHECK(store_delete(s, "msg", "tie", 3) == 0);
	CHECK(store_earliest(s, &rec) == 1 && !strcmp(rec.key, "b") &&
	      rec.deadline == 100);
	put(s, "state", "b", "", 400);		/* later */
	CHECK(store_next_deadline(s) == 200);
	put(s, "state", "c", "", 0);		/* none any more */
	CHECK(store_commit(s) == 0);
	store_close(s);

	/* Timers survive a restart as absolute deadlines. */
	s = open_ok(dir);
	CHECK(store_earliest(s, &rec) == 1 && !strcmp(rec.key, "a") &&
	      rec.deadline == 200);
	CHECK(store_delete(s, "state", "a", 1) == 0);
	CHECK(store_earliest(s, &rec) == 1 && !strcmp(rec.key, "b") &&
	      rec.deadline == 400);
	CHECK(store_delete(s, "state", "b", 1) == 0);
	CHECK(store_next_deadline(s) == 0);
	store_close(s);
}

/* Many timers: the heap hands them out in order. */
static void test_deadline_order(void)
{
	const char *dir = new_dir();
	struct store *s = open_ok(dir);
	struct store_rec rec;
	char key[16];
	int64_t last = 0;
	int n = 0, ordered = 1, failed = 0;

	for (int i = 0; i < 1000; i++) {
		snprintf(key, sizeof(key), "t%d", i);
		failed += store_put(s, "state", key, strlen(key), "", 0,
				    1 + (i * 7919) % 1000) < 0;
	}
	CHECK(failed == 0);
	while (store_earliest(s, &rec) == 1) {
		ordered &= rec.deadline >= last;
		last = rec.deadline;
		n += store_delete(s, "state", rec.key, rec.key_len) == 0;
	}
	CHECK(ordered && n == 1000);
	store_close(s);
}

static void test_reopen(void)
{
	const char *dir = new_dir();
	struct store *s = open_ok(dir);
	struct store_stats st;

	put(s, "msg", "kept", "1", 0);
	put(s, "msg", "gone", "2", 0);
	CHECK(store_commit(s) == 0);
	CHECK(store_delete(s, "msg", "gone", 4) == 0);
	put(s, "msg", "new", "3", 0);
	put(s, "msg", "kept", "changed", 0);
	CHECK(store_commit(s) == 0);
	store_get_stats(s, &st);
	/* Not committed: dropped at close, as by a crash. Reading it back
	 * makes the store write it out first. */
	put(s, "msg", "uncommitted", "4", 0);
	CHECK(store_delete(s, "msg", "new", 3) == 0);
	CHECK(holds(s, "msg", "uncommitted", "4") == 1);
	CHECK(file_size(dir, LOG1) > (long long)st.log_bytes);
	store_close(s);

	s = open_ok(dir);
	CHECK(holds(s, "msg", "kept", "changed") == 1);
	CHECK(holds(s, "msg", "gone", "") == 0);
	CHECK(holds(s, "msg", "new", "3") == 1);
	CHECK(holds(s, "msg", "uncommitted", "") == 0);
	store_get_stats(s, &st);
	CHECK(st.records == 2);
	CHECK(st.discarded > 0);
	CHECK(st.log_bytes == (uint64_t)file_size(dir, LOG1));
	/* The next batch goes where the dropped one was. */
	put(s, "msg", "after", "5", 0);
	CHECK(store_commit(s) == 0);
	store_close(s);
	s = open_ok(dir);
	CHECK(holds(s, "msg", "after", "5") == 1);
	CHECK(holds(s, "msg", "new", "3") == 1);
	store_get_stats(s, &st);
	CHECK(st.discarded == 0);
	store_close(s);
}

static void test_busy(void)
{
	const char *dir = new_dir();
	struct store *s = open_ok(dir), *t;
	struct store_err err;

	t = store_open(dir, &err);
	CHECK(t == NULL);
	CHECK(err.status == STORE_BUSY);
	CHECK(err.exit == EX_TEMPFAIL);
	CHECK(strstr(err.msg, "state directory busy") != NULL);
	CHECK(strstr(err.msg, "/lock'") != NULL);
	store_close(s);
	t = open_ok(dir);	/* the lock went with the close */
	store_close(t);
}

/* A reader beside the holder: the committed state, no lock, no changes. */
static void test_snapshot(void)
{
	const char *dir = new_dir();
	struct store *s = open_ok(dir), *snap;
	struct store_err err;
	struct buf k = BUF_INIT;

	put(s, "state", "a", "1", 0);
	put(s, "state", "b", "2", 7);
	CHECK(store_commit(s) == 0);
	put(s, "state", "c", "uncommitted", 0);
	CHECK(store_delete(s, "state", "a", 1) == 0);
	snap = store_open_snapshot(dir, &err);	/* beside the lock holder */
	CHECK(snap != NULL);
	if (snap) {
		keys(snap, "state", NULL, &k);
		CHECK(!strcmp(k.ptr, "a b"));
		CHECK(holds(snap, "state", "b", "2") == 1);
		CHECK(store_next_deadline(snap) == 7);
		errno = 0;
		CHECK(store_put(snap, "state", "x", 1, "v", 1, 0) < 0 && errno == EROFS);
		CHECK(store_delete(snap, "state", "a", 1) < 0 && errno == EROFS);
		CHECK(store_commit(snap) < 0 && errno == EROFS);
		/* The holder compacts: the snapshot's open log still reads. */
		CHECK(store_compact(s) == 0);
		CHECK(holds(snap, "state", "b", "2") == 1);
		store_close(snap);
	}
	snap = store_open_snapshot(dir, &err);	/* the compacted log */
	CHECK(snap != NULL);
	if (snap) {
		keys(snap, "state", NULL, &k);
		CHECK(!strcmp(k.ptr, "b c"));
		store_close(snap);
	}
	store_close(s);
	s = open_ok(dir);	/* the snapshot left the store as it was */
	keys(s, "state", NULL, &k);
	CHECK(!strcmp(k.ptr, "b c"));
	store_close(s);
	snap = store_open_snapshot(top, &err);	/* no store there */
	CHECK(snap == NULL && err.exit == EX_NOINPUT);
	CHECK(strstr(err.msg, "not a message store") != NULL);
	snap = store_open_snapshot(new_dir(), &err);
	CHECK(snap == NULL && err.exit == EX_NOINPUT);
	buf_release(&k);
}

static void test_version(void)
{
	const char *dir = new_dir();
	struct store *s = open_ok(dir);
	struct store_err err;
	unsigned char h[32];
	char p[4300];
	int fd;

	put(s, "msg", "a", "1", 0);
	CHECK(store_commit(s) == 0);
	store_close(s);

	write_file(dir, "version", "msg-store 2\n", 12, 0);
	CHECK(store_open(dir, &err) == NULL);
	CHECK(err.status == STORE_NEWER && err.exit == EX_DATAERR);
	CHECK(strstr(err.msg, "store format 2 was written by a newer msgtools") != NULL);
	CHECK(file_size(dir, LOG1) > 32);	/* nothing was touched */

	write_file(dir, "version", "something else\n", 15, 0);
	CHECK(store_open(dir, &err) == NULL);
	CHECK(err.status == STORE_CORRUPT);
	CHECK(strstr(err.msg, "not a message store version file") != NULL);

	/* A newer log header is refused too, even without the version file. */
	path_in(p, sizeof(p), dir, "version");
	CHECK(unlink(p) == 0);
	path_in(p, sizeof(p), dir, LOG1);
	fd = open(p, O_RDWR);
	CHECK(fd >= 0 && pread(fd, h, 32, 0) == 32);
	h[8] = 9;
	CHECK(pwrite(fd, h, 32, 0) == 32);
	close(fd);
	CHECK(store_open(dir, &err) == NULL);
	CHECK(err.status == STORE_CORRUPT);	/* its CRC no longer matches */
	h[8] = 1;
	fd = open(p, O_RDWR);
	CHECK(fd >= 0 && pwrite(fd, h, 32, 0) == 32);
	close(fd);
	s = open_ok(dir);	/* the version file comes back */
	CHECK(s && holds(s, "msg", "a", "1") == 1);
	store_close(s);
	CHECK(file_size(dir, "version") == 12);
}

static void test_not_a_store(void)
{
	const char *dir = new_dir();
	struct store_err err;
	char path[4300];

	CHECK(mkdir(dir, 0755) == 0);
	write_file(dir, "notes.txt", "x", 1, 0);
	write_file(dir, "tmp.version", "x", 1, 0);
	CHECK(store_open(dir, &err) == NULL);
	CHECK(err.status == STORE_CORRUPT);
	CHECK(strstr(err.msg, "not a message store, and not empty") != NULL);
	CHECK(file_size(dir, "notes.txt") == 1);
	CHECK(file_size(dir, "tmp.version") == 1);

	write_file(top, "plain-file", "x", 1, 0);
	path_in(path, sizeof(path), top, "plain-file");
	CHECK(store_open(path, &err) == NULL);
	CHECK(err.status == STORE_SYSERR && err.errnum == ENOTDIR);
	CHECK(err.exit == EX_CANTCREAT);
	path_in(path, sizeof(path), top, "no/such/dir");
	CHECK(store_open(path, &err) == NULL);
	CHECK(err.errnum == ENOENT && err.exit == EX_CANTCREAT);
	CHECK(strstr(err.msg, "cannot create '") && strstr(err.msg, "': No such file or directory"));
}

/*
 * A new store in dir with two batches: a=one, b=two (deadline 77); then
 * c=three, a deleted, b=TWO. The second batch is [*first, *last) in the
 * log.
 */
static void two_batches(const char *dir, long long *first, long long *last)
{
	struct store *s = open_ok(dir);
	struct store_stats st;

	put(s, "msg", "a", "one", 0);
	put(s, "msg", "b", "two", 77);
	CHECK(store_commit(s) == 0);
	store_get_stats(s, &st);
	*first = (long long)st.log_bytes;
	put(s, "msg", "c", "three", 0);
	CHECK(store_delete(s, "msg", "a", 1) == 0);
	put(s, "msg", "b", "TWO", 0);
	CHECK(store_commit(s) == 0);
	store_get_stats(s, &st);
	*last = (long long)st.log_bytes;
	store_close(s);
}

/* Every cut inside the last batch leaves the batches before it whole. */
static void test_truncated(void)
{
	const char *dir = new_dir();
	struct store *s;
	long long first, last;
	int bad = 0;

	two_batches(dir, &first, &last);

	for (long long cut = first; cut < last; cut++) {
		const char *copy = new_dir();
		struct store_err err;
		char p[4300];
		path_in(p, sizeof(p), copy, LOG1);
		if (clone_store(dir, copy) < 0 || truncate(p, cut) < 0 ||
		    !(s = store_open(copy, &err))) {
			bad++;
			continue;
		}
		bad += holds(s, "msg", "a", "one") != 1 ||
		       holds(s, "msg", "b", "two") != 1 ||
		       holds(s, "msg", "c", "") != 0;
		store_close(s);
		bad += file_size(copy, LOG1) != first;
	}
	CHECK(first < last - 100);
	CHECK(bad == 0);
	s = open_ok(dir);
	CHECK(holds(s, "msg", "a", "") == 0);
	CHECK(holds(s, "msg", "b", "TWO") == 1);
	CHECK(holds(s, "msg", "c", "three") == 1);
	store_close(s);
}

static void test_garbage(void)
{
	const char *dir = new_dir();
	struct store *s = open_ok(dir);
	struct store_stats st;
	char junk[1000];
	unsigned char fake[64] = { 0 };
	long long size;

	put(s, "msg", "a", "one", 0);
	CHECK(store_commit(s) == 0);
	store_close(s);
	size = file_size(dir, LOG1);

	/* Random bytes, zeros, and a well-formed head with a wrong CRC. */
	for (size_t i = 0; i < sizeof(junk); i++)
		junk[i] = (char)(i * 131 + 7);
	write_file(dir, LOG1, junk, sizeof(junk), 1);
	s = open_ok(dir);
	store_get_stats(s, &st);
	CHECK(st.discarded == sizeof(junk));
	CHECK(holds(s, "msg", "a", "one") == 1);
	store_close(s);
	CHECK(file_size(dir, LOG1) == size);

	memset(junk, 0, sizeof(junk));
	write_file(dir, LOG1, junk, sizeof(junk), 1);
	fake[4] = 'P';
	fake[5] = 3;
	fake[6] = 1;
	fake[8] = 2;
	memcpy(fake + 24, "msgxyz", 6);
	write_file(dir, LOG1, fake, 30, 1);
	s = open_ok(dir);
	CHECK(holds(s, "msg", "a", "one") == 1);
	CHECK(holds(s, "msg", "x", "") == 0);
	store_get_stats(s, &st);
	CHECK(st.discarded == sizeof(junk) + 30);
	put(s, "msg", "b", "two", 0);
	CHECK(store_commit(s) == 0);
	store_close(s);
	s = open_ok(dir);
	CHECK(holds(s, "msg", "b", "two") == 1);
	store_close(s);
}

static void test_strays(void)
{
	const char *dir = new_dir();
	struct store *s = open_ok(dir);
	struct store_stats st;

	put(s, "msg", "a", "one", 0);
	CHECK(store_compact(s) == 0);	/* now log.2 */
	store_get_stats(s, &st);
	CHECK(st.compactions == 1);
	store_close(s);
	CHECK(file_size(dir, LOG1) == -1);
	CHECK(file_size(dir, "log.0000000000000002") > 32);

	/* What a crash in a compaction or creation leaves behind. */
	write_file(dir, "tmp.log.0000000000000003", "half", 4, 0);
	write_file(dir, "tmp.version", "msg-", 4, 0);
	write_file(dir, LOG1, "an old log", 10, 0);
	write_file(dir, "notes", "kept", 4, 0);
	s = open_ok(dir);
	CHECK(holds(s, "msg", "a", "one") == 1);
	store_close(s);
	CHECK(file_size(dir, "tmp.log.0000000000000003") == -1);
	CHECK(file_size(dir, "tmp.version") == -1);
	CHECK(file_size(dir, LOG1) == -1);
	CHECK(file_size(dir, "notes") == 4);
}

/* A compaction that finished its rename but not the removal of the old
 * log: the newer one is current. */
static void test_two_logs(void)
{
	const char *dir = new_dir();
	struct store *s = open_ok(dir);
	char a[4300], b[4300];

	put(s, "msg", "a", "old", 0);
	CHECK(store_commit(s) == 0);
	store_close(s);
	path_in(a, sizeof(a), dir, LOG1);
	path_in(b, sizeof(b), top, "saved-log");
	CHECK(link(a, b) == 0);
	s = open_ok(dir);
	put(s, "msg", "a", "new", 0);
	CHECK(store_compact(s) == 0);
	store_close(s);
	CHECK(rename(b, a) == 0);
	s = open_ok(dir);
	CHECK(holds(s, "msg", "a", "new") == 1);
	store_close(s);
	CHECK(file_size(dir, LOG1) == -1);
}

static void test_compaction(void)
{
	const char *dir = new_dir();
	struct store *s = open_ok(dir);
	struct store_stats st;
	char value[2048], key[16];
	int failed = 0;

	memset(value, 'v', sizeof(value));
	/* One live record, rewritten until the dead bytes call for a
	 * compaction by themselves. */
	for (int i = 0; i < 3000; i++) {
		value[0] = (char)('a' + i % 26);
		failed += store_put(s, "state", "one", 3, value, sizeof(value), 0) < 0;
		if (i % 100 == 99)
			failed += store_commit(s) < 0;
	}
	CHECK(failed == 0);
	snprintf(key, sizeof(key), "timer");
	put(s, "state", key, "t", 42);
	CHECK(store_commit(s) == 0);
	store_get_stats(s, &st);
	CHECK(st.compactions >= 1);
	CHECK(st.log_bytes < 5u << 20);
	CHECK(st.records == 2);
	store_close(s);
	s = open_ok(dir);
	value[0] = (char)('a' + 2999 % 26);
	CHECK(store_get(s, "state", "one", 3, NULL, NULL) == 1);
	{
		struct buf v = BUF_INIT;
		CHECK(store_get(s, "state", "one", 3, &v, NULL) == 1 &&
		      v.len == sizeof(value) && !memcmp(v.ptr, value, v.len));
		buf_release(&v);
	}
	CHECK(store_next_deadline(s) == 42);
	store_close(s);
}

static void test_damaged_value(void)
{
	const char *dir = new_dir();
	struct store *s = open_ok(dir);
	struct buf v = BUF_INIT;
	char p[4300];
	int fd;

	put(s, "msg", "a", "a value to damage", 0);
	CHECK(store_commit(s) == 0);
	path_in(p, sizeof(p), dir, LOG1);
	fd = open(p, O_RDWR);
	CHECK(fd >= 0 && pwrite(fd, "X", 1, 32 + 24 + 3 + 1 + 5) == 1);
	close(fd);
	errno = 0;
	CHECK(store_get(s, "msg", "a", 1, &v, NULL) == -1 && errno == EIO);
	CHECK(strstr(store_last_error(s), "checksum mismatch") != NULL);
	/* A compaction must not copy it on as if it were sound. */
	CHECK(store_compact(s) == -1 && errno == EIO);
	CHECK(file_size(dir, "tmp.log.0000000000000002") == -1);
	store_close(s);
	buf_release(&v);
}

/* The fields of a record as the log lays them out: offset and length
 * from the record's start; the last three lengths are the record's. */
struct field {
	const char *name;
	size_t off, len;
};

enum { F_KIND = -1, F_KEY = -2, F_VALUE = -3 };

/* Flip bit of byte at in a copy of dir's store; open it and check that
 * the batch in [first, last) is gone whole and the one before it kept.
 * 0 if so. */
static int flip_and_recover(const char *dir, long long at, int bit,
			    long long first, long long last)
{
	const char *copy = new_dir();
	struct store_err err;
	struct store_stats st;
	struct store *s;
	unsigned char byte;
	char p[4300];
	int fd, bad = 0;

	path_in(p, sizeof(p), copy, LOG1);
	if (clone_store(dir, copy) < 0 || (fd = open(p, O_RDWR)) < 0)
		return 1;
	bad |= pread(fd, &byte, 1, at) != 1;
	byte ^= (unsigned char)(1u << bit);
	bad |= pwrite(fd, &byte, 1, at) != 1;
	close(fd);
	if (bad || !(s = store_open(copy, &err)))
		return 1;
	store_get_stats(s, &st);
	bad |= st.discarded != (uint64_t)(last - first);
	bad |= holds(s, "msg", "a", "one") != 1;
	bad |= holds(s, "msg", "b", "two") != 1;
	bad |= holds(s, "msg", "c", "") != 0;
	bad |= st.records != 2;
	store_close(s);
	bad |= file_size(copy, LOG1) != first;
	return bad;
}

/*
 * One bit flipped anywhere in the last batch, in any field of any of
 * its records (the CRC itself, type, lengths, deadline, kind, key,
 * value) or of its commit record: recovery drops that batch whole, says
 * how many bytes it cut, and never returns the damaged record, whether
 * its CRC or its shape gives it away.
 */
static void test_flipped_bits(void)
{
	static const struct field fields[] = {
		{ "crc", 0, 4 }, { "type", 4, 1 }, { "kind length", 5, 1 },
		{ "key length", 6, 2 }, { "value length", 8, 8 },
		{ "deadline", 16, 8 }, { "kind", 24, (size_t)F_KIND },
		{ "key", 24, (size_t)F_KEY }, { "value", 24, (size_t)F_VALUE },
	};
	/* The second batch of two_batches: put c, delete a, put b, commit. */
	static const struct { const char *what, *kind, *key, *value; } recs[] = {
		{ "put", "msg", "c", "three" }, { "delete", "msg", "a", "" },
		{ "put", "msg", "b", "TWO" }, { "commit", "", "", "0123456789abcdef" },
	};
	const char *dir = new_dir();
	long long first, last, rec;

	two_batches(dir, &first, &last);

	setenv("MSG_STORE_NOSYNC", "1", 1);	/* a thousand opens */
	rec = first;
	for (size_t r = 0; r < sizeof(recs) / sizeof(recs[0]); r++) {
		size_t kind = strlen(recs[r].kind), key = strlen(recs[r].key);
		size_t value = strlen(recs[r].value);
		for (size_t f = 0; f < sizeof(fields) / sizeof(fields[0]); f++) {
			size_t off = fields[f].off, len = fields[f].len;
			int bad = 0, bits = 0;
			if (len == (size_t)F_KIND) {
				len = kind;
			} else if (len == (size_t)F_KEY) {
				off += kind;
				len = key;
			} else if (len == (size_t)F_VALUE) {
				off += kind + key;
				len = value;
			}
			if (!len)
				continue;	/* a delete's value, a commit's names */
			for (size_t i = 0; i < len * 8; i++, bits++)
				bad += flip_and_recover(dir, rec + (long long)(off + i / 8),
							(int)(i % 8), first, last) != 0;
			CHECK(bad == 0);
			if (bad)
				printf("#   %s record, %s: %d of %d flipped bits not"
				       " recovered from\n", recs[r].what, fields[f].name,
				       bad, bits);
		}
		rec += 24 + (long long)(kind + key + value);
	}
	CHECK(rec == last);
	unsetenv("MSG_STORE_NOSYNC");
}

static void test_min_free(void)
{
	const char *dir = new_dir();
	struct store *s = open_ok(dir);
	struct store_err err;

	put(s, "msg", "a", "one", 0);
	CHECK(store_commit(s) == 0);
	store_close(s);

	setenv("MSG_STORE_MIN_FREE", "1000000T", 1);
	s = open_ok(dir);
	errno = 0;
	CHECK(store_put(s, "msg", "b", 1, "two", 3, 0) == -1 && errno == ENOSPC);
	CHECK(store_exit_code(errno) == EX_TEMPFAIL);
	CHECK(strstr(store_last_error(s), "bytes would be left free: No space left on device") != NULL);
	/* Deletes still go through, so a full store can drain. */
	CHECK(store_delete(s, "msg", "a", 1) == 0);
	CHECK(store_commit(s) == 0);
	store_close(s);

	setenv("MSG_STORE_MIN_FREE", "lots", 1);
	CHECK(store_open(dir, &err) == NULL);
	CHECK(err.exit == EX_USAGE && strstr(err.msg, "MSG_STORE_MIN_FREE 'lots'"));
	setenv("MSG_STORE_MIN_FREE", "0", 1);
	s = open_ok(dir);
	CHECK(holds(s, "msg", "a", "") == 0);
	put(s, "msg", "b", "two", 0);
	CHECK(store_commit(s) == 0);
	store_close(s);
	unsetenv("MSG_STORE_MIN_FREE");
	CHECK(store_exit_code(EIO) == EX_IOERR);
}

int main(void)
{
	const char *tmp = getenv("TMPDIR");

	snprintf(top, sizeof(top), "%s/test-store.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(top)) {
		perror("mkdtemp");
		return 1;
	}
	unsetenv("MSG_STORE_MIN_FREE");
	unsetenv("MSG_STORE_NOSYNC");
	test_basics();
	test_values();
	test_bad_names();
	test_iterate();
	test_many();
	test_deadlines();
	test_deadline_order();
	test_reopen();
	test_busy();
	test_snapshot();
	test_version();
	test_not_a_store();
	test_truncated();
	test_garbage();
	test_strays();
	test_two_logs();
	test_compaction();
	test_damaged_value();
	test_flipped_bits();
	test_min_free();
	nftw(top, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	while (n_dirs)
		free(dirs[--n_dirs]);
	free(dirs);
	return unit_done();
}
