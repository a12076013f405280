/* header: ordered, case-insensitive header list over a reusable arena. */
#include "header.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

const unsigned char header_name_chars[256] = {
#define R(a, b) [a ... b] = 1
	R('0', '9'), R('A', 'Z'), R('a', 'z'),
	['-'] = 1, ['_'] = 1, ['.'] = 1,
#undef R
};

int header_name_valid(const char *p, size_t n)
{
	if (n == 0 || n > HEADER_NAME_MAX)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!header_name_char(p[i]))
			return 0;
	return 1;
}

void headers_init(struct headers *h)
{
	h->v = NULL;
	h->n = h->alloc = 0;
	h->name_lengths = 0;
	buf_init(&h->store, 0);
}

void headers_release(struct headers *h)
{
	free(h->v);
	buf_release(&h->store);
	headers_init(h);
}

void headers_reset(struct headers *h)
{
	h->n = 0;
	h->name_lengths = 0;
	buf_reset(&h->store);
}

void headers_copy(struct headers *dst, const struct headers *src)
{
	headers_reset(dst);
	buf_add(&dst->store, src->store.ptr, src->store.len);
	if (dst->alloc < src->n) {
		dst->alloc = src->n;
		dst->v = xrealloc(dst->v, dst->alloc * sizeof(*dst->v));
	}
	if (src->n)
		memcpy(dst->v, src->v, src->n * sizeof(*src->v));
	dst->n = src->n;
	dst->name_lengths = src->name_lengths;
}

long headers_find_slow(const struct headers *h, const char *name, size_t len)
{
	for (size_t i = 0; i < h->n; i++)
		if (header_name_eq(h->store.ptr + h->v[i].name_off,
				   h->v[i].name_len, name, len))
			return (long)i;
	return -1;
}

static int is_blank(char c)
{
	return c == ' ' || c == '\t';
}

/* Append a normalised copy of value to the arena; returns its length. */
static size_t store_value(struct buf *s, const char *p, size_t n)
{
	size_t start = s->len;
	int pending_space = 0;

	while (n && (is_blank(*p) || *p == '\r' || *p == '\n' || !*p))
		p++, n--;
	while (n && (is_blank(p[n - 1]) || p[n - 1] == '\r' ||
		     p[n - 1] == '\n' || !p[n - 1]))
		n--;
	buf_grow(s, n + 1);
	if (!memchr(p, '\n', n) && !memchr(p, '\r', n) && !memchr(p, '\0', n)) {
		/* The usual value needs no folding: one copy. */
		memcpy(s->ptr + s->len, p, n);
		s->len += n;
		buf_addch(s, '\0');
		return n;
	}
	for (size_t i = 0; i < n; i++) {
		char c = p[i];
		if (c == '\r' || c == '\n' || c == '\0') {
			pending_space = 1;
			continue;
		}
		if (pending_space) {
			s->ptr[s->len++] = ' ';
			pending_space = 0;
		}
		s->ptr[s->len++] = c;
	}
	buf_addch(s, '\0');
	return s->len - start - 1;
}

static int in_store(const struct headers *h, const char *p)
{
	return h->store.cap && p >= h->store.ptr &&
	       p < h->store.ptr + h->store.cap;
}

/* Copying a header within one list: the arena may move while we append. */
static int add_from_store(struct headers *h, const char *name, size_t nlen,
			  const char *value, size_t vlen)
{
	char *n = xmemdup(name, nlen), *v = xmemdup(value, vlen);
	int r = headers_add(h, n, nlen, v, vlen);

	free(n);
	free(v);
	return r;
}

int headers_add(struct headers *h, const char *name, size_t nlen,
		const char *value, size_t vlen)
{
	struct header_entry *e;

	if (in_store(h, name) || in_store(h, value))
		return add_from_store(h, name, nlen, value, vlen);

	if (!header_name_valid(name, nlen)) {
		errno = EINVAL;
		return -1;
	}
	if (h->n == h->alloc)
		headers_grow_table(h);
	e = &h->v[h->n++];
	e->name_off = h->store.len;
	e->name_len = nlen;
	h->name_lengths |= header_length_bit(nlen);
	buf_add(&h->store, name, nlen);
	buf_addch(&h->store, '\0');
	e->value_off = h->store.len;
	e->value_len = store_value(&h->store, value, vlen);
	return 0;
}

char *headers_block(struct headers *h, const char *block, size_t len)
{
	char *copy;

	if (buf_avail(&h->store) < len)
		buf_grow(&h->store, len);
	copy = h->store.ptr + h->store.len;
	memcpy(copy, block, len);
	/* What buf_setlen does, spared a call per frame: the store has
	 * room, so the NUL after the block fits. */
	h->store.len += len;
	copy[len] = '\0';
	return copy;
}

void headers_grow_table(struct headers *h)
{
	h->alloc = h->alloc ? h->alloc * 2 : 16;
	h->v = xrealloc(h->v, h->alloc * sizeof(*h->v));
}

static void remove_at(struct headers *h, size_t i)
{
	memmove(h->v + i, h->v + i + 1, (h->n - i - 1) * sizeof(*h->v));
	h->n--;
}

int headers_setn(struct headers *h, const char *name, const char *value,
		 size_t vlen)
{
	size_t nlen = strlen(name);
	long at = headers_find(h, name, nlen);

	if (at < 0)
		return headers_add(h, name, nlen, value, vlen);
	if (in_store(h, name) || in_store(h, value)) {
		char *n = xstrdup(name), *v = xmemdup(value, vlen);
		int r = headers_setn(h, n, v, vlen);
		free(n);
		free(v);
		return r;
	}
	h->v[at].value_off = h->store.len;
	h->v[at].value_len = store_value(&h->store, value, vlen);
	for (size_t i = h->n; i-- > (size_t)at + 1;)
		if (header_name_eq(headers_name(h, i, NULL), h->v[i].name_len,
				   name, nlen))
			remove_at(h, i);
	return 0;
}

int headers_set(struct headers *h, const char *name, const char *value)
{
	return headers_setn(h, name, value, strlen(value));
}

int headers_set_u64(struct headers *h, const char *name, unsigned long long v)
{
	char tmp[24];
	size_t i = sizeof(tmp);

	do {
		tmp[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	return headers_setn(h, name, tmp + i, sizeof(tmp) - i);
}

void headers_set_all(struct headers *dst, const struct headers *src)
{
	for (size_t i = 0; i < headers_count(src); i++) {
		size_t vl;
		const char *v = headers_value(src, i, &vl);

		headers_setn(dst, headers_name(src, i, NULL), v, vl);
	}
}

size_t headers_remove(struct headers *h, const char *name)
{
	size_t nlen = strlen(name), removed = 0;

	for (size_t i = h->n; i-- > 0;)
		if (header_name_eq(headers_name(h, i, NULL), h->v[i].name_len,
				   name, nlen)) {
			remove_at(h, i);
			removed++;
		}
	return removed;
}

int headers_add_line(struct headers *h, const char *line)
{
	const char *colon = strchr(line, ':');

	if (!colon) {
		errno = EINVAL;
		return -1;
	}
	return headers_add(h, line, (size_t)(colon - line), colon + 1,
			   strlen(colon + 1));
}
