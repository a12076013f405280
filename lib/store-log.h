/*
 * store-log: the store's files on disk: the current log (records
 * appended through a buffer, commits made durable by fsync, records read
 * back and checked), files published through tmp.* names, and the
 * record of what failed. The store, its recovery and its compaction all
 * change the disk through these verbs.
 */
#ifndef MSG_STORE_LOG_H
#define MSG_STORE_LOG_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "store.h"
#include "store-format.h"

/* Bytes on their way to a file: appended to b, written when b is full. */
struct log_sink {
	int fd;
	uint64_t off;		/* file size once b is written */
	struct buf b;
};

struct store_log {
	char *dir;		/* the store's directory, as named to open */
	int dirfd;
	uint64_t gen;
	char name[LOG_NAME_MAX];	/* "log." and gen in hex */
	struct log_sink out;	/* the current log */
	uint64_t seq;		/* of the last commit record in this log */
	uint64_t batch;		/* records since then */
	int nosync;		/* $MSG_STORE_NOSYNC=1: benchmarks only */
	int failed;		/* errno that made the store unusable, or 0 */
	struct buf err;		/* the last failure, for store_last_error */
	struct buf scratch;	/* record heads read back */
	struct store_stats st;	/* the counters the log keeps */
};

void log_init(struct store_log *l, const char *dir);
/* Close the files and free everything. */
void log_release(struct store_log *l);

/* Note a failure, with errno's text; a fatal one makes the store
 * unusable. Returns -1 with errno unchanged. */
int log_fail(struct store_log *l, int fatal, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* 0, or -1 with the errno of the failure that made the store unusable. */
int log_usable(const struct store_log *l);

int log_sync_fd(struct store_log *l, int fd);
int log_sync_dir(struct store_log *l, const char *path);
void log_set_gen(struct store_log *l, uint64_t gen);
void log_header(unsigned char h[LOG_HDR], uint64_t gen);

int sink_add(struct log_sink *k, const void *p, size_t n);
int sink_flush(struct log_sink *k);
/* Append one record to k; 0 or -1 (errno). */
int sink_add_rec(struct log_sink *k, int type, const struct rec_name *nm,
		 const void *value, uint64_t vlen, int64_t deadline);
int sink_add_commit(struct log_sink *k, uint64_t count, uint64_t seq);

/* Append a put or delete to the current log; fatal on failure. */
int log_append(struct store_log *l, int type, const struct rec_name *nm,
	       const void *value, uint64_t vlen, int64_t deadline);
/* Close the batch with a commit record and fsync: 1 when a batch was
 * made durable, 0 when there was none, -1 (fatal). */
int log_commit(struct store_log *l);

/* pread(2) all n bytes at off: 0, or -1 (EIO if the file is shorter). */
int log_pread(int fd, void *p, size_t n, uint64_t off);
/* Read back the value of the record at roff, whose kind and key take
 * names bytes, checking its CRC: 0, or -1 (EIO on a mismatch). */
int log_read_value(struct store_log *l, uint64_t roff, size_t names,
		   uint64_t vlen, struct buf *value);

/* Sequential, buffered reads of a log, by offset. */
struct log_reader {
	int fd;
	uint64_t pos;		/* file offset of the next byte to take */
	uint64_t size;
	char *buf;
	size_t at, len;		/* buf[at..len) are the bytes from pos on */
};

void reader_init(struct log_reader *r, int fd, uint64_t pos, uint64_t size);
void reader_release(struct log_reader *r);
/* Take n bytes into dst (or skip them when dst is NULL), adding them to
 * *crc. 0, or -1 with errno. The caller has checked n against size. */
int reader_take(struct log_reader *r, void *dst, uint64_t n, uint32_t *crc);
/* Go forward to off, keeping what the buffer holds beyond it. */
void reader_seek(struct log_reader *r, uint64_t off);

/* A record as read from the log. */
struct rec_in {
	int type;
	struct rec_name nm;	/* pointing into names */
	uint64_t off, vlen, count, seq;
	int64_t deadline;
	struct buf names;
};
/* The next record: 1 if whole and valid, 0 if not (the log ends
 * before it), -1 on a read error. */
int reader_next_rec(struct log_reader *r, struct rec_in *in);

/* Write name through tmp.NAME: data, fsync, rename. The directory is
 * not fsynced here. Returns the open file (O_RDWR) when keep_open, else
 * 0; -1 on failure, the temporary removed. */
int log_publish(struct store_log *l, const char *name, const void *data,
		size_t n, int keep_open);
/* Give up a temporary file: close and remove it, errno kept. */
void log_discard(struct store_log *l, int fd, const char *tmp);
/* Rename tmp to name and fsync the directory; fatal on failure, for the
 * file named may be current, or become so. */
int log_install(struct store_log *l, const char *tmp, const char *name);
/* Make the log k of generation gen, installed, the current one, and
 * remove the old. */
void log_switch(struct store_log *l, struct log_sink *k, uint64_t gen);

#endif
