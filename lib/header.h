/*
 * header: an ordered list of message headers.
 * Names compare case-insensitively; order and duplicates are preserved.
 * Names and values live in one arena that is reused from message to
 * message, so a tool's loop does not allocate per header.
 */
#ifndef MSG_HEADER_H
#define MSG_HEADER_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "buf.h"

#define HEADER_NAME_MAX 256

struct header_entry {
	size_t name_off, name_len;
	size_t value_off, value_len;
};

struct headers {
	struct header_entry *v;
	size_t n, alloc;
	struct buf store;	/* "name\0value\0" runs, offsets in v */
	/* Bit len % 32 set for every name of length len added since the
	 * last reset: most lookups of a name h does not hold end here. */
	uint32_t name_lengths;
};

#define HEADERS_INIT { NULL, 0, 0, BUF_INIT, 0 }

void headers_init(struct headers *h);
void headers_release(struct headers *h);
void headers_reset(struct headers *h);
void headers_copy(struct headers *dst, const struct headers *src);

static inline size_t headers_count(const struct headers *h) { return h->n; }
/* NUL-terminated views valid until the next change to h. */
static inline const char *headers_name(const struct headers *h, size_t i,
					size_t *len)
{
	if (len)
		*len = h->v[i].name_len;
	return h->store.ptr + h->v[i].name_off;
}

static inline const char *headers_value(const struct headers *h, size_t i,
					 size_t *len)
{
	if (len)
		*len = h->v[i].value_len;
	return h->store.ptr + h->v[i].value_off;
}

static inline uint32_t header_length_bit(size_t len)
{
	return (uint32_t)1 << (len & 31);
}

/* Index of the first header called name, or -1. */
long headers_find_slow(const struct headers *h, const char *name, size_t len);
static inline long headers_find(const struct headers *h, const char *name, size_t len)
{
	return h->name_lengths & header_length_bit(len) ? headers_find_slow(h, name, len) : -1;
}
/* The first value of name, or NULL. (Inline, so that the length of a
 * name spelled in the call is known when it is compiled.) */
static inline const char *headers_get(const struct headers *h, const char *name)
{
	long i = headers_find(h, name, strlen(name));

	return i < 0 ? NULL : h->store.ptr + h->v[i].value_off;
}

/*
 * Values are normalised on the way in, so a frame can always be written:
 * blanks at both ends are trimmed and each run of CR, LF or NUL becomes one
 * space. Names must satisfy header_name_valid(); these return -1 (EINVAL)
 * when they do not.
 */
int headers_add(struct headers *h, const char *name, size_t nlen,
		const char *value, size_t vlen);
/*
 * A header block parsed in place, as the frame reader does: headers_block
 * copies the block's len bytes into h's arena and returns the copy;
 * headers_add_parsed adds a header whose name (already checked) and value
 * (known to hold no CR, LF or NUL) lie in that copy. It trims the blanks
 * at the value's ends and ends name and value with a NUL where the colon
 * and the line end were, so a header costs no copy of its own. Nothing
 * else may be added to h in between: the arena would move.
 */
char *headers_block(struct headers *h, const char *block, size_t len);
/* Room for one more entry (the table doubles). */
void headers_grow_table(struct headers *h);
/* Inline: the frame reader calls it for every header of every frame. */
static inline void headers_add_parsed(struct headers *h, char *name, size_t nlen,
				      char *value, size_t vlen)
{
	struct header_entry *e;

	while (vlen && (*value == ' ' || *value == '\t'))
		value++, vlen--;
	while (vlen && (value[vlen - 1] == ' ' || value[vlen - 1] == '\t'))
		vlen--;
	if (h->n == h->alloc)
		headers_grow_table(h);
	e = &h->v[h->n++];
	h->name_lengths |= header_length_bit(nlen);
	name[nlen] = '\0';
	value[vlen] = '\0';
	e->name_off = (size_t)(name - h->store.ptr);
	e->name_len = nlen;
	e->value_off = (size_t)(value - h->store.ptr);
	e->value_len = vlen;
}
/* Replace the first value in place (removing later duplicates) or append. */
int headers_setn(struct headers *h, const char *name, const char *value,
		 size_t vlen);
int headers_set(struct headers *h, const char *name, const char *value);
int headers_set_u64(struct headers *h, const char *name,
		    unsigned long long v);
/* headers_set each header of src in dst, in order. */
void headers_set_all(struct headers *dst, const struct headers *src);
/* Remove every header called name; returns how many were removed. */
size_t headers_remove(struct headers *h, const char *name);
/* Parse "Name: value" (as given to -H) and add it; -1 if malformed. */
int headers_add_line(struct headers *h, const char *line);

int header_name_valid(const char *p, size_t n);
/* May c appear in a header name? (A table: the frame reader asks per byte.) */
extern const unsigned char header_name_chars[256];
static inline int header_name_char(char c)
{
	return header_name_chars[(unsigned char)c];
}
/*
 * ASCII only, as header names are: no locale, no call. Eight bytes at a
 * time (a last word overlapping the one before), folding the case bit of
 * each: every frame compares its names with Content-Length and Message-Id.
 */
static inline uint64_t header_word_folded(const char *p)
{
	uint64_t w;

	memcpy(&w, p, sizeof(w));
	return w | 0x2020202020202020u;
}

static inline int header_name_eq(const char *a, size_t alen, const char *b,
				 size_t blen)
{
	size_t i;

	if (alen != blen)
		return 0;
	if (alen < 8) {
		for (i = 0; i < alen; i++)
			if ((a[i] | 0x20) != (b[i] | 0x20))
				return 0;
		return 1;
	}
	for (i = 0; i + 8 < alen; i += 8)
		if (header_word_folded(a + i) != header_word_folded(b + i))
			return 0;
	return header_word_folded(a + alen - 8) == header_word_folded(b + alen - 8);
}

#endif
