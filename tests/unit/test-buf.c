/* test-buf: the growable buffer's rules (never NULL, NUL-terminated, detach). */
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "unit.h"

static void test_empty(void)
{
	struct buf b = BUF_INIT;

	CHECK(b.ptr != NULL);
	CHECK(b.len == 0 && b.cap == 0);
	CHECK(b.ptr[0] == '\0');
	CHECK(buf_avail(&b) == 0);
	buf_reset(&b);			/* legal on a buffer that owns nothing */
	CHECK(b.cap == 0 && b.ptr[0] == '\0');
	buf_release(&b);
	CHECK(b.ptr == buf_empty && b.len == 0 && b.cap == 0);
}

static void test_grow(void)
{
	struct buf b;

	buf_init(&b, 0);
	buf_grow(&b, 0);		/* room for the NUL still allocates */
	CHECK(b.cap == 64);
	CHECK(buf_avail(&b) == 63);
	CHECK(b.ptr[0] == '\0');
	buf_grow(&b, 63);		/* already fits: no change */
	CHECK(b.cap == 64);
	buf_grow(&b, 100);
	CHECK(b.cap == 101);
	CHECK(b.len == 0);
	buf_release(&b);

	buf_init(&b, 1000);
	CHECK(b.cap == 1001);
	CHECK(buf_avail(&b) >= 1000);
	buf_release(&b);
}

static void test_add(void)
{
	struct buf b = BUF_INIT;
	static const char bin[] = { 'a', '\0', 'b', '\n' };

	buf_add(&b, "", 0);		/* nothing to add allocates nothing */
	CHECK(b.cap == 0);
	buf_addstr(&b, "hello");
	CHECK(b.len == 5);
	CHECK_STR(b.ptr, "hello");
	buf_addch(&b, ' ');
	buf_add(&b, "world!", 5);
	CHECK_STR(b.ptr, "hello world");
	CHECK(b.ptr[b.len] == '\0');

	buf_reset(&b);
	buf_add(&b, bin, sizeof(bin));	/* bodies may hold NUL */
	buf_addch(&b, '\0');
	CHECK(b.len == 5);
	CHECK(memcmp(b.ptr, "a\0b\n\0", 5) == 0);
	CHECK(b.ptr[5] == '\0');

	/* Many small appends through several reallocations. */
	buf_reset(&b);
	for (int i = 0; i < 10000; i++)
		buf_addch(&b, 'a' + i % 26);
	CHECK(b.len == 10000);
	CHECK(b.ptr[0] == 'a' && b.ptr[25] == 'z' && b.ptr[9999] == 'a' + 9999 % 26);
	CHECK(b.ptr[10000] == '\0');
	CHECK(b.cap > 10000);
	buf_release(&b);
}

static void test_addf(void)
{
	struct buf b = BUF_INIT;
	char big[5001];

	buf_addf(&b, "%d-%s", 42, "x");	/* into a buffer that owns nothing */
	CHECK_STR(b.ptr, "42-x");
	CHECK(b.len == 4);

	/* Output that exactly fills the room left must not grow. */
	buf_release(&b);
	buf_grow(&b, 0);
	CHECK(b.cap == 64);
	buf_addf(&b, "%063d", 7);
	CHECK(b.len == 63 && b.cap == 64);
	CHECK(b.ptr[62] == '7' && b.ptr[63] == '\0');
	buf_addf(&b, "%s", "");
	CHECK(b.len == 63 && b.cap == 64);
	buf_addf(&b, "%c", 'z');	/* one more byte: must grow */
	CHECK(b.len == 64 && b.cap > 64);
	CHECK(b.ptr[63] == 'z' && b.ptr[64] == '\0');

	/* Output much longer than the capacity: the second vsnprintf. */
	memset(big, 'q', 5000);
	big[5000] = '\0';
	buf_reset(&b);
	buf_addstr(&b, "<");
	buf_addf(&b, "%s|%llu|%s", big, 18446744073709551615ull, big);
	CHECK(b.len == 1 + 5000 + 1 + 20 + 1 + 5000);
	CHECK(b.ptr[0] == '<' && b.ptr[1] == 'q' && b.ptr[5000] == 'q');
	CHECK(memcmp(b.ptr + 5001, "|18446744073709551615|", 22) == 0);
	CHECK(b.ptr[b.len - 1] == 'q' && b.ptr[b.len] == '\0');
	CHECK(strlen(b.ptr) == b.len);
	buf_release(&b);
}

static void test_addu64(void)
{
	struct buf b = BUF_INIT;

	buf_addu64(&b, 0);
	CHECK_STR(b.ptr, "0");
	buf_reset(&b);
	buf_addu64(&b, 18446744073709551615ull);
	CHECK_STR(b.ptr, "18446744073709551615");
	CHECK(b.len == 20);
	buf_reset(&b);
	buf_addstr(&b, "n=");
	buf_addu64(&b, 10);
	buf_addu64(&b, 9);
	CHECK_STR(b.ptr, "n=109");
	buf_release(&b);
}

static void test_detach(void)
{
	struct buf b = BUF_INIT;
	size_t len = 99;
	char *p;

	/* Detaching an empty buffer still gives memory the caller may free. */
	p = buf_detach(&b, &len);
	CHECK(p != NULL && p != buf_empty);
	CHECK(len == 0 && p[0] == '\0');
	free(p);

	buf_addstr(&b, "owned");
	p = buf_detach(&b, &len);
	CHECK(len == 5);
	CHECK_STR(p, "owned");
	CHECK(b.ptr == buf_empty && b.len == 0 && b.cap == 0);
	free(p);

	buf_addstr(&b, "again");	/* reusable after detach */
	p = buf_detach(&b, NULL);
	CHECK_STR(p, "again");
	free(p);
}

static void test_reset_setlen(void)
{
	struct buf b = BUF_INIT;
	size_t cap;
	char *ptr;

	buf_addstr(&b, "a fairly long string that needs its own allocation");
	cap = b.cap;
	ptr = b.ptr;
	buf_reset(&b);
	CHECK(b.len == 0 && b.ptr[0] == '\0');
	CHECK(b.cap == cap && b.ptr == ptr);	/* capacity kept for reuse */
	buf_addstr(&b, "short");
	CHECK(b.ptr == ptr);
	CHECK_STR(b.ptr, "short");

	buf_setlen(&b, 2);
	CHECK(b.len == 2);
	CHECK_STR(b.ptr, "sh");
	buf_release(&b);
}

int main(void)
{
	test_empty();
	test_grow();
	test_add();
	test_addf();
	test_addu64();
	test_detach();
	test_reset_setlen();
	return unit_done();
}
