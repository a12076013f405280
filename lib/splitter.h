/*
 * splitter: the Splitter pattern (msg-split(1)). One parent message in,
 * its children out: items selected by an XPath expression (XML, or JSON
 * through the mapping), the elements of a JSON array at a pointer, lines,
 * or pieces between matches of a regular expression; optionally grouped
 * N to a child. Each child carries the parent's headers plus its place in
 * the sequence (Correlation-Id, Sequence-Number, Sequence-Size,
 * Sequence-End, Sequence-Stack for nested splits).
 *
 * Large bodies are split as they stream in, in bounded memory: XML when
 * the expression is a plain path that libxml2's pattern module can match
 * while reading, JSON arrays with -j, and lines. Then the count is known
 * only at the end, so Sequence-Size goes on the last child only.
 */
#ifndef MSG_SPLITTER_H
#define MSG_SPLITTER_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "expr.h"
#include "frame.h"
#include "header.h"

enum split_mode { SPLIT_XPATH, SPLIT_JSON, SPLIT_LINES, SPLIT_REGEX };
enum split_empty { EMPTY_MARKER, EMPTY_DROP, EMPTY_INVALID };

struct split_header {
	const char *name;
	const char *expr;	/* evaluated with the item as context node */
};

struct splitter;

/* Where a parent's body comes from, piece by piece (1, 0 at end, -1). */
struct body_source {
	int (*next)(void *arg, const char **p, size_t *n);
	void *arg;
	uint64_t length;	/* the whole body's length */
};

struct splitter_config {
	enum split_mode mode;
	const char *xpath;		/* SPLIT_XPATH */
	const char *pointer;		/* SPLIT_JSON */
	const char *regex;		/* SPLIT_REGEX */
	int keep_delimiter;
	size_t group;			/* items per child, >= 1 */
	enum split_empty empty;
	struct split_header *headers;	/* --header NAME=EXPR */
	size_t nheaders;
	int no_stream;			/* always build the DOM (tests) */
	int raw_documents;		/* parents are raw files (-r): with -x or
					 * -j an empty one is invalid, not empty */
	char **ns;
	size_t nns;
};

/* Compile what the configuration names: NULL with a usage error in err. */
struct splitter *splitter_new(const struct splitter_config *cfg, struct buf *err);
void splitter_free(struct splitter *s);
/* Will this parent be split while it streams (else its body is loaded)? */
int splitter_streams(const struct splitter *s);
/* Parents that had nothing to split (whatever --empty did with them). */
uint64_t splitter_empty_count(const struct splitter *s);

enum split_result {
	SPLIT_OK,
	SPLIT_INVALID,		/* the parent cannot be split: err says why */
	SPLIT_SOURCE_FAILED,	/* reading the body failed (framing, I/O) */
	SPLIT_WRITE_FAILED,	/* writing a child to out failed */
	SPLIT_INVALID_WRITE_FAILED,	/* diverting to invalid failed */
	SPLIT_NO_MEMORY,	/* libxml2 ran out of memory: err says where; the
				 * parent is not at fault and is not diverted */
	/* The temporary copy of a streamed parent, kept for the invalid
	 * writer, failed: err names the step, errno says why. */
	SPLIT_TEMP_CREATE_FAILED,	/* it could not be created */
	SPLIT_TEMP_IO_FAILED,		/* written or read back */
};

/*
 * Split one parent, reading its body from src. Children go to out. When
 * the parent cannot be split, the result is SPLIT_INVALID with the reason
 * in err (which counts the children already written, if any); with an
 * invalid writer the parent, whole and with an Error header, is written
 * there (a streamed body is kept in a temporary file for that).
 */
enum split_result splitter_run(struct splitter *s, struct headers *parent,
			       struct body_source *src, struct frame_writer *out,
			       struct frame_writer *invalid, uint64_t *written,
			       struct buf *err);

#endif
