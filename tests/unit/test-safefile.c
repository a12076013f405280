/* test-safefile: safe names from message data; atomic, never-replacing files. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "safefile.h"
#include "unit.h"

static void named(const char *in, size_t n, const char *want)
{
	struct buf out = BUF_INIT;

	CHECK(safe_name(in, n, &out) == 0);
	CHECK_STR(out.ptr, want);
	buf_release(&out);
}

static void test_safe_name(void)
{
	struct buf out = BUF_INIT;
	char long_name[300];

	named("orders.xml", 10, "orders.xml");
	named("../../etc/x", 11, "_._.._etc_x");
	named("..", 2, "_.");
	named(".", 1, "_");
	named(".hidden", 7, "_hidden");
	named("a/b", 3, "a_b");
	named("/etc/passwd", 11, "_etc_passwd");
	named("a\\b", 3, "a_b");
	named("a\x01 b\x1f\x7f\n\r\t", 9, "a_ b_____");
	named("\0x", 2, "_x");
	named("caf\xc3\xa9.txt", 9, "caf\xc3\xa9.txt");
	named("a.b..c.", 7, "a.b..c.");

	CHECK(safe_name("", 0, &out) == -1);
	CHECK(out.len == 0);
	memset(long_name, 'n', sizeof(long_name));
	CHECK(safe_name(long_name, sizeof(long_name), &out) == 0);
	CHECK(out.len == SAFE_NAME_MAX && SAFE_NAME_MAX == 200);
	CHECK(strspn(out.ptr, "n") == 200);

	/* Appends: the rules apply to the new part only. */
	buf_reset(&out);
	buf_addstr(&out, "dir-");
	CHECK(safe_name(".x", 2, &out) == 0);
	CHECK_STR(out.ptr, "dir-_x");
	CHECK(safe_name("", 0, &out) == -1);
	CHECK_STR(out.ptr, "dir-_x");
	buf_release(&out);
}

/* A fresh directory under $TMPDIR, for one part of the test. */
static int temp_dir(char *path, size_t size)
{
	const char *tmp = getenv("TMPDIR");
	int fd;

	snprintf(path, size, "%s/safefile-test.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(path)) {
		perror("mkdtemp");
		exit(1);
	}
	fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		perror(path);
		exit(1);
	}
	return fd;
}

static void remove_dir(int dirfd, const char *path)
{
	DIR *d = fdopendir(dup(dirfd));
	struct dirent *e;

	while (d && (e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			unlinkat(dirfd, e->d_name, 0);
	if (d)
		closedir(d);
	close(dirfd);
	rmdir(path);
}

/* The entries of the directory, sorted, joined by spaces. */
static const char *listing(int dirfd)
{
	static struct buf out = BUF_INIT;
	struct dirent **v;
	char self[64];
	int n;

	snprintf(self, sizeof(self), "/proc/self/fd/%d", dirfd);
	n = scandir(self, &v, NULL, alphasort);
	buf_reset(&out);
	for (int i = 0; i < n; i++) {
		if (strcmp(v[i]->d_name, ".") && strcmp(v[i]->d_name, "..")) {
			if (out.len)
				buf_addch(&out, ' ');
			buf_addstr(&out, v[i]->d_name);
		}
		free(v[i]);
	}
	if (n >= 0)
		free(v);
	return out.ptr;
}

static const char *content(int dirfd, const char *name)
{
	static char tmp[256];
	int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC);
	ssize_t r = fd < 0 ? -1 : read(fd, tmp, sizeof(tmp) - 1);

	if (fd >= 0)
		close(fd);
	tmp[r < 0 ? 0 : r] = '\0';
	return tmp;
}

/* Write data into a new file called name (or a variant); the name used. */
static const char *commit(int dirfd, const char *name, const char *data)
{
	static struct buf final = BUF_INIT;
	struct atomic_file af;

	buf_reset(&final);
	if (atomic_file_open(&af, dirfd, 0666) < 0 ||
	    atomic_file_write(&af, data, strlen(data)) < 0)
		return "(write failed)";
	if (atomic_file_commit(&af, name, &final) < 0)
		return "(commit failed)";
	return final.ptr;
}

static void test_commit(void)
{
	char path[4096];
	int dirfd = temp_dir(path, sizeof(path));
	int fd;

	CHECK_STR(commit(dirfd, "orders.xml", "1"), "orders.xml");
	CHECK_STR(commit(dirfd, "orders.xml", "2"), "orders-2.xml");
	CHECK_STR(commit(dirfd, "orders.xml", "3"), "orders-3.xml");
	CHECK_STR(commit(dirfd, "README", "r1"), "README");
	CHECK_STR(commit(dirfd, "README", "r2"), "README-2");
	CHECK_STR(commit(dirfd, "orders.xml", "4"), "orders-4.xml");
	CHECK_STR(commit(dirfd, "archive.tar.gz", "a1"), "archive.tar.gz");
	CHECK_STR(commit(dirfd, "archive.tar.gz", "a2"), "archive.tar-2.gz");
	CHECK_STR(commit(dirfd, "_hidden", "h1"), "_hidden");
	CHECK_STR(commit(dirfd, "_hidden", "h2"), "_hidden-2");

	/* Files that were there before are never replaced. */
	fd = openat(dirfd, "taken.txt", O_WRONLY | O_CREAT | O_EXCL, 0644);
	CHECK(fd >= 0 && write(fd, "old", 3) == 3);
	close(fd);
	fd = openat(dirfd, "taken-2.txt", O_WRONLY | O_CREAT | O_EXCL, 0644);
	CHECK(fd >= 0 && write(fd, "old2", 4) == 4);
	close(fd);
	CHECK_STR(commit(dirfd, "taken.txt", "new"), "taken-3.txt");
	CHECK_STR(content(dirfd, "taken.txt"), "old");
	CHECK_STR(content(dirfd, "taken-2.txt"), "old2");
	CHECK_STR(content(dirfd, "taken-3.txt"), "new");

	CHECK_STR(content(dirfd, "orders.xml"), "1");
	CHECK_STR(content(dirfd, "orders-2.xml"), "2");
	CHECK_STR(content(dirfd, "orders-3.xml"), "3");
	CHECK_STR(content(dirfd, "orders-4.xml"), "4");
	CHECK_STR(content(dirfd, "README-2"), "r2");
	/* Nothing else: no temporary file is left behind. */
	CHECK_STR(listing(dirfd),
		  "README README-2 _hidden _hidden-2 archive.tar-2.gz "
		  "archive.tar.gz orders-2.xml orders-3.xml orders-4.xml "
		  "orders.xml taken-2.txt taken-3.txt taken.txt");
	remove_dir(dirfd, path);
}

/* A name is only given a suffix when it is taken in that directory. */
static void test_fresh_dir(void)
{
	char path[4096];
	int dirfd = temp_dir(path, sizeof(path));

	CHECK_STR(commit(dirfd, "orders.xml", "1"), "orders.xml");
	CHECK_STR(commit(dirfd, "orders.xml", "2"), "orders-2.xml");
	remove_dir(dirfd, path);
	dirfd = temp_dir(path, sizeof(path));
	CHECK_STR(commit(dirfd, "orders.xml", "fresh"), "orders.xml");
	unlinkat(dirfd, "orders.xml", 0);
	CHECK_STR(commit(dirfd, "orders.xml", "again"), "orders.xml");
	remove_dir(dirfd, path);
}

static void test_abort_and_errors(void)
{
	char path[4096];
	int dirfd = temp_dir(path, sizeof(path));
	struct atomic_file af;
	struct buf final = BUF_INIT;
	struct stat st;

	CHECK(atomic_file_open(&af, dirfd, 0666) == 0);
	CHECK(af.tmpname[0] == '.');	/* hidden from readers of the directory */
	CHECK(atomic_file_write(&af, "partial", 7) == 0);
	CHECK(fstatat(dirfd, af.tmpname, &st, 0) == 0 && st.st_size == 7);
	CHECK_STR(listing(dirfd), af.tmpname);
	atomic_file_abort(&af);
	CHECK(fstatat(dirfd, af.tmpname, &st, 0) == -1 && errno == ENOENT);
	CHECK_STR(listing(dirfd), "");

	/* A commit that cannot place the file removes the temporary. */
	CHECK(atomic_file_open(&af, dirfd, 0666) == 0);
	CHECK(atomic_file_write(&af, "x", 1) == 0);
	errno = 0;
	CHECK(atomic_file_commit(&af, "no-such-dir/x", &final) == -1);
	CHECK(errno == ENOENT);
	CHECK_STR(listing(dirfd), "");

	/* An empty file is a file too. */
	CHECK(atomic_file_open(&af, dirfd, 0666) == 0);
	CHECK(atomic_file_commit(&af, "empty", &final) == 0);
	CHECK_STR(final.ptr, "empty");
	CHECK(fstatat(dirfd, "empty", &st, 0) == 0 && st.st_size == 0);
	CHECK_STR(listing(dirfd), "empty");
	buf_release(&final);
	remove_dir(dirfd, path);
}

int main(void)
{
	test_safe_name();
	test_commit();
	test_fresh_dir();
	test_abort_and_errors();
	return unit_done();
}
