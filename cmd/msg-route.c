/* msg-route: Content-Based Router, Message Filter, Recipient List. */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "diag.h"
#include "expr.h"
#include "fanout.h"
#include "message.h"
#include "router.h"
#include "tool.h"

static const char usage[] =
	"usage: msg-route [-a] [-o channel] -w expr -t channel ... [input ...]\n"
	"       msg-route [-a] [-o channel] -R rules-file [input ...]\n"
	"       msg-route -f expr [input ...]\n"
	"       msg-route -p expr -t channel -t channel ... [input ...]\n"
	"       msg-route --to-header name --allow channel ... [-o channel] [input ...]\n"
	"       common: [--on-error stop|skip-channel] [--ns prefix=uri] [--output channel]\n"
	"               [--invalid channel] [--dead-letter channel] [--once] [--stats]";

/* As given on the command line. */
static struct router_options opt;
static int skip_channel;		/* --on-error skip-channel */

static struct expr_env *env;
static struct fanout out;
static struct router router;
static struct tool_counter counters[] = {
	{ "in", 0 }, { "routed", 0 }, { "otherwise", 0 }, { "dropped", 0 },
	{ "invalid", 0 }, { "expired", 0 }, { "undeliverable", 0 }, { NULL, 0 },
};
enum { C_IN, C_ROUTED, C_OTHERWISE, C_DROPPED, C_INVALID, C_EXPIRED, C_UNDELIVERABLE };
static long dead_letter_channel = -1;
static volatile sig_atomic_t reload_requested;
static int channel_failed;

enum { OPT_TO_HEADER = 0x100, OPT_ALLOW, OPT_ON_ERROR };

static const struct option longopts[] = {
	{ "when", required_argument, NULL, 'w' },
	{ "to", required_argument, NULL, 't' },
	{ "all", no_argument, NULL, 'a' },
	{ "otherwise", required_argument, NULL, 'o' },
	{ "filter", required_argument, NULL, 'f' },
	{ "rules", required_argument, NULL, 'R' },
	{ "partition", required_argument, NULL, 'p' },
	{ "to-header", required_argument, NULL, OPT_TO_HEADER },
	{ "allow", required_argument, NULL, OPT_ALLOW },
	{ "on-error", required_argument, NULL, OPT_ON_ERROR },
	{ NULL, 0, NULL, 0 },
};

static void push(const char ***v, size_t *n, const char *s)
{
	*v = xrealloc(*v, (*n + 1) * sizeof(**v));
	(*v)[(*n)++] = s;
}

static int option(struct tool *t, int c, const char *arg)
{
	switch (c) {
	case 'w': push(&opt.when, &opt.nwhen, arg); return 0;
	case 't': push(&opt.to, &opt.nto, arg); return 0;
	case 'a': opt.all = 1; return 0;
	case 'o': opt.otherwise = arg; return 0;
	case 'f': opt.filter = arg; return 0;
	case 'R': opt.rules_file = arg; return 0;
	case 'p': opt.partition = arg; return 0;
	case OPT_TO_HEADER: opt.to_header = arg; return 0;
	case OPT_ALLOW: push(&opt.allow, &opt.nallow, arg); return 0;
	case OPT_ON_ERROR:
		if (!strcmp(arg, "stop"))
			skip_channel = 0;
		else if (!strcmp(arg, "skip-channel"))
			skip_channel = 1;
		else
			tool_usage_error(t, "--on-error takes stop or skip-channel, not '%s'", arg);
		return 0;
	}
	return -1;
}

static long open_or_die(const char *addr)
{
	struct buf err = BUF_INIT;
	long i = fanout_open(&out, addr, &err);

	if (i < 0)
		die(EX_CANTCREAT, "%s", err.ptr);
	buf_release(&err);
	return i;
}

/* Every rule and expression, compiled before any channel is opened: a
 * usage error creates no file and opens no FIFO. */
static void compile_all(struct tool *t)
{
	struct buf err = BUF_INIT;
	int cause;

	if (router_check(&opt, &err) < 0)
		tool_usage_error(t, "%s", err.ptr);
	env = expr_env_new(t->ns, t->nns, &err);
	if (!env)
		die(EX_USAGE, "%s", err.ptr);
	if (router_compile(&router, &opt, env, &err, &cause) < 0)
		die(cause == RULES_NO_FILE ? EX_NOINPUT : EX_USAGE, "%s", err.ptr);
	buf_release(&err);
}

/* The channels, opened in the order they are named (a FIFO's open waits
 * for its reader, so the order is the user's to choose). */
static void open_channels(struct tool *t)
{
	struct buf err = BUF_INIT;

	fanout_init(&out);
	fanout_borrow(&out, t->output_addr, t->out);
	if (router_open(&router, &out, &err) < 0)
		die(EX_CANTCREAT, "%s", err.ptr);
	if (t->dead_letter_addr)
		dead_letter_channel = open_or_die(t->dead_letter_addr);
	buf_release(&err);
}

/* --on-error skip-channel: a channel that fails, even when output is
 * flushed between messages, is one to go on without, not the end of the
 * run; the dead-letter channel is never skipped. */
static void tolerate_channels(void)
{
	for (size_t i = 0; skip_channel && i < out.n; i++)
		if ((long)i != dead_letter_channel)
			frame_writer_tolerate(out.v[i].w);
}

/* SIGHUP: read the rules file again; a bad file leaves the old rules. */
static void on_hup(int sig)
{
	(void)sig;
	reload_requested = 1;
}

static void reload(void)
{
	struct buf err = BUF_INIT;

	reload_requested = 0;
	if (router_reload(&router, &out, &err) < 0)
		warnx_msg("%s; keeping the rules in force", err.ptr);
	else
		warnx_msg("'%s': %zu rules loaded", opt.rules_file, router.table.n);
	tolerate_channels();
	buf_release(&err);
}

static int frame_next(void *arg, const char **p, size_t *n)
{
	return frame_reader_chunk(arg, p, n);
}

/* Messages that cannot go where they should: the dead-letter channel. */
static void dead_letter(struct headers *h, const char *body, size_t len,
			const char *why)
{
	struct buf e = BUF_INIT;
	struct frame_writer *w;

	if (dead_letter_channel < 0) {
		const char *id = headers_get(h, "Message-Id");
		warnx_msg("%s; message %s dropped", why, id ? id : "(without Message-Id)");
		return;
	}
	w = out.v[dead_letter_channel].w;
	buf_addf(&e, "%s: %s", progname, why);
	frame_set_error(h, len, e.ptr);
	buf_release(&e);
	if (frame_writer_write(w, h, body, len) < 0)
		die(EX_IOERR, "cannot write '%s': %s", out.v[dead_letter_channel].addr,
		    strerror(w->err));
	out.v[dead_letter_channel].sent++;
}

/* After a write: stop at a failed channel, or (skip-channel) go on
 * without it, sending what was meant for it to the dead-letter channel. */
static void handle_failures(const struct fanout_set *dest, struct headers *h,
			    const char *body, size_t len)
{
	for (size_t k = 0; k < dest->n; k++) {
		struct fanout_channel *c = &out.v[dest->idx[k]];
		struct buf why = BUF_INIT;

		if (!c->dead)
			continue;
		if (!skip_channel)
			die(EX_IOERR, "cannot write '%s': %s", c->addr, c->why.ptr);
		if (!c->reported)
			warnx_msg("cannot write '%s': %s; skipping it from now on",
				  c->addr, c->why.ptr);
		c->reported = 1;
		channel_failed = 1;
		counters[C_UNDELIVERABLE].n++;
		buf_addf(&why, "channel '%s' failed: %s", c->addr, c->why.ptr);
		if (body)
			dead_letter(h, body, len, why.ptr);
		buf_release(&why);
	}
}

static int route_frame(struct tool *t, struct frame_reader *fr, struct headers *h)
{
	static struct buf body = BUF_INIT, err = BUF_INIT, block = BUF_INIT;
	static struct fanout_set dest;
	int loaded = router_needs_body(&router), r, expired;
	const char *raw = NULL;	/* the header block to pass on, or NULL */
	size_t raw_len = 0, failed;

	if (reload_requested)
		reload();
	counters[C_IN].n++;
	buf_reset(&err);
	fanout_set_clear(&dest);
	/* A router never changes a message: its header block goes on as read
	 * (unless Message-History is being kept), from the reader's buffer
	 * while the body is left in the input to stream. */
	if (!frame_history_on())
		frame_reader_header_block(fr, &raw, &raw_len);
	expired = message_expired(h);
	/* The body is needed to decide, or may have to go elsewhere whole. */
	if (expired != 0 || loaded || dead_letter_channel >= 0) {
		/* Reading it may move the reader's buffer: the block is kept. */
		if (raw) {
			buf_reset(&block);
			buf_add(&block, raw, raw_len);
			raw = block.ptr;
		}
		if (frame_reader_body(fr, &body) < 0)
			return -1;
		loaded = 1;
	}
	if (expired < 0)
		return tool_invalid(t, h, body.ptr, body.len, "invalid Expires '%s'",
				    headers_get(h, "Expires"));
	if (expired) {
		counters[C_EXPIRED].n++;
		dead_letter(h, body.ptr, body.len, "message expired");
		return 0;
	}
	/* Message-History makes the block grow: past the limit, no channel
	 * could take the message. */
	if (frame_history_on() &&
	    frame_header_size(h, frame_reader_body_length(fr)) > FRAME_HEADER_MAX) {
		if (!loaded && frame_reader_body(fr, &body) < 0)
			return -1;
		buf_reset(&err);
		frame_header_too_big(&err, h, body.len);
		return tool_invalid(t, h, body.ptr, body.len, "%s", err.ptr);
	}
	expr_env_bind(env, h, loaded ? body.ptr : NULL, loaded ? body.len : 0);
	r = router_decide(&router, &out, h, &dest, &err);
	if (r == MSG_NO_MEMORY)
		tool_no_memory(t, h, err.ptr);
	if (r < 0) {
		if (!loaded && frame_reader_body(fr, &body) < 0)
			return -1;
		return tool_invalid(t, h, body.ptr, body.len, "%s", err.ptr);
	}
	if (r == ROUTE_DROPPED) {
		counters[C_DROPPED].n++;
		return loaded ? 0 : frame_reader_skip(fr);
	}
	if (r == ROUTE_UNMATCHED) {
		if (router.table.otherwise < 0) {
			if (!loaded && frame_reader_body(fr, &body) < 0)
				return -1;
			return tool_invalid(t, h, body.ptr, body.len,
					    opt.mode == ROUTER_HEADER ? "no recipients in %s"
								      : "no rule matched%s",
					    opt.mode == ROUTER_HEADER ? opt.to_header : "");
		}
		router.table.otherwise_count++;
		counters[C_OTHERWISE].n++;
		fanout_set_add(&dest, (size_t)router.table.otherwise);
	} else {
		counters[C_ROUTED].n++;
	}
	if (raw && !loaded) {
		/* Held whole in the reader's buffer, it goes on from there. */
		const char *frame;
		size_t frame_len;

		if ((r = frame_reader_whole(fr, &frame, &frame_len)) < 0)
			return -1;
		if (r) {
			fanout_write_whole(&out, &dest, frame, frame_len, &failed);
			if (failed || channel_failed)
				handle_failures(&dest, h, NULL, 0);
			return 0;
		}
		/* Reading ahead may have moved the buffer. */
		frame_reader_header_block(fr, &raw, &raw_len);
	}
	if (fanout_write(&out, &dest, h, raw, raw_len,
			 loaded ? body.ptr : NULL,
			 loaded ? body.len : frame_reader_body_length(fr),
			 frame_next, fr, &failed) < 0)
		return -1;
	if (failed || channel_failed)
		handle_failures(&dest, h, loaded ? body.ptr : NULL, body.len);
	return 0;
}

static void print_rule_stats(void)
{
	const struct rule_table *table = &router.table;

	for (size_t i = 0; i < table->n; i++)
		warnx_msg("stats: rule %zu '%s' -> '%s': %llu", i + 1,
			  expr_text(table->v[i].expr), out.v[table->v[i].channel].addr,
			  (unsigned long long)table->v[i].matched);
	if (table->otherwise >= 0)
		warnx_msg("stats: otherwise -> '%s': %llu", out.v[table->otherwise].addr,
			  (unsigned long long)table->otherwise_count);
	for (size_t i = 0; i < out.n; i++)
		if (out.v[i].sent || out.v[i].dead || i > 0)
			warnx_msg("stats: channel '%s': %llu%s", out.v[i].addr,
			  (unsigned long long)out.v[i].sent, out.v[i].dead ? " (failed)" : "");
}

int main(int argc, char **argv)
{
	struct tool t = {
		.usage = usage,
		.shortopts = "w:t:ao:f:R:p:",
		.longopts = longopts,
		.common = TOOL_OPT_OUTPUT | TOOL_OPT_INVALID | TOOL_OPT_DEAD_LETTER |
			  TOOL_OPT_NS | TOOL_OPT_STATS,
		.option = option,
		.counters = counters,
	};
	int first;

	tool_init(&t, argc, argv);
	first = tool_parse(&t, argc, argv);
	/* Several outputs: a reader that goes away is an error on its
	 * channel, reported by address, not a silent death. */
	signal(SIGPIPE, SIG_IGN);
	compile_all(&t);
	tool_open_outputs(&t);
	open_channels(&t);
	tolerate_channels();
	if (opt.rules_file) {
		struct sigaction sa = { .sa_handler = on_hup };
		sigaction(SIGHUP, &sa, NULL);
	}
	tool_each_frame(&t, argc - first, argv + first, route_frame);
	if (t.stats)
		print_rule_stats();
	if (fanout_close(&out) < 0 || channel_failed) {
		/* Every failed channel is named, even one that failed only
		 * at the last flush. */
		for (size_t i = 0; i < out.n; i++)
			if (out.v[i].dead && !out.v[i].reported)
				warnx_msg("cannot write '%s': %s", out.v[i].addr, out.v[i].why.ptr);
		tool_finish(&t);
		exit(EX_IOERR);
	}
	tool_finish(&t);
	router_release(&router);
	fanout_release(&out);
	expr_env_free(env);
	return tool_inputs_status();
}
