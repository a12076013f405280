/*
 * jsonxml: a single-pass JSON parser that builds the XPath 3.1 mapping
 * tree directly (no intermediate JSON tree), and the serializer back.
 */
#include "jsonxml.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "jsonlex.h"
#include "utf8.h"

enum kind { K_MAP, K_ARRAY, K_STRING, K_NUMBER, K_BOOLEAN, K_NULL, K_NONE };

static const char *const kind_name[K_NONE] = {
	"map", "array", "string", "number", "boolean", "null",
};

/* ---- character helpers shared by both directions ---- */

/* Can an XML 1.0 document hold this code point as a character? */
static int xml_char(uint32_t cp)
{
	if (cp < 0x20)
		return cp == '\t' || cp == '\n' || cp == '\r';
	if (cp < 0xd800)
		return 1;
	if (cp < 0xe000)
		return 0;
	return cp != 0xfffe && cp != 0xffff;
}

static void put_utf8(struct buf *b, uint32_t cp)
{
	char u[4];

	buf_add(b, u, utf8_encode(cp, u));
}
/* The canonical JSON escape of an ASCII character that needs one. */
static void put_escape(struct buf *b, unsigned c)
{
	static const char hex[] = "0123456789abcdef";
	char u[6] = { '\\', 'u', '0', '0', 0, 0 };

	switch (c) {
	case '"': buf_add(b, "\\\"", 2); return;
	case '\\': buf_add(b, "\\\\", 2); return;
	case '\b': buf_add(b, "\\b", 2); return;
	case '\f': buf_add(b, "\\f", 2); return;
	case '\n': buf_add(b, "\\n", 2); return;
	case '\r': buf_add(b, "\\r", 2); return;
	case '\t': buf_add(b, "\\t", 2); return;
	}
	u[4] = hex[c >> 4 & 0xf], u[5] = hex[c & 0xf];
	buf_add(b, u, 6);
}

/*
 * The escape text of a decoded string XML cannot hold: '\' and controls
 * escaped, lone surrogates and U+FFFE/U+FFFF as \uXXXX, the rest as is
 * ('"' too: the serializer escapes it on the way out).
 */
static void escape_for_xml(const unsigned char *s, size_t n, struct buf *out)
{
	size_t i = 0;

	buf_reset(out);
	while (i < n) {
		unsigned c = s[i];

		if (c == '\\' || c < 0x20) {
			put_escape(out, c);
			i++;
		} else if (i + 2 < n && ((c == 0xed && s[i + 1] >= 0xa0) ||
			   (c == 0xef && s[i + 1] == 0xbf && s[i + 2] >= 0xbe))) {
			uint32_t cp = (c & 0x0f) << 12 | (s[i + 1] & 0x3f) << 6 |
				      (s[i + 2] & 0x3f);

			buf_addf(out, "\\u%04x", (unsigned)cp);
			i += 3;
		} else {
			buf_addch(out, (int)c);
			i++;
		}
	}
}

/* ---- parser ---- */

struct parser {
	const unsigned char *p;
	size_t n, i;
	xmlDocPtr doc;
	xmlChar *name[K_NONE];	/* element names, owned by doc's dictionary */
	xmlChar *attr_key, *attr_escaped, *attr_escaped_key;	/* likewise */
	unsigned depth;
	struct buf str;		/* a decoded string */
	struct buf esc;		/* its escape text, when XML cannot hold it */
	struct buf key;		/* the member name for the next value */
	int key_escaped;
	struct buf *err;
};

__attribute__((format(printf, 3, 4)))
static int fail(struct parser *P, size_t off, const char *fmt, ...)
{
	va_list ap;

	if (!P->err)
		return -1;
	buf_reset(P->err);
	buf_addf(P->err, "offset %zu: ", off);
	va_start(ap, fmt);
	buf_vaddf(P->err, fmt, ap);
	va_end(ap);
	return -1;
}

static int fail_eof(struct parser *P)
{
	return fail(P, P->n, "unexpected end of input");
}

static int fail_unterminated(struct parser *P, size_t quote)
{
	return fail(P, P->n, "unterminated string (opened at offset %zu)",
		    quote);
}

static int fail_unexpected(struct parser *P, const char *what)
{
	char d[16];

	return fail(P, P->i, "unexpected %s, %s", jsonlex_describe(P->p[P->i], d), what);
}

static void skip_ws(struct parser *P)
{
	while (P->i < P->n && jsonlex_space[P->p[P->i]])
		P->i++;
}

/*
 * Fast path for a string needing no decoding: from its first content
 * byte, the index of its closing quote, or 0 to take the slow path
 * (escapes, controls, characters XML cannot hold, errors).
 */
static size_t plain_string_end(const struct parser *P, size_t i)
{
	uint32_t cp;
	int len;

	for (;;) {
		while (i < P->n && jsonlex_plain[P->p[i]])
			i++;
		if (i >= P->n)
			return 0;
		if (P->p[i] == '"')
			return i;
		if (P->p[i] < 0x80)
			return 0;
		len = utf8_decode(P->p + i, P->n - i, &cp);
		if (len <= 0 || !xml_char(cp))
			return 0;
		i += (size_t)len;
	}
}

/* \u at P->p[at] without four hex digits: truncated input or a bad digit. */
static int bad_hex(struct parser *P, size_t at, size_t quote)
{
	size_t k;

	for (k = at + 2; k < at + 6; k++) {
		if (k >= P->n)
			return fail_unterminated(P, quote);
		if (!isxdigit(P->p[k]))
			break;
	}
	return fail(P, at, "invalid \\u escape");
}

/* Why the escape at P->p[at] (a '\') is not one: fail with the reason. */
static int bad_escape(struct parser *P, size_t at, size_t quote)
{
	unsigned c;
	char d[16];

	if (at + 1 >= P->n)
		return fail_unterminated(P, quote);
	c = P->p[at + 1];
	if (c == 'u')
		return bad_hex(P, at, quote);
	if (c >= 0x20 && c < 0x7f)
		return fail(P, at, "invalid escape '\\%c'", c);
	return fail(P, at, "invalid escape: %s after '\\'", jsonlex_describe(c, d));
}

/* The escape at P->p[*i] ('\'), decoded onto to; *bad if XML can't hold it. */
static int decode_escape(struct parser *P, size_t *i, size_t quote,
			 struct buf *to, int *bad)
{
	uint32_t cp;
	size_t len = jsonlex_unescape(P->p + *i, P->n - *i, &cp);

	if (!len)
		return bad_escape(P, *i, quote);
	*i += len;
	*bad |= !xml_char(cp);
	put_utf8(to, cp);
	return 0;
}

/* The slow path: decode the string whose quote is at P->i into to. */
static int decode_string(struct parser *P, struct buf *to, int *bad)
{
	size_t quote = P->i, i = P->i + 1, run;
	uint32_t cp;
	int len;

	buf_reset(to);
	*bad = 0;
	for (;;) {
		run = i;
		while (i < P->n && jsonlex_plain[P->p[i]])
			i++;
		buf_add(to, P->p + run, i - run);
		if (i >= P->n)
			return fail_unterminated(P, quote);
		if (P->p[i] == '"') {
			P->i = i + 1;
			return 0;
		}
		if (P->p[i] == '\\') {
			if (decode_escape(P, &i, quote, to, bad) < 0)
				return -1;
			continue;
		}
		if (P->p[i] < 0x20)
			return fail(P, i, "unescaped control character 0x%02x in string",
				    P->p[i]);
		len = utf8_decode(P->p + i, P->n - i, &cp);
		if (len < 0)
			return fail_unterminated(P, quote);
		if (len == 0)
			return fail(P, i, "invalid UTF-8 in string");
		*bad |= !xml_char(cp);
		buf_add(to, P->p + i, (size_t)len);
		i += (size_t)len;
	}
}

/*
 * The string whose quote is at P->i, as XML text: a slice of the input
 * when possible, else decoded (and escaped, *escaped = 1, when XML cannot
 * hold it). Leaves P->i after the closing quote.
 */
static int read_string(struct parser *P, const char **text, size_t *len,
		       int *escaped)
{
	size_t end = plain_string_end(P, P->i + 1);

	*escaped = 0;
	if (end) {
		*text = (const char *)P->p + P->i + 1;
		*len = end - P->i - 1;
		P->i = end + 1;
		return 0;
	}
	if (decode_string(P, &P->str, escaped) < 0)
		return -1;
	if (*escaped) {
		escape_for_xml((unsigned char *)P->str.ptr, P->str.len, &P->esc);
		*text = P->esc.ptr, *len = P->esc.len;
	} else {
		*text = P->str.ptr, *len = P->str.len;
	}
	return 0;
}

/*
 * A text node holding s[0..n). To save an allocation per value, short
 * texts live inside the node the way libxml2 stores them with
 * XML_PARSE_COMPACT, and member names live in the document's dictionary
 * (they repeat); libxml2's tree functions know both forms.
 */
static xmlNodePtr new_text(struct parser *P, const char *s, size_t n,
			   int intern)
{
	xmlNodePtr t;

	if (n > INT32_MAX) {
		fail(P, P->i, "string longer than 2 GiB");
		return NULL;
	}
	if (!intern && n >= 2 * sizeof(void *)) {
		t = xmlNewDocTextLen(P->doc, (const xmlChar *)s, (int)n);
	} else if ((t = xmlNewDocText(P->doc, NULL)) && intern) {
		t->content = (xmlChar *)xmlDictLookup(P->doc->dict,
						      (const xmlChar *)s, (int)n);
		if (!t->content) {
			xmlFreeNode(t);
			t = NULL;
		}
	} else if (t) {
		t->content = (xmlChar *)&t->properties;
		memcpy(t->content, s, n);
		t->content[n] = '\0';
	}
	if (!t)
		fail(P, P->i, "out of memory");
	return t;
}

static int add_text(struct parser *P, xmlNodePtr node, const char *s,
		    size_t n)
{
	xmlNodePtr t;

	if (!n)
		return 0;
	t = new_text(P, s, n, 0);
	if (!t)
		return -1;
	xmlAddChild(node, t);
	return 0;
}

static int add_attr(struct parser *P, xmlNodePtr node, xmlChar *name,
		    const char *value, size_t n)
{
	xmlAttrPtr a = xmlNewNsPropEatName(node, NULL, name, NULL);
	xmlNodePtr t;

	if (!a)
		return fail(P, P->i, "out of memory");
	t = new_text(P, value, n, 1);
	if (!t)
		return -1;
	a->children = a->last = t;
	t->parent = (xmlNodePtr)a;
	return 0;
}

static int set_key(struct parser *P, xmlNodePtr node)
{
	if (add_attr(P, node, P->attr_key, P->key.ptr, P->key.len) < 0)
		return -1;
	if (P->key_escaped &&
	    add_attr(P, node, P->attr_escaped_key, "true", 4) < 0)
		return -1;
	return 0;
}

/* A new element of kind k, linked under parent (or as the root). */
static xmlNodePtr new_element(struct parser *P, xmlNodePtr parent,
			      enum kind k, int keyed)
{
	xmlNodePtr node = xmlNewDocNodeEatName(P->doc, NULL, P->name[k], NULL);

	if (!node) {
		fail(P, P->i, "out of memory");
		return NULL;
	}
	if (parent)
		xmlAddChild(parent, node);
	else
		xmlDocSetRootElement(P->doc, node);
	if (keyed && set_key(P, node) < 0)
		return NULL;
	return node;
}

static enum kind kind_of(unsigned c)
{
	switch (c) {
	case '{': return K_MAP;
	case '[': return K_ARRAY;
	case '"': return K_STRING;
	case 't': case 'f': return K_BOOLEAN;
	case 'n': return K_NULL;
	}
	return c == '-' || jsonlex_is_digit(c) ? K_NUMBER : K_NONE;
}

static int parse_value(struct parser *P, xmlNodePtr parent, int keyed);

static int enter(struct parser *P)
{
	if (++P->depth > JSON_MAX_DEPTH)
		return fail(P, P->i, JSON_TOO_DEEP);
	P->i++;
	skip_ws(P);
	return 0;
}

/* After a member or element: 1 at close, 0 after a comma, or -1. */
static int after_item(struct parser *P, char close)
{
	static const char *const what[2] = {
		"',' or ']' expected", "',' or '}' expected",
	};

	skip_ws(P);
	if (P->i >= P->n)
		return fail_eof(P);
	if (P->p[P->i] == close) {
		P->i++;
		P->depth--;
		return 1;
	}
	if (P->p[P->i] != ',')
		return fail_unexpected(P, what[close == '}']);
	P->i++;
	skip_ws(P);
	if (P->i < P->n && P->p[P->i] == close)
		return fail(P, P->i, "trailing comma before '%c'", close);
	return 0;
}

static int parse_key(struct parser *P)
{
	const char *s;
	size_t len;

	if (P->i >= P->n)
		return fail_eof(P);
	if (P->p[P->i] != '"')
		return fail_unexpected(P, "string key expected");
	if (read_string(P, &s, &len, &P->key_escaped) < 0)
		return -1;
	buf_reset(&P->key);
	buf_add(&P->key, s, len);
	skip_ws(P);
	if (P->i >= P->n)
		return fail_eof(P);
	if (P->p[P->i] != ':')
		return fail_unexpected(P, "':' expected");
	P->i++;
	skip_ws(P);
	return 0;
}

static int parse_map(struct parser *P, xmlNodePtr node)
{
	int r;

	if (enter(P) < 0)
		return -1;
	if (P->i < P->n && P->p[P->i] == '}') {
		P->i++;
		P->depth--;
		return 0;
	}
	do {
		if (parse_key(P) < 0 || parse_value(P, node, 1) < 0)
			return -1;
	} while ((r = after_item(P, '}')) == 0);
	return r < 0 ? -1 : 0;
}

static int parse_array(struct parser *P, xmlNodePtr node)
{
	int r;

	if (enter(P) < 0)
		return -1;
	if (P->i < P->n && P->p[P->i] == ']') {
		P->i++;
		P->depth--;
		return 0;
	}
	do {
		if (parse_value(P, node, 0) < 0)
			return -1;
	} while ((r = after_item(P, ']')) == 0);
	return r < 0 ? -1 : 0;
}

static int parse_string(struct parser *P, xmlNodePtr node)
{
	const char *s;
	size_t len;
	int escaped;

	if (read_string(P, &s, &len, &escaped) < 0)
		return -1;
	if (escaped && add_attr(P, node, P->attr_escaped, "true", 4) < 0)
		return -1;
	return add_text(P, node, s, len);
}

static int parse_number(struct parser *P, xmlNodePtr node)
{
	const char *why;
	size_t at, len = jsonlex_number_len(P->p + P->i, P->n - P->i, &at, &why);

	if (!len)
		return fail(P, P->i + at, "%s", why);
	P->i += len;
	return add_text(P, node, (const char *)P->p + P->i - len, len);
}

static int parse_literal(struct parser *P, xmlNodePtr node, const char *word)
{
	size_t k, len = strlen(word);
	char d[16];

	for (k = 0; k < len; k++, P->i++) {
		if (P->i >= P->n)
			return fail_eof(P);
		if (P->p[P->i] != (unsigned char)word[k])
			return fail(P, P->i, "unexpected %s, '%s' expected",
				    jsonlex_describe(P->p[P->i], d), word);
	}
	return word[0] == 'n' ? 0 : add_text(P, node, word, len);
}

static int parse_value(struct parser *P, xmlNodePtr parent, int keyed)
{
	xmlNodePtr node;
	enum kind k;

	if (P->i >= P->n)
		return fail_eof(P);
	k = kind_of(P->p[P->i]);
	if (k == K_NONE)
		return fail_unexpected(P, "value expected");
	node = new_element(P, parent, k, keyed);
	if (!node)
		return -1;
	switch (k) {
	case K_MAP: return parse_map(P, node);
	case K_ARRAY: return parse_array(P, node);
	case K_STRING: return parse_string(P, node);
	case K_NUMBER: return parse_number(P, node);
	case K_BOOLEAN:
		return parse_literal(P, node, P->p[P->i] == 't' ? "true" : "false");
	default: return parse_literal(P, node, "null");
	}
}

static xmlChar *dict_name(struct parser *P, const char *name)
{
	return (xmlChar *)xmlDictLookup(P->doc->dict, BAD_CAST name, -1);
}

static xmlDocPtr new_doc(struct parser *P)
{
	int k;

	P->doc = xmlNewDoc(BAD_CAST "1.0");
	if (!P->doc)
		return NULL;
	/* Names come from the dictionary: no copy per node. */
	P->doc->dict = xmlDictCreate();
	if (!P->doc->dict)
		return NULL;
	for (k = 0; k < K_NONE; k++)
		if (!(P->name[k] = dict_name(P, kind_name[k])))
			return NULL;
	P->attr_key = dict_name(P, "key");
	P->attr_escaped = dict_name(P, "escaped");
	P->attr_escaped_key = dict_name(P, "escaped-key");
	if (!P->attr_key || !P->attr_escaped || !P->attr_escaped_key)
		return NULL;
	return P->doc;
}

static int parse_document(struct parser *P)
{
	if (!new_doc(P))
		return fail(P, 0, "out of memory");
	skip_ws(P);
	if (P->i >= P->n)
		return fail(P, P->i, "empty document");
	if (parse_value(P, NULL, 0) < 0)
		return -1;
	skip_ws(P);
	if (P->i < P->n) {
		char d[16];

		return fail(P, P->i, "unexpected %s after the JSON value",
			    jsonlex_describe(P->p[P->i], d));
	}
	return 0;
}

xmlDocPtr jsonxml_parse(const char *p, size_t n, struct buf *err)
{
	struct parser P;
	int r;

	memset(&P, 0, sizeof(P));
	P.p = (const unsigned char *)p;
	P.n = n;
	P.err = err;
	buf_init(&P.str, 0);
	buf_init(&P.esc, 0);
	buf_init(&P.key, 0);
	r = parse_document(&P);
	buf_release(&P.str);
	buf_release(&P.esc);
	buf_release(&P.key);
	if (r < 0) {
		xmlFreeDoc(P.doc);
		return NULL;
	}
	return P.doc;
}

/* ---- serializer ---- */

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

static enum kind element_kind(xmlNodePtr node)
{
	int k;

	if (node->type != XML_ELEMENT_NODE || node->ns)
		return K_NONE;
	for (k = 0; k < K_NONE; k++)
		if (xmlStrEqual(node->name, BAD_CAST kind_name[k]))
			return (enum kind)k;
	return K_NONE;
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

static int check_attrs(struct writer *W, xmlNodePtr node, enum kind k)
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
			put_escape(out, u[i++]);
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
				put_escape(W->out, u[i]);
			else
				buf_addch(W->out, u[i]);
			i++;
			continue;
		}
		cp = escaped_char(u, n, &i);
		if (cp < 0)
			return bad(W, node, "invalid JSON escape in escaped text");
		if (cp < 0x20 || cp == '"' || cp == '\\')
			put_escape(W->out, (unsigned)cp);
		else if (cp >= 0xd800 && cp <= 0xdfff)
			buf_addf(W->out, "\\u%04x", (unsigned)cp);
		else
			put_utf8(W->out, (uint32_t)cp);
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

static int write_container(struct writer *W, xmlNodePtr node, enum kind k,
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

static int write_leaf(struct writer *W, xmlNodePtr node, enum kind k)
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
	enum kind k = element_kind(node);

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

int jsonxml_is_mapping(xmlDocPtr doc)
{
	xmlNodePtr root = doc ? xmlDocGetRootElement(doc) : NULL;
	enum kind k = root ? element_kind(root) : K_NONE;

	return k == K_MAP || k == K_ARRAY;
}
