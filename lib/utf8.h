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
unsigned utf8_lead(unsigned b, unsigned char *lo, unsigned char *hi);

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
