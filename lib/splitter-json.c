/* splitter-json: JSON items, the elements of an array as the body
 * streams in, or nodes of the JSON mapping that an expression selects. */
#include "splitter-parts.h"

#include "jsonscan.h"
#include "jsonxml.h"
#include "message.h"

int json_node_item(struct sink *k, xmlNodePtr node, struct buf *err)
{
	struct buf text = BUF_INIT;
	int r;

	if (k->gcount == 0 && (r = sink_item_headers(k, node, err)) < 0)
		return r;
	if (node->type == XML_DOCUMENT_NODE)
		node = xmlDocGetRootElement((xmlDocPtr)node);
	if (node->type == XML_ELEMENT_NODE) {
		if (jsonxml_serialize(node, 0, &text, err) < 0) {
			buf_release(&text);
			return -1;
		}
	} else {
		/* An attribute (key) or text of the mapping: a JSON string. */
		xmlChar *content = xmlNodeGetContent(node);
		buf_addstr(&text, content ? (const char *)content : "");
		xmlFree(content);
		r = sink_add_item(k, text.ptr, text.len, "text/plain", "\n");
		buf_release(&text);
		return r;
	}
	if (k->s->cfg.group > 1 && k->gcount == 0) {
		buf_reset(&k->gwrap_open);
		buf_reset(&k->gwrap_close);
		buf_addch(&k->gwrap_open, '[');
		buf_addch(&k->gwrap_close, ']');
	}
	r = sink_add_item(k, text.ptr, text.len, "application/json", ",");
	buf_release(&text);
	return r;
}

/* ---- JSON arrays, as the body streams in ---- */

struct json_ctx {
	struct sink *k;
	struct buf *err;
	int failed;	/* 0, or how an element failed: -1, MSG_NO_MEMORY */
};

static int json_element(void *arg, const char *text, size_t n)
{
	struct json_ctx *c = arg;
	struct sink *k = c->k;

	if (k->s->cfg.nheaders && k->gcount == 0) {
		xmlDocPtr doc;
		int r;
		expr_env_bind_as(k->s->env, k->parent, text, n, BODY_JSON);
		doc = expr_env_doc(k->s->env, c->err, &r);
		if (doc)
			r = sink_item_headers(k, xmlDocGetRootElement(doc), c->err);
		if (r < 0) {
			c->failed = r;
			return -1;
		}
	}
	if (k->s->cfg.group > 1 && k->gcount == 0 && !k->gwrap_open.len) {
		buf_addch(&k->gwrap_open, '[');
		buf_addch(&k->gwrap_close, ']');
	}
	if (sink_add_item(k, text, n, "application/json", ",") < 0) {
		c->failed = -1;
		return -1;
	}
	return 0;
}

int split_json(struct splitter *s, struct sink *k, struct body_source *src,
	       struct buf *err, int *source_failed)
{
	struct jsonscan js;
	struct json_ctx c = { k, err, 0 };
	const char *p;
	size_t n;
	int r, rc = -1;

	jsonscan_init(&js, s->cfg.pointer);
	while ((r = src->next(src->arg, &p, &n)) > 0)
		if (jsonscan_feed(&js, p, n, json_element, &c) < 0)
			goto out;
	if (r < 0) {
		*source_failed = 1;
		goto out;
	}
	if (jsonscan_finish(&js) < 0)
		goto out;
	rc = 0;
out:
	if (rc < 0 && !c.failed && !*source_failed)
		buf_addf(err, "body is not a JSON document with an array at '%s': %s",
			 s->cfg.pointer, js.err.ptr);
	jsonscan_release(&js);
	return c.failed ? c.failed : rc;
}
