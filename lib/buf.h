/*
 * buf: the one growable byte buffer of libmsg.
 * Never NULL once initialised, always NUL-terminated (the NUL is not counted
 * in len), ownership leaves only by buf_detach(). Bodies may hold NUL bytes.
 */
#ifndef MSG_BUF_H
#define MSG_BUF_H

#include <stdarg.h>
#include <stddef.h>

struct buf {
	char *ptr;
	size_t len;
	size_t cap;
};

extern char buf_empty[];
#define BUF_INIT { buf_empty, 0, 0 }

void buf_init(struct buf *b, size_t hint);
void buf_release(struct buf *b);
char *buf_detach(struct buf *b, size_t *len);
/* Make room for extra more bytes (plus the NUL). Aborts on out of memory. */
void buf_grow(struct buf *b, size_t extra);
void buf_setlen(struct buf *b, size_t len);
static inline void buf_reset(struct buf *b) { buf_setlen(b, 0); }
void buf_add_slow(struct buf *b, const void *data, size_t n);
/* Inline when there is room: frames are appended to output buffers
 * whole, one call a frame. */
static inline void buf_add(struct buf *b, const void *data, size_t n)
{
	if (n && n < b->cap - b->len) {
		__builtin_memcpy(b->ptr + b->len, data, n);
		b->len += n;
		b->ptr[b->len] = '\0';
	} else {
		buf_add_slow(b, data, n);
	}
}
void buf_addstr(struct buf *b, const char *s);
void buf_addch_slow(struct buf *b, int c);
/* Inline: appending one byte is on every hot path. */
static inline void buf_addch(struct buf *b, int c)
{
	if (b->len + 1 < b->cap) {
		b->ptr[b->len++] = (char)c;
		b->ptr[b->len] = '\0';
	} else {
		buf_addch_slow(b, c);
	}
}
void buf_addu64(struct buf *b, unsigned long long v);
void buf_addf(struct buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void buf_vaddf(struct buf *b, const char *fmt, va_list ap);
/* Room left before the next grow; write into ptr + len, then buf_setlen. */
static inline size_t buf_avail(const struct buf *b)
{
	return b->cap ? b->cap - b->len - 1 : 0;
}

/* Allocation helpers that never return NULL: out of memory exits 70. */
/*
 * A library that allocates behind our back (libxml2) reports running out
 * of memory as a failure like any other; the functions that parse a
 * message's body return this instead of -1 then, so that the tool blames
 * the machine (exit 70, the message kept for a retry), not the message.
 */
#define MSG_NO_MEMORY (-2)
void *xmalloc(size_t n);
/* Zeroed, as calloc. */
void *xcalloc(size_t count, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xmemdup(const void *p, size_t n);

#endif
