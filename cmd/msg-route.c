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
#include "rules.h"
#include "tool.h"

static const char usage[] =
	"usage: msg-route [-a] [-o channel] -w expr -t channel ... [input ...]\n"
	"       msg-route [-a] [-o channel] -R rules-file [input ...]\n"
	"       msg-route -f expr [input ...]\n"
	"       msg-route -p expr -t channel -t channel ... [input ...]\n"
	"       msg-route --to-header name --allow channel ... [-o channel] [input ...]\n"
	"       common: [--on-error stop|skip-channel] [--ns prefix=uri] [--output channel]\n"
	"               [--invalid channel] [--dead-letter channel] [--stats]";

enum mode { MODE_RULES, MODE_FILTER, MODE_PARTITION, MODE_HEADER };

/* As given on the command line; opened and compiled in main(). */
static struct {
	enum mode mode;
	int all;
	const char **when, **to;
	size_t nwhen, nto;
	const char *otherwise, *filter, *rules_file, *partition, *to_header;
	const char **allow;
	size_t nallow;
	int skip_channel;
} opt;

static struct expr_env *env;
static struct fanout out;
static struct rule_table table;
static struct expr *single;		/* --filter or --partition */
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
			opt.skip_channel = 0;
		else if (!strcmp(arg, "skip-channel"))
			opt.skip_channel = 1;
		else
			tool_usage_error(t, "--on-error takes stop or skip-channel, not '%s'", arg);
		return 0;
	}
	return -1;
}

/* Which of the four ways of routing the options ask for; usage errors. */
static void choose_mode(struct tool *t)
{
	int ways = (opt.nwhen || opt.rules_file) + !!opt.filter + !!opt.partition +
		   !!opt.to_header;

	if (ways != 1)
		tool_usage_error(t, "give one of -w/-t rules, -R, -f, -p or --to-header");
	if (opt.nwhen && opt.rules_file)
		tool_usage_error(t, "-R cannot be combined with -w");
	if (opt.filter) {
		if (opt.nto || opt.otherwise || opt.all)
			tool_usage_error(t, "-f takes no -t, -o or -a");
		opt.mode = MODE_FILTER;
	} else if (opt.partition) {
		if (!opt.nto || opt.otherwise || opt.all)
			tool_usage_error(t, "-p needs -t channels and takes no -o or -a");
		opt.mode = MODE_PARTITION;
	} else if (opt.to_header) {
		if (!opt.nallow || opt.nto)
			tool_usage_error(t, "--to-header needs --allow channels and takes no -t");
		opt.mode = MODE_HEADER;
	} else {
		if (opt.nwhen != opt.nto && !opt.rules_file)
			tool_usage_error(t, "each -w needs its -t (%zu -w, %zu -t)", opt.nwhen, opt.nto);
		if (opt.rules_file && opt.nto)
			tool_usage_error(t, "-R takes no -t");
		opt.mode = MODE_RULES;
	}
	if (opt.nallow && opt.mode != MODE_HEADER)
		tool_usage_error(t, "--allow needs --to-header");
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

static struct expr *compile_or_die(const char *text)
{
	struct buf err = BUF_INIT;
	struct expr *e = expr_compile(env, text, &err);

	if (!e)
		die(EX_USAGE, "%s", err.ptr);
	return e;
}

/* Every rule and expression, compiled before any channel is opened: a
 * usage error creates no file and opens no FIFO. */
static void compile_all(struct tool *t)
{
	struct buf err = BUF_INIT;
	int cause;

	env = expr_env_new(t->ns, t->nns, &err);
	if (!env)
		die(EX_USAGE, "%s", err.ptr);
	rule_table_init(&table);
	switch (opt.mode) {
	case MODE_RULES:
		if (opt.rules_file &&
		    rule_table_load(&table, opt.rules_file, env, &err, &cause) < 0)
			die(cause == RULES_NO_FILE ? EX_NOINPUT : EX_USAGE, "%s", err.ptr);
		for (size_t i = 0; i < opt.nwhen; i++)
			if (rule_table_add(&table, env, opt.when[i], opt.to[i], &err) < 0)
				die(EX_USAGE, "%s", err.ptr);
		break;
	case MODE_FILTER:
		single = compile_or_die(opt.filter);
		break;
	case MODE_PARTITION:
		single = compile_or_die(opt.partition);
		break;
	case MODE_HEADER:
		break;
	}
	buf_release(&err);
}

/* The channels, opened in the order they are named (a FIFO's open waits
 * for its reader, so the order is the user's to choose). */
static void open_channels(struct tool *t)
{
	struct buf err = BUF_INIT;

	fanout_init(&out);
	fanout_borrow(&out, t->output_addr, t->out);
	switch (opt.mode) {
	case MODE_RULES:
		if (rule_table_open(&table, &out, &err) < 0)
			die(EX_CANTCREAT, "%s", err.ptr);
		break;
	case MODE_FILTER:
		break;
	case MODE_PARTITION:
		for (size_t i = 0; i < opt.nto; i++)
			open_or_die(opt.to[i]);
		break;
	case MODE_HEADER:
		for (size_t i = 0; i < opt.nallow; i++)
			open_or_die(opt.allow[i]);
		break;
	}
	if (opt.otherwise)
		table.otherwise = open_or_die(opt.otherwise);
	if (t->dead_letter_addr)
		dead_letter_channel = open_or_die(t->dead_letter_addr);
	buf_release(&err);
}

/* SIGHUP: read the rules file again; a bad file leaves the old rules. */
static void on_hup(int sig)
{
	(void)sig;
	reload_requested = 1;
}

static void reload(void)
{
	struct rule_table fresh;
	struct buf err = BUF_INIT;
	int cause;

	reload_requested = 0;
	rule_table_init(&fresh);
	/* Compiled whole first: a bad file opens none of its channels. */
	if (rule_table_load(&fresh, opt.rules_file, env, &err, &cause) < 0 ||
	    rule_table_open(&fresh, &out, &err) < 0) {
		warnx_msg("%s; keeping the rules in force", err.ptr);
		rule_table_release(&fresh);
	} else {
		/* -o on the command line wins over the file, as at start-up. */
		if (opt.otherwise)
			fresh.otherwise = table.otherwise;
		rule_table_release(&table);
		table = fresh;
		warnx_msg("'%s': %zu rules loaded", opt.rules_file, table.n);
	}
	buf_release(&err);
}

/* FNV-1a: the same key goes to the same channel on every run and host. */
static uint64_t key_hash(const char *s, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (size_t i = 0; i < n; i++) {
		h ^= (unsigned char)s[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

/* Decide the channels for the bound message: 0, 1 none matched, -1 error. */
static int decide(struct fanout_set *dest, const struct headers *h, struct buf *err)
{
	struct buf v = BUF_INIT;
	int hit, r = 1;

	switch (opt.mode) {
	case MODE_FILTER:
		if (expr_eval_bool(single, env, &hit, err) < 0)
			return -1;
		if (hit)
			fanout_set_add(dest, 0);
		return hit ? 0 : 2;
	case MODE_PARTITION:
		if (expr_eval_string(single, env, &v, err) < 0)
			return -1;
		fanout_set_add(dest, (size_t)fanout_find(&out, opt.to[key_hash(v.ptr, v.len) % opt.nto]));
		buf_release(&v);
		return 0;
	case MODE_HEADER: {
		const char *list = headers_get(h, opt.to_header);
		char *copy = xstrdup(list ? list : ""), *save = NULL;
		r = 1;
		for (char *tok = strtok_r(copy, ", \t", &save); tok; tok = strtok_r(NULL, ", \t", &save)) {
			long i = -1;
			for (size_t k = 0; k < opt.nallow; k++)
				if (!strcmp(opt.allow[k], tok))
					i = fanout_find(&out, tok);
			if (i < 0) {
				buf_addf(err, "recipient '%s' in %s is not allowed", tok, opt.to_header);
				free(copy);
				return -1;
			}
			fanout_set_add(dest, (size_t)i);
			r = 0;
		}
		free(copy);
		return r;
	}
	case MODE_RULES:
		for (size_t i = 0; i < table.n; i++) {
			if (expr_eval_bool(table.v[i].expr, env, &hit, err) < 0)
				return -1;
			if (!hit)
				continue;
			table.v[i].matched++;
			fanout_set_add(dest, table.v[i].channel);
			r = 0;
			if (!opt.all)
				break;
		}
		return r;
	}
	return -1;
}

static int needs_body(void)
{
	if (opt.mode == MODE_RULES)
		return rule_table_needs_body(&table);
	return single && (expr_needs(single) & EXPR_NEEDS_BODY);
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
	headers_set(h, "Error", e.ptr);
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
		if (!opt.skip_channel)
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
	int loaded = needs_body(), r, expired;
	size_t failed;

	if (reload_requested)
		reload();
	counters[C_IN].n++;
	buf_reset(&err);
	fanout_set_clear(&dest);
	/* A router never changes a message: its header block goes on as read
	 * (unless Message-History is being kept). */
	if (!frame_history_on()) {
		const char *p;
		size_t n;
		frame_reader_header_block(fr, &p, &n);
		buf_reset(&block);
		buf_add(&block, p, n);
	}
	expired = message_expired(h);
	/* The body is needed to decide, or may have to go elsewhere whole. */
	if (expired != 0 || loaded || dead_letter_channel >= 0) {
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
	expr_env_bind(env, h, loaded ? body.ptr : NULL, loaded ? body.len : 0);
	r = decide(&dest, h, &err);
	if (r < 0) {
		if (!loaded && frame_reader_body(fr, &body) < 0)
			return -1;
		return tool_invalid(t, h, body.ptr, body.len, "%s", err.ptr);
	}
	if (r == 2) {
		counters[C_DROPPED].n++;
		return loaded ? 0 : frame_reader_skip(fr);
	}
	if (r == 1) {
		if (table.otherwise < 0) {
			if (!loaded && frame_reader_body(fr, &body) < 0)
				return -1;
			return tool_invalid(t, h, body.ptr, body.len,
					    opt.mode == MODE_HEADER ? "no recipients in %s"
								    : "no rule matched%s",
					    opt.mode == MODE_HEADER ? opt.to_header : "");
		}
		table.otherwise_count++;
		counters[C_OTHERWISE].n++;
		fanout_set_add(&dest, (size_t)table.otherwise);
	} else {
		counters[C_ROUTED].n++;
	}
	if (fanout_write(&out, &dest, h, frame_history_on() ? NULL : block.ptr, block.len,
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
	for (size_t i = 0; i < table.n; i++)
		warnx_msg("stats: rule %zu '%s' -> '%s': %llu", i + 1,
			  expr_text(table.v[i].expr), out.v[table.v[i].channel].addr,
			  (unsigned long long)table.v[i].matched);
	if (table.otherwise >= 0)
		warnx_msg("stats: otherwise -> '%s': %llu", out.v[table.otherwise].addr,
			  (unsigned long long)table.otherwise_count);
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
	choose_mode(&t);
	/* Several outputs: a reader that goes away is an error on its
	 * channel, reported by address, not a silent death. */
	signal(SIGPIPE, SIG_IGN);
	compile_all(&t);
	tool_open_outputs(&t);
	open_channels(&t);
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
	rule_table_release(&table);
	fanout_release(&out);
	expr_free(single);
	expr_env_free(env);
	return 0;
}
