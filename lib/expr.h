/*
 * expr: the one expression language of msgtools (msg-format(5)):
 * XPath 1.0 compiled once at start-up, with header('Name') and
 * json('/pointer'), over a message's body seen as XML, as the JSON-to-XML
 * mapping of a JSON body, or as a single text node.
 *
 * struct expr_env owns the XPath context, the namespaces (--ns and those
 * declared on each document element) and the message being evaluated. A
 * message is bound once and its document is built only when an expression
 * that needs the body is evaluated, so header-only routing never parses.
 */
#ifndef MSG_EXPR_H
#define MSG_EXPR_H

#include <stddef.h>

#include "buf.h"
#include "header.h"

/* libxml2 types, named without including libxml2 in every cmd file. */
struct _xmlDoc;
struct _xmlNode;

struct expr_env;
struct expr;

/* What an expression reads besides headers. */
enum {
	EXPR_NEEDS_DOC = 1,	/* paths or the context node: the document */
	EXPR_NEEDS_JSON = 2,	/* json(): the body's text, scanned */
	EXPR_NEEDS_BODY = EXPR_NEEDS_DOC | EXPR_NEEDS_JSON,
};

enum body_kind {
	BODY_XML,
	BODY_JSON,
	BODY_TEXT,
};

/* ns: "PREFIX=URI" strings (--ns). NULL with a reason in err. */
struct expr_env *expr_env_new(char *const *ns, size_t nns, struct buf *err);
void expr_env_free(struct expr_env *env);

/*
 * Compile text; NULL with a reason in err: "invalid expression '/a[': ...
 * at position 3" or "unknown function 'foo' in expression '...'".
 */
struct expr *expr_compile(struct expr_env *env, const char *text,
			  struct buf *err);
void expr_free(struct expr *e);
unsigned expr_needs(const struct expr *e);
const char *expr_text(const struct expr *e);

/*
 * Bind the message that expressions see until the next bind. body may be
 * NULL (length 0) when no bound expression needs it. The data must stay
 * valid while bound.
 */
void expr_env_bind(struct expr_env *env, const struct headers *h,
		   const char *body, size_t len);
/* The same, saying how the body is to be seen. */
void expr_env_bind_as(struct expr_env *env, const struct headers *h,
		      const char *body, size_t len, enum body_kind kind);
/* The same with the body's document already built (NULL: none, built
 * when needed as usual), as the body's kind would give it: doc is the
 * caller's, kept while bound and never freed here. It spares parsing a
 * body that the caller keeps as a tree anyway (msg-aggregate's --until
 * on the aggregate so far). */
void expr_env_bind_doc(struct expr_env *env, const struct headers *h,
		       const char *body, size_t len, struct _xmlDoc *doc);
/* How the bound body is seen: by Content-Type, else by its first byte. */
enum body_kind expr_env_kind(struct expr_env *env);

/*
 * Evaluate against the bound message. 0, or with a reason in err -1 (the
 * body is not what it claims to be: an invalid message) or MSG_NO_MEMORY
 * (libxml2 ran out of memory: the message is not at fault). The same
 * holds for every function below that takes err.
 */
int expr_eval_bool(struct expr *e, struct expr_env *env, int *out,
		   struct buf *err);
int expr_eval_string(struct expr *e, struct expr_env *env, struct buf *out,
		     struct buf *err);

/* The bound message's document (built on first use); NULL with err and
 * *status -1 or MSG_NO_MEMORY. */
struct _xmlDoc *expr_env_doc(struct expr_env *env, struct buf *err, int *status);
/* The same with a given context node (msg-split's --header). */
int expr_string_at(struct expr *e, struct expr_env *env,
		   struct _xmlNode *context, struct buf *out, struct buf *err);
/* Does e give a node-set (checked at start-up on an empty document)? */
int expr_selects_nodes(struct expr *e, struct expr_env *env);
/* Matched nodes in document order: a malloc'ed array (free it) and count. */
int expr_nodes(struct expr *e, struct expr_env *env, struct _xmlNode ***nodes,
	       size_t *count, struct buf *err);
/* Register the namespaces in scope at node, so prefixes of a streamed
 * document resolve as they would in the DOM. */
void expr_env_scope_ns(struct expr_env *env, struct _xmlNode *node);

#endif
