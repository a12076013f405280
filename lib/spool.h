/*
 * spool: dir: channels, a directory of messages one file each (msg-tools(7),
 * Channels), in the maildir manner:
 *
 *   DIR/tmp/  files being written
 *   DIR/new/  messages ready to read, named so that they sort in arrival
 *             order (a UUIDv7: time first, unique across processes and
 *             hosts), each holding one frame
 *   DIR/cur/  messages a reader has claimed
 *
 * A writer fills tmp/NAME, fsyncs it, renames it to new/NAME.msg and
 * fsyncs new/, so a message is either absent or whole and durable. It
 * does so for many messages at once (group commit): each is written and
 * synced in tmp/, then they are renamed together and new/ synced once.
 * A reader takes the oldest name in new/, locks the file (flock) and
 * renames it to cur/: two readers never hold the same message. It deletes
 * the file only after its own outputs for it are durable; a reader that
 * dies leaves the file locked by nobody in cur/, and the next reader takes
 * it from there. Delivery is at least once.
 *
 *   DIR/bad/  messages a reader could not process, and entries of new/
 *             that are not regular files, set aside so that they do not
 *             stop every reader after them
 *
 * A writer holds a lock on its file in tmp/; a reader removes files there
 * that nobody holds and that have not changed for an hour (left by a
 * writer that was killed).
 */
#ifndef MSG_SPOOL_H
#define MSG_SPOOL_H

#include "buf.h"

struct spool;

/*
 * Open the spool directory, NULL with a reason in err. Its tmp/, new/ and
 * cur/ are made (0700) when missing; dir itself only when create is set
 * (writers): a reader is told the directory does not exist.
 */
struct spool *spool_open(const char *dir, int create, struct buf *err);
void spool_close(struct spool *s);

/*
 * Writing: a new temporary file (its descriptor), then commit or abort.
 * A committed message is synced but waits in tmp/ until spool_publish
 * (which commit calls itself every 256 messages) moves it and the others
 * waiting into new/ and makes that durable. What is not published when
 * the spool is closed is removed.
 */
int spool_begin(struct spool *s);
int spool_commit(struct spool *s);
void spool_abort(struct spool *s);
int spool_publish(struct spool *s);
/*
 * Naming, for a writer that must find its file again after a crash
 * (msg-dedupe --state): the next spool_begin names its file by id (a
 * UUIDv7, so that new/ still sorts in time) instead of a new one; and
 * spool_adopt takes up a file of that id that a writer which died left
 * committed in tmp/, to be published with the next spool_publish: 1, 0
 * when there is none (already published, or never written), -1.
 * Once a spool names files, what it cannot publish (a failure, or the
 * writer closed or gone first) stays in tmp/ to be taken up, never
 * removed by the writer: the writer's state may already name it.
 */
void spool_name_next(struct spool *s, const char *id);
int spool_adopt(struct spool *s, const char *id);

/*
 * Reading. spool_claim takes the oldest entry of cur/ (left by a reader
 * that died) or new/ and says what it found:
 *
 *   SPOOL_MESSAGE    a regular file, claimed (locked, moved to cur/) and
 *                    open for reading from its start: e->fd, e->name
 *   SPOOL_SET_ASIDE  something else (a symbolic link, directory, FIFO,
 *                    socket or device): never opened or followed, only
 *                    moved to bad/ as e->where; e->kind says what it is
 *   SPOOL_SKIPPED    an entry it could not read, claim or set aside: left
 *                    where it is, e->action and e->err say why; it is
 *                    passed over, silently, for the rest of this reading
 *   SPOOL_NONE       nothing (more) to read: none there and wait is 0, or
 *                    asked to stop while waiting
 *
 * e->dir and e->name say where the entry was ("new" or "cur"). An entry
 * another reader took first is passed over without a word. -1 with errno
 * when the spool itself cannot be read.
 *
 * A reader may hold up to SPOOL_CLAIMS_MAX claimed messages (group
 * commit: their outputs made durable together, then all deleted); the
 * last one claimed is the message in hand. Reading with wait 0 from the
 * first claim on is a --once run: it stops at the newest entry there was
 * then.
 */
#define SPOOL_CLAIMS_MAX 64
enum spool_found { SPOOL_NONE, SPOOL_MESSAGE, SPOOL_SET_ASIDE, SPOOL_SKIPPED };
struct spool_entry {
	int fd;
	const char *dir;	/* "new" or "cur" */
	struct buf name;
	const char *kind;	/* SPOOL_SET_ASIDE: "a directory", ... */
	struct buf where;	/* SPOOL_SET_ASIDE: "dir:DIR/bad/NAME" */
	const char *action;	/* SPOOL_SKIPPED: "read", "claim" or "set aside" */
	int err;		/* SPOOL_SKIPPED: errno */
};
#define SPOOL_ENTRY_INIT { -1, "new", BUF_INIT, NULL, BUF_INIT, NULL, 0 }
void spool_entry_release(struct spool_entry *e);
int spool_claim(struct spool *s, int wait, struct spool_entry *e);
/* For a reader that waits on several inputs at once (poll(2)): the
 * descriptor that becomes readable when new/ may have changed, its
 * pending notices read; -1 when there is none (look every POLL_MS). The
 * spool is then read to its end whenever it is read, as a waiting
 * reader's is. */
int spool_wait_fd(struct spool *s);
/* The claimed messages are done with: delete them all. */
int spool_done(struct spool *s);
/*
 * The message in hand cannot be processed: move it to DIR/bad/ under its
 * name, numbered when that is taken (NAME-2.msg), never replacing one
 * (where says as "dir:DIR/bad/NAME"), so that the next reader goes on
 * past it. When it cannot be moved it stays in cur/, passed over for the
 * rest of this reading.
 */
int spool_set_aside(struct spool *s, struct buf *where);
/* Give the message in hand up unread: it stays in cur/ for the next reader. */
void spool_release(struct spool *s);

#endif
