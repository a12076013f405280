/*
 * expr-parts: what the parts of the expression language share and no
 * tool sees: the environment and a compiled expression (expr.c), the
 * functions header() and json() (expr-fn.c), and the bound message with
 * its body's views and evaluation (expr-eval.c).
 */
#ifndef MSG_EXPR_PARTS_H
#define MSG_EXPR_PARTS_H

#include <libxml/xpath.h>
#include <libxml/xpathInternals.h>

#include "expr.h"

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
	xmlDocPtr lent;		/* the caller's document of the body, or NULL:
				 * never freed here */
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
	int fast_negate;		/* fast_literal NULL: header(X) alone, a value */
	char *fast_arg, *fast_literal;
};

/* The --ns bindings, registered again after a document's own. */
void expr_register_ns(struct expr_env *env);
/* libxml2's first error into the buf at data, with its position. */
void expr_capture_xpath_error(void *data, xmlErrorPtr e);
/* The bound body as a document, built when first asked for; NULL when
 * it is not one (env->doc_err says why). */
xmlDocPtr expr_bound_doc(struct expr_env *env);
/* A fast expression's value without XPath: 1, 0, or -1 to ask XPath. */
int expr_fast_bool(struct expr *e, struct expr_env *env);
/* header(NAME) and json(POINTER) for XPath. */
void expr_fn_header(xmlXPathParserContextPtr ctxt, int nargs);
void expr_fn_json(xmlXPathParserContextPtr ctxt, int nargs);

#endif
