/* spool: maildir-style spool directories for dir: channels. */
#include "spool.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "dirent-open.h"
#include "id.h"
#include "io.h"
#include "timer.h"
#include "safefile.h"
#include "spool-parts.h"

static void listing_release(struct listing *l);

/* mkdir -p, each new directory 0700. */
static int make_path(const char *dir)
{
	char *p = xstrdup(dir);
	int r = 0;

	for (char *q = p + 1; *q && r == 0; q++)
		if (*q == '/') {
			*q = '\0';
			if (mkdir(p, 0700) < 0 && errno != EEXIST)
				r = -1;
			*q = '/';
		}
	if (r == 0 && mkdir(p, 0700) < 0 && errno != EEXIST)
		r = -1;
	free(p);
	return r;
}

/* DIR/name, made (0700) when missing; its descriptor, -1 on failure. */
static int subdir(struct spool *s, const char *name)
{
	if (mkdirat(s->topfd, name, 0700) < 0 && errno != EEXIST)
		return -1;
	return openat(s->topfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

struct spool *spool_open(const char *dir, int create, struct buf *err)
{
	struct spool *s = xmalloc(sizeof(*s));
	struct stat st;

	memset(s, 0, sizeof(*s));
	s->dir = xstrdup(dir);
	s->wfd = s->inotify = -1;
	s->topfd = s->tmpfd = s->newfd = s->curfd = -1;
	/* A reader does not make up the directory it was told to read:
	 * a mistyped name would otherwise wait for ever on an empty one. */
	if (!create && stat(dir, &st) < 0) {
		buf_addf(err, "cannot read spool directory 'dir:%s': %s", dir, strerror(errno));
		goto fail;
	}
	if ((create && make_path(s->dir) < 0) ||
	    (s->topfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0 ||
	    (s->tmpfd = subdir(s, "tmp")) < 0 ||
	    (s->newfd = subdir(s, "new")) < 0 ||
	    (s->curfd = subdir(s, "cur")) < 0) {
		buf_addf(err, "cannot use spool directory 'dir:%s': %s", dir, strerror(errno));
		goto fail;
	}
	return s;
fail:
	spool_close(s);
	return NULL;
}

void spool_close(struct spool *s)
{
	if (!s)
		return;
	if (s->wfd >= 0)
		spool_abort(s);
	spool_unstage_from(s, 0);
	free(s->staged);
	while (s->nheld)
		close(s->held[--s->nheld].fd);
	for (int *fd = &s->topfd; fd <= &s->curfd; fd++)
		if (*fd >= 0)
			close(*fd);
	if (s->inotify >= 0)
		close(s->inotify);
	free(s->horizon);
	listing_release(&s->fresh);
	listing_release(&s->skipped);
	free(s->dir);
	free(s);
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void listing_clear(struct listing *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->names[i]);
	l->n = l->next = 0;
}

/* Add name (which the listing now owns). */
static void listing_add(struct listing *l, char *name)
{
	if (l->n == l->alloc) {
		l->alloc = l->alloc ? 2 * l->alloc : 64;
		l->names = xrealloc(l->names, l->alloc * sizeof(*l->names));
	}
	l->names[l->n++] = name;
}

/* Keep the oldest LISTING_MAX of the names gathered so far. */
static void listing_trim(struct listing *l)
{
	if (l->n > 1)	/* names is NULL while nothing was listed */
		qsort(l->names, l->n, sizeof(*l->names), by_name);
	while (l->n > LISTING_MAX)
		free(l->names[--l->n]);
}

/*
 * List dirfd into l, oldest first, keeping at most LISTING_MAX names so
 * that a reader of a spool of a million files stays small; the rest are
 * listed again once these are taken. Names beginning with '.' are not
 * messages. -1 with errno when the directory cannot be read.
 */
static int list_oldest(int dirfd, struct listing *l)
{
	int fd = dup(dirfd);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *e;
	const char *cutoff = NULL;	/* the newest name kept, once trimmed */

	listing_clear(l);
	if (!d) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	rewinddir(d);
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		if (cutoff && strcmp(e->d_name, cutoff) > 0)
			continue;
		listing_add(l, xstrdup(e->d_name));
		if (l->n == 2 * LISTING_MAX) {
			listing_trim(l);
			cutoff = l->names[l->n - 1];
		}
	}
	closedir(d);
	listing_trim(l);
	return 0;
}

static void listing_release(struct listing *l)
{
	listing_clear(l);
	free(l->names);
	l->names = NULL;
	l->alloc = 0;
}

/* "new/NAME" or "cur/NAME": how the skipped entries are known. */
static void skip_key(struct spool *s, int dirfd, const char *name, struct buf *key)
{
	buf_reset(key);
	buf_addf(key, "%s/%s", dirfd == s->curfd ? "cur" : "new", name);
}

/* Was this entry skipped before? Then it is not tried again. */
static int was_skipped(struct spool *s, int dirfd, const char *name)
{
	struct buf key = BUF_INIT;
	const char *k;
	int found;

	if (!s->skipped.n)
		return 0;
	skip_key(s, dirfd, name, &key);
	k = key.ptr;
	found = bsearch(&k, s->skipped.names, s->skipped.n, sizeof(*s->skipped.names),
			by_name) != NULL;
	buf_release(&key);
	return found;
}

/*
 * The entry could not be taken, for reason err: silently passed over
 * when another reader took it first (ENOENT), else SPOOL_SKIPPED, and
 * remembered so that it is named once, not on every listing.
 */
static void remember_skipped(struct spool *s, int dirfd, const char *name)
{
	struct buf key = BUF_INIT;

	if (!was_skipped(s, dirfd, name)) {
		skip_key(s, dirfd, name, &key);
		listing_add(&s->skipped, buf_detach(&key, NULL));
		/* Sorted for was_skipped, which every entry tried goes through. */
		qsort(s->skipped.names, s->skipped.n, sizeof(*s->skipped.names), by_name);
	}
}

static int skip(struct spool *s, int dirfd, const char *action, int err,
		struct spool_entry *e)
{
	if (err == ENOENT)
		return SPOOL_NONE;
	remember_skipped(s, dirfd, e->name.ptr);
	e->action = action;
	e->err = err;
	return SPOOL_SKIPPED;
}

/*
 * Move an entry of dirfd to bad/ (made 0700 when missing), never over
 * one there: renamed, never opened, so that a symbolic link is not
 * followed and a FIFO not waited on; where says where it went.
 */
static int move_to_bad(struct spool *s, int dirfd, const char *name, struct buf *where)
{
	struct buf final = BUF_INIT;
	int badfd = subdir(s, "bad"), r = -1, saved;

	if (badfd >= 0 && rename_unique(dirfd, name, badfd, name, &final) == 0)
		r = xfsync(badfd);
	saved = errno;
	if (r == 0) {
		buf_reset(where);
		buf_addf(where, "dir:%s/bad/%s", s->dir, final.ptr);
	}
	if (badfd >= 0)
		close(badfd);
	buf_release(&final);
	errno = saved;
	return r;
}

/* An entry that is not a regular file: it goes to bad/ as it is. */
static int set_entry_aside(struct spool *s, int dirfd, mode_t mode, struct spool_entry *e)
{
	e->kind = dirent_kind(mode);
	if (move_to_bad(s, dirfd, e->name.ptr, &e->where) < 0)
		return skip(s, dirfd, "set aside", errno, e);
	return SPOOL_SET_ASIDE;
}

/*
 * Take one entry of dirfd: a regular file is locked first, so that of
 * two readers racing for it only one goes on; from new/ it then moves to
 * cur/. Anything else is set aside. SPOOL_NONE when it is not ours.
 */
static int take(struct spool *s, int dirfd, const char *name, struct spool_entry *e)
{
	mode_t mode = 0;
	struct stat st;
	int fd;

	buf_reset(&e->name);
	buf_addstr(&e->name, name);
	e->dir = dirfd == s->curfd ? "cur" : "new";
	e->kind = NULL;
	if (was_skipped(s, dirfd, name))
		return SPOOL_NONE;
	fd = dirent_open_regular(dirfd, name, &mode);
	if (fd == DIRENT_NOT_REGULAR)
		return set_entry_aside(s, dirfd, mode, e);
	if (fd < 0)
		return skip(s, dirfd, "read", errno, e);
	/* Held by another reader: its message, not ours. */
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		int err = errno;
		close(fd);
		return err == EWOULDBLOCK ? SPOOL_NONE : skip(s, dirfd, "read", err, e);
	}
	/* Locked only after its reader finished and deleted it: too late. */
	if (fstat(fd, &st) < 0 || st.st_nlink == 0) {
		close(fd);
		return SPOOL_NONE;
	}
	if (dirfd == s->newfd && renameat(s->newfd, name, s->curfd, name) < 0) {
		int err = errno;
		close(fd);	/* ENOENT: another reader renamed it first */
		return skip(s, dirfd, "claim", err, e);
	}
	s->held[s->nheld].fd = fd;
	snprintf(s->held[s->nheld].name, sizeof(s->held[s->nheld].name), "%s", name);
	s->nheld++;
	e->fd = fd;
	e->dir = "cur";
	return SPOOL_MESSAGE;
}

/* An orphan in cur/: a message whose reader died before it was done. */
static int claim_orphan(struct spool *s, struct spool_entry *e)
{
	struct listing cur = { 0 };
	int r = SPOOL_NONE;

	if (list_oldest(s->curfd, &cur) == 0)
		for (size_t i = 0; i < cur.n && r == SPOOL_NONE; i++)
			r = take(s, s->curfd, cur.names[i], e);
	listing_release(&cur);
	return r;
}

/*
 * The next entry of new/, from the listing kept since the last call:
 * new/ is read again only when that runs out, so draining a spool of n
 * files costs one listing per LISTING_MAX messages, not one per message.
 * Names another reader took meanwhile are passed over.
 */
static int claim_listed(struct spool *s, struct spool_entry *e)
{
	struct listing *l = &s->fresh;

	while (l->next < l->n) {
		const char *name = l->names[l->next++];
		int r;

		/* --once: sorted, so the rest are newer still. */
		if (s->horizon && strcmp(name, s->horizon) > 0) {
			l->next = l->n;
			break;
		}
		if ((r = take(s, s->newfd, name, e)) != SPOOL_NONE)
			return r;
	}
	return SPOOL_NONE;
}

/*
 * Watch the new/ this spool holds open, by its descriptor: inotify takes
 * only a path, and DIR/new may since name another directory (the spool
 * moved) or be too long to spell out. Without /proc: -1, and the reader
 * polls.
 */
static int watch_new(struct spool *s)
{
	char path[sizeof("/proc/self/fd/") + 3 * sizeof(int)];

	snprintf(path, sizeof(path), "/proc/self/fd/%d", s->newfd);
	return inotify_add_watch(s->inotify, path, IN_MOVED_TO | IN_CREATE);
}

/* The inotify descriptor watching new/, made on first use; -1 when
 * there can be none (the reader polls). */
static int watch_fd(struct spool *s)
{
	if (s->inotify == -1) {
		s->inotify = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
		if (s->inotify >= 0 && watch_new(s) < 0) {
			close(s->inotify);
			s->inotify = -2;	/* do not try again: poll */
		}
	}
	return s->inotify < 0 ? -1 : s->inotify;
}

/* Sleep until new/ may have changed; 0 when woken by a change, 1 when
 * the time ran out (orphans in cur/ raise no event: look for them then). */
static int wait_for_new(struct spool *s)
{
	struct pollfd p;
	char drain[4096];

	if (watch_fd(s) < 0) {
		poll(NULL, 0, timer_wait_ms(POLL_MS));
		return 1;
	}
	p.fd = s->inotify;
	p.events = POLLIN;
	/* A tool's timers run while it waits (timer.h). */
	if (poll(&p, 1, timer_wait_ms(5 * POLL_MS)) <= 0)
		return 1;
	while (read(s->inotify, drain, sizeof(drain)) > 0)
		;
	return 0;
}

/* The newest name in new/ now: what a --once run will read up to. */
static void set_horizon(struct spool *s)
{
	int fd = dup(s->newfd);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *e;

	s->horizon = xstrdup("");
	if (!d) {
		if (fd >= 0)
			close(fd);
		return;
	}
	rewinddir(d);
	while ((e = readdir(d)))
		if (e->d_name[0] != '.' && strcmp(e->d_name, s->horizon) > 0) {
			free(s->horizon);
			s->horizon = xstrdup(e->d_name);
		}
	closedir(d);
}

/*
 * A file in tmp/ is a message being written: its writer holds a lock on
 * it. One that nobody holds and that has not changed for TMP_GRACE
 * seconds was left by a writer that died (the age also covers a writer
 * on another host whose lock this one cannot see): remove it.
 */
static void sweep_tmp(struct spool *s)
{
	struct listing l = { 0 };
	time_t now = time(NULL);

	s->swept = now;
	/* Oldest first: a spool with more leftovers gets the rest next time. */
	if (list_oldest(s->tmpfd, &l) < 0)
		return;
	for (size_t i = 0; i < l.n; i++) {
		int fd = openat(s->tmpfd, l.names[i], O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
		struct stat st;

		if (fd < 0)
			continue;
		if (flock(fd, LOCK_EX | LOCK_NB) == 0 && fstat(fd, &st) == 0 &&
		    S_ISREG(st.st_mode) && now - st.st_mtime >= TMP_GRACE)
			unlinkat(s->tmpfd, l.names[i], 0);
		close(fd);
	}
	listing_release(&l);
}

void spool_entry_release(struct spool_entry *e)
{
	buf_release(&e->name);
	buf_release(&e->where);
}

int spool_wait_fd(struct spool *s)
{
	char drain[4096];
	int fd;

	if (!s->reading) {
		s->reading = 1;	/* no horizon: a reader that waits reads all */
		sweep_tmp(s);
	}
	fd = watch_fd(s);
	if (fd >= 0)
		while (read(fd, drain, sizeof(drain)) > 0)
			;
	return fd;
}

int spool_claim(struct spool *s, int wait, struct spool_entry *e)
{
	if (s->nheld == SPOOL_CLAIMS_MAX) {
		errno = EBUSY;	/* done with some first */
		return -1;
	}
	if (!s->reading) {
		s->reading = 1;
		sweep_tmp(s);
		if (!wait)
			set_horizon(s);
	}
	e->fd = -1;
	for (;;) {
		int r = SPOOL_NONE;

		/* Between listings of new/, look for orphans of readers that
		 * died: they are older than anything listed since. */
		if (s->fresh.next == s->fresh.n) {
			r = claim_orphan(s, e);
			if (r == SPOOL_NONE && list_oldest(s->newfd, &s->fresh) < 0)
				return -1;
		}
		if (r == SPOOL_NONE)
			r = claim_listed(s, e);
		if (r != SPOOL_NONE)
			return r;
		if (!wait || io_stop_requested)
			return SPOOL_NONE;
		if (wait_for_new(s) && time(NULL) - s->swept >= TMP_GRACE)
			sweep_tmp(s);
		if (io_stop_requested)
			return SPOOL_NONE;
	}
}

int spool_done(struct spool *s)
{
	int r = 0;

	for (size_t i = 0; i < s->nheld; i++) {
		if (unlinkat(s->curfd, s->held[i].name, 0) < 0 && r == 0)
			r = -1;
		close(s->held[i].fd);
	}
	s->nheld = 0;
	return r;
}

int spool_set_aside(struct spool *s, struct buf *where)
{
	struct claim *c = &s->held[s->nheld - 1];

	if (move_to_bad(s, s->curfd, c->name, where) < 0) {
		int err = errno;
		/* Not tried again in this reading: it would stop it again. */
		remember_skipped(s, s->curfd, c->name);
		spool_release(s);
		errno = err;
		return -1;
	}
	close(c->fd);
	s->nheld--;
	return 0;
}

void spool_release(struct spool *s)
{
	/* Closing drops the lock: the file is an orphan any reader takes. */
	close(s->held[--s->nheld].fd);
}
