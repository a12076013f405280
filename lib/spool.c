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
#include <unistd.h>

#include "id.h"
#include "io.h"

#define POLL_MS 200

struct spool {
	char *dir;
	int tmpfd, newfd, curfd;	/* directory descriptors */
	/* the message being written */
	int wfd;
	char wname[UUID_STR_LEN + 32];
	/* the message claimed */
	int rfd;
	char rname[512];
	int inotify;			/* on new/, or -1: poll instead */
	/* --once: the newest name present when reading began; later ones
	 * (a flow writing back into its own spool) wait for the next run. */
	char *horizon;
	int horizon_set;
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

static int subdir(struct spool *s, const char *name, struct buf *err)
{
	int dfd;

	if (make_path(s->dir) < 0)
		goto fail;
	{
		char path[4096];
		snprintf(path, sizeof(path), "%s/%s", s->dir, name);
		if (mkdir(path, 0700) < 0 && errno != EEXIST)
			goto fail;
		dfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (dfd < 0)
			goto fail;
	}
	return dfd;
fail:
	buf_addf(err, "cannot use spool directory 'dir:%s': %s", s->dir, strerror(errno));
	return -1;
}

struct spool *spool_open(const char *dir, struct buf *err)
{
	struct spool *s = xmalloc(sizeof(*s));

	memset(s, 0, sizeof(*s));
	s->dir = xstrdup(dir);
	s->wfd = s->rfd = s->inotify = -1;
	s->tmpfd = s->newfd = s->curfd = -1;
	if ((s->tmpfd = subdir(s, "tmp", err)) < 0 ||
	    (s->newfd = subdir(s, "new", err)) < 0 ||
	    (s->curfd = subdir(s, "cur", err)) < 0) {
		spool_close(s);
		return NULL;
	}
	return s;
}

void spool_close(struct spool *s)
{
	if (!s)
		return;
	if (s->wfd >= 0)
		spool_abort(s);
	if (s->rfd >= 0)
		close(s->rfd);
	for (int *fd = &s->tmpfd; fd <= &s->curfd; fd++)
		if (*fd >= 0)
			close(*fd);
	if (s->inotify >= 0)
		close(s->inotify);
	free(s->horizon);
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
	return s->wfd;
}

int spool_commit(struct spool *s)
{
	int r = xfsync(s->wfd);

	if (close(s->wfd) < 0 && r == 0)
		r = -1;
	s->wfd = -1;
	if (r == 0)
		r = renameat(s->tmpfd, s->wname, s->newfd, s->wname);
	/* The rename is durable once new/ is. */
	if (r == 0)
		r = xfsync(s->newfd);
	if (r < 0) {
		int saved = errno;
		unlinkat(s->tmpfd, s->wname, 0);
		errno = saved;
	}
	return r;
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

/* The names in a directory, sorted (oldest first); NULL-terminated. */
static char **sorted_names(int dirfd, size_t *n)
{
	int fd = dup(dirfd);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *e;
	char **v = NULL;
	size_t alloc = 0;

	*n = 0;
	if (!d) {
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	rewinddir(d);
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		if (*n + 1 >= alloc) {
			alloc = alloc ? 2 * alloc : 64;
			v = xrealloc(v, alloc * sizeof(*v));
		}
		v[(*n)++] = xstrdup(e->d_name);
	}
	closedir(d);
	if (*n)
		qsort(v, *n, sizeof(*v), by_name);
	return v;
}

static void free_names(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
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
	s->rfd = fd;
	snprintf(s->rname, sizeof(s->rname), "%s", name);
	return fd;
}

static int claim_from(struct spool *s, int dirfd)
{
	size_t n;
	char **names = sorted_names(dirfd, &n);
	int fd = -1;

	for (size_t i = 0; i < n && fd < 0; i++) {
		if (dirfd == s->newfd && s->horizon && strcmp(names[i], s->horizon) > 0)
			break;	/* sorted: the rest are newer still */
		fd = take(s, dirfd, names[i]);
	}
	free_names(names, n);
	return fd;
}

/* Sleep until new/ may have changed: inotify where there is one. */
static void wait_for_new(struct spool *s)
{
	struct pollfd p;
	char drain[4096];

	if (s->inotify < 0) {
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
		return;
	}
	p.fd = s->inotify;
	p.events = POLLIN;
	/* The timeout also catches orphans that appear in cur/. */
	if (poll(&p, 1, 5 * POLL_MS) > 0)
		while (read(s->inotify, drain, sizeof(drain)) > 0)
			;
}

/* The newest name in new/ now: what a --once run will read up to. */
static void set_horizon(struct spool *s)
{
	size_t n;
	char **names = sorted_names(s->newfd, &n);

	s->horizon_set = 1;
	s->horizon = xstrdup(n ? names[n - 1] : "");
	free_names(names, n);
}

int spool_claim(struct spool *s, int wait, struct buf *name)
{
	int fd;

	if (!wait && !s->horizon_set)
		set_horizon(s);
	for (;;) {
		/* Orphans of readers that died come first: they are older. */
		fd = claim_from(s, s->curfd);
		if (fd < 0)
			fd = claim_from(s, s->newfd);
		if (fd >= 0) {
			buf_reset(name);
			buf_addstr(name, s->rname);
			return fd;
		}
		if (!wait || io_stop_requested)
			return 0;
		wait_for_new(s);
		if (io_stop_requested)
			return 0;
	}
}

int spool_done(struct spool *s)
{
	int r = unlinkat(s->curfd, s->rname, 0);

	close(s->rfd);
	s->rfd = -1;
	return r;
}

void spool_release(struct spool *s)
{
	/* Closing drops the lock: the file is an orphan any reader takes. */
	close(s->rfd);
	s->rfd = -1;
}
