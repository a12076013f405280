/*
 * faultinject: an LD_PRELOAD shim that makes chosen system calls fail,
 * so tests can see what a tool does when the disk does.
 *
 *   FAULT_FUNCS  the calls to fail, joined by commas: write, read, pread,
 *                fsync, fdatasync, rename, renameat, open, openat,
 *                renameat2, linkat, unlink, unlinkat, dirsync (nothing
 *                is failed when unset).
 *                dirsync is an fsync or fdatasync of a directory: when
 *                it is listed, those calls count and are logged as
 *                dirsync, not as fsync or fdatasync
 *   FAULT_PATH   an fnmatch(3) pattern the call's file must match, as an
 *                absolute path (for write, read, pread and fsync, the path the
 *                file descriptor refers to); default every file
 *   FAULT_AT     the first matching call to fail, counted from 1 over all
 *                the FAULT_FUNCS together (default 1)
 *   FAULT_COUNT  how many calls fail from there (default 1; 0: all)
 *   FAULT_ERRNO  EIO (default), ENOSPC, EDQUOT, EROFS, EACCES, EINVAL,
 *                ENOSYS, or a number; or none: syncs (fsync, fdatasync,
 *                dirsync) then succeed without being made (a disk that
 *                acknowledges what it has not stored, for measuring what
 *                the syncs cost), other calls are made as usual and only
 *                logged; or kill: the process kills itself with SIGKILL
 *                at the chosen call, before it is made (a crash aimed
 *                at one point, where a random kill may never land);
 *                or term: the process sends itself SIGTERM at the
 *                chosen call, which is then made (a stop request that
 *                comes at that very moment)
 *   FAULT_PARTIAL=1  a failing write first writes half of its bytes, as
 *                a device that fills up in the middle of a write does
 *   FAULT_LOG    a file that gets one line for each call failed
 *
 * Build: cc -shared -fPIC -o faultinject.so faultinject.c -ldl
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE	/* RTLD_NEXT, O_TMPFILE */
#endif
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static ssize_t (*real_write)(int, const void *, size_t);
static int (*real_fsync)(int);
static int (*real_fdatasync)(int);
static int (*real_rename)(const char *, const char *);
static int (*real_renameat)(int, const char *, int, const char *);
static int (*real_open)(const char *, int, ...);
static int (*real_openat)(int, const char *, int, ...);

static struct {
	int ready;
	char funcs[256];
	const char *pattern;
	unsigned long at, count, seen;
	int errnum, partial, kill, term;
	const char *log;
} cfg;

static void *next_fn(const char *name)
{
	return dlsym(RTLD_NEXT, name);
}

static int errno_named(const char *s)
{
	static const struct { const char *name; int value; } names[] = {
		{ "EIO", EIO }, { "ENOSPC", ENOSPC }, { "EDQUOT", EDQUOT },
		{ "EROFS", EROFS }, { "EACCES", EACCES },
		{ "EINVAL", EINVAL }, { "ENOSYS", ENOSYS },
	};

	if (!s || !*s)
		return EIO;
	if (!strcmp(s, "none"))
		return 0;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(s, names[i].name))
			return names[i].value;
	return atoi(s) > 0 ? atoi(s) : EIO;
}

static unsigned long env_number(const char *name, unsigned long dflt)
{
	const char *v = getenv(name);

	return v && *v ? strtoul(v, NULL, 10) : dflt;
}

static void setup(void)
{
	const char *f;

	if (cfg.ready)
		return;
	real_write = next_fn("write");
	real_fsync = next_fn("fsync");
	real_fdatasync = next_fn("fdatasync");
	real_rename = next_fn("rename");
	real_renameat = next_fn("renameat");
	real_open = next_fn("open");
	real_openat = next_fn("openat");
	f = getenv("FAULT_FUNCS");
	/* Commas around the list make ",name," a whole-word search. */
	snprintf(cfg.funcs, sizeof(cfg.funcs), ",%s,", f ? f : "");
	cfg.pattern = getenv("FAULT_PATH");
	cfg.at = env_number("FAULT_AT", 1);
	cfg.count = env_number("FAULT_COUNT", 1);
	cfg.kill = getenv("FAULT_ERRNO") && !strcmp(getenv("FAULT_ERRNO"), "kill");
	cfg.term = getenv("FAULT_ERRNO") && !strcmp(getenv("FAULT_ERRNO"), "term");
	cfg.errnum = cfg.kill || cfg.term ? EIO : errno_named(getenv("FAULT_ERRNO"));
	cfg.partial = env_number("FAULT_PARTIAL", 0) == 1;
	cfg.log = getenv("FAULT_LOG");
	cfg.ready = 1;
}

static int listed(const char *fn)
{
	char word[32];

	snprintf(word, sizeof(word), ",%s,", fn);
	return strstr(cfg.funcs, word) != NULL;
}

/* The absolute path of name relative to dirfd (or of dirfd itself). */
static void resolve(int dirfd, const char *name, char *out, size_t size)
{
	char link[64], base[PATH_MAX];
	ssize_t n;

	if (name && name[0] == '/') {
		snprintf(out, size, "%s", name);
		return;
	}
	if (dirfd == AT_FDCWD) {
		if (!getcwd(base, sizeof(base)))
			base[0] = '\0';
	} else {
		snprintf(link, sizeof(link), "/proc/self/fd/%d", dirfd);
		n = readlink(link, base, sizeof(base) - 1);
		base[n > 0 ? n : 0] = '\0';
	}
	if (name)
		snprintf(out, size, "%s/%s", base, name);
	else
		snprintf(out, size, "%s", base);
}

static void note(const char *fn, const char *path)
{
	char line[PATH_MAX + 128];
	int fd, n;

	if (!cfg.log)
		return;
	n = snprintf(line, sizeof(line), "%s %s %s\n", fn, path,
		     cfg.kill ? "killed" : cfg.term ? "stop asked" : cfg.errnum ? strerror(cfg.errnum) : "skipped");
	fd = real_openat(AT_FDCWD, cfg.log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		return;
	if (real_write(fd, line, (size_t)(n < (int)sizeof(line) ? n : (int)sizeof(line) - 1)) < 0)
		n = 0;
	close(fd);
}

/* Whether this call of fn on (dirfd, name) is one to fail. */
static int should_fail(const char *fn, int dirfd, const char *name)
{
	char path[PATH_MAX + 256];

	setup();
	if (!listed(fn))
		return 0;
	resolve(dirfd, name, path, sizeof(path));
	if (cfg.pattern && fnmatch(cfg.pattern, path, 0) != 0)
		return 0;
	cfg.seen++;
	if (cfg.seen < cfg.at || (cfg.count && cfg.seen >= cfg.at + cfg.count))
		return 0;
	note(fn, path);
	if (cfg.kill)
		raise(SIGKILL);
	if (cfg.term) {
		raise(SIGTERM);
		return 0;
	}
	/* FAULT_ERRNO=none: only the syncs are skipped; the rest is made. */
	if (!cfg.errnum && strcmp(fn, "fsync") && strcmp(fn, "fdatasync") &&
	    strcmp(fn, "dirsync"))
		return 0;
	return 1;
}

ssize_t write(int fd, const void *p, size_t n)
{
	if (should_fail("write", fd, NULL)) {
		if (cfg.partial && n > 1)
			real_write(fd, p, n / 2);
		errno = cfg.errnum;
		return -1;
	}
	return real_write(fd, p, n);
}

/* A file read as it is taken in, such as a raw input. */
ssize_t read(int fd, void *p, size_t n)
{
	static ssize_t (*real)(int, void *, size_t);

	if (!real)
		real = next_fn("read");
	if (should_fail("read", fd, NULL)) {
		errno = cfg.errnum;
		return -1;
	}
	return real(fd, p, n);
}

/* A file read back where it was written, as a temporary copy is. */
ssize_t pread(int fd, void *p, size_t n, off_t at)
{
	static ssize_t (*real)(int, void *, size_t, off_t);

	if (!real)
		real = next_fn("pread");
	if (should_fail("pread", fd, NULL)) {
		errno = cfg.errnum;
		return -1;
	}
	return real(fd, p, n, at);
}

ssize_t pread64(int fd, void *p, size_t n, off_t at) __attribute__((alias("pread")));

/* What a sync of fd counts as: dirsync for a directory when that is
 * listed, so tests can tell the syncs of names from those of data. */
static const char *sync_call(const char *fn, int fd)
{
	struct stat st;

	setup();
	if (listed("dirsync") && fstat(fd, &st) == 0 && S_ISDIR(st.st_mode))
		return "dirsync";
	return fn;
}

int fsync(int fd)
{
	if (should_fail(sync_call("fsync", fd), fd, NULL)) {
		if (!cfg.errnum)
			return 0;
		errno = cfg.errnum;
		return -1;
	}
	return real_fsync(fd);
}

int fdatasync(int fd)
{
	if (should_fail(sync_call("fdatasync", fd), fd, NULL)) {
		if (!cfg.errnum)
			return 0;
		errno = cfg.errnum;
		return -1;
	}
	return real_fdatasync(fd);
}

int rename(const char *from, const char *to)
{
	if (should_fail("rename", AT_FDCWD, from)) {
		errno = cfg.errnum;
		return -1;
	}
	return real_rename(from, to);
}

int renameat(int fromfd, const char *from, int tofd, const char *to)
{
	if (should_fail("renameat", fromfd, from)) {
		errno = cfg.errnum;
		return -1;
	}
	return real_renameat(fromfd, from, tofd, to);
}

/* renameat2 and linkat: how safefile names a file without replacing
 * one. A test fails renameat2 with EINVAL, as a file system without
 * RENAME_NOREPLACE does, to reach the link(2) fallback. */
int renameat2(int fromfd, const char *from, int tofd, const char *to,
	      unsigned int flags)
{
	static int (*real)(int, const char *, int, const char *, unsigned int);

	if (!real)
		real = next_fn("renameat2");
	if (should_fail("renameat2", fromfd, from)) {
		errno = cfg.errnum;
		return -1;
	}
	return real(fromfd, from, tofd, to, flags);
}

int linkat(int fromfd, const char *from, int tofd, const char *to, int flags)
{
	static int (*real)(int, const char *, int, const char *, int);

	if (!real)
		real = next_fn("linkat");
	if (should_fail("linkat", fromfd, from)) {
		errno = cfg.errnum;
		return -1;
	}
	return real(fromfd, from, tofd, to, flags);
}

/* A file deleted once it is finished with, such as a message taken. */
int unlink(const char *path)
{
	static int (*real)(const char *);

	if (!real)
		real = next_fn("unlink");
	if (should_fail("unlink", AT_FDCWD, path)) {
		errno = cfg.errnum;
		return -1;
	}
	return real(path);
}

int unlinkat(int dirfd, const char *path, int flags)
{
	static int (*real)(int, const char *, int);

	if (!real)
		real = next_fn("unlinkat");
	if (should_fail("unlinkat", dirfd, path)) {
		errno = cfg.errnum;
		return -1;
	}
	return real(dirfd, path, flags);
}

/* The mode is there only when a file may be created. */
static mode_t mode_arg(int flags, va_list ap)
{
	return flags & (O_CREAT | O_TMPFILE) ? (mode_t)va_arg(ap, int) : 0;
}

int open(const char *path, int flags, ...)
{
	va_list ap;
	mode_t mode;

	va_start(ap, flags);
	mode = mode_arg(flags, ap);
	va_end(ap);
	if (should_fail("open", AT_FDCWD, path)) {
		errno = cfg.errnum;
		return -1;
	}
	return real_open(path, flags, mode);
}

int openat(int dirfd, const char *path, int flags, ...)
{
	va_list ap;
	mode_t mode;

	va_start(ap, flags);
	mode = mode_arg(flags, ap);
	va_end(ap);
	if (should_fail("openat", dirfd, path)) {
		errno = cfg.errnum;
		return -1;
	}
	return real_openat(dirfd, path, flags, mode);
}

/* Large-file aliases: the same calls on 64-bit systems. */
int open64(const char *path, int flags, ...) __attribute__((alias("open")));
int openat64(int dirfd, const char *path, int flags, ...)
	__attribute__((alias("openat")));
