/*
 * store: the durable state of a stateful tool (msg-aggregate,
 * msg-resequence, msg-trickle) in a directory it owns alone: records
 * under a kind and a key, with a value and an absolute deadline, made
 * durable in groups by store_commit(). msg-store(5) describes the
 * guarantees and the files; store.c, and the store-*.c parts it lists,
 * say how they are kept.
 *
 * A tool queues any number of puts and deletes, calls store_commit()
 * once, and only then emits what it derived from them: a crash at any
 * instant loses no committed change, and a batch that was not committed
 * vanishes whole at the next store_open().
 */
#ifndef MSG_STORE_H
#define MSG_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"

#define STORE_VERSION 1		/* the newest format this code reads */
#define STORE_KIND_MAX 255	/* bytes in a kind, not counting the NUL */
#define STORE_KEY_MAX 65535	/* bytes in a key */
/* Free space kept on the file system below which puts are refused:
 * the larger of this and STORE_MIN_FREE_PCT of the file system, unless
 * $MSG_STORE_MIN_FREE gives a size (bytes, or with k, M, G, T). */
#define STORE_MIN_FREE (64ull << 20)
#define STORE_MIN_FREE_PCT 1

struct store;

enum store_status {
	STORE_OK,
	STORE_BUSY,	/* another process holds DIR/lock: exit 75 */
	STORE_NEWER,	/* written by a newer format version: exit 65 */
	STORE_CORRUPT,	/* not a store, or damaged where no crash can: exit 65 */
	STORE_SYSERR,	/* a system call failed; errnum says which way */
};

struct store_err {
	enum store_status status;
	int errnum;		/* for STORE_SYSERR, else 0 */
	int exit;		/* the sysexits(3) status a tool exits with */
	char msg[600];		/* "cannot lock 'st/lock': state directory busy" */
};

/* One record as the index sees it; the pointers are valid until the
 * store is next changed. kind and key are NUL-terminated for
 * convenience (the NUL is not counted in key_len); keys may hold NUL. */
struct store_rec {
	const char *kind;
	const char *key;
	size_t key_len;
	uint64_t value_len;
	int64_t deadline;	/* absolute, Unix ms; 0 = none */
};

struct store_stats {
	uint64_t records;	/* in the index, committed or not */
	uint64_t live_bytes;	/* log bytes those records take */
	uint64_t log_bytes;	/* size of the current log */
	uint64_t commits;	/* store_commit calls that wrote a batch */
	uint64_t syncs;		/* fsync(2) calls, files and directories */
	uint64_t compactions;
	uint64_t discarded;	/* bytes of torn or uncommitted tail dropped at open */
	uint64_t removed;	/* temporary files and old logs removed at open */
};

/*
 * Open the store in dir, creating it (mode 0700) if needed, and recover
 * from whatever a crash left. NULL on failure, with err filled in.
 * $MSG_STORE_MIN_FREE sets the free-space margin; $MSG_STORE_NOSYNC=1
 * turns every fsync off, which makes the store unsafe (benchmarks only).
 */
struct store *store_open(const char *dir, struct store_err *err);
/*
 * The last committed state of the store in dir, read without its lock
 * and changing nothing, for a reader beside the tool that holds it (an
 * operator's status command): get and iterate work; puts, deletes and
 * commits fail (EROFS). NULL with err filled in (exit 66 when dir is
 * not a store).
 */
struct store *store_open_snapshot(const char *dir, struct store_err *err);
/* Release everything and unlock. Changes not committed are lost: the
 * next open drops whatever of them reached the log. */
void store_close(struct store *s);

/*
 * Queue a change; it is visible to get and iterate at once, durable after
 * store_commit(). 0, or -1 with errno (and store_last_error): EINVAL for
 * a bad kind or key, ENOSPC when the file system is below the margin
 * (puts only: deletes are always accepted, so a full store can drain),
 * or an I/O error, after which the store must be closed.
 */
int store_put(struct store *s, const char *kind, const void *key,
	      size_t key_len, const void *value, size_t value_len,
	      int64_t deadline);
/* Deleting an absent record is not an error and writes nothing. */
int store_delete(struct store *s, const char *kind, const void *key,
		 size_t key_len);
/*
 * Make every queued change durable, with one fsync. 0, or -1 with errno:
 * then nothing queued may be taken as durable (some of it may turn out to
 * be) and the store must be closed. Once the batch is durable, commit may
 * compact the log (see store_compact); a failure of that is reported here
 * too, which errs on the side of emitting late, never early.
 */
int store_commit(struct store *s);
/* Rewrite the log with only the live records (commits first). 0 or -1. */
int store_compact(struct store *s);

/* 1 and the value (buf reset first; value may be NULL), 0 if absent,
 * -1 with errno: EIO for a record that fails its checksum. */
int store_get(struct store *s, const char *kind, const void *key,
	      size_t key_len, struct buf *value, int64_t *deadline);

/*
 * Records in (kind, key) byte order: of one kind whose key starts with a
 * prefix, or of every kind (kind NULL: the prefix then filters, slower).
 * The store may be changed between calls: the walk goes on after the
 * last key it returned.
 */
struct store_iter {
	struct store *s;
	int all_kinds;
	struct buf kind;
	struct buf prefix;
	struct buf last_kind, last_key;	/* empty before the first record */
	int started;
};
void store_iter_init(struct store_iter *it, struct store *s,
		     const char *kind, const void *prefix, size_t prefix_len);
/* 1 with rec (and the value, when value is not NULL), 0 at the end, -1
 * with errno if the value cannot be read. */
int store_iter_next(struct store_iter *it, struct store_rec *rec,
		    struct buf *value);
void store_iter_release(struct store_iter *it);

/*
 * The record with the earliest deadline (ties in key order): 1 and rec,
 * or 0 if no record has a deadline. A timer loop takes it while its
 * deadline has passed, and deletes it or puts it with a later deadline.
 */
int store_earliest(struct store *s, struct store_rec *rec);
/* The earliest deadline, or 0 if none: what poll(2) waits for. */
int64_t store_next_deadline(const struct store *s);

/* What the last failure was, as a diagnostic without the program name. */
const char *store_last_error(const struct store *s);
/* Has an operation failed (so store_last_error says why)? */
int store_failed(const struct store *s);
/* The directory it was opened on. */
const char *store_dir(const struct store *s);
void store_get_stats(const struct store *s, struct store_stats *st);
/* The exit status for a failed operation's errno: 75 for a full file
 * system (ENOSPC, EDQUOT), 74 for anything else. */
int store_exit_code(int errnum);

#endif
