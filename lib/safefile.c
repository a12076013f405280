/* safefile: atomic, never-overwriting file creation; safe names. */
#include "safefile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io.h"

int safe_name(const char *in, size_t n, struct buf *out)
{
	size_t start = out->len;

	for (size_t i = 0; i < n && out->len - start < SAFE_NAME_MAX; i++) {
		unsigned char c = (unsigned char)in[i];
		/* Never cut a UTF-8 character at the length limit. */
		if (c >= 0xc0 && out->len - start + (c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : 2) > SAFE_NAME_MAX)
			break;
		if (c == '/' || c == '\\' || c < 0x20 || c == 0x7f)
			c = '_';
		if (c == '.' && out->len == start)
			c = '_';
		buf_addch(out, (char)c);
	}
	if (out->len == start)
		return -1;
	return 0;
}

int atomic_file_open(struct atomic_file *af, int dirfd, mode_t mode)
{
	char prefix[32];

	snprintf(prefix, sizeof(prefix), ".tmp.%ld.", (long)getpid());
	af->fd = open_unique(dirfd, prefix, O_WRONLY, mode, af->tmpname,
			     sizeof(af->tmpname));
	if (af->fd < 0)
		return -1;
	af->dirfd = dirfd;
	return 0;
}

int atomic_file_write(struct atomic_file *af, const void *p, size_t n)
{
	return write_all(af->fd, p, n);
}

int atomic_file_chmod(struct atomic_file *af, mode_t mode)
{
	return fchmod(af->fd, mode);
}

void atomic_file_abort(struct atomic_file *af)
{
	int saved = errno;

	if (af->fd >= 0)
		close(af->fd);
	af->fd = -1;
	unlinkat(af->dirfd, af->tmpname, 0);
	errno = saved;
}

int rename_noreplace(int fromdir, const char *from, int todir, const char *to)
{
	struct stat st;

	if (renameat2(fromdir, from, todir, to, RENAME_NOREPLACE) == 0)
		return 0;
	if (errno != EINVAL && errno != ENOSYS)
		return -1;
	/* File systems without RENAME_NOREPLACE: link never replaces either. */
	if (linkat(fromdir, from, todir, to, 0) == 0) {
		unlinkat(fromdir, from, 0);
		return 0;
	}
	if (errno != EPERM)
		return -1;
	/* A directory cannot be linked: look first, the best left. */
	if (fstatat(todir, to, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		errno = EEXIST;
		return -1;
	}
	return errno == ENOENT ? renameat(fromdir, from, todir, to) : -1;
}

void atomic_file_start_writeback(struct atomic_file *af)
{
	int saved = errno;

	/* A file system that cannot (EINVAL, ESPIPE) is left to the fsync,
	 * which also reports any error of the writeback begun here. */
	(void)sync_file_range(af->fd, 0, 0, SYNC_FILE_RANGE_WRITE);
	errno = saved;
}

int atomic_file_seal(struct atomic_file *af)
{
	int r = xfsync(af->fd);

	if (close(af->fd) < 0)
		r = -1;
	af->fd = -1;
	if (r < 0)
		atomic_file_abort(af);
	return r;
}

int atomic_file_place(struct atomic_file *af, const char *name, int replace)
{
	int r = replace ? renameat(af->dirfd, af->tmpname, af->dirfd, name)
			: rename_noreplace(af->dirfd, af->tmpname, af->dirfd, name);

	if (r < 0 && (replace || errno != EEXIST))
		atomic_file_abort(af);
	return r;
}

void safe_suffixed(const char *name, unsigned k, struct buf *out)
{
	const char *dot = strrchr(name, '.');

	buf_reset(out);
	if (!dot || dot == name) {
		buf_addf(out, "%s-%u", name, k);
		return;
	}
	buf_add(out, name, (size_t)(dot - name));
	buf_addf(out, "-%u%s", k, dot);
}

static struct buf last_name = BUF_INIT;
static unsigned last_k = 1;

int atomic_file_commit(struct atomic_file *af, const char *name,
		       struct buf *final)
{
	unsigned k, resume;
	int r;

	if (atomic_file_seal(af) < 0)
		return -1;
	/* The plain name first; then, since children of one file share its
	 * name, resume counting where the last commit of that name stopped
	 * rather than trying 2, 3, ... every time. */
	resume = last_name.len && !strcmp(last_name.ptr, name) ? last_k + 1 : 2;
	for (k = 1;; k = k == 1 ? resume : k + 1) {
		if (k == 1) {
			buf_reset(final);
			buf_addstr(final, name);
		} else {
			safe_suffixed(name, k, final);
		}
		if ((r = atomic_file_place(af, final->ptr, 0)) == 0)
			break;
		if (errno != EEXIST)
			return r;
	}
	buf_reset(&last_name);
	buf_addstr(&last_name, name);
	last_k = k;
	return 0;
}

int rename_unique(int fromdir, const char *from, int todir, const char *name,
		  struct buf *final)
{
	for (unsigned k = 1;; k++) {
		if (k == 1) {
			buf_reset(final);
			buf_addstr(final, name);
		} else {
			safe_suffixed(name, k, final);
		}
		if (rename_noreplace(fromdir, from, todir, final->ptr) == 0)
			return 0;
		if (errno != EEXIST)
			return -1;
	}
}

void numbered_names_init(struct numbered_names *nn)
{
	buf_init(&nn->last_name, 0);
	nn->last_k = 0;
}

void numbered_names_release(struct numbered_names *nn)
{
	buf_release(&nn->last_name);
}

int numbered_place(struct numbered_names *nn, const char *name,
		   struct buf *final, int (*place)(void *ctx, const char *name),
		   void *ctx)
{
	int same = nn->last_name.len && !strcmp(nn->last_name.ptr, name);
	unsigned long k = same ? nn->last_k + 1 : 1;

	buf_reset(final);
	buf_addstr(final, name);
	if (place(ctx, name) == 0)
		return 0;
	for (; errno == EEXIST; k++) {
		buf_reset(final);
		buf_addf(final, "%s.%lu", name, k);
		if (place(ctx, final->ptr) == 0) {
			buf_reset(&nn->last_name);
			buf_addstr(&nn->last_name, name);
			nn->last_k = k;
			return 0;
		}
	}
	return -1;
}

int make_dirs(const char *path)
{
	struct buf dir = BUF_INIT;
	/* Length of the parent of dir: 0 for ".", 1 for "/". */
	size_t parent = path[0] == '/';
	int r = 0;

	for (const char *p = path + 1; r == 0; p++) {
		if (*p != '/' && *p != '\0')
			continue;
		buf_reset(&dir);
		buf_add(&dir, path, (size_t)(p - path));
		if (mkdir(dir.ptr, 0777) == 0) {
			buf_setlen(&dir, parent);
			r = fsync_dir(parent ? dir.ptr : ".");
		} else if (errno != EEXIST) {
			r = -1;
		}
		parent = (size_t)(p - path);
		if (*p == '\0')
			break;
	}
	buf_release(&dir);
	return r;
}
