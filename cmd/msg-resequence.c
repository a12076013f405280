/* msg-resequence: Resequencer. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "diag.h"
#include "expr.h"
#include "msgrec.h"
#include "resequencer.h"
#include "resequence-batch.h"
#include "seqset.h"
#include "store.h"
#include "tool.h"
#include "tool-state.h"

static const char usage[] =
	"usage: msg-resequence [-b expr] [-g expr] [--start n|first] [--window n]\n"
	"                      [-T duration] [--at-end flush|fail|keep] [--late channel]\n"
	"                      [--forget duration] [-C n] [--max-bytes size]\n"
	"                      [--on-full skip|block|fail] [--batch] [--state dir]\n"
	"                      [--clock event|wall] [--ns prefix=uri]\n"
	"                      [--output channel] [--invalid channel] [--dead-letter channel]\n"
	"                      [--once] [--stats] [input ...]";

/* As given on the command line. */
static struct {
	const char *by, *group, *state, *late;
	int at_end_set, batch, timeout_set, limits_set;
	enum resequencer_at_end at_end;
	struct resequencer_opt r;
} opt = {
	.by = "header('Sequence-Number')",
	.group = "header('Correlation-Id')",
	.r = {
		.lim = { .start = 1, .window = 100, .capacity = 10000,
			 .max_bytes = 256ull << 20 },
		.forget_ms = 3600 * 1000,
	},
};

static struct expr_env *env;
static struct expr *by, *group;
static struct store *store;
static struct resequencer *rsq;
static struct rsq_batch *batch;
static struct frame_writer *late_out;
static struct tool_state state;

static struct tool_counter counters[] = {
	{ "in", 0 }, { "out", 0 }, { "gaps", 0 }, { "skipped", 0 },
	{ "late", 0 }, { "duplicates", 0 }, { "invalid", 0 }, { "expired", 0 },
	{ "waiting", 0 }, { "most", 0 }, { NULL, 0 },
};
enum { C_IN, C_OUT, C_GAPS, C_SKIPPED, C_LATE, C_DUPLICATES, C_INVALID,
       C_EXPIRED, C_WAITING, C_MOST };

enum {
	OPT_START = 0x100, OPT_WINDOW, OPT_AT_END, OPT_LATE, OPT_FORGET,
	OPT_MAX_BYTES, OPT_ON_FULL, OPT_BATCH, OPT_STATE, OPT_CLOCK,
};

static const struct option longopts[] = {
	{ "by", required_argument, NULL, 'b' },
	{ "group", required_argument, NULL, 'g' },
	{ "start", required_argument, NULL, OPT_START },
	{ "window", required_argument, NULL, OPT_WINDOW },
	{ "timeout", required_argument, NULL, 'T' },
	{ "at-end", required_argument, NULL, OPT_AT_END },
	{ "late", required_argument, NULL, OPT_LATE },
	{ "forget", required_argument, NULL, OPT_FORGET },
	{ "capacity", required_argument, NULL, 'C' },
	{ "max-bytes", required_argument, NULL, OPT_MAX_BYTES },
	{ "on-full", required_argument, NULL, OPT_ON_FULL },
	{ "batch", no_argument, NULL, OPT_BATCH },
	{ "state", required_argument, NULL, OPT_STATE },
	{ "clock", required_argument, NULL, OPT_CLOCK },
	{ NULL, 0, NULL, 0 },
};

static void start_option(struct tool *t, const char *arg)
{
	const char *why;

	if (!strcmp(arg, "first")) {
		opt.r.lim.start_first = 1;
		return;
	}
	if (seq_parse(arg, 0, &opt.r.lim.start, &why) < 0)
		tool_usage_error(t, "--start takes a number or first, not '%s'", arg);
}

static int option(struct tool *t, int c, const char *arg)
{
	static const char *const at_end[] = { "flush", "fail", "keep", NULL };
	static const char *const on_full[] = { "skip", "block", "fail", NULL };
	static const char *const clock[] = { "wall", "event", NULL };

	switch (c) {
	case 'b': opt.by = arg; return 0;
	case 'g': opt.group = arg; return 0;
	case OPT_START: start_option(t, arg); return 0;
	case OPT_WINDOW: opt.r.lim.window = tool_arg_count(t, "--window", arg); return 0;
	case 'T':
		opt.r.lim.timeout_ms = tool_arg_duration(t, "-T", arg);
		opt.timeout_set = 1;
		return 0;
	case OPT_AT_END:
		opt.at_end = (enum resequencer_at_end)tool_arg_choice(t, "--at-end", arg, at_end);
		opt.at_end_set = 1;
		return 0;
	case OPT_LATE: opt.late = arg; return 0;
	case OPT_FORGET: opt.r.forget_ms = tool_arg_duration(t, "--forget", arg); return 0;
	case 'C':
		opt.r.lim.capacity = tool_arg_count(t, "-C", arg);
		opt.limits_set = 1;
		return 0;
	case OPT_MAX_BYTES: opt.r.lim.max_bytes = tool_arg_size(t, "--max-bytes", arg); return 0;
	case OPT_ON_FULL:
		opt.r.on_full = (enum resequencer_on_full)tool_arg_choice(t, "--on-full", arg, on_full);
		opt.limits_set = 1;
		return 0;
	case OPT_BATCH: opt.batch = 1; return 0;
	case OPT_STATE: opt.state = arg; return 0;
	case OPT_CLOCK: state.clock.event = tool_arg_choice(t, "--clock", arg, clock); return 0;
	}
	return -1;
}

/* ---- where messages go ---- */

static int emit(void *ctx, const char *block, size_t block_len,
		const char *body, size_t len, struct buf *why)
{
	struct tool *t = ctx;

	return tool_write_block(t->out, block, block_len, body, len, why);
}

static void refuse(void *ctx, const char *block, size_t block_len,
		   const char *body, size_t len, const char *why)
{
	struct headers h = HEADERS_INIT;

	/* The block was read as a frame: it parses. */
	(void)msgrec_parse_block(block, block_len, &h);
	tool_invalid(ctx, &h, body, len, "%s", why);
	headers_release(&h);
}

/* A duplicate or a late message: to --late, or dropped with a warning. */
static void set_aside(struct headers *h, const struct buf *body, int counter,
		      const char *what)
{
	counters[counter].n++;
	tool_set_aside(late_out, h, body, what);
}

/* ---- state and time ---- */

static int run_sync(void *run) { return resequencer_sync(run); }
static int run_tick(void *run, int64_t now) { return resequencer_tick(run, now); }
static int64_t run_deadline(void *run) { return resequencer_next_deadline(run); }

static _Noreturn void state_failed(const char *doing)
{
	tool_state_failed(store, doing);
}

static int64_t now_ms(void)
{
	return tool_clock_now(&state.clock);
}

/* The end of an input batch: state durable, then what it let out. */
static int batch_end(struct tool *t)
{
	(void)t;
	if (rsq)
		tool_state_sync(&state);
	return 0;
}

/* ---- one message ---- */

/* The group, number and Sequence-Size of the bound message into in:
 * 0, or -1 with why. */
static int numbers(const struct headers *h, struct rsq_input *in,
		   struct buf *key, struct buf *num, struct buf *why)
{
	const char *size = headers_get(h, "Sequence-Size"), *bad;
	int r;

	if ((r = expr_eval_string(group, env, key, why)) < 0 ||
	    (r = expr_eval_string(by, env, num, why)) < 0)
		return r;
	in->key = key->ptr;
	in->key_len = key->len;
	if (size && seq_parse(size, 0, &in->size, &bad) < 0) {
		buf_addf(why, "Sequence-Size '%s': %s", size, bad);
		return -1;
	}
	in->size_known = size != NULL;
	if (!num->len) {
		in->marker = in->size_known && in->size == 0;
		if (!in->marker)
			buf_addstr(why, "no sequence number");
		return in->marker ? 0 : -1;
	}
	if (seq_parse(num->ptr, 0, &in->num, &bad) < 0) {
		buf_addf(why, "sequence number '%s': %s", num->ptr, bad);
		return -1;
	}
	return 0;
}

/* The limit why names ("-C" or "--max-bytes"), as "10000 messages". */
static void limit_text(const char *why, struct buf *out)
{
	if (!strcmp(why, "-C"))
		buf_addf(out, "%llu messages", (unsigned long long)opt.r.lim.capacity);
	else
		buf_addf(out, "%llu bytes", (unsigned long long)opt.r.lim.max_bytes);
}

static _Noreturn void full(struct headers *h, const char *why)
{
	const char *id = headers_get(h, "Message-Id");
	struct buf text = BUF_INIT;

	limit_text(why, &text);
	if (opt.r.on_full == RSQR_BLOCK)
		die(EX_TEMPFAIL, "capacity of %s reached and no gap can time out "
		    "(--on-full block)", text.ptr);
	die(EX_TEMPFAIL, "capacity of %s (%s) reached at message %s", text.ptr,
	    why, id ? id : "without Message-Id");
}

static enum rsq_result add(struct headers *h, struct rsq_input *in,
			   struct buf *why)
{
	enum rsq_result res;

	for (;;) {
		if (resequencer_add(rsq, in, &res, why) < 0)
			state_failed("cannot keep the state");
		if (res != RSQR_FULL)
			return res;
		if (opt.r.on_full != RSQR_BLOCK || tool_state_wait(&state) < 0)
			full(h, why->ptr);
		in->now = now_ms();	/* it arrives after the wait */
	}
}

static void placed(struct tool *t, struct headers *h, struct buf *body,
		   const struct rsq_input *in, enum rsq_result res, const char *why)
{
	char what[96];
	unsigned long long n = (unsigned long long)in->num;

	switch (res) {
	case RSQR_DUP_EMITTED:
		snprintf(what, sizeof(what), "duplicate: sequence number %llu was already emitted", n);
		set_aside(h, body, C_DUPLICATES, what);
		break;
	case RSQR_DUP_WAITING:
		snprintf(what, sizeof(what), "duplicate: sequence number %llu is already waiting", n);
		set_aside(h, body, C_DUPLICATES, what);
		break;
	case RSQR_LATE_SKIPPED:
		snprintf(what, sizeof(what), "late: sequence number %llu was skipped as a gap", n);
		set_aside(h, body, C_LATE, what);
		break;
	case RSQR_LATE_COMPLETE:
		set_aside(h, body, C_LATE, "late: its group is complete");
		break;
	case RSQR_INVALID:
		tool_invalid(t, h, body->ptr, body->len, "%s", why);
		break;
	default:
		break;
	}
}

static void batch_duplicate(void *ctx, const char *block, size_t block_len,
			    const char *body, size_t len, uint64_t num)
{
	struct headers h = HEADERS_INIT;
	struct buf b = { (char *)body, len, 0 };
	char what[96];

	(void)ctx;
	(void)msgrec_parse_block(block, block_len, &h);
	snprintf(what, sizeof(what), "duplicate: sequence number %llu was already emitted",
		 (unsigned long long)num);
	set_aside(&h, &b, C_DUPLICATES, what);
	headers_release(&h);
}

static const struct rsq_batch_out batch_out_ops = {
	.emit = emit, .invalid = refuse, .duplicate = batch_duplicate,
};
static struct rsq_batch_out batch_out;

static int resequence_frame(struct tool *t, struct frame_reader *fr, struct headers *h)
{
	static struct buf block = BUF_INIT, body = BUF_INIT, key = BUF_INIT,
			  num = BUF_INIT, why = BUF_INIT, reason = BUF_INIT;
	struct rsq_input in = { .block = NULL };
	enum rsq_result res;
	int r;

	counters[C_IN].n++;
	/* The block as read: what goes out is the frame byte for byte. */
	if (tool_read_block(fr, &block, &body) < 0)
		return -1;
	if (tool_clock_message(&state.clock, t, h, &body, &in.now) < 0)
		return 0;
	if (!batch)
		tool_state_tick(&state, in.now);
	expr_env_bind(env, h, body.ptr, body.len);
	buf_reset(&why);
	r = numbers(h, &in, &key, &num, &why);
	if (r == MSG_NO_MEMORY)
		tool_no_memory(t, h, why.ptr);
	if (r < 0)
		return tool_invalid(t, h, body.ptr, body.len, "%s", why.ptr);
	in.block = block.ptr;
	in.block_len = block.len;
	in.body = body.ptr;
	in.len = body.len;
	if (batch) {
		if (rsq_batch_add(batch, &in, &batch_out, &res, &reason) < 0)
			die_errno(EX_IOERR, "cannot keep the batch in a temporary file");
	} else {
		res = add(h, &in, &reason);
	}
	placed(t, h, &body, &in, res, reason.ptr);
	/* Messages waiting for a commit are bounded too. */
	if (rsq && resequencer_held(rsq) >= 256)
		batch_end(t);
	return 0;
}

/* ---- start and end ---- */

static struct expr *compile(const char *text)
{
	struct buf err = BUF_INIT;
	struct expr *e;

	if (!(e = expr_compile(env, text, &err)))
		die(EX_USAGE, "%s", err.ptr);
	buf_release(&err);
	return e;
}

static void check_options(struct tool *t)
{
	if (opt.at_end == RSQR_KEEP && opt.at_end_set && !opt.state)
		tool_usage_error(t, "--at-end keep needs --state");
	if (opt.batch && opt.timeout_set)
		tool_usage_error(t, "--batch cannot be used with -T");
	if (opt.batch && opt.state)
		tool_usage_error(t, "--batch cannot be used with --state");
	if (opt.batch && opt.limits_set)
		tool_usage_error(t, "--batch cannot be used with -C or --on-full");
	if (opt.batch && opt.at_end_set)
		tool_usage_error(t, "--batch cannot be used with --at-end");
	if (!opt.at_end_set)
		opt.at_end = opt.state ? RSQR_KEEP : RSQR_FLUSH;
}

static void setup(struct tool *t)
{
	static const struct resequencer_out out_ops = { .emit = emit, .invalid = refuse };
	struct resequencer_out out = out_ops;
	struct buf err = BUF_INIT;
	struct store_err serr;

	check_options(t);
	if (!(env = expr_env_new(t->ns, t->nns, &err)))
		die(EX_USAGE, "%s", err.ptr);
	by = compile(opt.by);
	group = compile(opt.group);
	buf_release(&err);
	out.ctx = t;
	if (opt.batch) {
		batch_out = batch_out_ops;
		batch_out.ctx = t;
		batch = rsq_batch_new(&opt.r.lim);
		return;
	}
	if (opt.state && !(store = store_open(opt.state, &serr)))
		die(serr.exit, "%s", serr.msg);
	rsq = resequencer_new(&opt.r, &out, store);
	state.store = store;
	state.run = rsq;
	state.sync = run_sync;
	state.tick = run_tick;
	state.deadline = run_deadline;
}

static void finish_batch(struct tool *t)
{
	struct resequencer_stats st = { 0 };

	(void)t;
	if (rsq_batch_finish(batch, &batch_out, &st) < 0)
		die_errno(EX_IOERR, "cannot read the batch back from its temporary file");
	counters[C_OUT].n = st.out;
	counters[C_GAPS].n = st.gaps;
	counters[C_SKIPPED].n = st.skipped;
	counters[C_MOST].n = st.most;
}

static void finish(struct tool *t)
{
	const struct resequencer_stats *st;
	uint64_t groups = 0;
	int64_t waiting = 0;

	if (batch) {
		finish_batch(t);
	} else {
		/* fail without --invalid or --state: nowhere to put what
		 * waits; the exit names how much. */
		enum resequencer_at_end how = opt.at_end == RSQR_FAIL_END && !store &&
					      !t->invalid_addr ? RSQR_KEEP : opt.at_end;

		waiting = resequencer_end(rsq, how, &groups, now_ms());
		/* Twice: the first writes the last messages, the second
		 * commits what was queued once they were out. */
		if (resequencer_sync(rsq) < 0 || resequencer_sync(rsq) < 0)
			state_failed("cannot keep the state");
		st = resequencer_stats(rsq);
		counters[C_OUT].n = st->out;
		counters[C_GAPS].n = st->gaps;
		counters[C_SKIPPED].n = st->skipped;
		counters[C_MOST].n = st->most;
		counters[C_WAITING].n = resequencer_waiting(rsq);
	}
	if (opt.at_end == RSQR_FAIL_END && waiting > 0) {
		tool_finish(t);
		die(EX_DATAERR, "%lld message%s in %llu group%s still waiting at the end of input",
		    (long long)waiting, waiting == 1 ? "" : "s",
		    (unsigned long long)groups, groups == 1 ? "" : "s");
	}
	tool_finish(t);
}

int main(int argc, char **argv)
{
	struct tool t = {
		.usage = usage,
		.shortopts = "b:g:T:C:",
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
	if (opt.late)
		late_out = tool_add_output(&t, opt.late);
	if (rsq && resequencer_restore(rsq, now_ms()) < 0)
		state_failed("cannot read the state");
	batch_end(&t);
	if (rsq)
		tool_state_timers(&state);
	tool_each_frame(&t, argc - first, argv + first, resequence_frame);
	tool_state_timers(NULL);
	finish(&t);
	resequencer_free(rsq);
	rsq_batch_free(batch);
	if (store)
		store_close(store);
	expr_env_free(env);
	return tool_inputs_status();
}
