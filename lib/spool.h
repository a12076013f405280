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
 * fsyncs new/, so a message is either absent or whole and durable.
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

/* Writing: a new temporary file (its descriptor), then commit or abort. */
int spool_begin(struct spool *s);
int spool_commit(struct spool *s);
void spool_abort(struct spool *s);

/*
 * Reading: claim the oldest message and return its descriptor (reading
 * from the start), its name in name. 0 when there is none and wait is 0,
 * or when asked to stop while waiting; -1 with errno on failure.
 */
int spool_claim(struct spool *s, int wait, struct buf *name);
/* The claimed message is done with: delete it. */
int spool_done(struct spool *s);
/*
 * The claimed message cannot be processed: move it to DIR/bad/ (where
 * says as "dir:DIR/bad/NAME"), so that the next reader goes on past it.
 */
int spool_set_aside(struct spool *s, struct buf *where);
/* Give the claimed message up unread: it stays in cur/ for the next reader. */
void spool_release(struct spool *s);

#endif
