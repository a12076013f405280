/* utf8: decoding, encoding and checking UTF-8. */
#include "utf8.h"

#include <string.h>

int utf8_decode(const unsigned char *s, size_t n, uint32_t *cp)
{
	unsigned char lo, hi;
	unsigned more = utf8_lead(s[0], &lo, &hi), i;
	uint32_t v;

	if (!more)
		return 0;
	v = s[0] & (0x7f >> (more + 1));
	for (i = 1; i <= more; i++) {
		if (i >= n)
			return -1;
		if (s[i] < lo || s[i] > hi)
			return 0;
		v = v << 6 | (s[i] & 0x3f);
		lo = 0x80, hi = 0xbf;
	}
	*cp = v;
	return (int)more + 1;
}

size_t utf8_encode(uint32_t cp, char out[4])
{
	if (cp < 0x80) {
		out[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (char)(0xc0 | cp >> 6);
		out[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		out[0] = (char)(0xe0 | cp >> 12);
		out[1] = (char)(0x80 | (cp >> 6 & 0x3f));
		out[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	out[0] = (char)(0xf0 | cp >> 18);
	out[1] = (char)(0x80 | (cp >> 12 & 0x3f));
	out[2] = (char)(0x80 | (cp >> 6 & 0x3f));
	out[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

/* Does the 8-byte word hold only ASCII (and no NUL unless allowed)? */
static int ascii_word(const unsigned char *s, int allow_nul)
{
	uint64_t w;

	memcpy(&w, s, 8);
	if (w & 0x8080808080808080ull)
		return 0;
	return allow_nul ||
	       !((w - 0x0101010101010101ull) & ~w & 0x8080808080808080ull);
}

int utf8_is_valid(const char *p, size_t n, int allow_nul)
{
	const unsigned char *s = (const unsigned char *)p;
	size_t i = 0;
	uint32_t cp;
	int len;

	while (i < n) {
		/* Runs of ASCII are the common case: 8 bytes at a time. */
		while (n - i >= 8 && ascii_word(s + i, allow_nul))
			i += 8;
		if (i >= n)
			break;
		if (s[i] < 0x80) {
			if (!s[i] && !allow_nul)
				return 0;
			i++;
			continue;
		}
		len = utf8_decode(s + i, n - i, &cp);
		if (len <= 0)
			return 0;
		i += (size_t)len;
	}
	return 1;
}
