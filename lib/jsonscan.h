/*
 * jsonscan: an incremental JSON scanner that finds the array at an
 * RFC 6901 JSON Pointer in a document fed in chunks and hands out the
 * exact source text of each of its elements, one at a time.
 *
 * struct jsonscan owns the pointer's tokens, the syntax state (a stack of
 * open containers, at most JSON_MAX_DEPTH deep), the text of the
 * element being read (only when it spans chunks) and the error text.
 * Memory is bounded by the largest element, whatever the document's size.
 * The whole document is validated with the rules of jsonxml_parse (RFC
 * 8259, UTF-8 strings, same messages), so malformed JSON anywhere is
 * reported with its byte offset, even after the array has been read.
 *
 * Should a member name occur twice on the way, the first match is the one
 * that counts (the document is never held, so later ones cannot win).
 */
#ifndef MSG_JSONSCAN_H
#define MSG_JSONSCAN_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "jsonlex.h"


/* Called with each element's text; return -1 to stop the scan. */
typedef int (*jsonscan_fn)(void *ctx, const char *text, size_t n);

struct jsonscan_token {
	char *name;		/* unescaped member name */
	size_t len;
	uint64_t index;		/* as an array index, UINT64_MAX if not one */
};

struct jsonscan {
	char *pointer;		/* as given, for messages */
	struct jsonscan_token *tok;
	size_t ntok;
	uint64_t *index;	/* index of the current element, levels 1..ntok */

	int state;		/* what the next byte may be (jsonscan.c) */
	unsigned depth;		/* open containers */
	char close[JSON_MAX_DEPTH];	/* ']' or '}' for each */
	int in_key;		/* the string being read is a member name */
	const char *literal;	/* true/false/null being matched */
	unsigned lit_pos;
	int num;		/* the number's state (enum jsonlex_num) */
	unsigned pending;	/* hex digits or UTF-8 bytes still due */
	unsigned char u8_lo, u8_hi;	/* range of the next UTF-8 byte */
	uint64_t offset;	/* bytes fed before the current chunk */
	uint64_t str_start, esc_start, u8_start;	/* for messages */

	unsigned match;		/* leading levels on the pointer's path */
	int key_wanted;		/* collecting the member name to compare */
	size_t key_from;	/* where the name's bytes start in the chunk */
	struct buf key;

	int target;		/* not seen yet, open, or read (jsonscan.c) */
	unsigned target_depth;	/* depth of the target array's elements */
	int in_elem;
	size_t elem_from;	/* where the element starts in the chunk */
	struct buf elem;	/* its earlier part, when it spans chunks */
	uint64_t count;

	int failed;
	struct buf err;		/* "offset N: reason" */
};

/*
 * pointer: "" for the whole document, "/orders", "/a/0/items", with ~0 and
 * ~1 escapes. 0, or -1 (EINVAL, reason in s->err) if it is malformed;
 * release s either way.
 */
int jsonscan_init(struct jsonscan *s, const char *pointer);
void jsonscan_release(struct jsonscan *s);

/*
 * Feed the next chunk. fn is called for each complete element of the
 * target array with its text from first to last byte (valid during the
 * call only). 0, or -1 with "offset N: reason" in s->err: malformed JSON,
 * the value at the pointer is not an array (reported as soon as it
 * starts), or fn returned -1. After -1, every call fails the same way.
 */
int jsonscan_feed(struct jsonscan *s, const char *p, size_t n,
		  jsonscan_fn fn, void *ctx);

/*
 * At end of input: 0, or -1 with a reason in s->err if the document is
 * incomplete or there is no value at the pointer ("no value at '/orders'").
 */
int jsonscan_finish(struct jsonscan *s);

/* How many elements were handed out so far. */
uint64_t jsonscan_count(const struct jsonscan *s);

#endif
