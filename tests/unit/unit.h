/* unit: a TAP producer for the C unit tests of lib/. */
#ifndef MSG_UNIT_H
#define MSG_UNIT_H

#include <dirent.h>
#include <stdio.h>
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

static inline int unit_done(void)
{
	printf("1..%d\n", unit_count);
	return unit_failed != 0;
}

#endif
