/* io: EINTR-safe, short-write-safe I/O primitives. */
#include "io.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "id.h"
#include "sizes.h"

volatile sig_atomic_t io_stop_requested;

static int poll_unless_stopped(struct pollfd *p, nfds_t n, int timeout_ms)
{
	struct timespec ts = { timeout_ms / 1000, (long)(timeout_ms % 1000) * 1000000 };
	sigset_t stop, before;
	int r, saved;

	sigemptyset(&stop);
	sigaddset(&stop, SIGTERM);
	sigaddset(&stop, SIGINT);
	sigprocmask(SIG_BLOCK, &stop, &before);
	if (io_stop_requested) {
		r = -1;
		errno = EINTR;
	} else {
		r = ppoll(p, n, timeout_ms < 0 ? NULL : &ts, &before);
	}
	saved = errno;
	sigprocmask(SIG_SETMASK, &before, NULL);
	errno = saved;
	return r;
}

int io_poll(struct pollfd *p, int timeout_ms)
{
	return poll_unless_stopped(p, 1, timeout_ms);
}

int io_sleep_ms(int ms)
{
	return poll_unless_stopped(NULL, 0, ms) < 0 ? -1 : 0;
}

/* Wait on a FIFO opened without waiting until a writer has written or
 * come and gone (Linux reports POLLHUP only then): 0, or -1 with EINTR
 * when asked to stop. */
static int wait_for_writer(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return io_poll(&p, -1) < 0 ? -1 : 0;
}

int io_open_read(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK), flags, saved;
	struct stat st;

	if (fd < 0)
		return -1;
	if ((fstat(fd, &st) == 0 && S_ISFIFO(st.st_mode) && wait_for_writer(fd) < 0) ||
	    (flags = fcntl(fd, F_GETFL)) < 0 ||
	    fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) < 0) {
		saved = errno;
		close(fd);
		errno = saved;
		return -1;
	}
	return fd;
}

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

static int (*write_wait)(int fd, void *arg);
static void *write_wait_arg;

void io_set_write_wait(int (*wait)(int fd, void *arg), void *arg)
{
	write_wait = wait;
	write_wait_arg = arg;
}

static int is_pipe(int fd)
{
	struct stat st;

	return fstat(fd, &st) == 0 && S_ISFIFO(st.st_mode);
}

int write_all(int fd, const void *p, size_t n)
{
	const char *s = p;
	int paced = write_wait && n && is_pipe(fd);

	while (n) {
		size_t piece = n;
		ssize_t w;

		if (paced) {
			int r = write_wait(fd, write_wait_arg);
			if (r < 0)
				return -1;
			paced = r == 0;
			if (paced && piece > PIPE_BUF)
				piece = PIPE_BUF;
		}
		w = write(fd, s, piece);
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

int read_to_end(int fd, struct buf *out, size_t max)
{
	while (max) {
		size_t want;
		ssize_t r;

		/* Room a chunk at a time, or what the caller made beforehand. */
		buf_grow(out, max < IO_CHUNK ? max : IO_CHUNK);
		want = buf_avail(out) < max ? buf_avail(out) : max;
		r = read_full(fd, out->ptr + out->len, want);
		if (r < 0)
			return -1;
		buf_setlen(out, out->len + (size_t)r);
		if ((size_t)r < want)
			return 1;
		max -= want;
	}
	return 0;
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

int open_unique(int dirfd, const char *prefix, int flags, mode_t mode,
		char *name, size_t size)
{
	for (int tries = 0; tries < 100; tries++) {
		int fd;

		snprintf(name, size, "%s%016llx", prefix,
			 (unsigned long long)id_random64());
		fd = openat(dirfd, name, flags | O_CREAT | O_EXCL | O_CLOEXEC, mode);
		if (fd >= 0 || errno != EEXIST)
			return fd;
	}
	return -1;
}

/* File systems without O_TMPFILE: a file made in dir and unlinked at once,
 * named relative to the directory, so that no path is spelt out whole. */
static int tmpfile_named(const char *dir)
{
	int dirfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	char name[32];
	int fd, saved;

	if (dirfd < 0)
		return -1;
	fd = open_unique(dirfd, "msgtools.", O_RDWR, 0600, name, sizeof(name));
	saved = errno;
	if (fd >= 0)
		unlinkat(dirfd, name, 0);
	close(dirfd);
	errno = saved;
	return fd;
}

int tmpfile_open(void)
{
	const char *dir = getenv("TMPDIR");
	int fd;

	if (!dir || !*dir)
		dir = "/tmp";
	fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd >= 0 || (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL))
		return fd;
	return tmpfile_named(dir);
}
