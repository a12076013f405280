/*
 * xslt: what msg-translate asks of libxslt and libexslt. One engine per
 * process owns the compiled stylesheets (cached by file path), the
 * security rules of msg-translate(1) (no network; stylesheets are parsed
 * as xsltproc --nonet parses them and their imports and includes followed
 * wherever they lead; document() reads only under the directories of the
 * stylesheet's modules and --allow-read, files are written only under
 * --allow-write: lib/sandbox), the extensions of the namespace
 * XSLT_MSG_NS (lib/xsltmsg), xsl:message capture (lib/xsltlog), and the
 * body a message becomes (lib/xsltout): a result as xsltproc writes it,
 * or as JSON when it is the JSON mapping. Without a stylesheet it
 * converts between XML and JSON and pretty-prints or compacts either.
 */
#ifndef MSG_XSLT_H
#define MSG_XSLT_H

#include <stddef.h>

#include "buf.h"
#include "expr.h"
#include "header.h"

/* The namespace of msg:header(), documented in msg-translate(1). */
#define XSLT_MSG_NS "urn:msgtools:xslt"

/* Compiled stylesheets kept at once; the least recently used goes first. */
#define XSLT_CACHE_MAX 64

enum xslt_to {
	XSLT_TO_AUTO,		/* JSON for a mapping result, else XML */
	XSLT_TO_XML,
	XSLT_TO_JSON,
};

enum xslt_layout {
	XSLT_LAYOUT_KEEP,	/* as the stylesheet or the input has it */
	XSLT_LAYOUT_FORMAT,	/* indented */
	XSLT_LAYOUT_COMPACT,	/* no insignificant whitespace */
};

struct xslt_options {
	char *const *allow_read;	/* directories */
	size_t nallow_read;
	char *const *allow_write;
	size_t nallow_write;
	int load_dtd;		/* local DTDs, catalogs, entities: trusted input */
	const char *encoding;	/* output encoding, NULL for the stylesheet's */
	enum xslt_to to;
	enum xslt_layout layout;
};

struct xslt;
struct xslt_sheet;

/* What one message became. */
struct xslt_result {
	struct buf body;
	struct buf type;	/* its Content-Type */
	struct headers headers;	/* set by <msg:header/>, in order */
	struct buf messages;	/* xsl:message text that did not terminate */
	struct buf error;	/* why the message is invalid */
};

/* NULL with a reason in err (a directory that does not exist). */
struct xslt *xslt_new(const struct xslt_options *o, struct buf *err);
/* Frees the cache and libxslt's and libxml2's globals: call it last. */
void xslt_free(struct xslt *x);

/*
 * A global parameter for every run, "NAME=VALUE", as xsltproc --param
 * (VALUE is an XPath expression) or --stringparam (literal = 1, VALUE is
 * a string). An expression is compiled now: -1 with "invalid parameter
 * 'NAME=VALUE': reason" in err when it does not, or there is no NAME.
 */
int xslt_param(struct xslt *x, const char *assignment, int literal,
	       struct buf *err);

/* The stylesheet at path (compiled on first use); NULL with err. */
struct xslt_sheet *xslt_sheet_path(struct xslt *x, const char *path,
				   struct buf *err);
/*
 * The stylesheet a message names: a relative path without "..", looked
 * up in the --allow-read directories in order. NULL with err.
 */
struct xslt_sheet *xslt_sheet_named(struct xslt *x, const char *name,
				    struct buf *err);

void xslt_result_init(struct xslt_result *r);
void xslt_result_release(struct xslt_result *r);

/*
 * Translate one body seen as kind (BODY_TEXT is refused) with sheet, or
 * convert it without one. Returns 0, or -1 with the reason in r->error:
 * the body is not what it claims, the stylesheet failed or terminated;
 * MSG_NO_MEMORY when libxml2 ran out of memory parsing the body.
 */
int xslt_translate(struct xslt *x, struct xslt_sheet *sheet,
		   const struct headers *h, const char *body, size_t len,
		   enum body_kind kind, struct xslt_result *r);

#endif
