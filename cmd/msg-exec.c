/* msg-exec: Service Activator: a command run once per message, its
 * output the reply. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "diag.h"
#include "exec-args.h"
#include "exec-coproc.h"
#include "exec-pool.h"
#include "exec-reply.h"
#include "tool.h"

static const char usage[] =
	"usage: msg-exec [-P n] [--unordered] [--timeout duration] [--kill-after duration]\n"
	"                [--retry n] [--retry-delay duration] [--retry-max duration]\n"
	"                [--retry-on codes|any] [--max-output size] [--pass]\n"
	"                [--failed channel] [--reply-frames] [--coprocess]\n"
	"                [--reply-to --allow channel ...]\n"
	"                [--no-copy-headers] [-t type] [-i channel]... [--output channel]\n"
	"                [--invalid channel] [--dead-letter channel] [--once] [--stats]\n"
	"                [--] command [arg ...]";

static struct {
	struct exec_opt x;
	struct exec_reply_opt reply;
	int pass, coprocess, reply_to;
	char **allow;		/* --allow: the channels Reply-To may name */
	struct frame_writer **allowed;
	size_t nallow;
	const char *failed;
	char **inputs;
	size_t ninputs;
	int *retry_on;
} opt = {
	.x = {
		.parallel = 1, .kill_after = 5000, .max_output = 64 << 20,
		.max_output_text = "64M",
		.retry_delay = 1000, .retry_max = 60000,
	},
};
static int default_retry_on[] = { 75 };

static char **command;	/* COMMAND [ARG ...] as given */
static int ncommand;
static struct exec_pool *pool;
static struct exec_coproc *coproc;
static char **coproc_argv;	/* --coprocess's command line, braces unescaped */
extern char **environ;
static struct frame_writer *failed_out;
static uint64_t seq;
static int in_pool;	/* a result is being handed back */

static struct tool_counter counters[] = {
	{ "in", 0 }, { "runs", 0 }, { "succeeded", 0 }, { "failed", 0 },
	{ "retried", 0 }, { "timed-out", 0 }, { "invalid", 0 }, { "expired", 0 },
	{ "replies", 0 },
	{ NULL, 0 },
};
enum {
	C_IN, C_RUNS, C_SUCCEEDED, C_FAILED, C_RETRIED, C_TIMED_OUT, C_INVALID,
	C_EXPIRED, C_REPLIES,
};

enum {
	OPT_UNORDERED = 0x100, OPT_TIMEOUT, OPT_KILL_AFTER, OPT_RETRY, OPT_RETRY_DELAY,
	OPT_RETRY_MAX, OPT_RETRY_ON, OPT_MAX_OUTPUT, OPT_PASS, OPT_FAILED,
	OPT_REPLY_FRAMES, OPT_NO_COPY, OPT_COPROCESS, OPT_REPLY_TO, OPT_ALLOW,
};

static const struct option longopts[] = {
	{ "parallel", required_argument, NULL, 'P' },
	{ "unordered", no_argument, NULL, OPT_UNORDERED },
	{ "timeout", required_argument, NULL, OPT_TIMEOUT },
	{ "kill-after", required_argument, NULL, OPT_KILL_AFTER },
	{ "retry", required_argument, NULL, OPT_RETRY },
	{ "retry-delay", required_argument, NULL, OPT_RETRY_DELAY },
	{ "retry-max", required_argument, NULL, OPT_RETRY_MAX },
	{ "retry-on", required_argument, NULL, OPT_RETRY_ON },
	{ "max-output", required_argument, NULL, OPT_MAX_OUTPUT },
	{ "pass", no_argument, NULL, OPT_PASS },
	{ "failed", required_argument, NULL, OPT_FAILED },
	{ "reply-frames", no_argument, NULL, OPT_REPLY_FRAMES },
	{ "no-copy-headers", no_argument, NULL, OPT_NO_COPY },
	{ "coprocess", no_argument, NULL, OPT_COPROCESS },
	{ "reply-to", no_argument, NULL, OPT_REPLY_TO },
	{ "allow", required_argument, NULL, OPT_ALLOW },
	{ "content-type", required_argument, NULL, 't' },
	{ "input", required_argument, NULL, 'i' },
	{ NULL, 0, NULL, 0 },
};

/* --retry-on: "any", or exit statuses separated by commas. */
static void retry_on(struct tool *t, const char *arg)
{
	char *copy = xstrdup(arg), *save = NULL;

	if (!strcmp(arg, "any")) {
		opt.x.retry_any = 1;
		free(copy);
		return;
	}
	opt.x.nretry_on = 0;
	for (char *w = strtok_r(copy, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
		char *end;
		long v = strtol(w, &end, 10);
		if (*end || end == w || v < 0 || v > 255)
			tool_usage_error(t, "--retry-on wants exit statuses 0 to 255 or 'any', not '%s'", arg);
		opt.retry_on = xrealloc(opt.retry_on, (opt.x.nretry_on + 1) * sizeof(int));
		opt.retry_on[opt.x.nretry_on++] = (int)v;
	}
	free(copy);
	opt.x.retry_on = opt.retry_on;
}

static int option(struct tool *t, int c, const char *arg)
{
	switch (c) {
	case 'P':
		opt.x.parallel = (unsigned)tool_arg_count(t, "-P", arg);
		if (!opt.x.parallel || opt.x.parallel > 1024)
			tool_usage_error(t, "-P wants 1 to 1024 children, not '%s'", arg);
		return 0;
	case OPT_UNORDERED: opt.x.unordered = 1; return 0;
	case OPT_TIMEOUT: opt.x.timeout = tool_arg_duration(t, "--timeout", arg); return 0;
	case OPT_KILL_AFTER: opt.x.kill_after = tool_arg_duration(t, "--kill-after", arg); return 0;
	case OPT_RETRY: opt.x.retries = (unsigned)tool_arg_count(t, "--retry", arg); return 0;
	case OPT_RETRY_DELAY: opt.x.retry_delay = tool_arg_duration(t, "--retry-delay", arg); return 0;
	case OPT_RETRY_MAX: opt.x.retry_max = tool_arg_duration(t, "--retry-max", arg); return 0;
	case OPT_RETRY_ON: retry_on(t, arg); return 0;
	case OPT_MAX_OUTPUT:
		opt.x.max_output = tool_arg_size(t, "--max-output", arg);
		opt.x.max_output_text = arg;
		return 0;
	case OPT_PASS: opt.pass = 1; return 0;
	case OPT_FAILED: opt.failed = arg; return 0;
	case OPT_REPLY_FRAMES: opt.reply.reply_frames = 1; return 0;
	case OPT_NO_COPY: opt.reply.no_copy = 1; return 0;
	case OPT_COPROCESS: opt.coprocess = 1; return 0;
	case OPT_REPLY_TO: opt.reply_to = 1; return 0;
	case OPT_ALLOW:
		opt.allow = xrealloc(opt.allow, (opt.nallow + 1) * sizeof(*opt.allow));
		opt.allow[opt.nallow++] = (char *)arg;
		return 0;
	case 't': opt.reply.content_type = arg; return 0;
	case 'i':
		opt.inputs = xrealloc(opt.inputs, (opt.ninputs + 1) * sizeof(*opt.inputs));
		opt.inputs[opt.ninputs++] = (char *)arg;
		return 0;
	}
	return -1;
}

/* ---- results ---- */

/* Where a request's reply goes: its Reply-To (Return Address), checked
 * when it was read against --allow, or the main output. -1 for one not
 * allowed. */
static long allowed_index(const struct headers *h)
{
	const char *to = opt.reply_to ? headers_get(h, "Reply-To") : NULL;

	if (!to)
		return (long)opt.nallow;
	for (size_t i = 0; i < opt.nallow; i++)
		if (!strcmp(opt.allow[i], to))
			return (long)i;
	return -1;
}

static struct frame_writer *reply_channel(struct tool *t, const struct headers *h)
{
	long i = allowed_index(h);

	return i >= 0 && (size_t)i < opt.nallow ? opt.allowed[i] : t->out;
}

/* A final result: its reply, or under --pass the request or its failure. */
static void job_done(void *ctx, struct exec_job *j)
{
	static struct headers h;
	static int h_ready;
	struct tool *t = ctx;
	struct buf why = BUF_INIT;
	const char *body;
	size_t len;
	int ok;

	if (!h_ready)
		headers_init(&h), h_ready = 1;
	in_pool = 1;
	ok = exec_reply(j, &opt.x, &opt.reply, &h, &body, &len);
	counters[ok ? C_SUCCEEDED : C_FAILED].n++;
	if (!opt.pass) {
		if (tool_write(reply_channel(t, &j->h), &h, body, len, &why) < 0)
			tool_invalid(t, &j->h, j->body.ptr, j->body.len, "%s", why.ptr);
		else
			counters[C_REPLIES].n++;
	} else if (ok) {
		if (tool_write_block(t->out, j->block.ptr, j->block.len, j->body.ptr,
				     j->body.len, &why) < 0)
			tool_invalid(t, &j->h, j->body.ptr, j->body.len, "%s", why.ptr);
	} else {
		const char *reason = headers_get(&h, "Error");
		if (!failed_out)
			die(EX_SOFTWARE, "message %s: command failed: %s", j->id,
			    reason + strlen(progname) + 2);
		frame_set_error(&j->h, j->body.len, reason);
		if (tool_write(failed_out, &j->h, j->body.ptr, j->body.len, &why) < 0)
			tool_invalid(t, &j->h, j->body.ptr, j->body.len, "%s", why.ptr);
	}
	in_pool = 0;
	buf_release(&why);
}

/* Every child in hand finished and its result out: before the inputs'
 * batch is made durable and done. */
static int batch_end(struct tool *t)
{
	(void)t;
	if ((coproc ? exec_coproc_drain(coproc) : exec_pool_drain(pool)) < 0)
		die_errno(EX_OSERR, "cannot run '%s'", command[0]);
	return 0;
}

/* A stop at bad data: the children in hand are for messages before it,
 * whose replies go out first (not from inside the pool itself). */
static void before_data_exit(struct tool *t)
{
	static int once;

	if (once++ || in_pool)
		return;
	batch_end(t);
}

/* ---- one message ---- */

static int exec_frame(struct tool *t, struct frame_reader *fr, struct headers *h)
{
	struct exec_job *j = exec_job_new();
	struct buf why = BUF_INIT;
	const char *id = headers_get(h, "Message-Id");

	counters[C_IN].n++;
	if (tool_read_block(fr, &j->block, &j->body) < 0) {
		exec_job_free(j);
		return -1;
	}
	if (coproc) {
		headers_copy(&j->h, h);
		snprintf(j->id, sizeof(j->id), "%s", id ? id : "(no Message-Id)");
		if (exec_coproc_submit(coproc, j) < 0)
			die_errno(EX_OSERR, "cannot run '%s'", command[0]);
		return 0;
	}
	if (allowed_index(h) < 0) {
		tool_invalid(t, h, j->body.ptr, j->body.len,
			     "Reply-To '%s' is not a channel given with --allow",
			     headers_get(h, "Reply-To"));
		exec_job_free(j);
		return 0;
	}
	if (exec_argv(command, ncommand, h, &j->argv, &why) < 0 ||
	    exec_envp(h, &j->envp, &why) < 0) {
		tool_invalid(t, h, j->body.ptr, j->body.len, "%s", why.ptr);
		exec_job_free(j);
		buf_release(&why);
		return 0;
	}
	buf_release(&why);
	headers_copy(&j->h, h);
	snprintf(j->id, sizeof(j->id), "%s", id ? id : "(no Message-Id)");
	j->seq = seq++;
	if (exec_pool_submit(pool, j) < 0)
		die_errno(EX_OSERR, "cannot run '%s'", command[0]);
	return 0;
}

/* ---- start ---- */

/* --coprocess runs one command line for every message: its {{ and }}
 * written as braces, and no {Name}. */
static void coprocess_argv(struct tool *t, char **args, int n)
{
	struct headers none;
	struct buf why = BUF_INIT;

	headers_init(&none);
	if (exec_argv(args, n, &none, &coproc_argv, &why) < 0)
		tool_usage_error(t, "--coprocess runs one command line for every "
				 "message: %s", why.ptr);
	headers_release(&none);
	buf_release(&why);
}

int main(int argc, char **argv)
{
	static char *stdin_only[] = { "-" };
	struct tool t = {
		.usage = usage,
		.shortopts = "P:t:i:",
		.options_first = 1,
		.longopts = longopts,
		.common = TOOL_OPT_OUTPUT | TOOL_OPT_INVALID | TOOL_OPT_DEAD_LETTER |
			  TOOL_OPT_STATS | TOOL_OPT_ONCE | TOOL_EXPIRES,
		.option = option,
		.batch_end = batch_end,
		.before_data_exit = before_data_exit,
		.counters = counters,
	};
	struct buf why = BUF_INIT;
	char *path;
	int first;

	tool_init(&t, argc, argv);
	/* A command that does not read all of its stdin is no error of ours. */
	signal(SIGPIPE, SIG_IGN);
	first = tool_parse(&t, argc, argv);
	if (first >= argc)
		tool_usage_error(&t, "no command to run");
	if (opt.failed && !opt.pass)
		tool_usage_error(&t, "--failed goes with --pass");
	if (opt.coprocess && opt.x.parallel > 1)
		tool_usage_error(&t, "--coprocess runs one process: no -P");
	if (opt.coprocess)
		coprocess_argv(&t, argv + first, argc - first);
	if (opt.coprocess)
		opt.reply.reply_frames = 1;
	command = argv + first;
	ncommand = argc - first;
	if (exec_check_names(command, ncommand, &why) < 0)
		tool_usage_error(&t, "%s", why.ptr);
	if (!(path = exec_resolve(command[0])))
		die_errno(EX_UNAVAILABLE, "cannot run '%s'", command[0]);
	opt.x.path = path;
	if (!opt.x.retry_any && !opt.x.nretry_on) {
		opt.x.retry_on = default_retry_on;
		opt.x.nretry_on = 1;
	}
	opt.reply.progname = progname;
	tool_open_outputs(&t);
	if (opt.failed)
		failed_out = tool_add_output(&t, opt.failed);
	if (opt.nallow && !opt.reply_to)
		tool_usage_error(&t, "--allow goes with --reply-to");
	opt.allowed = xcalloc(opt.nallow + 1, sizeof(*opt.allowed));
	for (size_t i = 0; i < opt.nallow; i++)
		opt.allowed[i] = tool_add_output(&t, opt.allow[i]);
	if (opt.coprocess)
		coproc = exec_coproc_new(&opt.x, coproc_argv, environ, job_done, &t);
	else
		pool = exec_pool_new(&opt.x, job_done, &t);
	tool_each_frame(&t, opt.ninputs ? (int)opt.ninputs : 1,
			opt.ninputs ? opt.inputs : stdin_only, exec_frame);
	batch_end(&t);
	if (coproc)
		exec_coproc_end(coproc);	/* its end waited for, counted */
	const struct exec_pool_counts *n = coproc ? exec_coproc_counts(coproc) :
						    exec_pool_counts(pool);
	counters[C_RUNS].n = n->runs;
	counters[C_RETRIED].n = n->retried;
	counters[C_TIMED_OUT].n = n->timed_out;
	int cut = n->cut_short > 0;
	tool_finish(&t);
	exec_pool_free(pool);
	exec_coproc_free(coproc);
	exec_strings_free(coproc_argv);
	free(path);
	free(opt.inputs);
	free(opt.allow);
	free(opt.allowed);
	free(opt.retry_on);
	if (cut)
		return EX_TEMPFAIL;
	return tool_inputs_status();
}
