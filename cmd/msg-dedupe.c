/* msg-dedupe: Idempotent Receiver. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "deduper.h"
#include "diag.h"
#include "expr.h"
#include "hash128.h"
#include "store.h"
#include "tool.h"
#include "tool-state.h"

static const char usage[] =
	"usage: msg-dedupe [-k expr] [--key-hash] [--duplicates channel]\n"
	"                  [--window duration] [--max-keys n] [--state dir]\n"
	"                  [--clock event|wall] [--ns prefix=uri]\n"
	"                  [--output channel] [--invalid channel] [--dead-letter channel]\n"
	"                  [--once] [--stats] [input ...]";

/* As given on the command line. */
static struct {
	const char *key, *state, *duplicates;
	int key_hash;
	struct deduper_opt d;
} opt = {
	.key = "header('Message-Id')",
	.d = { .window_ms = 24 * 3600 * 1000, .max_keys = 1000000 },
};

static struct expr_env *env;
static struct expr *key_expr;
static struct store *store;
static struct deduper *dedupe;
static struct frame_writer *duplicates_out;
static struct tool_state state;

static struct tool_counter counters[] = {
	{ "in", 0 }, { "out", 0 }, { "duplicates", 0 }, { "invalid", 0 },
	{ "expired", 0 }, { "keys", 0 }, { "forgotten", 0 }, { NULL, 0 },
};
enum { C_IN, C_OUT, C_DUPLICATES, C_INVALID, C_EXPIRED, C_KEYS, C_FORGOTTEN };

enum {
	OPT_KEY_HASH = 0x100, OPT_DUPLICATES, OPT_WINDOW, OPT_MAX_KEYS,
	OPT_STATE, OPT_CLOCK,
};

static const struct option longopts[] = {
	{ "key", required_argument, NULL, 'k' },
	{ "key-hash", no_argument, NULL, OPT_KEY_HASH },
	{ "duplicates", required_argument, NULL, OPT_DUPLICATES },
	{ "window", required_argument, NULL, OPT_WINDOW },
	{ "max-keys", required_argument, NULL, OPT_MAX_KEYS },
	{ "state", required_argument, NULL, OPT_STATE },
	{ "clock", required_argument, NULL, OPT_CLOCK },
	{ NULL, 0, NULL, 0 },
};

static int option(struct tool *t, int c, const char *arg)
{
	static const char *const clock[] = { "wall", "event", NULL };

	switch (c) {
	case 'k': opt.key = arg; return 0;
	case OPT_KEY_HASH: opt.key_hash = 1; return 0;
	case OPT_DUPLICATES: opt.duplicates = arg; return 0;
	case OPT_WINDOW: opt.d.window_ms = tool_arg_duration(t, "--window", arg); return 0;
	case OPT_MAX_KEYS: opt.d.max_keys = tool_arg_count(t, "--max-keys", arg); return 0;
	case OPT_STATE: opt.state = arg; return 0;
	case OPT_CLOCK: state.clock.event = tool_arg_choice(t, "--clock", arg, clock); return 0;
	}
	return -1;
}

/* ---- state ---- */

static int run_sync(void *run) { return deduper_sync(run); }
static int run_tick(void *run, int64_t now) { return deduper_tick(run, now); }
static int64_t run_deadline(void *run) { (void)run; return 0; }

/* The end of an input batch: keys committed, then what they let
 * through published. */
static int batch_end(struct tool *t)
{
	(void)t;
	tool_state_sync(&state);
	return 0;
}

/* ---- one message ---- */

/* The key as kept: as it is, or its 128-bit hash. */
static void kept_key(struct buf *key)
{
	unsigned char b[16];
	hash128_t h = hash128_init();

	if (!opt.key_hash)
		return;
	hash128_add(&h, key->ptr, key->len);
	hash128_bytes(h, b);
	buf_reset(key);
	buf_add(key, b, sizeof(b));
}

static int dedupe_frame(struct tool *t, struct frame_reader *fr, struct headers *h)
{
	static struct buf block = BUF_INIT, body = BUF_INIT, key = BUF_INIT,
			  why = BUF_INIT;
	int64_t now;
	int r;

	counters[C_IN].n++;
	/* The block as read: a message passes byte for byte. */
	if (tool_read_block(fr, &block, &body) < 0)
		return -1;
	if (tool_clock_message(&state.clock, t, h, &body, &now) < 0)
		return 0;
	tool_state_tick(&state, now);
	expr_env_bind(env, h, body.ptr, body.len);
	buf_reset(&why);
	if ((r = expr_eval_string(key_expr, env, &key, &why)) == 0 && !key.len)
		buf_addstr(&why, "empty key"), r = -1;
	if (r == MSG_NO_MEMORY)
		tool_no_memory(t, h, why.ptr);
	if (r < 0)
		return tool_invalid(t, h, body.ptr, body.len, "%s", why.ptr);
	kept_key(&key);
	if (deduper_seen(dedupe, key.ptr, key.len, now)) {
		counters[C_DUPLICATES].n++;
		/* Duplicates are what at-least-once delivery brings: no
		 * warning for each, only the count. */
		if (duplicates_out)
			tool_set_aside(duplicates_out, h, &body, "duplicate: key seen before");
		return 0;
	}
	buf_reset(&why);
	if (tool_write_block(t->out, block.ptr, block.len, body.ptr, body.len, &why) < 0)
		return tool_invalid(t, h, body.ptr, body.len, "%s", why.ptr);
	counters[C_OUT].n++;
	if (deduper_written(dedupe, key.ptr, key.len, now) < 0)
		tool_state_failed(store, "cannot keep the state");
	/* A spool publishes by itself past 256 files: commit before. */
	if (deduper_pending(dedupe) >= 128)
		batch_end(t);
	return 0;
}

/* ---- start and end ---- */

static void setup(struct tool *t)
{
	struct buf err = BUF_INIT;
	struct store_err serr;

	if (!(env = expr_env_new(t->ns, t->nns, &err)))
		die(EX_USAGE, "%s", err.ptr);
	if (!(key_expr = expr_compile(env, opt.key, &err)))
		die(EX_USAGE, "%s", err.ptr);
	buf_release(&err);
	if (opt.state && !(store = store_open(opt.state, &serr)))
		die(serr.exit, "%s", serr.msg);
}

int main(int argc, char **argv)
{
	struct tool t = {
		.usage = usage,
		.shortopts = "k:",
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
	if (opt.duplicates)
		duplicates_out = tool_add_output(&t, opt.duplicates);
	dedupe = deduper_new(&opt.d, store, t.out);
	state = (struct tool_state){ .store = store, .run = dedupe, .sync = run_sync,
				     .tick = run_tick, .deadline = run_deadline,
				     .clock = state.clock };
	/* On the event clock nothing has expired before the first message. */
	if (deduper_restore(dedupe, tool_clock_now(&state.clock)) < 0)
		tool_state_failed(store, "cannot read the state");
	batch_end(&t);
	tool_each_frame(&t, argc - first, argv + first, dedupe_frame);
	batch_end(&t);
	counters[C_KEYS].n = deduper_keys(dedupe);
	counters[C_FORGOTTEN].n = deduper_forgotten(dedupe);
	tool_finish(&t);
	deduper_free(dedupe);
	if (store)
		store_close(store);
	expr_env_free(env);
	return tool_inputs_status();
}
