/* expr-fn: header() and json(), the functions the expression language
 * adds to XPath, and the commonest tests of them answered without it. */
#include "expr-parts.h"

#include <stdlib.h>
#include <string.h>

#include "jsonptr.h"
#include "jsonxml.h"

int expr_fast_bool(struct expr *e, struct expr_env *env)
{
	struct json_span v;
	struct buf s = BUF_INIT;
	int eq;

	if (!e->fast_literal)
		return -1;
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

void expr_fn_header(xmlXPathParserContextPtr ctxt, int nargs)
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

		p = jsonptr_token(p + 1, &tok);
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

void expr_fn_json(xmlXPathParserContextPtr ctxt, int nargs)
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
	if ((doc = expr_bound_doc(env)))
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
