/* msg-translate: the Message Translator: XSLT, JSON <-> XML, headers. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "diag.h"
#include "expr.h"
#include "message.h"
#include "tool.h"
#include "xslt.h"

static const char usage[] =
	"usage: msg-translate [-x stylesheet] [--xslt-header name] [-p name=xpath] ...\n"
	"                     [-s name=string] ... [--to json|xml] [--format | --compact]\n"
	"                     [--encoding name] [--load-dtd] [--allow-read dir] ...\n"
	"                     [--allow-write dir] ... [-H 'name: value'] ...\n"
	"                     [--set name=expr] ... [--unset name] ... [--rename old=new] ...\n"
	"                     [--ns prefix=uri] [--output channel] [--invalid channel]\n"
	"                     [--dead-letter channel] [--once] [--stats] [input ...]";

/* Header operations, applied in command-line order after the transform. */
enum op_kind { OP_HEADER, OP_SET, OP_UNSET, OP_RENAME };

struct op {
	enum op_kind kind;
	char *name;		/* the header (the old name for OP_RENAME) */
	char *arg;		/* value, expression or new name */
	struct expr *expr;
};

static struct {
	const char *xslt, *xslt_header;
	struct xslt_options o;
	char **read, **write;
	size_t nread, nwrite;
	char **params;		/* pairs: "p" or "s", then NAME=VALUE */
	size_t nparams;
	struct op *ops;
	size_t nops;
	int layout_set;
} opt;

static struct xslt *engine;
static struct xslt_sheet *sheet;	/* -x */
static struct expr_env *env;
static struct xslt_result res;

static struct tool_counter counters[] = {
	{ "in", 0 }, { "out", 0 }, { "invalid", 0 }, { "expired", 0 }, { NULL, 0 },
};
enum { C_IN, C_OUT };

enum {
	OPT_XSLT_HEADER = 0x100, OPT_TO, OPT_FORMAT, OPT_COMPACT, OPT_ENCODING,
	OPT_LOAD_DTD, OPT_ALLOW_READ, OPT_ALLOW_WRITE, OPT_SET, OPT_UNSET,
	OPT_RENAME,
};

static const struct option longopts[] = {
	{ "xslt", required_argument, NULL, 'x' },
	{ "xslt-header", required_argument, NULL, OPT_XSLT_HEADER },
	{ "param", required_argument, NULL, 'p' },
	{ "stringparam", required_argument, NULL, 's' },
	{ "to", required_argument, NULL, OPT_TO },
	{ "format", no_argument, NULL, OPT_FORMAT },
	{ "compact", no_argument, NULL, OPT_COMPACT },
	{ "encoding", required_argument, NULL, OPT_ENCODING },
	{ "load-dtd", no_argument, NULL, OPT_LOAD_DTD },
	{ "allow-read", required_argument, NULL, OPT_ALLOW_READ },
	{ "allow-write", required_argument, NULL, OPT_ALLOW_WRITE },
	{ "header", required_argument, NULL, 'H' },
	{ "set", required_argument, NULL, OPT_SET },
	{ "unset", required_argument, NULL, OPT_UNSET },
	{ "rename", required_argument, NULL, OPT_RENAME },
	{ NULL, 0, NULL, 0 },
};

static void push(char ***v, size_t *n, const char *s)
{
	*v = xrealloc(*v, (*n + 1) * sizeof(**v));
	(*v)[(*n)++] = (char *)s;
}

static struct op *add_op(enum op_kind kind, const char *name, size_t nlen,
			 const char *arg)
{
	struct op *op;

	opt.ops = xrealloc(opt.ops, (opt.nops + 1) * sizeof(*opt.ops));
	op = &opt.ops[opt.nops++];
	op->kind = kind;
	op->name = xmemdup(name, nlen);
	op->arg = arg ? xstrdup(arg) : NULL;
	op->expr = NULL;
	return op;
}

/* NAME=REST with a valid header name: REST, or NULL. */
static const char *split_name(const char *arg, size_t *nlen)
{
	const char *eq = strchr(arg, '=');

	if (!eq || !header_name_valid(arg, (size_t)(eq - arg)))
		return NULL;
	*nlen = (size_t)(eq - arg);
	return eq + 1;
}

static int header_option(struct tool *t, int c, const char *arg)
{
	struct headers one = HEADERS_INIT;
	const char *rest;
	size_t n;

	switch (c) {
	case 'H':
		if (headers_add_line(&one, arg) < 0)
			tool_usage_error(t, "invalid header '%s' (want 'Name: value')", arg);
		rest = headers_name(&one, 0, &n);
		add_op(OP_HEADER, rest, n, headers_value(&one, 0, NULL));
		headers_release(&one);
		return 0;
	case OPT_SET:
		if (!(rest = split_name(arg, &n)) || !*rest)
			tool_usage_error(t, "invalid --set '%s' (want NAME=EXPR)", arg);
		add_op(OP_SET, arg, n, rest);
		return 0;
	case OPT_UNSET:
		if (!header_name_valid(arg, strlen(arg)))
			tool_usage_error(t, "invalid header name '%s'", arg);
		add_op(OP_UNSET, arg, strlen(arg), NULL);
		return 0;
	case OPT_RENAME:
		if (!(rest = split_name(arg, &n)) || !header_name_valid(rest, strlen(rest)))
			tool_usage_error(t, "invalid --rename '%s' (want OLD=NEW)", arg);
		add_op(OP_RENAME, arg, n, rest);
		return 0;
	}
	return -1;
}

static void set_layout(struct tool *t, enum xslt_layout l)
{
	if (opt.layout_set && opt.o.layout != l)
		tool_usage_error(t, "--format and --compact cannot be combined");
	opt.layout_set = 1;
	opt.o.layout = l;
}

static int option(struct tool *t, int c, const char *arg)
{
	switch (c) {
	case 'x': opt.xslt = arg; return 0;
	case OPT_XSLT_HEADER:
		if (!header_name_valid(arg, strlen(arg)))
			tool_usage_error(t, "invalid header name '%s'", arg);
		opt.xslt_header = arg;
		return 0;
	case 'p':
	case 's':
		if (!strchr(arg, '=') || *arg == '=')
			tool_usage_error(t, "invalid parameter '%s' (want NAME=VALUE)", arg);
		push(&opt.params, &opt.nparams, c == 's' ? "s" : "p");
		push(&opt.params, &opt.nparams, arg);
		return 0;
	case OPT_TO:
		if (!strcmp(arg, "json")) opt.o.to = XSLT_TO_JSON;
		else if (!strcmp(arg, "xml")) opt.o.to = XSLT_TO_XML;
		else tool_usage_error(t, "--to takes json or xml, not '%s'", arg);
		return 0;
	case OPT_FORMAT: set_layout(t, XSLT_LAYOUT_FORMAT); return 0;
	case OPT_COMPACT: set_layout(t, XSLT_LAYOUT_COMPACT); return 0;
	case OPT_ENCODING: opt.o.encoding = arg; return 0;
	case OPT_LOAD_DTD: opt.o.load_dtd = 1; return 0;
	case OPT_ALLOW_READ: push(&opt.read, &opt.nread, arg); return 0;
	case OPT_ALLOW_WRITE: push(&opt.write, &opt.nwrite, arg); return 0;
	}
	return header_option(t, c, arg);
}

/* --rename OLD=NEW: OLD's values take NEW's name where they stand. */
static void rename_header(struct headers *h, const struct op *op)
{
	struct headers renamed = HEADERS_INIT, swap;

	if (!headers_get(h, op->name))
		return;
	headers_remove(h, op->arg);
	for (size_t i = 0; i < headers_count(h); i++) {
		size_t nl, vl;
		const char *name = headers_name(h, i, &nl);
		const char *value = headers_value(h, i, &vl);
		if (header_name_eq(name, nl, op->name, strlen(op->name)))
			headers_add(&renamed, op->arg, strlen(op->arg), value, vl);
		else
			headers_add(&renamed, name, nl, value, vl);
	}
	swap = *h;
	*h = renamed;
	headers_release(&swap);
}

/* Expressions see the input message, bound in env. */
static int apply_ops(struct headers *h, struct buf *why)
{
	static struct buf value = BUF_INIT;
	int r;

	for (size_t i = 0; i < opt.nops; i++) {
		struct op *op = &opt.ops[i];
		switch (op->kind) {
		case OP_HEADER:
			headers_set(h, op->name, op->arg);
			break;
		case OP_SET:
			if ((r = expr_eval_string(op->expr, env, &value, why)) < 0)
				return r;
			headers_setn(h, op->name, value.ptr, value.len);
			break;
		case OP_UNSET:
			headers_remove(h, op->name);
			break;
		case OP_RENAME:
			rename_header(h, op);
			break;
		}
	}
	return 0;
}

/* xsl:message text on stderr, each line after the message's id. */
static void print_messages(const struct headers *h)
{
	const char *id = headers_get(h, "Message-Id");
	const char *p = res.messages.ptr, *end = p + res.messages.len;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
		warnx_msg("%s: %.*s", id ? id : "message", (int)n, p);
		p += n + 1;
	}
}

static int translate(const struct headers *h, const struct buf *body, struct buf *why)
{
	struct xslt_sheet *s = sheet;
	const char *name = opt.xslt_header ? headers_get(h, opt.xslt_header) : NULL;
	int r;

	if (name && *name)
		s = xslt_sheet_named(engine, name, why);
	else if (opt.xslt_header && !sheet)
		buf_addf(why, "no header '%s' to name the stylesheet", opt.xslt_header);
	if (!s && why->len)
		return -1;
	r = xslt_translate(engine, s, h, body->ptr, body->len, expr_env_kind(env), &res);
	print_messages(h);
	if (r < 0)
		buf_addstr(why, res.error.ptr);
	return r;
}

static int translate_frame(struct tool *t, struct frame_reader *fr, struct headers *h)
{
	static struct buf body = BUF_INIT, why = BUF_INIT;
	static struct headers out = HEADERS_INIT;
	const struct buf *result = &body;
	int r;

	counters[C_IN].n++;
	if (frame_reader_body(fr, &body) < 0)
		return -1;
	expr_env_bind(env, h, body.ptr, body.len);
	buf_reset(&why);
	headers_copy(&out, h);
	if (opt.xslt || opt.xslt_header || opt.o.to || opt.layout_set) {
		if ((r = translate(h, &body, &why)) == MSG_NO_MEMORY)
			tool_no_memory(t, h, why.ptr);
		if (r < 0)
			return tool_invalid(t, h, body.ptr, body.len, "%s", why.ptr);
		/* A new document is a new message, as msg-translate(1) says. */
		message_stamp(&out);
		if (res.type.len)
			headers_set(&out, "Content-Type", res.type.ptr);
		for (size_t i = 0; i < headers_count(&res.headers); i++)
			headers_set(&out, headers_name(&res.headers, i, NULL),
				    headers_value(&res.headers, i, NULL));
		result = &res.body;
	}
	if ((r = apply_ops(&out, &why)) == MSG_NO_MEMORY)
		tool_no_memory(t, h, why.ptr);
	if (r < 0)
		return tool_invalid(t, h, body.ptr, body.len, "%s", why.ptr);
	if (tool_write(t->out, &out, result->ptr, result->len, &why) < 0)
		return tool_invalid(t, h, body.ptr, body.len, "%s", why.ptr);
	counters[C_OUT].n++;
	return 0;
}

static void setup(struct tool *t)
{
	struct buf err = BUF_INIT;

	if (opt.xslt_header && !opt.nread)
		tool_usage_error(t, "--xslt-header needs --allow-read");
	if ((opt.nread || opt.nwrite || opt.o.load_dtd || opt.nparams) &&
	    !opt.xslt && !opt.xslt_header)
		tool_usage_error(t, "-p, -s, --allow-read, --allow-write and --load-dtd need a stylesheet");
	opt.o.allow_read = opt.read;
	opt.o.nallow_read = opt.nread;
	opt.o.allow_write = opt.write;
	opt.o.nallow_write = opt.nwrite;
	if (!(env = expr_env_new(t->ns, t->nns, &err)))
		die(EX_USAGE, "%s", err.ptr);
	for (size_t i = 0; i < opt.nops; i++)
		if (opt.ops[i].kind == OP_SET &&
		    !(opt.ops[i].expr = expr_compile(env, opt.ops[i].arg, &err)))
			die(EX_USAGE, "%s", err.ptr);
	if (!(engine = xslt_new(&opt.o, &err)))
		die(EX_USAGE, "%s", err.ptr);
	for (size_t i = 0; i < opt.nparams; i += 2)
		if (xslt_param(engine, opt.params[i + 1], opt.params[i][0] == 's', &err) < 0)
			die(EX_USAGE, "%s", err.ptr);
	if (opt.xslt && access(opt.xslt, R_OK) < 0)
		die_errno(EX_NOINPUT, "cannot open '%s'", opt.xslt);
	/* A broken stylesheet is a usage error, found before any input. */
	if (opt.xslt && !(sheet = xslt_sheet_path(engine, opt.xslt, &err)))
		die(EX_USAGE, "%s", err.ptr);
	xslt_result_init(&res);
	buf_release(&err);
}

static void teardown(void)
{
	for (size_t i = 0; i < opt.nops; i++) {
		expr_free(opt.ops[i].expr);
		free(opt.ops[i].name);
		free(opt.ops[i].arg);
	}
	free(opt.ops);
	free(opt.params);
	free(opt.read);
	free(opt.write);
	xslt_result_release(&res);
	expr_env_free(env);
	xslt_free(engine);
}

int main(int argc, char **argv)
{
	struct tool t = {
		.usage = usage,
		.shortopts = "x:p:s:H:",
		.longopts = longopts,
		.common = TOOL_OPT_OUTPUT | TOOL_OPT_INVALID | TOOL_OPT_DEAD_LETTER |
			  TOOL_OPT_NS | TOOL_OPT_STATS | TOOL_EXPIRES,
		.option = option,
		.counters = counters,
	};
	int first;

	tool_init(&t, argc, argv);
	first = tool_parse(&t, argc, argv);
	setup(&t);
	tool_open_outputs(&t);
	tool_each_frame(&t, argc - first, argv + first, translate_frame);
	tool_finish(&t);
	teardown();
	return tool_inputs_status();
}
