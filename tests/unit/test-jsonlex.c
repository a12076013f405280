/* Unit tests for jsonlex: escapes, the number grammar, byte names. */
#include <stdint.h>
#include <string.h>

#include "jsonlex.h"
#include "unit.h"

/* The escape at the start of s: "len cp" as text, or "0". */
static const char *unescape(const char *s)
{
	static char out[32];
	uint32_t cp = 0;
	size_t len = jsonlex_unescape((const unsigned char *)s, strlen(s), &cp);

	if (!len)
		return "0";
	snprintf(out, sizeof(out), "%zu %04x", len, (unsigned)cp);
	return out;
}

static void test_unescape(void)
{
	CHECK_STR(unescape("\\n"), "2 000a");
	CHECK_STR(unescape("\\/x"), "2 002f");
	CHECK_STR(unescape("\\\""), "2 0022");
	CHECK_STR(unescape("\\u00e9"), "6 00e9");
	CHECK_STR(unescape("\\u00E9"), "6 00e9");
	CHECK_STR(unescape("\\ud83d\\ude00"), "12 1f600");
	/* Lone surrogates come back as they are. */
	CHECK_STR(unescape("\\ud83d"), "6 d83d");
	CHECK_STR(unescape("\\ud83d\\u0041"), "6 d83d");
	CHECK_STR(unescape("\\ude00\\ud83d"), "6 de00");
	CHECK_STR(unescape("\\ud83d\\ude0"), "6 d83d");
	CHECK_STR(unescape("\\"), "0");
	CHECK_STR(unescape("\\x"), "0");
	CHECK_STR(unescape("\\u12g4"), "0");
	CHECK_STR(unescape("\\u123"), "0");
	CHECK(jsonlex_unescape((const unsigned char *)"\\\0", 2, &(uint32_t){ 0 }) == 0);
}

/* jsonlex_number_len on s: "len", or "!at why". */
static const char *number(const char *s)
{
	static char out[64];
	const char *why = NULL;
	size_t at = 0, len = jsonlex_number_len((const unsigned char *)s,
						strlen(s), &at, &why);

	if (len)
		snprintf(out, sizeof(out), "%zu", len);
	else
		snprintf(out, sizeof(out), "!%zu %s", at, why);
	return out;
}

static void test_numbers(void)
{
	CHECK_STR(number("0"), "1");
	CHECK_STR(number("-0,"), "2");
	CHECK_STR(number("123]"), "3");
	CHECK_STR(number("1.50}"), "4");
	CHECK_STR(number("-1.5e+10 "), "8");
	CHECK_STR(number("1E400"), "5");
	CHECK_STR(number("0e0x"), "3");
	CHECK_STR(number("-"), "!1 digit expected after '-'");
	CHECK_STR(number("-a"), "!1 digit expected after '-'");
	CHECK_STR(number("01"), "!1 leading zero in number");
	CHECK_STR(number("1."), "!2 digit expected after '.'");
	CHECK_STR(number("1.e5"), "!2 digit expected after '.'");
	CHECK_STR(number("1e"), "!2 digit expected in exponent");
	CHECK_STR(number("1e+"), "!3 digit expected in exponent");
	CHECK_STR(number("1e+x"), "!3 digit expected in exponent");
}

/* Fed a byte at a time, the states end where number_len does. */
static void test_steps_agree(void)
{
	static const char *const cases[] = {
		"0", "-0", "12", "1.5", "-1.5e+10", "1e5", "0.0e-0", "-", "01",
		"1.", "1e", "1e-", "--1", "0x", "9.9.9",
	};
	size_t k, i, at, len;
	const char *why;
	int bad = 0, st, next;

	for (k = 0; k < sizeof(cases) / sizeof(*cases); k++) {
		const char *s = cases[k];
		size_t n = strlen(s);

		len = jsonlex_number_len((const unsigned char *)s, n, &at, &why);
		st = JSONLEX_NUM_START;
		for (i = 0; i < n; i++) {
			next = jsonlex_num_step(st, (unsigned char)s[i], &why);
			if (next <= 0)
				break;
			st = next;
		}
		if (i < n)
			bad += next < 0 ? len != 0 || at != i : len != i;
		else
			bad += jsonlex_num_end(st) ? len != 0 || at != n : len != n;
	}
	CHECK(bad == 0);
}

static void test_bytes(void)
{
	char d[16];
	uint32_t v;

	CHECK_STR(jsonlex_describe('x', d), "'x'");
	CHECK_STR(jsonlex_describe(0x0a, d), "byte 0x0a");
	CHECK_STR(jsonlex_describe(0xff, d), "byte 0xff");
	CHECK(jsonlex_hex4((const unsigned char *)"aF09", 4, &v) == 0 && v == 0xaf09);
	CHECK(jsonlex_hex4((const unsigned char *)"aF0", 3, &v) < 0);
	CHECK(jsonlex_hex4((const unsigned char *)"0g00", 4, &v) < 0);
	/* Exactly 0-9, a-f, A-F: no byte whose low bits pass for one. */
	for (unsigned c = 0; c < 256; c++)
		CHECK(jsonlex_is_hex(c) == (strchr("0123456789abcdefABCDEF", (int)c) && c));
	CHECK_STR(jsonlex_literal('t'), "true");
	CHECK_STR(jsonlex_literal('f'), "false");
	CHECK_STR(jsonlex_literal('n'), "null");
	CHECK(jsonlex_literal('T') == NULL && jsonlex_literal('"') == NULL);
	CHECK(jsonlex_space[' '] && jsonlex_space['\t'] && !jsonlex_space['\f']);
	CHECK(jsonlex_plain['a'] && !jsonlex_plain['"'] && !jsonlex_plain['\\'] &&
	      !jsonlex_plain[0x1f] && !jsonlex_plain[0x80]);
	CHECK_STR(JSON_TOO_DEEP, "nesting deeper than 512");
}

int main(void)
{
	test_unescape();
	test_numbers();
	test_steps_agree();
	test_bytes();
	return unit_done();
}
