/*
 * expr-fuzz: the expression language. An expression is compiled and run
 * on a message (a few headers, a body seen as XML, JSON or text): no
 * crash, no leak, and the same result when the same message is bound
 * again: nothing carries over from one message to the next.
 *
 * The input is CTL EXPRESSION '\n' BODY; CTL's bits 0-1 say how the body
 * is seen (0 XML, 1 JSON, 2 text, 3 by its first byte); with bit 2 the
 * body is parsed before the expression runs (as when an earlier rule
 * needed the document), else json() may answer from the text alone.
 */
#include <string.h>

#include <libxml/tree.h>

#include "expr.h"
#include "fuzz.h"

static struct expr_env *env;
static struct headers headers = HEADERS_INIT;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct buf err = BUF_INIT;

	(void)argc;
	(void)argv;
	env = expr_env_new(NULL, 0, &err);
	REQUIRE(env != NULL);
	REQUIRE(headers_add_line(&headers, "Type: rush") == 0);
	REQUIRE(headers_add_line(&headers, "Priority: 2") == 0);
	REQUIRE(headers_add_line(&headers, "Type: bulk") == 0);
	buf_release(&err);
	return 0;
}

static void bind(const char *body, size_t n, unsigned ctl)
{
	struct buf err = BUF_INIT;
	int status;

	if ((ctl & 3) == 3)
		expr_env_bind(env, &headers, body, n);
	else
		expr_env_bind_as(env, &headers, body, n, (enum body_kind)(ctl & 3));
	if (ctl & 4)
		expr_env_doc(env, &err, &status);
	buf_release(&err);
}

/* One evaluation as text: "s:value", "b:0/1", "n:count" or "e:error". */
static void run(struct expr *e, struct buf *out)
{
	struct buf err = BUF_INIT, s = BUF_INIT;
	struct _xmlNode **nodes;
	size_t count;
	int hit;

	buf_reset(out);
	if (expr_eval_string(e, env, &s, &err) == 0)
		buf_addf(out, "s:%s|", s.ptr);
	else
		buf_addf(out, "e:%s|", err.ptr);
	buf_reset(&err);
	if (expr_eval_bool(e, env, &hit, &err) == 0)
		buf_addf(out, "b:%d|", hit);
	else
		buf_addf(out, "e:%s|", err.ptr);
	buf_reset(&err);
	if (expr_selects_nodes(e, env)) {
		if (expr_nodes(e, env, &nodes, &count, &err) == 0)
			buf_addf(out, "n:%zu|", count);
		else
			buf_addf(out, "e:%s|", err.ptr);
		free(nodes);
	}
	buf_release(&err);
	buf_release(&s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct buf text = BUF_INIT, err = BUF_INIT, first = BUF_INIT, again = BUF_INIT;
	const char *p = (const char *)data + 1, *nl;
	size_t n = size - 1;
	struct expr *e;

	if (size == 0)
		return 0;
	nl = memchr(p, '\n', n);
	buf_add(&text, p, nl ? (size_t)(nl - p) : n);
	if (strlen(text.ptr) != text.len)
		goto out;	/* options cannot hold a NUL */
	e = expr_compile(env, text.ptr, &err);
	if (!e)
		goto out;
	p = nl ? nl + 1 : p + n;
	n = (size_t)((const char *)data + size - p);
	bind(p, n, data[0]);
	run(e, &first);
	/* The next message is the same one: nothing may carry over. */
	bind(p, n, data[0]);
	run(e, &again);
	REQUIRE(first.len == again.len && !memcmp(first.ptr, again.ptr, first.len));
	expr_free(e);
out:
	buf_release(&text);
	buf_release(&err);
	buf_release(&first);
	buf_release(&again);
	return 0;
}
