/*
 * jsonxml-read: JSON text to its XPath 3.1 mapping, in a single pass
 * that builds the tree directly (no intermediate JSON tree).
 */
#include "jsonxml-parts.h"

#include <stdarg.h>
#include <stdint.h>
#include <string.h>

#include "utf8.h"

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
			jsonxml_put_escape(out, c);
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
		if (!jsonlex_is_hex(P->p[k]))
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
	jsonxml_put_utf8(to, cp);
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
			      enum jsonxml_kind k, int keyed)
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

static enum jsonxml_kind kind_of(unsigned c)
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
	enum jsonxml_kind k;

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
	default: return parse_literal(P, node, jsonlex_literal(P->p[P->i]));
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
		if (!(P->name[k] = dict_name(P, jsonxml_kind_name[k])))
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
