/* splitter-xml: XML bodies cut into items by an XPath expression, over
 * the whole document or, for a plain path, as the body streams in. */
#include "splitter-parts.h"

#include <libxml/pattern.h>
#include <libxml/xmlreader.h>
#include <stdlib.h>
#include <string.h>

#include "message.h"
#include "xmldoc.h"
#include "xmlout.h"

/* ---- XML nodes as standalone documents ---- */

/* The wrapper of a group: the parent element's name and namespaces. */
static void group_wrapper(struct sink *k, xmlNodePtr item)
{
	xmlNodePtr parent = item->parent;
	xmlNsPtr *inscope;
	const xmlChar *prefix;

	if (k->gwrap_open.len || !parent || parent->type != XML_ELEMENT_NODE)
		return;
	prefix = parent->ns ? parent->ns->prefix : NULL;
	buf_addch(&k->gwrap_open, '<');
	if (prefix)
		buf_addf(&k->gwrap_open, "%s:", (const char *)prefix);
	buf_addstr(&k->gwrap_open, (const char *)parent->name);
	inscope = xmlGetNsList(parent->doc, parent);
	for (xmlNsPtr *ns = inscope; ns && *ns; ns++) {
		if ((*ns)->prefix)
			buf_addf(&k->gwrap_open, " xmlns:%s=\"%s\"",
				 (const char *)(*ns)->prefix, (const char *)(*ns)->href);
		else
			buf_addf(&k->gwrap_open, " xmlns=\"%s\"", (const char *)(*ns)->href);
	}
	xmlFree(inscope);
	buf_addch(&k->gwrap_open, '>');
	buf_addstr(&k->gwrap_close, "</");
	if (prefix)
		buf_addf(&k->gwrap_close, "%s:", (const char *)prefix);
	buf_addf(&k->gwrap_close, "%s>", (const char *)parent->name);
}

int xml_item(struct sink *k, xmlNodePtr node, struct buf *err)
{
	struct buf text = BUF_INIT;
	const char *type = "text/plain", *sep = "\n";
	xmlChar *content;
	int r;

	if (k->gcount == 0 && (r = sink_item_headers(k, node, err)) < 0)
		return r;
	switch (node->type) {
	case XML_DOCUMENT_NODE:
		node = xmlDocGetRootElement((xmlDocPtr)node);
		if (!node)
			break;
		/* fall through */
	case XML_ELEMENT_NODE:
		xmlout_element(node, &text);
		type = "application/xml";
		sep = NULL;
		if (k->s->cfg.group > 1)
			group_wrapper(k, node);
		break;
	default:
		content = xmlNodeGetContent(node);
		if (content)
			buf_addstr(&text, (const char *)content);
		xmlFree(content);
		break;
	}
	r = sink_add_item(k, text.ptr, text.len, type, sep);
	buf_release(&text);
	return r;
}

/* A body held whole: XPath over the DOM (XML or the JSON mapping). */
int split_dom(struct splitter *s, struct sink *k, const char *body,
	      size_t len, struct buf *err)
{
	xmlNodePtr *nodes;
	xmlDocPtr doc;
	size_t n;
	int json, r = 0;

	expr_env_bind(s->env, k->parent, body, len);
	json = expr_env_kind(s->env) == BODY_JSON;
	if (!(doc = expr_env_doc(s->env, err, &r)))
		return r;
	if (!json)
		sink_set_root(k, xmlDocGetRootElement(doc));
	if ((r = expr_nodes(s->xpath, s->env, &nodes, &n, err)) < 0)
		return r;
	k->size_known = 1;
	k->total = (n + s->cfg.group - 1) / s->cfg.group;
	for (size_t i = 0; i < n && r == 0; i++)
		r = json ? json_node_item(k, nodes[i], err) : xml_item(k, nodes[i], err);
	free(nodes);
	return r;
}

/* ---- XML, as the body streams in ---- */

struct xml_io {
	struct body_source *src;
	const char *p;		/* what is left of the last piece */
	size_t left;
	int failed;
};

static int xml_read(void *arg, char *buffer, int len)
{
	struct xml_io *io = arg;
	size_t n;

	if (!io->left) {
		int r = io->src->next(io->src->arg, &io->p, &io->left);
		if (r < 0) {
			io->failed = 1;
			return -1;
		}
		if (r == 0)
			return 0;
	}
	n = io->left < (size_t)len ? io->left : (size_t)len;
	memcpy(buffer, io->p, n);
	io->p += n;
	io->left -= n;
	return (int)n;
}

static int no_close(void *arg)
{
	(void)arg;
	return 0;
}

/* The pattern is compiled at the document element, whose namespace
 * prefixes it may use, as the expression could in the DOM. */
static xmlPatternPtr compile_pattern(struct splitter *s, xmlNodePtr root)
{
	const xmlChar **ns = xmalloc((2 * (s->cfg.nns + 16) + 2) * sizeof(*ns));
	size_t i = 0;
	xmlPatternPtr pat;

	/* --ns first: the pattern takes the first binding of a prefix. */
	for (size_t k = 0; k < s->cfg.nns; k++) {
		const char *eq = strchr(s->cfg.ns[k], '=');
		ns[i++] = (const xmlChar *)xmemdup(eq + 1, strlen(eq + 1));
		ns[i++] = (const xmlChar *)xmemdup(s->cfg.ns[k], (size_t)(eq - s->cfg.ns[k]));
	}
	for (xmlNsPtr d = root ? root->nsDef : NULL; d && i < 2 * s->cfg.nns + 32; d = d->next)
		if (d->prefix) {
			ns[i++] = d->href;
			ns[i++] = d->prefix;
		}
	ns[i] = ns[i + 1] = NULL;
	pat = xmlPatterncompile(BAD_CAST s->cfg.xpath, NULL, XML_PATTERN_XPATH, ns);
	for (size_t k = 0; k < 2 * s->cfg.nns; k++)
		free((void *)ns[k]);
	free(ns);
	return pat;
}

int split_xml_stream(struct splitter *s, struct sink *k,
		     struct body_source *src, struct buf *err,
		     int *source_failed)
{
	struct xml_io io = { src, NULL, 0, 0 };
	xmlTextReaderPtr r;
	xmlPatternPtr pat = NULL;
	xmlStreamCtxtPtr st = NULL;
	int ret = 0, rc = 0;

	/* header() in --header expressions reads the parent's headers. */
	expr_env_bind_as(s->env, k->parent, NULL, 0, BODY_XML);
	xmldoc_begin();
	r = xmlReaderForIO(xml_read, no_close, &io, NULL, NULL, xmldoc_parse_options());
	if (!r) {
		buf_addstr(err, "out of memory parsing the body");
		return MSG_NO_MEMORY;
	}
	while (rc == 0 && (ret = xmlTextReaderRead(r)) == 1) {
		int type = xmlTextReaderNodeType(r);

		if (type == XML_READER_TYPE_ELEMENT) {
			xmlNodePtr node = xmlTextReaderCurrentNode(r);
			int empty = xmlTextReaderIsEmptyElement(r);
			int match;

			/* An element the reader stands on always has a node;
			 * should libxml2 ever say otherwise, stop, not crash. */
			if (!node) {
				buf_addstr(err, "cannot read an element of the body");
				rc = -1;
				break;
			}
			if (!st) {
				sink_set_root(k, node);
				expr_env_scope_ns(s->env, node);
				pat = compile_pattern(s, node);
				st = pat ? xmlPatternGetStreamCtxt(pat) : NULL;
				if (!st) {
					buf_addf(err, "cannot stream the path '%s'", s->cfg.xpath);
					rc = -1;
					break;
				}
				/* The document node comes first, as in a DOM walk. */
				xmlStreamPush(st, NULL, NULL);
			}
			match = xmlStreamPush(st, node->name, node->ns ? node->ns->href : NULL);
			if (match == 1) {
				node = xmlTextReaderExpand(r);
				if (!node)
					break;
				rc = xml_item(k, node, err);
			}
			if (empty)
				xmlStreamPop(st);
		} else if (type == XML_READER_TYPE_END_ELEMENT && st) {
			xmlStreamPop(st);
		}
	}
	/* What the reader built goes first: after running out of memory,
	 * the diagnostic needs some. */
	if (st)
		xmlFreeStreamCtxt(st);
	if (pat)
		xmlFreePattern(pat);
	xmlFreeTextReader(r);
	if (rc == 0 && io.failed) {
		*source_failed = 1;
		rc = -1;
	} else if (rc == 0) {
		struct buf why = BUF_INIT;
		int status = xmldoc_end(&why);
		if (status == MSG_NO_MEMORY) {
			buf_addf(err, "%s parsing the body", why.ptr);
			rc = status;
		} else if (status < 0 || ret < 0) {
			buf_addf(err, "body is not XML: %s", why.len ? why.ptr : "not well-formed");
			rc = -1;
		}
		buf_release(&why);
	}
	return rc;
}
