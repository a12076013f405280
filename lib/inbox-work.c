/*
 * inbox-work: claims of a run in DIR/.msg/work/RUN, held by a flock on
 * RUN/lock, and those of dead runs given back (inbox-work.h).
 */
#include "inbox-work.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "id.h"
#include "io.h"
#include "safefile.h"

struct inbox_work {
	int inboxfd;		/* the inbox (not owned) */
	int workfd;		/* DIR/.msg/work */
	int runfd;		/* DIR/.msg/work/RUN */
	int lockfd;		/* RUN/lock, flocked */
	char run[UUID_STR_LEN + 1];
};

/*
 * A claimed file's name keeps its path in the inbox, so that whoever
 * gives it back knows where it goes: '/' is written "%2F", '%' "%25".
 */
static void encode_path(const char *path, struct buf *out)
{
	buf_reset(out);
	for (; *path; path++) {
		if (*path == '/')
			buf_addstr(out, "%2F");
		else if (*path == '%')
			buf_addstr(out, "%25");
		else
			buf_addch(out, *path);
	}
}

static void decode_path(const char *name, struct buf *out)
{
	buf_reset(out);
	for (; *name; name++) {
		if (!strncmp(name, "%2F", 3)) {
			buf_addch(out, '/');
			name += 2;
		} else if (!strncmp(name, "%25", 3)) {
			buf_addch(out, '%');
			name += 2;
		} else {
			buf_addch(out, *name);
		}
	}
}

static int mkdir_at(int dirfd, const char *name)
{
	return mkdirat(dirfd, name, 0700) < 0 && errno != EEXIST ? -1 : 0;
}

/* The directories above path in the inbox, made again if they went. */
static void make_parents(int inboxfd, const char *path)
{
	struct buf dir = BUF_INIT;

	for (const char *slash = strchr(path, '/'); slash; slash = strchr(slash + 1, '/')) {
		buf_reset(&dir);
		buf_add(&dir, path, (size_t)(slash - path));
		mkdir_at(inboxfd, dir.ptr);
	}
	buf_release(&dir);
}

/* A claimed file back into the inbox under its name: 0 or -1. */
static int put_back(int inboxfd, int runfd, const char *claimed)
{
	struct buf path = BUF_INIT;
	int r;

	decode_path(claimed, &path);
	make_parents(inboxfd, path.ptr);
	r = rename_noreplace(runfd, claimed, inboxfd, path.ptr);
	buf_release(&path);
	return r;
}

/* fn(inboxfd, dirfd, NAME) for each NAME in dirfd but hidden ones and
 * except; what fn cannot do is left for a later run. */
static void each_name(int inboxfd, int dirfd, const char *except,
		      int (*fn)(int inboxfd, int dirfd, const char *name))
{
	int fd = dup(dirfd);
	DIR *d = fd < 0 ? NULL : fdopendir(fd);
	struct dirent *de;

	if (!d) {
		if (fd >= 0)
			close(fd);
		return;
	}
	rewinddir(d);	/* the dup shares the offset of any earlier listing */
	while ((de = readdir(d)))
		if (de->d_name[0] != '.' && strcmp(de->d_name, except))
			fn(inboxfd, dirfd, de->d_name);
	closedir(d);
}

/*
 * RUN is a dead run's when its lock can be taken: each of its claims goes
 * back into the inbox; one whose name was taken there meanwhile (sent
 * again) stays, with the run's directory, for a later run.
 */
static int take_back(int inboxfd, int workfd, const char *run)
{
	int runfd = openat(workfd, run, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	int lockfd = runfd < 0 ? -1 : openat(runfd, "lock", O_RDONLY | O_CLOEXEC);

	if (lockfd >= 0 && flock(lockfd, LOCK_EX | LOCK_NB) == 0) {
		each_name(inboxfd, runfd, "lock", put_back);
		unlinkat(runfd, "lock", 0);
		unlinkat(workfd, run, AT_REMOVEDIR);
	}
	if (lockfd >= 0)
		close(lockfd);
	if (runfd >= 0)
		close(runfd);
	return 0;
}

/*
 * The run's directory is made under a hidden name with its lock held,
 * then renamed to RUN: a run looking for dead ones never sees a RUN
 * whose lock is not held yet.
 */
static int make_run_dir(struct inbox_work *w)
{
	char hidden[UUID_STR_LEN + 2];

	id_new(w->run);
	hidden[0] = '.';
	memcpy(hidden + 1, w->run, sizeof(w->run));
	if (mkdirat(w->workfd, hidden, 0700) < 0)
		return -1;
	w->runfd = openat(w->workfd, hidden, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (w->runfd < 0)
		return -1;
	w->lockfd = openat(w->runfd, "lock", O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (w->lockfd < 0 || flock(w->lockfd, LOCK_EX) < 0)
		return -1;
	return renameat(w->workfd, hidden, w->workfd, w->run);
}

struct inbox_work *inbox_work_open(int dirfd, const char *addr, struct buf *err)
{
	struct inbox_work *w = xmalloc(sizeof(*w));
	int msgfd = -1;

	*w = (struct inbox_work){ dirfd, -1, -1, -1, "" };
	if (mkdir_at(dirfd, ".msg") < 0 ||
	    (msgfd = openat(dirfd, ".msg", O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
			    O_CLOEXEC)) < 0 ||
	    mkdir_at(msgfd, "work") < 0 ||
	    (w->workfd = openat(msgfd, "work", O_RDONLY | O_DIRECTORY |
				O_NOFOLLOW | O_CLOEXEC)) < 0 ||
	    make_run_dir(w) < 0) {
		buf_addf(err, "cannot claim files in '%s' (in .msg/work): %s", addr,
			 strerror(errno));
		if (msgfd >= 0)
			close(msgfd);
		inbox_work_close(w);
		return NULL;
	}
	close(msgfd);
	each_name(w->inboxfd, w->workfd, w->run, take_back);
	return w;
}

int inbox_work_claim(struct inbox_work *w, const char *path, struct buf *claimed)
{
	encode_path(path, claimed);
	if (renameat(w->inboxfd, path, w->runfd, claimed->ptr) == 0)
		return 1;
	return errno == ENOENT ? 0 : -1;
}

int inbox_work_fd(const struct inbox_work *w)
{
	return w->runfd;
}

int inbox_work_delete(struct inbox_work *w, const char *claimed)
{
	return unlinkat(w->runfd, claimed, 0) < 0 && errno != ENOENT ? -1 : 0;
}

int inbox_work_sync(struct inbox_work *w)
{
	return xfsync(w->runfd);
}

int inbox_work_give_back(struct inbox_work *w, const char *claimed)
{
	return put_back(w->inboxfd, w->runfd, claimed);
}

void inbox_work_close(struct inbox_work *w)
{
	if (w->runfd >= 0) {
		/* What is still claimed stays, with a lock no one holds, for
		 * the next run to take back. */
		if (unlinkat(w->runfd, "lock", 0) == 0 &&
		    unlinkat(w->workfd, w->run, AT_REMOVEDIR) < 0) {
			int fd = openat(w->runfd, "lock", O_RDWR | O_CREAT |
					O_CLOEXEC, 0600);
			if (fd >= 0)
				close(fd);
		}
		close(w->runfd);
	}
	if (w->lockfd >= 0)
		close(w->lockfd);
	if (w->workfd >= 0)
		close(w->workfd);
	free(w);
}
