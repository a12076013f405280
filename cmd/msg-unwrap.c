/* msg-unwrap: framed messages to raw data, files or JSON envelopes. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "diag.h"
#include "envelope.h"
#include "frame.h"
#include "io.h"
#include "nametemplate.h"
#include "outbox.h"
#include "safefile.h"
#include "tool.h"

static const char usage[] =
	"usage: msg-unwrap [-s separator] [--output channel] [input ...]\n"
	"       msg-unwrap -d dir [-n template] [--exists suffix|fail|skip|replace]\n"
	"                  [--mode mode] [--done-marker suffix] [--invalid channel] [input ...]\n"
	"       msg-unwrap -e | -H [--output channel] [input ...]\n"
	"       (and [--dead-letter channel] [--once] [--stats] with any)";

enum mode { MODE_BODIES, MODE_DIR, MODE_ENVELOPE, MODE_HEADERS };

static struct {
	enum mode mode;
	struct buf separator;
	const char *dir;
	const char *name_template;
	struct outbox outbox;
	enum outbox_exists exists;
	const char *mode_arg;
	const char *done_marker;
} opt = { .separator = BUF_INIT };

static struct tool_counter counters[] = {
	{ "in", 0 }, { "out", 0 }, { "invalid", 0 }, { "expired", 0 },
	/* With -d only: */
	{ "skipped", 0 }, { "syncs", 0 }, { NULL, 0 },
};
enum { C_IN, C_OUT, C_INVALID, C_EXPIRED, C_SKIPPED, C_SYNCS };

enum { OPT_EXISTS = 256, OPT_MODE, OPT_DONE_MARKER };

static const struct option longopts[] = {
	{ "separator", required_argument, NULL, 's' },
	{ "dir", required_argument, NULL, 'd' },
	{ "name", required_argument, NULL, 'n' },
	{ "envelope", no_argument, NULL, 'e' },
	{ "headers", no_argument, NULL, 'H' },
	{ "exists", required_argument, NULL, OPT_EXISTS },
	{ "mode", required_argument, NULL, OPT_MODE },
	{ "done-marker", required_argument, NULL, OPT_DONE_MARKER },
	{ NULL, 0, NULL, 0 },
};

static int hexval(char c)
{
	if (c >= '0' && c <= '9') return c - '0';
	if (c >= 'a' && c <= 'f') return c - 'a' + 10;
	if (c >= 'A' && c <= 'F') return c - 'A' + 10;
	return -1;
}

/* The separator takes C escapes: \n \t \r \0 \\ \xHH. */
static int parse_separator(const char *s, struct buf *out)
{
	for (; *s; s++) {
		if (*s != '\\') {
			buf_addch(out, *s);
			continue;
		}
		switch (*++s) {
		case 'n': buf_addch(out, '\n'); break;
		case 't': buf_addch(out, '\t'); break;
		case 'r': buf_addch(out, '\r'); break;
		case '0': buf_addch(out, '\0'); break;
		case '\\': buf_addch(out, '\\'); break;
		case 'x':
			if (hexval(s[1]) < 0 || hexval(s[2]) < 0)
				return -1;
			buf_addch(out, hexval(s[1]) * 16 + hexval(s[2]));
			s += 2;
			break;
		default:
			return -1;
		}
	}
	return 0;
}

static void set_mode(struct tool *t, enum mode m)
{
	if (opt.mode != MODE_BODIES && opt.mode != m)
		tool_usage_error(t, "-d, -e and -H cannot be combined");
	opt.mode = m;
}

static int option(struct tool *t, int c, const char *arg)
{
	switch (c) {
	case 's':
		buf_reset(&opt.separator);
		if (parse_separator(arg, &opt.separator) < 0)
			tool_usage_error(t, "invalid escape in separator '%s'", arg);
		return 0;
	case 'd':
		set_mode(t, MODE_DIR);
		opt.dir = arg;
		return 0;
	case 'n':
		opt.name_template = arg;
		return 0;
	case 'e':
		set_mode(t, MODE_ENVELOPE);
		return 0;
	case 'H':
		set_mode(t, MODE_HEADERS);
		return 0;
	case OPT_EXISTS:
		if (outbox_exists_parse(arg, &opt.exists) < 0)
			tool_usage_error(t, "--exists takes suffix, fail, skip or replace, not '%s'", arg);
		return 0;
	case OPT_MODE:
		opt.mode_arg = arg;
		return 0;
	case OPT_DONE_MARKER:
		if (!*arg || strchr(arg, '/'))
			tool_usage_error(t, "--done-marker needs a suffix without '/'");
		opt.done_marker = arg;
		return 0;
	}
	return -1;
}

/* The file name for a message: template, else File-Name, else Message-Id.
 * A template's name is refused when unsafe; the headers' are made safe. */
static int file_name(const struct headers *h, struct buf *name, struct buf *why)
{
	struct buf raw = BUF_INIT;
	const char *v;
	int r = 0;

	buf_reset(name);
	if (opt.name_template)
		return name_template_expand(opt.name_template, h, name, why);
	if ((v = headers_get(h, "File-Name")) && *v) {
		buf_addstr(&raw, v);
	} else if ((v = headers_get(h, "Message-Id")) && *v) {
		buf_addstr(&raw, v);
	} else {
		buf_addstr(why, "no File-Name or Message-Id for the file name");
		r = -1;
	}
	if (r == 0 && safe_name(raw.ptr, raw.len, name) < 0) {
		buf_addstr(why, "the file name is empty");
		r = -1;
	}
	buf_release(&raw);
	return r;
}

static void divert(struct tool *t, struct frame_reader *fr, struct headers *h,
		   const char *why)
{
	struct buf body = BUF_INIT;

	if (frame_reader_body(fr, &body) < 0)
		tool_reader_failed(fr);
	tool_invalid(t, h, body.ptr, body.len, "%s", why);
	buf_release(&body);
}

/*
 * outbox_sync (or a group's publication) failed: say why, naming the
 * file when it was one, and end the run when fatal; else return the
 * status to end with. 73 for a name --exists fail found taken (made by
 * someone else while the body was written).
 */
static int sync_failed(int fatal)
{
	int err = errno;
	int code = opt.outbox.failed.len && err == EEXIST ? EX_CANTCREAT : EX_IOERR;
	struct buf what = BUF_INIT;

	if (opt.outbox.failed.len)
		buf_addf(&what, "cannot write '%s/%s'", opt.dir, opt.outbox.failed.ptr);
	else
		buf_addf(&what, "cannot sync directory '%s'", opt.dir);
	errno = err;
	if (fatal)
		die_errno(code, "%s", what.ptr);
	warn_errno("%s", what.ptr);
	buf_release(&what);
	return code;
}

static void to_file(struct tool *t, struct frame_reader *fr, struct headers *h)
{
	static struct buf name = BUF_INIT, why = BUF_INIT;
	const char *p;
	size_t n;
	int r;

	buf_reset(&why);
	if (file_name(h, &name, &why) < 0) {
		divert(t, fr, h, why.ptr);
		return;
	}
	switch (outbox_check(&opt.outbox, name.ptr)) {
	case OUTBOX_SKIPPED:
		if (frame_reader_skip(fr) < 0)
			tool_reader_failed(fr);
		return;
	case OUTBOX_TAKEN:
		buf_addf(&why, "the file '%s' exists", name.ptr);
		divert(t, fr, h, why.ptr);
		return;
	default:
		break;
	}
	if (outbox_begin(&opt.outbox) < 0)
		die_errno(EX_CANTCREAT, "cannot create a file in '%s'", opt.dir);
	while ((r = frame_reader_chunk(fr, &p, &n)) > 0)
		if (outbox_write(&opt.outbox, p, n) < 0) {
			outbox_abort(&opt.outbox);
			die_errno(EX_IOERR, "cannot write '%s/%s'", opt.dir, name.ptr);
		}
	if (r < 0) {
		outbox_abort(&opt.outbox);
		tool_reader_failed(fr);
	}
	if (outbox_publish(&opt.outbox, name.ptr) < 0)
		sync_failed(1);
}

static int unwrap_frame(struct tool *t, struct frame_reader *fr, struct headers *h)
{
	static struct buf scratch = BUF_INIT, body = BUF_INIT;
	const char *p;
	size_t n;
	int r;

	counters[C_IN].n++;
	switch (opt.mode) {
	case MODE_DIR:
		to_file(t, fr, h);
		return 0;
	case MODE_ENVELOPE:
		if (frame_reader_body(fr, &body) < 0)
			return -1;
		buf_reset(&scratch);
		envelope_format(h, body.ptr, body.len, &scratch);
		if (frame_writer_raw(t->out, scratch.ptr, scratch.len) < 0)
			tool_writer_failed(t->out);
		break;
	case MODE_HEADERS:
		buf_reset(&scratch);
		for (size_t i = 0; i < headers_count(h); i++) {
			size_t nl, vl;
			const char *name = headers_name(h, i, &nl);
			const char *v = headers_value(h, i, &vl);
			buf_add(&scratch, name, nl);
			buf_add(&scratch, ": ", 2);
			buf_add(&scratch, v, vl);
			buf_addch(&scratch, '\n');
		}
		buf_addch(&scratch, '\n');
		if (frame_writer_raw(t->out, scratch.ptr, scratch.len) < 0)
			tool_writer_failed(t->out);
		return frame_reader_skip(fr);
	case MODE_BODIES:
		/* The separator waits for the body's first piece (or its
		 * end): a frame found truncated gets none. */
		r = frame_reader_chunk(fr, &p, &n);
		if (r < 0)
			return -1;
		if (counters[C_OUT].n && opt.separator.len &&
		    frame_writer_raw(t->out, opt.separator.ptr, opt.separator.len) < 0)
			tool_writer_failed(t->out);
		for (; r > 0; r = frame_reader_chunk(fr, &p, &n))
			if (frame_writer_raw(t->out, p, n) < 0)
				tool_writer_failed(t->out);
		if (r < 0)
			return -1;
		break;
	}
	counters[C_OUT].n++;
	return 0;
}

/* The files of a batch are made durable before its inputs are done. */
static int batch_end(struct tool *t)
{
	(void)t;
	return outbox_sync(&opt.outbox) < 0 ? sync_failed(0) : 0;
}

/* A run that ends early still names the whole files it wrote: their
 * frames were read, and a stream cannot give them again. */
static void flush_files(struct tool *t)
{
	(void)t;
	if (outbox_sync(&opt.outbox) < 0)
		(void)sync_failed(0);
}

static void open_outbox(struct tool *t)
{
	struct outbox *ob = &opt.outbox;
	char *end;

	unsigned long mode = opt.mode_arg ? strtoul(opt.mode_arg, &end, 8) : 0;

	if (opt.mode_arg && (!*opt.mode_arg || *end || mode > 07777))
		tool_usage_error(t, "--mode takes an octal mode, not '%s'",
				 opt.mode_arg);
	if (outbox_open(ob, opt.dir) < 0)
		die_errno(EX_CANTCREAT, "cannot open directory '%s'", opt.dir);
	ob->exists = opt.exists;
	ob->done_marker = opt.done_marker;
	if (opt.mode_arg) {
		ob->mode = (mode_t)mode;
		ob->exact_mode = 1;
	}
	t->batch_end = batch_end;
	t->flush_whole = flush_files;
}

int main(int argc, char **argv)
{
	struct tool t = {
		.usage = usage,
		.shortopts = "s:d:n:eH",
		.longopts = longopts,
		.common = TOOL_OPT_OUTPUT | TOOL_OPT_INVALID | TOOL_OPT_DEAD_LETTER |
			  TOOL_OPT_STATS | TOOL_EXPIRES,
		.option = option,
		.counters = counters,
	};
	int first;

	tool_init(&t, argc, argv);
	first = tool_parse(&t, argc, argv);
	if (opt.name_template && opt.mode != MODE_DIR)
		tool_usage_error(&t, "-n needs -d");
	if (opt.separator.len && opt.mode != MODE_BODIES)
		tool_usage_error(&t, "-s cannot be combined with -d, -e or -H");
	if (opt.mode == MODE_DIR && strcmp(t.output_addr, "-"))
		tool_usage_error(&t, "--output cannot be combined with -d");
	/* -e and -H show messages rather than deliver them: expired ones
	 * too, or a dead-letter channel could not be looked into. */
	if (opt.mode == MODE_ENVELOPE || opt.mode == MODE_HEADERS)
		t.common &= ~TOOL_EXPIRES;
	if (opt.mode != MODE_DIR && (opt.exists != OUTBOX_SUFFIX || opt.mode_arg ||
				     opt.done_marker))
		tool_usage_error(&t, "--exists, --mode and --done-marker need -d");
	if (opt.mode == MODE_DIR)
		open_outbox(&t);
	else
		counters[C_SKIPPED].name = NULL;
	tool_open_outputs(&t);
	tool_each_frame(&t, argc - first, argv + first, unwrap_frame);
	if (opt.mode == MODE_DIR) {
		if (outbox_sync(&opt.outbox) < 0)
			sync_failed(1);
		counters[C_OUT].n = opt.outbox.published;
		counters[C_SKIPPED].n = opt.outbox.skipped;
		counters[C_SYNCS].n = opt.outbox.syncs;
	}
	tool_finish(&t);
	if (opt.mode == MODE_DIR)
		outbox_release(&opt.outbox);
	buf_release(&opt.separator);
	return tool_inputs_status();
}
