/* tool: shared options, outputs, invalid and expired messages, counters
 * and exit; reading the inputs is input.c's, which this drives. */
#include "tool.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "channel.h"
#include "diag.h"
#include "input.h"
#include "input-poll.h"
#include "io.h"
#include "message.h"
#include "msgrec.h"

enum {
	LONG_OUTPUT = 0x1000,
	LONG_INVALID,
	LONG_DEAD_LETTER,
	LONG_NS,
	LONG_STATS,
	LONG_ONCE,
	LONG_HELP,
	LONG_VERSION,
};

static const struct {
	struct option opt;
	unsigned flag;
} common_options[] = {
	{ { "output", required_argument, NULL, LONG_OUTPUT }, TOOL_OPT_OUTPUT },
	{ { "invalid", required_argument, NULL, LONG_INVALID }, TOOL_OPT_INVALID },
	{ { "dead-letter", required_argument, NULL, LONG_DEAD_LETTER }, TOOL_OPT_DEAD_LETTER },
	{ { "ns", required_argument, NULL, LONG_NS }, TOOL_OPT_NS },
	{ { "stats", no_argument, NULL, LONG_STATS }, TOOL_OPT_STATS },
	{ { "once", no_argument, NULL, LONG_ONCE }, 0 },
	{ { "help", no_argument, NULL, LONG_HELP }, 0 },
	{ { "version", no_argument, NULL, LONG_VERSION }, 0 },
};
#define NCOMMON (sizeof(common_options) / sizeof(common_options[0]))

/* The inputs of this program: one, reached by the exit hook and by
 * tool_refuse, which have no tool at hand. */
static struct input inputs;
/* The tool, for its own step before a stop at bad data. */
static struct tool *the_tool;

static void before_exit(int code)
{
	if (code == EX_DATAERR && the_tool && the_tool->before_data_exit)
		the_tool->before_data_exit(the_tool);
	frame_writers_flush_whole();
	if (the_tool && the_tool->flush_whole)
		the_tool->flush_whole(the_tool);
	input_before_exit(&inputs, code);
}

static void on_stop(int sig)
{
	(void)sig;
	io_stop_requested = 1;
}

void tool_init(struct tool *t, int argc, char **argv)
{
	/* No SA_RESTART: a read waiting for input returns, and the tool ends
	 * after the message in hand (doc/design.md, "Stopping"). */
	struct sigaction sa = { .sa_handler = on_stop };

	(void)t;
	diag_init(argc > 0 ? argv[0] : NULL);
	/* die() first writes out what earlier messages produced
	 * (doc/design.md, "Errors and exit status"). */
	the_tool = t;
	diag_set_exit_hook(before_exit);
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
}

void tool_usage_error(struct tool *t, const char *fmt, ...)
{
	struct buf line = BUF_INIT, safe = BUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	buf_vaddf(&line, fmt, ap);
	va_end(ap);
	diag_escape(&safe, line.ptr, line.len);
	fprintf(stderr, "%s: %s\n%s\n", progname, safe.ptr, t->usage);
	exit(EX_USAGE);
}

static struct option *merge_options(const struct tool *t)
{
	size_t own = 0, inbox = 0, n = 0;
	struct option *all;

	while (t->longopts && t->longopts[own].name)
		own++;
	while (tool_inbox_options[inbox].name)
		inbox++;
	all = xmalloc((own + inbox + NCOMMON + 1) * sizeof(*all));
	for (size_t i = 0; i < own; i++)
		all[n++] = t->longopts[i];
	for (size_t i = 0; (t->common & TOOL_OPT_INBOX) && i < inbox; i++)
		all[n++] = tool_inbox_options[i];
	for (size_t i = 0; i < NCOMMON; i++)
		if (!common_options[i].flag || (t->common & common_options[i].flag))
			all[n++] = common_options[i].opt;
	memset(&all[n], 0, sizeof(all[n]));
	return all;
}

static void handle_common(struct tool *t, int c, const char *arg)
{
	switch (c) {
	case LONG_OUTPUT:
		t->output_addr = arg;
		break;
	case LONG_INVALID:
		t->invalid_addr = arg;
		break;
	case LONG_DEAD_LETTER:
		t->dead_letter_addr = arg;
		break;
	case LONG_NS:
		if (!strchr(arg, '=') || *arg == '=')
			tool_usage_error(t, "--ns wants PREFIX=URI, not '%s'", arg);
		t->ns = xrealloc(t->ns, (t->nns + 1) * sizeof(*t->ns));
		t->ns[t->nns++] = (char *)arg;
		break;
	case LONG_STATS:
		t->stats = 1;
		break;
	case LONG_ONCE:
		t->once = 1;
		break;
	case LONG_HELP:
		printf("%s\n", t->usage);
		printf("See the %s(1) manual page.\n", progname);
		exit(fflush(stdout) || ferror(stdout) ? EX_IOERR : 0);
	case LONG_VERSION:
		printf("%s (msgtools) %s\n", progname, MSGTOOLS_VERSION);
		exit(fflush(stdout) || ferror(stdout) ? EX_IOERR : 0);
	}
}

/* Kept where exit() from a usage error still sees it (no false leak). */
static struct option *volatile all_options;

int tool_parse(struct tool *t, int argc, char **argv)
{
	struct option *all = all_options = merge_options(t);
	char shortopts[128];
	int c, idx;

	snprintf(shortopts, sizeof(shortopts), "%s:%s", t->options_first ? "+" : "",
		 t->shortopts ? t->shortopts : "");
	opterr = 0;
	while ((c = getopt_long(argc, argv, shortopts, all, &idx)) != -1) {
		if (c == '?') {
			if (optopt)
				tool_usage_error(t, "unknown option '-%c'", optopt);
			tool_usage_error(t, "unknown option '%s'", argv[optind - 1]);
		}
		if (c == ':') {
			/* A long option names itself; optopt is its short twin. */
			if (strncmp(argv[optind - 1], "--", 2) && optopt && optopt < 0x100)
				tool_usage_error(t, "option '-%c' needs a value", optopt);
			tool_usage_error(t, "option '%.*s' needs a value",
					 (int)strcspn(argv[optind - 1], "="), argv[optind - 1]);
		}
		if (c >= LONG_OUTPUT && c <= LONG_VERSION)
			handle_common(t, c, optarg);
		else if ((t->common & TOOL_OPT_INBOX) &&
			 tool_inbox_option(t, c, optarg))
			;
		else if (!t->option || t->option(t, c, optarg) < 0)
			tool_usage_error(t, "bad option '%s'", argv[optind - 1]);
	}
	free(all);
	all_options = NULL;
	if (!t->output_addr)
		t->output_addr = "-";
	if (!t->invalid_addr && (t->common & TOOL_OPT_INVALID)) {
		const char *env = getenv("MSG_INVALID");
		if (env && *env)
			t->invalid_addr = env;
	}
	if (!t->dead_letter_addr && (t->common & TOOL_OPT_DEAD_LETTER)) {
		const char *env = getenv("MSG_DEAD_LETTER");
		if (env && *env)
			t->dead_letter_addr = env;
	}
	return optind;
}

struct frame_writer *tool_open_output(const char *addr)
{
	struct buf err = BUF_INIT;
	struct frame_writer *fw = xmalloc(sizeof(*fw));

	if (channel_writer_open(addr, fw, &err) < 0)
		die(channel_failure_status(errno, EX_CANTCREAT), "%s", err.ptr);
	buf_release(&err);
	return fw;
}

void tool_open_outputs(struct tool *t)
{
	t->out = tool_open_output(t->output_addr);
	if (t->invalid_addr) {
		/* Several outputs: a reader gone from one must not kill us. */
		signal(SIGPIPE, SIG_IGN);
		t->invalid = tool_open_output(t->invalid_addr);
	}
	if (t->dead_letter_addr && (t->common & TOOL_EXPIRES)) {
		signal(SIGPIPE, SIG_IGN);
		t->dead_letter = tool_open_output(t->dead_letter_addr);
	}
}

struct frame_writer *tool_add_output(struct tool *t, const char *addr)
{
	/* Several outputs: a reader gone from one must not kill us. */
	signal(SIGPIPE, SIG_IGN);
	t->more = xrealloc(t->more, (t->nmore + 1) * sizeof(*t->more));
	t->more[t->nmore] = tool_open_output(addr);
	return t->more[t->nmore++];
}

int tool_open_input(const char *addr)
{
	return input_open(addr);
}

void tool_reader_failed(struct frame_reader *fr)
{
	die(frame_reader_exit_code(fr), "%s", frame_reader_error(fr));
}

void tool_writer_failed(struct frame_writer *fw)
{
	input_writer_failed(fw);
}

int tool_write(struct frame_writer *fw, const struct headers *h,
	       const void *body, size_t len, struct buf *why)
{
	if (frame_writer_write(fw, h, body, len) == 0)
		return 0;
	if (errno != EMSGSIZE)
		tool_writer_failed(fw);
	frame_header_too_big(why, h, len);
	return -1;
}

int tool_read_block(struct frame_reader *fr, struct buf *block, struct buf *body)
{
	const char *p;
	size_t n;

	/* Kept before the body is read over it. */
	frame_reader_header_block(fr, &p, &n);
	buf_reset(block);
	buf_add(block, p, n);
	return frame_reader_body(fr, body);
}

int tool_write_block(struct frame_writer *fw, const char *block, size_t n,
		     const void *body, size_t len, struct buf *why)
{
	struct headers h;
	int r;

	if (!frame_history_on() && n <= FRAME_HEADER_MAX) {
		if (frame_writer_begin_raw(fw, block, n, len) < 0 ||
		    frame_writer_body(fw, body, len) < 0 || frame_writer_end(fw) < 0)
			tool_writer_failed(fw);
		return 0;
	}
	/* Message-History to append, or a block grown past the limit:
	 * written, or refused, as any message. */
	headers_init(&h);
	if (msgrec_parse_block(block, n, &h) < 0)
		die(EX_SOFTWARE, "a header block kept by the tool does not parse");
	r = tool_write(fw, &h, body, len, why);
	headers_release(&h);
	return r;
}

void tool_count(struct tool *t, const char *name)
{
	if (t->counters)
		for (struct tool_counter *c = t->counters; c->name; c++)
			if (!strcmp(c->name, name))
				c->n++;
}

uint64_t *tool_counter(struct tool *t, const char *name)
{
	for (struct tool_counter *c = t->counters; c && c->name; c++)
		if (!strcmp(c->name, name))
			return &c->n;
	die(EX_SOFTWARE, "no counter '%s'", name);
}

/* "INPUT: message N (Message-Id ID): ", when the message came from an
 * input, so that a diagnostic names it. */
static void message_place(struct tool *t, const struct headers *h,
			  struct buf *where)
{
	const char *id = headers_get(h, "Message-Id");

	if (!t->current)
		return;
	buf_addf(where, "%s: message %llu", t->current->name,
		 (unsigned long long)t->current->frames);
	if (id)
		buf_addf(where, " (Message-Id %s)", id);
	buf_addstr(where, ": ");
}

void tool_warn_diverted(struct tool *t, const struct headers *h,
			const char *reason)
{
	const char *id = headers_get(h, "Message-Id");
	const char *file = headers_get(h, "File-Name");
	struct buf line = BUF_INIT;

	if (id && *id)
		buf_addf(&line, "message %s", id);
	else
		buf_addstr(&line, "message without Message-Id");
	if (file && *file)
		buf_addf(&line, ": File-Name %s", file);
	warnx_msg("warning: %s: %s: diverted to '%s'", line.ptr, reason,
		  t->invalid_addr);
	buf_release(&line);
}

void tool_invalid_refuse(struct tool *t, const struct headers *h,
			 const char *reason)
{
	struct buf where = BUF_INIT;

	message_place(t, h, &where);
	tool_refuse("%s%s", where.ptr, reason);
	buf_release(&where);
}

int tool_invalid_begin(struct tool *t, struct headers *h, uint64_t len,
		       const char *fmt, ...)
{
	struct buf reason = BUF_INIT, error = BUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	buf_vaddf(&reason, fmt, ap);
	va_end(ap);
	tool_count(t, "invalid");
	if (!t->invalid) {
		tool_invalid_refuse(t, h, reason.ptr);
		buf_release(&reason);
		return 0;
	}
	tool_warn_diverted(t, h, reason.ptr);
	buf_addf(&error, "%s: %s", progname, reason.ptr);
	frame_set_error(h, len, error.ptr);
	if (frame_writer_begin(t->invalid, h, len) < 0)
		tool_writer_failed(t->invalid);
	buf_release(&reason);
	buf_release(&error);
	return 1;
}

int tool_invalid(struct tool *t, struct headers *h, const void *body,
		 size_t len, const char *fmt, ...)
{
	struct buf reason = BUF_INIT;
	va_list ap;
	int begun;

	va_start(ap, fmt);
	buf_vaddf(&reason, fmt, ap);
	va_end(ap);
	begun = tool_invalid_begin(t, h, len, "%s", reason.ptr);
	if (begun && (frame_writer_body(t->invalid, body, len) < 0 ||
		      frame_writer_end(t->invalid) < 0))
		tool_writer_failed(t->invalid);
	buf_release(&reason);
	return 0;
}

void tool_stop_at(struct tool *t, const struct headers *h, int status,
		  const char *reason)
{
	struct buf where = BUF_INIT;

	message_place(t, h, &where);
	die(status, "%s%s", where.ptr, reason);
}

void tool_no_memory(struct tool *t, struct headers *h, const char *reason)
{
	tool_stop_at(t, h, EX_SOFTWARE, reason);
}

void tool_refuse(const char *fmt, ...)
{
	va_list ap;
	char line[4096];

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	input_refuse(&inputs, line);
}

int tool_inputs_status(void)
{
	return input_status(&inputs);
}

/* The body of the frame in hand, streamed to fw after h. */
static int copy_frame(struct frame_reader *fr, const struct headers *h,
		      struct frame_writer *fw)
{
	const char *p;
	size_t n;
	int r;

	if (frame_writer_begin(fw, h, frame_reader_body_length(fr)) < 0)
		tool_writer_failed(fw);
	while ((r = frame_reader_chunk(fr, &p, &n)) > 0)
		if (frame_writer_body(fw, p, n) < 0)
			tool_writer_failed(fw);
	if (r == 0 && frame_writer_end(fw) < 0)
		tool_writer_failed(fw);
	return r;
}

/*
 * An expired message is never processed (msg-format(5), Expires): 1 when
 * the message in hand was one and has been dealt with here, 0 when the
 * tool is to process it, -1 on a reader fault.
 */
static int divert_expired(struct tool *t, struct frame_reader *fr, struct headers *h)
{
	int expired = message_expired(h);
	struct buf why = BUF_INIT;

	if (expired == 0)
		return 0;
	tool_count(t, "in");
	if (expired < 0) {
		struct buf body = BUF_INIT;
		int r = frame_reader_body(fr, &body);
		if (r == 0)
			tool_invalid(t, h, body.ptr, body.len, "invalid Expires '%s'",
				     headers_get(h, "Expires"));
		buf_release(&body);
		return r < 0 ? -1 : 1;
	}
	tool_count(t, "expired");
	if (!t->dead_letter) {
		const char *id = headers_get(h, "Message-Id");
		warnx_msg("message expired; message %s dropped", id ? id : "(without Message-Id)");
		return frame_reader_skip(fr) < 0 ? -1 : 1;
	}
	buf_addf(&why, "%s: message expired", progname);
	frame_set_error(h, frame_reader_body_length(fr), why.ptr);
	buf_release(&why);
	return copy_frame(fr, h, t->dead_letter) < 0 ? -1 : 1;
}

/*
 * A spool file that is not well framed goes to --invalid whole, as the
 * body of a message of its own: its bytes cannot be told apart into
 * headers and body, but they are one message, and nothing of it is lost.
 */
static void divert_whole_file(struct tool *t, int fd, const char *name,
			      const char *reason)
{
	struct headers h;
	struct buf err = BUF_INIT;
	struct stat st;
	char chunk[IO_CHUNK / 4];
	off_t at = 0;

	if (fstat(fd, &st) < 0)
		die_errno(EX_IOERR, "cannot read '%s'", name);
	headers_init(&h);
	message_stamp(&h);
	headers_set(&h, "Content-Type", "application/octet-stream");
	buf_addf(&err, "%s: %s", progname, reason);
	headers_set(&h, "Error", err.ptr);
	tool_warn_diverted(t, &h, reason);
	if (frame_writer_begin(t->invalid, &h, (uint64_t)st.st_size) < 0)
		tool_writer_failed(t->invalid);
	while (at < st.st_size) {
		ssize_t n = pread(fd, chunk, sizeof(chunk), at);
		if (n <= 0)
			die_errno(EX_IOERR, "cannot read '%s'", name);
		if (n > st.st_size - at)	/* grown meanwhile: not ours */
			n = st.st_size - at;
		if (frame_writer_body(t->invalid, chunk, (size_t)n) < 0)
			tool_writer_failed(t->invalid);
		at += n;
	}
	if (frame_writer_end(t->invalid) < 0)
		tool_writer_failed(t->invalid);
	tool_count(t, "invalid");
	headers_release(&h);
	buf_release(&err);
}

/* What the inputs hand over, and to which of the tool's functions. */
struct tool_call {
	struct tool *t;
	tool_frame_fn frame;
	tool_raw_fn raw;
};

static int call_frame(void *ctx, struct frame_reader *fr, struct headers *h)
{
	struct tool_call *c = ctx;
	struct tool *t = c->t;
	int done, r;

	t->current = fr;
	done = (t->common & TOOL_EXPIRES) ? divert_expired(t, fr, h) : 0;
	r = done < 0 || (!done && c->frame(t, fr, h) < 0) ? -1 : 0;
	t->current = NULL;
	return r;
}

static void call_raw(void *ctx, int fd, const char *name,
		     const struct headers *file_headers)
{
	struct tool_call *c = ctx;

	c->raw(c->t, fd, name, file_headers);
}

static int call_divert_file(void *ctx, int fd, const char *name,
			    const char *reason)
{
	struct tool_call *c = ctx;

	if (!c->t->invalid)
		return 0;
	divert_whole_file(c->t, fd, name, reason);
	return 1;
}

static int call_batch_end(void *ctx)
{
	struct tool_call *c = ctx;

	return c->t->batch_end(c->t);
}

static const struct input_ops tool_input_ops = {
	.frame = call_frame,
	.raw = call_raw,
	.divert_file = call_divert_file,
};
static const struct input_ops stateful_input_ops = {
	.frame = call_frame,
	.raw = call_raw,
	.divert_file = call_divert_file,
	.batch_end = call_batch_end,
};

static const struct input_ops *input_ops_of(const struct tool *t)
{
	return t->batch_end ? &stateful_input_ops : &tool_input_ops;
}

void tool_each_frame(struct tool *t, int nargs, char **args, tool_frame_fn fn)
{
	struct tool_call c = { t, fn, NULL };

	inputs.once = t->once;
	input_each_frame(&inputs, input_ops_of(t), &c, nargs, args);
}

void tool_each_raw(struct tool *t, int nargs, char **args, tool_raw_fn fn)
{
	struct tool_call c = { t, NULL, fn };

	inputs.once = t->once;
	if (t->common & TOOL_OPT_INBOX) {
		struct buf err = BUF_INIT;

		for (int i = 0; i < nargs; i++)
			if (!strncmp(args[i], "inbox:", 6) &&
			    inbox_check(args[i], &t->inbox, &err) < 0)
				tool_usage_error(t, "%s", err.ptr);
		buf_release(&err);
		inputs.inbox = &t->inbox;
	}
	input_each_raw(&inputs, input_ops_of(t), &c, nargs, args);
}

/* The calls polled operands hand their frames to, freed at the end. */
static struct tool_call **poll_calls;
static size_t npoll_calls;

struct input_poll *tool_poll_new(struct tool *t)
{
	inputs.once = t->once;
	return input_poll_new(&inputs, t->once);
}

void tool_poll_add(struct tool *t, struct input_poll *p, const char *addr,
		   tool_frame_fn fn, unsigned flags)
{
	struct tool_call *c = xmalloc(sizeof(*c));

	*c = (struct tool_call){ t, fn, NULL };
	poll_calls = xrealloc(poll_calls, (npoll_calls + 1) * sizeof(*poll_calls));
	poll_calls[npoll_calls++] = c;
	input_poll_add(p, addr, input_ops_of(t), c, flags);
}

static void close_output(struct frame_writer *fw)
{
	if (!fw)
		return;
	if (frame_writer_close(fw) < 0)
		tool_writer_failed(fw);
	frame_writer_release(fw);
	free(fw);
}

void tool_finish(struct tool *t)
{
	while (t->nmore)
		close_output(t->more[--t->nmore]);
	free(t->more);
	t->more = NULL;
	close_output(t->dead_letter);
	t->dead_letter = NULL;
	close_output(t->invalid);
	t->invalid = NULL;
	close_output(t->out);
	t->out = NULL;
	if (t->stats && t->counters) {
		struct buf line = BUF_INIT;
		for (struct tool_counter *c = t->counters; c->name; c++)
			buf_addf(&line, "%s%s %llu", c == t->counters ? "" : ", ",
				 c->name, (unsigned long long)c->n);
		if (t->inbox.idempotent)
			buf_addf(&line, ", skipped %lu", inputs.repeated);
		if (inputs.passed_over)
			buf_addf(&line, ", passed %lu", inputs.passed_over);
		warnx_msg("stats: %s", line.ptr);
		buf_release(&line);
	}
	free(t->ns);
	t->ns = NULL;
	free(t->inbox.include);
	free(t->inbox.exclude);
	t->inbox = (struct inbox_options){ 0 };
	while (npoll_calls)
		free(poll_calls[--npoll_calls]);
	free(poll_calls);
	poll_calls = NULL;
}
