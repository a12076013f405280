/* frame-block: a frame's header block parsed into its header list, every
 * line checked, Content-Length and the first Message-Id noted (frame.h). */
#include "frame.h"

#include <string.h>

#include "frame-parts.h"

static int parse_length(const char *v, size_t n, uint64_t *out)
{
	uint64_t x = 0;

	if (n == 0 || n > 19)
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (v[i] < '0' || v[i] > '9')
			return -1;
		x = x * 10 + (uint64_t)(v[i] - '0');
	}
	*out = x;
	return 0;
}

/* The first Message-Id of the block, for errors; copied only once the
 * block has parsed, so a fault inside the block does not name it. */
static void remember_msgid(struct frame_reader *fr, const char *id, size_t n)
{
	if (n >= sizeof(fr->msgid))
		n = sizeof(fr->msgid) - 1;
	memcpy(fr->msgid, id, n);
	fr->msgid[n] = '\0';
}

/*
 * The names nearly every frame has, spelled as the writers spell them,
 * colon included, at s with room bytes left in the block: their length,
 * or 0. Matched whole, their bytes need no look one by one.
 */
static size_t common_name(const char *s, size_t room)
{
#define SPELLED(lit) (room > sizeof(lit) - 1 && !memcmp(s, lit, sizeof(lit) - 1))
	switch (s[0]) {
	case 'M':
		return SPELLED("Message-Id:") ? 10 : 0;
	case 'T':
		return SPELLED("Timestamp:") ? 9 : 0;
	case 'C':
		return SPELLED("Content-Length:") ? 14 : SPELLED("Content-Type:") ? 12 : 0;
	}
	return 0;
#undef SPELLED
}

/* The length of the valid header name that ends in a colon at s, or 0:
 * one pass does what finding the colon and checking the name before it
 * would. The block ends in LF (at end - 1), which no name holds, so the
 * scan needs no bound of its own. */
static size_t valid_name_before_colon(const char *s, const char *end)
{
	size_t i = common_name(s, (size_t)(end - s));

	if (i)
		return i;
	while (header_name_char(s[i]))
		i++;
	return i > 0 && i <= HEADER_NAME_MAX && s[i] == ':' ? i : 0;
}

/* The bytes that end a run of a header value: the LF that ends its line
 * and the bytes a value may not hold (a CR is allowed just before LF). */
static const unsigned char value_stop[256] = { ['\n'] = 1, ['\r'] = 1, ['\0'] = 1 };

/* A line that is not "Name: value": say what is wrong with it. */
static int fail_line(struct frame_reader *fr, uint64_t off, const char *s,
		     const char *end)
{
	const char *nl = memchr(s, '\n', (size_t)(end - s));
	const char *colon = memchr(s, ':', (size_t)(nl - s));

	if (!colon)
		return frame_reader_fail(fr, off, "header line without colon");
	return frame_reader_fail(fr, off, "invalid header name '%.*s'",
				 (int)((colon - s) > 64 ? 64 : colon - s), s);
}

/*
 * Parse the header line at s, in the arena's copy of the block at blk,
 * which ends before end: add it to h and return the start of the next
 * line, or NULL on a fault. In a clean block (no CR, no NUL: the usual
 * one) the value's line ends at the next LF, found by memchr; else each
 * byte of the value is checked.
 */
static char *parse_line(struct frame_reader *fr, const char *blk, char *s,
			const char *end, int clean, size_t line, struct headers *h)
{
	uint64_t off = fr->frame_offset + (uint64_t)(s - blk);
	size_t name_len = valid_name_before_colon(s, end);
	char *v, *e;

	if (!name_len) {
		fail_line(fr, off, s, end);
		return NULL;
	}
	v = s + name_len + 1;
	if (clean) {
		/* No CR or NUL in the block: the line ends at its LF. */
		e = line < fr->lines ? (char *)blk + fr->line_end[line]
				     : memchr(v, '\n', (size_t)(end - v));
	} else {
		e = v;
		while (e < end && !value_stop[(unsigned char)*e])
			e++;
	}
	/* The block ends in LF, so e < end here. */
	if (*e != '\n' && !(*e == '\r' && e + 1 < end && e[1] == '\n')) {
		frame_reader_fail(fr, off, "invalid byte in value of header '%.*s'",
				  (int)name_len, s);
		return NULL;
	}
	s = e + (*e == '\r' ? 2 : 1);
	headers_add_parsed(h, v - name_len - 1, name_len, v, (size_t)(e - v));
	return s;
}

/* What the reader itself needs of a header just parsed: Content-Length,
 * and the first Message-Id (an index: the arena may move). */
static int note_header(struct frame_reader *fr, struct headers *h,
		       uint64_t off, int *have_length, long *msgid_at)
{
	size_t name_len, vlen;
	const char *name = headers_name(h, h->n - 1, &name_len);
	const char *v = headers_value(h, h->n - 1, &vlen);
	uint64_t x;

	if (header_name_eq(name, name_len, "Content-Length", 14)) {
		if (parse_length(v, vlen, &x))
			return frame_reader_fail(fr, off, "invalid Content-Length '%.*s'",
						 (int)(vlen > 64 ? 64 : vlen), v);
		if (*have_length && x != fr->body_len)
			return frame_reader_fail(fr, off, "conflicting Content-Length headers");
		fr->body_len = x;
		*have_length = 1;
	} else if (*msgid_at < 0 &&
		   header_name_eq(name, name_len, "Message-Id", 10)) {
		*msgid_at = (long)h->n - 1;
	}
	return 0;
}

/* Parse the block's len bytes at fr->buf + fr->pos into h, in a copy in
 * h's arena (one copy for the block, none per header). */
int frame_parse_block(struct frame_reader *fr, size_t len, struct headers *h)
{
	const char *src = fr->buf + fr->pos;
	/* Found as the block's end was: most lines need no byte-by-byte look. */
	int clean = fr->block_clean;
	char *blk = headers_block(h, src, len), *s = blk;
	const char *end = blk + len;
	long msgid_at = -1;
	int have_length = 0;
	size_t vlen, line = 0;

	while (s < end && *s != '\n' && !(*s == '\r' && s[1] == '\n')) {
		uint64_t off = fr->frame_offset + (uint64_t)(s - blk);

		s = parse_line(fr, blk, s, end, clean, line++, h);
		if (!s || note_header(fr, h, off, &have_length, &msgid_at) < 0)
			return -1;
	}
	if (msgid_at >= 0) {
		const char *id = headers_value(h, (size_t)msgid_at, &vlen);
		remember_msgid(fr, id, vlen);
	} else {
		remember_msgid(fr, "", 0);
	}
	if (!have_length)
		return frame_reader_fail(fr, fr->frame_offset, "missing Content-Length");
	return 0;
}

