/* xsltout: what a message became, written out as its new body. */
#include "xsltout.h"

#include <libxml/xmlIO.h>
#include <libxml/xmlsave.h>
#include <libxslt/imports.h>
#include <libxslt/xsltutils.h>
#include <string.h>
#include <strings.h>

#include "jsonxml.h"

void xslt_result_init(struct xslt_result *r)
{
	buf_init(&r->body, 0);
	buf_init(&r->type, 0);
	headers_init(&r->headers);
	buf_init(&r->messages, 0);
	buf_init(&r->error, 0);
}

void xslt_result_release(struct xslt_result *r)
{
	buf_release(&r->body);
	buf_release(&r->type);
	headers_release(&r->headers);
	buf_release(&r->messages);
	buf_release(&r->error);
}

void xsltout_reset(struct xslt_result *r)
{
	buf_reset(&r->body);
	buf_reset(&r->type);
	headers_reset(&r->headers);
	buf_reset(&r->messages);
	buf_reset(&r->error);
}

static int write_buf(void *ctx, const char *p, int n)
{
	buf_add(ctx, p, (size_t)n);
	return n;
}

static int close_buf(void *ctx)
{
	(void)ctx;
	return 0;
}

/* The mapping as JSON text, with a final newline as jq writes it. */
static int write_json(xmlNodePtr root, int pretty, struct xslt_result *r)
{
	struct buf why = BUF_INIT;

	if (!root || jsonxml_serialize(root, pretty, &r->body, &why) < 0) {
		buf_addf(&r->error, "not the JSON mapping: %s",
			 why.len ? why.ptr : "no root element");
		buf_release(&why);
		return -1;
	}
	buf_addch(&r->body, '\n');
	buf_reset(&r->type);
	buf_addstr(&r->type, "application/json");
	buf_release(&why);
	return 0;
}

/*
 * A document without a stylesheet: XML as xmllint writes it. The mapping
 * of JSON is declared UTF-8, so its text stays as it is rather than
 * turning into character references.
 */
static int write_xml(const struct xslt_options *o, xmlDocPtr doc,
		     enum body_kind kind, struct xslt_result *r)
{
	int opts = o->layout == XSLT_LAYOUT_FORMAT ? XML_SAVE_FORMAT : 0;
	const char *enc = o->encoding ? o->encoding :
			  kind == BODY_JSON ? "UTF-8" : NULL;
	xmlSaveCtxtPtr save = xmlSaveToIO(write_buf, close_buf, &r->body,
					  enc, opts);

	if (!save || xmlSaveDoc(save, doc) < 0 || xmlSaveClose(save) < 0) {
		buf_addstr(&r->error, "cannot serialize the document");
		return -1;
	}
	return 0;
}

static int mentions(const char *type, const char *word)
{
	size_t n = strlen(word);

	for (; type && *type; type++)
		if (!strncasecmp(type, word, n))
			return 1;
	return 0;
}

int xsltout_convert(const struct xslt_options *o, xmlDocPtr doc,
		    enum body_kind kind, const struct headers *h,
		    const char *body, size_t len, struct xslt_result *r)
{
	const char *type = h ? headers_get(h, "Content-Type") : NULL;
	int json = o->to == XSLT_TO_JSON ||
		   (o->to == XSLT_TO_AUTO && kind == BODY_JSON);
	const char *word = json ? "json" : "xml";

	if (mentions(type, word))
		buf_addstr(&r->type, type);
	else
		buf_addf(&r->type, "application/%s", word);
	if (o->layout == XSLT_LAYOUT_KEEP && kind == (json ? BODY_JSON : BODY_XML) &&
	    (json || !o->encoding)) {
		buf_add(&r->body, body, len);
		return 0;
	}
	if (json)
		return write_json(xmlDocGetRootElement(doc),
				  o->layout == XSLT_LAYOUT_FORMAT, r);
	return write_xml(o, doc, kind, r);
}

/* Content-Type for a result written as xsltproc would write it. */
static void result_type(xsltStylesheetPtr style, xmlDocPtr res,
			const xmlChar *method, struct xslt_result *r)
{
	const xmlChar *media, *encoding;
	const char *type = "application/xml";
	int text = 0;

	XSLT_GET_IMPORT_PTR(media, style, mediaType)
	XSLT_GET_IMPORT_PTR(encoding, style, encoding)
	if (xmlStrEqual(method, BAD_CAST "html") ||
	    (!method && res->type == XML_HTML_DOCUMENT_NODE)) {
		type = "text/html";
		text = 1;
	} else if (xmlStrEqual(method, BAD_CAST "text")) {
		type = "text/plain";
		text = 1;
	} else if (xmlStrEqual(method, BAD_CAST "xhtml")) {
		type = "application/xhtml+xml";
	}
	buf_addstr(&r->type, media ? (const char *)media : type);
	/* XML says its encoding itself; text and HTML need the header. */
	if (!media && text && encoding && xmlStrcasecmp(encoding, BAD_CAST "UTF-8"))
		buf_addf(&r->type, "; charset=%s", (const char *)encoding);
}

int xsltout_result(const struct xslt_options *o, xsltStylesheetPtr style,
		   xmlDocPtr res, struct xslt_result *r)
{
	const xmlChar *method, *encoding;
	xmlCharEncodingHandlerPtr encoder = NULL;
	xmlOutputBufferPtr out;
	int plain, saved;

	XSLT_GET_IMPORT_PTR(method, style, method)
	XSLT_GET_IMPORT_PTR(encoding, style, encoding)
	plain = !method || xmlStrEqual(method, BAD_CAST "xml");
	if (o->to == XSLT_TO_JSON ||
	    (o->to == XSLT_TO_AUTO && plain && res->type == XML_DOCUMENT_NODE &&
	     jsonxml_is_mapping(res))) {
		size_t at = r->body.len;
		if (write_json(xmlDocGetRootElement(res),
			       o->layout == XSLT_LAYOUT_FORMAT, r) == 0)
			return 0;
		if (o->to == XSLT_TO_JSON)
			return -1;
		/* Named like the mapping but not one: it is XML after all. */
		buf_setlen(&r->body, at);
		buf_reset(&r->error);
	}
	result_type(style, res, method, r);
	/* The output encoder is chosen as xsltproc chooses it. */
	if (encoding) {
		encoder = xmlFindCharEncodingHandler((const char *)encoding);
		if (encoder && xmlStrEqual(BAD_CAST encoder->name, BAD_CAST "UTF-8"))
			encoder = NULL;
	}
	out = xmlOutputBufferCreateIO(write_buf, close_buf, &r->body, encoder);
	if (!out) {
		buf_addstr(&r->error, "cannot create an output buffer");
		return -1;
	}
	saved = xsltSaveResultTo(out, res, style);
	if (xmlOutputBufferClose(out) < 0 || saved < 0) {
		buf_addf(&r->error, "cannot write the result%s%s",
			 encoding ? " in " : "", encoding ? (const char *)encoding : "");
		return -1;
	}
	return 0;
}
