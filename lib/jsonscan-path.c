/*
 * jsonscan-path: the JSON Pointer a scan follows: its reference tokens,
 * unescaped once, and whether a member name is the one for its level.
 */
#include "jsonscan-parts.h"

#include <stdlib.h>
#include <string.h>

#include "utf8.h"

static uint64_t token_index(const char *t, size_t len)
{
	uint64_t v = 0;
	size_t k;

	if (!len || (len > 1 && t[0] == '0'))
		return UINT64_MAX;
	for (k = 0; k < len; k++) {
		if (!jsonlex_is_digit((unsigned char)t[k]) || v > (UINT64_MAX - 10) / 10)
			return UINT64_MAX;
		v = v * 10 + (uint64_t)(t[k] - '0');
	}
	return v;
}

/* One reference token from p up to the next '/' or the end, unescaped. */
static int add_token(struct jsonscan *s, const char *p, size_t len)
{
	struct jsonscan_token *t = &s->tok[s->ntok++];
	size_t k, w = 0;

	t->name = xmalloc(len + 1);
	for (k = 0; k < len; k++) {
		if (p[k] != '~') {
			t->name[w++] = p[k];
		} else if (k + 1 < len && (p[k + 1] == '0' || p[k + 1] == '1')) {
			t->name[w++] = p[++k] == '0' ? '~' : '/';
		} else {
			return -1;
		}
	}
	t->name[w] = '\0';
	t->len = w;
	t->index = token_index(t->name, w);
	return 0;
}

int jsonscan_parse_pointer(struct jsonscan *s, const char *pointer)
{
	const char *p = pointer, *slash;
	size_t count = 0;

	if (*p && *p != '/')
		return -1;
	for (slash = p; (slash = strchr(slash, '/')); slash++)
		count++;
	s->tok = xmalloc((count ? count : 1) * sizeof(*s->tok));
	s->index = xmalloc((count + 1) * sizeof(*s->index));
	while (*p) {
		const char *end = strchr(p + 1, '/');

		if (!end)
			end = p + strlen(p);
		if (add_token(s, p + 1, (size_t)(end - p - 1)) < 0)
			return -1;
		p = end;
	}
	return 0;
}

/* Decode a (valid) member name in place; its new length. */
static size_t decode_name(char *k, size_t n)
{
	size_t r = 0, w = 0, len;
	uint32_t cp;

	while (r < n) {
		if (k[r] != '\\') {
			k[w++] = k[r++];
			continue;
		}
		/* No longer than its escape: the name shrinks in place. */
		len = jsonlex_unescape((unsigned char *)k + r, n - r, &cp);
		r += len;
		w += utf8_encode(cp, k + w);
	}
	return w;
}

int jsonscan_name_matches(struct jsonscan *s)
{
	const struct jsonscan_token *t = &s->tok[s->depth - 1];
	size_t len = decode_name(s->key.ptr, s->key.len);

	return len == t->len && !memcmp(s->key.ptr, t->name, len);
}
