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
#include "linescan.h"
#include "sizes.h"
#include "frame-parts.h"
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

void frame_reader_init_mem(struct frame_reader *fr, const char *p, size_t n,
			   const char *name)
{
	memset(fr, 0, sizeof(*fr));
	fr->fd = -1;
	fr->name = xstrdup(name);
	/* Never written: the end of input is here, so fill() never moves
	 * or reads into it. */
	fr->buf = (char *)p;
	fr->borrowed = 1;
	fr->cap = fr->end = n;
	fr->eof = 1;
	buf_init(&fr->err, 0);
	buf_init(&fr->ahead, 0);
}

void frame_reader_release(struct frame_reader *fr)
{
	free(fr->name);
	if (!fr->borrowed)
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

int frame_reader_fail(struct frame_reader *fr, uint64_t offset, const char *fmt, ...)
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
		/* Asked to stop: between frames that is the end of input;
		 * inside one, the frame is finished first, by plain reads. */
		if (r < 0 && errno == EINTR) {
			if (!fr->in_body && fr->pos == fr->end) {
				fr->eof = 1;
				return 0;
			}
			r = 0;
		}
		if (r == 0)
			r = xread(fr->fd, fr->buf + fr->end, fr->cap - fr->end);
		if (r >= 0 || errno != EINTR)
			break;
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

/*
 * The LF at s[i] ends a line that began at *line_start: 1 when that line
 * is the blank one that ends the block, else 0 (its end noted).
 */
static int line_ended(struct frame_reader *fr, const char *s, size_t i,
		      size_t *line_start)
{
	size_t line_len = i + 1 - *line_start;

	if (line_len == 1 || (line_len == 2 && s[*line_start] == '\r'))
		return 1;
	/* A line may end in a later read: only a LF starts one. */
	*line_start = i + 1;
	if (fr->lines < LINE_ENDS && i < FRAME_HEADER_MAX)
		fr->line_end[fr->lines++] = (uint16_t)i;
	return 0;
}

static int find_block_end(struct frame_reader *fr, size_t *block_len)
{
	/* Both relative to pos, so they survive fill() moving the data. */
	size_t scanned = 0, line_start = 0;
	unsigned cr_nul = 0;	/* a CR or NUL was seen in the block */

	fr->lines = 0;

	for (;;) {
		const char *s = fr->buf + fr->pos;
		size_t avail = fr->end - fr->pos;

		while (scanned < avail) {
			size_t width = avail - scanned < LINESCAN_WIDTH ?
					       avail - scanned : LINESCAN_WIDTH;
			struct linescan m = linescan(s + scanned, width);

			for (unsigned lf = m.lf; lf; lf &= lf - 1) {
				unsigned bit = (unsigned)__builtin_ctz(lf);
				size_t i = scanned + bit;

				if (!line_ended(fr, s, i, &line_start))
					continue;
				if (i + 1 > FRAME_HEADER_MAX)
					return frame_reader_fail(fr, fr->base + fr->pos,
								 "header block over 64 KiB");
				fr->block_clean =
					!(cr_nul | linescan_through(m.cr_nul, bit));
				*block_len = i + 1;
				return 1;
			}
			cr_nul |= m.cr_nul;
			scanned += width;
		}
		if (scanned > FRAME_HEADER_MAX)
			return frame_reader_fail(fr, fr->base + fr->pos,
						 "header block over 64 KiB");
		int r = fill(fr);
		if (r < 0)
			return -1;
		if (r == 0) {
			if (fr->pos == fr->end)
				return 0;
			msgid_from_partial(fr);
			return frame_reader_fail(fr, fr->base + fr->end,
						 "truncated frame: end of input in the header block");
		}
	}
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
	if (frame_parse_block(fr, block_len, h) < 0)
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

	return frame_reader_fail(fr, fr->base + fr->end,
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
			return frame_reader_fail(fr, fr->base + fr->pos,
						 "truncated frame: end of input before the LF that ends the frame");
	}
	if (fr->buf[fr->pos] != '\n')
		return frame_reader_fail(fr, fr->base + fr->pos,
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
				return frame_reader_fail(fr, fr->base + fr->end,
							 "truncated frame: end of input before the LF that ends the frame");
		}
		if (avail > fr->body_left &&
		    fr->buf[fr->pos + fr->body_left] != '\n')
			return frame_reader_fail(fr, fr->base + fr->pos + fr->body_left,
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

/*
 * The block is kept in the buffer while the rest of the frame is read
 * (pos is moved back over it, as fill() keeps buf[pos..end)); a frame
 * that is not all there is left to frame_reader_chunk, which says what
 * is wrong with it, at the same offset as for any other reader.
 */
int frame_reader_whole(struct frame_reader *fr, const char **p, size_t *n)
{
	size_t need, start;
	int r = 1;

	if (!fr->in_body || fr->body_left != fr->body_len ||
	    fr->body_len >= fr->cap - fr->block_len)
		return 0;
	need = fr->block_len + (size_t)fr->body_len + 1;
	fr->pos -= fr->block_len;
	while (fr->end - fr->pos < need && r > 0)
		r = fill(fr);
	start = fr->pos;
	fr->pos += fr->block_len;
	if (r < 0)
		return -1;
	if (fr->end - start < need || fr->buf[start + need - 1] != '\n')
		return 0;
	*p = fr->buf + start;
	*n = need;
	fr->pos = start + need;
	fr->body_left = 0;
	fr->in_body = 0;
	return 1;
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

