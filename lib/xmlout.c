/* xmlout: fast serialisation of an element and its subtree. */
#include "xmlout.h"

#include <string.h>

static const char hexdigits[] = "0123456789ABCDEF";

/* Text content: & < > and CR are escaped, everything else is kept. */
static void text_escaped(const xmlChar *s, struct buf *out)
{
	const xmlChar *run = s;

	for (; *s; s++) {
		const char *rep;
		switch (*s) {
		case '&': rep = "&amp;"; break;
		case '<': rep = "&lt;"; break;
		case '>': rep = "&gt;"; break;
		case '\r': rep = "&#13;"; break;
		default: continue;
		}
		buf_add(out, run, (size_t)(s - run));
		buf_addstr(out, rep);
		run = s + 1;
	}
	buf_add(out, run, (size_t)(s - run));
}

/* A character reference for the UTF-8 sequence at s; returns its length. */
static int char_ref(const xmlChar *s, struct buf *out)
{
	unsigned cp;
	int len;
	char tmp[16];
	int n = 0;

	if (*s < 0xe0)
		cp = *s & 0x1f, len = 2;
	else if (*s < 0xf0)
		cp = *s & 0x0f, len = 3;
	else
		cp = *s & 0x07, len = 4;
	for (int i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 1;	/* not UTF-8: libxml2 never stores that */
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	buf_addstr(out, "&#x");
	do
		tmp[n++] = hexdigits[cp & 15];
	while (cp >>= 4);
	while (n)
		buf_addch(out, tmp[--n]);
	buf_addch(out, ';');
	return len;
}

/* Attribute values: also " and the whitespace that attribute-value
 * normalisation would change; non-ASCII as references when the document
 * declared no encoding, as libxml2 does. */
static void attr_escaped(const xmlChar *s, int refs, struct buf *out)
{
	const xmlChar *run = s;

	while (*s) {
		const char *rep = NULL;
		switch (*s) {
		case '&': rep = "&amp;"; break;
		case '<': rep = "&lt;"; break;
		case '>': rep = "&gt;"; break;
		case '"': rep = "&quot;"; break;
		case '\n': rep = "&#10;"; break;
		case '\r': rep = "&#13;"; break;
		case '\t': rep = "&#9;"; break;
		default:
			if (refs && *s >= 0x80) {
				buf_add(out, run, (size_t)(s - run));
				s += char_ref(s, out);
				run = s;
				continue;
			}
			s++;
			continue;
		}
		buf_add(out, run, (size_t)(s - run));
		buf_addstr(out, rep);
		run = ++s;
	}
	buf_add(out, run, (size_t)(s - run));
}

static void qname(const xmlNs *ns, const xmlChar *name, struct buf *out)
{
	if (ns && ns->prefix) {
		buf_addstr(out, (const char *)ns->prefix);
		buf_addch(out, ':');
	}
	buf_addstr(out, (const char *)name);
}

static void ns_decl(const xmlNs *ns, struct buf *out)
{
	buf_addstr(out, " xmlns");
	if (ns->prefix) {
		buf_addch(out, ':');
		buf_addstr(out, (const char *)ns->prefix);
	}
	buf_addstr(out, "=\"");
	attr_escaped(ns->href ? ns->href : BAD_CAST "", 0, out);
	buf_addch(out, '"');
}

static int declared_on(const xmlNode *node, const xmlChar *prefix)
{
	for (const xmlNs *ns = node->nsDef; ns; ns = ns->next)
		if (xmlStrEqual(ns->prefix, prefix))
			return 1;
	return 0;
}

/* Declarations inherited from ancestors, nearest first, each prefix once. */
static void inherited_ns(const xmlNode *node, struct buf *out)
{
	for (const xmlNode *a = node->parent; a && a->type == XML_ELEMENT_NODE; a = a->parent)
		for (const xmlNs *ns = a->nsDef; ns; ns = ns->next) {
			int shadowed = declared_on(node, ns->prefix);
			for (const xmlNode *b = node->parent; !shadowed && b != a; b = b->parent)
				shadowed = declared_on(b, ns->prefix);
			if (!shadowed)
				ns_decl(ns, out);
		}
}

static void attr_value(const xmlAttr *a, int refs, struct buf *out)
{
	for (const xmlNode *c = a->children; c; c = c->next) {
		if (c->type == XML_TEXT_NODE && c->content)
			attr_escaped(c->content, refs, out);
		else if (c->type == XML_ENTITY_REF_NODE) {
			buf_addch(out, '&');
			buf_addstr(out, (const char *)c->name);
			buf_addch(out, ';');
		}
	}
}

static void node_out(const xmlNode *n, int refs, int top, struct buf *out);

/* "<name" and what follows it in a start tag, up to the '>'. */
static void start_tag(const xmlNode *e, int refs, int top, struct buf *out)
{
	buf_addch(out, '<');
	qname(e->ns, e->name, out);
	for (const xmlNs *ns = e->nsDef; ns; ns = ns->next)
		ns_decl(ns, out);
	if (top)
		inherited_ns(e, out);
	for (const xmlAttr *a = e->properties; a; a = a->next) {
		buf_addch(out, ' ');
		qname(a->ns, a->name, out);
		buf_addstr(out, "=\"");
		attr_value(a, refs, out);
		buf_addch(out, '"');
	}
}

static void element_out(const xmlNode *e, int refs, int top, struct buf *out)
{
	start_tag(e, refs, top, out);
	if (!e->children) {
		buf_addstr(out, "/>");
		return;
	}
	buf_addch(out, '>');
	for (const xmlNode *c = e->children; c; c = c->next)
		node_out(c, refs, 0, out);
	buf_addstr(out, "</");
	qname(e->ns, e->name, out);
	buf_addch(out, '>');
}

static void node_out(const xmlNode *n, int refs, int top, struct buf *out)
{
	switch (n->type) {
	case XML_ELEMENT_NODE:
		element_out(n, refs, top, out);
		break;
	case XML_TEXT_NODE:
		if (n->content)
			text_escaped(n->content, out);
		break;
	case XML_CDATA_SECTION_NODE:
		buf_addstr(out, "<![CDATA[");
		if (n->content)
			buf_addstr(out, (const char *)n->content);
		buf_addstr(out, "]]>");
		break;
	case XML_COMMENT_NODE:
		buf_addstr(out, "<!--");
		if (n->content)
			buf_addstr(out, (const char *)n->content);
		buf_addstr(out, "-->");
		break;
	case XML_PI_NODE:
		buf_addstr(out, "<?");
		buf_addstr(out, (const char *)n->name);
		if (n->content && *n->content) {
			buf_addch(out, ' ');
			buf_addstr(out, (const char *)n->content);
		}
		buf_addstr(out, "?>");
		break;
	case XML_ENTITY_REF_NODE:
		buf_addch(out, '&');
		buf_addstr(out, (const char *)n->name);
		buf_addch(out, ';');
		break;
	default:
		break;
	}
}

void xmlout_element(xmlNodePtr node, struct buf *out)
{
	/* libxml2 writes non-ASCII in attributes as character references
	 * when the document declared no encoding; so do we. */
	int refs = !node->doc || !node->doc->encoding;

	node_out(node, refs, 1, out);
}

void xmlout_start_tag(xmlNodePtr node, struct buf *out)
{
	start_tag(node, !node->doc || !node->doc->encoding, 1, out);
	buf_addch(out, '>');
}
