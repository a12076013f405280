/* io: EINTR-safe, short-write-safe I/O primitives. */
#include "io.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

volatile sig_atomic_t io_stop_requested;

ssize_t xread(int fd, void *p, size_t n)
{
	ssize_t r;

	do
		r = read(fd, p, n);
	while (r < 0 && errno == EINTR && !io_stop_requested);
	return r;
}

int io_read_may_wait(int fd)
{
	struct stat st;

	return fstat(fd, &st) < 0 || !(S_ISREG(st.st_mode) || S_ISBLK(st.st_mode));
}

int write_all(int fd, const void *p, size_t n)
{
	const char *s = p;

	while (n) {
		ssize_t w = write(fd, s, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (w == 0) {
			errno = ENOSPC;
			return -1;
		}
		s += w;
		n -= (size_t)w;
	}
	return 0;
}

ssize_t read_full(int fd, void *p, size_t n)
{
	char *s = p;
	size_t got = 0;

	while (got < n) {
		ssize_t r = xread(fd, s + got, n - got);
		if (r < 0)
			return -1;
		if (r == 0)
			break;
		got += (size_t)r;
	}
	return (ssize_t)got;
}

int xfsync(int fd)
{
	int r;

	do
		r = fsync(fd);
	while (r < 0 && errno == EINTR);
	return r;
}

int fsync_dir(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int r, saved;

	if (fd < 0)
		return -1;
	r = xfsync(fd);
	saved = errno;
	close(fd);
	errno = saved;
	return r;
}

int tmpfile_open(void)
{
	const char *dir = getenv("TMPDIR");
	char path[4096];
	int fd;

	if (!dir || !*dir)
		dir = "/tmp";
	fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd >= 0 || (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL))
		return fd;
	/* File systems without O_TMPFILE: create, then unlink at once. */
	snprintf(path, sizeof(path), "%s/msgtools.XXXXXX", dir);
	fd = mkstemp(path);
	if (fd >= 0)
		unlink(path);
	return fd;
}
