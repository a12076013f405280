/*
 * outbox: message bodies published as files in a directory that a
 * partner polls. Each file is written under a hidden temporary name in
 * the directory, fsynced, and renamed to its name, so that a partner
 * listing the directory sees a file whole or not at all. The directory
 * is synced once per batch (outbox_sync), and a done marker (NAME and a
 * suffix, empty) is made for each file only once the file is durable.
 *
 * Files are published in groups of up to OUTBOX_GROUP: each file's
 * writeback is started when it is written (sync_file_range), and the
 * group is fsynced and renamed file by file when it is full or the batch
 * ends. The first fsync of a group then commits the file system's
 * journal for all of them, where one fsync a file would wait for a
 * commit each (2.4x the files a second on ext4 here). Until its group
 * is published a file is only a hidden temporary.
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

/* Files written but not yet fsynced and named, at most this many. */
#define OUTBOX_GROUP 128

struct outbox_pending {
	struct atomic_file file;
	size_t name_at;		/* its name in outbox.pending_names */
};

struct outbox {
	int dirfd;
	enum outbox_exists exists;
	mode_t mode;		/* given exactly, or 0644 under the umask */
	int exact_mode;
	const char *done_marker;	/* NULL: none */
	struct atomic_file file;
	int writing;
	/* The group written and waiting to be published, in order. */
	struct outbox_pending pending[OUTBOX_GROUP];
	unsigned npending;
	struct buf pending_names;	/* each NUL-ended */
	/* The file whose publication failed (its name as asked), or "". */
	struct buf failed;
	struct buf final;	/* the name the last file got */
	unsigned long published, skipped;	/* for --stats */
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
/* Before a body is written: OUTBOX_SKIPPED (counted) or OUTBOX_TAKEN
 * when ob->exists is skip or fail and name is there already, else
 * OUTBOX_PUBLISHED (go on). A name taken between this look and the
 * file's publication is found there too. */
enum outbox_result outbox_check(struct outbox *ob, const char *name);
/* Start the next file: 0, or -1 (errno). */
int outbox_begin(struct outbox *ob);
int outbox_write(struct outbox *ob, const void *p, size_t n);
/* Drop the file being written. */
void outbox_abort(struct outbox *ob);
/* The file is whole: it is to get name, as ob->exists says, with its
 * group. 0, or -1 when publishing the group it filled failed (see
 * outbox_publish_group). */
int outbox_publish(struct outbox *ob, const char *name);
/* fsync each file of the group and give it its name, in the order they
 * were written: 0, or -1 at the first that failed, whose name is put in
 * ob->failed, with errno (EEXIST: --exists fail found its name taken);
 * the files after it are dropped, the ones before it stay published. */
int outbox_publish_group(struct outbox *ob);
/* Publish the group, make every file published since the last sync
 * durable, then their done markers: 0, or -1 (errno; ob->failed names
 * the file when it was one, and is empty when the directory's sync
 * failed). Nothing to do is 0 at once. */
int outbox_sync(struct outbox *ob);
void outbox_release(struct outbox *ob);

#endif
