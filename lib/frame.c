/* frame: streaming reader and locking writer of the message frame. */
#include "frame.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "diag.h"
#include "io.h"
#include "spool.h"

#define READ_CHUNK (256 * 1024)

static const char raw_hint[] = "; not a message stream; wrap raw data with msg-wrap";

static int starts_like_frame(const char *p, size_t n);
#define WRITE_FLUSH_AT (64 * 1024)
/* The least of an Error text kept before the message's own headers go. */
#define ERROR_KEEP_MIN 64

/* ---- reader ---- */

void frame_reader_init(struct frame_reader *fr, int fd, const char *name)
{
	memset(fr, 0, sizeof(*fr));
	fr->fd = fd;
	fr->may_wait = io_read_may_wait(fd);
	fr->name = xstrdup(name);
	fr->cap = READ_CHUNK + FRAME_HEADER_MAX;
	fr->buf = xmalloc(fr->cap);
	buf_init(&fr->err, 0);
}

void frame_reader_release(struct frame_reader *fr)
{
	free(fr->name);
	free(fr->buf);
	buf_release(&fr->err);
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

/* Read more input after buf[end]; keeps buf[pos..end). 1, 0 at EOF, -1. */
static int fill(struct frame_reader *fr)
{
	ssize_t r;

	if (fr->eof)
		return 0;
	if (fr->pos == fr->end) {
		fr->base += fr->pos;
		fr->pos = fr->end = 0;
	} else if (fr->cap - fr->end < READ_CHUNK / 4) {
		memmove(fr->buf, fr->buf + fr->pos, fr->end - fr->pos);
		fr->base += fr->pos;
		fr->end -= fr->pos;
		fr->pos = 0;
	}
	if (fr->end == fr->cap)
		return 1;	/* full: caller's limit check decides */
	/* A message must never sit in an output buffer while we wait. */
	if (fr->may_wait)
		frame_writers_flush_all();
	for (;;) {
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
static int find_block_end(struct frame_reader *fr, size_t *block_len)
{
	/* Both relative to pos, so they survive fill() moving the data. */
	size_t scanned = 0, line_start = 0;

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

static void remember_msgid(struct frame_reader *fr, const struct headers *h)
{
	const char *id = headers_get(h, "Message-Id");
	size_t n = id ? strlen(id) : 0;

	if (n >= sizeof(fr->msgid))
		n = sizeof(fr->msgid) - 1;
	memcpy(fr->msgid, id ? id : "", n);
	fr->msgid[n] = '\0';
}

static int parse_block(struct frame_reader *fr, const char *s, size_t len,
		       struct headers *h)
{
	const char *end = s + len;
	int have_length = 0;

	while (s < end) {
		const char *nl = memchr(s, '\n', (size_t)(end - s));
		size_t n = (size_t)(nl - s);
		uint64_t off = fr->base + (uint64_t)(s - fr->buf);
		const char *colon;

		if (n && s[n - 1] == '\r')
			n--;
		if (n == 0)
			break;
		colon = memchr(s, ':', n);
		if (!colon)
			return fail(fr, off, "header line without colon");
		if (!header_name_valid(s, (size_t)(colon - s)))
			return fail(fr, off, "invalid header name '%.*s'",
				    (int)((colon - s) > 64 ? 64 : colon - s), s);
		if (memchr(colon, '\0', n - (size_t)(colon - s)) ||
		    memchr(colon, '\r', n - (size_t)(colon - s)))
			return fail(fr, off, "invalid byte in value of header '%.*s'",
				    (int)(colon - s), s);
		headers_add_checked(h, s, (size_t)(colon - s), colon + 1,
				    n - (size_t)(colon - s) - 1);
		if (header_name_eq(s, (size_t)(colon - s), "Content-Length", 14)) {
			size_t vi = h->n - 1;
			size_t vlen;
			const char *v = headers_value(h, vi, &vlen);
			uint64_t x;

			if (parse_length(v, vlen, &x))
				return fail(fr, off, "invalid Content-Length '%.*s'",
					    (int)(vlen > 64 ? 64 : vlen), v);
			if (have_length && x != fr->body_len)
				return fail(fr, off, "conflicting Content-Length headers");
			fr->body_len = x;
			have_length = 1;
		}
		s = nl + 1;
	}
	remember_msgid(fr, h);
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
	if (parse_block(fr, fr->buf + fr->pos, block_len, h) < 0)
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
		buf_grow(out, (size_t)(fr->body_len < READ_CHUNK ? fr->body_len : READ_CHUNK));
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

/* ---- writer ---- */

static struct frame_writer *writers;
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

void frame_writer_init(struct frame_writer *fw, int fd, const char *name)
{
	struct stat st;

	memset(fw, 0, sizeof(*fw));
	fw->fd = fd;
	fw->name = xstrdup(name);
	buf_init(&fw->out, WRITE_FLUSH_AT * 2);
	fw->lock = fstat(fd, &st) == 0 && (S_ISFIFO(st.st_mode) ||
					   S_ISREG(st.st_mode));
	fw->next_registered = writers;
	writers = fw;
}

void frame_writer_init_spool(struct frame_writer *fw, struct spool *sp,
			     const char *name)
{
	frame_writer_init(fw, -1, name);
	fw->lock = 0;	/* nobody else writes our temporary files */
	fw->spool = sp;
}

void frame_writer_release(struct frame_writer *fw)
{
	struct frame_writer **pp;

	for (pp = &writers; *pp; pp = &(*pp)->next_registered)
		if (*pp == fw) {
			*pp = fw->next_registered;
			break;
		}
	free(fw->name);
	buf_release(&fw->out);
	fw->name = NULL;
	spool_close(fw->spool);
	fw->spool = NULL;
}

static int set_failed(struct frame_writer *fw, int err)
{
	fw->err = err;
	errno = err;
	return -1;
}

/*
 * POSIX record locks, not flock(2): flock locks belong to the open file
 * description, which writers started from one shell pipeline share (they
 * inherit one stdout), so they would not keep each other out. Record locks
 * belong to the process, whichever way the descriptor was obtained.
 */
static int lock_whole(int fd, short type, int wait)
{
	struct flock fl = { .l_type = type, .l_whence = SEEK_SET };
	int r;

	do
		r = fcntl(fd, wait ? F_SETLKW : F_SETLK, &fl);
	while (r < 0 && errno == EINTR);
	return r;
}

static int unlock(struct frame_writer *fw)
{
	if (fw->locked) {
		lock_whole(fw->fd, F_UNLCK, 0);
		fw->locked = 0;
	}
	return 0;
}

static int write_out(struct frame_writer *fw, const void *p, size_t n)
{
	if (fw->lock && !fw->locked) {
		int r = lock_whole(fw->fd, F_WRLCK, 1);
		/* Descriptors that cannot be locked are written unlocked. */
		fw->locked = r == 0;
		if (r < 0)
			fw->lock = 0;
	}
	if (write_all(fw->fd, p, n) < 0) {
		int err = errno;
		unlock(fw);
		return set_failed(fw, err);
	}
	return 0;
}

/* Large pieces go straight out, without a copy through the buffer. */
static int write_direct(struct frame_writer *fw, const void *p, size_t n)
{
	if (frame_writer_flush(fw) < 0 || write_out(fw, p, n) < 0)
		return -1;
	if (!fw->in_frame)
		unlock(fw);
	return 0;
}

int frame_writer_flush(struct frame_writer *fw)
{
	if (fw->err) {
		errno = fw->err;
		return -1;
	}
	if (fw->out.len) {
		if (write_out(fw, fw->out.ptr, fw->out.len) < 0)
			return -1;
		buf_reset(&fw->out);
	}
	fw->frame_start = 0;
	if (!fw->in_frame)
		unlock(fw);
	return 0;
}

/* A spool writer's committed messages into new/, durably (spool.h). */
static int publish(struct frame_writer *fw)
{
	if (!fw->spool || fw->err)
		return fw->err ? -1 : 0;
	if (spool_publish(fw->spool) < 0)
		return set_failed(fw, errno);
	return 0;
}

void frame_writers_flush_whole(void)
{
	for (struct frame_writer *fw = writers; fw; fw = fw->next_registered) {
		if (fw->err)
			continue;
		if (fw->in_frame) {
			/* Keep the whole frames before the open one. */
			buf_setlen(&fw->out, fw->frame_start);
			fw->in_frame = 0;
			if (fw->spool) {
				spool_abort(fw->spool);
				fw->fd = -1;
			}
		}
		if (frame_writer_flush(fw) == 0)
			publish(fw);
	}
}

/* Write the whole frames buffered before an open one, keeping the open
 * frame's start: a frame is written out once it is known whole, unless it
 * outgrows the buffer. */
static int flush_ready(struct frame_writer *fw)
{
	size_t ready = fw->frame_start;

	if (fw->spool)	/* its open frame is a file of its own */
		return publish(fw);
	if (!fw->in_frame)
		return frame_writer_flush(fw);
	if (fw->err) {
		errno = fw->err;
		return -1;
	}
	if (!ready)
		return 0;
	if (write_out(fw, fw->out.ptr, ready) < 0)
		return -1;
	memmove(fw->out.ptr, fw->out.ptr + ready, fw->out.len - ready);
	buf_setlen(&fw->out, fw->out.len - ready);
	fw->frame_start = 0;
	/* None of the open frame went out: others may write meanwhile. */
	unlock(fw);
	return 0;
}

struct frame_writer *frame_writers_failed(void)
{
	for (struct frame_writer *fw = writers; fw; fw = fw->next_registered)
		if (fw->err && !fw->tolerated)
			return fw;
	return NULL;
}

int frame_writers_flush_all(void)
{
	int r = 0;

	for (struct frame_writer *fw = writers; fw; fw = fw->next_registered)
		if (flush_ready(fw) < 0 && !fw->tolerated)
			r = -1;
	return r;
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
	const char *line = NULL;
	size_t longest = 0;

	frame_format_header(&block, h, body_len);
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

static int begin_checks(struct frame_writer *fw)
{
	if (fw->err) {
		errno = fw->err;
		return -1;
	}
	if (fw->in_frame)
		die(EX_SOFTWARE, "frame_writer_begin inside a frame on '%s'", fw->name);
	return 0;
}

/* A spool writer starts a new file for every frame. */
static int begin_file(struct frame_writer *fw)
{
	if (fw->spool && (fw->fd = spool_begin(fw->spool)) < 0)
		return set_failed(fw, errno);
	return 0;
}

int frame_writer_begin(struct frame_writer *fw, const struct headers *h,
		       uint64_t body_len)
{
	size_t start = fw->out.len;

	if (begin_checks(fw) < 0)
		return -1;
	frame_format_header(&fw->out, h, body_len);
	/* A block no reader would take is refused here, for this message
	 * only: the writer stays healthy. */
	if (fw->out.len - start > FRAME_HEADER_MAX) {
		buf_setlen(&fw->out, start);
		errno = EMSGSIZE;
		return -1;
	}
	if (begin_file(fw) < 0) {
		buf_setlen(&fw->out, start);
		return -1;
	}
	fw->frame_start = start;
	fw->in_frame = 1;
	fw->body_left = body_len;
	return 0;
}

int frame_writer_begin_raw(struct frame_writer *fw, const char *block,
			   size_t n, uint64_t body_len)
{
	if (begin_checks(fw) < 0 || begin_file(fw) < 0)
		return -1;
	fw->frame_start = fw->out.len;
	buf_add(&fw->out, block, n);
	fw->in_frame = 1;
	fw->body_left = body_len;
	return 0;
}

int frame_writer_body(struct frame_writer *fw, const void *p, size_t n)
{
	if (fw->err) {
		errno = fw->err;
		return -1;
	}
	if (!fw->in_frame || n > fw->body_left)
		die(EX_SOFTWARE, "body longer than its Content-Length on '%s'",
		    fw->name);
	fw->body_left -= n;
	if (n >= WRITE_FLUSH_AT)
		return write_direct(fw, p, n);
	buf_add(&fw->out, p, n);
	if (fw->out.len >= WRITE_FLUSH_AT)
		return frame_writer_flush(fw);
	return 0;
}

int frame_writer_end(struct frame_writer *fw)
{
	if (fw->err) {
		errno = fw->err;
		return -1;
	}
	if (!fw->in_frame || fw->body_left)
		die(EX_SOFTWARE, "body shorter than its Content-Length on '%s'",
		    fw->name);
	buf_addch(&fw->out, '\n');
	fw->in_frame = 0;
	fw->frames++;
	if (fw->spool) {
		/* Whole and durable in new/, or not there at all. */
		if (frame_writer_flush(fw) < 0) {
			spool_abort(fw->spool);
			fw->fd = -1;
			return -1;
		}
		fw->fd = -1;
		if (spool_commit(fw->spool) < 0)
			return set_failed(fw, errno);
		return 0;
	}
	if (fw->out.len >= WRITE_FLUSH_AT || fw->locked)
		return frame_writer_flush(fw);
	return 0;
}

int frame_writer_write(struct frame_writer *fw, const struct headers *h,
		       const void *body, size_t len)
{
	if (frame_writer_begin(fw, h, len) < 0 ||
	    frame_writer_body(fw, body, len) < 0)
		return -1;
	return frame_writer_end(fw);
}

int frame_writer_raw(struct frame_writer *fw, const void *p, size_t n)
{
	if (fw->err) {
		errno = fw->err;
		return -1;
	}
	if (fw->spool) {
		/* A spool holds messages only. */
		return set_failed(fw, EINVAL);
	}
	if (n >= WRITE_FLUSH_AT)
		return write_direct(fw, p, n);
	buf_add(&fw->out, p, n);
	if (fw->out.len >= WRITE_FLUSH_AT)
		return frame_writer_flush(fw);
	return 0;
}

int frame_writer_whole(struct frame_writer *fw, const char *frame, size_t n)
{
	if (!fw->spool)
		return frame_writer_raw(fw, frame, n);
	if (begin_checks(fw) < 0 || begin_file(fw) < 0)
		return -1;
	if (write_all(fw->fd, frame, n) < 0) {
		int err = errno;
		spool_abort(fw->spool);
		fw->fd = -1;
		return set_failed(fw, err);
	}
	fw->fd = -1;
	if (spool_commit(fw->spool) < 0)
		return set_failed(fw, errno);
	fw->frames++;
	return 0;
}

int frame_writer_close(struct frame_writer *fw)
{
	int r = frame_writer_flush(fw);
	int err;

	if (r == 0)
		r = publish(fw);
	err = errno;

	if (fw->fd >= 0) {
		if (fw->owns_fd && close(fw->fd) < 0 && r == 0) {
			err = errno;
			r = set_failed(fw, err);
		}
		fw->fd = -1;
	}
	errno = err;
	return r;
}
