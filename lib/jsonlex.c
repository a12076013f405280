/* jsonlex: JSON's lexical rules, shared by every JSON reader. */
#include "jsonlex.h"

#include <stdio.h>
#include <string.h>

const unsigned char jsonlex_plain[256] = {
	[0x20 ... 0x21] = 1, [0x23 ... 0x5b] = 1, [0x5d ... 0x7f] = 1,
};

const unsigned char jsonlex_space[256] = {
	[' '] = 1, ['\t'] = 1, ['\n'] = 1, ['\r'] = 1,
};

const char *jsonlex_describe(unsigned c, char out[16])
{
	if (c >= 0x20 && c < 0x7f)
		snprintf(out, 16, "'%c'", (char)c);
	else
		snprintf(out, 16, "byte 0x%02x", c);
	return out;
}

int jsonlex_hex4(const unsigned char *s, size_t n, uint32_t *v)
{
	uint32_t x = 0;
	int i;

	if (n < 4)
		return -1;
	for (i = 0; i < 4; i++) {
		unsigned c = s[i];

		if (!jsonlex_is_hex(c))
			return -1;
		x = x << 4 | (jsonlex_is_digit(c) ? c - '0' : (c | 0x20) - 'a' + 10);
	}
	*v = x;
	return 0;
}

/* A \u escape of a low surrogate at s[0..n)? Its value, else 0. */
static uint32_t low_surrogate_at(const unsigned char *s, size_t n)
{
	uint32_t v;

	if (n < 6 || s[0] != '\\' || s[1] != 'u' || jsonlex_hex4(s + 2, n - 2, &v) < 0)
		return 0;
	return v >= 0xdc00 && v <= 0xdfff ? v : 0;
}

size_t jsonlex_unescape(const unsigned char *s, size_t n, uint32_t *cp)
{
	static const char from[] = "\"\\/bfnrt", into[] = "\"\\/\b\f\n\r\t";
	const char *hit;
	uint32_t lo;

	if (n < 2)
		return 0;
	if (s[1] != 'u') {
		hit = memchr(from, s[1], sizeof(from) - 1);
		if (!hit)
			return 0;
		*cp = (unsigned char)into[hit - from];
		return 2;
	}
	if (jsonlex_hex4(s + 2, n - 2, cp) < 0)
		return 0;
	if (*cp >= 0xd800 && *cp <= 0xdbff && (lo = low_surrogate_at(s + 6, n - 6))) {
		*cp = 0x10000 + ((*cp - 0xd800) << 10) + (lo - 0xdc00);
		return 12;
	}
	return 6;
}

const char *jsonlex_num_end(int st)
{
	switch (st) {
	case JSONLEX_NUM_START: case JSONLEX_NUM_MINUS:
		return "digit expected after '-'";
	case JSONLEX_NUM_DOT:
		return "digit expected after '.'";
	case JSONLEX_NUM_EXP_MARK: case JSONLEX_NUM_EXP_SIGN:
		return "digit expected in exponent";
	}
	return NULL;
}

size_t jsonlex_number_len(const unsigned char *s, size_t n, size_t *at,
			  const char **why)
{
	int st = JSONLEX_NUM_START, next;
	size_t i = 0;

	for (;;) {
		if (jsonlex_num_in_digits(st))
			while (i < n && jsonlex_is_digit(s[i]))
				i++;
		if (i >= n)
			break;
		next = jsonlex_num_step(st, s[i], why);
		if (next < 0) {
			*at = i;
			return 0;
		}
		if (next == 0)
			return i;
		st = next;
		i++;
	}
	if ((*why = jsonlex_num_end(st))) {
		*at = n;
		return 0;
	}
	return i;
}
