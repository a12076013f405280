/* xsltmsg: msg:header() and <msg:header/> for stylesheets. */
#include "xsltmsg.h"

#include <libxml/xpathInternals.h>
#include <libxslt/extensions.h>
#include <libxslt/templates.h>
#include <libxslt/transform.h>
#include <libxslt/xsltutils.h>
#include <stdlib.h>
#include <string.h>

/* libxslt's extension callbacks carry no pointer of ours. */
static struct {
	const struct headers *in;	/* what msg:header() reads */
	struct headers *out;		/* what <msg:header/> writes */
} bound;

void xsltmsg_bind(const struct headers *in, struct headers *out)
{
	bound.in = in;
	bound.out = out;
}

static void fn_header(xmlXPathParserContextPtr ctxt, int nargs)
{
	xmlChar *name;
	const char *v = NULL;

	CHECK_ARITY(1);
	name = xmlXPathPopString(ctxt);
	if (bound.in && name)
		v = headers_get(bound.in, (const char *)name);
	xmlFree(name);
	valuePush(ctxt, xmlXPathNewString((const xmlChar *)(v ? v : "")));
}

struct header_comp {
	xsltElemPreComp comp;	/* first: libxslt sees only this part */
	xmlXPathCompExprPtr select;
	xmlNsPtr *ns;
	int nsnr;
};

static void header_comp_free(xsltElemPreCompPtr comp)
{
	struct header_comp *hc = (struct header_comp *)comp;

	xmlXPathFreeCompExpr(hc->select);
	xmlFree(hc->ns);
	free(hc);
}

static void header_element(xsltTransformContextPtr ctxt, xmlNodePtr node,
			   xmlNodePtr inst, xsltElemPreCompPtr comp);

static xsltElemPreCompPtr header_precomp(xsltStylesheetPtr style,
					 xmlNodePtr inst,
					 xsltTransformFunction fn)
{
	struct header_comp *hc = xmalloc(sizeof(*hc));
	xmlChar *select = xmlGetNsProp(inst, BAD_CAST "select", NULL);

	memset(hc, 0, sizeof(*hc));
	xsltInitElemPreComp(&hc->comp, style, inst, fn, header_comp_free);
	if (!xmlHasNsProp(inst, BAD_CAST "name", NULL)) {
		xsltTransformError(NULL, style, inst,
				   "msg:header: attribute 'name' is missing\n");
		style->errors++;
	}
	if (select) {
		hc->select = xsltXPathCompile(style, select);
		if (!hc->select) {
			xsltTransformError(NULL, style, inst,
					   "msg:header: invalid select '%s'\n",
					   (const char *)select);
			style->errors++;
		}
		xmlFree(select);
	}
	hc->ns = xmlGetNsList(inst->doc, inst);
	while (hc->ns && hc->ns[hc->nsnr])
		hc->nsnr++;
	return &hc->comp;
}

static void header_element(xsltTransformContextPtr ctxt, xmlNodePtr node,
			   xmlNodePtr inst, xsltElemPreCompPtr comp)
{
	struct header_comp *hc = (struct header_comp *)comp;
	xmlChar *name, *value;

	if (!hc || !bound.out)
		return;
	name = xsltEvalAttrValueTemplate(ctxt, inst, BAD_CAST "name", NULL);
	if (hc->select)
		value = xsltEvalXPathStringNs(ctxt, hc->select, hc->nsnr, hc->ns);
	else
		value = xsltEvalTemplateString(ctxt, node, inst);
	if (!name || !header_name_valid((const char *)name, strlen((const char *)name)))
		xsltTransformError(ctxt, NULL, inst,
				   "msg:header: invalid header name '%s'\n",
				   name ? (const char *)name : "");
	else
		headers_set(bound.out, (const char *)name,
			    value ? (const char *)value : "");
	xmlFree(name);
	xmlFree(value);
}

void xsltmsg_register(void)
{
	xsltRegisterExtModuleFunction(BAD_CAST "header", BAD_CAST XSLT_MSG_NS, fn_header);
	xsltRegisterExtModuleElement(BAD_CAST "header", BAD_CAST XSLT_MSG_NS,
				     header_precomp, header_element);
}
