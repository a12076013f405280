/*
 * store: a crash-safe record store in a directory: one append-only log,
 * rewritten by compaction, and an index of it in memory.
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
 * commit record and makes the log durable with one fsync. Recovery reads
 * the log from the start and applies a batch only when its commit record
 * is there and whole; it stops at the first record that is short, fails
 * its CRC or does not follow on, and cuts the log there. So:
 *   - a crash while a batch is being written (torn record, missing or
 *     torn commit) leaves the batch out, whole: it was never acknowledged;
 *   - a crash during or after the fsync leaves the batch in, or out if the
 *     fsync had not finished (then it was not acknowledged either);
 *   - since a record is valid only with its CRC and only after every
 *     record before it, garbage can never be taken for data.
 *
 * Compaction writes every live record (copied verbatim, CRCs checked)
 * and one commit to tmp.log.G+1, fsyncs it, renames it to log.G+1,
 * fsyncs DIR, and only then removes log.G and appends to the new log:
 *   - crash before the rename: tmp.log.G+1 is removed at open; log.G is
 *     whole and current;
 *   - crash after the rename: log.G+1 is whole (it was fsynced before it
 *     got its name), so whichever of the two logs the directory shows,
 *     the current one holds every committed record; log.G, if still
 *     there, is removed at open;
 *   - nothing is appended to log.G+1 before DIR is fsynced, so no commit
 *     can land in a log whose name could still vanish.
 * A new store is made the same way: version and log.0000000000000001
 * are written as tmp.* files, fsynced, renamed, and DIR is fsynced (and
 * its parent, when DIR was created).
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
 * are buffered up to OUT_MAX bytes. Recovery holds one batch of pending
 * changes, at most one entry per record.
 */
#include "store.h"

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
#include <sys/statvfs.h>
#include <sysexits.h>
#include <unistd.h>

#include "clock.h"
#include "io.h"

#define LOG_HDR 32		/* log header: magic, version, generation, CRC */
#define REC_HDR 24		/* record header: CRC, type, lengths, deadline */
#define COMMIT_BODY 16		/* commit record value: count, sequence */
#define OUT_MAX (64u << 10)	/* write buffer; larger values go straight out */
#define CHUNK (64u << 10)	/* reads during recovery and compaction */
#define COMPACT_MIN (4ull << 20) /* dead log bytes before compaction pays */
#define LEVEL_MAX 24		/* skip list: enough for 4^24 records */
#define NOT_IN_HEAP ((size_t)-1)

#define LOG_MAGIC "msgstore"	/* 8 bytes, no NUL */
static const char version_prefix[] = "msg-store ";

enum rec_type { REC_PUT = 'P', REC_DEL = 'D', REC_COMMIT = 'C' };

/* ---- CRC32C (Castagnoli), slicing by eight ---------------------------- */

static uint32_t crc_table[8][256];

static void crc_init(void)
{
	if (crc_table[0][1])
		return;
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;
		for (int k = 0; k < 8; k++)
			c = c & 1 ? (c >> 1) ^ 0x82f63b78u : c >> 1;
		crc_table[0][i] = c;
	}
	for (int t = 1; t < 8; t++)
		for (int i = 0; i < 256; i++) {
			uint32_t c = crc_table[t - 1][i];
			crc_table[t][i] = (c >> 8) ^ crc_table[0][c & 0xff];
		}
}

/* Continue a CRC: crc32c(crc32c(0, a), b) is the CRC of a then b. */
static uint32_t crc32c(uint32_t crc, const void *data, size_t n)
{
	const unsigned char *p = data;
	uint32_t c = ~crc;

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	while (n >= 8) {
		uint64_t w;
		memcpy(&w, p, 8);
		w ^= c;
		c = crc_table[7][w & 0xff] ^ crc_table[6][(w >> 8) & 0xff] ^
		    crc_table[5][(w >> 16) & 0xff] ^ crc_table[4][(w >> 24) & 0xff] ^
		    crc_table[3][(w >> 32) & 0xff] ^ crc_table[2][(w >> 40) & 0xff] ^
		    crc_table[1][(w >> 48) & 0xff] ^ crc_table[0][w >> 56];
		p += 8;
		n -= 8;
	}
#endif
	while (n--)
		c = (c >> 8) ^ crc_table[0][(c ^ *p++) & 0xff];
	return ~c;
}

/* ---- little-endian fields ------------------------------------------------ */

static void put_le(unsigned char *p, uint64_t v, int n)
{
	for (int i = 0; i < n; i++, v >>= 8)
		p[i] = (unsigned char)v;
}

static uint64_t get_le(const unsigned char *p, int n)
{
	uint64_t v = 0;

	while (n--)
		v = v << 8 | p[n];
	return v;
}

/* ---- the index: a skip list in (kind, key) order, and a deadline heap ---- */

struct node {
	uint64_t roff;		/* offset of its record in the log */
	uint64_t vlen;
	int64_t deadline;
	size_t heap_pos;
	uint16_t key_len;
	uint8_t kind_len;
	uint8_t level;
	char op;		/* REC_PUT or REC_DEL while pending in recovery */
	struct node *next[];	/* level links, then "kind\0key\0" */
};

struct name {
	const char *kind;
	size_t kind_len;
	const char *key;
	size_t key_len;
};

static char *node_kind(const struct node *n)
{
	return (char *)&n->next[n->level];
}

static char *node_key(const struct node *n)
{
	return node_kind(n) + n->kind_len + 1;
}

static uint64_t node_rlen(const struct node *n)
{
	return REC_HDR + n->kind_len + n->key_len + n->vlen;
}

static int bytes_cmp(const char *a, size_t an, const char *b, size_t bn)
{
	size_t m = an < bn ? an : bn;
	int c = m ? memcmp(a, b, m) : 0;

	return c ? c : (an > bn) - (an < bn);
}

static int node_cmp(const struct node *n, const struct name *nm)
{
	int c = bytes_cmp(node_kind(n), n->kind_len, nm->kind, nm->kind_len);

	return c ? c : bytes_cmp(node_key(n), n->key_len, nm->key, nm->key_len);
}

/* ---- the store ----------------------------------------------------------- */

/* Bytes on their way to a file: appended to b, written when b is full. */
struct sink {
	int fd;
	uint64_t off;		/* file size once b is written */
	struct buf b;
};

struct store {
	char *dir;
	int dirfd, lockfd;
	int made_lock;		/* this open created DIR/lock */
	uint64_t gen;
	char logname[32];	/* "log." and gen in hex */
	struct sink log;
	uint64_t seq;		/* of the last commit record in this log */
	uint64_t batch;		/* records since then */
	int failed;		/* errno that made the store unusable, or 0 */
	struct buf err;
	struct buf scratch;	/* record heads read back */

	struct node *head[LEVEL_MAX];
	int levels;
	uint64_t rng;
	struct node **heap;
	size_t heap_len, heap_cap;

	int min_free_set;
	uint64_t min_free;	/* when set by $MSG_STORE_MIN_FREE */
	int nosync;
	uint64_t room;		/* bytes puts may add before statvfs is asked again */
	struct store_stats st;
};

static int fail(struct store *s, int fatal, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Note a failure for store_last_error, with errno's text; a fatal one
 * makes the store unusable. Returns -1 with errno unchanged. */
static int fail(struct store *s, int fatal, const char *fmt, ...)
{
	int e = errno;
	va_list ap;

	buf_reset(&s->err);
	va_start(ap, fmt);
	buf_vaddf(&s->err, fmt, ap);
	va_end(ap);
	buf_addf(&s->err, ": %s", strerror(e));
	if (fatal)
		s->failed = e;
	errno = e;
	return -1;
}

static int usable(struct store *s)
{
	if (!s->failed)
		return 0;
	errno = s->failed;
	return -1;
}

/* ---- deadline heap: earliest first, ties in key order -------------------- */

static int heap_before(const struct node *a, const struct node *b)
{
	struct name nm = { node_kind(b), b->kind_len, node_key(b), b->key_len };

	if (a->deadline != b->deadline)
		return a->deadline < b->deadline;
	return node_cmp(a, &nm) < 0;
}

static void heap_set(struct store *s, size_t i, struct node *n)
{
	s->heap[i] = n;
	n->heap_pos = i;
}

static void heap_up(struct store *s, size_t i)
{
	struct node *n = s->heap[i];

	while (i > 0 && heap_before(n, s->heap[(i - 1) / 2])) {
		heap_set(s, i, s->heap[(i - 1) / 2]);
		i = (i - 1) / 2;
	}
	heap_set(s, i, n);
}

static void heap_down(struct store *s, size_t i)
{
	struct node *n = s->heap[i];

	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= s->heap_len)
			break;
		if (c + 1 < s->heap_len && heap_before(s->heap[c + 1], s->heap[c]))
			c++;
		if (!heap_before(s->heap[c], n))
			break;
		heap_set(s, i, s->heap[c]);
		i = c;
	}
	heap_set(s, i, n);
}

static void heap_add(struct store *s, struct node *n)
{
	if (s->heap_len == s->heap_cap) {
		s->heap_cap = s->heap_cap ? 2 * s->heap_cap : 64;
		s->heap = xrealloc(s->heap, s->heap_cap * sizeof(*s->heap));
	}
	heap_set(s, s->heap_len++, n);
	heap_up(s, n->heap_pos);
}

static void heap_remove(struct store *s, struct node *n)
{
	size_t i = n->heap_pos;
	struct node *last = s->heap[--s->heap_len];

	n->heap_pos = NOT_IN_HEAP;
	if (last == n)
		return;
	heap_set(s, i, last);
	heap_up(s, i);
	heap_down(s, last->heap_pos);
}

/* ---- skip list ------------------------------------------------------------ */

static int random_level(struct store *s)
{
	int level = 1;

	/* xorshift64: a fixed seed keeps runs repeatable. */
	for (;;) {
		s->rng ^= s->rng << 13;
		s->rng ^= s->rng >> 7;
		s->rng ^= s->rng << 17;
		if ((s->rng & 3) || level == LEVEL_MAX)
			return level;
		level++;
	}
}

static struct node *node_new(struct store *s, const struct name *nm)
{
	int level = random_level(s);
	struct node *n = xmalloc(sizeof(*n) + level * sizeof(n->next[0]) +
				 nm->kind_len + nm->key_len + 2);

	memset(n, 0, sizeof(*n));
	n->level = (uint8_t)level;
	n->kind_len = (uint8_t)nm->kind_len;
	n->key_len = (uint16_t)nm->key_len;
	n->heap_pos = NOT_IN_HEAP;
	memcpy(node_kind(n), nm->kind, nm->kind_len);
	node_kind(n)[nm->kind_len] = '\0';
	if (nm->key_len)
		memcpy(node_key(n), nm->key, nm->key_len);
	node_key(n)[nm->key_len] = '\0';
	return n;
}

/*
 * The first node at or after nm, or NULL. When slot is not NULL, slot[i]
 * is set to the link at level i that points to where nm belongs.
 */
static struct node *seek(struct store *s, const struct name *nm,
			 struct node ***slot)
{
	struct node **links = s->head;

	for (int i = s->levels - 1; i >= 0; i--) {
		while (links[i] && node_cmp(links[i], nm) < 0)
			links = links[i]->next;
		if (slot)
			slot[i] = &links[i];
	}
	return links[0];
}

static struct node *find(struct store *s, const struct name *nm,
			 struct node ***slot)
{
	struct node *n = seek(s, nm, slot);

	return n && node_cmp(n, nm) == 0 ? n : NULL;
}

static void index_unlink(struct store *s, struct node *n, struct node ***slot)
{
	for (int i = 0; i < n->level; i++)
		*slot[i] = n->next[i];
	if (n->heap_pos != NOT_IN_HEAP)
		heap_remove(s, n);
	s->st.records--;
	s->st.live_bytes -= node_rlen(n);
}

/* Put n in the index, in place of a record of the same name. */
static void index_put(struct store *s, struct node *n)
{
	struct name nm = { node_kind(n), n->kind_len, node_key(n), n->key_len };
	struct node **slot[LEVEL_MAX];
	struct node *old = find(s, &nm, slot);

	if (old) {
		index_unlink(s, old, slot);
		free(old);
	}
	for (int i = s->levels; i < n->level; i++)
		slot[i] = &s->head[i];
	if (n->level > s->levels)
		s->levels = n->level;
	for (int i = 0; i < n->level; i++) {
		n->next[i] = *slot[i];
		*slot[i] = n;
	}
	if (n->deadline)
		heap_add(s, n);
	s->st.records++;
	s->st.live_bytes += node_rlen(n);
}

static void index_delete(struct store *s, const struct name *nm)
{
	struct node **slot[LEVEL_MAX];
	struct node *n = find(s, nm, slot);

	if (n) {
		index_unlink(s, n, slot);
		free(n);
	}
}

static void index_clear(struct store *s)
{
	struct node *n = s->head[0];

	while (n) {
		struct node *next = n->next[0];
		free(n);
		n = next;
	}
	memset(s->head, 0, sizeof(s->head));
	s->levels = 0;
	s->heap_len = 0;
}

/* ---- writing -------------------------------------------------------------- */

static int sink_flush(struct sink *k)
{
	if (!k->b.len)
		return 0;
	if (write_all(k->fd, k->b.ptr, k->b.len) < 0)
		return -1;
	buf_reset(&k->b);
	return 0;
}

static int sink_add(struct sink *k, const void *p, size_t n)
{
	k->off += n;
	if (n >= OUT_MAX) {
		if (sink_flush(k) < 0)
			return -1;
		return write_all(k->fd, p, n);
	}
	buf_add(&k->b, p, n);
	return k->b.len >= OUT_MAX ? sink_flush(k) : 0;
}

static void rec_head(unsigned char h[REC_HDR], int type, const struct name *nm,
		     uint64_t vlen, int64_t deadline)
{
	put_le(h + 4, (uint64_t)type, 1);
	put_le(h + 5, nm->kind_len, 1);
	put_le(h + 6, nm->key_len, 2);
	put_le(h + 8, vlen, 8);
	put_le(h + 16, (uint64_t)deadline, 8);
}

/* Append one record to k; 0 or -1 (errno). */
static int append_rec(struct sink *k, int type, const struct name *nm,
		      const void *value, uint64_t vlen, int64_t deadline)
{
	unsigned char h[REC_HDR];
	uint32_t crc;

	rec_head(h, type, nm, vlen, deadline);
	crc = crc32c(0, h + 4, REC_HDR - 4);
	crc = crc32c(crc, nm->kind, nm->kind_len);
	crc = crc32c(crc, nm->key, nm->key_len);
	crc = crc32c(crc, value, vlen);
	put_le(h, crc, 4);
	if (sink_add(k, h, REC_HDR) < 0 ||
	    sink_add(k, nm->kind, nm->kind_len) < 0 ||
	    sink_add(k, nm->key, nm->key_len) < 0)
		return -1;
	return vlen ? sink_add(k, value, vlen) : 0;
}

static int append_commit(struct sink *k, uint64_t count, uint64_t seq)
{
	static const struct name none = { "", 0, "", 0 };
	unsigned char v[COMMIT_BODY];

	put_le(v, count, 8);
	put_le(v + 8, seq, 8);
	return append_rec(k, REC_COMMIT, &none, v, sizeof(v), 0);
}

static void log_header(unsigned char h[LOG_HDR], uint64_t gen)
{
	memset(h, 0, LOG_HDR);
	memcpy(h, LOG_MAGIC, 8);
	put_le(h + 8, STORE_VERSION, 4);
	put_le(h + 16, gen, 8);
	put_le(h + 24, crc32c(0, h, 24), 4);
}

static int sync_fd(struct store *s, int fd)
{
	if (s->nosync)
		return 0;
	s->st.syncs++;
	return xfsync(fd);
}

static int sync_dir(struct store *s, const char *dir)
{
	if (s->nosync)
		return 0;
	s->st.syncs++;
	return fsync_dir(dir);
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
	if (fstatvfs(s->log.fd, &v) < 0)
		return fail(s, 0, "cannot check free space in '%s'", s->dir);
	avail = (uint64_t)v.f_bavail * v.f_frsize;
	keep = margin(s, &v);
	if (avail < keep || avail - keep < need) {
		errno = ENOSPC;
		return fail(s, 0, "cannot store in '%s': less than %" PRIu64
			    " bytes would be left free", s->dir, keep);
	}
	s->room = avail - keep - need;
	return 0;
}

/* ---- reading back ------------------------------------------------------------ */

static int pread_full(int fd, void *p, size_t n, uint64_t off)
{
	char *d = p;

	while (n) {
		ssize_t r = pread(fd, d, n, (off_t)off);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -1;
		if (r == 0) {
			errno = EIO;	/* the log is shorter than its index */
			return -1;
		}
		d += r;
		n -= (size_t)r;
		off += (uint64_t)r;
	}
	return 0;
}

/* Records still in the write buffer are written before one is read. */
static int readable(struct store *s, const struct node *n)
{
	if (n->roff + node_rlen(n) <= s->log.off - s->log.b.len)
		return 0;
	if (sink_flush(&s->log) < 0)
		return fail(s, 1, "cannot write '%s/%s'", s->dir, s->logname);
	return 0;
}

/* Read n's value into value, checking the record's CRC; 0 or -1 (EIO). */
static int read_value(struct store *s, const struct node *n, struct buf *value)
{
	size_t head = REC_HDR + n->kind_len + n->key_len;
	uint32_t crc;

	if (readable(s, n) < 0)
		return -1;
	buf_reset(&s->scratch);
	buf_grow(&s->scratch, head);
	buf_reset(value);
	buf_grow(value, n->vlen);
	if (pread_full(s->log.fd, s->scratch.ptr, head, n->roff) < 0 ||
	    pread_full(s->log.fd, value->ptr, n->vlen, n->roff + head) < 0)
		return fail(s, 0, "cannot read '%s/%s'", s->dir, s->logname);
	buf_setlen(value, n->vlen);
	crc = crc32c(0, s->scratch.ptr + 4, head - 4);
	crc = crc32c(crc, value->ptr, value->len);
	if (crc != get_le((unsigned char *)s->scratch.ptr, 4)) {
		errno = EIO;
		return fail(s, 0, "'%s/%s': offset %" PRIu64 ": checksum mismatch",
			    s->dir, s->logname, n->roff);
	}
	return 0;
}

/* ---- recovery -------------------------------------------------------------- */

/* Sequential, buffered reads of a log, by offset. */
struct reader {
	int fd;
	uint64_t pos;		/* file offset of the next byte to take */
	uint64_t size;
	char *buf;
	size_t at, len;		/* buf[at..len) are the bytes from pos on */
};

/* Take n bytes into dst (or skip them when dst is NULL), adding them to
 * *crc. 0, or -1 with errno. The caller has checked n against size. */
static int reader_take(struct reader *r, void *dst, uint64_t n, uint32_t *crc)
{
	char *d = dst;

	while (n) {
		size_t k;
		if (r->at == r->len) {
			size_t want = r->size - r->pos < CHUNK ? r->size - r->pos : CHUNK;
			if (!want) {
				errno = EIO;	/* shorter than fstat said */
				return -1;
			}
			if (pread_full(r->fd, r->buf, want, r->pos) < 0)
				return -1;
			r->at = 0;
			r->len = want;
		}
		k = r->len - r->at < n ? r->len - r->at : (size_t)n;
		*crc = crc32c(*crc, r->buf + r->at, k);
		if (d) {
			memcpy(d, r->buf + r->at, k);
			d += k;
		}
		r->at += k;
		r->pos += k;
		n -= k;
	}
	return 0;
}

/* Go forward to off, keeping what the buffer holds beyond it. */
static void reader_seek(struct reader *r, uint64_t off)
{
	if (off >= r->pos && off - r->pos <= r->len - r->at)
		r->at += off - r->pos;
	else
		r->at = r->len = 0;
	r->pos = off;
}

struct rec_in {
	int type;
	struct name nm;
	uint64_t off, vlen, count, seq;
	int64_t deadline;
	struct buf names;
};

/* A record head that no writer of this format produces. */
static int head_bad(const struct rec_in *in, uint64_t left)
{
	uint64_t rlen = REC_HDR + in->nm.kind_len + in->nm.key_len;

	if (in->vlen > left || rlen + in->vlen > left)
		return 1;
	if (in->type == REC_COMMIT)
		return in->nm.kind_len || in->nm.key_len ||
		       in->vlen != COMMIT_BODY || in->deadline;
	if (in->type != REC_PUT && in->type != REC_DEL)
		return 1;
	return !in->nm.kind_len ||
	       (in->type == REC_DEL && (in->vlen || in->deadline));
}

/* The next record: 1 if whole and valid, 0 if not (the log ends
 * before it), -1 on a read error. */
static int read_rec(struct reader *r, struct rec_in *in)
{
	unsigned char h[REC_HDR], body[COMMIT_BODY];
	uint32_t crc = 0;
	size_t names;

	in->off = r->pos;
	if (r->size - r->pos < REC_HDR)
		return 0;
	if (reader_take(r, h, REC_HDR, &crc) < 0)
		return -1;
	in->type = h[4];
	in->nm.kind_len = h[5];
	in->nm.key_len = (size_t)get_le(h + 6, 2);
	in->vlen = get_le(h + 8, 8);
	in->deadline = (int64_t)get_le(h + 16, 8);
	if (head_bad(in, r->size - in->off))
		return 0;
	names = in->nm.kind_len + in->nm.key_len;
	buf_reset(&in->names);
	buf_grow(&in->names, names);
	crc = crc32c(0, h + 4, REC_HDR - 4);
	if (reader_take(r, in->names.ptr, names, &crc) < 0 ||
	    reader_take(r, in->type == REC_COMMIT ? body : NULL, in->vlen, &crc) < 0)
		return -1;
	buf_setlen(&in->names, names);
	in->nm.kind = in->names.ptr;
	in->nm.key = in->names.ptr + in->nm.kind_len;
	in->count = in->seq = 0;
	if (in->type == REC_COMMIT) {
		in->count = get_le(body, 8);
		in->seq = get_le(body + 8, 8);
	}
	return crc == get_le(h, 4) &&
	       !memchr(in->nm.kind, '\0', in->nm.kind_len);
}

/* Changes read but not yet closed by a commit record. */
struct pending {
	struct node **ops;
	size_t len, cap;
};

static void pending_add(struct pending *p, struct node *n)
{
	if (p->len == p->cap) {
		p->cap = p->cap ? 2 * p->cap : 256;
		p->ops = xrealloc(p->ops, p->cap * sizeof(*p->ops));
	}
	p->ops[p->len++] = n;
}

static void pending_apply(struct store *s, struct pending *p)
{
	for (size_t i = 0; i < p->len; i++) {
		struct node *n = p->ops[i];
		if (n->op == REC_PUT) {
			index_put(s, n);
		} else {
			struct name nm = { node_kind(n), n->kind_len,
					   node_key(n), n->key_len };
			index_delete(s, &nm);
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
static int replay(struct store *s, struct reader *r, uint64_t *end)
{
	struct rec_in in = { .names = BUF_INIT };
	struct pending p = { NULL, 0, 0 };
	int rc;

	*end = r->pos;
	while ((rc = read_rec(r, &in)) == 1) {
		if (in.type == REC_COMMIT) {
			if (in.count != p.len || in.seq != s->seq + 1)
				break;
			pending_apply(s, &p);
			s->seq = in.seq;
			*end = r->pos;
			continue;
		}
		struct node *n = node_new(s, &in.nm);
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

/* ---- opening ----------------------------------------------------------------- */

static void open_fail(struct store_err *err, enum store_status status, int code,
		      const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static void open_fail(struct store_err *err, enum store_status status, int code,
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

/* Failures to make or lock DIR are "cannot create output" (73). */
static int create_code(int e)
{
	return e == ENOSPC || e == EDQUOT ? EX_TEMPFAIL : EX_CANTCREAT;
}

static int read_env(struct store *s, struct store_err *err)
{
	const char *v = getenv("MSG_STORE_MIN_FREE");

	if (v) {
		if (size_parse(v, &s->min_free) < 0) {
			errno = EINVAL;
			open_fail(err, STORE_SYSERR, EX_USAGE,
				  "MSG_STORE_MIN_FREE '%s'", v);
			return -1;
		}
		s->min_free_set = 1;
	}
	v = getenv("MSG_STORE_NOSYNC");
	s->nosync = v && !strcmp(v, "1");
	return 0;
}

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

static int make_dir(struct store *s, struct store_err *err)
{
	int made = mkdir(s->dir, 0700) == 0;

	if (!made && errno != EEXIST) {
		open_fail(err, STORE_SYSERR, create_code(errno),
			  "cannot create '%s'", s->dir);
		return -1;
	}
	s->dirfd = open(s->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (s->dirfd < 0) {
		open_fail(err, STORE_SYSERR, create_code(errno),
			  "cannot open '%s'", s->dir);
		return -1;
	}
	if (made) {
		char *parent = parent_of(s->dir);
		int r = sync_dir(s, parent);
		if (r < 0)
			open_fail(err, STORE_SYSERR, 0, "cannot sync '%s'", parent);
		free(parent);
		return r;
	}
	return 0;
}

static int lock_dir(struct store *s, struct store_err *err)
{
	/* Whether the lock file is new: a directory that turns out not to
	 * be a store is left as it was found. */
	s->lockfd = openat(s->dirfd, "lock", O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC,
			   0600);
	s->made_lock = s->lockfd >= 0;
	if (s->lockfd < 0 && errno == EEXIST)
		s->lockfd = openat(s->dirfd, "lock", O_RDWR | O_CLOEXEC);
	if (s->lockfd < 0) {
		open_fail(err, STORE_SYSERR, create_code(errno),
			  "cannot open '%s/lock'", s->dir);
		return -1;
	}
	if (flock(s->lockfd, LOCK_EX | LOCK_NB) == 0)
		return 0;
	if (errno == EWOULDBLOCK)
		open_fail(err, STORE_BUSY, EX_TEMPFAIL,
			  "cannot lock '%s/lock': state directory busy", s->dir);
	else
		open_fail(err, STORE_SYSERR, 0, "cannot lock '%s/lock'", s->dir);
	return -1;
}

/* The format version in DIR/version: 0 if there is no such file. */
static int read_version(struct store *s, struct store_err *err, long *version)
{
	char text[64], *end;
	int fd = openat(s->dirfd, "version", O_RDONLY | O_CLOEXEC);
	ssize_t n;

	*version = 0;
	if (fd < 0 && errno == ENOENT)
		return 0;
	n = fd < 0 ? -1 : read_full(fd, text, sizeof(text) - 1);
	if (fd >= 0)
		close(fd);
	if (n < 0) {
		open_fail(err, STORE_SYSERR, 0, "cannot read '%s/version'", s->dir);
		return -1;
	}
	text[n] = '\0';
	if (strncmp(text, version_prefix, strlen(version_prefix)) == 0) {
		errno = 0;
		*version = strtol(text + strlen(version_prefix), &end, 10);
		if (!errno && *version > 0 && *end == '\n' && !end[1])
			return 0;
	}
	open_fail(err, STORE_CORRUPT, EX_DATAERR,
		  "'%s/version': not a message store version file", s->dir);
	return -1;
}

static int refuse_newer(struct store *s, struct store_err *err, uint64_t v)
{
	open_fail(err, STORE_NEWER, EX_DATAERR,
		  "'%s': store format %" PRIu64 " was written by a newer msgtools;"
		  " this one reads format %d and older", s->dir, v, STORE_VERSION);
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

static void list_name(struct listing *l, const char *name)
{
	uint64_t g;

	if (!log_gen(name, "log.", &g)) {
		l->others += strcmp(name, "lock") && strcmp(name, "version") &&
			     strcmp(name, "tmp.version") && !log_gen(name, "tmp.log.", &g);
		return;
	}
	if (g > l->newest) {
		uint64_t was = l->newest;
		l->newest = g;
		if (!was)
			return;
		g = was;
	}
	l->older = xrealloc(l->older, (l->n_older + 1) * sizeof(*l->older));
	l->older[l->n_older++] = g;
}

/* A walk over DIR's names, from the start; NULL with err filled in. */
static DIR *open_listing(struct store *s, struct store_err *err)
{
	int fd = dup(s->dirfd);
	DIR *d = fd < 0 ? NULL : fdopendir(fd);

	if (!d) {
		if (fd >= 0)
			close(fd);
		open_fail(err, STORE_SYSERR, 0, "cannot read '%s'", s->dir);
		return NULL;
	}
	rewinddir(d);	/* the descriptor shares its offset with dirfd */
	return d;
}

static int list_dir(struct store *s, struct store_err *err, struct listing *l)
{
	DIR *d = open_listing(s, err);
	struct dirent *e;

	memset(l, 0, sizeof(*l));
	if (!d)
		return -1;
	while ((errno = 0, e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			list_name(l, e->d_name);
	if (errno) {
		open_fail(err, STORE_SYSERR, 0, "cannot read '%s'", s->dir);
		closedir(d);
		return -1;
	}
	closedir(d);
	return 0;
}

/* Remove the temporary files a crash left: they were never current. */
static int remove_strays(struct store *s, struct store_err *err)
{
	DIR *d = open_listing(s, err);
	struct dirent *e;
	uint64_t g;
	int r = 0;

	if (!d)
		return -1;
	while (r == 0 && (e = readdir(d))) {
		if (strcmp(e->d_name, "tmp.version") &&
		    !log_gen(e->d_name, "tmp.log.", &g))
			continue;
		if (unlinkat(s->dirfd, e->d_name, 0) == 0) {
			s->st.removed++;
		} else if (errno != ENOENT) {
			open_fail(err, STORE_SYSERR, 0, "cannot remove '%s/%s'",
				  s->dir, e->d_name);
			r = -1;
		}
	}
	closedir(d);
	return r;
}

/* Give up a temporary file: it is never current, and if it cannot be
 * removed now (or was renamed after all), the next open removes it. */
static void discard(struct store *s, int fd, const char *tmp)
{
	int e = errno;

	close(fd);
	unlinkat(s->dirfd, tmp, 0);
	errno = e;
}

static void set_gen(struct store *s, uint64_t gen)
{
	s->gen = gen;
	snprintf(s->logname, sizeof(s->logname), "log.%016" PRIx64, gen);
}

/* Write name through tmp.NAME: data, fsync, rename. The directory is
 * not fsynced here. Returns the open file (O_RDWR) or -1. */
static int publish(struct store *s, const char *name, const void *data,
		   size_t n, int keep_open)
{
	char tmp[48];
	int fd;

	snprintf(tmp, sizeof(tmp), "tmp.%s", name);
	fd = openat(s->dirfd, tmp, O_RDWR | O_APPEND | O_CREAT | O_TRUNC | O_CLOEXEC,
		    0600);
	if (fd < 0)
		return fail(s, 0, "cannot create '%s/%s'", s->dir, tmp);
	if (write_all(fd, data, n) < 0)
		fail(s, 0, "cannot write '%s/%s'", s->dir, tmp);
	else if (sync_fd(s, fd) < 0)
		fail(s, 0, "cannot sync '%s/%s'", s->dir, tmp);
	else if (renameat(s->dirfd, tmp, s->dirfd, name) < 0)
		fail(s, 0, "cannot rename '%s/%s'", s->dir, tmp);
	else if (keep_open)
		return fd;
	else if (close(fd) == 0)
		return 0;
	else
		return fail(s, 0, "cannot close '%s/%s'", s->dir, name);
	discard(s, fd, tmp);
	return -1;
}

/* The version file and the first log, whichever a store lacks. */
static int make_files(struct store *s, long version)
{
	char text[32];
	unsigned char h[LOG_HDR];
	int n = snprintf(text, sizeof(text), "%s%d\n", version_prefix, STORE_VERSION);

	if (!version && publish(s, "version", text, (size_t)n, 0) < 0)
		return -1;
	if (!s->gen) {
		set_gen(s, 1);
		log_header(h, s->gen);
		s->log.fd = publish(s, s->logname, h, LOG_HDR, 1);
		if (s->log.fd < 0)
			return -1;
		s->log.off = LOG_HDR;
	}
	if (sync_dir(s, s->dir) < 0)
		return fail(s, 0, "cannot sync '%s'", s->dir);
	return 0;
}

static int create_files(struct store *s, struct store_err *err, long version)
{
	if (make_files(s, version) == 0)
		return 0;
	err->status = STORE_SYSERR;
	err->errnum = errno;
	err->exit = store_exit_code(errno);
	snprintf(err->msg, sizeof(err->msg), "%s", s->err.ptr);
	return -1;
}

/* Check the current log's header; 0, or -1 with err. */
static int check_header(struct store *s, struct store_err *err, uint64_t size)
{
	unsigned char h[LOG_HDR];

	if (size < LOG_HDR) {
		open_fail(err, STORE_CORRUPT, EX_DATAERR,
			  "'%s/%s': truncated log header", s->dir, s->logname);
		return -1;
	}
	if (pread_full(s->log.fd, h, LOG_HDR, 0) < 0) {
		open_fail(err, STORE_SYSERR, 0, "cannot read '%s/%s'", s->dir, s->logname);
		return -1;
	}
	if (memcmp(h, LOG_MAGIC, 8) ||
	    get_le(h + 24, 4) != crc32c(0, h, 24)) {
		open_fail(err, STORE_CORRUPT, EX_DATAERR,
			  "'%s/%s': not a message store log", s->dir, s->logname);
		return -1;
	}
	if (get_le(h + 8, 4) > STORE_VERSION)
		return refuse_newer(s, err, get_le(h + 8, 4));
	if (get_le(h + 16, 8) != s->gen) {
		open_fail(err, STORE_CORRUPT, EX_DATAERR,
			  "'%s/%s': log header names another generation",
			  s->dir, s->logname);
		return -1;
	}
	return 0;
}

/* Cut what a crash left after the last whole batch. */
static int cut_tail(struct store *s, struct store_err *err, uint64_t end,
		    uint64_t size)
{
	s->log.off = end;
	if (end == size)
		return 0;
	s->st.discarded = size - end;
	if (ftruncate(s->log.fd, (off_t)end) < 0 || sync_fd(s, s->log.fd) < 0) {
		open_fail(err, STORE_SYSERR, 0, "cannot truncate '%s/%s'",
			  s->dir, s->logname);
		return -1;
	}
	return 0;
}

static int load_log(struct store *s, struct store_err *err)
{
	struct reader r = { .pos = LOG_HDR };
	struct stat st;
	uint64_t end;
	int rc;

	s->log.fd = openat(s->dirfd, s->logname, O_RDWR | O_APPEND | O_CLOEXEC);
	if (s->log.fd < 0 || fstat(s->log.fd, &st) < 0) {
		open_fail(err, STORE_SYSERR, 0, "cannot open '%s/%s'", s->dir, s->logname);
		return -1;
	}
	if (check_header(s, err, (uint64_t)st.st_size) < 0)
		return -1;
	r.fd = s->log.fd;
	r.size = (uint64_t)st.st_size;
	r.buf = xmalloc(CHUNK);
	rc = replay(s, &r, &end);
	free(r.buf);
	if (rc < 0) {
		open_fail(err, STORE_SYSERR, 0, "cannot read '%s/%s'", s->dir, s->logname);
		return -1;
	}
	return cut_tail(s, err, end, (uint64_t)st.st_size);
}

/* Logs older than the current one outlived a compaction's crash. */
static void remove_older(struct store *s, const struct listing *l)
{
	char name[32];

	for (size_t i = 0; i < l->n_older; i++) {
		snprintf(name, sizeof(name), "log.%016" PRIx64, l->older[i]);
		s->st.removed += unlinkat(s->dirfd, name, 0) == 0;
	}
}

static int recover(struct store *s, struct store_err *err)
{
	struct listing l;
	long version;
	int r = -1;

	if (list_dir(s, err, &l) < 0)
		return -1;
	if (read_version(s, err, &version) < 0)
		goto out;
	if (version > STORE_VERSION) {
		refuse_newer(s, err, (uint64_t)version);
		goto out;
	}
	if (!version && !l.newest && l.others) {
		open_fail(err, STORE_CORRUPT, EX_DATAERR,
			  "'%s': not a message store, and not empty", s->dir);
		if (s->made_lock)
			unlinkat(s->dirfd, "lock", 0);
		goto out;
	}
	if (remove_strays(s, err) < 0)
		goto out;
	if (l.newest) {
		set_gen(s, l.newest);
		if (load_log(s, err) < 0)
			goto out;
	}
	if ((!version || !l.newest) && create_files(s, err, version) < 0)
		goto out;
	remove_older(s, &l);
	r = 0;
out:
	free(l.older);
	return r;
}

struct store *store_open(const char *dir, struct store_err *err)
{
	struct store *s = xmalloc(sizeof(*s));

	memset(s, 0, sizeof(*s));
	memset(err, 0, sizeof(*err));
	crc_init();
	s->dir = xstrdup(dir);
	s->dirfd = s->lockfd = s->log.fd = -1;
	buf_init(&s->log.b, OUT_MAX);
	buf_init(&s->err, 0);
	buf_init(&s->scratch, 0);
	s->rng = 0x9e3779b97f4a7c15ull;
	if (read_env(s, err) < 0 || make_dir(s, err) < 0 ||
	    lock_dir(s, err) < 0 || recover(s, err) < 0) {
		store_close(s);
		return NULL;
	}
	return s;
}

void store_close(struct store *s)
{
	if (!s)
		return;
	index_clear(s);
	free(s->heap);
	if (s->log.fd >= 0)
		close(s->log.fd);
	if (s->lockfd >= 0)
		close(s->lockfd);	/* and with it the lock */
	if (s->dirfd >= 0)
		close(s->dirfd);
	buf_release(&s->log.b);
	buf_release(&s->err);
	buf_release(&s->scratch);
	free(s->dir);
	free(s);
}

/* ---- changes ---------------------------------------------------------------- */

static int check_name(struct store *s, struct name *nm, const char *kind,
		      const void *key, size_t key_len)
{
	nm->kind = kind;
	nm->kind_len = kind ? strlen(kind) : 0;
	nm->key = key_len ? key : "";
	nm->key_len = key_len;
	if (nm->kind_len && nm->kind_len <= STORE_KIND_MAX && key_len <= STORE_KEY_MAX)
		return 0;
	errno = EINVAL;
	return fail(s, 0, "cannot store in '%s': kind of %zu bytes, key of %zu",
		    s->dir, nm->kind_len, key_len);
}

int store_put(struct store *s, const char *kind, const void *key,
	      size_t key_len, const void *value, size_t value_len,
	      int64_t deadline)
{
	struct name nm;
	struct node *n;
	uint64_t roff = s->log.off;

	if (usable(s) < 0 || check_name(s, &nm, kind, key, key_len) < 0 ||
	    check_room(s, REC_HDR + nm.kind_len + key_len + value_len) < 0)
		return -1;
	if (append_rec(&s->log, REC_PUT, &nm, value_len ? value : "", value_len,
		       deadline) < 0)
		return fail(s, 1, "cannot write '%s/%s'", s->dir, s->logname);
	n = node_new(s, &nm);
	n->roff = roff;
	n->vlen = value_len;
	n->deadline = deadline;
	index_put(s, n);
	s->batch++;
	return 0;
}

int store_delete(struct store *s, const char *kind, const void *key,
		 size_t key_len)
{
	struct name nm;

	if (usable(s) < 0 || check_name(s, &nm, kind, key, key_len) < 0)
		return -1;
	if (!find(s, &nm, NULL))
		return 0;
	if (append_rec(&s->log, REC_DEL, &nm, "", 0, 0) < 0)
		return fail(s, 1, "cannot write '%s/%s'", s->dir, s->logname);
	index_delete(s, &nm);
	s->batch++;
	return 0;
}

/* Records in the order they sit in the log, so that a compaction reads
 * the log from front to back, whatever the order of their keys. */
static int by_offset(const void *a, const void *b)
{
	const struct node *x = *(struct node *const *)a;
	const struct node *y = *(struct node *const *)b;

	return (x->roff > y->roff) - (x->roff < y->roff);
}

static struct node **in_log_order(struct store *s)
{
	struct node **v = xmalloc((s->st.records + 1) * sizeof(*v));
	size_t i = 0;

	for (struct node *n = s->head[0]; n; n = n->next[0])
		v[i++] = n;
	qsort(v, i, sizeof(*v), by_offset);
	return v;
}

/* Copy n's record from the current log (through r) to k, the file tmp,
 * checking its CRC on the way. */
static int copy_rec(struct store *s, struct reader *r, const struct node *n,
		    struct sink *k, const char *tmp, char *chunk)
{
	unsigned char h[REC_HDR];
	uint64_t left = node_rlen(n) - REC_HDR;
	uint32_t crc = 0;

	reader_seek(r, n->roff);
	if (reader_take(r, h, REC_HDR, &crc) < 0)
		return fail(s, 0, "cannot read '%s/%s'", s->dir, s->logname);
	crc = crc32c(0, h + 4, REC_HDR - 4);
	if (sink_add(k, h, REC_HDR) < 0)
		return fail(s, 0, "cannot write '%s/%s'", s->dir, tmp);
	while (left) {
		size_t part = left < CHUNK ? (size_t)left : CHUNK;
		if (reader_take(r, chunk, part, &crc) < 0)
			return fail(s, 0, "cannot read '%s/%s'", s->dir, s->logname);
		if (sink_add(k, chunk, part) < 0)
			return fail(s, 0, "cannot write '%s/%s'", s->dir, tmp);
		left -= part;
	}
	if (crc == get_le(h, 4))
		return 0;
	errno = EIO;
	return fail(s, 0, "'%s/%s': offset %" PRIu64 ": checksum mismatch",
		    s->dir, s->logname, n->roff);
}

/* Write the live records and one commit to k, the file tmp, and fsync. */
static int write_compacted(struct store *s, struct sink *k, const char *tmp,
			   uint64_t gen, struct node **live)
{
	struct reader r = { .fd = s->log.fd, .size = s->log.off };
	unsigned char h[LOG_HDR];
	char *chunk = xmalloc(CHUNK);
	int rc = 0;

	r.buf = xmalloc(CHUNK);
	log_header(h, gen);
	if (sink_add(k, h, LOG_HDR) < 0)
		rc = fail(s, 0, "cannot write '%s/%s'", s->dir, tmp);
	for (uint64_t i = 0; i < s->st.records && rc == 0; i++)
		rc = copy_rec(s, &r, live[i], k, tmp, chunk);
	free(chunk);
	free(r.buf);
	if (rc == 0 && (append_commit(k, s->st.records, 1) < 0 ||
			sink_flush(k) < 0))
		rc = fail(s, 0, "cannot write '%s/%s'", s->dir, tmp);
	if (rc == 0 && sync_fd(s, k->fd) < 0)
		rc = fail(s, 0, "cannot sync '%s/%s'", s->dir, tmp);
	return rc;
}

/* The new log is in place: point the index at it and drop the old one. */
static void switch_log(struct store *s, struct sink *k, uint64_t gen,
		       struct node **live)
{
	uint64_t off = LOG_HDR;
	char old[32];

	for (uint64_t i = 0; i < s->st.records; i++) {
		live[i]->roff = off;
		off += node_rlen(live[i]);
	}
	memcpy(old, s->logname, sizeof(old));
	unlinkat(s->dirfd, old, 0);	/* a leftover goes at the next open */
	close(s->log.fd);
	s->log.fd = k->fd;
	s->log.off = k->off;
	set_gen(s, gen);
	s->seq = 1;
	s->st.compactions++;
}

/* Rename tmp to name and make that durable; any failure is fatal, for
 * the new log may be current, or become so. */
static int install(struct store *s, const char *tmp, const char *name)
{
	if (renameat(s->dirfd, tmp, s->dirfd, name) < 0)
		return fail(s, 1, "cannot rename '%s/%s'", s->dir, tmp);
	if (sync_dir(s, s->dir) < 0)
		return fail(s, 1, "cannot sync '%s'", s->dir);
	return 0;
}

static int compact_log(struct store *s)
{
	struct sink k = { -1, 0, BUF_INIT };
	uint64_t gen = s->gen + 1;
	char tmp[48], name[32];
	struct node **live;
	int r = -1;

	snprintf(name, sizeof(name), "log.%016" PRIx64, gen);
	snprintf(tmp, sizeof(tmp), "tmp.%s", name);
	k.fd = openat(s->dirfd, tmp, O_RDWR | O_APPEND | O_CREAT | O_TRUNC | O_CLOEXEC,
		      0600);
	if (k.fd < 0)
		return fail(s, 0, "cannot create '%s/%s'", s->dir, tmp);
	live = in_log_order(s);
	if (write_compacted(s, &k, tmp, gen, live) < 0) {
		discard(s, k.fd, tmp);	/* the old log is still whole */
	} else if (install(s, tmp, name) < 0) {
		int e = errno;
		close(k.fd);
		errno = e;
	} else {
		switch_log(s, &k, gen, live);
		r = 0;
	}
	free(live);
	buf_release(&k.b);
	return r;
}

/* Compact when dead bytes outweigh live ones, and there is room. */
static int maybe_compact(struct store *s)
{
	uint64_t dead = s->log.off - LOG_HDR - s->st.live_bytes;
	struct statvfs v;

	if (dead < COMPACT_MIN || dead < s->st.live_bytes)
		return 0;
	if (fstatvfs(s->log.fd, &v) == 0 &&
	    (uint64_t)v.f_bavail * v.f_frsize < s->st.live_bytes + margin(s, &v))
		return 0;
	return compact_log(s);
}

/* Append the commit record and fsync: the batch is durable. */
static int commit_batch(struct store *s)
{
	if (usable(s) < 0)
		return -1;
	if (!s->batch)
		return 0;
	if (append_commit(&s->log, s->batch, s->seq + 1) < 0 ||
	    sink_flush(&s->log) < 0)
		return fail(s, 1, "cannot write '%s/%s'", s->dir, s->logname);
	if (sync_fd(s, s->log.fd) < 0)
		return fail(s, 1, "cannot sync '%s/%s'", s->dir, s->logname);
	s->seq++;
	s->batch = 0;
	s->room = 0;
	s->st.commits++;
	return 0;
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
	return compact_log(s);
}

/* ---- reading ---------------------------------------------------------------- */

static void fill_rec(const struct node *n, struct store_rec *rec)
{
	rec->kind = node_kind(n);
	rec->key = node_key(n);
	rec->key_len = n->key_len;
	rec->value_len = n->vlen;
	rec->deadline = n->deadline;
}

int store_get(struct store *s, const char *kind, const void *key,
	      size_t key_len, struct buf *value, int64_t *deadline)
{
	struct name nm;
	struct node *n;

	if (usable(s) < 0 || check_name(s, &nm, kind, key, key_len) < 0)
		return -1;
	n = find(s, &nm, NULL);
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

static int has_prefix(const struct node *n, const struct buf *prefix)
{
	return n->key_len >= prefix->len &&
	       (!prefix->len || !memcmp(node_key(n), prefix->ptr, prefix->len));
}

/* The first node after the last one returned (or at the start). */
static struct node *iter_seek(struct store_iter *it)
{
	struct name nm = { it->kind.ptr, it->kind.len, it->prefix.ptr, it->prefix.len };
	struct node *n;

	if (it->started) {
		nm = (struct name){ it->last_kind.ptr, it->last_kind.len,
				    it->last_key.ptr, it->last_key.len };
	} else if (it->all_kinds) {
		return it->s->head[0];
	}
	n = seek(it->s, &nm, NULL);
	if (it->started && n && node_cmp(n, &nm) == 0)
		n = n->next[0];
	return n;
}

int store_iter_next(struct store_iter *it, struct store_rec *rec,
		    struct buf *value)
{
	struct node *n = iter_seek(it);

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
	if (value && (usable(it->s) < 0 || read_value(it->s, n, value) < 0))
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
	if (!s->heap_len)
		return 0;
	fill_rec(s->heap[0], rec);
	return 1;
}

int64_t store_next_deadline(const struct store *s)
{
	return s->heap_len ? s->heap[0]->deadline : 0;
}

const char *store_last_error(const struct store *s)
{
	return s->err.len ? s->err.ptr : "no error";
}

void store_get_stats(const struct store *s, struct store_stats *st)
{
	*st = s->st;
	st->log_bytes = s->log.off;
}

int store_exit_code(int errnum)
{
	return errnum == ENOSPC || errnum == EDQUOT ? EX_TEMPFAIL : EX_IOERR;
}
