/* expr: XPath 1.0 with header() and json() over XML, JSON and text bodies. */
#include "expr.h"

#include <ctype.h>
#include <errno.h>
#include <libxml/parser.h>
#include <libxml/tree.h>
#include <libxml/xmlerror.h>
#include <libxml/xpath.h>
#include <libxml/xpathInternals.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"
#include "jsonptr.h"
#include "jsonxml.h"
#include "message.h"
#include "xmldoc.h"

struct expr_env {
	xmlXPathContextPtr xpath;
	char **ns;		/* --ns, as PREFIX\0URI */
	size_t nns;
	xmlDocPtr empty;	/* the document header-only expressions see */
	/* the bound message */
	const struct headers *h;
	const char *body;
	size_t len;
	xmlDocPtr doc;
	int doc_state;		/* 0 not built, 1 built, -1 invalid */
	int doc_status;		/* when invalid: -1, or MSG_NO_MEMORY */
	struct buf doc_err;
	int kind;		/* enum body_kind, or -1 not decided */
};

/*
 * The commonest routing test, header('X')='v' or json('/p')='v' (or !=),
 * is answered without the XPath machinery: same result, no allocation.
 */
enum fast { FAST_NONE, FAST_HEADER, FAST_JSON };

struct expr {
	char *text;
	xmlXPathCompExprPtr comp;
	unsigned needs;
	enum fast fast;
	int fast_negate;
	char *fast_arg, *fast_literal;
};

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
static int fast_bool(struct expr *e, struct expr_env *env)
{
	struct json_span v;
	struct buf s = BUF_INIT;
	int eq;

	if (e->fast == FAST_HEADER) {
		const char *h = env->h ? headers_get(env->h, e->fast_arg) : NULL;
		eq = !strcmp(h ? h : "", e->fast_literal);
		return eq != e->fast_negate;
	}
	/* json(): strings, missing values and null compare as strings;
	 * numbers and booleans follow XPath's rules, so XPath does them. */
	if (expr_env_kind(env) != BODY_JSON || env->doc_state != 0)
		return -1;
	switch (jsonptr_find(env->body, env->len, e->fast_arg, &v, NULL)) {
	case 0:
		return (*e->fast_literal == '\0') != e->fast_negate;
	case 1:
		if (v.type == JSON_T_NULL)
			return (*e->fast_literal == '\0') != e->fast_negate;
		if (v.type != JSON_T_STRING)
			return -1;
		/* Without escapes the text is the value. */
		if (!memchr(v.p, '\\', v.n))
			eq = v.n - 2 == strlen(e->fast_literal) &&
			     !memcmp(v.p + 1, e->fast_literal, v.n - 2);
		else if (jsonptr_string(&v, &s) < 0)
			eq = -1;
		else
			eq = !strcmp(s.ptr, e->fast_literal);
		buf_release(&s);
		return eq < 0 ? -1 : eq != e->fast_negate;
	default:
		return -1;	/* malformed: XPath reports it */
	}
}

/* ---- extension functions ---- */

static void fn_header(xmlXPathParserContextPtr ctxt, int nargs)
{
	struct expr_env *env = ctxt->context->userData;
	xmlChar *name;
	const char *v = NULL;

	CHECK_ARITY(1);
	name = xmlXPathPopString(ctxt);
	if (env->h && name)
		v = headers_get(env->h, (const char *)name);
	xmlFree(name);
	valuePush(ctxt, xmlXPathNewString((const xmlChar *)(v ? v : "")));
}

static xmlDocPtr bound_doc(struct expr_env *env);

/* One reference token of an RFC 6901 pointer, unescaped (~1 '/', ~0 '~'). */
static const char *pointer_token(const char *p, struct buf *tok)
{
	buf_reset(tok);
	for (; *p && *p != '/'; p++) {
		if (*p == '~' && (p[1] == '0' || p[1] == '1')) {
			buf_addch(tok, p[1] == '0' ? '~' : '/');
			p++;
		} else {
			buf_addch(tok, *p);
		}
	}
	return p;
}

static xmlNodePtr first_element(xmlNodePtr n)
{
	while (n && n->type != XML_ELEMENT_NODE)
		n = n->next;
	return n;
}

/* Walk the JSON mapping of the bound body along pointer. */
static xmlNodePtr json_walk(xmlNodePtr node, const char *pointer)
{
	struct buf tok = BUF_INIT;
	const char *p = pointer;

	while (node && *p == '/') {
		xmlNodePtr child = first_element(node->children);

		p = pointer_token(p + 1, &tok);
		if (xmlStrEqual(node->name, BAD_CAST "map")) {
			for (; child; child = first_element(child->next)) {
				xmlChar *key = xmlGetProp(child, BAD_CAST "key");
				int same = key && !strcmp((char *)key, tok.ptr);
				xmlFree(key);
				if (same)
					break;
			}
		} else if (xmlStrEqual(node->name, BAD_CAST "array")) {
			char *end;
			long i = strtol(tok.ptr, &end, 10);
			if (!tok.len || *end || i < 0 || (tok.ptr[0] == '0' && tok.len > 1))
				child = NULL;
			while (child && i-- > 0)
				child = first_element(child->next);
		} else {
			child = NULL;
		}
		node = child;
	}
	buf_release(&tok);
	return *p ? NULL : node;
}

/* json() on text that was not parsed into a document: scan for the value. */
static void json_from_text(xmlXPathParserContextPtr ctxt, struct expr_env *env,
			   const char *pointer)
{
	struct json_span v;
	struct buf out = BUF_INIT;
	int r;

	buf_reset(&env->doc_err);
	r = jsonptr_find(env->body, env->len, pointer, &v, &env->doc_err);
	if (r < 0) {
		/* The caller reports "body is not JSON" with doc_err. */
		env->doc_state = -1;
		xmlXPathSetError(ctxt, XPATH_INVALID_OPERAND);
		return;
	}
	if (r == 0 || v.type == JSON_T_NULL) {
		valuePush(ctxt, xmlXPathNewString(BAD_CAST ""));
	} else if (v.type == JSON_T_STRING) {
		if (jsonptr_string(&v, &out) < 0)
			buf_reset(&out);
		valuePush(ctxt, xmlXPathNewString((const xmlChar *)out.ptr));
	} else if (v.type == JSON_T_NUMBER) {
		buf_add(&out, v.p, v.n);
		valuePush(ctxt, xmlXPathNewFloat(strtod(out.ptr, NULL)));
	} else if (v.type == JSON_T_TRUE || v.type == JSON_T_FALSE) {
		valuePush(ctxt, xmlXPathNewBoolean(v.type == JSON_T_TRUE));
	} else {
		jsonptr_compact(&v, &out);
		valuePush(ctxt, xmlXPathNewString((const xmlChar *)out.ptr));
	}
	buf_release(&out);
}

static void fn_json(xmlXPathParserContextPtr ctxt, int nargs)
{
	struct expr_env *env = ctxt->context->userData;
	xmlChar *pointer;
	xmlNodePtr node = NULL;
	xmlDocPtr doc;

	CHECK_ARITY(1);
	pointer = xmlXPathPopString(ctxt);
	if (!pointer || expr_env_kind(env) != BODY_JSON ||
	    (*pointer && *pointer != '/')) {
		xmlFree(pointer);
		valuePush(ctxt, xmlXPathNewString(BAD_CAST ""));
		return;
	}
	/* Without a document yet, a scan of the text is all json() needs. */
	if (env->doc_state == 0) {
		json_from_text(ctxt, env, (const char *)pointer);
		xmlFree(pointer);
		return;
	}
	if ((doc = bound_doc(env)))
		node = json_walk(xmlDocGetRootElement(doc), (const char *)pointer);
	xmlFree(pointer);
	if (!node || xmlStrEqual(node->name, BAD_CAST "null")) {
		valuePush(ctxt, xmlXPathNewString(BAD_CAST ""));
	} else if (xmlStrEqual(node->name, BAD_CAST "string")) {
		xmlChar *s = xmlNodeGetContent(node);
		valuePush(ctxt, xmlXPathWrapString(s ? s : xmlStrdup(BAD_CAST "")));
	} else if (xmlStrEqual(node->name, BAD_CAST "number")) {
		xmlChar *s = xmlNodeGetContent(node);
		valuePush(ctxt, xmlXPathNewFloat(s ? strtod((char *)s, NULL) : 0));
		xmlFree(s);
	} else if (xmlStrEqual(node->name, BAD_CAST "boolean")) {
		xmlChar *s = xmlNodeGetContent(node);
		valuePush(ctxt, xmlXPathNewBoolean(s && !strcmp((char *)s, "true")));
		xmlFree(s);
	} else {
		struct buf out = BUF_INIT, err = BUF_INIT;
		jsonxml_serialize(node, 0, &out, &err);
		valuePush(ctxt, xmlXPathNewString((const xmlChar *)out.ptr));
		buf_release(&out);
		buf_release(&err);
	}
}

/* ---- environment ---- */

static void register_ns(struct expr_env *env)
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
	xmlXPathRegisterFunc(env->xpath, BAD_CAST "header", fn_header);
	xmlXPathRegisterFunc(env->xpath, BAD_CAST "json", fn_json);
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
	register_ns(env);
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
static void capture_xpath_error(void *data, xmlErrorPtr e)
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
	xmlSetStructuredErrorFunc(&why, capture_xpath_error);
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

/* ---- the bound message ---- */

void expr_env_bind(struct expr_env *env, const struct headers *h,
		   const char *body, size_t len)
{
	if (env->doc)
		xmlFreeDoc(env->doc);
	env->doc = NULL;
	env->doc_state = 0;
	env->kind = -1;
	env->h = h;
	env->body = body;
	env->len = len;
}

static int contains_ci(const char *s, const char *word)
{
	size_t n = strlen(word);

	for (; *s; s++)
		if (!strncasecmp(s, word, n))
			return 1;
	return 0;
}

void expr_env_bind_as(struct expr_env *env, const struct headers *h,
		      const char *body, size_t len, enum body_kind kind)
{
	expr_env_bind(env, h, body, len);
	env->kind = (int)kind;
}

enum body_kind expr_env_kind(struct expr_env *env)
{
	const char *type = env->h ? headers_get(env->h, "Content-Type") : NULL;

	if (env->kind >= 0)
		return (enum body_kind)env->kind;
	if (type && contains_ci(type, "json"))
		env->kind = BODY_JSON;
	else if (type && contains_ci(type, "xml"))
		env->kind = BODY_XML;
	else
		switch (message_body_start(env->body, env->len)) {
		case STARTS_XML: env->kind = BODY_XML; break;
		case STARTS_JSON: env->kind = BODY_JSON; break;
		case STARTS_OTHER: env->kind = BODY_TEXT; break;
		}
	return (enum body_kind)env->kind;
}

static xmlDocPtr text_doc(const char *p, size_t n)
{
	xmlDocPtr doc = xmlNewDoc(BAD_CAST "1.0");
	xmlNodePtr text = xmlNewDocTextLen(doc, BAD_CAST p, (int)n);

	xmlAddChild((xmlNodePtr)doc, text);
	return doc;
}

/* Prefixes declared on the document element work without --ns. */
static void register_doc_ns(struct expr_env *env, xmlDocPtr doc)
{
	xmlNodePtr root = xmlDocGetRootElement(doc);

	if (!root || !root->nsDef)
		return;
	for (xmlNsPtr ns = root->nsDef; ns; ns = ns->next)
		if (ns->prefix)
			xmlXPathRegisterNs(env->xpath, ns->prefix, ns->href);
	/* --ns wins over the document's own prefixes. */
	for (size_t i = 0; i < env->nns; i++) {
		const char *prefix = env->ns[i];
		xmlXPathRegisterNs(env->xpath, BAD_CAST prefix,
				   BAD_CAST(prefix + strlen(prefix) + 1));
	}
}

static xmlDocPtr bound_doc(struct expr_env *env)
{
	if (env->doc_state)
		return env->doc_state > 0 ? env->doc : NULL;
	buf_reset(&env->doc_err);
	register_ns(env);
	env->doc_status = -1;
	if (env->len > (size_t)INT32_MAX) {
		buf_addstr(&env->doc_err, "body larger than 2 GiB");
		env->doc_state = -1;
		return NULL;
	}
	switch (expr_env_kind(env)) {
	case BODY_XML:
		env->doc = xmldoc_parse(env->body, env->len, &env->doc_err,
					&env->doc_status);
		break;
	case BODY_JSON:
		env->doc = jsonxml_parse(env->body, env->len, &env->doc_err);
		break;
	case BODY_TEXT:
		env->doc = text_doc(env->body, env->len);
		if (!env->doc) {
			buf_addstr(&env->doc_err, "out of memory");
			env->doc_status = MSG_NO_MEMORY;
		}
		break;
	}
	if (!env->doc) {
		env->doc_state = -1;
		return NULL;
	}
	register_doc_ns(env, env->doc);
	env->doc_state = 1;
	return env->doc;
}

/* Why the bound body has no document: "body is not XML: ...", or the
 * machine's fault. Returns -1 or MSG_NO_MEMORY. */
static int doc_failure(struct expr_env *env, struct buf *err)
{
	if (env->doc_status == MSG_NO_MEMORY)
		buf_addf(err, "%s parsing the body", env->doc_err.ptr);
	else
		buf_addf(err, "body is not %s: %s",
			 expr_env_kind(env) == BODY_JSON ? "JSON" : "XML",
			 env->doc_err.ptr);
	return env->doc_status;
}

struct _xmlDoc *expr_env_doc(struct expr_env *env, struct buf *err, int *status)
{
	xmlDocPtr doc = bound_doc(env);

	*status = doc ? 0 : doc_failure(env, err);
	return doc;
}

void expr_env_scope_ns(struct expr_env *env, struct _xmlNode *node)
{
	xmlNsPtr *list = node ? xmlGetNsList(node->doc, node) : NULL;

	register_ns(env);
	if (list) {
		for (xmlNsPtr *ns = list; *ns; ns++)
			if ((*ns)->prefix)
				xmlXPathRegisterNs(env->xpath, (*ns)->prefix, (*ns)->href);
		xmlFree(list);
	}
	for (size_t i = 0; i < env->nns; i++) {
		const char *prefix = env->ns[i];
		xmlXPathRegisterNs(env->xpath, BAD_CAST prefix,
				   BAD_CAST(prefix + strlen(prefix) + 1));
	}
}

/* XPath's errors, and whether it ran out of memory. */
struct eval_errors {
	struct buf why;
	int no_memory;
};

static void capture_eval_error(void *data, xmlErrorPtr e)
{
	struct eval_errors *ee = data;

	if (e && e->code == XML_ERR_NO_MEMORY)
		ee->no_memory = 1;
	capture_xpath_error(&ee->why, e);
}

/* The value of e, or NULL with the reason in err and *status -1 (the
 * message is invalid) or MSG_NO_MEMORY. */
static xmlXPathObjectPtr eval_at(struct expr *e, struct expr_env *env,
				 xmlNodePtr context, struct buf *err, int *status)
{
	xmlXPathObjectPtr r;
	struct eval_errors ee = { BUF_INIT, 0 };

	*status = 0;
	if (context) {
		env->xpath->doc = context->doc;
		env->xpath->node = context;
	} else if (e->needs & EXPR_NEEDS_DOC) {
		xmlDocPtr doc = bound_doc(env);
		if (!doc) {
			*status = doc_failure(env, err);
			return NULL;
		}
		env->xpath->doc = doc;
		env->xpath->node = (xmlNodePtr)doc;
	} else {
		/* Headers, and json() which scans the body's text itself. */
		env->xpath->doc = env->empty;
		env->xpath->node = (xmlNodePtr)env->empty;
	}
	xmlSetStructuredErrorFunc(&ee, capture_eval_error);
	r = xmlXPathCompiledEval(e->comp, env->xpath);
	xmldoc_restore_errors();
	if (!r) {
		*status = ee.no_memory ? MSG_NO_MEMORY : -1;
		if (ee.no_memory)
			buf_addf(err, "out of memory evaluating '%s'", e->text);
		else if (env->doc_state < 0)
			buf_addf(err, "body is not JSON: %s", env->doc_err.ptr);
		else
			buf_addf(err, "cannot evaluate '%s': %s", e->text,
				 ee.why.len ? ee.why.ptr : "error");
	}
	buf_release(&ee.why);
	return r;
}

int expr_eval_bool(struct expr *e, struct expr_env *env, int *out, struct buf *err)
{
	xmlXPathObjectPtr r;
	int fast = e->fast ? fast_bool(e, env) : -1, status;

	if (fast >= 0) {
		*out = fast;
		return 0;
	}
	r = eval_at(e, env, NULL, err, &status);

	if (!r)
		return status;
	*out = xmlXPathCastToBoolean(r);
	xmlXPathFreeObject(r);
	return 0;
}

static int to_string(xmlXPathObjectPtr r, struct buf *out)
{
	xmlChar *s = xmlXPathCastToString(r);

	buf_reset(out);
	if (s)
		buf_addstr(out, (const char *)s);
	xmlFree(s);
	xmlXPathFreeObject(r);
	return 0;
}

int expr_eval_string(struct expr *e, struct expr_env *env, struct buf *out,
		     struct buf *err)
{
	int status;
	xmlXPathObjectPtr r = eval_at(e, env, NULL, err, &status);

	return r ? to_string(r, out) : status;
}

int expr_string_at(struct expr *e, struct expr_env *env, struct _xmlNode *context,
		   struct buf *out, struct buf *err)
{
	int status;
	xmlXPathObjectPtr r = eval_at(e, env, context, err, &status);

	return r ? to_string(r, out) : status;
}

int expr_selects_nodes(struct expr *e, struct expr_env *env)
{
	struct buf err = BUF_INIT;
	xmlXPathObjectPtr r;
	int yes, status;

	/* On an empty document, a path still gives a (empty) node-set. An
	 * error (a prefix only the documents will declare) proves nothing. */
	r = eval_at(e, env, (xmlNodePtr)env->empty, &err, &status);
	yes = !r || r->type == XPATH_NODESET;
	xmlXPathFreeObject(r);
	buf_release(&err);
	return yes;
}

int expr_nodes(struct expr *e, struct expr_env *env, struct _xmlNode ***nodes,
	       size_t *count, struct buf *err)
{
	int status;
	xmlXPathObjectPtr r = eval_at(e, env, NULL, err, &status);
	size_t n;

	*nodes = NULL;
	*count = 0;
	if (!r)
		return status;
	if (r->type != XPATH_NODESET) {
		buf_addf(err, "expression '%s' does not select nodes", e->text);
		xmlXPathFreeObject(r);
		return -1;
	}
	n = r->nodesetval ? (size_t)r->nodesetval->nodeNr : 0;
	for (size_t i = 0; i < n; i++)
		if (r->nodesetval->nodeTab[i]->type == XML_NAMESPACE_DECL) {
			/* libxml2's namespace nodes die with the node-set. */
			buf_addf(err, "expression '%s' selects namespace nodes", e->text);
			xmlXPathFreeObject(r);
			return -1;
		}
	if (n) {
		*nodes = xmalloc(n * sizeof(**nodes));
		memcpy(*nodes, r->nodesetval->nodeTab, n * sizeof(**nodes));
	}
	*count = n;
	xmlXPathFreeObject(r);
	return 0;
}
