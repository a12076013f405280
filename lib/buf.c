/* buf: growable byte buffer and allocation helpers that never fail. */
#include "buf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"

char buf_empty[1];

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		die(EX_SOFTWARE, "out of memory (%zu bytes)", n);
	return p;
}

void *xcalloc(size_t count, size_t size)
{
	void *p = calloc(count ? count : 1, size ? size : 1);
	if (!p)
		die(EX_SOFTWARE, "out of memory (%zu of %zu bytes)", count, size);
	return p;
}

void *xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);
	if (!q)
		die(EX_SOFTWARE, "out of memory (%zu bytes)", n);
	return q;
}

char *xmemdup(const void *p, size_t n)
{
	char *s = xmalloc(n + 1);
	memcpy(s, p, n);
	s[n] = '\0';
	return s;
}

char *xstrdup(const char *s)
{
	return xmemdup(s, strlen(s));
}

void buf_init(struct buf *b, size_t hint)
{
	b->ptr = buf_empty;
	b->len = b->cap = 0;
	if (hint)
		buf_grow(b, hint);
}

void buf_release(struct buf *b)
{
	if (b->cap)
		free(b->ptr);
	buf_init(b, 0);
}

char *buf_detach(struct buf *b, size_t *len)
{
	char *p;

	if (len)
		*len = b->len;
	p = b->cap ? b->ptr : xstrdup("");
	buf_init(b, 0);
	return p;
}

void buf_grow(struct buf *b, size_t extra)
{
	size_t want;

	if (extra > (size_t)-1 / 2 - b->len)
		die(EX_SOFTWARE, "buffer size overflow");
	want = b->len + extra + 1;
	if (want <= b->cap)
		return;
	if (want < b->cap + b->cap / 2)
		want = b->cap + b->cap / 2;
	if (want < 64)
		want = 64;
	if (!b->cap) {
		b->ptr = xmalloc(want);
		b->ptr[0] = '\0';
	} else {
		b->ptr = xrealloc(b->ptr, want);
	}
	b->cap = want;
}

void buf_setlen(struct buf *b, size_t len)
{
	if (!b->cap) {
		if (len)
			die(EX_SOFTWARE, "buf_setlen past capacity");
		return;
	}
	b->len = len;
	b->ptr[len] = '\0';
}

void buf_add_slow(struct buf *b, const void *data, size_t n)
{
	if (!n)
		return;
	buf_grow(b, n);
	memcpy(b->ptr + b->len, data, n);
	buf_setlen(b, b->len + n);
}

void buf_addstr(struct buf *b, const char *s)
{
	buf_add(b, s, strlen(s));
}

void buf_addch_slow(struct buf *b, int c)
{
	buf_grow(b, 1);
	b->ptr[b->len] = (char)c;
	buf_setlen(b, b->len + 1);
}

void buf_addu64(struct buf *b, unsigned long long v)
{
	char tmp[24];
	size_t i = sizeof(tmp);

	do {
		tmp[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	buf_add(b, tmp + i, sizeof(tmp) - i);
}

void buf_vaddf(struct buf *b, const char *fmt, va_list ap)
{
	va_list cp;
	int n;

	va_copy(cp, ap);
	n = vsnprintf(b->ptr + b->len, buf_avail(b) + (b->cap ? 1 : 0), fmt, cp);
	va_end(cp);
	if (n < 0)
		die(EX_SOFTWARE, "bad format string");
	if ((size_t)n > buf_avail(b)) {
		buf_grow(b, (size_t)n);
		vsnprintf(b->ptr + b->len, (size_t)n + 1, fmt, ap);
	}
	buf_setlen(b, b->len + (size_t)n);
}

void buf_addf(struct buf *b, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	buf_vaddf(b, fmt, ap);
	va_end(ap);
}
