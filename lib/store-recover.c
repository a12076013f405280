/*
 * store-recover: opening a store's directory and recovering its log.
 *
 * Recovery reads the current log from the start and applies a batch only
 * when its commit record is there and whole; it stops at the first record
 * that is short, fails its CRC or does not follow on, and cuts the log
 * there. Temporary files are removed, and logs older than the current
 * one (a compaction that crashed after its rename) too.
 */
#include "store-recover.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sysexits.h>
#include <unistd.h>

#include "crc32c.h"
#include "io.h"

static const char version_prefix[] = "msg-store ";

void store_err_set(struct store_err *err, enum store_status status, int code,
		   const char *fmt, ...)
{
	int e = errno;
	va_list ap;
	size_t n;

	err->status = status;
	err->errnum = status == STORE_SYSERR ? e : 0;
	err->exit = code ? code : store_exit_code(e);
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	n = strlen(err->msg);
	if (status == STORE_SYSERR)
		snprintf(err->msg + n, sizeof(err->msg) - n, ": %s", strerror(e));
	errno = e;
}

int store_exit_code(int errnum)
{
	return errnum == ENOSPC || errnum == EDQUOT ? EX_TEMPFAIL : EX_IOERR;
}

/* Failures to make or lock DIR are "cannot create output" (73). */
static int create_code(int e)
{
	return e == ENOSPC || e == EDQUOT ? EX_TEMPFAIL : EX_CANTCREAT;
}

/* ---- the directory and its lock ---------------------------------------------- */

/* The directory that holds dir, for fsync after dir is made. */
static char *parent_of(const char *dir)
{
	char *p = xstrdup(dir);
	char *slash;

	for (size_t n = strlen(p); n > 1 && p[n - 1] == '/'; n--)
		p[n - 1] = '\0';
	slash = strrchr(p, '/');
	if (!slash) {
		free(p);
		return xstrdup(".");
	}
	slash[slash == p] = '\0';
	return p;
}

static int make_dir(struct store_log *l, struct store_err *err)
{
	int made = mkdir(l->dir, 0700) == 0;

	if (!made && errno != EEXIST) {
		store_err_set(err, STORE_SYSERR, create_code(errno),
			      "cannot create '%s'", l->dir);
		return -1;
	}
	l->dirfd = open(l->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (l->dirfd < 0) {
		store_err_set(err, STORE_SYSERR, create_code(errno),
			      "cannot open '%s'", l->dir);
		return -1;
	}
	if (made) {
		char *parent = parent_of(l->dir);
		int r = log_sync_dir(l, parent);
		if (r < 0)
			store_err_set(err, STORE_SYSERR, 0, "cannot sync '%s'", parent);
		free(parent);
		return r;
	}
	return 0;
}

/* 1 if this open made DIR/lock, 0 if it was there, -1 with err. */
static int lock_dir(struct store_log *l, int *lockfd, struct store_err *err)
{
	/* Whether the lock file is new: a directory that turns out not to
	 * be a store is left as it was found. */
	int made;

	*lockfd = openat(l->dirfd, "lock", O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC,
			 0600);
	made = *lockfd >= 0;
	if (*lockfd < 0 && errno == EEXIST)
		*lockfd = openat(l->dirfd, "lock", O_RDWR | O_CLOEXEC);
	if (*lockfd < 0) {
		store_err_set(err, STORE_SYSERR, create_code(errno),
			      "cannot open '%s/lock'", l->dir);
		return -1;
	}
	if (flock(*lockfd, LOCK_EX | LOCK_NB) == 0)
		return made;
	if (errno == EWOULDBLOCK)
		store_err_set(err, STORE_BUSY, EX_TEMPFAIL,
			      "cannot lock '%s/lock': state directory busy", l->dir);
	else
		store_err_set(err, STORE_SYSERR, 0, "cannot lock '%s/lock'", l->dir);
	return -1;
}

/* ---- what the directory holds ------------------------------------------------ */

/* The format version in DIR/version: 0 if there is no such file. */
static int read_version(struct store_log *l, struct store_err *err, long *version)
{
	char text[64], *end;
	int fd = openat(l->dirfd, "version", O_RDONLY | O_CLOEXEC);
	ssize_t n;

	*version = 0;
	if (fd < 0 && errno == ENOENT)
		return 0;
	n = fd < 0 ? -1 : read_full(fd, text, sizeof(text) - 1);
	if (fd >= 0)
		close(fd);
	if (n < 0) {
		store_err_set(err, STORE_SYSERR, 0, "cannot read '%s/version'", l->dir);
		return -1;
	}
	text[n] = '\0';
	if (strncmp(text, version_prefix, strlen(version_prefix)) == 0) {
		errno = 0;
		*version = strtol(text + strlen(version_prefix), &end, 10);
		if (!errno && *version > 0 && *end == '\n' && !end[1])
			return 0;
	}
	store_err_set(err, STORE_CORRUPT, EX_DATAERR,
		      "'%s/version': not a message store version file", l->dir);
	return -1;
}

static int refuse_newer(struct store_log *l, struct store_err *err, uint64_t v)
{
	store_err_set(err, STORE_NEWER, EX_DATAERR,
		      "'%s': store format %" PRIu64 " was written by a newer msgtools;"
		      " this one reads format %d and older", l->dir, v, STORE_VERSION);
	return -1;
}

/* What the directory holds: the newest log, the older ones, strays. */
struct listing {
	uint64_t newest;	/* 0: no log */
	uint64_t *older;
	size_t n_older;
	int others;		/* names that are not the store's */
};

/* "log." and exactly 16 hex digits: 1 and the generation. */
static int log_gen(const char *name, const char *prefix, uint64_t *gen)
{
	size_t p = strlen(prefix);

	if (strncmp(name, prefix, p) || strlen(name + p) != 16 ||
	    strspn(name + p, "0123456789abcdef") != 16)
		return 0;
	*gen = strtoull(name + p, NULL, 16);
	return *gen != 0;
}

static void list_name(struct listing *ls, const char *name)
{
	uint64_t g;

	if (!log_gen(name, "log.", &g)) {
		ls->others += strcmp(name, "lock") && strcmp(name, "version") &&
			      strcmp(name, "tmp.version") && !log_gen(name, "tmp.log.", &g);
		return;
	}
	if (g > ls->newest) {
		uint64_t was = ls->newest;
		ls->newest = g;
		if (!was)
			return;
		g = was;
	}
	ls->older = xrealloc(ls->older, (ls->n_older + 1) * sizeof(*ls->older));
	ls->older[ls->n_older++] = g;
}

/* A walk over DIR's names, from the start; NULL with err filled in. */
static DIR *open_listing(struct store_log *l, struct store_err *err)
{
	int fd = dup(l->dirfd);
	DIR *d = fd < 0 ? NULL : fdopendir(fd);

	if (!d) {
		if (fd >= 0)
			close(fd);
		store_err_set(err, STORE_SYSERR, 0, "cannot read '%s'", l->dir);
		return NULL;
	}
	rewinddir(d);	/* the descriptor shares its offset with dirfd */
	return d;
}

static int list_dir(struct store_log *l, struct store_err *err, struct listing *ls)
{
	DIR *d = open_listing(l, err);
	struct dirent *e;

	memset(ls, 0, sizeof(*ls));
	if (!d)
		return -1;
	while ((errno = 0, e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			list_name(ls, e->d_name);
	if (errno) {
		store_err_set(err, STORE_SYSERR, 0, "cannot read '%s'", l->dir);
		closedir(d);
		return -1;
	}
	closedir(d);
	return 0;
}

/* Remove the temporary files a crash left: they were never current. */
static int remove_strays(struct store_log *l, struct store_err *err)
{
	DIR *d = open_listing(l, err);
	struct dirent *e;
	uint64_t g;
	int r = 0;

	if (!d)
		return -1;
	while (r == 0 && (e = readdir(d))) {
		if (strcmp(e->d_name, "tmp.version") &&
		    !log_gen(e->d_name, "tmp.log.", &g))
			continue;
		if (unlinkat(l->dirfd, e->d_name, 0) == 0) {
			l->st.removed++;
		} else if (errno != ENOENT) {
			store_err_set(err, STORE_SYSERR, 0, "cannot remove '%s/%s'",
				      l->dir, e->d_name);
			r = -1;
		}
	}
	closedir(d);
	return r;
}

/* Logs older than the current one outlived a compaction's crash. */
static void remove_older(struct store_log *l, const struct listing *ls)
{
	char name[LOG_NAME_MAX];

	for (size_t i = 0; i < ls->n_older; i++) {
		snprintf(name, sizeof(name), "log.%016" PRIx64, ls->older[i]);
		l->st.removed += unlinkat(l->dirfd, name, 0) == 0;
	}
}

/* ---- a new store's files ------------------------------------------------------- */

/* The version file and the first log, whichever a store lacks. */
static int make_files(struct store_log *l, long version)
{
	char text[32];
	unsigned char h[LOG_HDR];
	int n = snprintf(text, sizeof(text), "%s%d\n", version_prefix, STORE_VERSION);

	if (!version && log_publish(l, "version", text, (size_t)n, 0) < 0)
		return -1;
	if (!l->gen) {
		log_set_gen(l, 1);
		log_header(h, l->gen);
		l->out.fd = log_publish(l, l->name, h, LOG_HDR, 1);
		if (l->out.fd < 0)
			return -1;
		l->out.off = LOG_HDR;
	}
	if (log_sync_dir(l, l->dir) < 0)
		return log_fail(l, 0, "cannot sync '%s'", l->dir);
	return 0;
}

static int create_files(struct store_log *l, struct store_err *err, long version)
{
	if (make_files(l, version) == 0)
		return 0;
	err->status = STORE_SYSERR;
	err->errnum = errno;
	err->exit = store_exit_code(errno);
	snprintf(err->msg, sizeof(err->msg), "%s", l->err.ptr);
	return -1;
}

/* ---- replaying the log ------------------------------------------------------------ */

/* Check the current log's header; 0, or -1 with err. */
static int check_header(struct store_log *l, struct store_err *err, uint64_t size)
{
	unsigned char h[LOG_HDR];

	if (size < LOG_HDR) {
		store_err_set(err, STORE_CORRUPT, EX_DATAERR,
			      "'%s/%s': truncated log header", l->dir, l->name);
		return -1;
	}
	if (log_pread(l->out.fd, h, LOG_HDR, 0) < 0) {
		store_err_set(err, STORE_SYSERR, 0, "cannot read '%s/%s'", l->dir, l->name);
		return -1;
	}
	if (memcmp(h, LOG_MAGIC, 8) ||
	    get_le(h + 24, 4) != crc32c(0, h, 24)) {
		store_err_set(err, STORE_CORRUPT, EX_DATAERR,
			      "'%s/%s': not a message store log", l->dir, l->name);
		return -1;
	}
	if (get_le(h + 8, 4) > STORE_VERSION)
		return refuse_newer(l, err, get_le(h + 8, 4));
	if (get_le(h + 16, 8) != l->gen) {
		store_err_set(err, STORE_CORRUPT, EX_DATAERR,
			      "'%s/%s': log header names another generation",
			      l->dir, l->name);
		return -1;
	}
	return 0;
}

/* Changes read but not yet closed by a commit record. */
struct pending {
	struct index_node **ops;
	size_t len, cap;
};

static void pending_add(struct pending *p, struct index_node *n)
{
	if (p->len == p->cap) {
		p->cap = p->cap ? 2 * p->cap : 256;
		p->ops = xrealloc(p->ops, p->cap * sizeof(*p->ops));
	}
	p->ops[p->len++] = n;
}

static void pending_apply(struct store_index *x, struct pending *p)
{
	if (!p->ops)
		return;	/* an empty batch */
	for (size_t i = 0; i < p->len; i++) {
		struct index_node *n = p->ops[i];
		if (n->op == REC_PUT) {
			index_put(x, n);
		} else {
			struct rec_name nm = { node_kind(n), n->kind_len,
					       node_key(n), n->key_len };
			index_delete(x, &nm);
			free(n);
		}
	}
	p->len = 0;
}

static void pending_clear(struct pending *p)
{
	for (size_t i = 0; i < p->len; i++)
		free(p->ops[i]);
	free(p->ops);
}

/* Apply each whole batch of the log; *end is where the last one ends. */
static int replay(struct store_log *l, struct store_index *x,
		  struct log_reader *r, uint64_t *end)
{
	struct rec_in in = { .names = BUF_INIT };
	struct pending p = { NULL, 0, 0 };
	int rc;

	*end = r->pos;
	while ((rc = reader_next_rec(r, &in)) == 1) {
		if (in.type == REC_COMMIT) {
			if (in.count != p.len || in.seq != l->seq + 1)
				break;
			pending_apply(x, &p);
			l->seq = in.seq;
			*end = r->pos;
			continue;
		}
		struct index_node *n = index_node_new(x, &in.nm);
		n->op = (char)in.type;
		n->roff = in.off;
		n->vlen = in.vlen;
		n->deadline = in.deadline;
		pending_add(&p, n);
	}
	pending_clear(&p);
	buf_release(&in.names);
	return rc < 0 ? -1 : 0;
}

/* Cut what a crash left after the last whole batch. */
static int cut_tail(struct store_log *l, struct store_err *err, uint64_t end,
		    uint64_t size)
{
	l->out.off = end;
	if (end == size)
		return 0;
	l->st.discarded = size - end;
	if (ftruncate(l->out.fd, (off_t)end) < 0 || log_sync_fd(l, l->out.fd) < 0) {
		store_err_set(err, STORE_SYSERR, 0, "cannot truncate '%s/%s'",
			      l->dir, l->name);
		return -1;
	}
	return 0;
}

/* Load the current log into x; *end and *size say where its last whole
 * batch ends and where the file does. 0, or -1 with err. */
static int read_log(struct store_log *l, struct store_index *x, int flags,
		    uint64_t *end, uint64_t *size, struct store_err *err)
{
	struct log_reader r;
	struct stat st;
	int rc;

	l->out.fd = openat(l->dirfd, l->name, flags | O_CLOEXEC);
	if (l->out.fd < 0 || fstat(l->out.fd, &st) < 0) {
		store_err_set(err, STORE_SYSERR, 0, "cannot open '%s/%s'", l->dir, l->name);
		return -1;
	}
	*size = (uint64_t)st.st_size;
	if (check_header(l, err, *size) < 0)
		return -1;
	reader_init(&r, l->out.fd, LOG_HDR, *size);
	rc = replay(l, x, &r, end);
	reader_release(&r);
	if (rc < 0) {
		store_err_set(err, STORE_SYSERR, 0, "cannot read '%s/%s'", l->dir, l->name);
		return -1;
	}
	return 0;
}

static int load_log(struct store_log *l, struct store_index *x,
		    struct store_err *err)
{
	uint64_t end, size;

	if (read_log(l, x, O_RDWR | O_APPEND, &end, &size, err) < 0)
		return -1;
	return cut_tail(l, err, end, size);
}

static int recover(struct store_log *l, struct store_index *x, int made_lock,
		   struct store_err *err)
{
	struct listing ls;
	long version;
	int r = -1;

	if (list_dir(l, err, &ls) < 0)
		return -1;
	if (read_version(l, err, &version) < 0)
		goto out;
	if (version > STORE_VERSION) {
		refuse_newer(l, err, (uint64_t)version);
		goto out;
	}
	if (!version && !ls.newest && ls.others) {
		store_err_set(err, STORE_CORRUPT, EX_DATAERR,
			      "'%s': not a message store, and not empty", l->dir);
		if (made_lock)
			unlinkat(l->dirfd, "lock", 0);
		goto out;
	}
	if (remove_strays(l, err) < 0)
		goto out;
	if (ls.newest) {
		log_set_gen(l, ls.newest);
		if (load_log(l, x, err) < 0)
			goto out;
	}
	if ((!version || !ls.newest) && create_files(l, err, version) < 0)
		goto out;
	remove_older(l, &ls);
	r = 0;
out:
	free(ls.older);
	return r;
}

int recover_open(struct store_log *l, struct store_index *x, int *lockfd,
		 struct store_err *err)
{
	int made_lock;

	if (make_dir(l, err) < 0)
		return -1;
	made_lock = lock_dir(l, lockfd, err);
	if (made_lock < 0)
		return -1;
	return recover(l, x, made_lock, err);
}

/*
 * A reader beside the tool that holds the store (msg-trickle status): the
 * last committed state, read without the lock and without changing a
 * byte. The log may be appended to meanwhile (the tail past the last
 * commit record is not read) or replaced by a compaction (the old file,
 * open, still holds the same state; a log gone before it was opened is
 * looked for again).
 */
int recover_snapshot(struct store_log *l, struct store_index *x,
		     struct store_err *err)
{
	struct listing ls;
	uint64_t end, size;
	long version;

	l->dirfd = open(l->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (l->dirfd < 0) {
		store_err_set(err, STORE_SYSERR, EX_NOINPUT, "cannot open '%s'", l->dir);
		return -1;
	}
	for (int tries = 0; tries < 10; tries++) {
		if (list_dir(l, err, &ls) < 0)
			return -1;
		free(ls.older);
		if (read_version(l, err, &version) < 0)
			return -1;
		if (version > STORE_VERSION)
			return refuse_newer(l, err, (uint64_t)version);
		if (!version || !ls.newest) {
			store_err_set(err, STORE_CORRUPT, EX_NOINPUT,
				      "'%s': not a message store", l->dir);
			return -1;
		}
		log_set_gen(l, ls.newest);
		l->seq = 0;
		if (read_log(l, x, O_RDONLY, &end, &size, err) == 0)
			return 0;
		if (l->out.fd >= 0 || err->errnum != ENOENT)
			return -1;
		index_release(x);	/* compacted away meanwhile: again */
	}
	return -1;
}
