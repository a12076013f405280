/* Unit tests for utf8: every sequence of up to three bytes, and the
 * four-byte ones by their first three, against a plain reference. */
#include <stdint.h>
#include <string.h>

#include "utf8.h"
#include "unit.h"

/*
 * The reference: s[0..n) is one valid sequence iff it decodes, by masks
 * alone, to a scalar value whose shortest encoding is s itself.
 */
static int reference_valid(const unsigned char *s, size_t n)
{
	uint32_t cp;
	size_t i;
	char again[4];

	if (n == 1)
		return s[0] < 0x80;
	/* A lead of n bytes: n one bits, then a zero. */
	if ((unsigned)s[0] >> (7 - n) != (1u << (n + 1)) - 2)
		return 0;
	cp = s[0] & (0x7f >> n);
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if (cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return utf8_encode(cp, again) == n && !memcmp(again, s, n);
}

/* Does utf8_decode agree with the reference on s[0..n)? */
static int agrees(const unsigned char *s, size_t n)
{
	uint32_t cp;
	int len = s[0] < 0x80 ? 1 : utf8_decode(s, n, &cp);
	int valid = reference_valid(s, n);

	if (valid != (len == (int)n))
		return 0;
	/* A shorter sequence leaves bytes the text check goes on with. */
	return (len > 0 && len < (int)n) ||
	       valid == utf8_is_valid((const char *)s, n, 1);
}

static void test_exhaustive(void)
{
	unsigned char s[4];
	unsigned a, b, c, bad = 0;

	for (a = 0; a < 256; a++) {
		s[0] = (unsigned char)a;
		bad += !agrees(s, 1);
		for (b = 0; b < 256; b++) {
			s[1] = (unsigned char)b;
			bad += a >= 0x80 && !agrees(s, 2);
			for (c = 0; c < 256; c++) {
				s[2] = (unsigned char)c;
				bad += a >= 0x80 && !agrees(s, 3);
				s[3] = 0x80;
				bad += a >= 0x80 && !agrees(s, 4);
				s[3] = 0xbf;
				bad += a >= 0x80 && !agrees(s, 4);
			}
		}
	}
	CHECK(bad == 0);
}

static void test_round_trip(void)
{
	uint32_t cp, back;
	unsigned char u[4];
	unsigned bad = 0;
	size_t len;

	for (cp = 0x80; cp <= 0x10ffff; cp++) {
		if (cp >= 0xd800 && cp <= 0xdfff)
			continue;
		len = utf8_encode(cp, (char *)u);
		bad += utf8_decode(u, len, &back) != (int)len || back != cp;
		/* Cut short, it is incomplete, not invalid. */
		bad += utf8_decode(u, len - 1, &back) != -1;
	}
	CHECK(bad == 0);
}

static void test_texts(void)
{
	CHECK(utf8_is_valid("", 0, 0));
	CHECK(utf8_is_valid("plain ascii text, long enough", 29, 0));
	CHECK(!utf8_is_valid("nul\0inside the first eight", 27, 0));
	CHECK(utf8_is_valid("nul\0inside the first eight", 27, 1));
	CHECK(!utf8_is_valid("0123456789abcdef\0", 17, 0));
	CHECK(utf8_is_valid("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", 14, 0));
	CHECK(!utf8_is_valid("cut \xe2\x82", 6, 1));
	CHECK(!utf8_is_valid("lone \x80 continuation", 20, 1));
	CHECK(!utf8_is_valid("surrogate \xed\xa0\x80", 13, 1));
	CHECK(!utf8_is_valid("overlong \xc0\xaf", 11, 1));
	CHECK(!utf8_is_valid("beyond \xf4\x90\x80\x80", 11, 1));
}

int main(void)
{
	test_exhaustive();
	test_round_trip();
	test_texts();
	return unit_done();
}
