/* msg-aggregate: Aggregator. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "aggregate-eval.h"
#include "aggregator.h"
#include "clock.h"
#include "diag.h"
#include "store.h"
#include "tool.h"
#include "tool-state.h"

static const char usage[] =
	"usage: msg-aggregate [-c expr] [-n count] [-u expr] [-T duration] [-i duration]\n"
	"                     [--close-on expr] [--include-close]\n"
	"                     [--at-end flush|discard|fail|keep] [-W name] [--separator text]\n"
	"                     [-b expr --min|--max] [-x stylesheet] [-p name=xpath] [-s name=string]\n"
	"                     [--partial channel] [--late channel] [--remember duration]\n"
	"                     [--max-groups n] [--max-members n] [--max-bytes size]\n"
	"                     [--on-limit release-oldest|block|fail] [--state dir]\n"
	"                     [--clock event|wall] [--deterministic-ids] [--ns prefix=uri]\n"
	"                     [--output channel] [--invalid channel] [--dead-letter channel]\n"
	"                     [--once] [--stats] [input ...]";

/* As given on the command line. */
static struct {
	struct agg_eval_opt eval;
	const char *state, *partial, *late, *separator;
	int include_close, at_end_set;
	enum aggregator_at_end at_end;
	struct aggregator_opt a;
} opt = {
	.eval.correlate = "header('Correlation-Id')",
	.a = {
		.lim = { .max_groups = 100000, .max_members = 100000,
			 .max_bytes = 256ull << 20 },
		.remember_ms = 3600 * 1000,
	},
};

static struct agg_eval *eval;
static struct store *store;
static struct aggregator *agg;
static struct frame_writer *partial_out, *late_out;
static struct tool_state state;
/* The message being handled, while it is: a stop at a group names the
 * place in the input it came to, not the group's new message. */
static const struct headers *in_hand;

static struct tool_counter counters[] = {
	{ "in", 0 }, { "members", 0 }, { "duplicates", 0 }, { "late", 0 },
	{ "invalid", 0 }, { "expired", 0 }, { "released", 0 },
	{ "complete", 0 }, { "count", 0 }, { "until", 0 }, { "timeout", 0 },
	{ "idle", 0 }, { "close", 0 }, { "end", 0 }, { "limit", 0 },
	{ "partial", 0 }, { "discarded", 0 }, { "open", 0 }, { NULL, 0 },
};
enum { C_IN, C_MEMBERS, C_DUPLICATES, C_LATE, C_INVALID, C_EXPIRED,
       C_RELEASED, C_REASONS, C_PARTIAL = C_REASONS + 8, C_DISCARDED, C_OPEN };

enum {
	OPT_CLOSE_ON = 0x100, OPT_INCLUDE_CLOSE, OPT_AT_END, OPT_SEPARATOR,
	OPT_MIN, OPT_MAX, OPT_PARTIAL, OPT_LATE, OPT_REMEMBER, OPT_MAX_GROUPS,
	OPT_MAX_MEMBERS, OPT_MAX_BYTES, OPT_ON_LIMIT, OPT_STATE, OPT_CLOCK,
	OPT_DETERMINISTIC,
};

static const struct option longopts[] = {
	{ "correlate", required_argument, NULL, 'c' },
	{ "count", required_argument, NULL, 'n' },
	{ "until", required_argument, NULL, 'u' },
	{ "timeout", required_argument, NULL, 'T' },
	{ "idle", required_argument, NULL, 'i' },
	{ "close-on", required_argument, NULL, OPT_CLOSE_ON },
	{ "include-close", no_argument, NULL, OPT_INCLUDE_CLOSE },
	{ "at-end", required_argument, NULL, OPT_AT_END },
	{ "wrap", required_argument, NULL, 'W' },
	{ "separator", required_argument, NULL, OPT_SEPARATOR },
	{ "best", required_argument, NULL, 'b' },
	{ "min", no_argument, NULL, OPT_MIN },
	{ "max", no_argument, NULL, OPT_MAX },
	{ "xslt", required_argument, NULL, 'x' },
	{ "param", required_argument, NULL, 'p' },
	{ "stringparam", required_argument, NULL, 's' },
	{ "partial", required_argument, NULL, OPT_PARTIAL },
	{ "late", required_argument, NULL, OPT_LATE },
	{ "remember", required_argument, NULL, OPT_REMEMBER },
	{ "max-groups", required_argument, NULL, OPT_MAX_GROUPS },
	{ "max-members", required_argument, NULL, OPT_MAX_MEMBERS },
	{ "max-bytes", required_argument, NULL, OPT_MAX_BYTES },
	{ "on-limit", required_argument, NULL, OPT_ON_LIMIT },
	{ "state", required_argument, NULL, OPT_STATE },
	{ "clock", required_argument, NULL, OPT_CLOCK },
	{ "deterministic-ids", no_argument, NULL, OPT_DETERMINISTIC },
	{ NULL, 0, NULL, 0 },
};

/* --separator's escapes: \n, \t and \\. */
static char *unescape(const char *s, size_t *len)
{
	char *out = xmalloc(strlen(s) + 1), *o = out;

	for (; *s; s++) {
		if (*s != '\\' || !s[1]) {
			*o++ = *s;
			continue;
		}
		s++;
		*o++ = *s == 'n' ? '\n' : *s == 't' ? '\t' : *s;
	}
	*len = (size_t)(o - out);
	return out;
}

static void add_param(const char *kind, const char *arg)
{
	static char **params;
	struct agg_eval_opt *e = &opt.eval;

	params = xrealloc(params, (e->nparams + 2) * sizeof(*params));
	params[e->nparams++] = (char *)kind;
	params[e->nparams++] = (char *)arg;
	e->params = params;
}

static int option(struct tool *t, int c, const char *arg)
{
	static const char *const at_end[] = { "flush", "discard", "fail", "keep", NULL };
	static const char *const on_limit[] = { "release-oldest", "block", "fail", NULL };
	static const char *const clock[] = { "wall", "event", NULL };
	switch (c) {
	case 'c': opt.eval.correlate = arg; return 0;
	case 'n': opt.a.lim.count = tool_arg_count(t, "-n", arg); return 0;
	case 'u': opt.eval.until = arg; return 0;
	case 'T': opt.a.lim.timeout_ms = tool_arg_duration(t, "-T", arg); return 0;
	case 'i': opt.a.lim.idle_ms = tool_arg_duration(t, "-i", arg); return 0;
	case OPT_CLOSE_ON: opt.eval.close_on = arg; return 0;
	case OPT_INCLUDE_CLOSE: opt.include_close = 1; return 0;
	case OPT_AT_END:
		opt.at_end = (enum aggregator_at_end)tool_arg_choice(t, "--at-end", arg, at_end);
		opt.at_end_set = 1;
		return 0;
	case 'W': opt.a.build.wrap = arg; return 0;
	case OPT_SEPARATOR: opt.separator = arg; return 0;
	case 'b': opt.eval.best = arg; return 0;
	case OPT_MIN: opt.a.build.best = AGG_BEST_MIN; return 0;
	case OPT_MAX: opt.a.build.best = AGG_BEST_MAX; return 0;
	case 'x': opt.eval.xslt = arg; return 0;
	case 'p': case 's':
		if (!strchr(arg, '=') || *arg == '=')
			tool_usage_error(t, "-%c takes name=value, not '%s'", c, arg);
		add_param(c == 'p' ? "p" : "s", arg);
		return 0;
	case OPT_PARTIAL: opt.partial = arg; return 0;
	case OPT_LATE: opt.late = arg; return 0;
	case OPT_REMEMBER: opt.a.remember_ms = tool_arg_duration(t, "--remember", arg); return 0;
	case OPT_MAX_GROUPS: opt.a.lim.max_groups = tool_arg_count(t, "--max-groups", arg); return 0;
	case OPT_MAX_MEMBERS: opt.a.lim.max_members = tool_arg_count(t, "--max-members", arg); return 0;
	case OPT_MAX_BYTES: opt.a.lim.max_bytes = tool_arg_size(t, "--max-bytes", arg); return 0;
	case OPT_ON_LIMIT:
		opt.a.on_limit = (enum aggregator_on_limit)tool_arg_choice(t, "--on-limit", arg, on_limit);
		return 0;
	case OPT_STATE: opt.state = arg; return 0;
	case OPT_CLOCK: state.clock.event = tool_arg_choice(t, "--clock", arg, clock); return 0;
	case OPT_DETERMINISTIC: opt.a.deterministic_ids = 1; return 0;
	}
	return -1;
}

/* ---- what a group becomes, and where it goes ---- */

static int emit(void *ctx, const struct headers *h, const struct buf *body,
		int partial, struct buf *why)
{
	struct tool *t = ctx;
	struct frame_writer *fw = partial && partial_out ? partial_out : t->out;

	return tool_write(fw, h, body->ptr, body->len, why);
}

static void invalid_group(void *ctx, struct headers *h, const struct buf *body,
			  const char *why)
{
	struct tool *t = ctx;
	struct buf line = BUF_INIT;

	if (t->invalid) {
		tool_invalid(t, h, body->ptr, body->len, "%s", why);
		return;
	}
	/* Setting aside the message in hand would lose the members read
	 * before it: stop before the batch is done, so that they stay in
	 * the state and the spool for a run with --invalid. h is the new
	 * message, found nowhere: why names the members. */
	buf_addf(&line, "group '%s' of %s members cannot be one message: %s",
		 headers_get(h, "Correlation-Id"), headers_get(h, "Aggregate-Size"), why);
	if (in_hand)
		tool_stop_at(t, in_hand, EX_DATAERR, line.ptr);
	die(EX_DATAERR, "%s", line.ptr);
}

/* ---- state and time ---- */

static int run_sync(void *run) { return aggregator_sync(run); }
static int run_tick(void *run, int64_t now) { return aggregator_tick(run, now); }
static int64_t run_deadline(void *run) { return aggregator_next_deadline(run); }

static _Noreturn void state_failed(const char *doing)
{
	tool_state_failed(store, doing);
}

static int64_t now_ms(void)
{
	return tool_clock_now(&state.clock);
}

/* The end of an input batch: state durable, then what it gave. */
static int batch_end(struct tool *t)
{
	(void)t;
	tool_state_sync(&state);
	return 0;
}

/* ---- one message ---- */

static void late(struct headers *h, struct buf *body)
{
	counters[C_LATE].n++;
	tool_set_aside(late_out, h, body, "late: its group was already released");
}

static int add(struct tool *t, struct headers *h, struct buf *body,
	       struct agg_input *in)
{
	enum agg_added res;
	const char *why;

	for (;;) {
		if (aggregator_add(agg, in, &res, &why) < 0)
			state_failed("cannot keep the state");
		if (res < AGG_FULL_GROUPS)
			break;
		/* No release makes room for it, under any policy: the
		 * message's fault, not a limit to wait out or retry. */
		if (res == AGG_FULL_BYTES && body->len > opt.a.lim.max_bytes)
			return tool_invalid(t, h, body->ptr, body->len,
					    "the message alone is over %s", why);
		if (opt.a.on_limit == AGGR_BLOCK && tool_state_wait(&state) == 0) {
			in->now = now_ms();	/* it arrives after the wait */
			continue;
		}
		die(EX_TEMPFAIL, "limit %s reached at message %s", why,
		    headers_get(h, "Message-Id") ? headers_get(h, "Message-Id") : "without Message-Id");
	}
	if (res == AGG_INVALID)
		return tool_invalid(t, h, body->ptr, body->len, "%s", why);
	counters[res == AGG_DUPLICATE ? C_DUPLICATES : C_MEMBERS].n++;
	return 0;
}

static int aggregate_message(struct tool *t, struct frame_reader *fr, struct headers *h)
{
	static struct buf body = BUF_INIT, key = BUF_INIT, why = BUF_INIT;
	struct agg_input in = { .h = h, .best = NAN };
	int closing, r;

	counters[C_IN].n++;
	if (frame_reader_body(fr, &body) < 0)
		return -1;
	if (tool_clock_message(&state.clock, t, h, &body, &in.now) < 0)
		return 0;
	tool_state_tick(&state, in.now);
	buf_reset(&why);
	r = agg_eval_message(eval, h, body.ptr, body.len, opt.include_close,
			     &key, &closing, &in, &why);
	if (r == MSG_NO_MEMORY)
		tool_no_memory(t, h, why.ptr);
	if (r < 0)
		return tool_invalid(t, h, body.ptr, body.len, "%s", why.ptr);
	switch (aggregator_closed(agg, key.ptr, key.len,
				  headers_get(h, "Message-Id"), in.now)) {
	case AGG_NOT_CLOSED:
		break;
	case AGG_REDELIVERED:	/* a member of the released group again */
		counters[C_DUPLICATES].n++;
		return 0;
	case AGG_LATE:
		late(h, &body);
		return 0;
	}
	in.key = key.ptr;
	in.key_len = key.len;
	in.body = body.ptr;
	in.len = body.len;
	if ((!closing || opt.include_close) && add(t, h, &body, &in) < 0)
		return 0;
	/* A closing member has its group, unless it was refused. */
	if (closing && aggregator_close(agg, key.ptr, key.len, h,
					!opt.include_close, in.now) < 0)
		state_failed("cannot keep the state");
	/* Results waiting for a commit are bounded too. */
	if (aggregator_held(agg) >= 256)
		batch_end(t);
	return 0;
}

static int aggregate_frame(struct tool *t, struct frame_reader *fr, struct headers *h)
{
	int r;

	in_hand = h;
	r = aggregate_message(t, fr, h);
	in_hand = NULL;
	return r;
}

/* ---- start and end ---- */

static void check_options(struct tool *t)
{
	if (opt.eval.best && !opt.a.build.best)
		tool_usage_error(t, "-b needs --min or --max");
	if (!opt.eval.best && opt.a.build.best)
		tool_usage_error(t, "--min and --max need -b");
	if (opt.eval.nparams && !opt.eval.xslt)
		tool_usage_error(t, "-p and -s need -x");
	if (opt.at_end == AGGR_KEEP && !opt.state)
		tool_usage_error(t, "--at-end keep needs --state");
	if (!opt.at_end_set)
		opt.at_end = opt.state ? AGGR_KEEP : AGGR_FLUSH;
	if (opt.separator)
		opt.a.build.separator = unescape(opt.separator, &opt.a.build.separator_len);
}

static void setup(struct tool *t)
{
	struct aggregator_out out = {
		.ctx = t, .emit = emit, .invalid = invalid_group,
	};
	struct buf err = BUF_INIT;
	struct store_err serr;

	check_options(t);
	opt.eval.ns = t->ns;
	opt.eval.nns = t->nns;
	if (!(eval = agg_eval_new(&opt.eval, &err)))
		die(errno == ENOENT && opt.eval.xslt ? EX_NOINPUT : EX_USAGE,
		    "%s", err.ptr);
	if (opt.state && !(store = store_open(opt.state, &serr)))
		die(serr.exit, "%s", serr.msg);
	agg = aggregator_new(&opt.a, &out, eval, store);
	state.store = store;
	state.run = agg;
	state.sync = run_sync;
	state.tick = run_tick;
	state.deadline = run_deadline;
	buf_release(&err);
}

static void finish(struct tool *t)
{
	const struct aggregator_stats *st;
	int64_t open = aggregator_end(agg, opt.at_end, now_ms());

	/* Twice: the first writes the last results, the second commits the
	 * deletion of their groups, queued once they were durable. */
	if (open < 0 || aggregator_sync(agg) < 0 || aggregator_sync(agg) < 0)
		state_failed("cannot keep the state");
	st = aggregator_stats(agg);
	counters[C_RELEASED].n = st->released;
	for (int r = AGG_COMPLETE; r <= AGG_LIMIT; r++)
		counters[C_REASONS + r - AGG_COMPLETE].n = st->by_reason[r];
	counters[C_PARTIAL].n = st->partial;
	counters[C_DISCARDED].n = st->discarded;
	counters[C_OPEN].n = aggregator_open_groups(agg);
	/* --stats too when the open groups fail the run, as msg-resequence
	 * does: how many are left is what a cron mail is read for. */
	tool_finish(t);
	if (opt.at_end == AGGR_FAIL_END && open > 0)
		die(EX_DATAERR, "%lld group%s still open at the end of input",
		    (long long)open, open == 1 ? "" : "s");
}

int main(int argc, char **argv)
{
	struct tool t = {
		.usage = usage,
		.shortopts = "c:n:u:T:i:W:b:x:p:s:",
		.longopts = longopts,
		.common = TOOL_OPT_OUTPUT | TOOL_OPT_INVALID | TOOL_OPT_DEAD_LETTER |
			  TOOL_OPT_NS | TOOL_OPT_STATS | TOOL_OPT_ONCE | TOOL_EXPIRES,
		.option = option,
		.batch_end = batch_end,
		.counters = counters,
	};
	int first;

	tool_init(&t, argc, argv);
	first = tool_parse(&t, argc, argv);
	setup(&t);
	tool_open_outputs(&t);
	if (opt.partial)
		partial_out = tool_add_output(&t, opt.partial);
	if (opt.late)
		late_out = tool_add_output(&t, opt.late);
	if (aggregator_restore(agg, now_ms()) < 0)
		state_failed("cannot read the state");
	batch_end(&t);
	tool_state_timers(&state);
	tool_each_frame(&t, argc - first, argv + first, aggregate_frame);
	tool_state_timers(NULL);
	finish(&t);
	aggregator_free(agg);
	if (store)
		store_close(store);
	agg_eval_free(eval);
	return tool_inputs_status();
}
