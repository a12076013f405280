/*
 * aggregate-record: the aggregator's state as store records, written as
 * it changes and read back after a restart (the kinds and their bytes
 * are described in aggregate.h).
 */
#include "aggregate.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void agg_member_key(struct buf *out, const char *key, size_t key_len,
		    uint64_t serial)
{
	buf_reset(out);
	buf_add(out, key, key_len);
	buf_addch(out, '\0');
	/* Big-endian, so the store's byte order is arrival order. */
	for (int shift = 56; shift >= 0; shift -= 8)
		buf_addch(out, (int)(serial >> shift) & 0xff);
}

size_t agg_group_records(const struct agg_group *g)
{
	return g->n + (g->marker != 0);
}

void agg_group_record_key(struct buf *out, const struct agg_group *g, size_t i)
{
	agg_member_key(out, g->key, g->key_len,
		       i < g->n ? g->m[i].serial : g->marker);
}

/* "ARRIVAL\n", the header lines, a blank line, the body. */
void agg_member_value(struct buf *out, const struct agg_input *in)
{
	buf_reset(out);
	buf_addf(out, "%lld\n", (long long)in->now);
	for (size_t i = 0; i < headers_count(in->h); i++) {
		size_t nl, vl;
		const char *n = headers_name(in->h, i, &nl);
		const char *v = headers_value(in->h, i, &vl);
		buf_add(out, n, nl);
		buf_add(out, ": ", 2);
		buf_add(out, v, vl);
		buf_addch(out, '\n');
	}
	buf_addch(out, '\n');
	buf_add(out, in->body, in->len);
}

/* A decimal int64 at p ending at '\n' (or at end): its end, or NULL. */
static const char *read_ms(const char *p, const char *end, int64_t *ms)
{
	const char *nl = memchr(p, '\n', (size_t)(end - p));
	char num[24], *stop;
	size_t n;

	if (!nl || (n = (size_t)(nl - p)) == 0 || n >= sizeof(num))
		return NULL;
	memcpy(num, p, n);
	num[n] = '\0';
	errno = 0;
	*ms = strtoll(num, &stop, 10);
	if (errno || *stop)
		return NULL;
	return nl + 1;
}

static const char *read_headers(const char *p, const char *end,
				struct headers *h)
{
	struct buf line = BUF_INIT;

	while (p < end && *p != '\n') {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl)
			break;
		buf_reset(&line);
		buf_add(&line, p, (size_t)(nl - p));
		if (memchr(line.ptr, '\0', line.len) ||
		    headers_add_line(h, line.ptr) < 0)
			break;
		p = nl + 1;
	}
	buf_release(&line);
	return p < end && *p == '\n' ? p + 1 : NULL;
}

int agg_member_decode(const char *key, size_t key_len, const char *value,
		      size_t value_len, struct agg_input *in, struct headers *h)
{
	const char *p = value, *end = value + value_len;

	memset(in, 0, sizeof(*in));
	headers_reset(h);
	if (key_len < 10 || key[key_len - 9] != '\0')
		goto damaged;
	in->key = key;
	in->key_len = key_len - 9;
	for (size_t i = key_len - 8; i < key_len; i++)
		in->serial = in->serial << 8 | (unsigned char)key[i];
	if (!in->serial || !(p = read_ms(p, end, &in->now)) ||
	    !(p = read_headers(p, end, h)))
		goto damaged;
	in->h = h;
	in->best = NAN;
	in->body = p;
	in->len = (size_t)(end - p);
	return 0;
damaged:
	errno = EINVAL;
	return -1;
}

void agg_closed_value(struct buf *out, int64_t closed_at)
{
	buf_reset(out);
	buf_addf(out, "%lld", (long long)closed_at);
}

int agg_closed_decode(const char *value, size_t value_len, int64_t *closed_at)
{
	struct buf v = BUF_INIT;
	const char *end;
	int r;

	buf_add(&v, value, value_len);
	buf_addch(&v, '\n');
	end = read_ms(v.ptr, v.ptr + v.len, closed_at);
	r = end == v.ptr + v.len ? 0 : -1;
	buf_release(&v);
	if (r < 0)
		errno = EINVAL;
	return r;
}
