/* frame-format: the header block as writers write it, and the limit on
 * its size that every reader enforces (frame.h). */
#include "frame.h"

#include <stdlib.h>
#include <string.h>

/* The least of an Error text kept before the message's own headers go. */
#define ERROR_KEEP_MIN 64

static const char *history_name;
static int history_checked;

static const char *history(void)
{
	if (!history_checked) {
		const char *v = getenv("MSG_HISTORY");
		history_checked = 1;
		/* A value that cannot be a header value is ignored, not written. */
		if (v && *v && !strpbrk(v, "\r\n"))
			history_name = v;
	}
	return history_name;
}

static void add_header(struct buf *o, const char *n, size_t nl,
		       const char *v, size_t vl)
{
	buf_grow(o, nl + vl + 3);
	memcpy(o->ptr + o->len, n, nl);
	o->ptr[o->len + nl] = ':';
	o->ptr[o->len + nl + 1] = ' ';
	memcpy(o->ptr + o->len + nl + 2, v, vl);
	o->ptr[o->len + nl + 2 + vl] = '\n';
	buf_setlen(o, o->len + nl + vl + 3);
}

int frame_history_on(void)
{
	return history() != NULL;
}

void frame_format_header(struct buf *out, const struct headers *h,
			 uint64_t body_len)
{
	const char *hist = history();
	int hist_done = 0;

	for (size_t i = 0; i < headers_count(h); i++) {
		size_t nl, vl;
		const char *n = headers_name(h, i, &nl);
		const char *v = headers_value(h, i, &vl);

		if (header_name_eq(n, nl, "Content-Length", 14))
			continue;
		if (hist && header_name_eq(n, nl, "Message-History", 15)) {
			if (hist_done)
				continue;
			add_header(out, n, nl, v, vl);
			out->len--;	/* reopen the line to append */
			if (vl)
				buf_addstr(out, ", ");
			buf_addstr(out, hist);
			buf_addch(out, '\n');
			hist_done = 1;
			continue;
		}
		add_header(out, n, nl, v, vl);
	}
	if (hist && !hist_done)
		add_header(out, "Message-History", 15, hist, strlen(hist));
	buf_addstr(out, "Content-Length: ");
	buf_addu64(out, body_len);
	buf_add(out, "\n\n", 2);
}

size_t frame_header_size(const struct headers *h, uint64_t body_len)
{
	struct buf block = BUF_INIT;
	size_t n;

	frame_format_header(&block, h, body_len);
	n = block.len;
	buf_release(&block);
	return n;
}

void frame_header_too_big(struct buf *why, const struct headers *h,
			  uint64_t body_len)
{
	struct buf block = BUF_INIT;
	const char *line;
	size_t longest = 0;

	frame_format_header(&block, h, body_len);
	/* The block always has a line: Content-Length is written last. */
	line = block.ptr;
	/* Name the longest line: the header that does not fit. */
	for (const char *p = block.ptr, *end = block.ptr + block.len; p < end;) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		if ((size_t)(nl - p) > longest) {
			longest = (size_t)(nl - p);
			line = p;
		}
		p = nl + 1;
	}
	buf_addf(why, "header block over 64 KiB (%zu bytes): header '%.*s' is %zu bytes",
		 block.len, (int)(strchr(line, ':') - line), line, longest);
	buf_release(&block);
}

/* The header (Error aside) with the longest value, or -1. */
static long longest_header(const struct headers *h)
{
	long best = -1;
	size_t best_len = 0;

	for (size_t i = 0; i < headers_count(h); i++) {
		size_t nl, vl;
		const char *n = headers_name(h, i, &nl);

		headers_value(h, i, &vl);
		if (!header_name_eq(n, nl, "Error", 5) && (best < 0 || vl > best_len)) {
			best = (long)i;
			best_len = vl;
		}
	}
	return best;
}

void frame_set_error(struct headers *h, uint64_t body_len, const char *text)
{
	struct buf error = BUF_INIT, dropped = BUF_INIT;
	size_t full = strlen(text), keep = full, size;

	for (;;) {
		buf_reset(&error);
		buf_add(&error, text, keep);
		if (keep < full)
			buf_addstr(&error, "...");
		buf_add(&error, dropped.ptr, dropped.len);
		headers_set(h, "Error", error.ptr);
		size = frame_header_size(h, body_len);
		if (size <= FRAME_HEADER_MAX)
			break;
		if (keep > size - FRAME_HEADER_MAX + ERROR_KEEP_MIN) {
			/* Cut the text, never inside a UTF-8 sequence. */
			keep -= size - FRAME_HEADER_MAX + (keep < full ? 0 : 3);
			while (keep && (text[keep] & 0xc0) == 0x80)
				keep--;
			continue;
		}
		/* Even a short reason leaves no room: the message's own
		 * headers are too big, so the longest goes, named. */
		long i = longest_header(h);
		size_t nl, vl;
		const char *name;

		if (i < 0)
			break;	/* only $MSG_HISTORY is left: no writer can */
		name = headers_name(h, (size_t)i, &nl);
		headers_value(h, (size_t)i, &vl);
		buf_addf(&dropped, "; header '%.*s' of %zu bytes dropped", (int)nl,
			 name, vl);
		headers_remove(h, name);
		keep = full;
	}
	buf_release(&error);
	buf_release(&dropped);
}


/* The name of the header line at p (up to its colon), or 0 if none. */
static size_t line_name(const char *p, const char *end)
{
	const char *colon = memchr(p, ':', (size_t)(end - p));

	return colon ? (size_t)(colon - p) : 0;
}

void frame_block_set(struct buf *out, const char *block, size_t n,
		     const char *name, const char *value)
{
	const char *p = block, *end = block + n;
	size_t name_len = strlen(name);
	int placed = 0;

	buf_reset(out);
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *next = nl ? nl + 1 : end;
		size_t nlen = line_name(p, next);

		/* Before Content-Length, as a writer puts new headers, or
		 * before the blank line that ends the block. */
		if (!placed && (p + 1 == next || *p == '\r' ||
				header_name_eq(p, nlen, "Content-Length", 14))) {
			buf_addf(out, "%s: %s\n", name, value);
			placed = 1;
		}
		if (!header_name_eq(p, nlen, name, name_len))
			buf_add(out, p, (size_t)(next - p));
		p = next;
	}
}
