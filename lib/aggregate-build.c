/*
 * aggregate-build: the message a released group becomes: its members'
 * bodies in order, as one XML document, one JSON array or joined text,
 * under the headers they share and those that say what the group was.
 */
#include "aggregate.h"

#include <libxml/tree.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "jsonscan.h"
#include "xmldoc.h"
#include "xmlout.h"

/* ---- member order ---- */

static int member_cmp(const void *a, const void *b)
{
	return agg_member_cmp(*(struct agg_member *const *)a,
			      *(struct agg_member *const *)b);
}

static const struct agg_member **in_order(const struct agg_group *g)
{
	const struct agg_member **v = xmalloc((g->n ? g->n : 1) * sizeof(*v));
	int sorted = 1;

	for (size_t i = 0; i < g->n; i++) {
		v[i] = &g->m[i];
		if (i && member_cmp(&v[i - 1], &v[i]) > 0)
			sorted = 0;
	}
	if (!sorted)
		qsort(v, g->n, sizeof(*v), member_cmp);
	return v;
}

/* ---- bodies ---- */

static const char *kind_name(enum body_kind k)
{
	return k == BODY_XML ? "XML" : k == BODY_JSON ? "JSON" : "text";
}

/* A member's kind, and the message it is when it has a Message-Id:
 * the group's key alone does not say which members to look at. */
static void member_kind(const struct agg_group *g, const struct agg_member *m,
			struct buf *err)
{
	const char *id = agg_member_id(g, m);

	buf_addstr(err, kind_name(m->kind));
	if (id)
		buf_addf(err, " (message %s)", id);
}

/* The kind every member has; -1 with the reason when they differ, which
 * names the first member and the first that came of another kind. */
static int common_kind(const struct agg_group *g, enum body_kind *kind,
		       struct buf *err)
{
	for (size_t i = 1; i < g->n; i++)
		if (g->m[i].kind != g->m[0].kind) {
			buf_addstr(err, "mixed bodies in one group: ");
			member_kind(g, &g->m[0], err);
			buf_addstr(err, " and ");
			member_kind(g, &g->m[i], err);
			return -1;
		}
	*kind = g->n ? g->m[0].kind : BODY_TEXT;
	return 0;
}

/* A member's document element, serialised as msg-split serialises a
 * part; *doc, when asked for, keeps its parsed document. */
static int xml_member(const struct agg_group *g, const struct agg_member *m,
		      size_t i, struct buf *out, struct buf *err, xmlDocPtr *doc)
{
	struct buf why = BUF_INIT;
	int status = 0;
	xmlDocPtr d = xmldoc_parse(agg_member_body(g, m), m->len, &why, &status);

	if (!d) {
		buf_addf(err, "member %zu: %s", i + 1, why.ptr);
		buf_release(&why);
		return status;
	}
	buf_release(&why);
	xmlout_element(xmlDocGetRootElement(d), out);
	if (doc)
		*doc = d;
	else
		xmlFreeDoc(d);
	return 0;
}

/* The innermost start tag of a Sequence-Root, or NULL. */
static const char *innermost_root(const struct headers *h)
{
	const char *roots = headers_get(h, "Sequence-Root");

	return roots ? strrchr(roots, '<') : NULL;
}

/* Is tag ("<name ...>", as xmlout_start_tag writes it) of element name? */
static int tag_of(const char *tag, const char *name)
{
	size_t n = strlen(name);

	return !strncmp(tag + 1, name, n) && (tag[1 + n] == ' ' || tag[1 + n] == '>');
}

void agg_xml_start(const struct agg_group *g, const char *wrap, struct buf *out)
{
	const char *tag = innermost_root(&g->common);

	/* The parent's own element, when it is the one asked for. */
	if (tag && tag_of(tag, wrap))
		buf_addstr(out, tag);
	else
		buf_addf(out, "<%s>", wrap);
}

int agg_wrap_check(const char *wrap, struct buf *err)
{
	if (!xmlValidateQName(BAD_CAST wrap, 0))
		return 0;
	buf_addf(err, "'%s' is not an element name", wrap);
	return -1;
}

static int xml_body(const struct agg_group *g, const struct agg_member **v, size_t n, const char *wrap,
		    struct buf *body, struct buf *err)
{
	if (agg_wrap_check(wrap, err) < 0)
		return -1;
	xmldoc_init();
	agg_xml_start(g, wrap, body);
	for (size_t i = 0; i < n; i++) {
		int r = xml_member(g, v[i], i, body, err, NULL);
		if (r)
			return r;
	}
	buf_addf(body, "</%s>", wrap);
	return 0;
}

/* jsonscan's messages count from the '[' put before the value. */
static void shift_offsets(const char *msg, struct buf *out)
{
	const char *p = msg, *at;

	while ((at = strstr(p, "offset ")) && at[7] >= '1' && at[7] <= '9') {
		char *end;
		unsigned long long off = strtoull(at + 7, &end, 10);
		buf_add(out, p, (size_t)(at - p));
		buf_addf(out, "offset %llu", off - 1);
		p = end;
	}
	buf_addstr(out, p);
}

static int take_value(void *ctx, const char *text, size_t n)
{
	struct buf *body = ctx;

	buf_add(body, text, n);
	return 0;
}

/*
 * Scanned as the one element of an array, a body is checked by the same
 * rules as every JSON reader's, and its value's bytes come out exactly,
 * without the blanks around them.
 */
static int json_value(const struct agg_group *g, const struct agg_member *m, size_t i, struct buf *body,
		      struct buf *err)
{
	struct jsonscan s;
	int r = jsonscan_init(&s, "");

	if (r == 0)
		r = jsonscan_feed(&s, "[", 1, take_value, body);
	if (r == 0)
		r = jsonscan_feed(&s, agg_member_body(g, m), m->len, take_value, body);
	if (r == 0)
		r = jsonscan_feed(&s, "]", 1, take_value, body);
	if (r == 0)
		r = jsonscan_finish(&s);
	if (r < 0) {
		buf_addf(err, "member %zu: ", i + 1);
		shift_offsets(s.err.ptr, err);
	} else if (jsonscan_count(&s) != 1) {
		buf_addf(err, "member %zu: not one JSON value", i + 1);
		r = -1;
	}
	jsonscan_release(&s);
	return r;
}

static int json_body(const struct agg_group *g, const struct agg_member **v, size_t n, struct buf *body,
		     struct buf *err)
{
	buf_addch(body, '[');
	for (size_t i = 0; i < n; i++) {
		if (i)
			buf_addch(body, ',');
		if (json_value(g, v[i], i, body, err) < 0)
			return -1;
	}
	buf_addch(body, ']');
	return 0;
}

static void text_body(const struct agg_group *g, const struct agg_member **v, size_t n,
		      const struct agg_build_opt *opt, struct buf *body)
{
	for (size_t i = 0; i < n; i++) {
		if (i && opt->separator)
			buf_add(body, opt->separator, opt->separator_len);
		buf_add(body, agg_member_body(g, v[i]), v[i]->len);
	}
}

int agg_member_piece(const struct agg_group *g, const struct agg_member *m,
		     size_t i, struct buf *out, struct buf *err,
		     struct _xmlDoc **doc)
{
	if (doc)
		*doc = NULL;
	if (m->kind == BODY_XML)
		return xml_member(g, m, i, out, err, doc);
	if (m->kind == BODY_JSON)
		return json_value(g, m, i, out, err);
	buf_add(out, agg_member_body(g, m), m->len);
	return 0;
}

/* The lowest or highest number; ties and NaN go to the earliest. */
static const struct agg_member *best_member(const struct agg_group *g,
					    enum agg_best mode)
{
	const struct agg_member *best = NULL;

	for (size_t i = 0; i < g->n; i++) {
		const struct agg_member *m = &g->m[i];
		if (isnan(m->best))
			continue;
		if (!best || (mode == AGG_BEST_MIN ? m->best < best->best
						   : m->best > best->best))
			best = m;
	}
	return best ? best : g->n ? &g->m[0] : NULL;
}

/* An empty group (a Sequence-Size 0 marker) is an empty document of the
 * kind its type says. */
static enum body_kind empty_kind(const struct headers *h)
{
	const char *type = headers_get(h, "Content-Type");

	if (type && strcasestr(type, "json"))
		return BODY_JSON;
	if (type && strcasestr(type, "xml"))
		return BODY_XML;
	return BODY_TEXT;
}

const char *agg_kind_type(enum body_kind kind)
{
	return kind == BODY_XML ? "application/xml"
	     : kind == BODY_JSON ? "application/json" : NULL;
}

static int build_body(const struct agg_group *g, const struct agg_build_opt *opt,
		      struct headers *h, struct buf *body, struct buf *err)
{
	const char *wrap = opt->wrap ? opt->wrap : "aggregate";
	const struct agg_member **v;
	enum body_kind kind;
	int r = 0;

	if (opt->best != AGG_BEST_NONE && g->n) {
		const struct agg_member *m = best_member(g, opt->best);
		buf_add(body, agg_member_body(g, m), m->len);
		return 0;
	}
	if (common_kind(g, &kind, err) < 0)
		return -1;
	if (!g->n)
		kind = empty_kind(h);
	v = in_order(g);
	if (kind == BODY_XML)
		r = xml_body(g, v, g->n, wrap, body, err);
	else if (kind == BODY_JSON)
		r = json_body(g, v, g->n, body, err);
	else
		text_body(g, v, g->n, opt, body);
	free(v);
	if (r == 0 && kind != BODY_TEXT)
		headers_set(h, "Content-Type", agg_kind_type(kind));
	return r;
}

/* ---- headers ---- */

/*
 * msg-split saved the parent's place as "CORRELATION NUMBER SIZE",
 * innermost last; the aggregate is that parent again, so it takes the
 * place back and the entry leaves the stack.
 */
static int pop_stack(struct headers *h, const char *stack, struct buf *err)
{
	const char *entry = stack, *sep;
	char *copy, *num, *size;
	uint64_t n, s = 0;
	const char *why;
	int r = -1;

	while ((sep = strstr(entry, ", ")))
		entry = sep + 2;
	copy = xstrdup(entry);
	size = strrchr(copy, ' ');
	if (size) {
		*size++ = '\0';
		num = strrchr(copy, ' ');
		if (num && num > copy) {
			*num++ = '\0';
			if (!seq_parse(num, 1, &n, &why) &&
			    (!strcmp(size, "-") || !seq_parse(size, 1, &s, &why)) &&
			    (!s || n <= s))
				r = 0;
		}
	}
	if (r < 0) {
		buf_addf(err, "Sequence-Stack entry '%s' is not 'CORRELATION NUMBER SIZE'",
			 entry);
		free(copy);
		return -1;
	}
	if (strcmp(copy, "-"))
		headers_set(h, "Correlation-Id", copy);
	else
		headers_remove(h, "Correlation-Id");
	headers_set_u64(h, "Sequence-Number", n);
	if (s)
		headers_set_u64(h, "Sequence-Size", s);
	else
		headers_remove(h, "Sequence-Size");
	if (s && n == s)
		headers_set(h, "Sequence-End", "true");
	else
		headers_remove(h, "Sequence-End");
	if (entry > stack)
		headers_setn(h, "Sequence-Stack", stack, (size_t)(entry - 2 - stack));
	else
		headers_remove(h, "Sequence-Stack");
	free(copy);
	return 0;
}

/* An XML aggregate is the parent whose element its Sequence-Root's last
 * tag was: the tag leaves the list. */
static void pop_root(struct headers *h)
{
	const char *roots = headers_get(h, "Sequence-Root");
	const char *tag = innermost_root(h);

	if (tag && tag > roots)
		headers_setn(h, "Sequence-Root", roots, (size_t)(tag - roots));
	else
		headers_remove(h, "Sequence-Root");
}

/* The kind of the aggregate: its members', or an empty group's type's
 * (mixed kinds fail later, in the body). */
static enum body_kind group_kind(const struct agg_group *g, const struct headers *h)
{
	return g->n ? g->m[0].kind : empty_kind(h);
}

/* A sequence group released without every number says which are gone. */
static void add_missing(const struct agg_group *g, struct headers *h)
{
	struct buf missing = BUF_INIT;

	if (g->size_known ? !seqset_complete(&g->seen, g->size)
			  : g->seen.count > 0) {
		seqset_missing(&g->seen, g->size_known ? g->size : 0, &missing);
		headers_set(h, "Aggregate-Missing", missing.ptr);
	}
	buf_release(&missing);
}

int agg_build_headers(const struct agg_group *g, enum agg_reason reason,
		      struct headers *h, struct buf *err)
{
	const char *stack = headers_get(&g->common, "Sequence-Stack");
	int r = 0;

	headers_copy(h, &g->common);
	if (stack && *stack) {
		r = pop_stack(h, stack, err);
	} else {
		/* The members' sequence is the one this message ends. */
		headers_setn(h, "Correlation-Id", g->key, g->key_len);
		headers_remove(h, "Sequence-Number");
		headers_remove(h, "Sequence-Size");
		headers_remove(h, "Sequence-End");
	}
	if (group_kind(g, h) == BODY_XML)
		pop_root(h);
	headers_set_u64(h, "Aggregate-Size", g->n);
	headers_set(h, "Aggregate-Reason", agg_reason_name(reason));
	add_missing(g, h);
	return r;
}

int agg_build(const struct agg_group *g, const struct agg_build_opt *opt,
	      enum agg_reason reason, struct headers *h, struct buf *body,
	      struct buf *err)
{
	headers_reset(h);
	buf_reset(body);
	if (agg_build_headers(g, reason, h, err) < 0)
		return -1;
	return build_body(g, opt, h, body, err);
}
