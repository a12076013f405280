/* msg-tap: the Wire Tap; a copy of each message to tap channels, the
 * original on to stdout byte for byte. */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "diag.h"
#include "envelope.h"
#include "expr.h"
#include "frame.h"
#include "tapout.h"
#include "tool.h"

static const char usage[] =
	"usage: msg-tap [-i input] ... [-w expr] [-F frame|summary|envelope] [-k header] ...\n"
	"               [--if-full block|drop] [--buffer size] [--stats-interval duration]\n"
	"               [--ns prefix=uri] [--output channel] [--once] [--stats]\n"
	"               channel ...";

enum format { FORMAT_FRAME, FORMAT_SUMMARY, FORMAT_ENVELOPE };

static struct {
	const char *when;
	enum format format;
	const char **show;
	size_t nshow;
	int drop;		/* -1: by channel kind */
	uint64_t buffer;
	int64_t stats_every;
	char **inputs;		/* -i: the operands are the taps */
	int ninputs;
} opt = { .drop = -1, .buffer = 1 << 20 };

static struct tapout *taps;
static size_t ntaps;
static struct expr_env *env;
static struct expr *when;
static int64_t next_report;
static int any_blocking;	/* an envelope must then be made whole */

static struct tool_counter counters[] = {
	{ "in", 0 }, { "tapped", 0 }, { "dropped", 0 }, { NULL, 0 },
};
enum { C_IN, C_TAPPED, C_DROPPED };

enum { OPT_IF_FULL = 0x100, OPT_BUFFER, OPT_STATS_INTERVAL };

static const struct option longopts[] = {
	{ "input", required_argument, NULL, 'i' },
	{ "when", required_argument, NULL, 'w' },
	{ "format", required_argument, NULL, 'F' },
	{ "show", required_argument, NULL, 'k' },
	{ "if-full", required_argument, NULL, OPT_IF_FULL },
	{ "buffer", required_argument, NULL, OPT_BUFFER },
	{ "stats-interval", required_argument, NULL, OPT_STATS_INTERVAL },
	{ NULL, 0, NULL, 0 },
};

static int option(struct tool *t, int c, const char *arg)
{
	switch (c) {
	case 'i':
		opt.inputs = xrealloc(opt.inputs, (size_t)(opt.ninputs + 1) * sizeof(*opt.inputs));
		opt.inputs[opt.ninputs++] = (char *)arg;
		return 0;
	case 'w':
		opt.when = arg;
		return 0;
	case 'F':
		if (!strcmp(arg, "frame")) opt.format = FORMAT_FRAME;
		else if (!strcmp(arg, "summary")) opt.format = FORMAT_SUMMARY;
		else if (!strcmp(arg, "envelope")) opt.format = FORMAT_ENVELOPE;
		else tool_usage_error(t, "-F takes frame, summary or envelope, not '%s'", arg);
		return 0;
	case 'k':
		opt.show = xrealloc(opt.show, (opt.nshow + 1) * sizeof(*opt.show));
		opt.show[opt.nshow++] = arg;
		return 0;
	case OPT_IF_FULL:
		if (!strcmp(arg, "block")) opt.drop = 0;
		else if (!strcmp(arg, "drop")) opt.drop = 1;
		else tool_usage_error(t, "--if-full takes block or drop, not '%s'", arg);
		return 0;
	case OPT_BUFFER:
		if (size_parse(arg, &opt.buffer) < 0 || opt.buffer == 0)
			tool_usage_error(t, "invalid size '%s'", arg);
		return 0;
	case OPT_STATS_INTERVAL:
		if (duration_parse(arg, &opt.stats_every) < 0 || opt.stats_every <= 0)
			tool_usage_error(t, "invalid duration '%s'", arg);
		return 0;
	}
	return -1;
}

static void add_field(struct buf *line, const char *name, const char *v)
{
	buf_addf(line, " %s=%s", name, v && *v ? v : "-");
}

/* One line a message: what a person watching a flow wants to see. */
static void summary_line(const struct headers *h, uint64_t len, struct buf *line)
{
	char now[TIMESTAMP_LEN + 1];
	const char *num = headers_get(h, "Sequence-Number");
	const char *size = headers_get(h, "Sequence-Size");
	const char *id = headers_get(h, "Message-Id");
	const char *type = headers_get(h, "Content-Type");

	timestamp_format(now, clock_now_ms());
	buf_addf(line, "%s %s %s %llu", now, id && *id ? id : "-",
		 type && *type ? type : "-", (unsigned long long)len);
	add_field(line, "corr", headers_get(h, "Correlation-Id"));
	if (num && *num)
		buf_addf(line, " seq=%s/%s", num, size && *size ? size : "?");
	for (size_t i = 0; i < opt.nshow; i++)
		add_field(line, opt.show[i], headers_get(h, opt.show[i]));
	buf_addch(line, '\n');
}

static void report_drops(void)
{
	for (size_t i = 0; i < ntaps; i++)
		if (taps[i].dropped || taps[i].reopened)
			warnx_msg("tap '%s': %llu copied, %llu dropped, reopened %llu times",
				  taps[i].addr, (unsigned long long)taps[i].frames,
				  (unsigned long long)taps[i].dropped,
				  (unsigned long long)taps[i].reopened);
}

/* frame: the message's frame as read, when it passes byte for byte and
 * is held whole (tapped as it is); else block (as read, or NULL to be
 * formatted from h) and body. */
static void tap_copy(const struct headers *h, const char *frame, size_t frame_len,
		     const char *block, size_t block_len, const char *body, size_t len)
{
	static struct buf unit = BUF_INIT;
	const char *copy;
	size_t copy_len;

	buf_reset(&unit);
	switch (opt.format) {
	case FORMAT_FRAME:
		if (frame)
			break;
		if (block)
			buf_add(&unit, block, block_len);
		else
			frame_format_header(&unit, h, len);
		buf_add(&unit, body, len);
		buf_addch(&unit, '\n');
		break;
	case FORMAT_SUMMARY:
		summary_line(h, len, &unit);
		break;
	case FORMAT_ENVELOPE:
		envelope_format(h, body, len, &unit);
		break;
	}
	copy = opt.format == FORMAT_FRAME && frame ? frame : unit.ptr;
	copy_len = opt.format == FORMAT_FRAME && frame ? frame_len : unit.len;
	for (size_t i = 0; i < ntaps; i++) {
		uint64_t before = taps[i].dropped;
		if (tapout_put(&taps[i], copy, copy_len) < 0)
			die(EX_IOERR, "cannot write '%s': %s", taps[i].addr, strerror(errno));
		counters[taps[i].dropped > before ? C_DROPPED : C_TAPPED].n++;
	}
}

/* block: the header block as read, or NULL to format it from h. */
static void begin_out(struct tool *t, const struct headers *h, const char *block,
		      size_t block_len, uint64_t len)
{
	if ((block ? frame_writer_begin_raw(t->out, block, block_len, len)
		   : frame_writer_begin(t->out, h, len)) < 0)
		tool_writer_failed(t->out);
}

/*
 * A body larger than --buffer is not held: it streams to stdout and to
 * blocking frame taps; a drop tap could not queue it whole, so it drops
 * it, and a summary needs no body at all.
 */
static int tap_streaming(struct tool *t, struct frame_reader *fr,
			 const struct headers *h, const struct buf *block, int hit)
{
	uint64_t len = frame_reader_body_length(fr);
	static struct buf line = BUF_INIT;
	const char *p;
	size_t n;
	int r;

	begin_out(t, h, frame_history_on() ? NULL : block->ptr, block->len, len);
	for (size_t i = 0; i < ntaps && hit; i++) {
		struct tapout *tp = &taps[i];
		if (opt.format == FORMAT_SUMMARY) {
			buf_reset(&line);
			summary_line(h, len, &line);
			tapout_put(tp, line.ptr, line.len);
			counters[C_TAPPED].n++;
		} else if (tp->w && opt.format == FORMAT_FRAME) {
			if ((frame_history_on() ? frame_writer_begin(tp->w, h, len)
						: frame_writer_begin_raw(tp->w, block->ptr, block->len, len)) < 0)
				die(EX_IOERR, "cannot write '%s': %s", tp->addr, strerror(tp->w->err));
			tp->frames++;
		} else {
			tp->dropped++;
			counters[C_DROPPED].n++;
		}
	}
	while ((r = frame_reader_chunk(fr, &p, &n)) > 0) {
		if (frame_writer_body(t->out, p, n) < 0)
			tool_writer_failed(t->out);
		for (size_t i = 0; i < ntaps && hit; i++)
			if (taps[i].w && opt.format == FORMAT_FRAME &&
			    frame_writer_body(taps[i].w, p, n) < 0)
				die(EX_IOERR, "cannot write '%s': %s", taps[i].addr,
				    strerror(taps[i].w->err));
	}
	if (r < 0)
		return -1;
	for (size_t i = 0; i < ntaps && hit; i++)
		if (taps[i].w && opt.format == FORMAT_FRAME && frame_writer_end(taps[i].w) < 0)
			die(EX_IOERR, "cannot write '%s': %s", taps[i].addr, strerror(taps[i].w->err));
	if (frame_writer_end(t->out) < 0)
		tool_writer_failed(t->out);
	return 0;
}

/*
 * A message of at most --buffer bytes, held whole: in the reader's buffer
 * when it fits (it then passes on from there, byte for byte, with no copy
 * of its own), else read into memory.
 */
static int tap_held(struct tool *t, struct frame_reader *fr, struct headers *h)
{
	static struct buf block = BUF_INIT, body = BUF_INIT;
	struct buf err = BUF_INIT;
	const char *frame, *blk, *b;
	size_t frame_len, n, len;
	int hit = 1, r;

	frame_reader_header_block(fr, &blk, &n);
	r = frame_reader_whole(fr, &frame, &frame_len);
	if (r < 0)
		return -1;
	if (r) {
		blk = frame;
		b = frame + n;
		len = frame_len - n - 1;
	} else {
		frame = NULL;
		frame_reader_header_block(fr, &blk, &n);
		buf_reset(&block);
		buf_add(&block, blk, n);
		if (frame_reader_body(fr, &body) < 0)
			return -1;
		blk = block.ptr;
		b = body.ptr;
		len = body.len;
	}
	if (when) {
		expr_env_bind(env, h, b, len);
		/* A tap never stops the flow: an undecidable message is not tapped. */
		if (expr_eval_bool(when, env, &hit, &err) < 0)
			hit = 0;
		buf_release(&err);
	}
	/* With Message-History the block is made anew, from h. */
	if (frame_history_on())
		frame = blk = NULL;
	if (hit)
		tap_copy(h, frame, frame_len, blk, n, b, len);
	if (frame) {
		if (frame_writer_whole(t->out, frame, frame_len) < 0)
			tool_writer_failed(t->out);
		return 0;
	}
	begin_out(t, h, blk, n, len);
	if (frame_writer_body(t->out, b, len) < 0 || frame_writer_end(t->out) < 0)
		tool_writer_failed(t->out);
	return 0;
}

static int tap_frame(struct tool *t, struct frame_reader *fr, struct headers *h)
{
	static struct buf block = BUF_INIT;
	struct buf err = BUF_INIT;
	const char *p;
	size_t n;
	int hit = 1, r;
	int body_for_when = when && (expr_needs(when) & EXPR_NEEDS_BODY);

	counters[C_IN].n++;
	/* Message-History makes the block grow: past the limit, neither
	 * stdout nor a tap could take the message. */
	if (frame_history_on() &&
	    frame_header_size(h, frame_reader_body_length(fr)) > FRAME_HEADER_MAX) {
		frame_header_too_big(&err, h, frame_reader_body_length(fr));
		/* Exit 65, or, from a dir: input, its file is set aside. */
		tool_invalid_refuse(t, h, err.ptr);
		buf_release(&err);
		return frame_reader_skip(fr);
	}
	if (frame_reader_body_length(fr) > opt.buffer && !body_for_when &&
	    !(opt.format == FORMAT_ENVELOPE && any_blocking)) {
		if (when) {
			expr_env_bind(env, h, NULL, 0);
			if (expr_eval_bool(when, env, &hit, &err) < 0)
				hit = 0;
			buf_release(&err);
		}
		/* The header block as it came, for a byte-for-byte copy. */
		frame_reader_header_block(fr, &p, &n);
		buf_reset(&block);
		buf_add(&block, p, n);
		r = tap_streaming(t, fr, h, &block, hit);
	} else {
		r = tap_held(t, fr, h);
	}
	if (opt.stats_every && clock_now_ms() >= next_report) {
		report_drops();
		next_report = clock_now_ms() + opt.stats_every;
	}
	return r;
}

int main(int argc, char **argv)
{
	struct tool t = {
		.usage = usage,
		.shortopts = "i:w:F:k:",
		.longopts = longopts,
		.common = TOOL_OPT_OUTPUT | TOOL_OPT_NS | TOOL_OPT_STATS,
		.option = option,
		.counters = counters,
	};
	struct buf err = BUF_INIT;
	int first, failed = 0;

	tool_init(&t, argc, argv);
	first = tool_parse(&t, argc, argv);
	if (first == argc)
		tool_usage_error(&t, "no tap channel");
	/* A tap reader that goes away must not take the flow with it. */
	signal(SIGPIPE, SIG_IGN);
	env = expr_env_new(t.ns, t.nns, &err);
	if (!env)
		die(EX_USAGE, "%s", err.ptr);
	if (opt.when && !(when = expr_compile(env, opt.when, &err)))
		die(EX_USAGE, "%s", err.ptr);
	tool_open_outputs(&t);
	for (int i = first; i < argc; i++)
		if (!strncmp(argv[i], "dir:", 4) && opt.format != FORMAT_FRAME)
			tool_usage_error(&t, "a dir: tap channel holds frames: -F frame only");
	ntaps = (size_t)(argc - first);
	taps = xmalloc(ntaps * sizeof(*taps));
	for (size_t i = 0; i < ntaps; i++)
		if (tapout_open(&taps[i], argv[first + (int)i], opt.drop,
				(size_t)opt.buffer, &err) < 0)
			die(EX_CANTCREAT, "%s", err.ptr);
	for (size_t i = 0; i < ntaps; i++)
		any_blocking |= !taps[i].drop;
	next_report = clock_now_ms() + opt.stats_every;
	tool_each_frame(&t, opt.ninputs, opt.inputs, tap_frame);
	for (size_t i = 0; i < ntaps; i++) {
		if (tapout_close(&taps[i], 1000) < 0)
			die(EX_IOERR, "cannot write '%s': %s", taps[i].addr, strerror(errno));
		/* A tap that failed for good is an output that failed. */
		if (taps[i].err) {
			warnx_msg("cannot write '%s': %s", taps[i].addr, strerror(taps[i].err));
			failed = 1;
		}
	}
	report_drops();
	/* Counted at the end: a queued copy may still have been dropped. */
	counters[C_TAPPED].n = counters[C_DROPPED].n = 0;
	for (size_t i = 0; i < ntaps; i++) {
		counters[C_TAPPED].n += taps[i].frames;
		counters[C_DROPPED].n += taps[i].dropped;
	}
	tool_finish(&t);
	for (size_t i = 0; i < ntaps; i++)
		tapout_release(&taps[i]);
	free(taps);
	free(opt.inputs);
	expr_free(when);
	expr_env_free(env);
	buf_release(&err);
	return failed ? EX_IOERR : tool_inputs_status();
}
