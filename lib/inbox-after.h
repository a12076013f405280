/*
 * inbox-after: what becomes of an inbox's files once they are taken.
 * The files a reader hands out are kept here, claimed, until the
 * messages made from them are out; then each is deleted or, with --done
 * DIR, moved there. A file that cannot be processed goes to the failed
 * directory (--failed DIR, default DIR/.msg/failed of the inbox) with
 * NAME.error beside it holding why.
 *
 * Both directories may hold strftime(3) fields ("done/%Y-%m-%d"),
 * expanded in local time when the file is moved; a relative one is
 * taken from the current directory, as any path operand. A directory
 * missing is made with its parents, each synced into its own parent. A
 * file keeps its base name; one already there gets .1, .2, ...
 * (numbered_place), never replaced. The move is one rename(2), which is
 * why the directory must be on the inbox's file system (inbox_check):
 * the file is under exactly one name at any instant, in the run's claims
 * or in DIR, so no crash can lose it or leave two copies for a later
 * run to take again.
 */
#ifndef MSG_INBOX_AFTER_H
#define MSG_INBOX_AFTER_H

#include <sys/stat.h>

#include "buf.h"

struct inbox_after;
struct inbox_options;
struct inbox_work;
struct inbox_seen;

/* For the inbox addr open as inboxfd, its claims in w; seen, when not
 * NULL, is told of each file taken before the file is let go. */
struct inbox_after *inbox_after_new(int inboxfd, struct inbox_work *w,
				    const char *addr,
				    const struct inbox_options *opt,
				    struct inbox_seen *seen);
void inbox_after_free(struct inbox_after *a);

/*
 * The file claimed as claimed (in w), at path in the inbox, is handed
 * out; marker is its --done-marker file in the inbox, or NULL. record is
 * what seen is to remember of it, or NULL when it was taken before and
 * is only to be let go with the others.
 */
void inbox_after_add(struct inbox_after *a, const char *claimed,
		     const char *path, const char *marker, const char *record);
/*
 * The files handed out are finished with, their messages durable: seen
 * remembers them (one commit), then each is deleted or moved, then its
 * marker deleted, and the directories synced. 0 or -1 with errno.
 */
int inbox_after_done(struct inbox_after *a);
/*
 * The last file handed out cannot be processed: moved to the failed
 * directory with NAME.error, where it went put in where. 0; or -1 with
 * errno, the file given back to the inbox for the next run.
 */
int inbox_after_fail_last(struct inbox_after *a, const char *why,
			  struct buf *where);
/* The last file handed out goes back into the inbox, unread. */
void inbox_after_give_back_last(struct inbox_after *a);
/* Files handed out and not yet let go. */
size_t inbox_after_held(const struct inbox_after *a);
/* Is the directory st the done or the failed directory (or the part of
 * it before its first strftime field)? Inside the inbox, it is not
 * listed. 1 or 0. */
int inbox_after_owns(const struct inbox_after *a, const struct stat *st);

#endif
