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

#include "id.h"
#include "io.h"

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

static void listing_release(struct listing *l);
static void unstage_from(struct spool *s, size_t i);

struct spool {
	char *dir;
	int tmpfd, newfd, curfd;	/* directory descriptors */
	/* the message being written */
	int wfd;
	char wname[UUID_STR_LEN + 32];
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
	time_t swept;			/* when tmp/ was last cleared */
};

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
	char path[4096];

	snprintf(path, sizeof(path), "%s/%s", s->dir, name);
	if (mkdir(path, 0700) < 0 && errno != EEXIST)
		return -1;
	return open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

struct spool *spool_open(const char *dir, int create, struct buf *err)
{
	struct spool *s = xmalloc(sizeof(*s));
	struct stat st;

	memset(s, 0, sizeof(*s));
	s->dir = xstrdup(dir);
	s->wfd = s->inotify = -1;
	s->tmpfd = s->newfd = s->curfd = -1;
	/* A reader does not make up the directory it was told to read:
	 * a mistyped name would otherwise wait for ever on an empty one. */
	if (!create && stat(dir, &st) < 0) {
		buf_addf(err, "cannot read spool directory 'dir:%s': %s", dir, strerror(errno));
		goto fail;
	}
	if ((create && make_path(s->dir) < 0) ||
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
	unstage_from(s, 0);
	free(s->staged);
	while (s->nheld)
		close(s->held[--s->nheld].fd);
	for (int *fd = &s->tmpfd; fd <= &s->curfd; fd++)
		if (*fd >= 0)
			close(*fd);
	if (s->inotify >= 0)
		close(s->inotify);
	free(s->horizon);
	listing_release(&s->fresh);
	free(s->dir);
	free(s);
}

const char *spool_dir(const struct spool *s)
{
	return s->dir;
}

int spool_begin(struct spool *s)
{
	char id[UUID_STR_LEN + 1];

	id_new(id);
	snprintf(s->wname, sizeof(s->wname), "%s.msg", id);
	s->wfd = openat(s->tmpfd, s->wname, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	/* Held until the file leaves tmp/: a reader clearing tmp/ of what
	 * dead writers left behind knows this one is alive. */
	if (s->wfd >= 0 && flock(s->wfd, LOCK_EX) < 0) {
		spool_abort(s);
		return -1;
	}
	return s->wfd;
}

/* Remove staged messages from the i-th on: they never reach new/. */
static void unstage_from(struct spool *s, size_t i)
{
	int saved = errno;

	for (; i < s->nstaged; i++)
		unlinkat(s->tmpfd, s->staged[i], 0);
	s->nstaged = 0;
	errno = saved;
}

int spool_commit(struct spool *s)
{
	int r = xfsync(s->wfd);

	if (close(s->wfd) < 0 && r == 0)
		r = -1;
	s->wfd = -1;
	if (r < 0) {
		/* The writer has failed: what waits with it is not published. */
		spool_abort(s);
		unstage_from(s, 0);
		return -1;
	}
	if (!s->staged)
		s->staged = xmalloc(STAGED_MAX * sizeof(*s->staged));
	memcpy(s->staged[s->nstaged++], s->wname, sizeof(s->wname));
	return s->nstaged == STAGED_MAX ? spool_publish(s) : 0;
}

int spool_publish(struct spool *s)
{
	size_t i;

	if (!s->nstaged)
		return 0;
	for (i = 0; i < s->nstaged; i++)
		if (renameat(s->tmpfd, s->staged[i], s->newfd, s->staged[i]) < 0) {
			unstage_from(s, i);
			return -1;
		}
	s->nstaged = 0;
	/* The renames are durable once new/ is: one sync for them all. */
	return xfsync(s->newfd);
}

void spool_abort(struct spool *s)
{
	int saved = errno;

	if (s->wfd >= 0)
		close(s->wfd);
	s->wfd = -1;
	unlinkat(s->tmpfd, s->wname, 0);
	errno = saved;
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
		if (l->n == l->alloc) {
			l->alloc = l->alloc ? 2 * l->alloc : 64;
			l->names = xrealloc(l->names, l->alloc * sizeof(*l->names));
		}
		l->names[l->n++] = xstrdup(e->d_name);
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

/*
 * Take one file of dirfd: lock it first, so that of two readers racing
 * for it only one goes on; from new/ it then moves to cur/.
 */
static int take(struct spool *s, int dirfd, const char *name)
{
	int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	struct stat st;

	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		close(fd);
		return -1;
	}
	/* Locked only after its reader finished and deleted it: too late. */
	if (fstat(fd, &st) < 0 || st.st_nlink == 0) {
		close(fd);
		return -1;
	}
	if (dirfd == s->newfd && renameat(s->newfd, name, s->curfd, name) < 0) {
		close(fd);	/* another reader renamed it first */
		return -1;
	}
	s->held[s->nheld].fd = fd;
	snprintf(s->held[s->nheld].name, sizeof(s->held[s->nheld].name), "%s", name);
	s->nheld++;
	return fd;
}

/* An orphan in cur/: a message whose reader died before it was done. */
static int claim_orphan(struct spool *s)
{
	struct listing cur = { 0 };
	int fd = -1;

	if (list_oldest(s->curfd, &cur) == 0)
		for (size_t i = 0; i < cur.n && fd < 0; i++)
			fd = take(s, s->curfd, cur.names[i]);
	listing_release(&cur);
	return fd;
}

/*
 * The next message of new/, from the listing kept since the last call:
 * new/ is read again only when that runs out, so draining a spool of n
 * files costs one listing per LISTING_MAX messages, not one per message.
 * Names another reader took meanwhile fail to open and are passed over.
 */
static int claim_listed(struct spool *s)
{
	struct listing *l = &s->fresh;

	while (l->next < l->n) {
		const char *name = l->names[l->next++];
		int fd;

		/* --once: sorted, so the rest are newer still. */
		if (s->horizon && strcmp(name, s->horizon) > 0) {
			l->next = l->n;
			break;
		}
		if ((fd = take(s, s->newfd, name)) >= 0)
			return fd;
	}
	return -1;
}

/* Sleep until new/ may have changed; 0 when woken by a change, 1 when
 * the time ran out (orphans in cur/ raise no event: look for them then). */
static int wait_for_new(struct spool *s)
{
	struct pollfd p;
	char drain[4096];

	if (s->inotify == -1) {
		s->inotify = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
		if (s->inotify >= 0) {
			char path[4096];
			snprintf(path, sizeof(path), "%s/new", s->dir);
			if (inotify_add_watch(s->inotify, path, IN_MOVED_TO | IN_CREATE) < 0) {
				close(s->inotify);
				s->inotify = -2;	/* do not try again: poll */
			}
		}
	}
	if (s->inotify < 0) {
		poll(NULL, 0, POLL_MS);
		return 1;
	}
	p.fd = s->inotify;
	p.events = POLLIN;
	if (poll(&p, 1, 5 * POLL_MS) <= 0)
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

int spool_claim(struct spool *s, int wait, struct buf *name)
{
	int fd = -1;

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
	for (;;) {
		/* Between listings of new/, look for orphans of readers that
		 * died: they are older than anything listed since. */
		if (s->fresh.next == s->fresh.n) {
			fd = claim_orphan(s);
			if (fd < 0 && list_oldest(s->newfd, &s->fresh) < 0)
				return -1;
		}
		if (fd < 0)
			fd = claim_listed(s);
		if (fd >= 0) {
			buf_reset(name);
			buf_addstr(name, s->held[s->nheld - 1].name);
			return fd;
		}
		if (!wait || io_stop_requested)
			return 0;
		if (wait_for_new(s) && time(NULL) - s->swept >= TMP_GRACE)
			sweep_tmp(s);
		if (io_stop_requested)
			return 0;
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
	char path[4096];
	int badfd, r;

	snprintf(path, sizeof(path), "%s/bad", s->dir);
	if (mkdir(path, 0700) < 0 && errno != EEXIST)
		return -1;
	if ((badfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		return -1;
	r = renameat(s->curfd, c->name, badfd, c->name);
	if (r == 0)
		r = xfsync(badfd);
	close(badfd);
	if (r == 0) {
		buf_reset(where);
		buf_addf(where, "dir:%s/bad/%s", s->dir, c->name);
		close(c->fd);
		s->nheld--;
	}
	return r;
}

void spool_release(struct spool *s)
{
	/* Closing drops the lock: the file is an orphan any reader takes. */
	close(s->held[--s->nheld].fd);
}
