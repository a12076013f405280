/*
 * sandbox: which local files a stylesheet may read or write. A policy is
 * a list of directories in canonical form (absolute, symbolic links
 * resolved); a path is allowed when its canonical form lies under one of
 * them. Paths are resolved before the check, so neither ".." nor a
 * symbolic link, dangling or not, leads out of a directory.
 */
#ifndef MSG_SANDBOX_H
#define MSG_SANDBOX_H

#include <stddef.h>

#include "buf.h"

struct sandbox_dirs {
	char **dir;		/* canonical, each once */
	size_t n;
};

#define SANDBOX_DIRS_INIT { NULL, 0 }

/*
 * The canonical absolute form of path. A path that does not exist yet (a
 * file about to be written, directories about to be made) is resolved as
 * far as it exists and the rest appended; NULL with errno when that rest
 * holds "." or "..", or when a part of it is a dangling symbolic link
 * (ELOOP), whose target a write would create wherever it points.
 */
char *sandbox_canonical(const char *path);

/* Is the canonical path dir itself or under it? */
int sandbox_inside(const char *path, const char *dir);
/* Is path, once resolved, dir itself or under it (dir canonical)? */
int sandbox_within(const char *path, const char *dir);

/* Add the existing directory dir; -1 with a reason in err. */
int sandbox_dirs_add(struct sandbox_dirs *d, const char *dir, struct buf *err);
/* Add the directory that holds file, when it can be resolved. */
void sandbox_dirs_add_parent(struct sandbox_dirs *d, const char *file);
/* Is path, once resolved, under one of the directories? */
int sandbox_dirs_allow(const struct sandbox_dirs *d, const char *path);
void sandbox_dirs_release(struct sandbox_dirs *d);

/*
 * A name taken from a message, to be looked up under a directory: a
 * relative path with no empty, "." or ".." part.
 */
int sandbox_plain_relative(const char *name);

#endif
