/* test-io: reading a descriptor to its end, and unique file names. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "io.h"
#include "sizes.h"
#include "unit.h"

/* A pipe holding text, its write end closed unless keep_open: the read
 * end, and the write end in *wfd (or -1). */
static int pipe_with(const char *text, int keep_open, int *wfd)
{
	int p[2];

	if (pipe(p) < 0)
		return -1;
	if (write_all(p[1], text, strlen(text)) < 0)
		return -1;
	if (keep_open) {
		*wfd = p[1];
	} else {
		close(p[1]);
		*wfd = -1;
	}
	return p[0];
}

/* To the end, appended after what the buffer held. */
static void test_to_end(void)
{
	struct buf b = BUF_INIT;
	int w, fd = pipe_with("hello", 0, &w);

	buf_addstr(&b, ">");
	CHECK(read_to_end(fd, &b, SIZE_MAX) == 1);
	CHECK_STR(b.ptr, ">hello");
	CHECK(read_to_end(fd, &b, SIZE_MAX) == 1 && b.len == 6);
	close(fd);
	buf_release(&b);
}

/* max bytes first: 0, and no read past them, so a pipe whose writer is
 * still there does not make it wait; what is left comes on the next call. */
static void test_up_to_max(void)
{
	struct buf b = BUF_INIT;
	int w, fd = pipe_with("0123456789", 1, &w);

	alarm(10);	/* a read that waits fails the test, not hangs it */
	CHECK(read_to_end(fd, &b, 0) == 0 && b.len == 0);
	CHECK(read_to_end(fd, &b, 4) == 0);
	CHECK_STR(b.ptr, "0123");
	CHECK(read_to_end(fd, &b, 6) == 0);
	CHECK_STR(b.ptr, "0123456789");
	CHECK(write_all(w, "ab", 2) == 0 && close(w) == 0);
	CHECK(read_to_end(fd, &b, 3) == 1);
	CHECK_STR(b.ptr, "0123456789ab");
	alarm(0);
	close(fd);
	buf_release(&b);
}

/* Several read chunks' worth from a writer that sends it in pieces of
 * odd sizes: every byte, in order. */
static void test_many_chunks(void)
{
	size_t n = 3 * IO_CHUNK + 12345, good = 0;
	struct buf b = BUF_INIT;
	int p[2], status;
	pid_t child;

	CHECK(pipe(p) == 0);
	child = fork();
	if (child == 0) {
		char piece[7777];
		close(p[0]);
		for (size_t at = 0; at < n;) {
			size_t k = n - at < sizeof(piece) ? n - at : sizeof(piece);
			for (size_t i = 0; i < k; i++)
				piece[i] = (char)((at + i) % 251);
			if (write_all(p[1], piece, k) < 0)
				_exit(1);
			at += k;
		}
		_exit(0);
	}
	close(p[1]);
	CHECK(read_to_end(p[0], &b, SIZE_MAX) == 1);
	CHECK(b.len == n);
	for (size_t i = 0; i < b.len; i++)
		good += b.ptr[i] == (char)(i % 251);
	CHECK(good == n);
	CHECK(waitpid(child, &status, 0) == child && status == 0);
	close(p[0]);
	buf_release(&b);
}

/* A regular file, and a descriptor that cannot be read. */
static void test_file_and_error(void)
{
	struct buf b = BUF_INIT;
	int fd = tmpfile_open();

	CHECK(fd >= 0 && write_all(fd, "file text", 9) == 0 &&
	      lseek(fd, 5, SEEK_SET) == 5);
	CHECK(read_to_end(fd, &b, SIZE_MAX) == 1);
	CHECK_STR(b.ptr, "text");
	close(fd);
	errno = 0;
	CHECK(read_to_end(fd, &b, SIZE_MAX) == -1 && errno == EBADF);
	buf_release(&b);
}

/* open_unique: prefix and 16 hex digits, created with the mode asked. */
static void test_open_unique(void)
{
	char dir[] = "/tmp/test-io.XXXXXX", name[64];
	struct stat st;
	int dirfd, fd;

	CHECK(mkdtemp(dir) != NULL);
	dirfd = open(dir, O_RDONLY | O_DIRECTORY);
	umask(022);
	fd = open_unique(dirfd, "pre.", O_RDWR, 0640, name, sizeof(name));
	CHECK(fd >= 0);
	CHECK(strlen(name) == 20 && !strncmp(name, "pre.", 4) &&
	      strspn(name + 4, "0123456789abcdef") == 16);
	CHECK(fstatat(dirfd, name, &st, 0) == 0 && (st.st_mode & 0777) == 0640);
	CHECK(fcntl(fd, F_GETFD) == FD_CLOEXEC);
	CHECK(unlinkat(dirfd, name, 0) == 0 && rmdir(dir) == 0);
	close(fd);
	close(dirfd);
}

/* The write wait of io.h: counts its calls; says "room" (0) or, with
 * wait_says_nothing, that it has nothing to read meanwhile (1). */
static int wait_calls, wait_says_nothing;

static int count_wait(int fd, void *arg)
{
	(void)fd, (void)arg;
	wait_calls++;
	return wait_says_nothing;
}

/* A pipe's writer with a write wait set writes in pieces of PIPE_BUF,
 * each after the wait; a regular file, or a wait with nothing to read,
 * as one write; every byte arrives in order. */
static void test_write_wait(void)
{
	static char data[5 * 4096 + 100];
	struct buf got = BUF_INIT;
	int p[2], fd;
	pid_t pid;

	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (char)('a' + i % 26);
	io_set_write_wait(count_wait, NULL);
	CHECK(pipe(p) == 0);
	pid = fork();
	if (pid == 0) {
		close(p[0]);
		_exit(write_all(p[1], data, sizeof(data)) == 0 && wait_calls == 6 ? 0 : 1);
	}
	close(p[1]);
	CHECK(read_to_end(p[0], &got, SIZE_MAX) == 1);
	CHECK(got.len == sizeof(data) && !memcmp(got.ptr, data, got.len));
	{
		int st;
		CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0);
	}
	close(p[0]);

	wait_calls = 0;
	wait_says_nothing = 1;
	CHECK(pipe(p) == 0);
	CHECK(write_all(p[1], data, 3 * 4096) == 0);
	CHECK(wait_calls == 1);

	wait_calls = 0;
	fd = tmpfile_open();
	CHECK(fd >= 0 && write_all(fd, data, sizeof(data)) == 0);
	CHECK(wait_calls == 0);
	io_set_write_wait(NULL, NULL);
	close(fd);
	close(p[0]);
	close(p[1]);
	buf_release(&got);
}

int main(void)
{
	test_to_end();
	test_up_to_max();
	test_many_chunks();
	test_file_and_error();
	test_open_unique();
	test_write_wait();
	return unit_done();
}
