/* expr: the expression language: the environment expressions are
 * compiled in, and each expression compiled once and analysed (the
 * functions it calls, whether it reads the body, its fast form). */
#include "expr-parts.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"
#include "xmldoc.h"

/* ---- static analysis: which functions, does it read the body ---- */

static int in_list(const char *const *list, const char *s, size_t n)
{
	for (; *list; list++)
		if (strlen(*list) == n && !memcmp(*list, s, n))
			return 1;
	return 0;
}

static int name_char(char c)
{
	return isalnum((unsigned char)c) || c == '-' || c == '_' || c == '.' ||
	       (unsigned char)c >= 0x80;
}

static int name_start(char c)
{
	return isalpha((unsigned char)c) || c == '_' || (unsigned char)c >= 0x80;
}

static const char *skip_space(const char *p)
{
	while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
		p++;
	return p;
}

/* The functions an expression may call, with how many arguments each
 * takes (XPath 1.0 section 4, and ours); -1: any number from min on. */
static const struct function {
	const char *name;
	int min, max;
} functions[] = {
	{ "last", 0, 0 }, { "position", 0, 0 }, { "count", 1, 1 },
	{ "id", 1, 1 }, { "local-name", 0, 1 }, { "namespace-uri", 0, 1 },
	{ "name", 0, 1 }, { "string", 0, 1 }, { "concat", 2, -1 },
	{ "starts-with", 2, 2 }, { "contains", 2, 2 },
	{ "substring-before", 2, 2 }, { "substring-after", 2, 2 },
	{ "substring", 2, 3 }, { "string-length", 0, 1 },
	{ "normalize-space", 0, 1 }, { "translate", 3, 3 },
	{ "boolean", 1, 1 }, { "not", 1, 1 }, { "true", 0, 0 },
	{ "false", 0, 0 }, { "lang", 1, 1 }, { "number", 0, 1 },
	{ "sum", 1, 1 }, { "floor", 1, 1 }, { "ceiling", 1, 1 },
	{ "round", 1, 1 }, { "header", 1, 1 }, { "json", 1, 1 },
	{ NULL, 0, 0 },
};

static const struct function *function_named(const char *s, size_t n)
{
	for (const struct function *f = functions; f->name; f++)
		if (strlen(f->name) == n && !memcmp(f->name, s, n))
			return f;
	return NULL;
}

/*
 * The number of arguments of the call whose '(' is at open: commas at
 * its own depth, skipping literals and nested brackets.
 */
static int count_arguments(const char *open)
{
	const char *p = skip_space(open + 1);
	int depth = 0, commas = 0;

	if (*p == ')')
		return 0;
	for (; *p; p++) {
		if (*p == '"' || *p == '\'') {
			const char *close = strchr(p + 1, *p);
			if (!close)
				break;
			p = close;
		} else if (*p == '(' || *p == '[') {
			depth++;
		} else if (*p == ')' || *p == ']') {
			if (depth-- == 0)
				break;
		} else if (*p == ',' && depth == 0) {
			commas++;
		}
	}
	return commas + 1;
}

/* Called with no argument, these read the context node. */
static const char *const context_functions[] = {
	"string", "number", "string-length", "normalize-space", "name",
	"local-name", "namespace-uri", NULL,
};

/* "one argument", "2 or 3 arguments", "at least 2 arguments". */
static const char *arity_text(const struct function *f)
{
	static char text[48];

	if (f->min == f->max)
		snprintf(text, sizeof(text), "%s argument%s",
			 f->min == 0 ? "no" : f->min == 1 ? "one" : f->min == 2 ? "two" : "three",
			 f->min == 1 ? "" : "s");
	else if (f->max < 0)
		snprintf(text, sizeof(text), "at least %d arguments", f->min);
	else
		snprintf(text, sizeof(text), "%d or %d arguments", f->min, f->max);
	return text;
}

/*
 * A token-level look at the expression: every function it calls must
 * exist (libxml2 only finds out when a call is reached, which may be never
 * for a predicate on an empty node-set), and anything that is a path, an
 * axis, a node test, '.', or a context-node function means the body is
 * needed. Operator names and '*' are told apart from node tests by what
 * precedes them, as XPath 1.0 section 3.7 says.
 */
static int analyse(struct expr *e, struct buf *err)
{
	const char *p = e->text;
	int after_operand = 0;	/* the previous token ends an operand */

	while (*(p = skip_space(p))) {
		if (*p == '"' || *p == '\'') {
			const char *close = strchr(p + 1, *p);
			p = close ? close + 1 : p + strlen(p);
			after_operand = 1;
		} else if (isdigit((unsigned char)*p) ||
			   (*p == '.' && isdigit((unsigned char)p[1]))) {
			while (isdigit((unsigned char)*p) || *p == '.')
				p++;
			after_operand = 1;
		} else if (*p == '*') {
			if (!after_operand)
				e->needs |= EXPR_NEEDS_DOC;	/* name test */
			after_operand = !after_operand;
			p++;
		} else if (name_start(*p)) {
			const char *start = p, *after;
			size_t n;

			while (name_char(*p) || (*p == ':' && p[1] != ':' && name_start(p[1])))
				p++;
			n = (size_t)(p - start);
			after = skip_space(p);
			if (after_operand && (in_list((const char *const[]){ "and", "or", "div", "mod", NULL }, start, n))) {
				after_operand = 0;
				continue;
			}
			if (*after == '(') {
				const char *arg = skip_space(after + 1);
				const struct function *f;
				int nargs;
				if (in_list((const char *const[]){ "node", "text", "comment", "processing-instruction", NULL }, start, n)) {
					e->needs |= EXPR_NEEDS_DOC;
				} else if (!(f = function_named(start, n))) {
					buf_addf(err, "unknown function '%.*s' in expression '%s'",
						 (int)n, start, e->text);
					return -1;
				} else if ((nargs = count_arguments(after)) < f->min ||
					   (f->max >= 0 && nargs > f->max)) {
					buf_addf(err, "%s() takes %s, not %d, in expression '%s'",
						 f->name, arity_text(f), nargs, e->text);
					return -1;
				} else if (n == 4 && !memcmp(start, "json", 4)) {
					e->needs |= EXPR_NEEDS_JSON;
				} else if ((*arg == ')' && in_list(context_functions, start, n)) ||
					   (n == 2 && !memcmp(start, "id", 2)) ||
					   (n == 4 && !memcmp(start, "lang", 4))) {
					e->needs |= EXPR_NEEDS_DOC;
				}
				after_operand = 0;	/* the '(' follows */
			} else if (*after == '$') {
				after_operand = 1;
			} else {
				e->needs |= EXPR_NEEDS_DOC;	/* node test or axis */
				after_operand = 1;
			}
		} else if (*p == '$') {
			const char *start = p++;
			while (name_char(*p) || (*p == ':' && name_start(p[1])))
				p++;
			/* None is ever bound: libxml2 would only say so when the
			 * reference is reached. */
			buf_addf(err, "undefined variable '%.*s' in expression '%s'",
				 (int)(p - start), start, e->text);
			return -1;
		} else {
			if (*p == '/' || *p == '.' || *p == '@')
				e->needs |= EXPR_NEEDS_DOC;
			after_operand = *p == ')' || *p == ']' || *p == '.';
			p++;
		}
	}
	return 0;
}

/* A string literal at *p ('...' or "..."): its content, and *p after it. */
static char *literal(const char **p)
{
	const char *s = skip_space(*p), *close;

	if (*s != '\'' && *s != '"')
		return NULL;
	close = strchr(s + 1, *s);
	if (!close)
		return NULL;
	*p = close + 1;
	return xmemdup(s + 1, (size_t)(close - s - 1));
}

/* header('X') or json('/p'): which, and the argument. */
static enum fast call(const char **p, char **arg)
{
	const char *s = skip_space(*p);
	enum fast kind;

	if (!strncmp(s, "header", 6))
		kind = FAST_HEADER, s += 6;
	else if (!strncmp(s, "json", 4))
		kind = FAST_JSON, s += 4;
	else
		return FAST_NONE;
	s = skip_space(s);
	if (*s != '(')
		return FAST_NONE;
	s++;
	if (!(*arg = literal(&s)))
		return FAST_NONE;
	s = skip_space(s);
	if (*s != ')') {
		free(*arg);
		*arg = NULL;
		return FAST_NONE;
	}
	*p = s + 1;
	return kind;
}

static void recognise_fast(struct expr *e)
{
	const char *p = e->text;
	char *arg = NULL, *lit = NULL;
	enum fast kind = call(&p, &arg);
	int negate = 0;

	if (kind == FAST_NONE)
		return;
	p = skip_space(p);
	if (!*p && kind == FAST_HEADER) {
		/* header('X') alone: its value, for a key or a number. */
		e->fast = kind;
		e->fast_arg = arg;
		return;
	}
	if (*p == '!' && p[1] == '=')
		negate = 1, p += 2;
	else if (*p == '=')
		p++;
	else
		goto no;
	if (!(lit = literal(&p)) || *skip_space(p))
		goto no;
	e->fast = kind;
	e->fast_negate = negate;
	e->fast_arg = arg;
	e->fast_literal = lit;
	return;
no:
	free(arg);
	free(lit);
}

/* 1 or 0 when the fast path knows the answer, -1 to ask XPath. */

/* ---- environment ---- */

void expr_register_ns(struct expr_env *env)
{
	xmlXPathRegisteredNsCleanup(env->xpath);
	for (size_t i = 0; i < env->nns; i++) {
		const char *prefix = env->ns[i];
		xmlXPathRegisterNs(env->xpath, BAD_CAST prefix,
				   BAD_CAST(prefix + strlen(prefix) + 1));
	}
}

struct expr_env *expr_env_new(char *const *ns, size_t nns, struct buf *err)
{
	struct expr_env *env = xmalloc(sizeof(*env));

	xmldoc_init();
	memset(env, 0, sizeof(*env));
	buf_init(&env->doc_err, 0);
	env->kind = -1;
	env->xpath = xmlXPathNewContext(NULL);
	env->empty = xmlNewDoc(BAD_CAST "1.0");
	if (!env->xpath || !env->empty)
		die(EX_SOFTWARE, "cannot create an XPath context");
	env->xpath->userData = env;
	xmlXPathRegisterFunc(env->xpath, BAD_CAST "header", expr_fn_header);
	xmlXPathRegisterFunc(env->xpath, BAD_CAST "json", expr_fn_json);
	env->ns = xmalloc((nns ? nns : 1) * sizeof(*env->ns));
	for (size_t i = 0; i < nns; i++) {
		char *copy = xstrdup(ns[i]), *eq = strchr(copy, '=');
		if (!eq || eq == copy || !eq[1]) {
			buf_addf(err, "invalid namespace '%s' (want PREFIX=URI)", ns[i]);
			free(copy);
			expr_env_free(env);
			return NULL;
		}
		*eq = '\0';
		env->ns[env->nns++] = copy;
	}
	expr_register_ns(env);
	return env;
}

void expr_env_free(struct expr_env *env)
{
	if (!env)
		return;
	expr_env_bind(env, NULL, NULL, 0);
	for (size_t i = 0; i < env->nns; i++)
		free(env->ns[i]);
	free(env->ns);
	xmlXPathFreeContext(env->xpath);
	xmlFreeDoc(env->empty);
	buf_release(&env->doc_err);
	free(env);
}

/* Compile errors: libxml2 reports the position in int1. */
void expr_capture_xpath_error(void *data, xmlErrorPtr e)
{
	struct buf *b = data;

	if (b->len || !e)
		return;
	buf_addstr(b, e->message ? e->message : "syntax error");
	while (b->len && (b->ptr[b->len - 1] == '\n' || b->ptr[b->len - 1] == ' '))
		buf_setlen(b, b->len - 1);
	buf_addf(b, " at position %d", e->int1);
}

struct expr *expr_compile(struct expr_env *env, const char *text, struct buf *err)
{
	struct expr *e = xmalloc(sizeof(*e));
	struct buf why = BUF_INIT;

	memset(e, 0, sizeof(*e));
	e->text = xstrdup(text);
	xmlSetStructuredErrorFunc(&why, expr_capture_xpath_error);
	e->comp = xmlXPathCtxtCompile(env->xpath, BAD_CAST text);
	xmldoc_restore_errors();
	if (!e->comp) {
		buf_addf(err, "invalid expression '%s': %s", text,
			 why.len ? why.ptr : "syntax error");
		goto fail;
	}
	if (analyse(e, err) < 0)
		goto fail;
	recognise_fast(e);
	buf_release(&why);
	return e;
fail:
	buf_release(&why);
	expr_free(e);
	return NULL;
}

void expr_free(struct expr *e)
{
	if (!e)
		return;
	xmlXPathFreeCompExpr(e->comp);
	free(e->text);
	free(e->fast_arg);
	free(e->fast_literal);
	free(e);
}

unsigned expr_needs(const struct expr *e)
{
	return e->needs;
}

const char *expr_text(const struct expr *e)
{
	return e->text;
}
