/*
 * store-compact: the log rewritten with only its live records.
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
 */
#include "store-compact.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "crc32c.h"

#define COMPACT_MIN (4ull << 20) /* dead log bytes before compaction pays */
#define COPY_CHUNK (64u << 10)

int compact_due(const struct store_log *l, const struct store_index *x)
{
	uint64_t dead = l->out.off - LOG_HDR - x->live_bytes;

	return dead >= COMPACT_MIN && dead >= x->live_bytes;
}

/* Records in the order they sit in the log, so that a compaction reads
 * the log from front to back, whatever the order of their keys. */
static int by_offset(const void *a, const void *b)
{
	const struct index_node *p = *(struct index_node *const *)a;
	const struct index_node *q = *(struct index_node *const *)b;

	return (p->roff > q->roff) - (p->roff < q->roff);
}

static struct index_node **in_log_order(const struct store_index *x)
{
	struct index_node **v = xmalloc((x->records + 1) * sizeof(*v));
	size_t i = 0;

	for (struct index_node *n = index_first(x); n; n = n->next[0])
		v[i++] = n;
	qsort(v, i, sizeof(*v), by_offset);
	return v;
}

/* Copy n's record from the current log (through r) to k, the file tmp,
 * checking its CRC on the way. */
static int copy_rec(struct store_log *l, struct log_reader *r,
		    const struct index_node *n, struct log_sink *k,
		    const char *tmp, char *chunk)
{
	unsigned char h[REC_HDR];
	uint64_t left = node_rlen(n) - REC_HDR;
	uint32_t crc = 0;

	reader_seek(r, n->roff);
	if (reader_take(r, h, REC_HDR, &crc) < 0)
		return log_fail(l, 0, "cannot read '%s/%s'", l->dir, l->name);
	crc = crc32c(0, h + 4, REC_HDR - 4);
	if (sink_add(k, h, REC_HDR) < 0)
		return log_fail(l, 0, "cannot write '%s/%s'", l->dir, tmp);
	while (left) {
		size_t part = left < COPY_CHUNK ? (size_t)left : COPY_CHUNK;
		if (reader_take(r, chunk, part, &crc) < 0)
			return log_fail(l, 0, "cannot read '%s/%s'", l->dir, l->name);
		if (sink_add(k, chunk, part) < 0)
			return log_fail(l, 0, "cannot write '%s/%s'", l->dir, tmp);
		left -= part;
	}
	if (crc == get_le(h, 4))
		return 0;
	errno = EIO;
	return log_fail(l, 0, "'%s/%s': offset %" PRIu64 ": checksum mismatch",
			l->dir, l->name, n->roff);
}

/* Write the live records and one commit to k, the file tmp, and fsync. */
static int write_compacted(struct store_log *l, uint64_t records,
			   struct index_node **live, struct log_sink *k,
			   const char *tmp, uint64_t gen)
{
	struct log_reader r;
	unsigned char h[LOG_HDR];
	char *chunk = xmalloc(COPY_CHUNK);
	int rc = 0;

	reader_init(&r, l->out.fd, 0, l->out.off);
	log_header(h, gen);
	if (sink_add(k, h, LOG_HDR) < 0)
		rc = log_fail(l, 0, "cannot write '%s/%s'", l->dir, tmp);
	for (uint64_t i = 0; i < records && rc == 0; i++)
		rc = copy_rec(l, &r, live[i], k, tmp, chunk);
	free(chunk);
	reader_release(&r);
	if (rc == 0 && (sink_add_commit(k, records, 1) < 0 || sink_flush(k) < 0))
		rc = log_fail(l, 0, "cannot write '%s/%s'", l->dir, tmp);
	if (rc == 0 && log_sync_fd(l, k->fd) < 0)
		rc = log_fail(l, 0, "cannot sync '%s/%s'", l->dir, tmp);
	return rc;
}

/* The records now sit one after another behind the new log's header. */
static void point_at_new_log(uint64_t records, struct index_node **live)
{
	uint64_t off = LOG_HDR;

	for (uint64_t i = 0; i < records; i++) {
		live[i]->roff = off;
		off += node_rlen(live[i]);
	}
}

int compact_log(struct store_log *l, struct store_index *x)
{
	struct log_sink k = { -1, 0, BUF_INIT };
	uint64_t gen = l->gen + 1;
	char tmp[LOG_NAME_MAX + 16], name[LOG_NAME_MAX];
	struct index_node **live;
	int r = -1;

	snprintf(name, sizeof(name), "log.%016" PRIx64, gen);
	snprintf(tmp, sizeof(tmp), "tmp.%s", name);
	k.fd = openat(l->dirfd, tmp, O_RDWR | O_APPEND | O_CREAT | O_TRUNC | O_CLOEXEC,
		      0600);
	if (k.fd < 0)
		return log_fail(l, 0, "cannot create '%s/%s'", l->dir, tmp);
	live = in_log_order(x);
	if (write_compacted(l, x->records, live, &k, tmp, gen) < 0) {
		log_discard(l, k.fd, tmp);	/* the old log is still whole */
	} else if (log_install(l, tmp, name) < 0) {
		int e = errno;
		close(k.fd);
		errno = e;
	} else {
		point_at_new_log(x->records, live);
		log_switch(l, &k, gen);
		r = 0;
	}
	free(live);
	buf_release(&k.b);
	return r;
}
