/* unit: a TAP producer for the C unit tests of lib/. */
#ifndef MSG_UNIT_H
#define MSG_UNIT_H

#include <dirent.h>
#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int unit_count, unit_failed;

#define CHECK(cond) do { \
	unit_count++; \
	if (cond) { \
		printf("ok %d - %s:%d %s\n", unit_count, __FILE__, __LINE__, #cond); \
	} else { \
		unit_failed++; \
		printf("not ok %d - %s:%d %s\n", unit_count, __FILE__, __LINE__, #cond); \
	} \
} while (0)

#define CHECK_STR(a, b) do { \
	const char *a_ = (a), *b_ = (b); \
	int same_ = a_ && b_ && !strcmp(a_, b_); \
	CHECK(same_ && #a " == " #b); \
	if (!same_) \
		printf("#   got '%s', want '%s'\n", a_ ? a_ : "(null)", b_ ? b_ : "(null)"); \
} while (0)

/* The number of entries in the directory path that do not begin with
 * '.', or -1 when it cannot be read. */
static inline int unit_count_entries(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

/* A new directory $TMPDIR/NAME.XXXXXX (/tmp without TMPDIR), its path
 * in top: 0, or -1 with a diagnostic printed. */
static inline int unit_scratch_dir(char *top, size_t size, const char *name)
{
	const char *tmp = getenv("TMPDIR");

	snprintf(top, size, "%s/%s.XXXXXX", tmp && *tmp ? tmp : "/tmp", name);
	if (mkdtemp(top))
		return 0;
	perror("mkdtemp");
	return -1;
}

static inline int unit_remove_one(const char *path, const struct stat *st,
				  int flag, struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	return remove(path);
}

/* Remove path and all that is under it. */
static inline void unit_remove_tree(const char *path)
{
	nftw(path, unit_remove_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* The next of a sequence of pseudo-random numbers from *state (not 0):
 * xorshift64*, the same sequence on every machine, so that a failing
 * run can be run again. */
static inline uint64_t unit_random(uint64_t *state)
{
	*state ^= *state >> 12;
	*state ^= *state << 25;
	*state ^= *state >> 27;
	return *state * 0x2545f4914f6cdd1dull;
}

static inline int unit_done(void)
{
	printf("1..%d\n", unit_count);
	return unit_failed != 0;
}

#endif
