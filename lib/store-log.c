/* store-log: writing, syncing and reading back the store's files (see
 * store-log.h; the format is in store-format.h). */
#include "store-log.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "crc32c.h"
#include "io.h"

#define OUT_MAX (64u << 10)	/* write buffer; larger values go straight out */
#define CHUNK (64u << 10)	/* reads during recovery and compaction */

void log_init(struct store_log *l, const char *dir)
{
	memset(l, 0, sizeof(*l));
	l->dir = xstrdup(dir);
	l->dirfd = l->out.fd = -1;
	buf_init(&l->out.b, OUT_MAX);
	buf_init(&l->err, 0);
	buf_init(&l->scratch, 0);
}

void log_release(struct store_log *l)
{
	if (l->out.fd >= 0)
		close(l->out.fd);
	if (l->dirfd >= 0)
		close(l->dirfd);
	buf_release(&l->out.b);
	buf_release(&l->err);
	buf_release(&l->scratch);
	free(l->dir);
}

int log_fail(struct store_log *l, int fatal, const char *fmt, ...)
{
	int e = errno;
	va_list ap;

	buf_reset(&l->err);
	va_start(ap, fmt);
	buf_vaddf(&l->err, fmt, ap);
	va_end(ap);
	buf_addf(&l->err, ": %s", strerror(e));
	if (fatal)
		l->failed = e;
	errno = e;
	return -1;
}

int log_usable(const struct store_log *l)
{
	if (!l->failed)
		return 0;
	errno = l->failed;
	return -1;
}

int log_sync_fd(struct store_log *l, int fd)
{
	if (l->nosync)
		return 0;
	l->st.syncs++;
	return xfsync(fd);
}

int log_sync_dir(struct store_log *l, const char *path)
{
	if (l->nosync)
		return 0;
	l->st.syncs++;
	return fsync_dir(path);
}

void log_set_gen(struct store_log *l, uint64_t gen)
{
	l->gen = gen;
	snprintf(l->name, sizeof(l->name), "log.%016" PRIx64, gen);
}

void log_header(unsigned char h[LOG_HDR], uint64_t gen)
{
	memset(h, 0, LOG_HDR);
	memcpy(h, LOG_MAGIC, 8);
	put_le(h + 8, STORE_VERSION, 4);
	put_le(h + 16, gen, 8);
	put_le(h + 24, crc32c(0, h, 24), 4);
}

/* ---- writing -------------------------------------------------------------- */

int sink_flush(struct log_sink *k)
{
	if (!k->b.len)
		return 0;
	if (write_all(k->fd, k->b.ptr, k->b.len) < 0)
		return -1;
	buf_reset(&k->b);
	return 0;
}

int sink_add(struct log_sink *k, const void *p, size_t n)
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

static void rec_head(unsigned char h[REC_HDR], int type, const struct rec_name *nm,
		     uint64_t vlen, int64_t deadline)
{
	put_le(h + 4, (uint64_t)type, 1);
	put_le(h + 5, nm->kind_len, 1);
	put_le(h + 6, nm->key_len, 2);
	put_le(h + 8, vlen, 8);
	put_le(h + 16, (uint64_t)deadline, 8);
}

int sink_add_rec(struct log_sink *k, int type, const struct rec_name *nm,
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

int sink_add_commit(struct log_sink *k, uint64_t count, uint64_t seq)
{
	static const struct rec_name none = { "", 0, "", 0 };
	unsigned char v[COMMIT_BODY];

	put_le(v, count, 8);
	put_le(v + 8, seq, 8);
	return sink_add_rec(k, REC_COMMIT, &none, v, sizeof(v), 0);
}

int log_append(struct store_log *l, int type, const struct rec_name *nm,
	       const void *value, uint64_t vlen, int64_t deadline)
{
	if (sink_add_rec(&l->out, type, nm, value, vlen, deadline) < 0)
		return log_fail(l, 1, "cannot write '%s/%s'", l->dir, l->name);
	l->batch++;
	return 0;
}

int log_commit(struct store_log *l)
{
	if (log_usable(l) < 0)
		return -1;
	if (!l->batch)
		return 0;
	if (sink_add_commit(&l->out, l->batch, l->seq + 1) < 0 ||
	    sink_flush(&l->out) < 0)
		return log_fail(l, 1, "cannot write '%s/%s'", l->dir, l->name);
	if (log_sync_fd(l, l->out.fd) < 0)
		return log_fail(l, 1, "cannot sync '%s/%s'", l->dir, l->name);
	l->seq++;
	l->batch = 0;
	l->st.commits++;
	return 1;
}

/* ---- reading back ------------------------------------------------------------ */

int log_pread(int fd, void *p, size_t n, uint64_t off)
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
static int readable(struct store_log *l, uint64_t end)
{
	if (end <= l->out.off - l->out.b.len)
		return 0;
	if (sink_flush(&l->out) < 0)
		return log_fail(l, 1, "cannot write '%s/%s'", l->dir, l->name);
	return 0;
}

int log_read_value(struct store_log *l, uint64_t roff, size_t names,
		   uint64_t vlen, struct buf *value)
{
	size_t head = REC_HDR + names;
	uint32_t crc;

	if (readable(l, roff + head + vlen) < 0)
		return -1;
	buf_reset(&l->scratch);
	buf_grow(&l->scratch, head);
	buf_reset(value);
	buf_grow(value, vlen);
	if (log_pread(l->out.fd, l->scratch.ptr, head, roff) < 0 ||
	    log_pread(l->out.fd, value->ptr, vlen, roff + head) < 0)
		return log_fail(l, 0, "cannot read '%s/%s'", l->dir, l->name);
	buf_setlen(value, vlen);
	crc = crc32c(0, l->scratch.ptr + 4, head - 4);
	crc = crc32c(crc, value->ptr, value->len);
	if (crc != get_le((unsigned char *)l->scratch.ptr, 4)) {
		errno = EIO;
		return log_fail(l, 0, "'%s/%s': offset %" PRIu64 ": checksum mismatch",
				l->dir, l->name, roff);
	}
	return 0;
}

/* ---- reading in order ---------------------------------------------------------- */

void reader_init(struct log_reader *r, int fd, uint64_t pos, uint64_t size)
{
	memset(r, 0, sizeof(*r));
	r->fd = fd;
	r->pos = pos;
	r->size = size;
	r->buf = xmalloc(CHUNK);
}

void reader_release(struct log_reader *r)
{
	free(r->buf);
	r->buf = NULL;
}

int reader_take(struct log_reader *r, void *dst, uint64_t n, uint32_t *crc)
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
			if (log_pread(r->fd, r->buf, want, r->pos) < 0)
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

void reader_seek(struct log_reader *r, uint64_t off)
{
	if (off >= r->pos && off - r->pos <= r->len - r->at)
		r->at += off - r->pos;
	else
		r->at = r->len = 0;
	r->pos = off;
}

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

int reader_next_rec(struct log_reader *r, struct rec_in *in)
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

/* ---- files published whole -------------------------------------------------- */

void log_discard(struct store_log *l, int fd, const char *tmp)
{
	int e = errno;

	close(fd);
	unlinkat(l->dirfd, tmp, 0);
	errno = e;
}

int log_publish(struct store_log *l, const char *name, const void *data,
		size_t n, int keep_open)
{
	char tmp[LOG_NAME_MAX + 16];
	int fd;

	snprintf(tmp, sizeof(tmp), "tmp.%s", name);
	fd = openat(l->dirfd, tmp, O_RDWR | O_APPEND | O_CREAT | O_TRUNC | O_CLOEXEC,
		    0600);
	if (fd < 0)
		return log_fail(l, 0, "cannot create '%s/%s'", l->dir, tmp);
	if (write_all(fd, data, n) < 0)
		log_fail(l, 0, "cannot write '%s/%s'", l->dir, tmp);
	else if (log_sync_fd(l, fd) < 0)
		log_fail(l, 0, "cannot sync '%s/%s'", l->dir, tmp);
	else if (renameat(l->dirfd, tmp, l->dirfd, name) < 0)
		log_fail(l, 0, "cannot rename '%s/%s'", l->dir, tmp);
	else if (keep_open)
		return fd;
	else if (close(fd) == 0)
		return 0;
	else
		return log_fail(l, 0, "cannot close '%s/%s'", l->dir, name);
	log_discard(l, fd, tmp);
	return -1;
}

int log_install(struct store_log *l, const char *tmp, const char *name)
{
	if (renameat(l->dirfd, tmp, l->dirfd, name) < 0)
		return log_fail(l, 1, "cannot rename '%s/%s'", l->dir, tmp);
	if (log_sync_dir(l, l->dir) < 0)
		return log_fail(l, 1, "cannot sync '%s'", l->dir);
	return 0;
}

void log_switch(struct store_log *l, struct log_sink *k, uint64_t gen)
{
	unlinkat(l->dirfd, l->name, 0);	/* a leftover goes at the next open */
	close(l->out.fd);
	l->out.fd = k->fd;
	l->out.off = k->off;
	log_set_gen(l, gen);
	l->seq = 1;
	l->st.compactions++;
}
