/* jsonxml-write: an element of the XPath 3.1 mapping back to JSON text,
 * exactly, and why not when it is not the mapping. */
#include "jsonxml-parts.h"

#include <stdarg.h>
#include <stdint.h>
#include <string.h>

struct writer {
	struct buf *out, *err;
	struct buf text;	/* a leaf's text when it spans several nodes */
	struct buf attr;	/* an attribute value */
	int pretty;
};

__attribute__((format(printf, 3, 4)))
static int bad(struct writer *W, xmlNodePtr node, const char *fmt, ...)
{
	xmlChar *path;
	va_list ap;

	if (!W->err)
		return -1;
	path = xmlGetNodePath(node);
	buf_reset(W->err);
	buf_addf(W->err, "element '%s': ", path ? (char *)path : "?");
	xmlFree(path);
	va_start(ap, fmt);
	buf_vaddf(W->err, fmt, ap);
	va_end(ap);
	return -1;
}


static int all_ws(const xmlChar *s)
{
	while (*s && jsonlex_space[*s])
		s++;
	return !*s;
}

static xmlAttrPtr find_attr(xmlNodePtr node, const char *name)
{
	xmlAttrPtr a;

	for (a = node->properties; a; a = a->next)
		if (!a->ns && xmlStrEqual(a->name, BAD_CAST name))
			return a;
	return NULL;
}

/* The value of attribute a, valid until the next call. */
static const char *attr_value(struct writer *W, xmlAttrPtr a)
{
	xmlChar *v;

	if (!a->children)
		return "";
	if (a->children->type == XML_TEXT_NODE && !a->children->next)
		return (const char *)a->children->content;
	v = xmlNodeListGetString(a->doc, a->children, 1);
	buf_reset(&W->attr);
	if (v)
		buf_addstr(&W->attr, (char *)v);
	xmlFree(v);
	return W->attr.ptr;
}

/* Trim XML whitespace from both ends of s[0..*n). */
static const char *trim(const char *s, size_t *n)
{
	while (*n && jsonlex_space[(unsigned char)*s])
		s++, (*n)--;
	while (*n && jsonlex_space[(unsigned char)s[*n - 1]])
		(*n)--;
	return s;
}

/* An xs:boolean attribute (escaped, escaped-key): 1, 0, or -1 after an error. */
static int flag_attr(struct writer *W, xmlNodePtr node, const char *name)
{
	xmlAttrPtr a = find_attr(node, name);
	const char *v;
	size_t n;

	if (!a)
		return 0;
	v = attr_value(W, a);
	n = strlen(v);
	v = trim(v, &n);
	if ((n == 4 && !memcmp(v, "true", 4)) || (n == 1 && *v == '1'))
		return 1;
	if ((n == 5 && !memcmp(v, "false", 5)) || (n == 1 && *v == '0'))
		return 0;
	return bad(W, node, "attribute %s='%s' is not true or false", name,
		   attr_value(W, a));
}

static int check_attrs(struct writer *W, xmlNodePtr node, enum jsonxml_kind k)
{
	xmlAttrPtr a;

	for (a = node->properties; a; a = a->next) {
		if (a->ns || xmlStrEqual(a->name, BAD_CAST "key") ||
		    xmlStrEqual(a->name, BAD_CAST "escaped-key"))
			continue;
		if (k == K_STRING && xmlStrEqual(a->name, BAD_CAST "escaped"))
			continue;
		return bad(W, node, "unexpected attribute '%s'", (char *)a->name);
	}
	return 0;
}

/* The text of a leaf element (its text and CDATA children), or NULL. */
static const char *leaf_text(struct writer *W, xmlNodePtr node, size_t *len)
{
	xmlNodePtr c, only = NULL;
	int count = 0;

	for (c = node->children; c; c = c->next) {
		if (c->type == XML_COMMENT_NODE || c->type == XML_PI_NODE)
			continue;
		if (c->type == XML_ELEMENT_NODE) {
			bad(W, node, "unexpected child element '%s'", (char *)c->name);
			return NULL;
		}
		if (c->type != XML_TEXT_NODE && c->type != XML_CDATA_SECTION_NODE) {
			bad(W, node, "unexpected child node (type %d)", (int)c->type);
			return NULL;
		}
		if (c->content && *c->content)
			only = c, count++;
	}
	if (count <= 1) {
		*len = only ? strlen((const char *)only->content) : 0;
		return only ? (const char *)only->content : "";
	}
	/* Split text (CDATA next to text, say): join it. */
	buf_reset(&W->text);
	for (c = node->children; c; c = c->next)
		if ((c->type == XML_TEXT_NODE || c->type == XML_CDATA_SECTION_NODE) &&
		    c->content)
			buf_addstr(&W->text, (const char *)c->content);
	*len = W->text.len;
	return W->text.ptr;
}

/* s as a JSON string: escape '"', '\' and controls, nothing else. */
static void put_string(struct buf *out, const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0, run;

	buf_addch(out, '"');
	while (i < n) {
		run = i;
		while (i < n && u[i] >= 0x20 && u[i] != '"' && u[i] != '\\')
			i++;
		buf_add(out, s + run, i - run);
		if (i < n)
			jsonxml_put_escape(out, u[i++]);
	}
	buf_addch(out, '"');
}

/* The escape at s[*i] (a '\') of escaped text, decoded; -1 if invalid. */
static int32_t escaped_char(const unsigned char *s, size_t n, size_t *i)
{
	uint32_t cp;
	size_t len = jsonlex_unescape(s + *i, n - *i, &cp);

	if (!len)
		return -1;
	*i += len;
	return (int32_t)cp;
}

/*
 * Escaped text (escaped="true") as a canonical JSON string: its escapes
 * are decoded and written back the canonical way, so the output does not
 * depend on how the text was escaped.
 */
static int put_escaped_string(struct writer *W, xmlNodePtr node,
			      const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0;
	int32_t cp;

	buf_addch(W->out, '"');
	while (i < n) {
		if (u[i] != '\\') {
			if (u[i] < 0x20 || u[i] == '"')
				jsonxml_put_escape(W->out, u[i]);
			else
				buf_addch(W->out, u[i]);
			i++;
			continue;
		}
		cp = escaped_char(u, n, &i);
		if (cp < 0)
			return bad(W, node, "invalid JSON escape in escaped text");
		if (cp < 0x20 || cp == '"' || cp == '\\')
			jsonxml_put_escape(W->out, (unsigned)cp);
		else if (cp >= 0xd800 && cp <= 0xdfff)
			buf_addf(W->out, "\\u%04x", (unsigned)cp);
		else
			jsonxml_put_utf8(W->out, (uint32_t)cp);
	}
	buf_addch(W->out, '"');
	return 0;
}

static int write_key(struct writer *W, xmlNodePtr member)
{
	xmlAttrPtr a = find_attr(member, "key");
	const char *k;
	int escaped = flag_attr(W, member, "escaped-key");

	if (escaped < 0)
		return -1;
	if (!a)
		return bad(W, member, "map member without a key attribute");
	k = attr_value(W, a);
	if (escaped) {
		if (put_escaped_string(W, member, k, strlen(k)) < 0)
			return -1;
	} else {
		put_string(W->out, k, strlen(k));
	}
	buf_add(W->out, ": ", W->pretty ? 2 : 1);
	return 0;
}

static void newline(struct writer *W, unsigned level)
{
	if (!W->pretty)
		return;
	buf_grow(W->out, 1 + 2 * (size_t)level);
	buf_addch(W->out, '\n');
	memset(W->out->ptr + W->out->len, ' ', 2 * (size_t)level);
	buf_setlen(W->out, W->out->len + 2 * (size_t)level);
}

static int write_node(struct writer *W, xmlNodePtr node, unsigned level);

/* 1 for a child that is a member, 0 for one to skip, -1 for an error. */
static int is_member(struct writer *W, xmlNodePtr parent, xmlNodePtr c)
{
	switch (c->type) {
	case XML_ELEMENT_NODE:
		return 1;
	case XML_COMMENT_NODE:
	case XML_PI_NODE:
		return 0;
	case XML_TEXT_NODE:
	case XML_CDATA_SECTION_NODE:
		if (!c->content || all_ws(c->content))
			return 0;
		return bad(W, parent, "unexpected text '%.20s'", (char *)c->content);
	default:
		return bad(W, parent, "unexpected child node (type %d)", (int)c->type);
	}
}

static int write_container(struct writer *W, xmlNodePtr node, enum jsonxml_kind k,
			   unsigned level)
{
	xmlNodePtr c;
	int first = 1, r;

	if (level >= JSON_MAX_DEPTH)
		return bad(W, node, JSON_TOO_DEEP);
	buf_addch(W->out, k == K_MAP ? '{' : '[');
	for (c = node->children; c; c = c->next) {
		if ((r = is_member(W, node, c)) <= 0) {
			if (r < 0)
				return -1;
			continue;
		}
		if (!first)
			buf_addch(W->out, ',');
		first = 0;
		newline(W, level + 1);
		if (k == K_MAP && write_key(W, c) < 0)
			return -1;
		if (write_node(W, c, level + 1) < 0)
			return -1;
	}
	if (!first)
		newline(W, level);
	buf_addch(W->out, k == K_MAP ? '}' : ']');
	return 0;
}

static int write_number(struct writer *W, xmlNodePtr node, const char *s,
			size_t n)
{
	const char *why;
	size_t at;

	s = trim(s, &n);
	if (!n || jsonlex_number_len((const unsigned char *)s, n, &at, &why) != n)
		return bad(W, node, "'%.*s' is not a JSON number", (int)n, s);
	buf_add(W->out, s, n);
	return 0;
}

static int write_boolean(struct writer *W, xmlNodePtr node, const char *s,
			 size_t n)
{
	s = trim(s, &n);
	if ((n == 4 && !memcmp(s, "true", 4)) ||
	    (n == 5 && !memcmp(s, "false", 5))) {
		buf_add(W->out, s, n);
		return 0;
	}
	return bad(W, node, "'%.*s' is not true or false", (int)n, s);
}

static int write_leaf(struct writer *W, xmlNodePtr node, enum jsonxml_kind k)
{
	size_t n;
	const char *s = leaf_text(W, node, &n);
	int escaped;

	if (!s)
		return -1;
	switch (k) {
	case K_STRING:
		if ((escaped = flag_attr(W, node, "escaped")) < 0)
			return -1;
		if (escaped)
			return put_escaped_string(W, node, s, n);
		put_string(W->out, s, n);
		return 0;
	case K_NUMBER:
		return write_number(W, node, s, n);
	case K_BOOLEAN:
		return write_boolean(W, node, s, n);
	default:
		trim(s, &n);
		if (n)
			return bad(W, node, "null element has content");
		buf_add(W->out, "null", 4);
		return 0;
	}
}

static int write_node(struct writer *W, xmlNodePtr node, unsigned level)
{
	enum jsonxml_kind k = jsonxml_element_kind(node);

	if (k == K_NONE)
		return bad(W, node, "not a JSON mapping element (map, array, "
			   "string, number, boolean or null in no namespace)");
	if (check_attrs(W, node, k) < 0)
		return -1;
	if (k == K_MAP || k == K_ARRAY)
		return write_container(W, node, k, level);
	return write_leaf(W, node, k);
}

int jsonxml_serialize(xmlNodePtr node, int pretty, struct buf *out,
		      struct buf *err)
{
	struct writer W;
	int r;

	if (!node) {
		if (err) {
			buf_reset(err);
			buf_addstr(err, "no element to serialize");
		}
		return -1;
	}
	W.out = out;
	W.err = err;
	W.pretty = pretty;
	buf_init(&W.text, 0);
	buf_init(&W.attr, 0);
	r = write_node(&W, node, 0);
	buf_release(&W.text);
	buf_release(&W.attr);
	return r;
}
