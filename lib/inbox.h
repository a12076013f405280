/*
 * inbox: a plain directory that partners write files into (inbox:DIR),
 * read as raw inputs: which files are taken (--include, --exclude and
 * the names uploads use while they are written), in which order (oldest
 * mtime first, then name), how many per run, and each file deleted or
 * moved (inbox-after.h) once the messages made from it are out, or, with
 * --idempotent, let go unread when it was taken before as it is
 * (inbox-seen.h). Entries that are not regular files are never opened:
 * they are named once and left where they are.
 */
#ifndef MSG_INBOX_H
#define MSG_INBOX_H

#include <stdint.h>
#include <sys/types.h>

#include "buf.h"
#include "header.h"

#define INBOX_SETTLE_MS 2000

/* What the options of msg-wrap and msg-split -r ask of an inbox. */
struct inbox_options {
	const char **include, **exclude;	/* fnmatch(3) globs on the name */
	size_t ninclude, nexclude;
	uint64_t max_files;	/* files taken per run; 0: no limit */
	int recursive;		/* files in subdirectories too */
	/* --done-marker: NAME is taken only once NAME+this exists; the
	 * marker itself is never taken, and goes with its file. */
	const char *done_marker;
	/* --settle: a file is taken only once its size and mtime were the
	 * same at two looks this far apart (ms; 0: at once); when not
	 * settle_set, INBOX_SETTLE_MS. */
	int64_t settle_ms;
	int settle_set;
	/* --done: where files go once their messages are out (strftime(3)
	 * fields); NULL: they are deleted. --failed: where files that
	 * cannot be processed go; NULL: DIR/.msg/failed. */
	const char *done_dir, *failed_dir;
	/* --idempotent: a file taken before, same name and content, is let
	 * go unread; remembered --remember (ms; 0: INBOX_REMEMBER_MS). */
	int idempotent;
	int64_t remember_ms;
};

enum inbox_found {
	INBOX_NONE,		/* nothing (more) this run */
	INBOX_FILE,		/* a file, open for reading */
	INBOX_PASSED,		/* not a regular file: left where it is */
	INBOX_SKIPPED,		/* a file that could not be claimed or
				 * opened (the machine's fault): left in
				 * the inbox */
	INBOX_REPEATED,		/* --idempotent: taken before as it is; let
				 * go with the files handed out */
};

/* The entry in hand, valid until the next inbox_next. */
struct inbox_file {
	int fd;			/* INBOX_FILE: open for reading */
	const char *path;	/* relative to the inbox directory */
	const char *name;	/* for diagnostics: "inbox:DIR/PATH" */
	/* INBOX_FILE: File-Name, File-Path, File-Size and File-Mtime. */
	const struct headers *headers;
	const char *kind;	/* INBOX_PASSED: "a symbolic link"... */
	const char *action;	/* INBOX_SKIPPED: "claim" or "read" */
	int err;		/* INBOX_SKIPPED: errno */
};

struct inbox;

/* Are opt's --done and --failed usable for the inbox addr (on its file
 * system, as one rename needs)? 0, or -1 with the reason in err. */
int inbox_check(const char *addr, const struct inbox_options *opt,
		struct buf *err);
/* Open the directory of addr ("inbox:DIR"): NULL with the reason in err. */
struct inbox *inbox_open(const char *addr, const struct inbox_options *opt,
			 struct buf *err);
/*
 * The next file to take, oldest first. The directory is listed when the
 * inbox is opened; once what was listed is handed out, nothing more is
 * found, unless wait is set: it is listed again, every second until
 * something is there or a stop is requested. An entry that is not a
 * regular file is passed over once per name, and so is one that cannot
 * be claimed (tried again at each listing, said once). Returns what it
 * found, or -1 with errno when the directory cannot be read.
 */
int inbox_next(struct inbox *ib, int wait, struct inbox_file *f);
/* The files handed out so far are finished with, the messages made from
 * them durable: each is remembered (--idempotent), then deleted or moved
 * (--done), the directories synced. 0 or -1. */
int inbox_done(struct inbox *ib);
/*
 * The file in hand cannot be processed: moved into the failed directory
 * under its name (NAME.1 ... when taken, never replacing one), with
 * NAME.error beside it holding why; where says as what. 0, or -1 with
 * errno (the file is then given back).
 */
int inbox_set_aside(struct inbox *ib, const char *why, struct buf *where);
/* The file in hand is given back, for the next run. */
void inbox_release(struct inbox *ib);
void inbox_close(struct inbox *ib);

/* Does name pass --include, --exclude and the default ignores? 1 or 0. */
int inbox_name_selected(const struct inbox_options *opt, const char *name);

#endif
