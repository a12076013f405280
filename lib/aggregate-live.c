/*
 * aggregate-live: a group's aggregate so far, one member at a time
 * (aggregate-live.h).
 */
#include "aggregate-live.h"

#include <libxml/tree.h>
#include <stdlib.h>
#include <string.h>

#include "jsonxml.h"
#include "xmldoc.h"

/* A member in the body, in body order. */
struct live_entry {
	size_t member;		/* its index in the group's m */
	size_t off;		/* where its part of the text begins */
	xmlNodePtr node;	/* its element in doc, or NULL */
};

struct agg_live {
	const struct agg_build_opt *opt;
	int want_doc, failed;
	enum body_kind kind;
	size_t taken;		/* members of the group in it */
	struct live_entry *v;
	size_t n, alloc;
	/* The body: a start, the members' parts joined by a separator, an
	 * end ("<wrap>", "", "</wrap>"; "[", ",", "]"; "", --separator, ""). */
	struct buf text;
	const char *sep, *end;
	size_t sep_len, end_len;
	xmlDocPtr doc;		/* its root holds the members' elements */
	struct buf piece, err;
};

struct agg_live *agg_live_new(const struct agg_build_opt *opt, int want_doc)
{
	struct agg_live *l = xcalloc(1, sizeof(*l));

	l->opt = opt;
	l->want_doc = want_doc;
	buf_init(&l->text, 0);
	buf_init(&l->piece, 0);
	buf_init(&l->err, 0);
	return l;
}

void agg_live_free(struct agg_live *l)
{
	if (!l)
		return;
	if (l->doc)
		xmlFreeDoc(l->doc);
	free(l->v);
	buf_release(&l->text);
	buf_release(&l->piece);
	buf_release(&l->err);
	free(l);
}

/* The empty aggregate of kind, as agg_build begins it. */
static int start(struct agg_live *l, const struct agg_group *g,
		 enum body_kind kind)
{
	const char *wrap = l->opt->wrap ? l->opt->wrap : "aggregate";

	l->kind = kind;
	if (kind == BODY_XML) {
		if (agg_wrap_check(wrap, &l->err) < 0)
			return -1;
		xmldoc_init();
		agg_xml_start(g, wrap, &l->text);
		buf_addf(&l->text, "</%s>", wrap);
		l->sep = "";
		l->end_len = strlen(wrap) + 3;
	} else if (kind == BODY_JSON) {
		buf_addstr(&l->text, "[]");
		l->sep = ",";
		l->end_len = 1;
	} else {
		l->sep = l->opt->separator ? l->opt->separator : "";
		l->sep_len = l->opt->separator_len;
		l->want_doc = 0;	/* a text body's document is one node */
	}
	if (kind != BODY_TEXT)
		l->sep_len = strlen(l->sep);
	if (!l->want_doc)
		return 0;
	if (kind == BODY_XML) {
		int status;
		l->doc = xmldoc_parse(l->text.ptr, l->text.len, &l->err, &status);
	} else {
		l->doc = jsonxml_parse(l->text.ptr, l->text.len, &l->err);
	}
	return l->doc ? 0 : -1;
}

/* Where member i goes: after every member before it in body order. It
 * came last, so it goes last unless its Sequence-Number puts it earlier. */
static size_t position(const struct agg_live *l, const struct agg_group *g,
		       const struct agg_member *m)
{
	size_t lo = 0, hi = l->n;

	if (!l->n || agg_member_cmp(&g->m[l->v[l->n - 1].member], m) < 0)
		return l->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (agg_member_cmp(&g->m[l->v[mid].member], m) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The member's element in doc (parsed: its XML document, taken), or
 * NULL on failure. */
static xmlNodePtr member_node(struct agg_live *l, xmlDocPtr parsed)
{
	xmlDocPtr d = parsed;
	xmlNodePtr node = NULL;

	if (l->kind == BODY_JSON)
		d = jsonxml_parse(l->piece.ptr, l->piece.len, &l->err);
	if (d) {
		node = xmlDocCopyNode(xmlDocGetRootElement(d), l->doc, 1);
		xmlFreeDoc(d);
	}
	return node;
}

static void insert_bytes(struct buf *b, size_t at, const char *p, size_t n)
{
	size_t len = b->len;

	buf_grow(b, n);
	memmove(b->ptr + at + n, b->ptr + at, len - at);
	memcpy(b->ptr + at, p, n);
	buf_setlen(b, len + n);
}

/* The part in piece goes in the text at place p: before the part now
 * there, with a separator after it; or last, with one before it. */
static size_t place_text(struct agg_live *l, size_t p)
{
	size_t at;

	if (p < l->n) {
		at = l->v[p].off;
		insert_bytes(&l->text, at, l->sep, l->sep_len);
		insert_bytes(&l->text, at, l->piece.ptr, l->piece.len);
		for (size_t j = p; j < l->n; j++)
			l->v[j].off += l->piece.len + l->sep_len;
		return at;
	}
	at = l->text.len - l->end_len;
	if (l->n) {
		insert_bytes(&l->text, at, l->sep, l->sep_len);
		at += l->sep_len;
	}
	insert_bytes(&l->text, at, l->piece.ptr, l->piece.len);
	return at;
}

static void place_node(struct agg_live *l, size_t p, xmlNodePtr node)
{
	if (p < l->n)
		xmlAddPrevSibling(l->v[p].node, node);
	else
		xmlAddChild(xmlDocGetRootElement(l->doc), node);
}

static int take(struct agg_live *l, const struct agg_group *g, size_t i)
{
	const struct agg_member *m = &g->m[i];
	xmlDocPtr parsed = NULL;
	xmlNodePtr node = NULL;
	size_t p, off;

	if (i == 0 && start(l, g, m->kind) < 0)
		return -1;
	if (m->kind != l->kind)
		return -1;
	p = position(l, g, m);
	buf_reset(&l->piece);
	if (agg_member_piece(g, m, p, &l->piece, &l->err,
			     l->want_doc && l->kind == BODY_XML ? &parsed : NULL))
		return -1;
	if (l->want_doc && !(node = member_node(l, parsed)))
		return -1;
	if (l->n == l->alloc) {
		l->alloc = l->alloc ? 2 * l->alloc : 16;
		l->v = xrealloc(l->v, l->alloc * sizeof(*l->v));
	}
	off = place_text(l, p);
	if (node)
		place_node(l, p, node);
	memmove(&l->v[p + 1], &l->v[p], (l->n - p) * sizeof(*l->v));
	l->v[p].off = off;
	l->v[p].member = i;
	l->v[p].node = node;
	l->n++;
	return 0;
}

int agg_live_update(struct agg_live *l, const struct agg_group *g)
{
	for (; !l->failed && l->taken < g->n; l->taken++)
		if (take(l, g, l->taken) < 0)
			l->failed = 1;
	buf_reset(&l->err);
	return l->failed ? -1 : 0;
}

const struct buf *agg_live_body(const struct agg_live *l)
{
	return &l->text;
}

enum body_kind agg_live_kind(const struct agg_live *l)
{
	return l->kind;
}

struct _xmlDoc *agg_live_doc(const struct agg_live *l)
{
	return l->doc;
}
