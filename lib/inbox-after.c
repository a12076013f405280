/*
 * inbox-after: an inbox's files held until their messages are out, then
 * deleted or moved to --done; those that fail moved to --failed with the
 * reason beside them (inbox-after.h).
 */
#include "inbox-after.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "inbox.h"
#include "inbox-seen.h"
#include "inbox-work.h"
#include "io.h"
#include "safefile.h"

/* A directory files are moved into: --done or --failed. */
struct after_place {
	const char *template;	/* strftime(3) fields when expand is set */
	int expand;
	const char *shown;	/* names it in diagnostics; NULL: its path */
	struct buf path;	/* the template as last expanded */
	int fd;			/* of path, or -1 */
	int unsynced;		/* a file was moved in since its last sync */
	struct numbered_names names;
};

/* A file handed out and not yet let go. */
struct taken {
	char *claimed;		/* its name in the run's claims */
	char *path;		/* in the inbox */
	char *marker;		/* its --done-marker file, or NULL */
	char *record;		/* for seen, or NULL */
};

struct inbox_after {
	int inboxfd;
	struct inbox_work *work;
	struct inbox_seen *seen;
	struct after_place done;	/* template NULL: files are deleted */
	struct after_place failed;
	struct buf failed_default;	/* DIR/.msg/failed */
	struct buf failed_shown;	/* inbox:DIR/.msg/failed */
	struct taken *files;
	size_t n;
};

static void place_init(struct after_place *p, const char *template,
		       int expand, const char *shown)
{
	p->template = template;
	p->expand = expand;
	p->shown = shown;
	buf_init(&p->path, 0);
	p->fd = -1;
	p->unsynced = 0;
	numbered_names_init(&p->names);
}

static int place_sync(struct after_place *p)
{
	if (!p->unsynced)
		return 0;
	p->unsynced = 0;
	return xfsync(p->fd);
}

static void place_release(struct after_place *p)
{
	if (p->fd >= 0)
		close(p->fd);
	buf_release(&p->path);
	numbered_names_release(&p->names);
}

/* The template as the clock says now, into out: 0, or -1 (EINVAL) when
 * it makes nothing. */
static int expand_template(const struct after_place *p, struct buf *out)
{
	char path[4096];
	time_t now = time(NULL);
	struct tm tm;

	buf_reset(out);
	if (!p->expand) {
		buf_addstr(out, p->template);
		return 0;
	}
	/* The template is the operator's, from the command line. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
	if (!localtime_r(&now, &tm) ||
	    strftime(path, sizeof(path), p->template, &tm) == 0) {
		errno = EINVAL;
		return -1;
	}
#pragma GCC diagnostic pop
	buf_addstr(out, path);
	return 0;
}

/* The directory files go into now, made if missing: its descriptor, or
 * -1 with errno. One that the clock moved away from is synced first. */
static int place_dir(struct after_place *p)
{
	struct buf now = BUF_INIT;
	int fd = -1;

	if (expand_template(p, &now) < 0)
		goto out;
	if (p->fd >= 0 && !strcmp(now.ptr, p->path.ptr)) {
		fd = p->fd;
		goto out;
	}
	if (p->fd >= 0) {
		if (place_sync(p) < 0)
			goto out;
		close(p->fd);
		p->fd = -1;
	}
	fd = open(now.ptr, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT && make_dirs(now.ptr) == 0)
		fd = open(now.ptr, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		p->fd = fd;
		buf_reset(&p->path);
		buf_addstr(&p->path, now.ptr);
	}
out:
	buf_release(&now);
	return fd;
}

struct move {
	int fromfd, tofd;
	const char *from;
};

static int move_as(void *ctx, const char *name)
{
	const struct move *m = ctx;

	return rename_noreplace(m->fromfd, m->from, m->tofd, name);
}

/* The claimed file into p's directory under base (or base.1, ...), the
 * name used in final: the directory's descriptor, or -1 with errno. */
static int place_move(struct after_place *p, struct inbox_work *w,
		      const char *claimed, const char *base, struct buf *final)
{
	struct move m = { inbox_work_fd(w), -1, claimed };

	buf_reset(final);
	m.tofd = place_dir(p);
	if (m.tofd < 0 || numbered_place(&p->names, base, final, move_as, &m) < 0) {
		buf_reset(final);
		return -1;
	}
	p->unsynced = 1;
	return m.tofd;
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

struct inbox_after *inbox_after_new(int inboxfd, struct inbox_work *w,
				    const char *addr,
				    const struct inbox_options *opt,
				    struct inbox_seen *seen)
{
	struct inbox_after *a = xcalloc(1, sizeof(*a));

	a->inboxfd = inboxfd;
	a->work = w;
	a->seen = seen;
	buf_init(&a->failed_default, 0);
	buf_init(&a->failed_shown, 0);
	buf_addf(&a->failed_default, "%s/.msg/failed", addr + strlen("inbox:"));
	buf_addf(&a->failed_shown, "%s/.msg/failed", addr);
	place_init(&a->done, opt->done_dir, 1, NULL);
	if (opt->failed_dir)
		place_init(&a->failed, opt->failed_dir, 1, NULL);
	else
		place_init(&a->failed, a->failed_default.ptr, 0,
			   a->failed_shown.ptr);
	return a;
}

static void taken_clear(struct taken *t)
{
	free(t->claimed);
	free(t->path);
	free(t->marker);
	free(t->record);
}

void inbox_after_free(struct inbox_after *a)
{
	while (a->n)
		inbox_after_give_back_last(a);
	free(a->files);
	place_release(&a->done);
	place_release(&a->failed);
	buf_release(&a->failed_default);
	buf_release(&a->failed_shown);
	free(a);
}

void inbox_after_add(struct inbox_after *a, const char *claimed,
		     const char *path, const char *marker, const char *record)
{
	a->files = xrealloc(a->files, (a->n + 1) * sizeof(*a->files));
	a->files[a->n++] = (struct taken){
		xstrdup(claimed), xstrdup(path), marker ? xstrdup(marker) : NULL,
		record ? xstrdup(record) : NULL,
	};
}

size_t inbox_after_held(const struct inbox_after *a)
{
	return a->n;
}

/* What seen is to remember of the files, made durable before any of
 * them goes: 0 or -1. */
static int remember_all(struct inbox_after *a)
{
	if (!a->seen)
		return 0;
	for (size_t i = 0; i < a->n; i++)
		if (a->files[i].record &&
		    inbox_seen_put(a->seen, a->files[i].path, a->files[i].record) < 0)
			return -1;
	return inbox_seen_commit(a->seen);
}

/* One file let go, deleted or moved to --done, then its marker. */
static int let_go(struct inbox_after *a, const struct taken *t)
{
	struct buf final = BUF_INIT;
	int r;

	if (a->done.template)
		r = place_move(&a->done, a->work, t->claimed, base_name(t->path),
			       &final) < 0 ? -1 : 0;
	else
		r = inbox_work_delete(a->work, t->claimed);
	buf_release(&final);
	/* The marker after its file: never one without a file that a crash
	 * could leave to be taken again. */
	if (r == 0 && t->marker && unlinkat(a->inboxfd, t->marker, 0) < 0 &&
	    errno != ENOENT)
		r = -1;
	return r;
}

int inbox_after_done(struct inbox_after *a)
{
	int r = 0, markers = 0;
	size_t i;

	if (!a->n)
		return 0;
	if (remember_all(a) < 0)
		return -1;
	/* Past a file that cannot be let go, the others still are: their
	 * messages are out, and a file left claimed is delivered again. */
	for (i = 0; i < a->n; i++) {
		if (let_go(a, &a->files[i]) < 0)
			r = -1;
		markers |= a->files[i].marker != NULL;
	}
	/* What was not let go stays claimed, for the next run to take back. */
	for (size_t j = 0; j < a->n; j++)
		taken_clear(&a->files[j]);
	a->n = 0;
	/* The file in its new place first, then gone from the claims. */
	if (place_sync(&a->done) < 0 || (markers && xfsync(a->inboxfd) < 0))
		r = -1;
	return r < 0 ? -1 : inbox_work_sync(a->work);
}

/* NAME.error beside the failed file NAME: why, and a newline. */
static int write_reason(int dirfd, const char *name, const char *why)
{
	struct buf ename = BUF_INIT;
	int fd, r = -1;

	buf_addf(&ename, "%s.error", name);
	(void)unlinkat(dirfd, ename.ptr, 0);	/* a stale one of an earlier NAME */
	fd = openat(dirfd, ename.ptr, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
		    O_CLOEXEC, 0644);
	if (fd >= 0) {
		if (write_all(fd, why, strlen(why)) == 0 &&
		    write_all(fd, "\n", 1) == 0 && xfsync(fd) == 0)
			r = 0;
		close(fd);
	}
	buf_release(&ename);
	return r;
}

int inbox_after_fail_last(struct inbox_after *a, const char *why,
			  struct buf *where)
{
	struct taken t = a->files[--a->n];
	struct buf final = BUF_INIT;
	int fd = place_move(&a->failed, a->work, t.claimed, base_name(t.path),
			    &final);
	int r = -1;

	if (fd >= 0) {
		r = write_reason(fd, final.ptr, why);
		a->failed.unsynced = 0;
		if (xfsync(fd) < 0 || inbox_work_sync(a->work) < 0)
			r = -1;
		buf_addf(where, "%s/%s", a->failed.shown ? a->failed.shown
			 : a->failed.path.ptr, final.ptr);
	} else {
		/* Still claimed: back for the next run. */
		inbox_work_give_back(a->work, t.claimed);
	}
	buf_release(&final);
	taken_clear(&t);
	return r;
}

void inbox_after_give_back_last(struct inbox_after *a)
{
	struct taken *t = &a->files[--a->n];

	inbox_work_give_back(a->work, t->claimed);
	taken_clear(t);
}

/* The part of a template before the directory its first field is in. */
static void template_root(const char *template, struct buf *root)
{
	const char *field = strchr(template, '%');
	size_t len = field ? (size_t)(field - template) : strlen(template);

	buf_reset(root);
	buf_add(root, template, len);
	if (field) {
		while (root->len && root->ptr[root->len - 1] != '/')
			buf_setlen(root, root->len - 1);
		if (root->len > 1)
			buf_setlen(root, root->len - 1);
	}
	if (!root->len)
		buf_addstr(root, ".");
}

static int same_dir(const char *template, int expand, const struct stat *st)
{
	struct buf root = BUF_INIT;
	struct stat rst;
	int same;

	if (expand)
		template_root(template, &root);
	else
		buf_addstr(&root, template);
	same = stat(root.ptr, &rst) == 0 && rst.st_dev == st->st_dev &&
	       rst.st_ino == st->st_ino;
	buf_release(&root);
	return same;
}

int inbox_after_owns(const struct inbox_after *a, const struct stat *st)
{
	return (a->done.template && same_dir(a->done.template, 1, st)) ||
	       (a->failed.expand && same_dir(a->failed.template, 1, st));
}

/* The file system the directory root is, or would be made, on: that of
 * its nearest ancestor there. 0 or -1. */
static int future_dev(const char *root, dev_t *dev)
{
	struct buf dir = BUF_INIT;
	struct stat st;
	int r;

	buf_addstr(&dir, root);
	while ((r = stat(dir.ptr, &st)) < 0 && errno == ENOENT) {
		char *slash = strrchr(dir.ptr, '/');

		if (!slash || slash == dir.ptr) {
			buf_reset(&dir);
			buf_addstr(&dir, slash ? "/" : ".");
		} else {
			buf_setlen(&dir, (size_t)(slash - dir.ptr));
		}
	}
	*dev = st.st_dev;
	buf_release(&dir);
	return r;
}

/* A --done or --failed template: on the inbox's file system, and making
 * a name with the clock as it is now. */
static int check_place(const char *option, const char *template,
		       const char *addr, dev_t inbox_dev, struct buf *err)
{
	struct after_place p;
	struct buf root = BUF_INIT;
	dev_t dev;
	int r = 0;

	place_init(&p, template, 1, NULL);
	template_root(template, &root);
	if (!*template || expand_template(&p, &p.path) < 0) {
		buf_addf(err, "%s takes a directory, not '%s'", option, template);
		r = -1;
	} else if (future_dev(root.ptr, &dev) == 0 && dev != inbox_dev) {
		buf_addf(err, "%s '%s' is not on the file system of '%s': files "
			 "are moved there with one rename", option, template, addr);
		r = -1;
	}
	place_release(&p);
	buf_release(&root);
	return r;
}

int inbox_check(const char *addr, const struct inbox_options *opt,
		struct buf *err)
{
	struct stat st;

	if (opt->remember_ms && !opt->idempotent) {
		buf_addstr(err, "--remember needs --idempotent");
		return -1;
	}
	/* A missing inbox is for the reader to report. */
	if (stat(addr + strlen("inbox:"), &st) < 0)
		return 0;
	if (opt->done_dir &&
	    check_place("--done", opt->done_dir, addr, st.st_dev, err) < 0)
		return -1;
	if (opt->failed_dir &&
	    check_place("--failed", opt->failed_dir, addr, st.st_dev, err) < 0)
		return -1;
	return 0;
}
