/* expr-eval: the message an environment is bound to, its body's views
 * (XML, the JSON mapping, or text) built when first needed, and the
 * evaluation of expressions against it. */
#include "expr-parts.h"

#include <libxml/parser.h>
#include <string.h>

#include "jsonxml.h"
#include "message.h"
#include "xmldoc.h"

/* ---- the bound message ---- */

void expr_env_bind(struct expr_env *env, const struct headers *h,
		   const char *body, size_t len)
{
	if (env->doc && env->doc != env->lent)
		xmlFreeDoc(env->doc);
	env->doc = NULL;
	env->lent = NULL;
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

void expr_env_bind_doc(struct expr_env *env, const struct headers *h,
		       const char *body, size_t len, struct _xmlDoc *doc)
{
	expr_env_bind(env, h, body, len);
	env->lent = doc;
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

/* The bound body parsed as its kind says; NULL with env->doc_err. */
static xmlDocPtr parse_body(struct expr_env *env)
{
	xmlDocPtr doc = NULL;

	switch (expr_env_kind(env)) {
	case BODY_XML:
		doc = xmldoc_parse(env->body, env->len, &env->doc_err,
				   &env->doc_status);
		break;
	case BODY_JSON:
		doc = jsonxml_parse(env->body, env->len, &env->doc_err);
		break;
	case BODY_TEXT:
		doc = text_doc(env->body, env->len);
		if (!doc) {
			buf_addstr(&env->doc_err, "out of memory");
			env->doc_status = MSG_NO_MEMORY;
		}
		break;
	}
	return doc;
}

xmlDocPtr expr_bound_doc(struct expr_env *env)
{
	if (env->doc_state)
		return env->doc_state > 0 ? env->doc : NULL;
	buf_reset(&env->doc_err);
	expr_register_ns(env);
	env->doc_status = -1;
	if (env->len > (size_t)INT32_MAX) {
		buf_addstr(&env->doc_err, "body larger than 2 GiB");
		env->doc_state = -1;
		return NULL;
	}
	env->doc = env->lent ? env->lent : parse_body(env);
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
	xmlDocPtr doc = expr_bound_doc(env);

	*status = doc ? 0 : doc_failure(env, err);
	return doc;
}

void expr_env_scope_ns(struct expr_env *env, struct _xmlNode *node)
{
	xmlNsPtr *list = node ? xmlGetNsList(node->doc, node) : NULL;

	expr_register_ns(env);
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
	expr_capture_xpath_error(&ee->why, e);
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
		xmlDocPtr doc = expr_bound_doc(env);
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
	int fast = e->fast ? expr_fast_bool(e, env) : -1, status;

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
	xmlXPathObjectPtr r;

	if (e->fast == FAST_HEADER && !e->fast_literal) {
		const char *v = env->h ? headers_get(env->h, e->fast_arg) : NULL;
		buf_reset(out);
		buf_addstr(out, v ? v : "");
		return 0;
	}
	r = eval_at(e, env, NULL, err, &status);

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
