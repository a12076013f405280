/*
 * store-writer: drives lib/store for the crash, fault and benchmark runs.
 *
 * Writing (the default), it puts messages "m0000000000", "m0000000001",
 * ... in batches, each batch with two companions that must change with
 * it or not at all: the "state" record "next" (the next message number
 * and the batch number, with the next message number as its deadline)
 * and one "scratch" record named by the batch number, whose predecessor
 * the batch deletes. Only after store_commit() returns does it print the
 * batch's keys, one a line, and flush: those are acknowledged. It goes on
 * from where the store says, so it can be killed and started again.
 *
 * Checking (--check ACKS), it opens the store as a restarted tool would
 * and verifies: every acknowledged key is there; the messages are
 * exactly m0 .. m(next-1), each with the value it was written with (no
 * partial record); the scratch record and the deadline agree with
 * "next"; and a second open finds nothing left to repair.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>
#include <time.h>

#include "buf.h"
#include "diag.h"
#include "store.h"

#define KEY_LEN 11		/* "m" and ten digits */

struct opts {
	unsigned batch;		/* messages a batch, at most */
	uint64_t count;		/* stop when the store holds this many; 0: never */
	unsigned compact;	/* store_compact every this many batches; 0: never */
	unsigned value;		/* value size; 0: varied, 20 to 400 bytes */
	uint64_t seed;		/* random batch sizes from 1 to batch; 0: fixed */
	unsigned delay;		/* microseconds between puts, as if working */
	int quiet;		/* no acknowledgements on stdout */
	int stats;
	const char *log;	/* where to note what recovery found */
	const char *check;	/* the acknowledgements to check against */
};

static void usage(void)
{
	fprintf(stderr, "usage: store-writer [-q] [--stats] [-b batch] [-n count]"
		" [-c compact-every] [-v value-size] [-r seed] [-d usec] [-l log] dir\n"
		"       store-writer --check acks dir\n");
	exit(EX_USAGE);
}

static void key_of(char key[KEY_LEN + 1], uint64_t n)
{
	snprintf(key, KEY_LEN + 1, "m%010" PRIu64, n % UINT64_C(10000000000));
}

/* The value of message n: a small frame whose body is a pattern of n. */
static void value_of(struct buf *v, uint64_t n, unsigned size)
{
	size_t body = size ? size : 20 + (n * 37) % 380;
	char key[KEY_LEN + 1];

	key_of(key, n);
	buf_reset(v);
	buf_addf(v, "Message-Id: %s\nContent-Length: %zu\n\n", key, body);
	for (size_t i = 0; i < body; i++)
		buf_addch(v, (char)('a' + (n + i) % 26));
	buf_addch(v, '\n');
}

static struct store *open_or_die(const char *dir)
{
	struct store_err err;
	struct store *s = store_open(dir, &err);

	if (!s)
		die(err.exit, "%s", err.msg);
	return s;
}

static _Noreturn void store_die(struct store *s)
{
	die(store_exit_code(errno), "%s", store_last_error(s));
}

/* Where the last committed batch left off: next message and batch. */
static void progress(struct store *s, uint64_t *next, uint64_t *batch)
{
	struct buf v = BUF_INIT;
	int r = store_get(s, "state", "next", 4, &v, NULL);

	*next = *batch = 0;
	if (r < 0)
		store_die(s);
	if (r == 1 && sscanf(v.ptr, "%" SCNu64 " %" SCNu64, next, batch) != 2)
		die(EX_DATAERR, "state 'next' holds '%s'", v.ptr);
	buf_release(&v);
}

static unsigned batch_size(const struct opts *o, uint64_t *rng)
{
	if (!o->seed)
		return o->batch;
	*rng ^= *rng << 13;
	*rng ^= *rng >> 7;
	*rng ^= *rng << 17;
	return 1 + (unsigned)(*rng % o->batch);
}

/* Busy for usec microseconds: usleep(3) oversleeps by far more. */
static void spin(unsigned usec)
{
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do
		clock_gettime(CLOCK_MONOTONIC, &t);
	while ((t.tv_sec - t0.tv_sec) * 1000000 + (t.tv_nsec - t0.tv_nsec) / 1000 <
	       (long)usec);
}

/* Queue one batch of messages first .. first + n - 1, as batch b. */
static void queue_batch(struct store *s, const struct opts *o, uint64_t first,
			unsigned n, uint64_t b, struct buf *v)
{
	char key[KEY_LEN + 1], text[64];

	for (unsigned i = 0; i < n; i++) {
		key_of(key, first + i);
		value_of(v, first + i, o->value);
		if (store_put(s, "msg", key, KEY_LEN, v->ptr, v->len, 0) < 0)
			store_die(s);
		/* A kill then lands between puts too, where part of the
		 * batch may already be in the log. */
		if (o->delay)
			spin(o->delay);
	}
	snprintf(text, sizeof(text), "%" PRIu64 " %" PRIu64, first + n, b);
	if (store_put(s, "state", "next", 4, text, strlen(text),
		      (int64_t)(first + n)) < 0)
		store_die(s);
	snprintf(key, sizeof(key), "%" PRIu64, b);
	if (store_put(s, "scratch", key, strlen(key), text, strlen(text), 0) < 0)
		store_die(s);
	snprintf(key, sizeof(key), "%" PRIu64, b - 1);
	if (store_delete(s, "scratch", key, strlen(key)) < 0)
		store_die(s);
}

static void acknowledge(uint64_t first, unsigned n)
{
	char key[KEY_LEN + 1];

	for (unsigned i = 0; i < n; i++) {
		key_of(key, first + i);
		printf("%s\n", key);
	}
	if (fflush(stdout) == EOF || ferror(stdout))
		die_errno(EX_IOERR, "cannot write 'stdout'");
}

static void print_stats(struct store *s)
{
	struct store_stats st;

	store_get_stats(s, &st);
	fprintf(stderr, "records %" PRIu64 " log_bytes %" PRIu64 " commits %"
		PRIu64 " syncs %" PRIu64 " compactions %" PRIu64 "\n",
		st.records, st.log_bytes, st.commits, st.syncs, st.compactions);
}

/* One line for each open that had something to repair, so a crash run
 * can show that its kills hit the points that need repair. */
static void note_recovery(struct store *s, const char *path)
{
	struct store_stats st;
	FILE *f;

	store_get_stats(s, &st);
	if (!path || (!st.discarded && !st.removed))
		return;
	f = fopen(path, "a");
	if (!f)
		die_errno(EX_CANTCREAT, "cannot open '%s'", path);
	fprintf(f, "discarded %" PRIu64 " removed %" PRIu64 "\n", st.discarded,
		st.removed);
	if (fclose(f) == EOF)
		die_errno(EX_IOERR, "cannot write '%s'", path);
}

static int write_loop(const char *dir, const struct opts *o)
{
	struct store *s = open_or_die(dir);
	struct buf v = BUF_INIT;
	uint64_t next, b, rng;

	note_recovery(s, o->log);
	progress(s, &next, &b);
	/* Each restart draws new sizes, the same ones for the same store. */
	rng = o->seed ^ (b + 1) * UINT64_C(0x9e3779b97f4a7c15);
	while (!o->count || next < o->count) {
		unsigned n = batch_size(o, &rng);
		if (o->count && n > o->count - next)
			n = (unsigned)(o->count - next);
		queue_batch(s, o, next, n, ++b, &v);
		if (store_commit(s) < 0)
			store_die(s);
		/* Only now may anything derived from the batch go out. */
		if (!o->quiet)
			acknowledge(next, n);
		next += n;
		if (o->compact && b % o->compact == 0 && store_compact(s) < 0)
			store_die(s);
	}
	if (o->stats)
		print_stats(s);
	buf_release(&v);
	store_close(s);
	return 0;
}

/* ---- checking ---------------------------------------------------------------- */

static int problems;

static void problem(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void problem(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", progname);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	problems++;
}

/* The messages must be m0 .. m(next-1), each with its own value. */
static void check_messages(struct store *s, uint64_t next, unsigned size)
{
	struct store_iter it;
	struct store_rec rec;
	struct buf v = BUF_INIT, want = BUF_INIT;
	char key[KEY_LEN + 1];
	uint64_t n = 0;
	int r;

	store_iter_init(&it, s, "msg", NULL, 0);
	while ((r = store_iter_next(&it, &rec, &v)) == 1) {
		key_of(key, n);
		if (rec.key_len != KEY_LEN || memcmp(rec.key, key, KEY_LEN)) {
			problem("message %" PRIu64 " is '%s', want '%s'", n, rec.key, key);
			break;
		}
		value_of(&want, n, size);
		if (v.len != want.len || memcmp(v.ptr, want.ptr, v.len))
			problem("message '%s' holds a value of %zu bytes that is not its own",
				key, v.len);
		n++;
	}
	if (r < 0)
		problem("%s", store_last_error(s));
	if (n != next)
		problem("%" PRIu64 " messages, but state says %" PRIu64, n, next);
	store_iter_release(&it);
	buf_release(&v);
	buf_release(&want);
}

/* Exactly one scratch record, the last batch's, and the deadline. */
static void check_companions(struct store *s, uint64_t next, uint64_t b)
{
	struct store_iter it;
	struct store_rec rec;
	char key[32];
	int n = 0;

	snprintf(key, sizeof(key), "%" PRIu64, b);
	store_iter_init(&it, s, "scratch", NULL, 0);
	while (store_iter_next(&it, &rec, NULL) == 1)
		if (n++ || strcmp(rec.key, key))
			problem("scratch record '%s' outlived its batch (last batch %s)",
				rec.key, key);
	store_iter_release(&it);
	if (n != (b > 0))
		problem("%d scratch records after batch %" PRIu64, n, b);
	if (store_next_deadline(s) != (int64_t)next)
		problem("next deadline %" PRId64 ", want %" PRIu64,
			store_next_deadline(s), next);
}

/* Every acknowledged key must be there. */
static uint64_t check_acks(struct store *s, const char *path)
{
	FILE *f = fopen(path, "r");
	char line[64];
	uint64_t n = 0;

	if (!f)
		die_errno(EX_NOINPUT, "cannot open '%s'", path);
	while (fgets(line, sizeof(line), f)) {
		size_t len = strcspn(line, "\n");
		if (len != KEY_LEN || line[len] != '\n') {
			problem("'%s': bad line '%.*s'", path, (int)len, line);
			continue;
		}
		n++;
		if (store_get(s, "msg", line, KEY_LEN, NULL, NULL) != 1)
			problem("acknowledged message '%.*s' is missing", KEY_LEN, line);
	}
	fclose(f);
	return n;
}

static int check(const char *dir, const char *acks, unsigned size)
{
	struct store *s = open_or_die(dir);
	struct store_stats st;
	uint64_t next, b, acked;

	store_get_stats(s, &st);
	progress(s, &next, &b);
	check_messages(s, next, size);
	check_companions(s, next, b);
	acked = check_acks(s, acks);
	store_close(s);
	/* The first open repaired whatever there was to repair. */
	s = open_or_die(dir);
	store_get_stats(s, &st);
	if (st.discarded)
		problem("a second open discarded %" PRIu64 " more bytes", st.discarded);
	store_close(s);
	if (problems)
		return 1;
	printf("ok: %" PRIu64 " messages in %" PRIu64 " batches, %" PRIu64
	       " acknowledged\n", next, b, acked);
	return 0;
}

static uint64_t number(const char *s)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s || *end)
		usage();
	return v;
}

int main(int argc, char **argv)
{
	static const struct option longs[] = {
		{ "check", required_argument, NULL, 'C' },
		{ "stats", no_argument, NULL, 'S' },
		{ NULL, 0, NULL, 0 },
	};
	struct opts o = { .batch = 64 };
	int c;

	diag_init(argv[0]);
	while ((c = getopt_long(argc, argv, "b:c:d:l:n:qr:v:", longs, NULL)) != -1) {
		switch (c) {
		case 'b': o.batch = (unsigned)number(optarg); break;
		case 'c': o.compact = (unsigned)number(optarg); break;
		case 'd': o.delay = (unsigned)number(optarg); break;
		case 'l': o.log = optarg; break;
		case 'n': o.count = number(optarg); break;
		case 'q': o.quiet = 1; break;
		case 'r': o.seed = number(optarg); break;
		case 'v': o.value = (unsigned)number(optarg); break;
		case 'C': o.check = optarg; break;
		case 'S': o.stats = 1; break;
		default: usage();
		}
	}
	if (optind != argc - 1 || !o.batch || o.batch > 1000000)
		usage();
	if (o.check)
		return check(argv[optind], o.check, o.value);
	return write_loop(argv[optind], &o);
}
