/* test-msgrec: a kept message's bytes and its record key (msgrec.h):
 * exact bytes, round trips, and damaged ones refused. */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "msgrec.h"
#include "unit.h"
#include "unit-headers.h"

/* rec decodes to arrived, the header lines joined by '|', and body. */
static int decodes_to(const char *rec, size_t len, int64_t arrived,
		      const char *lines, const char *body, size_t body_len)
{
	struct headers h = HEADERS_INIT;
	struct buf joined = BUF_INIT;
	const char *got_body = NULL;
	size_t got_len = 0;
	int64_t at = 0;
	int ok;

	make_headers(&h, "Stale: header");
	ok = msgrec_decode(rec, len, &at, &h, &got_body, &got_len) == 0;
	for (size_t i = 0; ok && i < headers_count(&h); i++) {
		size_t nl, vl;
		const char *n = headers_name(&h, i, &nl);
		const char *v = headers_value(&h, i, &vl);
		buf_addf(&joined, "%s%.*s: %.*s", i ? "|" : "", (int)nl, n, (int)vl, v);
	}
	ok = ok && at == arrived && !strcmp(joined.ptr, lines) &&
	     got_len == body_len && !memcmp(got_body, body, body_len) &&
	     got_body >= rec && got_body + got_len == rec + len;
	buf_release(&joined);
	headers_release(&h);
	return ok;
}

static void test_round_trip(void)
{
	struct headers h = HEADERS_INIT;
	struct buf rec = BUF_INIT;
	static const char want[] = "1234\nA: 1\nB: two  words\n\nx\0y\n";

	make_headers(&h, "A: 1|B: two  words");
	msgrec_encode(&rec, 1234, &h, "x\0y\n", 4);
	CHECK(rec.len == sizeof(want) - 1 && !memcmp(rec.ptr, want, rec.len));
	CHECK(decodes_to(rec.ptr, rec.len, 1234, "A: 1|B: two  words", "x\0y\n", 4));

	msgrec_encode(&rec, -5, &h, "body", 4);
	CHECK_STR(rec.ptr, "-5\nA: 1\nB: two  words\n\nbody");
	CHECK(decodes_to(rec.ptr, rec.len, -5, "A: 1|B: two  words", "body", 4));

	msgrec_encode(&rec, INT64_MIN, &h, "", 0);
	CHECK_STR(rec.ptr, "-9223372036854775808\nA: 1\nB: two  words\n\n");
	CHECK(decodes_to(rec.ptr, rec.len, INT64_MIN, "A: 1|B: two  words", "", 0));
	msgrec_encode(&rec, INT64_MAX, &h, "\n", 1);
	CHECK(decodes_to(rec.ptr, rec.len, INT64_MAX, "A: 1|B: two  words", "\n", 1));

	/* No headers, no body; a body that looks like headers. */
	headers_reset(&h);
	msgrec_encode(&rec, 0, &h, "", 0);
	CHECK_STR(rec.ptr, "0\n\n");
	CHECK(decodes_to(rec.ptr, rec.len, 0, "", "", 0));
	msgrec_encode(&rec, 7, &h, "C: 3\n\n", 6);
	CHECK(decodes_to(rec.ptr, rec.len, 7, "", "C: 3\n\n", 6));
	buf_release(&rec);
	headers_release(&h);
}

/* A block kept as read may end its lines in CRLF: split and parsed the
 * same, the body starting after the blank CRLF line. */
static void test_crlf_block(void)
{
	static const char block[] = "A: 1\r\nB: two\r\nContent-Length: 3\r\n\r\n";
	struct buf rec = BUF_INIT;
	struct headers h = HEADERS_INIT;
	const char *b, *body;
	size_t blen, len;
	int64_t at;

	msgrec_encode_block(&rec, 9, block, sizeof(block) - 1, "a\n\nb", 4);
	CHECK(msgrec_split(rec.ptr, rec.len, &at, &b, &blen, &body, &len) == 0);
	CHECK(at == 9 && blen == sizeof(block) - 1 && !memcmp(b, block, blen));
	CHECK(len == 4 && !memcmp(body, "a\n\nb", 4));
	CHECK(msgrec_parse_block(b, blen, &h) == 0);
	CHECK(headers_count(&h) == 3);
	CHECK_STR(headers_get(&h, "B"), "two");
	CHECK(decodes_to(rec.ptr, rec.len, 9, "A: 1|B: two|Content-Length: 3", "a\n\nb", 4));
	buf_release(&rec);
	headers_release(&h);
}

static void test_damaged(void)
{
	static const char *const bad[] = {
		"",
		"12",				/* no newline */
		"\n\n",				/* no arrival */
		"x\n\n",
		"12x\n\n",
		"99999999999999999999\n\n",	/* out of range */
		"123456789012345678901234567\n\n",
		"12\nA: 1\n",			/* no blank line */
		"12\nA: 1",
		"12\nno colon\n\n",
	};
	struct headers h = HEADERS_INIT;
	const char *body;
	size_t len;
	int64_t at;

	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		errno = 0;
		CHECK(msgrec_decode(bad[i], strlen(bad[i]), &at, &h, &body, &len) == -1 &&
		      errno == EINVAL);
	}
	errno = 0;
	CHECK(msgrec_decode("12\nA: x\0y\n\nbody", 15, &at, &h, &body, &len) == -1 &&
	      errno == EINVAL);
	/* The record's length bounds it, not a NUL after it. */
	CHECK(msgrec_decode("12\n\nbody", 3, &at, &h, &body, &len) == -1);
	headers_release(&h);
}

static void test_read_ms(void)
{
	static const char text[] = "42\nrest";
	int64_t ms = 0;

	CHECK(msgrec_read_ms(text, text + 7, &ms) == text + 3 && ms == 42);
	CHECK(msgrec_read_ms(text, text + 2, &ms) == NULL);
	CHECK(msgrec_read_ms("-1\n", (const char *)"-1\n" + 3, &ms) != NULL && ms == -1);
}

static void test_key(void)
{
	struct buf k = BUF_INIT, k2 = BUF_INIT;
	size_t key_len = 99;
	uint64_t n = 0;

	msgrec_key(&k, "grp", 3, 0x0102030405060708ull);
	CHECK(k.len == 12 && !memcmp(k.ptr, "grp\0\1\2\3\4\5\6\7\10", 12));
	CHECK(msgrec_key_decode(k.ptr, k.len, &key_len, &n) == 0);
	CHECK(key_len == 3 && n == 0x0102030405060708ull);
	/* A key may hold a NUL, or be empty. */
	msgrec_key(&k, "a\0b", 3, UINT64_MAX);
	CHECK(msgrec_key_decode(k.ptr, k.len, &key_len, &n) == 0);
	CHECK(key_len == 3 && n == UINT64_MAX && !memcmp(k.ptr, "a\0b", 3));
	msgrec_key(&k, "", 0, 9);
	CHECK(k.len == 9);
	CHECK(msgrec_key_decode(k.ptr, k.len, &key_len, &n) == 0 && key_len == 0 && n == 9);
	/* Byte order is number order within a group. */
	msgrec_key(&k, "g", 1, 255);
	msgrec_key(&k2, "g", 1, 256);
	CHECK(k.len == k2.len && memcmp(k.ptr, k2.ptr, k.len) < 0);
	msgrec_key(&k2, "g", 1, 1ull << 40);
	CHECK(memcmp(k.ptr, k2.ptr, k.len) < 0);
	/* Too short, or no NUL before the number. */
	errno = 0;
	CHECK(msgrec_key_decode("\0\0\0\0\0\0\0\1", 8, &key_len, &n) == -1 && errno == EINVAL);
	errno = 0;
	CHECK(msgrec_key_decode("ab\1\0\0\0\0\0\0\0\1", 11, &key_len, &n) == -1 &&
	      errno == EINVAL);
	buf_release(&k);
	buf_release(&k2);
}

int main(void)
{
	test_round_trip();
	test_crlf_block();
	test_damaged();
	test_read_ms();
	test_key();
	return unit_done();
}
