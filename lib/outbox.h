/*
 * outbox: message bodies published as files in a directory that a
 * partner polls. Each file is written under a hidden temporary name in
 * the directory, fsynced, and renamed to its name, so that a partner
 * listing the directory sees a file whole or not at all. The directory
 * is synced once per batch (outbox_sync), and a done marker (NAME and a
 * suffix, empty) is made for each file only once the file is durable.
 */
#ifndef MSG_OUTBOX_H
#define MSG_OUTBOX_H

#include <sys/types.h>

#include "buf.h"
#include "safefile.h"

/* What to do when the name is already taken. */
enum outbox_exists {
	OUTBOX_SUFFIX,		/* NAME.1, NAME.2, ...: the first free one */
	OUTBOX_FAIL,		/* refuse the message */
	OUTBOX_SKIP,		/* drop the body, keep the file there */
	OUTBOX_REPLACE,		/* replace the file, in one step */
};

enum outbox_result {
	OUTBOX_PUBLISHED,
	OUTBOX_SKIPPED,		/* --exists skip found the name taken */
	OUTBOX_TAKEN,		/* --exists fail found the name taken */
	OUTBOX_ERROR,		/* errno says why; nothing was published */
};

struct outbox {
	int dirfd;
	enum outbox_exists exists;
	mode_t mode;		/* given exactly, or 0644 under the umask */
	int exact_mode;
	const char *done_marker;	/* NULL: none */
	struct atomic_file file;
	int writing;
	/* Files renamed since the directory was last synced. */
	unsigned long unsynced;
	/* Names whose markers wait for the next sync, each NUL-ended. */
	struct buf markers;
	struct numbered_names names;	/* for --exists suffix */
	unsigned long syncs;	/* directory syncs, for --stats */
};

/* Parse an --exists word: 0, or -1 when it is none of them. */
int outbox_exists_parse(const char *word, enum outbox_exists *out);

/* Open the directory path, creating it and its missing parents (mode
 * 0777 under the umask, each made durable): 0, or -1 (errno). */
int outbox_open(struct outbox *ob, const char *path);
/* Before a body is written: OUTBOX_SKIPPED or OUTBOX_TAKEN when
 * ob->exists is skip or fail and name is there already, else
 * OUTBOX_PUBLISHED (go on). A name taken between this look and
 * outbox_publish is found there too. */
enum outbox_result outbox_check(const struct outbox *ob, const char *name);
/* Start the next file: 0, or -1 (errno). */
int outbox_begin(struct outbox *ob);
int outbox_write(struct outbox *ob, const void *p, size_t n);
/* Drop the file being written. */
void outbox_abort(struct outbox *ob);
/* Seal the file and give it name, as ob->exists says; the name used is
 * put in final. On any result but OUTBOX_PUBLISHED nothing is left. */
enum outbox_result outbox_publish(struct outbox *ob, const char *name,
				  struct buf *final);
/* Make every file published since the last sync durable, then their done
 * markers: 0, or -1 (errno). Nothing to do is 0 at once. */
int outbox_sync(struct outbox *ob);
void outbox_release(struct outbox *ob);

#endif
