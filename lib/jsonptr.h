/*
 * jsonptr: find the value at an RFC 6901 JSON Pointer in JSON text without
 * building a tree, for json() in expressions: routing by one field of a
 * small JSON message should cost a scan, not a parse into a document.
 * Only what lies on the way to the value is looked at closely; the values
 * skipped over are checked for balance and well-formed strings only.
 * Nesting is limited in all the text read as in every JSON reader
 * (JSON_MAX_DEPTH), so json() refuses what the mapping refuses.
 */
#ifndef MSG_JSONPTR_H
#define MSG_JSONPTR_H

#include <stddef.h>

#include "buf.h"

enum json_type {
	JSON_T_STRING,
	JSON_T_NUMBER,
	JSON_T_TRUE,
	JSON_T_FALSE,
	JSON_T_NULL,
	JSON_T_OBJECT,
	JSON_T_ARRAY,
};

struct json_span {
	const char *p;		/* the value's text, from its first byte */
	size_t n;
	enum json_type type;
};

/* 1 and the span when found, 0 when nothing is at pointer, -1 when the
 * text is not JSON where it was read (reason in err). */
int jsonptr_find(const char *text, size_t n, const char *pointer,
		 struct json_span *out, struct buf *err);
/* The reference token of a pointer that starts at ptr (after its '/'),
 * unescaped (~1 '/', ~0 '~') into tok; returns where the next one's '/'
 * is, or the end. */
const char *jsonptr_token(const char *ptr, struct buf *tok);
/* The decoded UTF-8 of a string span (quotes included in the span). */
int jsonptr_string(const struct json_span *v, struct buf *out);
/* The span's text without whitespace outside strings (compact JSON). */
void jsonptr_compact(const struct json_span *v, struct buf *out);

#endif
