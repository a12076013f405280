/* dirent-open: directory entries opened as regular files only. */
#include "dirent-open.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

int dirent_open_regular(int dirfd, const char *name, mode_t *mode)
{
	struct stat st;
	int fd;

	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return -1;
	if (!S_ISREG(st.st_mode)) {
		*mode = st.st_mode;
		return DIRENT_NOT_REGULAR;
	}
	fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0 && errno == ELOOP) {		/* made a link meanwhile */
		*mode = S_IFLNK;
		return DIRENT_NOT_REGULAR;
	}
	if (fd >= 0 && (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))) {
		*mode = st.st_mode;
		close(fd);
		return DIRENT_NOT_REGULAR;
	}
	return fd;
}

const char *dirent_kind(mode_t mode)
{
	switch (mode & S_IFMT) {
	case S_IFREG: return "a regular file";
	case S_IFLNK: return "a symbolic link";
	case S_IFDIR: return "a directory";
	case S_IFIFO: return "a FIFO";
	case S_IFSOCK: return "a socket";
	case S_IFCHR: return "a character device";
	case S_IFBLK: return "a block device";
	}
	return "of an unknown kind";
}
