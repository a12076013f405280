/*
 * linescan: the bytes of a header block that the frame reader looks for,
 * found 16 at a time. For up to 16 bytes, one mask says which of them
 * are LF (bit i for p[i]) and another which are CR or NUL, the bytes a
 * clean block holds none of. One pass of these finds every line of a
 * block and tells whether it is clean, where a memchr per line and two
 * more over the block cost a call each: on frames of a few short headers
 * the calls, not the bytes, were the time.
 */
#ifndef MSG_LINESCAN_H
#define MSG_LINESCAN_H

#include <stddef.h>

#ifdef __SSE2__
#include <emmintrin.h>
#endif

#define LINESCAN_WIDTH 16

struct linescan {
	unsigned lf;		/* bit i: p[i] is LF */
	unsigned cr_nul;	/* bit i: p[i] is CR or NUL */
};

/* The masks of p[0..n), n <= LINESCAN_WIDTH; no byte past them is read. */
static inline struct linescan linescan(const char *p, size_t n)
{
	struct linescan m = { 0, 0 };

#ifdef __SSE2__
	if (n == LINESCAN_WIDTH) {
		__m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
		__m128i cr = _mm_cmpeq_epi8(v, _mm_set1_epi8('\r'));
		__m128i nul = _mm_cmpeq_epi8(v, _mm_setzero_si128());

		m.lf = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8('\n')));
		m.cr_nul = (unsigned)_mm_movemask_epi8(_mm_or_si128(cr, nul));
		return m;
	}
#endif
	for (size_t i = 0; i < n; i++) {
		m.lf |= (unsigned)(p[i] == '\n') << i;
		m.cr_nul |= (unsigned)(p[i] == '\r' || p[i] == '\0') << i;
	}
	return m;
}

/* The bits of a mask up to and including bit i (i < LINESCAN_WIDTH). */
static inline unsigned linescan_through(unsigned mask, unsigned i)
{
	return mask & ((2u << i) - 1);
}

#endif
