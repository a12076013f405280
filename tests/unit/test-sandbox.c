/* test-sandbox: canonical paths, symbolic links and the directory policy. */
#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sandbox.h"
#include "unit.h"

static char top[4096];

/* A path under the test's directory, in a static buffer per call site. */
static const char *at(char *buf, size_t size, const char *rel)
{
	snprintf(buf, size, "%s/%s", top, rel);
	return buf;
}

#define AT(rel) at((char[4200]){0}, 4200, (rel))

static void canonical_is(const char *path, const char *want)
{
	char *got = sandbox_canonical(path);

	CHECK_STR(got, want);
	free(got);
}

static void canonical_fails(const char *path, int want_errno)
{
	char *got;

	errno = 0;
	got = sandbox_canonical(path);
	CHECK(got == NULL);
	CHECK(errno == want_errno);
	if (got)
		printf("#   '%s' resolved to '%s'\n", path, got);
	free(got);
}

static void test_canonical(void)
{
	/* Existing paths, as realpath(3) has them. */
	canonical_is(top, top);
	canonical_is(AT("in/."), AT("in"));
	canonical_is(AT("in/../in/"), AT("in"));
	canonical_is(AT("link-in"), AT("in"));
	/* Paths still to be made: resolved as far as they exist. */
	canonical_is(AT("in/new.xml"), AT("in/new.xml"));
	canonical_is(AT("in/a/b/c.xml"), AT("in/a/b/c.xml"));
	canonical_is(AT("in/a/"), AT("in/a"));
	canonical_is(AT("link-in/new.xml"), AT("in/new.xml"));
	canonical_is(AT("in/../out/new.xml"), AT("out/new.xml"));
	canonical_is("/", "/");
	/* What cannot be resolved. */
	canonical_fails("", ENOENT);
	canonical_fails(AT("in/missing/../x"), ENOENT);
	canonical_fails(AT("in/missing/."), ENOENT);
	/* A dangling link, last or on the way, would write where it points. */
	canonical_fails(AT("in/dangling"), ELOOP);
	canonical_fails(AT("in/dangling/x.xml"), ELOOP);
	canonical_fails(AT("in/dangling/a/x.xml"), ELOOP);
	canonical_fails(AT("in/loop"), ELOOP);
}

static void test_inside(void)
{
	CHECK(sandbox_inside("/a/b", "/a"));
	CHECK(sandbox_inside("/a", "/a"));
	CHECK(!sandbox_inside("/ab", "/a"));
	CHECK(!sandbox_inside("/", "/a"));
	CHECK(sandbox_inside("/a", "/"));
	CHECK(sandbox_inside("/", "/"));
	CHECK(sandbox_within(AT("in/x.xml"), AT("in")));
	CHECK(!sandbox_within(AT("in/../out/x.xml"), AT("in")));
	CHECK(!sandbox_within(AT("in/to-out/x.xml"), AT("in")));
	CHECK(!sandbox_within(AT("in/dangling"), AT("in")));
}

static void test_dirs(void)
{
	struct sandbox_dirs d = SANDBOX_DIRS_INIT;
	struct buf err = BUF_INIT;

	CHECK(sandbox_dirs_add(&d, AT("in"), &err) == 0);
	CHECK(sandbox_dirs_add(&d, AT("link-in"), &err) == 0);
	CHECK(d.n == 1);
	CHECK_STR(d.dir[0], AT("in"));
	CHECK(err.len == 0);
	CHECK(sandbox_dirs_add(&d, AT("nothere"), &err) == -1);
	{
		char want[4200];
		snprintf(want, sizeof(want), "no directory '%s'", AT("nothere"));
		CHECK_STR(err.ptr, want);
	}
	buf_reset(&err);
	CHECK(sandbox_dirs_add(&d, AT("in/file.xml"), &err) == -1);
	CHECK(strncmp(err.ptr, "no directory '", 14) == 0);
	CHECK(d.n == 1);

	CHECK(sandbox_dirs_allow(&d, AT("in/file.xml")));
	CHECK(sandbox_dirs_allow(&d, AT("in/new/deep.xml")));
	CHECK(sandbox_dirs_allow(&d, AT("link-in/file.xml")));
	CHECK(!sandbox_dirs_allow(&d, AT("out/file.xml")));
	CHECK(!sandbox_dirs_allow(&d, AT("in/../out/file.xml")));
	CHECK(!sandbox_dirs_allow(&d, AT("in/to-out/file.xml")));
	CHECK(!sandbox_dirs_allow(&d, AT("in/dangling")));
	CHECK(!sandbox_dirs_allow(&d, AT("in/dangling/x.xml")));
	CHECK(!sandbox_dirs_allow(&d, top));

	/* The directories of files: each once, "/" kept whole. */
	sandbox_dirs_add_parent(&d, AT("out/file.xml"));
	sandbox_dirs_add_parent(&d, AT("out/other.xml"));
	sandbox_dirs_add_parent(&d, "/etc");
	sandbox_dirs_add_parent(&d, AT("in/dangling"));
	CHECK(d.n == 3);
	CHECK_STR(d.dir[1], AT("out"));
	CHECK_STR(d.dir[2], "/");
	sandbox_dirs_release(&d);
	CHECK(d.n == 0 && d.dir == NULL);
	CHECK(!sandbox_dirs_allow(&d, AT("in/file.xml")));
	buf_release(&err);
}

static void test_plain_relative(void)
{
	CHECK(sandbox_plain_relative("a.xsl"));
	CHECK(sandbox_plain_relative("dir/a.xsl"));
	CHECK(sandbox_plain_relative("..a/b..c/.d"));
	CHECK(!sandbox_plain_relative(""));
	CHECK(!sandbox_plain_relative("/etc/x"));
	CHECK(!sandbox_plain_relative("../x"));
	CHECK(!sandbox_plain_relative("a/../x"));
	CHECK(!sandbox_plain_relative("a/.."));
	CHECK(!sandbox_plain_relative("./x"));
	CHECK(!sandbox_plain_relative("a//x"));
	CHECK(!sandbox_plain_relative("a/"));
	CHECK(!sandbox_plain_relative("."));
}

static int rm_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static void make_tree(void)
{
	const char *tmp = getenv("TMPDIR");
	char *real;
	FILE *f;

	snprintf(top, sizeof(top), "%s/sandbox-test.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(top)) {
		perror("mkdtemp");
		exit(1);
	}
	/* The tests compare canonical paths: $TMPDIR may be a link. */
	real = realpath(top, NULL);
	snprintf(top, sizeof(top), "%s", real);
	free(real);
	if (mkdir(AT("in"), 0700) < 0 || mkdir(AT("out"), 0700) < 0 ||
	    symlink("in", AT("link-in")) < 0 ||
	    symlink("../out", AT("in/to-out")) < 0 ||
	    symlink(AT("gone"), AT("in/dangling")) < 0 ||
	    symlink("loop", AT("in/loop")) < 0 ||
	    !(f = fopen(AT("in/file.xml"), "w")) || fclose(f) != 0) {
		perror("making the test tree");
		exit(1);
	}
}

int main(void)
{
	make_tree();
	test_canonical();
	test_inside();
	test_dirs();
	test_plain_relative();
	nftw(top, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	return unit_done();
}
