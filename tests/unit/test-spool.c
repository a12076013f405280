/* test-spool: dir: spools: group commit, claims, listings, set-aside files. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io.h"
#include "spool.h"
#include "unit.h"

static char top[] = "/tmp/test-spool.XXXXXX";

/* The number of entries in DIR/sub that do not begin with '.'. */
static int count_in(const char *dir, const char *sub)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", dir, sub);
	return unit_count_entries(path);
}

/* A message file delivered into DIR/new: 0, or -1. */
static int put(const char *dir, const char *name, const char *text)
{
	char path[512];
	int fd, r;

	snprintf(path, sizeof(path), "%s/new/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
	if (fd < 0)
		return -1;
	r = write_all(fd, text, strlen(text));
	close(fd);
	return r;
}

static struct spool *open_spool(const char *name, int create, char *dir, size_t size)
{
	struct buf err = BUF_INIT;
	struct spool *s;

	snprintf(dir, size, "%s/%s", top, name);
	s = spool_open(dir, create, &err);
	if (!s)
		printf("# %s\n", err.ptr);
	buf_release(&err);
	return s;
}

/* Committed messages wait in tmp/ and go to new/ 256 at a time, or when
 * published; what is neither published nor committed is removed. */
static void test_group_commit(void)
{
	char dir[512];
	struct spool *s = open_spool("w", 1, dir, sizeof(dir));
	int committed = 0;

	CHECK(s != NULL);
	for (int i = 0; i < 300; i++) {
		int fd = spool_begin(s);
		committed += fd >= 0 && write_all(fd, "x", 1) == 0 && spool_commit(s) == 0;
	}
	CHECK(committed == 300);
	CHECK(count_in(dir, "new") == 256);
	CHECK(count_in(dir, "tmp") == 44);
	CHECK(spool_publish(s) == 0);
	CHECK(count_in(dir, "new") == 300);
	CHECK(count_in(dir, "tmp") == 0);
	CHECK(spool_publish(s) == 0);	/* nothing waits: nothing to do */

	CHECK(spool_begin(s) >= 0);
	spool_abort(s);
	CHECK(count_in(dir, "tmp") == 0);

	CHECK(spool_begin(s) >= 0);
	CHECK(spool_commit(s) == 0);
	CHECK(spool_begin(s) >= 0);
	CHECK(count_in(dir, "tmp") == 2);
	spool_close(s);		/* neither is published */
	CHECK(count_in(dir, "tmp") == 0);
	CHECK(count_in(dir, "new") == 300);
}

/* 9,000 names, made in a scrambled order, come out sorted: more than two
 * listings' worth, so the trimming of a listing is crossed. */
static void test_claims_in_name_order(void)
{
	char dir[512], name[32];
	struct spool_entry got = SPOOL_ENTRY_INIT;
	struct spool *s = open_spool("r", 1, dir, sizeof(dir));
	int n = 9000, in_order = 1, fd, taken = 0, made = 0;
	char last[32] = "";

	CHECK(s != NULL);
	for (int i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "%06d.msg", (i * 7919) % n);
		made += put(dir, name, "m") == 0;
	}
	CHECK(made == n);
	while ((fd = spool_claim(s, 0, &got)) > 0) {
		in_order &= strcmp(last, got.name.ptr) < 0;
		snprintf(last, sizeof(last), "%s", got.name.ptr);
		if (++taken % SPOOL_CLAIMS_MAX == 0 && spool_done(s) < 0)
			break;
	}
	CHECK(fd == 0);
	CHECK(taken == n);
	CHECK(in_order);
	CHECK(spool_done(s) == 0);
	CHECK(count_in(dir, "new") == 0);
	CHECK(count_in(dir, "cur") == 0);
	spool_close(s);
	spool_entry_release(&got);
}

/* A reader holds at most SPOOL_CLAIMS_MAX; releasing the one in hand
 * leaves it in cur/, where the next reader takes it first. */
static void test_claims_held(void)
{
	char dir[512], name[32];
	struct spool_entry got = SPOOL_ENTRY_INIT;
	struct spool *s = open_spool("h", 1, dir, sizeof(dir)), *next;
	int fd = 0, made = 0;

	CHECK(s != NULL);
	for (int i = 0; i < SPOOL_CLAIMS_MAX + 2; i++) {
		snprintf(name, sizeof(name), "%04d.msg", i);
		made += put(dir, name, "m") == 0;
	}
	CHECK(made == SPOOL_CLAIMS_MAX + 2);
	for (int i = 0; i < SPOOL_CLAIMS_MAX; i++)
		fd = spool_claim(s, 0, &got);
	CHECK(fd > 0);
	CHECK(spool_claim(s, 0, &got) == -1 && errno == EBUSY);
	spool_release(s);	/* the one in hand: 0063.msg */
	CHECK(count_in(dir, "cur") == SPOOL_CLAIMS_MAX);
	next = open_spool("h", 0, dir, sizeof(dir));
	CHECK(next != NULL);
	CHECK(spool_claim(next, 0, &got) == SPOOL_MESSAGE);
	CHECK_STR(got.name.ptr, "0063.msg");
	CHECK(spool_done(next) == 0);
	CHECK(spool_done(s) == 0);
	CHECK(count_in(dir, "cur") == 0);
	CHECK(count_in(dir, "new") == 2);
	spool_close(next);
	spool_close(s);
	spool_entry_release(&got);
}

/* Reading without waiting from the first claim on stops at the newest
 * message there was then; a file set aside goes to bad/. */
static void test_once_and_set_aside(void)
{
	char dir[512];
	struct spool_entry got = SPOOL_ENTRY_INIT;
	struct buf where = BUF_INIT;
	struct spool *s = open_spool("o", 1, dir, sizeof(dir));
	char want[600];

	CHECK(s != NULL);
	CHECK(put(dir, "b.msg", "m") == 0);
	CHECK(spool_claim(s, 0, &got) == SPOOL_MESSAGE);
	CHECK(put(dir, "a.msg", "older") == 0);	/* older than the horizon: taken */
	CHECK(put(dir, "c.msg", "later") == 0);	/* newer: left for the next run */
	CHECK(spool_set_aside(s, &where) == 0);
	snprintf(want, sizeof(want), "dir:%s/bad/b.msg", dir);
	CHECK_STR(where.ptr, want);
	CHECK(count_in(dir, "bad") == 1);
	CHECK(spool_claim(s, 0, &got) == SPOOL_MESSAGE);
	CHECK_STR(got.name.ptr, "a.msg");
	CHECK(spool_claim(s, 0, &got) == 0);
	CHECK(spool_done(s) == 0);
	CHECK(count_in(dir, "new") == 1);
	spool_close(s);
	spool_entry_release(&got);
	buf_release(&where);
}

/* Entries that are not regular files are moved to bad/ as they are, in
 * name order with the messages, never opened; none replaces another. */
static void test_not_regular(void)
{
	char dir[512], path[600], want[700];
	struct spool_entry e = SPOOL_ENTRY_INIT;
	struct buf where = BUF_INIT;
	struct spool *s = open_spool("n", 1, dir, sizeof(dir));
	struct stat st;

	CHECK(s != NULL);
	snprintf(path, sizeof(path), "%s/new/a", dir);
	CHECK(symlink("/dev/zero", path) == 0);
	snprintf(path, sizeof(path), "%s/new/b", dir);
	CHECK(mkdir(path, 0700) == 0);
	snprintf(path, sizeof(path), "%s/new/c", dir);
	CHECK(mkfifo(path, 0600) == 0);
	CHECK(put(dir, "d.msg", "m") == 0);
	CHECK(put(dir, "e.msg", "m") == 0);
	snprintf(path, sizeof(path), "%s/bad", dir);
	CHECK(mkdir(path, 0700) == 0);
	snprintf(path, sizeof(path), "%s/bad/a", dir);
	CHECK(symlink("elsewhere", path) == 0);

	CHECK(spool_claim(s, 0, &e) == SPOOL_SET_ASIDE);
	CHECK_STR(e.name.ptr, "a");
	CHECK_STR(e.dir, "new");
	CHECK_STR(e.kind, "a symbolic link");
	snprintf(want, sizeof(want), "dir:%s/bad/a-2", dir);
	CHECK_STR(e.where.ptr, want);
	CHECK(spool_claim(s, 0, &e) == SPOOL_SET_ASIDE);
	CHECK_STR(e.kind, "a directory");
	CHECK(spool_claim(s, 0, &e) == SPOOL_SET_ASIDE);
	CHECK_STR(e.kind, "a FIFO");
	CHECK(spool_claim(s, 0, &e) == SPOOL_MESSAGE);
	CHECK_STR(e.name.ptr, "d.msg");
	CHECK_STR(e.dir, "cur");
	CHECK(e.fd > 0);
	/* The message in hand set aside under a name taken in bad/. */
	snprintf(path, sizeof(path), "%s/bad/d.msg", dir);
	CHECK(mkdir(path, 0700) == 0);
	CHECK(spool_set_aside(s, &where) == 0);
	snprintf(want, sizeof(want), "dir:%s/bad/d-2.msg", dir);
	CHECK_STR(where.ptr, want);
	CHECK(spool_claim(s, 0, &e) == SPOOL_MESSAGE);
	CHECK_STR(e.name.ptr, "e.msg");
	CHECK(spool_claim(s, 0, &e) == SPOOL_NONE);
	CHECK(spool_done(s) == 0);

	CHECK(count_in(dir, "new") == 0 && count_in(dir, "cur") == 0);
	CHECK(count_in(dir, "bad") == 6);
	snprintf(path, sizeof(path), "%s/bad/a", dir);
	CHECK(lstat(path, &st) == 0 && S_ISLNK(st.st_mode));
	snprintf(path, sizeof(path), "%s/bad/a-2", dir);
	CHECK(lstat(path, &st) == 0 && S_ISLNK(st.st_mode));
	snprintf(path, sizeof(path), "%s/bad/c", dir);
	CHECK(lstat(path, &st) == 0 && S_ISFIFO(st.st_mode));
	spool_close(s);
	spool_entry_release(&e);
	buf_release(&where);
}

/* A reader does not make up its spool; a writer does, parents and all. */
static void test_open(void)
{
	char dir[512];
	struct stat st;
	struct spool *s = open_spool("missing", 0, dir, sizeof(dir));

	CHECK(s == NULL);
	CHECK(stat(dir, &st) < 0 && errno == ENOENT);
	s = open_spool("made/deep", 1, dir, sizeof(dir));
	CHECK(s != NULL);
	CHECK(stat(dir, &st) == 0 && (st.st_mode & 0777) == 0700);
	CHECK(count_in(dir, "tmp") == 0 && count_in(dir, "new") == 0 &&
	      count_in(dir, "cur") == 0);
	spool_close(s);
}

static void stop_reading(int sig)
{
	(void)sig;
	io_stop_requested = 1;
}

/* The inode an inotify descriptor of this process watches, or 0. */
static unsigned long watched_inode(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	unsigned long ino = 0;

	while (d && !ino && (e = readdir(d))) {
		char path[300], target[64], line[256];
		ssize_t n;
		FILE *f;

		snprintf(path, sizeof(path), "/proc/self/fd/%s", e->d_name);
		n = readlink(path, target, sizeof(target) - 1);
		if (n < 0)
			continue;
		target[n] = '\0';
		if (strcmp(target, "anon_inode:inotify"))
			continue;
		snprintf(path, sizeof(path), "/proc/self/fdinfo/%s", e->d_name);
		if (!(f = fopen(path, "r")))
			continue;
		while (!ino && fgets(line, sizeof(line), f)) {
			const char *at = strstr(line, " ino:");
			if (!strncmp(line, "inotify ", 8) && at)
				ino = strtoul(at + 5, NULL, 16);
		}
		fclose(f);
	}
	if (d)
		closedir(d);
	return ino;
}

/* A waiting reader watches the new/ it opened, not whatever has its
 * name now: here the spool was moved and another directory took its
 * place, which would leave the reader deaf to its own spool. */
static void test_waits_on_its_own_new(void)
{
	char dir[512], moved[512], path[600];
	struct spool_entry got = SPOOL_ENTRY_INIT;
	struct spool *s = open_spool("watched", 1, dir, sizeof(dir));
	struct sigaction sa;
	struct stat st;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = stop_reading;
	CHECK(sigaction(SIGALRM, &sa, NULL) == 0);
	snprintf(moved, sizeof(moved), "%s/moved", top);
	CHECK(s != NULL && rename(dir, moved) == 0);
	snprintf(path, sizeof(path), "%s/new", dir);
	CHECK(mkdir(dir, 0700) == 0 && mkdir(path, 0700) == 0);
	alarm(1);	/* stops the wait */
	CHECK(spool_claim(s, 1, &got) == SPOOL_NONE);
	snprintf(path, sizeof(path), "%s/new", moved);
	CHECK(stat(path, &st) == 0 && watched_inode() == st.st_ino);
	io_stop_requested = 0;
	spool_close(s);
	spool_entry_release(&got);
}

int main(void)
{
	char cmd[600];

	if (!mkdtemp(top)) {
		perror("mkdtemp");
		return 1;
	}
	test_group_commit();
	test_claims_in_name_order();
	test_claims_held();
	test_once_and_set_aside();
	test_not_regular();
	test_open();
	test_waits_on_its_own_new();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", top);
	if (system(cmd) != 0)
		printf("# could not remove %s\n", top);
	return unit_done();
}
