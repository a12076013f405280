/*
 * inbox: the files of a plain directory as raw inputs (inbox.h): listed,
 * chosen by name, taken oldest first, let go once what was made of them
 * is out.
 */
#include "inbox.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "dirent-open.h"
#include "inbox-after.h"
#include "inbox-busy.h"
#include "inbox-seen.h"
#include "inbox-work.h"
#include "io.h"
#include "keyset.h"

/* One entry as listed; kind is NULL for a file to take. */
struct inbox_entry {
	char *path;		/* relative to the inbox directory */
	struct timespec mtime;
	off_t size;
	const char *kind;
};

struct inbox {
	char *addr;
	int dirfd;
	struct inbox_work *work;	/* where files are claimed */
	struct inbox_options opt;
	struct inbox_entry *list;
	size_t n, at;
	int listed;
	struct timespec listed_at;	/* CLOCK_MONOTONIC, of the first look */
	int busy_seen;		/* a file left to its writer since the listing */
	int gave;		/* something handed out since the listing */
	uint64_t taken;		/* files handed out this run */
	struct inbox_seen *seen;	/* --idempotent, or NULL */
	struct inbox_after *after;	/* the files handed out, until done */
	struct keyset *named;	/* entries passed over, said once */
	struct buf name, claimed;
	struct buf record;	/* what seen is to remember of the file */
	struct headers headers;
};

/* Names that uploads use while a file is being written, and hidden ones. */
static int ignored_by_default(const char *name)
{
	static const char *const suffixes[] = {
		".tmp", ".part", ".filepart", ".partial", ".crdownload",
		".lftp-pget-status", "~",
	};
	size_t len = strlen(name);

	if (name[0] == '.')
		return 1;
	for (size_t i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++) {
		size_t n = strlen(suffixes[i]);
		if (len > n && !strcmp(name + len - n, suffixes[i]))
			return 1;
	}
	return 0;
}

static int matches_any(const char *const *globs, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (fnmatch(globs[i], name, 0) == 0)
			return 1;
	return 0;
}

int inbox_name_selected(const struct inbox_options *opt, const char *name)
{
	size_t n = strlen(name), m = opt->done_marker ? strlen(opt->done_marker) : 0;

	if (ignored_by_default(name))
		return 0;
	if (m && n >= m && !strcmp(name + n - m, opt->done_marker))
		return 0;	/* a marker, never data */
	if (opt->ninclude && !matches_any(opt->include, opt->ninclude, name))
		return 0;
	return !matches_any(opt->exclude, opt->nexclude, name);
}

static void add_entry(struct inbox *ib, const char *path,
		      const struct stat *st, const char *kind)
{
	ib->list = xrealloc(ib->list, (ib->n + 1) * sizeof(*ib->list));
	ib->list[ib->n++] = (struct inbox_entry){ xstrdup(path), st->st_mtim,
						   st->st_size, kind };
}

static void clear_list(struct inbox *ib)
{
	while (ib->n)
		free(ib->list[--ib->n].path);
	ib->at = 0;
}

static int list_dir(struct inbox *ib, const char *rel);

/* With --done-marker, is NAME's marker there? Always 1 without. */
static int marked_done(const struct inbox *ib, int dfd, const char *name)
{
	struct buf marker = BUF_INIT;
	struct stat st;
	int there;

	if (!ib->opt.done_marker)
		return 1;
	buf_addf(&marker, "%s%s", name, ib->opt.done_marker);
	there = fstatat(dfd, marker.ptr, &st, AT_SYMLINK_NOFOLLOW) == 0;
	buf_release(&marker);
	return there;
}

/* One entry of the directory rel ("" for the inbox itself). */
static int list_entry(struct inbox *ib, int dfd, const char *rel,
		      const char *name)
{
	struct buf path = BUF_INIT;
	struct stat st;
	int r = 0;

	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : -1;	/* gone: taken by another */
	buf_addf(&path, "%s%s%s", rel, *rel ? "/" : "", name);
	if (S_ISDIR(st.st_mode) && name[0] == '.')
		;	/* hidden, and DIR/.msg is the readers' own */
	else if (S_ISDIR(st.st_mode) && inbox_after_owns(ib->after, &st))
		;	/* --done or --failed, inside the inbox */
	else if (S_ISDIR(st.st_mode) && ib->opt.recursive)
		r = list_dir(ib, path.ptr);
	else if (!inbox_name_selected(&ib->opt, name) && !S_ISDIR(st.st_mode))
		;
	else if (S_ISREG(st.st_mode) && !marked_done(ib, dfd, name))
		;	/* not complete yet, by its writer's word */
	else
		add_entry(ib, path.ptr, &st,
			  S_ISREG(st.st_mode) ? NULL : dirent_kind(st.st_mode));
	buf_release(&path);
	return r;
}

static int list_dir(struct inbox *ib, const char *rel)
{
	int dfd = *rel ? openat(ib->dirfd, rel, O_RDONLY | O_DIRECTORY |
				O_NOFOLLOW | O_CLOEXEC)
		       : dup(ib->dirfd);
	DIR *d = dfd < 0 ? NULL : fdopendir(dfd);
	struct dirent *de;
	int r = 0;

	if (!d) {
		if (dfd >= 0)
			close(dfd);
		/* A subdirectory removed under us holds nothing to take. */
		return *rel && errno == ENOENT ? 0 : -1;
	}
	if (!*rel)
		rewinddir(d);	/* the dup shares the offset of the last listing */
	while (r == 0 && (errno = 0, de = readdir(d))) {
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			r = list_entry(ib, dirfd(d), rel, de->d_name);
	}
	if (r == 0 && errno)
		r = -1;
	closedir(d);
	return r;
}

static int by_age_then_name(const void *a, const void *b)
{
	const struct inbox_entry *x = a, *y = b;

	if (x->mtime.tv_sec != y->mtime.tv_sec)
		return x->mtime.tv_sec < y->mtime.tv_sec ? -1 : 1;
	if (x->mtime.tv_nsec != y->mtime.tv_nsec)
		return x->mtime.tv_nsec < y->mtime.tv_nsec ? -1 : 1;
	return strcmp(x->path, y->path);
}

static int list_inbox(struct inbox *ib)
{
	clear_list(ib);
	ib->listed = 1;
	ib->gave = 0;
	clock_gettime(CLOCK_MONOTONIC, &ib->listed_at);
	if (list_dir(ib, "") < 0)
		return -1;
	if (ib->n)	/* an empty list may have no array at all */
		qsort(ib->list, ib->n, sizeof(*ib->list), by_age_then_name);
	return 0;
}

struct inbox *inbox_open(const char *addr, const struct inbox_options *opt,
			 struct buf *err)
{
	const char *dir = addr + strlen("inbox:");
	struct inbox *ib;
	int fd;

	if (!*dir) {
		buf_addf(err, "missing directory in channel '%s'", addr);
		return NULL;
	}
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		buf_addf(err, "cannot open '%s': %s", addr, strerror(errno));
		return NULL;
	}
	ib = xmalloc(sizeof(*ib));
	memset(ib, 0, sizeof(*ib));
	ib->work = inbox_work_open(fd, addr, err);
	if (!ib->work) {
		close(fd);
		free(ib);
		return NULL;
	}
	if (opt->idempotent) {
		ib->seen = inbox_seen_open(dir, opt->remember_ms ? opt->remember_ms
					   : INBOX_REMEMBER_MS, err);
		if (!ib->seen) {
			inbox_work_close(ib->work);
			close(fd);
			free(ib);
			return NULL;
		}
	}
	ib->after = inbox_after_new(fd, ib->work, addr, opt, ib->seen);
	ib->addr = xstrdup(addr);
	ib->dirfd = fd;
	ib->opt = *opt;
	if (!ib->opt.settle_set)
		ib->opt.settle_ms = INBOX_SETTLE_MS;
	/* Said once per name for as long as the run lasts. */
	ib->named = keyset_new(INT64_MAX / 2, 0);
	buf_init(&ib->name, 0);
	buf_init(&ib->claimed, 0);
	buf_init(&ib->record, 0);
	headers_init(&ib->headers);
	return ib;
}

/* The headers every message made from the file carries. */
static void file_headers(struct inbox *ib, const char *path,
			 const struct stat *st)
{
	const char *base = strrchr(path, '/');
	char mtime[TIMESTAMP_LEN + 1];

	timestamp_format(mtime, (int64_t)st->st_mtim.tv_sec * 1000 +
				st->st_mtim.tv_nsec / 1000000);
	headers_reset(&ib->headers);
	headers_set(&ib->headers, "File-Name", base ? base + 1 : path);
	headers_set(&ib->headers, "File-Path", path);
	headers_set_u64(&ib->headers, "File-Size", (unsigned long long)st->st_size);
	headers_set(&ib->headers, "File-Mtime", mtime);
}

/* The file claimed is not to be read: back where it was. */
static int give_back(struct inbox *ib, int fd)
{
	int saved = errno;

	if (fd >= 0)
		close(fd);
	inbox_work_give_back(ib->work, ib->claimed.ptr);
	errno = saved;
	return -1;
}

/* A file that a writer on this machine still has open or locked is
 * left where it is, to be taken once it is done: 1. Looked at where it
 * lies, before it is claimed, so the writer's file is never moved. */
static int still_written(struct inbox *ib, const char *path)
{
	mode_t mode;
	int fd = dirent_open_regular(ib->dirfd, path, &mode);
	int busy;

	if (fd < 0)
		return 0;	/* gone, or not a file: the claim sees to it */
	busy = inbox_busy(fd) == INBOX_BUSY;
	close(fd);
	if (busy)
		ib->busy_seen = 1;
	return busy;
}

/* The second look, --settle after the listing: are the file's size and
 * mtime what the listing saw? 1 if so; 0 if it changed (its writer is
 * still at it, left for a later look) or went. */
static int settled(struct inbox *ib, const struct inbox_entry *e)
{
	struct timespec until = ib->listed_at;
	struct stat st;
	int r;

	if (ib->opt.settle_ms == 0)
		return 1;
	until.tv_sec += ib->opt.settle_ms / 1000;
	until.tv_nsec += ib->opt.settle_ms % 1000 * 1000000;
	if (until.tv_nsec >= 1000000000) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000;
	}
	/* One wait a listing, whatever the number of files; a stop cuts it
	 * short, and the files are left unsettled. */
	while ((r = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &until,
				    NULL)) == EINTR && !io_stop_requested)
		;
	if (r != 0)
		return 0;
	if (fstatat(ib->dirfd, e->path, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return 0;
	if (st.st_size == e->size && st.st_mtim.tv_sec == e->mtime.tv_sec &&
	    st.st_mtim.tv_nsec == e->mtime.tv_nsec)
		return 1;
	ib->busy_seen = 1;
	return 0;
}

/* The entry cannot be taken for a fault of the machine (errno, as
 * action failed): it stays in the inbox for a later try. */
static int cannot(struct inbox_file *f, const char *action)
{
	f->action = action;
	f->err = errno;
	return INBOX_SKIPPED;
}

/* Claim the entry in hand and open it: INBOX_FILE, INBOX_PASSED,
 * INBOX_NONE when another run took it first or a writer still has it,
 * or INBOX_SKIPPED. */
static int open_entry(struct inbox *ib, const struct inbox_entry *e,
		      struct inbox_file *f)
{
	struct stat st;
	mode_t mode = 0;
	int fd, claimed;

	if (e->kind) {
		f->kind = e->kind;
		return INBOX_PASSED;
	}
	if (!settled(ib, e) || still_written(ib, e->path))
		return INBOX_NONE;
	claimed = inbox_work_claim(ib->work, e->path, &ib->claimed);
	if (claimed <= 0)
		return claimed < 0 ? cannot(f, "claim") : INBOX_NONE;
	fd = dirent_open_regular(inbox_work_fd(ib->work), ib->claimed.ptr, &mode);
	if (fd == DIRENT_NOT_REGULAR) {
		/* Swapped for something else since it was listed. */
		give_back(ib, -1);
		f->kind = dirent_kind(mode);
		return INBOX_PASSED;
	}
	if (fd < 0 || fstat(fd, &st) < 0) {
		give_back(ib, fd);
		return cannot(f, "read");
	}
	if (ib->seen) {
		/* The record cannot be asked: the run ends there. */
		int repeat = inbox_seen_check(ib->seen, e->path, fd, &st,
					      &ib->record);
		if (repeat < 0)
			return give_back(ib, fd);
		if (repeat) {
			close(fd);
			return INBOX_REPEATED;
		}
	}
	file_headers(ib, e->path, &st);
	f->fd = fd;
	f->headers = &ib->headers;
	return INBOX_FILE;
}

/* List again, every second until something is there or a stop. A
 * listing that gave nothing to take (a file left to its writer, or only
 * entries named already, such as a sub-folder or a symbolic link) is
 * looked at again a second later, not at once: at once, the walk would
 * spin through them and never see the stop. */
static int wait_for_entries(struct inbox *ib)
{
	int pause = ib->busy_seen || !ib->gave;

	ib->busy_seen = 0;
	for (;;) {
		/* A signal cuts the sleep short; the check after sees it. */
		if (pause)
			nanosleep(&(struct timespec){ .tv_sec = 1 }, NULL);
		if (io_stop_requested)
			return 0;
		if (list_inbox(ib) < 0)
			return -1;
		if (ib->n)
			return 0;
		pause = 1;
	}
}

/* The file claimed is handed out, to be let go at inbox_done with its
 * marker; record is what --idempotent remembers of it, or NULL. */
static void hand_out(struct inbox *ib, const char *path, const char *record)
{
	struct buf marker = BUF_INIT;

	if (ib->opt.done_marker)
		buf_addf(&marker, "%s%s", path, ib->opt.done_marker);
	inbox_after_add(ib->after, ib->claimed.ptr, path,
			marker.len ? marker.ptr : NULL, record);
	buf_release(&marker);
}

int inbox_next(struct inbox *ib, int wait, struct inbox_file *f)
{
	memset(f, 0, sizeof(*f));
	f->fd = -1;
	if (!ib->listed && list_inbox(ib) < 0)
		return -1;
	for (;;) {
		const struct inbox_entry *e;
		int found;

		if (ib->opt.max_files && ib->taken >= ib->opt.max_files)
			return INBOX_NONE;
		if (ib->at == ib->n) {
			if (!wait)
				return INBOX_NONE;
			if (wait_for_entries(ib) < 0)
				return -1;
			if (ib->at == ib->n)
				return INBOX_NONE;	/* asked to stop */
		}
		e = &ib->list[ib->at++];
		buf_reset(&ib->name);
		buf_addf(&ib->name, "%s/%s", ib->addr, e->path);
		f->path = e->path;
		f->name = ib->name.ptr;
		found = open_entry(ib, e, f);
		if ((found == INBOX_PASSED || found == INBOX_SKIPPED) &&
		    !keyset_insert(ib->named, e->path, strlen(e->path), 0))
			continue;	/* named already */
		if (found == INBOX_NONE)
			continue;
		ib->gave = 1;
		if (found == INBOX_FILE || found == INBOX_REPEATED) {
			ib->taken++;
			hand_out(ib, e->path, ib->seen && found == INBOX_FILE
				 ? ib->record.ptr : NULL);
		}
		return found;
	}
}

int inbox_set_aside(struct inbox *ib, const char *why, struct buf *where)
{
	return inbox_after_fail_last(ib->after, why, where);
}

int inbox_done(struct inbox *ib)
{
	return inbox_after_done(ib->after);
}

void inbox_release(struct inbox *ib)
{
	if (inbox_after_held(ib->after)) {
		inbox_after_give_back_last(ib->after);
		ib->taken--;
	}
}

void inbox_close(struct inbox *ib)
{
	clear_list(ib);
	free(ib->list);
	inbox_after_free(ib->after);	/* what is held goes back */
	inbox_seen_close(ib->seen);
	inbox_work_close(ib->work);
	keyset_free(ib->named);
	buf_release(&ib->name);
	buf_release(&ib->claimed);
	buf_release(&ib->record);
	headers_release(&ib->headers);
	close(ib->dirfd);
	free(ib->addr);
	free(ib);
}
