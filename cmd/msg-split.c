/* msg-split: the Splitter; one message in, its parts out as a sequence. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "diag.h"
#include "io.h"
#include "sizes.h"
#include "message.h"
#include "splitter.h"
#include "tool.h"

static const char usage[] =
	"usage: msg-split -x xpath | -j pointer | -l | -d regex [-g count] [-r]\n"
	"                 [-H name=expr] ... [--empty drop|marker|invalid]\n"
	"                 [--keep-delimiter] [--no-stream] [--ns prefix=uri]\n"
	"                 [--output channel] [--invalid channel] [--dead-letter channel]\n"
	"                 [--once] [--stats] [input ...]\n"
	"       msg-split -r ... [--include glob] [--exclude glob] [--max-files n]\n"
	"                 [--recursive] [--settle duration] [--done-marker suffix]\n"
	"                 [--done dir] [--failed dir] [--idempotent [--remember duration]]\n"
	"                 inbox:dir ...";

static struct splitter_config cfg = { .group = 1, .empty = EMPTY_MARKER };
static int mode_set, raw;
static struct splitter *splitter;

static struct tool_counter counters[] = {
	{ "in", 0 }, { "out", 0 }, { "invalid", 0 }, { "empty", 0 }, { "expired", 0 },
	{ NULL, 0 },
};
enum { C_IN, C_OUT, C_INVALID, C_EMPTY };

enum { OPT_EMPTY = 0x100, OPT_KEEP, OPT_NO_STREAM };

static const struct option longopts[] = {
	{ "xpath", required_argument, NULL, 'x' },
	{ "json", required_argument, NULL, 'j' },
	{ "lines", no_argument, NULL, 'l' },
	{ "delimiter", required_argument, NULL, 'd' },
	{ "keep-delimiter", no_argument, NULL, OPT_KEEP },
	{ "group", required_argument, NULL, 'g' },
	{ "header", required_argument, NULL, 'H' },
	{ "raw", no_argument, NULL, 'r' },
	{ "empty", required_argument, NULL, OPT_EMPTY },
	{ "no-stream", no_argument, NULL, OPT_NO_STREAM },
	{ NULL, 0, NULL, 0 },
};

static void set_mode(struct tool *t, enum split_mode m)
{
	if (mode_set)
		tool_usage_error(t, "-x, -j, -l and -d cannot be combined");
	mode_set = 1;
	cfg.mode = m;
}

static int option(struct tool *t, int c, const char *arg)
{
	char *end;

	switch (c) {
	case 'x': set_mode(t, SPLIT_XPATH); cfg.xpath = arg; return 0;
	case 'j': set_mode(t, SPLIT_JSON); cfg.pointer = arg; return 0;
	case 'l': set_mode(t, SPLIT_LINES); return 0;
	case 'd': set_mode(t, SPLIT_REGEX); cfg.regex = arg; return 0;
	case OPT_KEEP: cfg.keep_delimiter = 1; return 0;
	case 'r': raw = cfg.raw_documents = 1; return 0;
	case OPT_NO_STREAM: cfg.no_stream = 1; return 0;
	case 'g':
		errno = 0;
		cfg.group = strtoul(arg, &end, 10);
		if (errno || *end || !*arg || cfg.group == 0 || *arg == '-')
			tool_usage_error(t, "invalid group size '%s'", arg);
		return 0;
	case OPT_EMPTY:
		if (!strcmp(arg, "marker")) cfg.empty = EMPTY_MARKER;
		else if (!strcmp(arg, "drop")) cfg.empty = EMPTY_DROP;
		else if (!strcmp(arg, "invalid")) cfg.empty = EMPTY_INVALID;
		else tool_usage_error(t, "--empty takes drop, marker or invalid, not '%s'", arg);
		return 0;
	case 'H': {
		const char *eq = strchr(arg, '=');
		if (!eq || !header_name_valid(arg, (size_t)(eq - arg)) || !eq[1])
			tool_usage_error(t, "invalid header '%s' (want NAME=EXPR)", arg);
		cfg.headers = xrealloc(cfg.headers, (cfg.nheaders + 1) * sizeof(*cfg.headers));
		cfg.headers[cfg.nheaders].name = xmemdup(arg, (size_t)(eq - arg));
		cfg.headers[cfg.nheaders].expr = eq + 1;
		cfg.nheaders++;
		return 0;
	}
	}
	return -1;
}

/* The parent, named by its place in the input and its Message-Id. */
static void name_parent(struct tool *t, const char *raw_name, struct headers *h,
			struct buf *where)
{
	const char *id = headers_get(h, "Message-Id");

	if (t->current)
		buf_addf(where, "%s: message %llu", t->current->name,
			 (unsigned long long)t->current->frames);
	else
		buf_addstr(where, raw_name);
	if (id)
		buf_addf(where, " (Message-Id %s)", id);
}

/* What one parent's split came to: count it, or end the tool. */
static void account(struct tool *t, enum split_result r, uint64_t written,
		    struct frame_reader *fr, const char *raw_name, struct headers *h,
		    struct buf *err)
{
	struct buf where = BUF_INIT;

	counters[C_OUT].n += written;
	switch (r) {
	case SPLIT_OK:
		return;
	case SPLIT_SOURCE_FAILED:
		if (fr)
			tool_reader_failed(fr);
		die_errno(EX_IOERR, "cannot read input");
	case SPLIT_WRITE_FAILED:
		tool_writer_failed(t->out);
	case SPLIT_INVALID_WRITE_FAILED:
		tool_writer_failed(t->invalid);
	case SPLIT_TEMP_CREATE_FAILED:
		die_errno(EX_CANTCREAT, "%s", err->ptr);
	case SPLIT_TEMP_IO_FAILED:
		die_errno(EX_IOERR, "%s", err->ptr);
	case SPLIT_NO_MEMORY:
		/* The machine's fault: a dir: input keeps the parent. */
		name_parent(t, raw_name, h, &where);
		die(EX_SOFTWARE, "%s: %s", where.ptr, err->ptr);
	case SPLIT_INVALID:
		counters[C_INVALID].n++;
		if (!t->invalid) {
			name_parent(t, raw_name, h, &where);
			tool_refuse("%s: %s", where.ptr, err->ptr);
			buf_release(&where);
			return;
		}
		tool_warn_diverted(t, h, err->ptr);
		return;
	}
}

static int frame_next(void *arg, const char **p, size_t *n)
{
	return frame_reader_chunk(arg, p, n);
}

static int split_frame(struct tool *t, struct frame_reader *fr, struct headers *h)
{
	struct body_source src = { frame_next, fr, frame_reader_body_length(fr) };
	struct buf err = BUF_INIT;
	uint64_t written;
	enum split_result r;

	counters[C_IN].n++;
	r = splitter_run(splitter, h, &src, t->out, t->invalid, &written, &err);
	account(t, r, written, fr, NULL, h, &err);
	buf_release(&err);
	return 0;
}

/* -r: a raw document, read from its descriptor as it comes. */
struct raw_source {
	int fd;
	char *buf;
	size_t n;
	int peeked;
};

static int raw_next(void *arg, const char **p, size_t *n)
{
	struct raw_source *rs = arg;
	ssize_t r;

	if (rs->peeked) {
		rs->peeked = 0;
		if (rs->n) {
			*p = rs->buf;
			*n = rs->n;
			return 1;
		}
		return 0;
	}
	r = xread(rs->fd, rs->buf, IO_CHUNK);
	if (r <= 0)
		return (int)r;
	*p = rs->buf;
	*n = (size_t)r;
	return 1;
}

static const char *raw_type(const struct raw_source *rs)
{
	if (cfg.mode == SPLIT_JSON)
		return "application/json";
	if (cfg.mode != SPLIT_XPATH)
		return "text/plain";
	return message_body_start(rs->buf, rs->n) == STARTS_JSON
		       ? "application/json" : "application/xml";
}

static void split_raw(struct tool *t, int fd, const char *name,
		      const struct headers *file_headers)
{
	struct raw_source rs = { fd, xmalloc(IO_CHUNK), 0, 1 };
	struct body_source src = { raw_next, &rs, 0 };
	struct headers h = HEADERS_INIT;
	struct buf err = BUF_INIT;
	struct stat st;
	uint64_t written;
	enum split_result result;
	ssize_t r;

	r = xread(rs.fd, rs.buf, IO_CHUNK);
	if (r < 0)
		die_errno(EX_IOERR, "cannot read '%s'", name);
	rs.n = (size_t)r;
	/* The length is only a hint, but 0 must mean an empty document. */
	if (fstat(rs.fd, &st) == 0 && S_ISREG(st.st_mode))
		src.length = (uint64_t)st.st_size;
	else
		src.length = rs.n ? UINT64_MAX : 0;
	counters[C_IN].n++;
	message_stamp(&h);
	if (file_headers)
		headers_set_all(&h, file_headers);
	headers_set(&h, "Content-Type", raw_type(&rs));
	/* written is set by the run: read it only after. */
	result = splitter_run(splitter, &h, &src, t->out, t->invalid, &written, &err);
	account(t, result, written, NULL, name, &h, &err);
	free(rs.buf);
	headers_release(&h);
	buf_release(&err);
}

int main(int argc, char **argv)
{
	struct tool t = {
		.usage = usage,
		.shortopts = "x:j:ld:g:H:r",
		.longopts = longopts,
		.common = TOOL_OPT_OUTPUT | TOOL_OPT_INVALID | TOOL_OPT_DEAD_LETTER |
			  TOOL_OPT_NS | TOOL_OPT_STATS | TOOL_EXPIRES | TOOL_OPT_INBOX,
		.option = option,
		.counters = counters,
	};
	struct buf err = BUF_INIT;
	int first;

	tool_init(&t, argc, argv);
	first = tool_parse(&t, argc, argv);
	if (!mode_set)
		tool_usage_error(&t, "one of -x, -j, -l or -d is required");
	if (cfg.keep_delimiter && cfg.mode != SPLIT_REGEX)
		tool_usage_error(&t, "--keep-delimiter needs -d");
	cfg.ns = t.ns;
	cfg.nns = t.nns;
	splitter = splitter_new(&cfg, &err);
	if (!splitter)
		die(EX_USAGE, "%s", err.ptr);
	tool_open_outputs(&t);
	if (raw) {
		tool_each_raw(&t, argc - first, argv + first, split_raw);
	} else {
		tool_each_frame(&t, argc - first, argv + first, split_frame);
	}
	counters[C_EMPTY].n = splitter_empty_count(splitter);
	tool_finish(&t);
	splitter_free(splitter);
	buf_release(&err);
	return tool_inputs_status();
}
