/* test-header: the ordered, case-insensitive header list. */
#include <errno.h>
#include <string.h>

#include "header.h"
#include "unit.h"

/* The list as "Name=value;..." so order and content are checked at once. */
static const char *dump(const struct headers *h)
{
	static struct buf out = BUF_INIT;

	buf_reset(&out);
	for (size_t i = 0; i < headers_count(h); i++) {
		size_t nl, vl;
		const char *n = headers_name(h, i, &nl);
		const char *v = headers_value(h, i, &vl);

		buf_add(&out, n, nl);
		buf_addch(&out, '=');
		buf_add(&out, v, vl);
		buf_addch(&out, ';');
	}
	return out.ptr;
}

static int add(struct headers *h, const char *name, const char *value)
{
	return headers_add(h, name, strlen(name), value, strlen(value));
}

static void test_add_get(void)
{
	struct headers h = HEADERS_INIT;
	size_t len;

	CHECK(headers_count(&h) == 0);
	CHECK(headers_get(&h, "X") == NULL);
	CHECK(headers_find(&h, "X", 1) == -1);
	CHECK(add(&h, "Content-Type", "text/plain") == 0);
	CHECK(add(&h, "X-A", "1") == 0);
	CHECK(add(&h, "x-a", "2") == 0);
	CHECK(add(&h, "Y", "") == 0);
	CHECK(headers_count(&h) == 4);
	CHECK_STR(headers_get(&h, "content-type"), "text/plain");
	CHECK_STR(headers_get(&h, "CONTENT-TYPE"), "text/plain");
	CHECK_STR(headers_get(&h, "X-a"), "1");	/* the first of duplicates */
	CHECK_STR(headers_get(&h, "Y"), "");
	CHECK(headers_get(&h, "Content") == NULL);	/* no prefix match */
	CHECK(headers_get(&h, "Content-Type-X") == NULL);
	CHECK(headers_find(&h, "X-A", 3) == 1);
	CHECK(headers_find(&h, "x-a-and-more", 3) == 1);	/* by length */
	CHECK_STR(dump(&h), "Content-Type=text/plain;X-A=1;x-a=2;Y=;");
	CHECK_STR(headers_name(&h, 2, &len), "x-a");
	CHECK(len == 3);
	CHECK_STR(headers_value(&h, 0, &len), "text/plain");
	CHECK(len == 10);
	CHECK(header_name_eq("ABC", 3, "abc", 3));
	CHECK(!header_name_eq("ABC", 3, "abcd", 4));
	headers_release(&h);
	CHECK(headers_count(&h) == 0);
}

/* Names of every length around the eight-byte words the compare uses
 * differ in one byte at every place, and match in any case. */
static void test_name_eq(void)
{
	const char *a = "Content-Length-Of-A-Header";
	char b[32], c[32];
	int ok = 1;

	for (size_t n = 1; n <= strlen(a); n++) {
		for (size_t i = 0; i < n; i++)
			c[i] = (char)(a[i] ^ 0x20 * (a[i] >= 'A'));
		ok &= header_name_eq(a, n, c, n);
		ok &= !header_name_eq(a, n, a, n - 1);
		for (size_t at = 0; at < n; at++) {
			memcpy(b, a, n);
			b[at] = b[at] == 'x' ? 'y' : 'x';
			ok &= !header_name_eq(a, n, b, n);
		}
	}
	CHECK(ok);
	CHECK(header_name_eq("Content-Length", 14, "content-length", 14));
	CHECK(!header_name_eq("Content-Length", 14, "Content-Lengtx", 14));
	CHECK(!header_name_eq("Content-Typexx", 14, "Content-Length", 14));
}

static void test_order_many(void)
{
	struct headers h = HEADERS_INIT;
	char name[16], value[16];
	int ok = 1;

	/* Past the first allocation of entries and of the arena. */
	for (int i = 0; i < 1000; i++) {
		snprintf(name, sizeof(name), "H%d", i);
		snprintf(value, sizeof(value), "v%d", i);
		ok &= add(&h, name, value) == 0;
	}
	CHECK(ok);
	CHECK(headers_count(&h) == 1000);
	for (int i = 0; i < 1000; i++) {
		snprintf(name, sizeof(name), "H%d", i);
		snprintf(value, sizeof(value), "v%d", i);
		ok &= !strcmp(headers_name(&h, (size_t)i, NULL), name) &&
		      !strcmp(headers_get(&h, name), value);
	}
	CHECK(ok);
	headers_release(&h);
}

static void test_set_remove(void)
{
	struct headers h = HEADERS_INIT;

	add(&h, "A", "1");
	add(&h, "B", "2");
	add(&h, "a", "3");
	add(&h, "C", "4");
	add(&h, "A", "5");
	/* Set replaces the first in place and drops the later duplicates. */
	CHECK(headers_set(&h, "a", "x") == 0);
	CHECK_STR(dump(&h), "A=x;B=2;C=4;");
	/* Absent: appended at the end. */
	CHECK(headers_set(&h, "D", "new") == 0);
	CHECK_STR(dump(&h), "A=x;B=2;C=4;D=new;");
	CHECK(headers_setn(&h, "B", "22junk", 2) == 0);
	CHECK_STR(dump(&h), "A=x;B=22;C=4;D=new;");
	CHECK(headers_set_u64(&h, "Content-Length", 0) == 0);
	CHECK(headers_set_u64(&h, "c", 18446744073709551615ull) == 0);
	CHECK_STR(dump(&h),
		  "A=x;B=22;C=18446744073709551615;D=new;Content-Length=0;");
	CHECK(headers_set(&h, "bad name", "v") == -1 && errno == EINVAL);

	CHECK(headers_remove(&h, "nothing") == 0);
	add(&h, "b", "again");
	CHECK(headers_remove(&h, "B") == 2);
	CHECK_STR(dump(&h), "A=x;C=18446744073709551615;D=new;Content-Length=0;");
	CHECK(headers_remove(&h, "content-length") == 1);
	CHECK(headers_remove(&h, "A") == 1);
	CHECK(headers_remove(&h, "D") == 1);
	CHECK(headers_remove(&h, "C") == 1);
	CHECK(headers_count(&h) == 0);
	CHECK_STR(dump(&h), "");

	add(&h, "Z", "1");
	headers_reset(&h);
	CHECK(headers_count(&h) == 0);
	CHECK(headers_get(&h, "Z") == NULL);
	headers_release(&h);
}

static void check_norm(const char *in, size_t n, const char *want)
{
	struct headers h = HEADERS_INIT;
	size_t len;

	CHECK(headers_add(&h, "V", 1, in, n) == 0);
	CHECK_STR(headers_value(&h, 0, &len), want);
	CHECK(len == strlen(want));
	/* The same rules apply when replacing a value. */
	CHECK(headers_setn(&h, "V", in, n) == 0);
	CHECK_STR(headers_get(&h, "V"), want);
	headers_release(&h);
}

static void test_normalise(void)
{
	check_norm("  \t value \t ", 12, "value");
	check_norm("a\r\nb", 4, "a b");
	check_norm("a\r\n\r\n\nb", 7, "a b");
	check_norm("x\0\0y", 4, "x y");
	check_norm("x\0\r\ny", 5, "x y");
	check_norm("\r\n\0 lead", 8, "lead");
	check_norm("trail \r\n\0", 9, "trail");
	check_norm("in  side\tkept", 13, "in  side\tkept");
	check_norm(" \t\r\n\0 ", 6, "");
	check_norm("", 0, "");
	check_norm("a\nb\nc", 5, "a b c");
}

static void test_names(void)
{
	struct headers h = HEADERS_INIT;
	char name[258];

	memset(name, 'n', sizeof(name));
	CHECK(headers_add(&h, "", 0, "v", 1) == -1 && errno == EINVAL);
	errno = 0;
	CHECK(headers_add(&h, name, 257, "v", 1) == -1 && errno == EINVAL);
	CHECK(headers_add(&h, name, 256, "v", 1) == 0);
	CHECK(headers_add(&h, "a b", 3, "v", 1) == -1);
	CHECK(headers_add(&h, "a:b", 3, "v", 1) == -1);
	CHECK(headers_add(&h, "a\0b", 3, "v", 1) == -1);
	CHECK(headers_add(&h, "\xc3\xa9", 2, "v", 1) == -1);
	CHECK(headers_add(&h, "a/b", 3, "v", 1) == -1);
	CHECK(headers_add(&h, "Aa0-_.Zz9", 9, "v", 1) == 0);
	CHECK(headers_count(&h) == 2);
	CHECK(header_name_valid("X", 1));
	CHECK(!header_name_valid("X\t", 2));
	CHECK(!header_name_valid(name, 257));
	CHECK(header_name_valid(name, 256));
	headers_release(&h);
}

static void test_add_line(void)
{
	struct headers h = HEADERS_INIT;

	CHECK(headers_add_line(&h, "X-Foo: bar") == 0);
	CHECK(headers_add_line(&h, "X-Bar:baz") == 0);
	CHECK(headers_add_line(&h, "X-Url:  http://h:80/p  ") == 0);
	CHECK(headers_add_line(&h, "Empty:") == 0);
	CHECK_STR(dump(&h), "X-Foo=bar;X-Bar=baz;X-Url=http://h:80/p;Empty=;");
	CHECK(headers_add_line(&h, "no colon") == -1 && errno == EINVAL);
	CHECK(headers_add_line(&h, ": value") == -1);
	CHECK(headers_add_line(&h, "X-Foo : bar") == -1);
	CHECK(headers_add_line(&h, " X-Foo: bar") == -1);
	CHECK(headers_add_line(&h, "") == -1);
	CHECK(headers_count(&h) == 4);
	headers_release(&h);
}

static void test_aliasing(void)
{
	struct headers h = HEADERS_INIT;
	char big[3000];
	size_t nl, vl;
	const char *n, *v;

	memset(big, 'b', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	add(&h, "Small", "s");
	add(&h, "Big", big);
	/*
	 * Values and names taken from the list itself: the arena grows (and
	 * may move) while they are copied, so the copy must come first.
	 */
	for (int i = 0; i < 20; i++) {
		v = headers_value(&h, 1, &vl);
		CHECK(headers_add(&h, "Copy", 4, v, vl) == 0);
	}
	CHECK(headers_count(&h) == 22);
	CHECK_STR(headers_value(&h, 21, NULL), big);
	CHECK(headers_set(&h, "Small", headers_get(&h, "Big")) == 0);
	CHECK_STR(headers_get(&h, "Small"), big);
	CHECK(headers_set(&h, "Copy", headers_get(&h, "Copy")) == 0);
	CHECK(headers_count(&h) == 3);
	CHECK_STR(headers_get(&h, "Copy"), big);
	CHECK(headers_set(&h, "Fresh", headers_get(&h, "Big")) == 0);
	CHECK_STR(headers_get(&h, "Fresh"), big);

	n = headers_name(&h, 0, &nl);
	CHECK(headers_add(&h, n, nl, big, strlen(big)) == 0);
	CHECK_STR(headers_name(&h, 4, NULL), "Small");
	/* A name from the list passed to set, replacing that very header. */
	n = headers_name(&h, 1, NULL);
	CHECK(headers_set(&h, n, "short now") == 0);
	CHECK_STR(headers_get(&h, "Big"), "short now");
	/* Part of a value: setn with a length shorter than the string. */
	v = headers_get(&h, "Big");
	CHECK(headers_setn(&h, "Part", v + 6, 3) == 0);
	CHECK_STR(headers_get(&h, "Part"), "now");
	headers_release(&h);
}

static void test_copy(void)
{
	struct headers a = HEADERS_INIT, b = HEADERS_INIT;

	headers_copy(&b, &a);		/* empty into empty */
	CHECK(headers_count(&b) == 0);
	add(&a, "One", "1");
	add(&a, "Two", "2");
	add(&a, "one", "3");
	add(&b, "Old", "gone");
	add(&b, "Old2", "gone");
	add(&b, "Old3", "gone");
	headers_copy(&b, &a);
	CHECK_STR(dump(&b), "One=1;Two=2;one=3;");
	/* The copy is independent of the original. */
	headers_set(&a, "One", "changed");
	headers_remove(&a, "Two");
	add(&a, "Three", "3");
	CHECK_STR(dump(&b), "One=1;Two=2;one=3;");
	CHECK_STR(dump(&a), "One=changed;Three=3;");
	headers_set(&b, "Two", "b-only");
	CHECK(headers_get(&a, "Two") == NULL);
	CHECK_STR(dump(&b), "One=1;Two=b-only;one=3;");
	headers_release(&a);
	headers_copy(&b, &a);		/* copying an empty list empties */
	CHECK(headers_count(&b) == 0);
	add(&b, "After", "ok");
	CHECK_STR(dump(&b), "After=ok;");
	headers_release(&b);
}

/* Lookups first ask whether a name of that length was added: names
 * whose lengths share a bit (1 and 33) are still told apart, and a reset,
 * a copy and a parsed block keep the answer right. */
static void test_name_lengths(void)
{
	static const char long_name[] = "Abcdefghijklmnopqrstuvwxyz-123456";
	struct headers a = HEADERS_INIT, b = HEADERS_INIT;
	char block[] = "Expires: soon\nContent-Length: 0\n\n";

	CHECK(sizeof(long_name) - 1 == 33);
	CHECK(headers_get(&a, "A") == NULL);
	add(&a, long_name, "long");
	CHECK(headers_get(&a, "A") == NULL);
	CHECK_STR(headers_get(&a, long_name), "long");
	add(&a, "A", "short");
	CHECK_STR(headers_get(&a, "a"), "short");
	CHECK(headers_get(&a, "B") == NULL);
	headers_copy(&b, &a);
	CHECK_STR(headers_get(&b, "A"), "short");
	CHECK_STR(headers_get(&b, long_name), "long");
	headers_remove(&a, "A");
	CHECK(headers_get(&a, "A") == NULL);
	headers_reset(&a);
	CHECK(headers_get(&a, long_name) == NULL);
	add(&a, "Expire", "x");
	CHECK(headers_get(&a, "Expires") == NULL);
	/* As the frame reader adds them. */
	headers_reset(&a);
	char *blk = headers_block(&a, block, sizeof(block) - 1);
	headers_add_parsed(&a, blk, 7, blk + 8, 5);
	headers_add_parsed(&a, blk + 14, 14, blk + 29, 2);
	CHECK_STR(headers_get(&a, "expires"), "soon");
	CHECK_STR(headers_get(&a, "Content-Length"), "0");
	CHECK(headers_get(&a, "Message-Id") == NULL);
	headers_release(&a);
	headers_release(&b);
}

int main(void)
{
	test_add_get();
	test_name_eq();
	test_order_many();
	test_set_remove();
	test_normalise();
	test_names();
	test_add_line();
	test_aliasing();
	test_copy();
	test_name_lengths();
	return unit_done();
}
