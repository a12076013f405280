/* splitter-text: text bodies cut into lines as they stream in, or into
 * the pieces between matches of a delimiter. */
#include "splitter-parts.h"

#include <string.h>

static int text_context_headers(struct sink *k, const char *p, size_t n,
				struct buf *err)
{
	xmlDocPtr doc;
	int status;

	if (!k->s->cfg.nheaders || k->gcount)
		return 0;
	expr_env_bind_as(k->s->env, k->parent, p, n, BODY_TEXT);
	doc = expr_env_doc(k->s->env, err, &status);
	return doc ? sink_item_headers(k, doc->children, err) : status;
}

static int text_item(struct sink *k, const char *p, size_t n, struct buf *err)
{
	int r = text_context_headers(k, p, n, err);

	if (r < 0)
		return r;
	return sink_add_item(k, p, n, "text/plain", "\n");
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
	return sink_add_item_after(k, p, n, "text/plain", sep, sep_len);
}

/* Pieces between matches of the delimiter (body held whole). */
int split_regex(struct splitter *s, struct sink *k, const char *body,
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
int split_lines(struct sink *k, struct body_source *src, struct buf *err,
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
