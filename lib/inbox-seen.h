/*
 * inbox-seen: what an inbox read with --idempotent has taken, so that a
 * file sent again unchanged is not processed twice. A store (store.h) in
 * DIR/.msg/seen holds one record per name (the file's path in the
 * inbox): "TAKEN SIZE HASH MTIME" (when it was taken, Unix ms; its size;
 * its content's hash128, 32 hex digits; its mtime, Unix ms), forgotten
 * --remember after it was taken.
 *
 * The name and the content decide: the same bytes under the same name
 * are a repeat whatever their mtime (a partner sending a file again
 * gives it a new one); other bytes under a name are a new file, whose
 * record replaces the old. Records are put when the file's messages are
 * out and committed before the file is deleted or moved: after a crash
 * before the commit the file is processed again, after it never again.
 * The store is locked by one process: a second run on the inbox waits
 * for the first to end.
 */
#ifndef MSG_INBOX_SEEN_H
#define MSG_INBOX_SEEN_H

#include <stdint.h>
#include <sys/stat.h>

#include "buf.h"

#define INBOX_REMEMBER_MS (30 * 86400000LL)
#define INBOX_SEEN_KIND "inbox-seen"

struct inbox_seen;

/* The store of the inbox at dir, opened once a run holding it has ended:
 * NULL with the reason in err. */
struct inbox_seen *inbox_seen_open(const char *dir, int64_t remember_ms,
				   struct buf *err);
void inbox_seen_close(struct inbox_seen *s);
/*
 * Was the file open as fd, at path in the inbox with st, taken before as
 * it is? 1: a repeat. 0: no, and what to remember of it in record. -1
 * with errno when it cannot be read. The file is read through and left
 * at its start.
 */
int inbox_seen_check(struct inbox_seen *s, const char *path, int fd,
		     const struct stat *st, struct buf *record);
/* Queue the record of the file at path: 0 or -1 (errno). */
int inbox_seen_put(struct inbox_seen *s, const char *path, const char *record);
/* Make the records queued durable, and forget those past --remember:
 * 0 or -1 (errno). */
int inbox_seen_commit(struct inbox_seen *s);

#endif
