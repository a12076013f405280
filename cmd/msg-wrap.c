/* msg-wrap: raw data (files, lines, JSON envelopes) to framed messages. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "diag.h"
#include "envelope.h"
#include "frame.h"
#include "io.h"
#include "sizes.h"
#include "message.h"
#include "mimetypes.h"
#include "rawin.h"
#include "stamp.h"
#include "tool.h"

static const char usage[] =
	"usage: msg-wrap [-l | -e] [-t type] [-H 'name: value'] ... [--output channel]\n"
	"                [--invalid channel] [--once] [--stats] [file ...]\n"
	"       msg-wrap ... [--include glob] [--exclude glob] [--max-files n]\n"
	"                [--recursive] [--settle duration] [--done-marker suffix]\n"
	"                [--done dir] [--failed dir] [--idempotent [--remember duration]]\n"
	"                inbox:dir ...";

enum mode { MODE_FILE, MODE_LINES, MODE_ENVELOPE };

static struct {
	enum mode mode;
	const char *type;
	struct headers extra;	/* from -H, applied last */
} opt;

static struct tool_counter counters[] = {
	{ "in", 0 }, { "out", 0 }, { "invalid", 0 }, { NULL, 0 },
};
enum { C_IN, C_OUT };

static const struct option longopts[] = {
	{ "lines", no_argument, NULL, 'l' },
	{ "envelope", no_argument, NULL, 'e' },
	{ "type", required_argument, NULL, 't' },
	{ "header", required_argument, NULL, 'H' },
	{ NULL, 0, NULL, 0 },
};

static int option(struct tool *t, int c, const char *arg)
{
	switch (c) {
	case 'l':
	case 'e':
		if (opt.mode != MODE_FILE)
			tool_usage_error(t, "-l and -e cannot be combined");
		opt.mode = c == 'l' ? MODE_LINES : MODE_ENVELOPE;
		return 0;
	case 't':
		if (!*arg || strpbrk(arg, "\r\n"))
			tool_usage_error(t, "invalid content type '%s'", arg);
		opt.type = arg;
		return 0;
	case 'H':
		if (headers_add_line(&opt.extra, arg) < 0)
			tool_usage_error(t, "invalid header '%s' (want 'Name: value')", arg);
		return 0;
	}
	return -1;
}

/* Stamp (as made at now), type and -H headers for one new message. */
static void finish_headers(struct headers *h, const char *type, int64_t now)
{
	const char *id = headers_get(h, "Message-Id");
	const char *ts = headers_get(h, "Timestamp");

	/* An envelope may bring its own id or time: keep what it brings. */
	if (!id || !*id || !ts || !*ts) {
		struct headers fresh = HEADERS_INIT;
		message_stamp_at(&fresh, now);
		if (!id || !*id)
			headers_set(h, "Message-Id", headers_get(&fresh, "Message-Id"));
		if (!ts || !*ts)
			headers_set(h, "Timestamp", headers_get(&fresh, "Timestamp"));
		headers_release(&fresh);
	}
	if (!headers_get(h, "Content-Type"))
		headers_set(h, "Content-Type", opt.type ? opt.type : type);
	/* -H replaces a header of the same name; given twice, both stay. */
	for (size_t i = 0; i < headers_count(&opt.extra); i++)
		headers_remove(h, headers_name(&opt.extra, i, NULL));
	for (size_t i = 0; i < headers_count(&opt.extra); i++) {
		size_t nl, vl;
		const char *n = headers_name(&opt.extra, i, &nl);
		const char *v = headers_value(&opt.extra, i, &vl);
		headers_add(h, n, nl, v, vl);
	}
}

/* Where the data comes from: a name for diagnostics, and what the
 * messages say of its file (File-Name...; NULL for stdin). */
struct input {
	const char *name;
	const struct headers *file_headers;
};

static void file_name_header(struct headers *h, const struct input *in)
{
	if (in->file_headers)
		headers_set_all(h, in->file_headers);
}

/*
 * A message whose header block would be over the limit (an envelope's
 * header, -H, history) is invalid: what it was made from goes to
 * --invalid under only the headers msg-wrap gives raw data.
 */
static void plain_headers(struct headers *plain, const struct headers *h)
{
	static const char *const kept[] = {
		"Message-Id", "Timestamp", "File-Name", "File-Path",
		"File-Size", "File-Mtime", "Content-Type",
	};

	headers_reset(plain);
	for (size_t i = 0; i < sizeof(kept) / sizeof(kept[0]); i++) {
		const char *v = headers_get(h, kept[i]);
		if (v)
			headers_set(plain, kept[i], v);
	}
}

/* Where a message came from, for its diagnostic: "NAME[: line N]: ". */
static void where(struct buf *out, const struct input *in,
		  unsigned long long lineno)
{
	buf_reset(out);
	buf_addstr(out, in->name);
	if (lineno)
		buf_addf(out, ": line %llu", lineno);
	buf_addstr(out, ": ");
}

/* One message made from a line: raw is the line (the message's body
 * for -l, the envelope for -e). */
static void emit(struct tool *t, struct headers *h, const char *body, size_t n,
		 const struct input *in, unsigned long long lineno,
		 const char *raw, size_t raw_len)
{
	struct headers plain = HEADERS_INIT;
	struct buf why = BUF_INIT, at = BUF_INIT;

	/* Where it came from is formatted only for a message refused: a
	 * message written costs no formatting and no allocation. */
	if (tool_write(t->out, h, body, n, &why) == 0) {
		counters[C_OUT].n++;
		return;
	}
	where(&at, in, lineno);
	plain_headers(&plain, h);
	if (opt.mode == MODE_ENVELOPE)
		headers_set(&plain, "Content-Type", "application/json");
	tool_invalid(t, &plain, raw, raw_len, "%s%s", at.ptr, why.ptr);
	headers_release(&plain);
	buf_release(&at);
	buf_release(&why);
}

/* The body of the frame begun on fw, and its end. */
static void copy_body(struct raw_input *ri, struct frame_writer *fw)
{
	struct buf err = BUF_INIT;
	int write_failed;

	if (raw_input_copy(ri, fw, &err, &write_failed) < 0) {
		if (write_failed)
			tool_writer_failed(fw);
		die(EX_IOERR, "%s", err.ptr);
	}
	if (frame_writer_end(fw) < 0)
		tool_writer_failed(fw);
	buf_release(&err);
}

/* A file's name says what it holds; without a known extension (or a
 * name, for stdin), the body does. */
static const char *whole_type(struct raw_input *ri, const struct input *in)
{
	const char *file = in->file_headers ? headers_get(in->file_headers, "File-Name")
					    : NULL;
	const char *type = file ? mimetypes_by_name(file) : NULL;

	return type ? type : raw_input_type(ri);
}

/* The whole input is one message. */
static void wrap_whole(struct tool *t, int fd, const struct input *in)
{
	struct raw_input ri;
	struct buf err = BUF_INIT;
	struct headers h = HEADERS_INIT;

	if (raw_input_open(&ri, fd, in->name, &err) < 0)
		die(EX_IOERR, "%s", err.ptr);
	counters[C_IN].n++;
	headers_reset(&h);
	message_stamp(&h);
	file_name_header(&h, in);
	finish_headers(&h, whole_type(&ri, in), clock_now_ms());
	if (frame_writer_begin(t->out, &h, ri.len) == 0) {
		copy_body(&ri, t->out);
		counters[C_OUT].n++;
	} else if (errno == EMSGSIZE) {
		struct headers plain = HEADERS_INIT;
		struct buf why = BUF_INIT;

		where(&why, in, 0);
		frame_header_too_big(&why, &h, ri.len);
		plain_headers(&plain, &h);
		if (tool_invalid_begin(t, &plain, ri.len, "%s", why.ptr))
			copy_body(&ri, t->invalid);
		headers_release(&plain);
		buf_release(&why);
	} else {
		tool_writer_failed(t->out);
	}
	raw_input_release(&ri);
	headers_release(&h);
	buf_release(&err);
}

/*
 * Calls fn for each LF-terminated line (without its LF) and for a last
 * line without one. Lines are handed out from a buffer that grows only
 * when a single line is longer than it. The lines of one read are made
 * at the time of that read: one clock read per read, not per message.
 */
typedef void (*line_fn)(struct tool *t, const char *p, size_t n,
			const struct input *in, unsigned long long lineno,
			int64_t now);

static void each_line(struct tool *t, int fd, const struct input *in, line_fn fn)
{
	struct buf buf = BUF_INIT;
	size_t start = 0, scanned = 0;
	unsigned long long lineno = 0;
	int may_wait = io_read_may_wait(fd);
	int64_t now = 0;
	ssize_t r;

	buf_grow(&buf, IO_CHUNK);
	for (;;) {
		char *nl = memchr(buf.ptr + scanned, '\n', buf.len - scanned);
		if (nl) {
			fn(t, buf.ptr + start, (size_t)(nl - buf.ptr) - start, in, ++lineno,
			   now);
			start = scanned = (size_t)(nl - buf.ptr) + 1;
			continue;
		}
		/* Move the partial line to the front, then read more. */
		memmove(buf.ptr, buf.ptr + start, buf.len - start);
		buf_setlen(&buf, buf.len - start);
		scanned = buf.len;
		start = 0;
		/* Reads smaller than this would cost calls: double. */
		if (buf_avail(&buf) < IO_CHUNK / 4)
			buf_grow(&buf, buf.cap);
		if (may_wait)	/* nothing waits in a buffer while we do */
			frame_writers_flush_all();
		r = xread(fd, buf.ptr + buf.len, buf_avail(&buf));
		if (r < 0)
			die_errno(EX_IOERR, "cannot read '%s'", in->name);
		if (r == 0)
			break;
		now = clock_now_ms();
		buf_setlen(&buf, buf.len + (size_t)r);
	}
	if (buf.len)
		fn(t, buf.ptr, buf.len, in, ++lineno, now);
	buf_release(&buf);
}

static struct headers line_headers = HEADERS_INIT;

/* The headers of a message made from a line of in at now. */
static void line_message_headers(struct headers *h, const struct input *in,
				 const char *type, int64_t now)
{
	headers_reset(h);
	message_stamp_at(h, now);
	file_name_header(h, in);
	finish_headers(h, type, now);
}

/*
 * The lines of one input differ only in id, time, length and type, so
 * their header block is made once per type (stamp.h). A block that
 * cannot be made so (Message-History, -H over the stamp, a block near
 * the limit) leaves that type to the general path.
 */
#define LINE_TYPES 4	/* as many as message_detect_type tells apart */

static struct {
	size_t n;
	struct {
		const char *type;
		int usable;
		struct stamp_block block;
	} kind[LINE_TYPES];
	struct buf formatted;
} line_blocks;

static void line_blocks_reset(void)
{
	for (size_t i = 0; i < line_blocks.n; i++)
		stamp_block_release(&line_blocks.kind[i].block);
	line_blocks.n = 0;
}

static struct stamp_block *line_block(const struct input *in, const char *type,
				      int64_t now)
{
	size_t i;

	for (i = 0; i < line_blocks.n; i++)
		if (line_blocks.kind[i].type == type ||
		    !strcmp(line_blocks.kind[i].type, type))
			break;
	if (i == LINE_TYPES)
		return NULL;
	if (i == line_blocks.n) {
		struct stamp_block fresh = STAMP_BLOCK_INIT;

		line_message_headers(&line_headers, in, type, now);
		line_blocks.kind[i].type = type;
		line_blocks.kind[i].block = fresh;
		line_blocks.kind[i].usable =
			stamp_block_set(&line_blocks.kind[i].block, &line_headers) == 0;
		line_blocks.n++;
	}
	return line_blocks.kind[i].usable ? &line_blocks.kind[i].block : NULL;
}

static void wrap_line(struct tool *t, const char *p, size_t n,
		      const struct input *in, unsigned long long lineno,
		      int64_t now)
{
	const char *type = opt.type ? opt.type : message_detect_type(p, n, NULL, 0);
	struct stamp_block *block = line_block(in, type, now);

	counters[C_IN].n++;
	if (block) {
		struct buf *b = &line_blocks.formatted;

		buf_reset(b);
		stamp_block_format(block, now, n, b);
		if (frame_writer_begin_raw(t->out, b->ptr, b->len, n) < 0 ||
		    frame_writer_body(t->out, p, n) < 0 || frame_writer_end(t->out) < 0)
			tool_writer_failed(t->out);
		counters[C_OUT].n++;
		return;
	}
	line_message_headers(&line_headers, in, type, now);
	emit(t, &line_headers, p, n, in, lineno, p, n);
}

static struct buf envelope_body = BUF_INIT;

static void wrap_envelope(struct tool *t, const char *p, size_t n,
			  const struct input *in, unsigned long long lineno,
			  int64_t now)
{
	struct buf err = BUF_INIT;
	size_t i = 0;

	while (i < n && (p[i] == ' ' || p[i] == '\t' || p[i] == '\r'))
		i++;
	if (i == n)
		return;		/* blank lines separate nothing */
	counters[C_IN].n++;
	headers_reset(&line_headers);
	if (envelope_parse(p, n, &line_headers, &envelope_body, &err) < 0) {
		/* The line itself becomes the invalid message. */
		headers_reset(&line_headers);
		message_stamp_at(&line_headers, now);
		file_name_header(&line_headers, in);
		headers_set(&line_headers, "Content-Type", "application/json");
		tool_invalid(t, &line_headers, p, n, "%s: line %llu: invalid envelope: %s",
			     in->name, lineno, err.ptr);
		buf_release(&err);
		return;
	}
	finish_headers(&line_headers,
		       message_detect_type(envelope_body.ptr, envelope_body.len, NULL, 0),
		       now);
	emit(t, &line_headers, envelope_body.ptr, envelope_body.len, in, lineno,
	     p, n);
}

static void wrap_input(struct tool *t, int fd, const char *name,
		       const struct headers *file_headers)
{
	struct input in = { name, file_headers };

	switch (opt.mode) {
	case MODE_FILE:
		wrap_whole(t, fd, &in);
		break;
	case MODE_LINES:
		line_blocks_reset();	/* the blocks hold this input's File- headers */
		each_line(t, fd, &in, wrap_line);
		break;
	case MODE_ENVELOPE:
		each_line(t, fd, &in, wrap_envelope);
		break;
	}
}

int main(int argc, char **argv)
{
	struct tool t = {
		.usage = usage,
		.shortopts = "leH:t:",
		.longopts = longopts,
		.common = TOOL_OPT_OUTPUT | TOOL_OPT_INVALID | TOOL_OPT_STATS |
			  TOOL_OPT_INBOX,
		.option = option,
		.counters = counters,
	};
	int first;

	headers_init(&opt.extra);
	tool_init(&t, argc, argv);
	first = tool_parse(&t, argc, argv);
	if (frame_header_size(&opt.extra, 0) > FRAME_HEADER_MAX) {
		struct buf why = BUF_INIT;
		frame_header_too_big(&why, &opt.extra, 0);
		tool_usage_error(&t, "-H: %s", why.ptr);
	}
	tool_open_outputs(&t);
	tool_each_raw(&t, argc - first, argv + first, wrap_input);
	tool_finish(&t);
	headers_release(&opt.extra);
	headers_release(&line_headers);
	line_blocks_reset();
	buf_release(&line_blocks.formatted);
	buf_release(&envelope_body);
	return tool_inputs_status();
}
