/*
 * spool-parts: what the writing and the reading side of a spool share
 * and no tool sees (spool.c, spool-write.c).
 */
#ifndef MSG_SPOOL_PARTS_H
#define MSG_SPOOL_PARTS_H

#include <time.h>

#include "id.h"
#include "spool.h"

#define POLL_MS 200
/* Messages a writer holds in tmp/ before it publishes them together. */
#define STAGED_MAX 256
/* Names of new/ a reader keeps listed at a time. */
#define LISTING_MAX 4096
/* Seconds a file may sit unchanged and unlocked in tmp/ before a reader
 * takes it for the leftover of a dead writer. */
#define TMP_GRACE 3600

/* Names of a directory, oldest first; next is the first not yet tried. */
struct listing {
	char **names;
	size_t n, next, alloc;
};

struct spool {
	char *dir;
	int topfd, tmpfd, newfd, curfd;	/* directory descriptors */
	/* the message being written */
	int wfd;
	char wname[UUID_STR_LEN + 32];
	char next_id[UUID_STR_LEN + 1];	/* spool_name_next's, or "" */
	/* Files are named by the writer, whose state may say they exist:
	 * what is not published stays in tmp/ to be taken up again. */
	int named;
	/* written and synced in tmp/, waiting for spool_publish */
	char (*staged)[UUID_STR_LEN + 32];
	size_t nstaged;
	/* the message claimed */
	/* the messages claimed and not yet done with, the last in hand */
	struct claim {
		int fd;
		char name[256];
	} held[SPOOL_CLAIMS_MAX];
	size_t nheld;
	int inotify;			/* on new/, or -1: poll instead */
	/* --once: the newest name present when reading began; later ones
	 * (a flow writing back into its own spool) wait for the next run. */
	char *horizon;
	int reading;			/* claimed before: set up for reading */
	struct listing fresh;		/* of new/ */
	/* "new/NAME" and "cur/NAME" of entries skipped, not to be tried
	 * again, sorted */
	struct listing skipped;
	time_t swept;			/* when tmp/ was last cleared */
};

/* Remove staged messages from the i-th on: they never reach new/. */
void spool_unstage_from(struct spool *s, size_t i);

#endif
