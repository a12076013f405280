/* frame-read: the streaming reader of the message frame (frame.h). */
#include "frame.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "diag.h"
#include "io.h"
#include "sizes.h"
#include "timer.h"

static const char raw_hint[] = "; not a message stream; wrap raw data with msg-wrap";

static int starts_like_frame(const char *p, size_t n);

void frame_reader_init(struct frame_reader *fr, int fd, const char *name)
{
	memset(fr, 0, sizeof(*fr));
	fr->fd = fd;
	fr->may_wait = io_read_may_wait(fd);
	fr->name = xstrdup(name);
	fr->cap = IO_CHUNK + FRAME_HEADER_MAX;
	fr->buf = xmalloc(fr->cap);
	buf_init(&fr->err, 0);
	buf_init(&fr->ahead, 0);
}

void frame_reader_release(struct frame_reader *fr)
{
	free(fr->name);
	free(fr->buf);
	buf_release(&fr->err);
	buf_release(&fr->ahead);
	memset(fr, 0, sizeof(*fr));
	fr->fd = -1;
}

int frame_reader_exit_code(const struct frame_reader *fr)
{
	return fr->err_kind == FRAME_ERR_IO ? EX_IOERR : EX_DATAERR;
}

__attribute__((format(printf, 3, 4)))
static int fail(struct frame_reader *fr, uint64_t offset, const char *fmt, ...)
{
	va_list ap;

	buf_reset(&fr->err);
	buf_addf(&fr->err, "%s: offset %llu: ", fr->name,
		 (unsigned long long)offset);
	va_start(ap, fmt);
	buf_vaddf(&fr->err, fmt, ap);
	va_end(ap);
	/* Raw data where the first frame should start: say what to do. */
	if (fr->frames == 0 && fr->base + fr->pos == 0 &&
	    !starts_like_frame(fr->buf + fr->pos, fr->end - fr->pos))
		buf_addstr(&fr->err, raw_hint);
	if (fr->msgid[0])
		buf_addf(&fr->err, " (Message-Id %s)", fr->msgid);
	fr->err_kind = FRAME_ERR_FORMAT;
	fr->in_body = 0;
	return -1;
}

static int fail_io(struct frame_reader *fr)
{
	buf_reset(&fr->err);
	buf_addf(&fr->err, "cannot read '%s': %s", fr->name, strerror(errno));
	fr->err_kind = FRAME_ERR_IO;
	fr->in_body = 0;
	return -1;
}

/* Move what was read ahead into buf[end...]: 1 if anything was there,
 * else 0, or where the read ahead ended: -1 for its error (errno), 0
 * with eof set for an end of input. */
static int take_ahead(struct frame_reader *fr, int *r)
{
	size_t held = fr->ahead.len - fr->ahead_pos, n = fr->cap - fr->end;

	if (held) {
		if (n > held)
			n = held;
		memcpy(fr->buf + fr->end, fr->ahead.ptr + fr->ahead_pos, n);
		fr->end += n;
		fr->ahead_pos += n;
		if (fr->ahead_pos == fr->ahead.len) {
			/* What a burst needed is not kept for good. */
			buf_release(&fr->ahead);
			fr->ahead_pos = 0;
		}
		*r = 1;
		return 1;
	}
	if (fr->ahead_err) {
		errno = fr->ahead_err;
		*r = fail_io(fr);
		return 1;
	}
	if (fr->ahead_eof) {
		fr->eof = 1;
		*r = 0;
		return 1;
	}
	return 0;
}

int frame_reader_read_ahead(struct frame_reader *fr, size_t max)
{
	size_t held = fr->ahead.len - fr->ahead_pos, want;
	ssize_t r;

	if (fr->eof || fr->ahead_eof || fr->ahead_err || held >= max)
		return 0;
	want = max - held < IO_CHUNK ? max - held : IO_CHUNK;
	buf_grow(&fr->ahead, want);
	r = xread(fr->fd, fr->ahead.ptr + fr->ahead.len, want);
	if (r < 0 && errno == EINTR)
		return 1;	/* a stop asked for: nothing read, look again */
	if (r < 0)
		fr->ahead_err = errno;
	else if (r == 0)
		fr->ahead_eof = 1;
	else
		buf_setlen(&fr->ahead, fr->ahead.len + (size_t)r);
	return r > 0;
}

/* Read more input after buf[end]; keeps buf[pos..end). 1, 0 at EOF, -1. */
static int fill(struct frame_reader *fr)
{
	ssize_t r;
	int taken;

	if (fr->eof)
		return 0;
	if (fr->pos == fr->end) {
		fr->base += fr->pos;
		fr->pos = fr->end = 0;
	} else if (fr->cap - fr->end < IO_CHUNK / 4) {
		memmove(fr->buf, fr->buf + fr->pos, fr->end - fr->pos);
		fr->base += fr->pos;
		fr->end -= fr->pos;
		fr->pos = 0;
	}
	if (fr->end == fr->cap)
		return 1;	/* full: caller's limit check decides */
	if (take_ahead(fr, &taken))
		return taken;
	/* A message must never sit in an output buffer while we wait. */
	if (fr->may_wait && fr->before_wait)
		fr->before_wait(fr->before_wait_arg);
	else if (fr->may_wait)
		frame_writers_flush_all();
	/* Asked to stop while the batch ended before a wait (msg-exec waits
	 * for its children there): between frames of a stream, that is the
	 * end of input. A file that holds its message whole is read whole. */
	if (fr->may_wait && io_stop_requested && !fr->in_body && fr->pos == fr->end) {
		fr->eof = 1;
		return 0;
	}
	for (;;) {
		/* A tool's timers run while it waits (timer.h). */
		r = fr->may_wait ? timer_wait_readable(fr->fd) : 0;
		if (r == 0)
			r = xread(fr->fd, fr->buf + fr->end, fr->cap - fr->end);
		if (r >= 0 || errno != EINTR)
			break;
		/* Asked to stop: between frames that is the end of input;
		 * inside one, the frame is finished first. */
		if (!fr->in_body && fr->pos == fr->end) {
			fr->eof = 1;
			return 0;
		}
	}
	if (r < 0)
		return fail_io(fr);
	if (r == 0) {
		fr->eof = 1;
		return 0;
	}
	fr->end += (size_t)r;
	return 1;
}

/* Does the first line look like a header ("Name:")? */
static int starts_like_frame(const char *p, size_t n)
{
	const char *nl = memchr(p, '\n', n);
	const char *colon = memchr(p, ':', nl ? (size_t)(nl - p) : n);

	return !frame_looks_raw(p, n) && colon &&
	       header_name_valid(p, (size_t)(colon - p));
}

int frame_looks_raw(const char *p, size_t n)
{
	size_t i = 0;

	if (n >= 3 && !memcmp(p, "\xef\xbb\xbf", 3))
		return 1;
	while (i < n && (p[i] == ' ' || p[i] == '\t' || p[i] == '\r' ||
			 p[i] == '\n'))
		i++;
	return i < n && (p[i] == '<' || p[i] == '{' || p[i] == '[' ||
			 p[i] == '"');
}

/* A header block cut short may still have named its message. */
static void msgid_from_partial(struct frame_reader *fr)
{
	const char *p = fr->buf + fr->pos, *end = fr->buf + fr->end;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n;

		if (!nl)
			break;
		n = (size_t)(nl - p);
		if (n > 11 && !strncasecmp(p, "Message-Id:", 11)) {
			const char *v = p + 11, *e = nl;
			while (v < e && (*v == ' ' || *v == '\t'))
				v++;
			while (e > v && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
				e--;
			n = (size_t)(e - v) < sizeof(fr->msgid) - 1 ? (size_t)(e - v)
								     : sizeof(fr->msgid) - 1;
			memcpy(fr->msgid, v, n);
			fr->msgid[n] = '\0';
			return;
		}
		p = nl + 1;
	}
}

/* Find the end of the header block: returns its length incl. the blank line. */
#define LINE_ENDS (sizeof(((struct frame_reader *)0)->line_end) / sizeof(uint16_t))

static int find_block_end(struct frame_reader *fr, size_t *block_len)
{
	/* Both relative to pos, so they survive fill() moving the data. */
	size_t scanned = 0, line_start = 0;

	fr->lines = 0;

	for (;;) {
		const char *s = fr->buf + fr->pos;
		size_t avail = fr->end - fr->pos;

		while (scanned < avail) {
			const char *nl = memchr(s + scanned, '\n', avail - scanned);
			size_t line_len;

			if (!nl) {
				scanned = avail;
				break;
			}
			scanned = (size_t)(nl - s) + 1;
			line_len = scanned - line_start;
			if (line_len == 1 ||
			    (line_len == 2 && s[line_start] == '\r')) {
				if (scanned > FRAME_HEADER_MAX)
					break;
				*block_len = scanned;
				return 1;
			}
			/* A line may end in a later read: only a LF starts one. */
			line_start = scanned;
			if (fr->lines < LINE_ENDS && scanned <= FRAME_HEADER_MAX)
				fr->line_end[fr->lines++] = (uint16_t)(scanned - 1);
		}
		if (scanned > FRAME_HEADER_MAX)
			return fail(fr, fr->base + fr->pos,
				    "header block over 64 KiB");
		int r = fill(fr);
		if (r < 0)
			return -1;
		if (r == 0) {
			if (fr->pos == fr->end)
				return 0;
			msgid_from_partial(fr);
			return fail(fr, fr->base + fr->end,
				    "truncated frame: end of input in the header block");
		}
	}
}

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
		return fail(fr, off, "header line without colon");
	return fail(fr, off, "invalid header name '%.*s'",
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
		fail(fr, off, "invalid byte in value of header '%.*s'",
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
			return fail(fr, off, "invalid Content-Length '%.*s'",
				    (int)(vlen > 64 ? 64 : vlen), v);
		if (*have_length && x != fr->body_len)
			return fail(fr, off, "conflicting Content-Length headers");
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
static int parse_block(struct frame_reader *fr, size_t len, struct headers *h)
{
	const char *src = fr->buf + fr->pos;
	/* Two scans of the whole block spare most lines a byte-by-byte one. */
	int clean = !memchr(src, '\r', len) && !memchr(src, '\0', len);
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
		return fail(fr, fr->frame_offset, "missing Content-Length");
	return 0;
}

int frame_reader_next(struct frame_reader *fr, struct headers *h)
{
	size_t block_len = 0;
	int r;

	headers_reset(h);
	if (fr->in_body && frame_reader_skip(fr) < 0)
		return -1;
	fr->msgid[0] = '\0';
	fr->frame_offset = fr->base + fr->pos;
	r = find_block_end(fr, &block_len);
	if (r <= 0)
		return r;
	fr->frame_offset = fr->base + fr->pos;
	if (parse_block(fr, block_len, h) < 0)
		return -1;
	fr->pos += block_len;
	fr->block_len = block_len;
	fr->body_left = fr->body_len;
	fr->in_body = 1;
	fr->frames++;
	return 1;
}

/* End of input inside the body: count what did arrive, read or not. */
static int truncated_body(struct frame_reader *fr)
{
	uint64_t got = fr->body_len - fr->body_left + (fr->end - fr->pos);

	return fail(fr, fr->base + fr->end,
		    "truncated frame: end of input after %llu of %llu body bytes",
		    (unsigned long long)got, (unsigned long long)fr->body_len);
}

/* After the body: exactly one LF. */
static int finish_body(struct frame_reader *fr)
{
	if (fr->pos == fr->end) {
		int r = fill(fr);
		if (r < 0)
			return -1;
		if (r == 0)
			return fail(fr, fr->base + fr->pos,
				    "truncated frame: end of input before the LF that ends the frame");
	}
	if (fr->buf[fr->pos] != '\n')
		return fail(fr, fr->base + fr->pos,
			    "Content-Length mismatch: byte after the %llu-byte body is not LF",
			    (unsigned long long)fr->body_len);
	fr->pos++;
	fr->in_body = 0;
	return 0;
}

int frame_reader_chunk(struct frame_reader *fr, const char **p, size_t *n)
{
	size_t avail;

	if (!fr->in_body)
		return 0;
	if (fr->body_left == 0)
		return finish_body(fr) < 0 ? -1 : 0;
	/*
	 * Read ahead while the rest of the frame could still fit the buffer:
	 * a frame that fits is then handed out only once it is known whole,
	 * so a truncated one emits nothing of its body.
	 */
	if (fr->pos == fr->end) {
		int r = fill(fr);
		if (r < 0)
			return -1;
		if (r == 0)
			return truncated_body(fr);
	}
	while (fr->end - fr->pos <= fr->body_left && fr->end < fr->cap && !fr->eof) {
		int r = fill(fr);
		if (r < 0)
			return -1;
		if (r == 0)
			break;
	}
	avail = fr->end - fr->pos;
	if (avail < fr->body_left && fr->eof)
		return truncated_body(fr);
	if (avail >= fr->body_left) {
		/*
		 * The rest of the body is here: check the LF after it before
		 * handing the last piece out, so a tool emits nothing of a
		 * frame whose length is wrong (when the frame fits the buffer).
		 */
		if (avail == fr->body_left) {
			int r = fill(fr);
			if (r < 0)
				return -1;
			avail = fr->end - fr->pos;
			if (r == 0 && avail == fr->body_left)
				return fail(fr, fr->base + fr->end,
					    "truncated frame: end of input before the LF that ends the frame");
		}
		if (avail > fr->body_left &&
		    fr->buf[fr->pos + fr->body_left] != '\n')
			return fail(fr, fr->base + fr->pos + fr->body_left,
				    "Content-Length mismatch: byte after the %llu-byte body is not LF",
				    (unsigned long long)fr->body_len);
		avail = (size_t)fr->body_left;
	}
	*p = fr->buf + fr->pos;
	*n = avail;
	fr->pos += avail;
	fr->body_left -= avail;
	return 1;
}

int frame_reader_body(struct frame_reader *fr, struct buf *out)
{
	const char *p;
	size_t n;
	int r;

	buf_reset(out);
	/* Reserve no more than a read's worth: the length is only a claim
	 * until the bytes arrive. */
	if (fr->in_body && fr->body_left == fr->body_len)
		buf_grow(out, (size_t)(fr->body_len < IO_CHUNK ? fr->body_len : IO_CHUNK));
	while ((r = frame_reader_chunk(fr, &p, &n)) > 0)
		buf_add(out, p, n);
	return r;
}

void frame_reader_header_block(const struct frame_reader *fr, const char **p,
			       size_t *n)
{
	*p = fr->buf + fr->pos - fr->block_len;
	*n = fr->block_len;
}

int frame_reader_skip(struct frame_reader *fr)
{
	const char *p;
	size_t n;
	int r;

	while ((r = frame_reader_chunk(fr, &p, &n)) > 0)
		;
	return r;
}

