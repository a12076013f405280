/* splitter: one parent message into a sequence of children. */
#include "splitter.h"

#include <errno.h>
#include <libxml/pattern.h>
#include <libxml/tree.h>
#include <libxml/xmlreader.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "clock.h"
#include "diag.h"
#include "id.h"
#include "io.h"
#include "sizes.h"
#include "jsonscan.h"
#include "jsonxml.h"
#include "message.h"
#include "xmldoc.h"
#include "xmlout.h"

struct splitter {
	struct splitter_config cfg;
	struct expr_env *env;
	struct expr *xpath;
	int stream_xml;		/* cfg.xpath is a plain path: stream it */
	regex_t re;
	int have_re;
	struct expr **hexpr;	/* compiled --header expressions */
	uint64_t empty;
};

/* ---- the children of one parent ---- */

struct sink {
	struct splitter *s;
	struct frame_writer *out;
	const struct headers *parent;
	char parent_id[UUID_STR_LEN + 1 + 64];
	struct buf stack;	/* Sequence-Stack for the children, or empty */
	int size_known;
	uint64_t total;		/* children, when size_known */
	uint64_t made;		/* children built so far */
	uint64_t written;
	/* the child being filled with items (-g) */
	struct buf gbody;
	size_t gcount;
	struct headers gheaders;	/* --header values of its first item */
	const char *gtype;
	struct buf gwrap_open, gwrap_close;
	/* a built child held back until we know whether it is the last */
	struct headers pend_h;
	struct buf pend_body;
	int pending;
	int write_failed;
	struct buf too_big;	/* why a child's header block would not fit */
};

static void sink_init(struct sink *k, struct splitter *s, struct frame_writer *out,
		      const struct headers *parent)
{
	const char *id = headers_get(parent, "Message-Id");
	const char *num = headers_get(parent, "Sequence-Number");

	memset(k, 0, sizeof(*k));
	k->s = s;
	k->out = out;
	k->parent = parent;
	buf_init(&k->stack, 0);
	buf_init(&k->too_big, 0);
	buf_init(&k->gbody, 0);
	buf_init(&k->gwrap_open, 0);
	buf_init(&k->gwrap_close, 0);
	buf_init(&k->pend_body, 0);
	headers_init(&k->gheaders);
	headers_init(&k->pend_h);
	/* Children point at their parent; a parent without an id gets one. */
	if (id && *id && strlen(id) < sizeof(k->parent_id))
		strcpy(k->parent_id, id);
	else
		id_new(k->parent_id);
	/* A nested split saves the parent's own place in its sequence. */
	if (num && *num) {
		const char *corr = headers_get(parent, "Correlation-Id");
		const char *size = headers_get(parent, "Sequence-Size");
		const char *old = headers_get(parent, "Sequence-Stack");
		if (old && *old)
			buf_addf(&k->stack, "%s, ", old);
		buf_addf(&k->stack, "%s %s %s", corr && *corr ? corr : "-", num,
			 size && *size ? size : "-");
	}
}

static void sink_release(struct sink *k)
{
	buf_release(&k->stack);
	buf_release(&k->too_big);
	buf_release(&k->gbody);
	buf_release(&k->gwrap_open);
	buf_release(&k->gwrap_close);
	buf_release(&k->pend_body);
	headers_release(&k->gheaders);
	headers_release(&k->pend_h);
}

static int write_child(struct sink *k, const struct headers *h, const char *body,
		       size_t len)
{
	if (frame_writer_write(k->out, h, body, len) < 0) {
		/* Too big is the parent's fault (--header values), not
		 * the output's. */
		if (errno == EMSGSIZE)
			frame_header_too_big(&k->too_big, h, len);
		else
			k->write_failed = 1;
		return -1;
	}
	k->written++;
	return 0;
}

static void child_headers(struct sink *k, struct headers *h, const char *type)
{
	headers_copy(h, k->parent);
	headers_remove(h, "Content-Length");
	headers_remove(h, "Sequence-Size");
	headers_remove(h, "Sequence-End");
	message_stamp(h);
	headers_set(h, "Correlation-Id", k->parent_id);
	headers_set_u64(h, "Sequence-Number", k->made);
	if (k->stack.len)
		headers_set(h, "Sequence-Stack", k->stack.ptr);
	else
		headers_remove(h, "Sequence-Stack");
	headers_set(h, "Content-Type", type);
	for (size_t i = 0; i < headers_count(&k->gheaders); i++) {
		size_t nl, vl;
		const char *n = headers_name(&k->gheaders, i, &nl);
		const char *v = headers_value(&k->gheaders, i, &vl);
		headers_setn(h, n, v, vl);
	}
}

/* Close the group being filled into a child; hold it back or write it. */
static int make_child(struct sink *k)
{
	struct buf *body = &k->gbody;

	if (!k->gcount)
		return 0;
	if (k->gwrap_open.len || k->gwrap_close.len) {
		struct buf wrapped = BUF_INIT;
		buf_add(&wrapped, k->gwrap_open.ptr, k->gwrap_open.len);
		buf_add(&wrapped, body->ptr, body->len);
		buf_add(&wrapped, k->gwrap_close.ptr, k->gwrap_close.len);
		buf_reset(body);
		buf_add(body, wrapped.ptr, wrapped.len);
		buf_release(&wrapped);
	}
	k->made++;
	if (k->size_known) {
		struct headers h = HEADERS_INIT;
		int r;
		child_headers(k, &h, k->gtype);
		headers_set_u64(&h, "Sequence-Size", k->total);
		if (k->made == k->total)
			headers_set(&h, "Sequence-End", "true");
		r = write_child(k, &h, body->ptr, body->len);
		headers_release(&h);
		if (r < 0)
			return -1;
	} else {
		if (k->pending &&
		    write_child(k, &k->pend_h, k->pend_body.ptr, k->pend_body.len) < 0)
			return -1;
		child_headers(k, &k->pend_h, k->gtype);
		buf_reset(&k->pend_body);
		buf_add(&k->pend_body, body->ptr, body->len);
		k->pending = 1;
	}
	buf_reset(body);
	k->gcount = 0;
	headers_reset(&k->gheaders);
	return 0;
}

/* The last child learns the size of the sequence it ends. */
static int sink_finish(struct sink *k)
{
	if (make_child(k) < 0)
		return -1;
	if (k->pending) {
		headers_set_u64(&k->pend_h, "Sequence-Size", k->made);
		headers_set(&k->pend_h, "Sequence-End", "true");
		k->pending = 0;
		return write_child(k, &k->pend_h, k->pend_body.ptr, k->pend_body.len);
	}
	return 0;
}

/* A split that found nothing still ends a sequence, so that an
 * aggregator downstream completes instead of waiting for ever. */
static int write_marker(struct sink *k)
{
	struct headers h = HEADERS_INIT;
	const char *type = headers_get(k->parent, "Content-Type");
	int r;

	headers_copy(&h, k->parent);
	headers_remove(&h, "Content-Length");
	headers_remove(&h, "Sequence-Number");
	message_stamp(&h);
	headers_set(&h, "Correlation-Id", k->parent_id);
	headers_set(&h, "Sequence-Size", "0");
	headers_set(&h, "Sequence-End", "true");
	if (k->stack.len)
		headers_set(&h, "Sequence-Stack", k->stack.ptr);
	if (!type)
		headers_set(&h, "Content-Type", "text/plain");
	r = write_child(k, &h, "", 0);
	headers_release(&h);
	return r;
}

/* ---- items ---- */

/* --header values are taken from the first item of each child. */
static int eval_item_headers(struct sink *k, xmlNodePtr context, struct buf *err)
{
	struct buf v = BUF_INIT;
	int r;

	for (size_t i = 0; i < k->s->cfg.nheaders; i++) {
		if ((r = expr_string_at(k->s->hexpr[i], k->s->env, context, &v, err)) < 0) {
			buf_release(&v);
			return r;
		}
		headers_set(&k->gheaders, k->s->cfg.headers[i].name, v.ptr);
	}
	buf_release(&v);
	return 0;
}

/* An item into the child being made; with -g, after sep_len bytes of sep
 * when it is not the child's first. */
static int add_item_after(struct sink *k, const char *p, size_t n, const char *type,
			  const char *sep, size_t sep_len)
{
	if (k->gcount)
		buf_add(&k->gbody, sep, sep_len);
	buf_add(&k->gbody, p, n);
	k->gtype = type;
	if (++k->gcount >= k->s->cfg.group)
		return make_child(k);
	return 0;
}

static int add_item(struct sink *k, const char *p, size_t n, const char *type,
		    const char *separator)
{
	return add_item_after(k, p, n, type, separator ? separator : "",
			      separator ? strlen(separator) : 0);
}

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

static int xml_item(struct sink *k, xmlNodePtr node, struct buf *err)
{
	struct buf text = BUF_INIT;
	const char *type = "text/plain", *sep = "\n";
	xmlChar *content;
	int r;

	if (k->gcount == 0 && (r = eval_item_headers(k, node, err)) < 0)
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
	r = add_item(k, text.ptr, text.len, type, sep);
	buf_release(&text);
	return r;
}

static int json_node_item(struct sink *k, xmlNodePtr node, struct buf *err)
{
	struct buf text = BUF_INIT;
	int r;

	if (k->gcount == 0 && (r = eval_item_headers(k, node, err)) < 0)
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
		r = add_item(k, text.ptr, text.len, "text/plain", "\n");
		buf_release(&text);
		return r;
	}
	if (k->s->cfg.group > 1 && k->gcount == 0) {
		buf_reset(&k->gwrap_open);
		buf_reset(&k->gwrap_close);
		buf_addch(&k->gwrap_open, '[');
		buf_addch(&k->gwrap_close, ']');
	}
	r = add_item(k, text.ptr, text.len, "application/json", ",");
	buf_release(&text);
	return r;
}

/* ---- configuration ---- */

/* Plain paths (/a/b, //b, /p:a/b) can be matched while the body streams. */
static int streamable_path(const char *x)
{
	size_t n = strlen(x);

	/* At least one name step, and no step left empty at the end. */
	if (x[0] != '/' || n < 2 || x[n - 1] == '/')
		return 0;
	for (const char *p = x; *p; p++)
		if (strchr("[]()@|.=$'\" \t", *p))
			return 0;
	return !strstr(x, "::");
}

struct splitter *splitter_new(const struct splitter_config *cfg, struct buf *err)
{
	struct splitter *s = xmalloc(sizeof(*s));

	memset(s, 0, sizeof(*s));
	s->cfg = *cfg;
	if (s->cfg.group == 0)
		s->cfg.group = 1;
	s->env = expr_env_new(cfg->ns, cfg->nns, err);
	if (!s->env)
		goto fail;
	s->hexpr = xmalloc((cfg->nheaders + 1) * sizeof(*s->hexpr));
	for (size_t i = 0; i < cfg->nheaders; i++) {
		s->hexpr[i] = expr_compile(s->env, cfg->headers[i].expr, err);
		if (!s->hexpr[i])
			goto fail;
	}
	if (cfg->mode == SPLIT_XPATH) {
		s->xpath = expr_compile(s->env, cfg->xpath, err);
		if (!s->xpath)
			goto fail;
		if (!expr_selects_nodes(s->xpath, s->env)) {
			buf_addf(err, "expression '%s' does not select nodes", cfg->xpath);
			goto fail;
		}
		s->stream_xml = !cfg->no_stream && streamable_path(cfg->xpath);
	}
	if (cfg->mode == SPLIT_JSON) {
		struct jsonscan probe;
		if (jsonscan_init(&probe, cfg->pointer) < 0) {
			buf_addf(err, "invalid JSON pointer '%s' (it must be empty or start with '/')",
				 cfg->pointer);
			jsonscan_release(&probe);
			goto fail;
		}
		jsonscan_release(&probe);
	}
	if (cfg->mode == SPLIT_REGEX) {
		int rc = regcomp(&s->re, cfg->regex, REG_EXTENDED);
		regmatch_t m;
		if (rc) {
			char msg[256];
			regerror(rc, &s->re, msg, sizeof(msg));
			buf_addf(err, "invalid regular expression '%s': %s", cfg->regex, msg);
			goto fail;
		}
		s->have_re = 1;
		if (regexec(&s->re, "", 1, &m, 0) == 0) {
			buf_addf(err, "delimiter '%s' matches the empty string", cfg->regex);
			goto fail;
		}
	}
	return s;
fail:
	splitter_free(s);
	return NULL;
}

void splitter_free(struct splitter *s)
{
	if (!s)
		return;
	expr_free(s->xpath);
	for (size_t i = 0; s->hexpr && i < s->cfg.nheaders && s->hexpr[i]; i++)
		expr_free(s->hexpr[i]);
	free(s->hexpr);
	expr_env_free(s->env);
	if (s->have_re)
		regfree(&s->re);
	free(s);
}

uint64_t splitter_empty_count(const struct splitter *s)
{
	return s->empty;
}

int splitter_streams(const struct splitter *s)
{
	return s->cfg.mode == SPLIT_JSON || s->cfg.mode == SPLIT_LINES ||
	       (s->cfg.mode == SPLIT_XPATH && s->stream_xml);
}

/* ---- the splitting itself ---- */

/* A body held whole: XPath over the DOM (XML or the JSON mapping). */
static int split_dom(struct splitter *s, struct sink *k, const char *body,
		     size_t len, struct buf *err)
{
	xmlNodePtr *nodes;
	size_t n;
	int json, r = 0;

	expr_env_bind(s->env, k->parent, body, len);
	json = expr_env_kind(s->env) == BODY_JSON;
	if (!expr_env_doc(s->env, err, &r))
		return r;
	if ((r = expr_nodes(s->xpath, s->env, &nodes, &n, err)) < 0)
		return r;
	k->size_known = 1;
	k->total = (n + s->cfg.group - 1) / s->cfg.group;
	for (size_t i = 0; i < n && r == 0; i++)
		r = json ? json_node_item(k, nodes[i], err) : xml_item(k, nodes[i], err);
	free(nodes);
	return r;
}

static int text_context_headers(struct sink *k, const char *p, size_t n,
				struct buf *err)
{
	xmlDocPtr doc;
	int status;

	if (!k->s->cfg.nheaders || k->gcount)
		return 0;
	expr_env_bind_as(k->s->env, k->parent, p, n, BODY_TEXT);
	doc = expr_env_doc(k->s->env, err, &status);
	return doc ? eval_item_headers(k, doc->children, err) : status;
}

static int text_item(struct sink *k, const char *p, size_t n, struct buf *err)
{
	int r = text_context_headers(k, p, n, err);

	if (r < 0)
		return r;
	return add_item(k, p, n, "text/plain", "\n");
}

/* A piece between delimiters; with -g the pieces of a child are joined by
 * the delimiter text that stood between them, so a child is a stretch of
 * the body as it was (less its last delimiter, unless kept). */
static int piece_item(struct sink *k, const char *p, size_t n, const char *sep,
		      size_t sep_len, struct buf *err)
{
	int r = text_context_headers(k, p, n, err);

	if (r < 0)
		return r;
	return add_item_after(k, p, n, "text/plain", sep, sep_len);
}

/* Pieces between matches of the delimiter (body held whole). */
static int split_regex(struct splitter *s, struct sink *k, const char *body,
		       size_t len, struct buf *err)
{
	size_t at = 0;

	/* The body is held whole: count the pieces first, so every child
	 * can carry Sequence-Size. */
	k->size_known = 1;
	k->total = 0;
	while (at < len) {
		regmatch_t m = { .rm_so = (regoff_t)at, .rm_eo = (regoff_t)len };
		k->total++;
		if (regexec(&s->re, body, 1, &m, REG_STARTEND | (at ? REG_NOTBOL : 0)))
			break;
		at = (size_t)m.rm_eo;
	}
	k->total = (k->total + s->cfg.group - 1) / s->cfg.group;
	at = 0;
	size_t sep_at = 0, sep_len = 0;	/* the delimiter before this piece */
	while (at < len) {
		regmatch_t m = { .rm_so = (regoff_t)at, .rm_eo = (regoff_t)len };
		size_t end, next;

		if (regexec(&s->re, body, 1, &m, REG_STARTEND | (at ? REG_NOTBOL : 0)) == 0) {
			end = s->cfg.keep_delimiter ? (size_t)m.rm_eo : (size_t)m.rm_so;
			next = (size_t)m.rm_eo;
		} else {
			end = next = len;
		}
		int r = piece_item(k, body + at, end - at, body + sep_at, sep_len, err);

		if (r < 0)
			return r;
		/* A kept delimiter is in the piece already. */
		sep_at = end;
		sep_len = next - end;
		at = next;
	}
	return 0;
}

/* Lines, as the body streams in. */
static int split_lines(struct sink *k, struct body_source *src, struct buf *err,
		       int *source_failed)
{
	struct buf carry = BUF_INIT;
	const char *p;
	size_t n;
	int r;

	while ((r = src->next(src->arg, &p, &n)) > 0) {
		const char *end = p + n;
		while (p < end) {
			const char *nl = memchr(p, '\n', (size_t)(end - p));
			if (!nl) {
				buf_add(&carry, p, (size_t)(end - p));
				break;
			}
			if (carry.len) {
				buf_add(&carry, p, (size_t)(nl - p));
				r = text_item(k, carry.ptr, carry.len, err);
				buf_reset(&carry);
			} else {
				r = text_item(k, p, (size_t)(nl - p), err);
			}
			if (r < 0)
				goto out;
			p = nl + 1;
		}
	}
	if (r < 0) {
		*source_failed = 1;
		goto out;
	}
	if (carry.len)
		r = text_item(k, carry.ptr, carry.len, err);
out:
	buf_release(&carry);
	return r < 0 ? r : 0;
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
			r = eval_item_headers(k, xmlDocGetRootElement(doc), c->err);
		if (r < 0) {
			c->failed = r;
			return -1;
		}
	}
	if (k->s->cfg.group > 1 && k->gcount == 0 && !k->gwrap_open.len) {
		buf_addch(&k->gwrap_open, '[');
		buf_addch(&k->gwrap_close, ']');
	}
	if (add_item(k, text, n, "application/json", ",") < 0) {
		c->failed = -1;
		return -1;
	}
	return 0;
}

static int split_json(struct splitter *s, struct sink *k, struct body_source *src,
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

static int split_xml_stream(struct splitter *s, struct sink *k,
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

			if (!st) {
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

/* ---- one parent ---- */

/* The first piece of a body, read ahead and then handed out again. */
struct replay {
	struct body_source *inner;
	const char *p;
	size_t n;
	int pending;
};

static int replay_next(void *arg, const char **p, size_t *n)
{
	struct replay *r = arg;

	if (r->pending) {
		r->pending = 0;
		*p = r->p;
		*n = r->n;
		return 1;
	}
	return r->inner->next(r->inner->arg, p, n);
}

/*
 * A plain path streams XML; a parent that is something else (JSON,
 * through the mapping, or text) needs the document built. The type says
 * which; without one, the first bytes do, as for any expression.
 */
static int streams_for(const struct splitter *s, const struct headers *parent,
		       struct replay *peek, int *source_failed)
{
	const char *type = headers_get(parent, "Content-Type");
	int r;

	if (s->cfg.mode != SPLIT_XPATH || !s->stream_xml)
		return splitter_streams(s);
	r = peek->inner->next(peek->inner->arg, &peek->p, &peek->n);
	if (r < 0) {
		*source_failed = 1;
		return 1;
	}
	peek->pending = r > 0;
	/* libxml2's reader cannot read UTF-32; its tree parser can. */
	if (message_xml_encoding(peek->p, peek->n))
		return 0;
	if (type && *type)
		return strcasestr(type, "xml") ||
		       !(strcasestr(type, "json") || !strncasecmp(type, "text/", 5));
	return message_body_start(peek->p, peek->n) == STARTS_XML;
}

/* While a parent streams, a copy of its body goes to a temporary file, so
 * that an invalid parent can still be diverted whole. */
struct tee {
	struct body_source *inner;
	int fd;
	uint64_t bytes;
	int write_errno;
};

static int tee_next(void *arg, const char **p, size_t *n)
{
	struct tee *t = arg;
	int r = t->inner->next(t->inner->arg, p, n);

	if (r > 0 && t->fd >= 0 && !t->write_errno) {
		if (write_all(t->fd, *p, *n) < 0)
			t->write_errno = errno;
		t->bytes += *n;
	}
	return r;
}

static int load_body(struct body_source *src, struct buf *out)
{
	const char *p;
	size_t n;
	int r;

	buf_reset(out);
	if (src->length < (uint64_t)1 << 40)
		buf_grow(out, (size_t)src->length);
	while ((r = src->next(src->arg, &p, &n)) > 0)
		buf_add(out, p, n);
	return r;
}

/* divert()'s failure of the temporary copy, told apart from the
 * writer's (-1): the parent is not at fault, and no output is. */
#define DIVERT_READ_BACK_FAILED (-2)

static int divert(struct frame_writer *invalid, struct headers *parent,
		  const char *body, size_t len, struct tee *t, const char *reason)
{
	struct buf e = BUF_INIT;
	uint64_t body_len = body ? len : t ? t->bytes : 0;
	char *chunk;
	int r = 0;

	buf_addf(&e, "%s: %s", progname, reason);
	frame_set_error(parent, body_len, e.ptr);
	buf_release(&e);
	if (body || !t)
		return frame_writer_write(invalid, parent, body ? body : "", body ? len : 0);
	if (frame_writer_begin(invalid, parent, t->bytes) < 0)
		return -1;
	chunk = xmalloc(IO_CHUNK);
	for (uint64_t at = 0; at < t->bytes && r == 0;) {
		ssize_t got = pread(t->fd, chunk, IO_CHUNK, (off_t)at);
		if (got <= 0) {
			if (got == 0)
				errno = EIO;	/* the copy is shorter than written */
			free(chunk);
			return DIVERT_READ_BACK_FAILED;
		}
		r = frame_writer_body(invalid, chunk, (size_t)got);
		at += (uint64_t)got;
	}
	free(chunk);
	return r < 0 ? -1 : frame_writer_end(invalid);
}

/* What err says when the temporary copy failed: that step alone, errno
 * kept, in place of why the parent could not be split. */
static void temp_failed(struct buf *err, const char *step)
{
	int saved = errno;

	buf_reset(err);
	buf_addstr(err, step);
	errno = saved;
}

static int run_mode(struct splitter *s, struct sink *k, const char *body,
		    size_t len, struct body_source *src, struct buf *err,
		    int *source_failed)
{
	switch (s->cfg.mode) {
	case SPLIT_REGEX:
		return split_regex(s, k, body, len, err);
	case SPLIT_XPATH:
		if (body)
			return split_dom(s, k, body, len, err);
		/* streams_for() chose the reader */
		return split_xml_stream(s, k, src, err, source_failed);
	case SPLIT_JSON:
		return split_json(s, k, src, err, source_failed);
	case SPLIT_LINES:
		return split_lines(k, src, err, source_failed);
	}
	return -1;
}

enum split_result splitter_run(struct splitter *s, struct headers *parent,
			       struct body_source *src, struct frame_writer *out,
			       struct frame_writer *invalid, uint64_t *written,
			       struct buf *err)
{
	struct buf whole = BUF_INIT;
	struct replay peek = { src, NULL, 0, 0 };
	struct body_source replayed = { replay_next, &peek, src->length };
	struct tee t = { &replayed, -1, 0, 0 };
	struct body_source teed = { tee_next, &t, src->length };
	struct sink k;
	enum split_result res = SPLIT_OK;
	int source_failed = 0, rc, streaming, saved_errno;
	const char *body = NULL;

	sink_init(&k, s, out, parent);
	streaming = streams_for(s, parent, &peek, &source_failed);
	src = &replayed;
	if (source_failed) {
		res = SPLIT_SOURCE_FAILED;
		goto out;
	}
	if (!streaming) {
		if (load_body(src, &whole) < 0) {
			res = SPLIT_SOURCE_FAILED;
			goto out;
		}
		body = whole.ptr;
	} else if (invalid) {
		/* Streaming: keep a copy, so an invalid parent goes out whole. */
		t.fd = tmpfile_open();
		if (t.fd < 0) {
			temp_failed(err, "cannot create a temporary file");
			res = SPLIT_TEMP_CREATE_FAILED;
			goto out;
		}
		src = &teed;
	}
	/* An empty body has nothing to split (an outer split's marker, say):
	 * that is the --empty case, not a malformed document. An empty raw
	 * file, though, is no document at all, and the split is where that
	 * is to be told, not some later step. */
	if (src->length == 0 && (body ? whole.len == 0 : 1)) {
		rc = src->next(src->arg, &(const char *){ NULL }, &(size_t){ 0 }) < 0 ? -1 : 0;
		source_failed = rc < 0;
		if (rc == 0 && s->cfg.raw_documents &&
		    (s->cfg.mode == SPLIT_XPATH || s->cfg.mode == SPLIT_JSON)) {
			buf_addf(err, "the file is empty: not %s document",
				 s->cfg.mode == SPLIT_JSON ? "a JSON" : "an XML or JSON");
			rc = -1;
		}
	} else
		rc = run_mode(s, &k, body, whole.len, src, err, &source_failed);
	if (rc == 0)
		rc = sink_finish(&k);
	if (rc == 0 && k.made == 0) {
		s->empty++;
		if (s->cfg.empty == EMPTY_MARKER)
			rc = write_marker(&k);
		else if (s->cfg.empty == EMPTY_INVALID) {
			buf_addstr(err, "nothing to split: no items found");
			rc = -1;
		}
	}
	if (k.write_failed) {
		res = SPLIT_WRITE_FAILED;
	} else if (source_failed) {
		res = SPLIT_SOURCE_FAILED;
	} else if (rc == MSG_NO_MEMORY) {
		res = SPLIT_NO_MEMORY;
	} else if (rc < 0) {
		res = SPLIT_INVALID;
		if (k.too_big.len) {
			buf_reset(err);
			buf_add(err, k.too_big.ptr, k.too_big.len);
		}
		if (k.written)
			buf_addf(err, "; %llu children written before the error",
				 (unsigned long long)k.written);
		if (invalid) {
			const char *p;
			size_t n;
			int r = 0;
			/* The rest of the parent joins what the tee kept. */
			while (t.fd >= 0 && (r = src->next(src->arg, &p, &n)) > 0)
				;
			if (t.fd >= 0 && r < 0) {
				res = SPLIT_SOURCE_FAILED;
				goto out;
			}
			if (t.write_errno) {
				errno = t.write_errno;
				temp_failed(err, "cannot spool the invalid message");
				res = SPLIT_TEMP_IO_FAILED;
				goto out;
			}
			rc = divert(invalid, parent, body, whole.len,
				    t.fd >= 0 ? &t : NULL, err->ptr);
			if (rc == DIVERT_READ_BACK_FAILED) {
				temp_failed(err, "cannot read back the spooled message");
				res = SPLIT_TEMP_IO_FAILED;
			} else if (rc < 0) {
				res = SPLIT_INVALID_WRITE_FAILED;
			}
		}
	}
out:
	saved_errno = errno;	/* the caller tells why a step failed */
	*written = k.written;
	if (t.fd >= 0)
		close(t.fd);
	sink_release(&k);
	buf_release(&whole);
	errno = saved_errno;
	return res;
}
