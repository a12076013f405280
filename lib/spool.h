/*
 * spool: dir: channels, a directory of messages one file each (DESIGN.md
 * section 4), in the maildir manner:
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
 *   DIR/bad/  messages a reader could not process, set aside so that
 *             they do not stop every reader after it
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
const char *spool_dir(const struct spool *s);

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
 * Reading: claim the oldest message and return its descriptor (reading
 * from the start), its name in name. 0 when there is none and wait is 0,
 * or when asked to stop while waiting; -1 with errno on failure. A reader
 * may hold up to SPOOL_CLAIMS_MAX claimed messages (group commit: their
 * outputs made durable together, then all deleted); the last one claimed
 * is the message in hand. Reading with wait 0 from the first claim on is
 * a --once run: it stops at the newest message there was then.
 */
#define SPOOL_CLAIMS_MAX 64
int spool_claim(struct spool *s, int wait, struct buf *name);
/* The claimed messages are done with: delete them all. */
int spool_done(struct spool *s);
/*
 * The message in hand cannot be processed: move it to DIR/bad/ (where
 * says as "dir:DIR/bad/NAME"), so that the next reader goes on past it.
 */
int spool_set_aside(struct spool *s, struct buf *where);
/* Give the message in hand up unread: it stays in cur/ for the next reader. */
void spool_release(struct spool *s);

#endif
