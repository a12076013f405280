/*
 * inbox-work: claiming an inbox's files, so that overlapping runs never
 * take one twice. A file is renamed, before it is read, into the run's
 * own directory DIR/.msg/work/RUN/ (the same file system: one atomic
 * rename, which only one run can win); RUN/lock is held with flock(2) for
 * as long as the run lives. A run that finds a RUN/lock it can lock found
 * a run that died: it moves that run's claims back into the inbox, to be
 * taken again, and removes its directory.
 */
#ifndef MSG_INBOX_WORK_H
#define MSG_INBOX_WORK_H

#include "buf.h"

struct inbox_work;

/* Make DIR/.msg/work/RUN for the inbox open as dirfd, and take back the
 * claims of runs that died: NULL with the reason in err. */
struct inbox_work *inbox_work_open(int dirfd, const char *addr, struct buf *err);
/* Claim path (relative to the inbox) into the run's directory: 1 with its
 * name there in claimed, 0 when another run took it first, -1 (errno). */
int inbox_work_claim(struct inbox_work *w, const char *path, struct buf *claimed);
/* The run's directory, where claimed files are opened. */
int inbox_work_fd(const struct inbox_work *w);
/* A claimed file is finished with: deleted. 0 or -1. */
int inbox_work_delete(struct inbox_work *w, const char *claimed);
/* Make the deletions so far durable: 0 or -1. */
int inbox_work_sync(struct inbox_work *w);
/* A claimed file goes back into the inbox under its name, unread. */
int inbox_work_give_back(struct inbox_work *w, const char *claimed);
/* The run ends: its directory removed when empty, its lock let go. */
void inbox_work_close(struct inbox_work *w);

#endif
