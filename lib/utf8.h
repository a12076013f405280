/*
 * utf8: the one place that knows UTF-8 (RFC 3629): which bytes may follow
 * a lead byte, decoding one sequence, encoding a code point, and checking
 * whole texts. Overlong forms, surrogates and code points beyond U+10FFFF
 * are invalid everywhere.
 */
#ifndef MSG_UTF8_H
#define MSG_UTF8_H

#include <stddef.h>
#include <stdint.h>

/*
 * How many continuation bytes follow lead byte b (1 to 3), with the range
 * [*lo, *hi] the first of them must be in (the later ones are always
 * 0x80..0xbf); 0 if b cannot start a multibyte sequence.
 */
static inline unsigned utf8_lead(unsigned b, unsigned char *lo, unsigned char *hi)
{
	*lo = 0x80, *hi = 0xbf;
	if (b >= 0xc2 && b <= 0xdf)
		return 1;
	if (b >= 0xe0 && b <= 0xef) {
		/* Neither overlong (E0 80..9F) nor a surrogate (ED A0..BF). */
		*lo = b == 0xe0 ? 0xa0 : 0x80;
		*hi = b == 0xed ? 0x9f : 0xbf;
		return 2;
	}
	if (b >= 0xf0 && b <= 0xf4) {
		/* Neither overlong (F0 80..8F) nor beyond U+10FFFF (F4 90..). */
		*lo = b == 0xf0 ? 0x90 : 0x80;
		*hi = b == 0xf4 ? 0x8f : 0xbf;
		return 3;
	}
	return 0;
}

/*
 * The sequence at s[0..n) whose lead byte is >= 0x80: its length with
 * the code point in *cp, 0 if it is invalid, or -1 if s ends inside it.
 */
int utf8_decode(const unsigned char *s, size_t n, uint32_t *cp);

/*
 * cp as UTF-8 in out; its length (1 to 4). Surrogates are encoded like
 * any other code point, so that a lone one written as an escape survives
 * a round trip through decoded text.
 */
size_t utf8_encode(uint32_t cp, char out[4]);

/* Is p[0..n) valid UTF-8 (with NUL bytes only if allow_nul)? */
int utf8_is_valid(const char *p, size_t n, int allow_nul);

#endif
