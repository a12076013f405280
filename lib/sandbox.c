/* sandbox: the directories a stylesheet may read and write under. */
#include "sandbox.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* "." and "..": parts a path that does not exist cannot be resolved past. */
static int is_dot_part(const char *part)
{
	return !*part || !strcmp(part, ".") || !strcmp(part, "..");
}

/* The canonical form of a path realpath() found missing, part by part. */
static char *canonical_missing(const char *path)
{
	char *copy = xstrdup(path), *slash, *parent = NULL, *base;
	struct buf out = BUF_INIT;
	struct stat sb;

	/*
	 * realpath() says ENOENT for a dangling symbolic link too: writing
	 * through one would create its target, wherever that is.
	 */
	if (lstat(path, &sb) == 0) {
		errno = ELOOP;
		goto fail;
	}
	if (errno != ENOENT)
		goto fail;
	while ((slash = strrchr(copy, '/')) && slash != copy && !slash[1])
		*slash = '\0';		/* "dir/" is "dir" */
	slash = strrchr(copy, '/');
	base = slash ? slash + 1 : copy;
	if (is_dot_part(base)) {
		errno = ENOENT;
		goto fail;
	}
	if (slash == copy) {
		parent = xstrdup("/");
	} else if (slash) {
		*slash = '\0';
		parent = sandbox_canonical(copy);
	} else {
		parent = sandbox_canonical(".");
	}
	if (!parent)
		goto fail;
	buf_addstr(&out, parent);
	if (out.len > 1)
		buf_addch(&out, '/');
	buf_addstr(&out, base);
	free(parent);
	free(copy);
	return buf_detach(&out, NULL);
fail:
	free(copy);
	return NULL;
}

char *sandbox_canonical(const char *path)
{
	char *real;

	if (!*path) {
		errno = ENOENT;
		return NULL;
	}
	real = realpath(path, NULL);
	if (real || errno != ENOENT)
		return real;
	return canonical_missing(path);
}

int sandbox_inside(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	if (n == 1 && dir[0] == '/')
		return path[0] == '/';
	return !strncmp(path, dir, n) && (path[n] == '/' || path[n] == '\0');
}

int sandbox_within(const char *path, const char *dir)
{
	char *real = sandbox_canonical(path);
	int in = real && sandbox_inside(real, dir);

	free(real);
	return in;
}

static int dirs_have(const struct sandbox_dirs *d, const char *dir)
{
	for (size_t i = 0; i < d->n; i++)
		if (!strcmp(d->dir[i], dir))
			return 1;
	return 0;
}

/* Takes real, which is canonical. */
static void dirs_push(struct sandbox_dirs *d, char *real)
{
	if (dirs_have(d, real)) {
		free(real);
		return;
	}
	d->dir = xrealloc(d->dir, (d->n + 1) * sizeof(*d->dir));
	d->dir[d->n++] = real;
}

int sandbox_dirs_add(struct sandbox_dirs *d, const char *dir, struct buf *err)
{
	char *real = realpath(dir, NULL);
	struct stat sb;

	if (!real || stat(real, &sb) < 0 || !S_ISDIR(sb.st_mode)) {
		buf_addf(err, "no directory '%s'", dir);
		free(real);
		return -1;
	}
	dirs_push(d, real);
	return 0;
}

void sandbox_dirs_add_parent(struct sandbox_dirs *d, const char *file)
{
	char *real = sandbox_canonical(file), *slash;

	if (!real)
		return;
	slash = strrchr(real, '/');
	if (slash == real)
		slash[1] = '\0';
	else
		*slash = '\0';
	dirs_push(d, real);
}

int sandbox_dirs_allow(const struct sandbox_dirs *d, const char *path)
{
	char *real = sandbox_canonical(path);
	int found = 0;

	for (size_t i = 0; real && i < d->n && !found; i++)
		found = sandbox_inside(real, d->dir[i]);
	free(real);
	return found;
}

void sandbox_dirs_release(struct sandbox_dirs *d)
{
	for (size_t i = 0; i < d->n; i++)
		free(d->dir[i]);
	free(d->dir);
	d->dir = NULL;
	d->n = 0;
}

int sandbox_plain_relative(const char *name)
{
	const char *p = name;

	if (!*name || *name == '/')
		return 0;
	while (*p) {
		size_t n = strcspn(p, "/");
		if (n == 0 || (n == 1 && p[0] == '.') || (n == 2 && !memcmp(p, "..", 2)))
			return 0;
		p += n;
		if (*p == '/')
			p++;
		if (!*p && p[-1] == '/')
			return 0;
	}
	return 1;
}
