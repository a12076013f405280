/*
 * xsltout: the body a translated message gets. A stylesheet's result is
 * written as xsltproc writes it (its output method, encoding and media
 * type), or as JSON when it is the JSON mapping; without a stylesheet a
 * document is converted between XML and JSON and laid out as the options
 * ask (the Normalizer's conversions).
 */
#ifndef MSG_XSLTOUT_H
#define MSG_XSLTOUT_H

#include <libxslt/xsltInternals.h>

#include "xslt.h"

/* Empty r for the next message. */
void xsltout_reset(struct xslt_result *r);

/* The result of style as r's body and type; -1 with r->error. */
int xsltout_result(const struct xslt_options *o, xsltStylesheetPtr style,
		   xmlDocPtr res, struct xslt_result *r);

/*
 * The document doc, parsed from body as kind, converted: the body as it
 * is when it already has the form asked for. -1 with r->error.
 */
int xsltout_convert(const struct xslt_options *o, xmlDocPtr doc,
		    enum body_kind kind, const struct headers *h,
		    const char *body, size_t len, struct xslt_result *r);

#endif
