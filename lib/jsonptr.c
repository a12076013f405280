/* jsonptr: JSON Pointer lookup over raw JSON text. */
#include "jsonptr.h"

#include <string.h>

#include "jsonlex.h"
#include "utf8.h"

struct scan {
	const char *p, *end;
	const char *start;
	unsigned depth;		/* containers entered on the way */
	struct buf *err;
};

static int bad(struct scan *s, const char *what)
{
	if (s->err)
		buf_addf(s->err, "offset %zu: %s", (size_t)(s->p - s->start), what);
	return -1;
}

static void ws(struct scan *s)
{
	while (s->p < s->end && jsonlex_space[(unsigned char)*s->p])
		s->p++;
}

/* The bracket at s->p opens level depth: is that too deep? */
static int too_deep(struct scan *s, unsigned depth)
{
	return depth > JSON_MAX_DEPTH ? bad(s, JSON_TOO_DEEP) : 0;
}

/* Past a string whose opening quote is at s->p. */
static int skip_string(struct scan *s)
{
	s->p++;
	for (;;) {
		const char *q = s->p;
		while (q < s->end && *q != '"' && *q != '\\' && (unsigned char)*q >= 0x20)
			q++;
		s->p = q;
		if (q >= s->end)
			return bad(s, "unterminated string");
		if (*q == '"') {
			s->p++;
			return 0;
		}
		if (*q != '\\')
			return bad(s, "control character in string");
		if (q + 1 >= s->end)
			return bad(s, "unterminated string");
		s->p += 2;
	}
}

/* Past any value: strings exactly, containers by balance. */
static int skip_value(struct scan *s, enum json_type *type)
{
	int depth = 0;

	ws(s);
	if (s->p >= s->end)
		return bad(s, "value expected");
	switch (*s->p) {
	case '"':
		*type = JSON_T_STRING;
		return skip_string(s);
	case '{':
	case '[':
		*type = *s->p == '{' ? JSON_T_OBJECT : JSON_T_ARRAY;
		for (; s->p < s->end; ) {
			char c = *s->p;
			if (c == '"') {
				if (skip_string(s) < 0)
					return -1;
				continue;
			}
			if (c == '{' || c == '[') {
				if (too_deep(s, s->depth + ++depth) < 0)
					return -1;
			} else if (c == '}' || c == ']') {
				if (--depth == 0) {
					s->p++;
					return 0;
				}
			}
			s->p++;
		}
		return bad(s, "unterminated object or array");
	case 't':
	case 'f':
	case 'n': {
		const char *word = jsonlex_literal((unsigned char)*s->p);
		size_t len = strlen(word);
		if ((size_t)(s->end - s->p) < len || memcmp(s->p, word, len))
			return bad(s, "invalid literal");
		s->p += len;
		*type = *word == 't' ? JSON_T_TRUE : *word == 'f' ? JSON_T_FALSE
			: JSON_T_NULL;
		return 0;
	}
	default:
		if (*s->p == '-' || (*s->p >= '0' && *s->p <= '9')) {
			s->p++;
			while (s->p < s->end && strchr("0123456789.eE+-", *s->p))
				s->p++;
			*type = JSON_T_NUMBER;
			return 0;
		}
		return bad(s, "value expected");
	}
}

const char *jsonptr_token(const char *ptr, struct buf *tok)
{
	buf_reset(tok);
	for (; *ptr && *ptr != '/'; ptr++) {
		if (*ptr == '~' && (ptr[1] == '0' || ptr[1] == '1')) {
			buf_addch(tok, ptr[1] == '0' ? '~' : '/');
			ptr++;
		} else {
			buf_addch(tok, *ptr);
		}
	}
	return ptr;
}

/* Does the string at s->p (a key) equal tok? Leaves s->p after it. */
static int key_equals(struct scan *s, const struct buf *tok, struct buf *scratch)
{
	const char *start = s->p;
	struct json_span span;

	if (skip_string(s) < 0)
		return -1;
	/* Keys without escapes compare in place. */
	if (!memchr(start, '\\', (size_t)(s->p - start)))
		return (size_t)(s->p - start - 2) == tok->len &&
		       !memcmp(start + 1, tok->ptr, tok->len);
	span.p = start;
	span.n = (size_t)(s->p - start);
	span.type = JSON_T_STRING;
	buf_reset(scratch);
	if (jsonptr_string(&span, scratch) < 0)
		return bad(s, "invalid escape in key");
	return scratch->len == tok->len && !memcmp(scratch->ptr, tok->ptr, tok->len);
}

static int step_object(struct scan *s, const struct buf *tok, struct buf *scratch)
{
	enum json_type t;

	if (too_deep(s, ++s->depth) < 0)
		return -1;
	s->p++;
	ws(s);
	if (s->p < s->end && *s->p == '}')
		return 0;
	for (;;) {
		int eq;

		ws(s);
		if (s->p >= s->end || *s->p != '"')
			return bad(s, "object key expected");
		eq = key_equals(s, tok, scratch);
		if (eq < 0)
			return -1;
		ws(s);
		if (s->p >= s->end || *s->p != ':')
			return bad(s, "':' expected");
		s->p++;
		ws(s);
		if (eq)
			return 1;
		if (skip_value(s, &t) < 0)
			return -1;
		ws(s);
		if (s->p < s->end && *s->p == ',') {
			s->p++;
			continue;
		}
		if (s->p < s->end && *s->p == '}')
			return 0;
		return bad(s, "',' or '}' expected");
	}
}

static int step_array(struct scan *s, const struct buf *tok)
{
	enum json_type t;
	size_t index = 0, want = 0;

	if (!tok->len || (tok->ptr[0] == '0' && tok->len > 1))
		return 0;
	for (size_t i = 0; i < tok->len; i++) {
		if (tok->ptr[i] < '0' || tok->ptr[i] > '9' || want > ((size_t)-1) / 10 - 9)
			return 0;
		want = want * 10 + (size_t)(tok->ptr[i] - '0');
	}
	if (too_deep(s, ++s->depth) < 0)
		return -1;
	s->p++;
	ws(s);
	if (s->p < s->end && *s->p == ']')
		return 0;
	for (;; index++) {
		ws(s);
		if (index == want)
			return 1;
		if (skip_value(s, &t) < 0)
			return -1;
		ws(s);
		if (s->p < s->end && *s->p == ',') {
			s->p++;
			continue;
		}
		if (s->p < s->end && *s->p == ']')
			return 0;
		return bad(s, "',' or ']' expected");
	}
}

int jsonptr_find(const char *text, size_t n, const char *pointer,
		 struct json_span *out, struct buf *err)
{
	struct scan s = { text, text + n, text, 0, err };
	struct buf tok = BUF_INIT, scratch = BUF_INIT;
	const char *ptr = pointer;
	int r = 1;

	if (n >= 3 && !memcmp(text, "\xef\xbb\xbf", 3))
		s.p += 3;
	ws(&s);
	while (r == 1 && *ptr == '/') {
		ptr = jsonptr_token(ptr + 1, &tok);
		ws(&s);
		if (s.p >= s.end)
			r = bad(&s, "value expected");
		else if (*s.p == '{')
			r = step_object(&s, &tok, &scratch);
		else if (*s.p == '[')
			r = step_array(&s, &tok);
		else
			r = 0;	/* a scalar has no members */
	}
	if (r == 1 && *ptr)
		r = 0;		/* a pointer must start with '/' */
	if (r == 1) {
		const char *start;
		ws(&s);
		start = s.p;
		r = skip_value(&s, &out->type) < 0 ? -1 : 1;
		out->p = start;
		out->n = (size_t)(s.p - start);
	}
	buf_release(&tok);
	buf_release(&scratch);
	return r;
}

int jsonptr_string(const struct json_span *v, struct buf *out)
{
	const char *p = v->p + 1, *end = v->p + v->n - 1;

	while (p < end) {
		const char *q = memchr(p, '\\', (size_t)(end - p));
		uint32_t cp;
		size_t len;
		char u8[4];

		if (!q) {
			buf_add(out, p, (size_t)(end - p));
			break;
		}
		buf_add(out, p, (size_t)(q - p));
		len = jsonlex_unescape((const unsigned char *)q, (size_t)(end - q), &cp);
		if (!len)
			return -1;
		p = q + len;
		if (cp >= 0xd800 && cp < 0xe000)
			cp = 0xfffd;	/* a lone surrogate has no UTF-8 */
		buf_add(out, u8, utf8_encode(cp, u8));
	}
	return 0;
}

void jsonptr_compact(const struct json_span *v, struct buf *out)
{
	const char *p = v->p, *end = v->p + v->n;

	while (p < end) {
		if (*p == '"') {
			const char *q = p + 1;
			while (q < end && *q != '"')
				q += *q == '\\' ? 2 : 1;
			q = q < end ? q + 1 : end;
			buf_add(out, p, (size_t)(q - p));
			p = q;
		} else {
			if (*p != ' ' && *p != '\n' && *p != '\t' && *p != '\r')
				buf_addch(out, *p);
			p++;
		}
	}
}
