/*
 * jsonscan: a byte-driven JSON state machine, fed in chunks, that follows
 * a JSON Pointer and hands out the elements of the array it finds there.
 * Its syntax rules and messages mirror jsonxml_parse exactly.
 */
#include "jsonscan-parts.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonlex.h"
#include "utf8.h"

enum state {
	ST_VALUE,		/* a value must start here */
	ST_ARRAY_FIRST,		/* after '[': a value or ']' */
	ST_ARRAY_NEXT,		/* after ',' in an array: a value */
	ST_OBJECT_FIRST,	/* after '{': a member name or '}' */
	ST_OBJECT_NEXT,		/* after ',' in an object: a member name */
	ST_COLON,		/* after a member name */
	ST_AFTER,		/* after a value: ',', a close, or the end */
	ST_STRING,
	ST_ESCAPE,		/* after '\' */
	ST_HEX,			/* in the digits of \uXXXX */
	ST_UTF8,		/* in a multibyte character */
	ST_NUMBER,		/* in a number, its state in s->num */
	ST_LITERAL,		/* in true, false or null */
};

/* The chunk being scanned, and where the scan is in it. */
struct chunk {
	struct jsonscan *s;
	const unsigned char *p;
	size_t n, i;
	jsonscan_fn fn;
	void *ctx;
};

__attribute__((format(printf, 3, 4)))
static int fail_at(struct jsonscan *s, uint64_t off, const char *fmt, ...)
{
	va_list ap;

	buf_reset(&s->err);
	buf_addf(&s->err, "offset %llu: ", (unsigned long long)off);
	va_start(ap, fmt);
	buf_vaddf(&s->err, fmt, ap);
	va_end(ap);
	s->failed = 1;
	return -1;
}

#define fail(c, i, ...) fail_at((c)->s, (c)->s->offset + (i), __VA_ARGS__)

static int fail_unexpected(struct chunk *c, const char *what)
{
	char d[16];

	return fail(c, c->i, "unexpected %s, %s", jsonlex_describe(c->p[c->i], d), what);
}

int jsonscan_init(struct jsonscan *s, const char *pointer)
{
	memset(s, 0, sizeof(*s));
	buf_init(&s->key, 0);
	buf_init(&s->elem, 0);
	buf_init(&s->err, 0);
	s->pointer = xstrdup(pointer);
	s->state = ST_VALUE;
	if (jsonscan_parse_pointer(s, pointer) < 0) {
		buf_addf(&s->err, "malformed JSON pointer '%s'", pointer);
		s->failed = 1;
		errno = EINVAL;
		return -1;
	}
	return 0;
}

void jsonscan_release(struct jsonscan *s)
{
	size_t k;

	for (k = 0; k < s->ntok; k++)
		free(s->tok[k].name);
	free(s->tok);
	free(s->index);
	free(s->pointer);
	buf_release(&s->key);
	buf_release(&s->elem);
	buf_release(&s->err);
	memset(s, 0, sizeof(*s));
}

uint64_t jsonscan_count(const struct jsonscan *s)
{
	return s->count;
}

/* ---- following the pointer ---- */

/* Does the pointer still care about the members at this level? */
static int level_on_path(const struct jsonscan *s)
{
	return s->target == TARGET_UNSEEN && s->depth <= s->ntok &&
	       s->match + 1 >= s->depth;
}

/* A value starts directly in the array at the current level. */
static void array_member(struct jsonscan *s)
{
	unsigned d = s->depth;

	if (!level_on_path(s))
		return;
	s->match = s->index[d] == s->tok[d - 1].index ? d : d - 1;
	s->index[d]++;
}

static void key_start(struct chunk *c)
{
	struct jsonscan *s = c->s;

	s->in_key = 1;
	s->str_start = s->offset + c->i;
	s->state = ST_STRING;
	s->key_wanted = level_on_path(s);
	if (s->key_wanted) {
		s->match = s->depth - 1;
		s->key_from = c->i + 1;
		buf_reset(&s->key);
	}
	c->i++;
}

static void key_end(struct chunk *c, size_t quote)
{
	struct jsonscan *s = c->s;

	s->in_key = 0;
	s->state = ST_COLON;
	if (!s->key_wanted)
		return;
	s->key_wanted = 0;
	buf_add(&s->key, c->p + s->key_from, quote - s->key_from);
	if (jsonscan_name_matches(s))
		s->match = s->depth;
}

/* ---- values ---- */

static int emit(struct chunk *c, size_t end)
{
	struct jsonscan *s = c->s;
	const char *text = (const char *)c->p + s->elem_from;
	size_t len = end - s->elem_from;

	s->in_elem = 0;
	if (s->elem.len) {
		/* It began in an earlier chunk. */
		buf_add(&s->elem, text, len);
		text = s->elem.ptr, len = s->elem.len;
	}
	s->count++;
	if (c->fn && c->fn(c->ctx, text, len) < 0)
		return fail(c, end, "element handler stopped the scan");
	buf_reset(&s->elem);
	return 0;
}

static int end_value(struct chunk *c, size_t end)
{
	struct jsonscan *s = c->s;

	s->state = ST_AFTER;
	if (s->in_elem && s->depth == s->target_depth)
		return emit(c, end);
	return 0;
}

static const char *kind_of(unsigned b)
{
	switch (b) {
	case '{': return "an object";
	case '"': return "a string";
	case 't': case 'f': return "a boolean";
	case 'n': return "null";
	}
	return "a number";
}

/* The value starting with byte b is at the pointer, or in the target array. */
static int note_value(struct chunk *c, unsigned b)
{
	struct jsonscan *s = c->s;

	if (s->target == TARGET_UNSEEN && s->match == s->depth &&
	    s->depth == s->ntok) {
		if (b != '[')
			return fail(c, c->i, "value at '%s' is %s, not an array",
				    s->pointer, kind_of(b));
		s->target = TARGET_OPEN;
		s->target_depth = s->depth + 1;
	} else if (s->target == TARGET_OPEN && s->depth == s->target_depth) {
		s->in_elem = 1;
		s->elem_from = c->i;
		buf_reset(&s->elem);
	}
	return 0;
}

static int open_container(struct chunk *c, unsigned b)
{
	struct jsonscan *s = c->s;

	if (s->depth >= JSON_MAX_DEPTH)
		return fail(c, c->i, JSON_TOO_DEEP);
	s->close[s->depth++] = b == '[' ? ']' : '}';
	if (b == '[' && s->depth <= s->ntok)
		s->index[s->depth] = 0;
	s->state = b == '[' ? ST_ARRAY_FIRST : ST_OBJECT_FIRST;
	return 0;
}

static int close_container(struct chunk *c)
{
	struct jsonscan *s = c->s;

	s->depth--;
	if (s->match > s->depth)
		s->match = s->depth;
	if (s->target == TARGET_OPEN && s->depth + 1 == s->target_depth)
		s->target = TARGET_READ;
	c->i++;
	return end_value(c, c->i);
}

/* The state a value starting with b begins in, or -1. */
static int value_state(unsigned b)
{
	switch (b) {
	case '{': return ST_OBJECT_FIRST;
	case '[': return ST_ARRAY_FIRST;
	case '"': return ST_STRING;
	case 't': case 'f': case 'n': return ST_LITERAL;
	}
	return b == '-' || jsonlex_is_digit(b) ? ST_NUMBER : -1;
}

static int begin_value(struct chunk *c)
{
	struct jsonscan *s = c->s;
	unsigned b = c->p[c->i];
	int next = value_state(b);
	const char *why;

	if (next < 0)
		return fail_unexpected(c, "value expected");
	if (note_value(c, b) < 0)
		return -1;
	if (next == ST_OBJECT_FIRST || next == ST_ARRAY_FIRST) {
		if (open_container(c, b) < 0)
			return -1;
	} else if (next == ST_STRING) {
		s->in_key = 0;
		s->str_start = s->offset + c->i;
	} else if (next == ST_LITERAL) {
		s->literal = jsonlex_literal(b);
		s->lit_pos = 1;
	} else if (next == ST_NUMBER) {
		s->num = jsonlex_num_step(JSONLEX_NUM_START, b, &why);
	}
	if (next != ST_OBJECT_FIRST && next != ST_ARRAY_FIRST)
		s->state = next;
	c->i++;
	return 0;
}

/* ---- states ---- */

/* Skip whitespace: 1 if a byte follows in this chunk, else 0. */
static int skip_ws(struct chunk *c)
{
	while (c->i < c->n && jsonlex_space[c->p[c->i]])
		c->i++;
	return c->i < c->n;
}

static int st_value(struct chunk *c)
{
	return skip_ws(c) ? begin_value(c) : 0;
}

static int st_array(struct chunk *c)
{
	if (!skip_ws(c))
		return 0;
	if (c->p[c->i] == ']') {
		if (c->s->state == ST_ARRAY_NEXT)
			return fail(c, c->i, "trailing comma before ']'");
		return close_container(c);
	}
	array_member(c->s);
	return begin_value(c);
}

static int st_object(struct chunk *c)
{
	if (!skip_ws(c))
		return 0;
	if (c->p[c->i] == '}') {
		if (c->s->state == ST_OBJECT_NEXT)
			return fail(c, c->i, "trailing comma before '}'");
		return close_container(c);
	}
	if (c->p[c->i] != '"')
		return fail_unexpected(c, "string key expected");
	key_start(c);
	return 0;
}

static int st_colon(struct chunk *c)
{
	if (!skip_ws(c))
		return 0;
	if (c->p[c->i] != ':')
		return fail_unexpected(c, "':' expected");
	c->s->state = ST_VALUE;
	c->i++;
	return 0;
}

static int st_after(struct chunk *c)
{
	struct jsonscan *s = c->s;
	char d[16], close;

	if (!skip_ws(c))
		return 0;
	if (!s->depth)
		return fail(c, c->i, "unexpected %s after the JSON value",
			    jsonlex_describe(c->p[c->i], d));
	close = s->close[s->depth - 1];
	if (c->p[c->i] == ',') {
		s->state = close == ']' ? ST_ARRAY_NEXT : ST_OBJECT_NEXT;
		c->i++;
		return 0;
	}
	if (c->p[c->i] == (unsigned char)close)
		return close_container(c);
	return fail_unexpected(c, close == ']' ? "',' or ']' expected"
					       : "',' or '}' expected");
}

static int st_utf8(struct chunk *c)
{
	struct jsonscan *s = c->s;
	unsigned b = c->p[c->i];

	if (b < s->u8_lo || b > s->u8_hi)
		return fail_at(s, s->u8_start, "invalid UTF-8 in string");
	s->u8_lo = 0x80, s->u8_hi = 0xbf;
	if (!--s->pending)
		s->state = ST_STRING;
	c->i++;
	return 0;
}

/* A byte of a string that is not plain ASCII. */
static int string_special(struct chunk *c, size_t i)
{
	struct jsonscan *s = c->s;
	unsigned b = c->p[i];

	c->i = i + 1;
	if (b == '\\') {
		s->esc_start = s->offset + i;
		s->state = ST_ESCAPE;
		return 0;
	}
	if (b < 0x20)
		return fail(c, i, "unescaped control character 0x%02x in string", b);
	s->u8_start = s->offset + i;
	s->pending = utf8_lead(b, &s->u8_lo, &s->u8_hi);
	if (!s->pending)
		return fail(c, i, "invalid UTF-8 in string");
	s->state = ST_UTF8;
	/* Most characters are whole in the chunk: check them here. */
	while (s->state == ST_UTF8 && c->i < c->n)
		if (st_utf8(c) < 0)
			return -1;
	return 0;
}

static int st_string(struct chunk *c)
{
	const unsigned char *p = c->p;
	size_t i = c->i, n = c->n;

	for (;;) {
		while (i < n && jsonlex_plain[p[i]])
			i++;
		if (i >= n) {
			c->i = n;
			return 0;
		}
		if (p[i] == '"')
			break;
		if (string_special(c, i) < 0)
			return -1;
		if (c->s->state != ST_STRING)
			return 0;
		i = c->i;
	}
	c->i = i + 1;
	if (c->s->in_key) {
		key_end(c, i);
		return 0;
	}
	return end_value(c, i + 1);
}

static int st_escape(struct chunk *c)
{
	struct jsonscan *s = c->s;
	unsigned b = c->p[c->i];
	char d[16];

	if (b == 'u') {
		s->state = ST_HEX;
		s->pending = 4;
	} else if (b && strchr("\"\\/bfnrt", (int)b)) {
		s->state = ST_STRING;
	} else if (b >= 0x20 && b < 0x7f) {
		return fail_at(s, s->esc_start, "invalid escape '\\%c'", (char)b);
	} else {
		return fail_at(s, s->esc_start, "invalid escape: %s after '\\'",
			       jsonlex_describe(b, d));
	}
	c->i++;
	return 0;
}

static int st_hex(struct chunk *c)
{
	struct jsonscan *s = c->s;

	if (!jsonlex_is_hex(c->p[c->i]))
		return fail_at(s, s->esc_start, "invalid \\u escape");
	if (!--s->pending)
		s->state = ST_STRING;
	c->i++;
	return 0;
}

static int st_number(struct chunk *c)
{
	struct jsonscan *s = c->s;
	const char *why = NULL;
	int next;

	while (c->i < c->n) {
		if (jsonlex_num_in_digits(s->num))
			while (c->i < c->n && jsonlex_is_digit(c->p[c->i]))
				c->i++;
		if (c->i >= c->n)
			return 0;
		next = jsonlex_num_step(s->num, c->p[c->i], &why);
		if (next < 0)
			return fail(c, c->i, "%s", why);
		if (next == 0)
			return end_value(c, c->i);
		s->num = next;
		c->i++;
	}
	return 0;
}

static int st_literal(struct chunk *c)
{
	struct jsonscan *s = c->s;
	unsigned b = c->p[c->i];
	char d[16];

	if (b != (unsigned char)s->literal[s->lit_pos])
		return fail(c, c->i, "unexpected %s, '%s' expected", jsonlex_describe(b, d),
			    s->literal);
	c->i++;
	if (s->literal[++s->lit_pos])
		return 0;
	return end_value(c, c->i);
}

static int step(struct chunk *c)
{
	switch (c->s->state) {
	case ST_VALUE: return st_value(c);
	case ST_ARRAY_FIRST: case ST_ARRAY_NEXT: return st_array(c);
	case ST_OBJECT_FIRST: case ST_OBJECT_NEXT: return st_object(c);
	case ST_COLON: return st_colon(c);
	case ST_AFTER: return st_after(c);
	case ST_STRING: return st_string(c);
	case ST_ESCAPE: return st_escape(c);
	case ST_HEX: return st_hex(c);
	case ST_UTF8: return st_utf8(c);
	case ST_LITERAL: return st_literal(c);
	default: return st_number(c);
	}
}

/* Keep the part of the element (or member name) that goes on next chunk. */
static void save_partial(struct chunk *c)
{
	struct jsonscan *s = c->s;

	if (s->in_elem) {
		buf_add(&s->elem, c->p + s->elem_from, c->n - s->elem_from);
		s->elem_from = 0;
	}
	if (s->key_wanted) {
		buf_add(&s->key, c->p + s->key_from, c->n - s->key_from);
		s->key_from = 0;
	}
}

int jsonscan_feed(struct jsonscan *s, const char *p, size_t n,
		  jsonscan_fn fn, void *ctx)
{
	struct chunk c = { s, (const unsigned char *)p, n, 0, fn, ctx };

	if (s->failed)
		return -1;
	while (c.i < c.n)
		if (step(&c) < 0)
			return -1;
	save_partial(&c);
	s->offset += n;
	return 0;
}

/* Where the input ends: is the document complete? */
static int check_end(struct jsonscan *s)
{
	const char *why;

	switch (s->state) {
	case ST_STRING: case ST_ESCAPE: case ST_HEX: case ST_UTF8:
		return fail_at(s, s->offset, "unterminated string (opened at offset %llu)",
			       (unsigned long long)s->str_start);
	case ST_NUMBER:
		if ((why = jsonlex_num_end(s->num)))
			return fail_at(s, s->offset, "%s", why);
		if (!s->depth)
			return 0;	/* a number is the whole document */
		break;
	case ST_VALUE:
		if (!s->depth)
			return fail_at(s, s->offset, "empty document");
		break;
	case ST_AFTER:
		if (!s->depth)
			return 0;
		break;
	}
	return fail_at(s, s->offset, "unexpected end of input");
}

int jsonscan_finish(struct jsonscan *s)
{
	if (s->failed || check_end(s) < 0)
		return -1;
	if (s->target == TARGET_UNSEEN) {
		buf_reset(&s->err);
		buf_addf(&s->err, "no value at '%s'", s->pointer);
		s->failed = 1;
		return -1;
	}
	return 0;
}
