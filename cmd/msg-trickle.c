/* msg-trickle: the trickle feed of versioned messages, and its operator
 * commands (status, retry, skip, release). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "diag.h"
#include "expr.h"
#include "input-poll.h"
#include "io.h"
#include "msgrec.h"
#include "store.h"
#include "tool.h"
#include "tool-state.h"
#include "trickle.h"
#include "trickle-admin.h"

static const char usage[] =
	"usage: msg-trickle --state dir [-k expr] [-v expr] [--version-order number|text]\n"
	"                   [-r channel]... [-s expr] [--latest] [--superseded channel]\n"
	"                   [--stale channel] [--unmatched channel] [--retry-after duration]\n"
	"                   [--max-attempts n] [--resend-after duration] [--max-in-flight n]\n"
	"                   [--forget duration]\n"
	"                   [--ns prefix=uri] [--output channel] [--invalid channel]\n"
	"                   [--once] [--stats] [input ...]\n"
	"       msg-trickle status --state dir [--json] [key ...]\n"
	"       msg-trickle retry|skip|release --state dir key ...";

/* As given on the command line. */
static struct {
	const char *key, *version, *success, *state;
	const char *superseded, *stale, *unmatched;
	char **responses;
	size_t nresponses;
	struct trickle_opt tr;
} opt = {
	.key = "header('Entity-Id')",
	.version = "header('Entity-Version')",
	.success = "header('Status') = 'success'",
};

static struct expr_env *env;
static struct expr *key_expr, *version_expr, *success_expr;
static struct store *store;
static struct trickle *feed;
static struct frame_writer *superseded_out, *stale_out, *unmatched_out;

static struct tool_counter counters[] = {
	{ "in", 0 }, { "responses", 0 }, { "sent", 0 }, { "succeeded", 0 },
	{ "failed", 0 }, { "retried", 0 }, { "resent", 0 }, { "superseded", 0 },
	{ "stale", 0 }, { "duplicates", 0 }, { "unmatched", 0 }, { "invalid", 0 },
	{ "commands", 0 }, { "blocked", 0 }, { "waiting", 0 }, { "in-flight", 0 },
	{ NULL, 0 },
};
enum {
	C_IN, C_RESPONSES, C_SENT, C_SUCCEEDED, C_FAILED, C_RETRIED, C_RESENT,
	C_SUPERSEDED, C_STALE, C_DUPLICATES, C_UNMATCHED, C_INVALID, C_COMMANDS,
	C_BLOCKED, C_WAITING, C_IN_FLIGHT,
};

enum {
	OPT_VERSION_ORDER = 0x100, OPT_LATEST, OPT_SUPERSEDED, OPT_STALE,
	OPT_UNMATCHED, OPT_RETRY_AFTER, OPT_MAX_ATTEMPTS, OPT_RESEND_AFTER,
	OPT_MAX_IN_FLIGHT, OPT_STATE, OPT_FORGET,
};

static const struct option longopts[] = {
	{ "key", required_argument, NULL, 'k' },
	{ "version", required_argument, NULL, 'v' },
	{ "version-order", required_argument, NULL, OPT_VERSION_ORDER },
	{ "responses", required_argument, NULL, 'r' },
	{ "success", required_argument, NULL, 's' },
	{ "latest", no_argument, NULL, OPT_LATEST },
	{ "superseded", required_argument, NULL, OPT_SUPERSEDED },
	{ "stale", required_argument, NULL, OPT_STALE },
	{ "unmatched", required_argument, NULL, OPT_UNMATCHED },
	{ "retry-after", required_argument, NULL, OPT_RETRY_AFTER },
	{ "max-attempts", required_argument, NULL, OPT_MAX_ATTEMPTS },
	{ "resend-after", required_argument, NULL, OPT_RESEND_AFTER },
	{ "max-in-flight", required_argument, NULL, OPT_MAX_IN_FLIGHT },
	{ "state", required_argument, NULL, OPT_STATE },
	{ "forget", required_argument, NULL, OPT_FORGET },
	{ NULL, 0, NULL, 0 },
};

/* The options that only keep their argument: as given, or read as a
 * duration or a count. */
static const struct { int c; const char **to; } text_opts[] = {
	{ 'k', &opt.key }, { 'v', &opt.version }, { 's', &opt.success },
	{ OPT_SUPERSEDED, &opt.superseded }, { OPT_STALE, &opt.stale },
	{ OPT_UNMATCHED, &opt.unmatched }, { OPT_STATE, &opt.state },
};
static const struct { int c; const char *name; int64_t *to; } duration_opts[] = {
	{ OPT_RETRY_AFTER, "--retry-after", &opt.tr.retry_after },
	{ OPT_RESEND_AFTER, "--resend-after", &opt.tr.resend_after },
	{ OPT_FORGET, "--forget", &opt.tr.forget },
};
static const struct { int c; const char *name; uint64_t *to; } count_opts[] = {
	{ OPT_MAX_ATTEMPTS, "--max-attempts", &opt.tr.max_attempts },
	{ OPT_MAX_IN_FLIGHT, "--max-in-flight", &opt.tr.max_in_flight },
};

static int option(struct tool *t, int c, const char *arg)
{
	static const char *const order[] = { "number", "text", NULL };

	for (size_t i = 0; i < sizeof(text_opts) / sizeof(*text_opts); i++)
		if (text_opts[i].c == c) {
			*text_opts[i].to = arg;
			return 0;
		}
	for (size_t i = 0; i < sizeof(duration_opts) / sizeof(*duration_opts); i++)
		if (duration_opts[i].c == c) {
			*duration_opts[i].to = tool_arg_duration(t, duration_opts[i].name, arg);
			return 0;
		}
	for (size_t i = 0; i < sizeof(count_opts) / sizeof(*count_opts); i++)
		if (count_opts[i].c == c) {
			*count_opts[i].to = tool_arg_count(t, count_opts[i].name, arg);
			return 0;
		}
	switch (c) {
	case 'r':
		opt.responses = xrealloc(opt.responses,
					 (opt.nresponses + 1) * sizeof(*opt.responses));
		opt.responses[opt.nresponses++] = (char *)arg;
		return 0;
	case OPT_VERSION_ORDER:
		opt.tr.order = (enum trickle_order)tool_arg_choice(t, "--version-order", arg, order);
		return 0;
	case OPT_LATEST: opt.tr.latest = 1; return 0;
	}
	return -1;
}

/* ---- what the feed writes ---- */

static int send_message(void *ctx, const char *block, size_t n,
			const char *body, size_t len, struct buf *why)
{
	struct tool *t = ctx;

	if (tool_write_block(t->out, block, n, body, len, why) < 0) {
		warnx_msg("warning: a message of %zu header bytes cannot be sent: %s",
			  n, why->ptr);
		return -1;
	}
	return 0;
}

/* A message kept as bytes, set aside to fw (or dropped with a warning). */
static void set_aside_block(struct frame_writer *fw, const char *block,
			    size_t n, const char *body, size_t len,
			    const char *what)
{
	struct headers h;
	struct buf b = BUF_INIT;

	headers_init(&h);
	if (msgrec_parse_block(block, n, &h) == 0) {
		buf_add(&b, body, len);
		tool_set_aside(fw, &h, &b, what);
	}
	headers_release(&h);
	buf_release(&b);
}

static void superseded(void *ctx, const char *block, size_t n,
		       const char *body, size_t len, const char *what)
{
	(void)ctx;
	if (superseded_out)
		set_aside_block(superseded_out, block, n, body, len, what);
}

/* The end of an input batch: commit, then send what it let go. */
static int batch_end(struct tool *t)
{
	(void)t;
	if (trickle_tick(feed, clock_now_ms()) < 0 || trickle_sync(feed) < 0)
		tool_state_failed(store, "cannot keep the state");
	return 0;
}

/* A stop at a request it cannot process (65): what the requests before
 * it did is committed and sent first, as a stop at bad data promises. */
static void before_data_exit(struct tool *t)
{
	static int once;

	if (!once++ && feed)
		batch_end(t);
}

/* ---- what comes in ---- */

/* expr's string for the message bound: 0, or -1 after the message was
 * found invalid (what names the value). */
static int eval(struct tool *t, struct headers *h, const struct buf *body,
		struct expr *e, const char *what, struct buf *out)
{
	struct buf why = BUF_INIT;
	int r = expr_eval_string(e, env, out, &why);

	if (r == 0 && !out->len)
		buf_addf(&why, "no %s", what), r = -1;
	for (size_t i = 0; r == 0 && i < out->len; i++)
		if ((unsigned char)out->ptr[i] < 0x20 || out->ptr[i] == 0x7f)
			buf_addf(&why, "the %s holds a control character", what), r = -1;
	if (r == MSG_NO_MEMORY)
		tool_no_memory(t, h, why.ptr);
	if (r < 0)
		tool_invalid(t, h, body->ptr, body->len, "%s", why.ptr);
	buf_release(&why);
	return r < 0 ? -1 : 0;
}

static int request_frame(struct tool *t, struct frame_reader *fr, struct headers *h)
{
	static struct buf block = BUF_INIT, body = BUF_INIT, key = BUF_INIT,
			  version = BUF_INIT, why = BUF_INIT;
	const char *msgid = headers_get(h, "Message-Id");
	int r;

	counters[C_IN].n++;
	if (tool_read_block(fr, &block, &body) < 0)
		return -1;
	expr_env_bind(env, h, body.ptr, body.len);
	if (eval(t, h, &body, key_expr, "entity key", &key) < 0 ||
	    eval(t, h, &body, version_expr, "version", &version) < 0)
		return 0;
	if (!msgid || !*msgid)
		return tool_invalid(t, h, body.ptr, body.len,
				    "no Message-Id: a response could not name it");
	buf_reset(&why);
	r = trickle_request(feed, key.ptr, key.len, version.ptr, version.len, msgid,
			    block.ptr, block.len, body.ptr, body.len,
			    clock_now_ms(), &why);
	if (r < 0)
		tool_state_failed(store, "cannot keep the state");
	if (r == TRICKLE_DUPLICATE)
		counters[C_DUPLICATES].n++;	/* at-least-once delivery's */
	if (r == TRICKLE_STALE) {
		counters[C_STALE].n++;
		tool_set_aside(stale_out, h, &body, why.ptr);
	}
	if (r == TRICKLE_INVALID)
		return tool_invalid(t, h, body.ptr, body.len, "%s", why.ptr);
	return 0;
}

static int response_frame(struct tool *t, struct frame_reader *fr, struct headers *h)
{
	static struct buf body = BUF_INIT, why = BUF_INIT;
	const char *corr = headers_get(h, "Correlation-Id");
	int ok = 0, r = 0;

	counters[C_RESPONSES].n++;
	if (frame_reader_body(fr, &body) < 0)
		return -1;
	expr_env_bind(env, h, body.ptr, body.len);
	buf_reset(&why);
	if (corr && (r = expr_eval_bool(success_expr, env, &ok, &why)) < 0) {
		if (r == MSG_NO_MEMORY)
			tool_no_memory(t, h, why.ptr);
		return tool_invalid(t, h, body.ptr, body.len, "%s", why.ptr);
	}
	r = corr ? trickle_response(feed, corr, ok, headers_get(h, "Status"),
				    headers_get(h, "Error"), clock_now_ms()) : 0;
	if (r < 0)
		tool_state_failed(store, "cannot keep the state");
	if (r == 0) {
		counters[C_UNMATCHED].n++;
		tool_set_aside(unmatched_out, h, &body,
			       corr ? "unmatched: no message in flight has this Message-Id"
				    : "unmatched: no Correlation-Id");
	}
	return 0;
}

static int command_frame(struct tool *t, struct frame_reader *fr, struct headers *h)
{
	static struct buf why = BUF_INIT;
	enum trickle_command c;
	const char *key = headers_get(h, "Entity-Key");

	(void)t;
	(void)fr;
	counters[C_COMMANDS].n++;
	buf_reset(&why);
	if (trickle_admin_command_of(h, &c) < 0 || !key) {
		warnx_msg("warning: '%s' is not a command; ignored",
			  headers_get(h, "Message-Id") ? headers_get(h, "Message-Id") : "?");
		return 0;
	}
	const char *id = headers_get(h, "Message-Id");
	int r = id ? trickle_command(feed, c, id, key, strlen(key), clock_now_ms(), &why) : 0;
	if (r < 0)
		tool_state_failed(store, "cannot keep the state");
	if (r == 2)
		return 0;	/* applied before a crash, read again */
	if (!id)
		buf_addstr(&why, "a command without a Message-Id");
	if (r == 0) {
		warnx_msg("warning: %s; ignored", why.ptr);
		return 0;
	}
	/* The command itself applying it says so; an instance logs it. */
	if (opt.tr.hold)
		warnx_msg("%s '%s': applied", trickle_admin_command_name(c), key);
	else
		warnx_msg("%s '%s' by the operator", trickle_admin_command_name(c), key);
	return 0;
}

/* ---- the run ---- */

static void setup(struct tool *t)
{
	struct buf err = BUF_INIT;
	struct store_err serr;

	if (!opt.state)
		tool_usage_error(t, "--state is required");
	if (!(env = expr_env_new(t->ns, t->nns, &err)) ||
	    !(key_expr = expr_compile(env, opt.key, &err)) ||
	    !(version_expr = expr_compile(env, opt.version, &err)) ||
	    !(success_expr = expr_compile(env, opt.success, &err)))
		die(EX_USAGE, "%s", err.ptr);
	if (!(store = store_open(opt.state, &serr)))
		die(serr.exit, "%s", serr.msg);
	buf_release(&err);
}

/* What each operand is, for input_poll_open. */
enum {
	REQUESTS = INPUT_POLL_USER, RESPONSES = INPUT_POLL_USER << 1,
	COMMANDS = INPUT_POLL_USER << 2,
};

/*
 * Is there nothing more to wait for? With --once, when every operand is
 * at its end (a spool at what it held, a stream at its end). Else when
 * the requests are at their end, and nothing is in flight (or no
 * response can come), and no retry is pending.
 */
static int all_done(struct tool *t, struct input_poll *p)
{
	if (t->once)
		return !input_poll_open(p, REQUESTS | RESPONSES | COMMANDS);
	if (input_poll_open(p, REQUESTS))
		return 0;
	if (trickle_in_flight(feed) && input_poll_open(p, RESPONSES))
		return 0;
	return !input_poll_open(p, RESPONSES) || !trickle_retry_pending(feed);
}

static void run(struct tool *t, int nargs, char **args)
{
	static char *stdin_only[] = { "-" };
	struct input_poll *p = tool_poll_new(t);
	struct buf commands = BUF_INIT;

	trickle_admin_commands_addr(opt.state, &commands);
	if (trickle_admin_commands_make(opt.state) < 0)
		die_errno(EX_CANTCREAT, "cannot create '%s'", commands.ptr + 4);
	tool_poll_add(t, p, commands.ptr, command_frame, COMMANDS);
	for (size_t i = 0; i < opt.nresponses; i++)
		tool_poll_add(t, p, opt.responses[i], response_frame,
			      RESPONSES | INPUT_POLL_REOPEN | INPUT_POLL_DRAIN);
	for (size_t i = 0; i < opt.nresponses && nargs == 0 && !opt.tr.hold; i++)
		if (!strcmp(opt.responses[i], "-"))
			tool_usage_error(t, "requests and responses cannot both be read "
					 "from stdin: name the requests' input");
	if (nargs == 0 && !opt.tr.hold) {
		nargs = 1;
		args = stdin_only;
	}
	for (int i = 0; i < nargs; i++)
		tool_poll_add(t, p, args[i], request_frame, REQUESTS);
	for (;;) {
		input_poll_round(p);
		/* The timers due, even with no input, and what they sent
		 * written out before any wait. */
		batch_end(t);
		input_outputs_durable();
		if (io_stop_requested || all_done(t, p) ||
		    input_poll_wait(p, t->once ? 0 : trickle_deadline(feed)) < 0)
			break;
	}
	input_poll_free(p);
	buf_release(&commands);
}

static void count_end(void)
{
	const struct trickle_counts *c = trickle_counts(feed);
	struct trickle_totals tot;

	counters[C_SENT].n = c->sent;
	counters[C_SUCCEEDED].n = c->succeeded;
	counters[C_FAILED].n = c->failed;
	counters[C_RETRIED].n = c->retried;
	counters[C_RESENT].n = c->resent;
	counters[C_SUPERSEDED].n = c->superseded;
	if (trickle_admin_totals(store, &tot) < 0)
		tool_state_failed(store, "cannot read the state");
	counters[C_BLOCKED].n = tot.failed;
	counters[C_WAITING].n = tot.waiting;
	counters[C_IN_FLIGHT].n = tot.in_flight;
}

static int feed_main(int argc, char **argv, int hold)
{
	struct tool t = {
		.usage = usage,
		.shortopts = "k:v:r:s:",
		.longopts = longopts,
		.common = TOOL_OPT_OUTPUT | TOOL_OPT_INVALID | TOOL_OPT_NS |
			  TOOL_OPT_STATS | TOOL_OPT_ONCE,
		.option = option,
		.batch_end = batch_end,
		.before_data_exit = before_data_exit,
		.counters = counters,
	};
	struct trickle_out out = { &t, send_message, superseded };
	struct buf why = BUF_INIT;
	int first;

	tool_init(&t, argc, argv);
	first = tool_parse(&t, argc, argv);
	opt.tr.hold = hold;
	if (hold)
		t.once = 1;
	setup(&t);
	tool_open_outputs(&t);
	if (opt.superseded)
		superseded_out = tool_add_output(&t, opt.superseded);
	if (opt.stale)
		stale_out = tool_add_output(&t, opt.stale);
	if (opt.unmatched)
		unmatched_out = tool_add_output(&t, opt.unmatched);
	feed = trickle_new(&opt.tr, store, &out);
	if (trickle_restore(feed, clock_now_ms(), &why) < 0) {
		if (why.len)
			die(EX_USAGE, "'%s': %s", opt.state, why.ptr);
		tool_state_failed(store, "cannot read the state");
	}
	batch_end(&t);
	run(&t, argc - first, argv + first);
	count_end();
	tool_finish(&t);
	trickle_free(feed);
	store_close(store);
	expr_env_free(env);
	free(opt.responses);
	buf_release(&why);
	return tool_inputs_status();
}

int main(int argc, char **argv)
{
	int r;

	if (argc > 1 && (r = trickle_admin_main(argc, argv, feed_main)) >= 0)
		return r;
	return feed_main(argc, argv, 0);
}
