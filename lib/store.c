/*
 * store: a crash-safe record store in a directory: one append-only log,
 * rewritten by compaction, and an index of it in memory. This file is
 * the interface of store.h over its parts:
 *   store-format.h   the bytes of the log
 *   store-log.c      the files: appending, syncing, reading back
 *   store-index.c    the records in memory: skip list, deadline heap
 *   store-recover.c  opening a directory and recovering its log
 *   store-compact.c  rewriting the log with only the live records
 *   crc32c.c         the checksum of every record
 *
 * Files in DIR (mode 0700; files 0600):
 *   lock          flock(2)ed, non-blocking and exclusive, while open
 *   version       "msg-store 1\n": the format, the one file every future
 *                 format keeps, so an old program can refuse a new store
 *   log.GGGG...   the log of generation G (16 hex digits): a 32-byte
 *                 header, then records; only the highest G is current
 *   tmp.*         a file being written; never current, removed at open
 *
 * A record is a put (kind, key, value, deadline), a delete (kind, key)
 * or a commit (how many records it closes, and a sequence number), each
 * with a CRC32C over all of its bytes but the CRC itself. Puts and
 * deletes are appended as they come (buffered); store_commit() appends a
 * commit record and makes the log durable with one fsync. Recovery
 * applies a batch only when its commit record is there and whole, so:
 *   - a crash while a batch is being written (torn record, missing or
 *     torn commit) leaves the batch out, whole: it was never acknowledged;
 *   - a crash during or after the fsync leaves the batch in, or out if the
 *     fsync had not finished (then it was not acknowledged either);
 *   - since a record is valid only with its CRC and only after every
 *     record before it, garbage can never be taken for data.
 * A new store is made the same way as a compacted log: version and
 * log.0000000000000001 are written as tmp.* files, fsynced, renamed, and
 * DIR is fsynced (and its parent, when DIR was created).
 *
 * Why a log rather than a file per record: a batch of any size then
 * costs one write and one fsync, where files would cost an fsync and a
 * rename each. After a write, fsync or rename fails, the store takes no
 * more changes: what the failed call left is unknown (a failed fsync may
 * have dropped dirty pages), so the caller closes it and the next open
 * recovers from the disk as after a crash.
 *
 * Memory: the index holds, per record, its kind and key and about 80
 * bytes (offsets, deadline, skip-list links, a slot in the deadline
 * heap); values stay on disk and are read back with pread(2). Writes
 * are buffered up to 64 KiB. Recovery holds one batch of pending
 * changes, at most one entry per record.
 */
#include "store.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <sysexits.h>
#include <unistd.h>

#include "clock.h"
#include "crc32c.h"
#include "store-compact.h"
#include "store-index.h"
#include "store-log.h"
#include "store-recover.h"

struct store {
	struct store_log log;	/* the files, and what failed */
	struct store_index index;
	int lockfd;
	int min_free_set;
	uint64_t min_free;	/* when set by $MSG_STORE_MIN_FREE */
	uint64_t room;		/* bytes puts may add before statvfs is asked again */
	int snapshot;		/* read without the lock: no changes */
};

/* A snapshot takes no changes: 0, or -1 (EROFS). */
static int changeable(const struct store *s)
{
	if (!s->snapshot)
		return 0;
	errno = EROFS;
	return -1;
}

/* ---- free space ------------------------------------------------------------ */

static uint64_t margin(const struct store *s, const struct statvfs *v)
{
	uint64_t pct = (uint64_t)v->f_blocks * v->f_frsize / 100 * STORE_MIN_FREE_PCT;

	if (s->min_free_set)
		return s->min_free;
	return pct > STORE_MIN_FREE ? pct : STORE_MIN_FREE;
}

/* Room for need more bytes of new data: asks statvfs once a batch. */
static int check_room(struct store *s, uint64_t need)
{
	struct statvfs v;
	uint64_t avail, keep;

	if (need <= s->room) {
		s->room -= need;
		return 0;
	}
	if (fstatvfs(s->log.out.fd, &v) < 0)
		return log_fail(&s->log, 0, "cannot check free space in '%s'", s->log.dir);
	avail = (uint64_t)v.f_bavail * v.f_frsize;
	keep = margin(s, &v);
	if (avail < keep || avail - keep < need) {
		errno = ENOSPC;
		return log_fail(&s->log, 0, "cannot store in '%s': less than %" PRIu64
				" bytes would be left free", s->log.dir, keep);
	}
	s->room = avail - keep - need;
	return 0;
}

/* ---- opening ----------------------------------------------------------------- */

static int read_env(struct store *s, struct store_err *err)
{
	const char *v = getenv("MSG_STORE_MIN_FREE");

	if (v) {
		if (size_parse(v, &s->min_free) < 0) {
			errno = EINVAL;
			store_err_set(err, STORE_SYSERR, EX_USAGE,
				      "MSG_STORE_MIN_FREE '%s'", v);
			return -1;
		}
		s->min_free_set = 1;
	}
	v = getenv("MSG_STORE_NOSYNC");
	s->log.nosync = v && !strcmp(v, "1");
	return 0;
}

/* A store on dir, opened as a holder (locked, recovered) or a snapshot. */
static struct store *open_store(const char *dir, int snapshot,
				struct store_err *err)
{
	struct store *s = xmalloc(sizeof(*s));
	int r;

	memset(s, 0, sizeof(*s));
	memset(err, 0, sizeof(*err));
	crc32c_init();
	log_init(&s->log, dir);
	index_init(&s->index);
	s->lockfd = -1;
	s->snapshot = snapshot;
	if (snapshot)
		r = recover_snapshot(&s->log, &s->index, err);
	else
		r = read_env(s, err) < 0 ? -1 :
		    recover_open(&s->log, &s->index, &s->lockfd, err);
	if (r < 0) {
		store_close(s);
		return NULL;
	}
	return s;
}

struct store *store_open(const char *dir, struct store_err *err)
{
	return open_store(dir, 0, err);
}

struct store *store_open_snapshot(const char *dir, struct store_err *err)
{
	return open_store(dir, 1, err);
}

void store_close(struct store *s)
{
	if (!s)
		return;
	index_release(&s->index);
	log_release(&s->log);
	if (s->lockfd >= 0)
		close(s->lockfd);	/* and with it the lock */
	free(s);
}

/* ---- changes ---------------------------------------------------------------- */

static int check_name(struct store *s, struct rec_name *nm, const char *kind,
		      const void *key, size_t key_len)
{
	nm->kind = kind;
	nm->kind_len = kind ? strlen(kind) : 0;
	nm->key = key_len ? key : "";
	nm->key_len = key_len;
	if (nm->kind_len && nm->kind_len <= STORE_KIND_MAX && key_len <= STORE_KEY_MAX)
		return 0;
	errno = EINVAL;
	return log_fail(&s->log, 0, "cannot store in '%s': kind of %zu bytes, key of %zu",
			s->log.dir, nm->kind_len, key_len);
}

int store_put(struct store *s, const char *kind, const void *key,
	      size_t key_len, const void *value, size_t value_len,
	      int64_t deadline)
{
	struct rec_name nm;
	struct index_node *n;
	uint64_t roff = s->log.out.off;

	if (changeable(s) < 0 || log_usable(&s->log) < 0 ||
	    check_name(s, &nm, kind, key, key_len) < 0 || check_room(s, rec_len(nm.kind_len, key_len, value_len)) < 0)
		return -1;
	if (log_append(&s->log, REC_PUT, &nm, value_len ? value : "", value_len,
		       deadline) < 0)
		return -1;
	n = index_node_new(&s->index, &nm);
	n->roff = roff;
	n->vlen = value_len;
	n->deadline = deadline;
	index_put(&s->index, n);
	return 0;
}

int store_delete(struct store *s, const char *kind, const void *key,
		 size_t key_len)
{
	struct rec_name nm;

	if (changeable(s) < 0 || log_usable(&s->log) < 0 ||
	    check_name(s, &nm, kind, key, key_len) < 0)
		return -1;
	if (!index_find(&s->index, &nm))
		return 0;
	if (log_append(&s->log, REC_DEL, &nm, "", 0, 0) < 0)
		return -1;
	index_delete(&s->index, &nm);
	return 0;
}

/* Compact when dead bytes outweigh live ones, and there is room. */
static int maybe_compact(struct store *s)
{
	struct statvfs v;

	if (!compact_due(&s->log, &s->index))
		return 0;
	if (fstatvfs(s->log.out.fd, &v) == 0 &&
	    (uint64_t)v.f_bavail * v.f_frsize < s->index.live_bytes + margin(s, &v))
		return 0;
	return compact_log(&s->log, &s->index);
}

/* Append the commit record and fsync: the batch is durable. */
static int commit_batch(struct store *s)
{
	int r = changeable(s) < 0 ? -1 : log_commit(&s->log);

	if (r > 0)
		s->room = 0;	/* the margin is checked afresh each batch */
	return r < 0 ? -1 : 0;
}

int store_commit(struct store *s)
{
	if (commit_batch(s) < 0)
		return -1;
	return maybe_compact(s);
}

int store_compact(struct store *s)
{
	if (commit_batch(s) < 0)
		return -1;
	return compact_log(&s->log, &s->index);
}

/* ---- reading ---------------------------------------------------------------- */

static void fill_rec(const struct index_node *n, struct store_rec *rec)
{
	rec->kind = node_kind(n);
	rec->key = node_key(n);
	rec->key_len = n->key_len;
	rec->value_len = n->vlen;
	rec->deadline = n->deadline;
}

static int read_value(struct store *s, const struct index_node *n, struct buf *value)
{
	return log_read_value(&s->log, n->roff, n->kind_len + n->key_len,
			      n->vlen, value);
}

int store_get(struct store *s, const char *kind, const void *key,
	      size_t key_len, struct buf *value, int64_t *deadline)
{
	struct rec_name nm;
	struct index_node *n;

	if (log_usable(&s->log) < 0 || check_name(s, &nm, kind, key, key_len) < 0)
		return -1;
	n = index_find(&s->index, &nm);
	if (!n)
		return 0;
	if (value && read_value(s, n, value) < 0)
		return -1;
	if (deadline)
		*deadline = n->deadline;
	return 1;
}

void store_iter_init(struct store_iter *it, struct store *s,
		     const char *kind, const void *prefix, size_t prefix_len)
{
	memset(it, 0, sizeof(*it));
	it->s = s;
	it->all_kinds = !kind;
	buf_init(&it->kind, 0);
	buf_init(&it->prefix, 0);
	buf_init(&it->last_kind, 0);
	buf_init(&it->last_key, 0);
	if (kind)
		buf_addstr(&it->kind, kind);
	buf_add(&it->prefix, prefix_len ? prefix : "", prefix_len);
}

static int has_prefix(const struct index_node *n, const struct buf *prefix)
{
	return n->key_len >= prefix->len &&
	       (!prefix->len || !memcmp(node_key(n), prefix->ptr, prefix->len));
}

/* The first node after the last one returned (or at the start). */
static struct index_node *iter_seek(struct store_iter *it)
{
	struct rec_name nm = { it->kind.ptr, it->kind.len, it->prefix.ptr, it->prefix.len };
	struct index_node *n;

	if (it->started) {
		nm = (struct rec_name){ it->last_kind.ptr, it->last_kind.len,
					it->last_key.ptr, it->last_key.len };
	} else if (it->all_kinds) {
		return index_first(&it->s->index);
	}
	n = index_seek(&it->s->index, &nm);
	if (it->started && n && node_cmp(n, &nm) == 0)
		n = n->next[0];
	return n;
}

int store_iter_next(struct store_iter *it, struct store_rec *rec,
		    struct buf *value)
{
	struct index_node *n = iter_seek(it);

	if (it->all_kinds) {
		while (n && !has_prefix(n, &it->prefix))
			n = n->next[0];
	} else if (n && (bytes_cmp(node_kind(n), n->kind_len, it->kind.ptr,
				   it->kind.len) || !has_prefix(n, &it->prefix))) {
		n = NULL;
	}
	if (!n)
		return 0;
	it->started = 1;
	buf_reset(&it->last_kind);
	buf_add(&it->last_kind, node_kind(n), n->kind_len);
	buf_reset(&it->last_key);
	buf_add(&it->last_key, node_key(n), n->key_len);
	fill_rec(n, rec);
	if (value && (log_usable(&it->s->log) < 0 || read_value(it->s, n, value) < 0))
		return -1;
	return 1;
}

void store_iter_release(struct store_iter *it)
{
	buf_release(&it->kind);
	buf_release(&it->prefix);
	buf_release(&it->last_kind);
	buf_release(&it->last_key);
}

int store_earliest(struct store *s, struct store_rec *rec)
{
	struct index_node *n = index_earliest(&s->index);

	if (!n)
		return 0;
	fill_rec(n, rec);
	return 1;
}

int64_t store_next_deadline(const struct store *s)
{
	struct index_node *n = index_earliest(&s->index);

	return n ? n->deadline : 0;
}

const char *store_last_error(const struct store *s)
{
	return s->log.err.len ? s->log.err.ptr : "no error";
}

int store_failed(const struct store *s)
{
	return s->log.err.len != 0;
}

const char *store_dir(const struct store *s)
{
	return s->log.dir;
}

void store_get_stats(const struct store *s, struct store_stats *st)
{
	*st = s->log.st;
	st->records = s->index.records;
	st->live_bytes = s->index.live_bytes;
	st->log_bytes = s->log.out.off;
}
