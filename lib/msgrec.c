/* msgrec: a message as the bytes a stateful tool keeps (msgrec.h). */
#include "msgrec.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* out reset to "ARRIVAL\n" (printf is slow for a million of these). */
static void start(struct buf *out, int64_t arrived)
{
	buf_reset(out);
	if (arrived < 0)
		buf_addch(out, '-');
	buf_addu64(out, arrived < 0 ? -(unsigned long long)arrived :
		   (unsigned long long)arrived);
	buf_addch(out, '\n');
}

void msgrec_encode(struct buf *out, int64_t arrived, const struct headers *h,
		   const void *body, size_t len)
{
	start(out, arrived);
	for (size_t i = 0; i < headers_count(h); i++) {
		size_t nl, vl;
		const char *n = headers_name(h, i, &nl);
		const char *v = headers_value(h, i, &vl);
		buf_add(out, n, nl);
		buf_add(out, ": ", 2);
		buf_add(out, v, vl);
		buf_addch(out, '\n');
	}
	buf_addch(out, '\n');
	buf_add(out, body, len);
}

void msgrec_encode_block(struct buf *out, int64_t arrived, const char *block,
			 size_t block_len, const void *body, size_t len)
{
	start(out, arrived);
	buf_add(out, block, block_len);
	buf_add(out, body, len);
}

const char *msgrec_read_ms(const char *p, const char *end, int64_t *ms)
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

	while (p < end && *p != '\n' && !(*p == '\r' && p + 1 < end && p[1] == '\n')) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl)
			break;
		buf_reset(&line);
		/* A block as read may end its lines in CRLF. */
		buf_add(&line, p, (size_t)(nl - p) - (nl > p && nl[-1] == '\r'));
		if (memchr(line.ptr, '\0', line.len) ||
		    headers_add_line(h, line.ptr) < 0)
			break;
		p = nl + 1;
	}
	buf_release(&line);
	if (p < end && *p == '\r')
		p++;
	return p < end && *p == '\n' ? p + 1 : NULL;
}

/* The end of the header block starting at p: just after its blank line
 * ("\n", or "\r\n" in a block read with CRLF), or NULL. */
static const char *block_end(const char *p, const char *end)
{
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl)
			return NULL;
		if (nl == p || (nl == p + 1 && *p == '\r'))
			return nl + 1;
		p = nl + 1;
	}
	return NULL;
}

int msgrec_split(const char *rec, size_t len, int64_t *arrived,
		 const char **block, size_t *block_len, const char **body,
		 size_t *body_len)
{
	const char *end = rec + len, *p = msgrec_read_ms(rec, end, arrived), *q;

	if (!p || p == end)
		goto damaged;
	/* The block ends at its blank line. */
	if (!(q = block_end(p, end)))
		goto damaged;
	*block = p;
	*block_len = (size_t)(q - p);
	*body = q;
	*body_len = (size_t)(end - q);
	return 0;
damaged:
	errno = EINVAL;
	return -1;
}

int msgrec_parse_block(const char *block, size_t n, struct headers *h)
{
	headers_reset(h);
	if (read_headers(block, block + n, h) != block + n) {
		errno = EINVAL;
		return -1;
	}
	return 0;
}

int msgrec_decode(const char *rec, size_t len, int64_t *arrived,
		  struct headers *h, const char **body, size_t *body_len)
{
	const char *p = rec, *end = rec + len;

	headers_reset(h);
	if (!(p = msgrec_read_ms(p, end, arrived)) || !(p = read_headers(p, end, h))) {
		errno = EINVAL;
		return -1;
	}
	*body = p;
	*body_len = (size_t)(end - p);
	return 0;
}

void msgrec_key(struct buf *out, const char *key, size_t key_len, uint64_t n)
{
	buf_reset(out);
	buf_add(out, key, key_len);
	buf_addch(out, '\0');
	for (int shift = 56; shift >= 0; shift -= 8)
		buf_addch(out, (int)(n >> shift) & 0xff);
}

int msgrec_key_decode(const char *key, size_t len, size_t *key_len,
		      uint64_t *n)
{
	if (len < 9 || key[len - 9] != '\0') {
		errno = EINVAL;
		return -1;
	}
	*key_len = len - 9;
	*n = 0;
	for (size_t i = len - 8; i < len; i++)
		*n = *n << 8 | (unsigned char)key[i];
	return 0;
}
