/*
 * splitter-parts: what the parts of the Splitter share and no tool sees.
 * The compiled configuration; the sink, which makes the children of one
 * parent from its items and stamps their place in the sequence
 * (splitter-sink.c); and the ways a body is cut into items: XML, whole
 * or streamed (splitter-xml.c), JSON arrays as they stream
 * (splitter-json.c), lines and delimiters (splitter-text.c).
 */
#ifndef MSG_SPLITTER_PARTS_H
#define MSG_SPLITTER_PARTS_H

#include <libxml/tree.h>
#include <regex.h>

#include "id.h"
#include "splitter.h"

struct splitter {
	struct splitter_config cfg;
	struct expr_env *env;
	struct expr *xpath;
	int stream_xml;		/* cfg.xpath is a plain path: stream it */
	regex_t re;
	int have_re;
	struct expr **hexpr;	/* compiled --header expressions */
	uint64_t empty;
};

/* The children of one parent, as its items come. */
struct sink {
	struct splitter *s;
	struct frame_writer *out;
	const struct headers *parent;
	char parent_id[UUID_STR_LEN + 1 + 64];
	struct buf stack;	/* Sequence-Stack for the children, or empty */
	struct buf root;	/* Sequence-Root for the children, or empty */
	int size_known;
	uint64_t total;		/* children, when size_known */
	uint64_t made;		/* children built so far */
	uint64_t written;
	/* the child being filled with items (-g) */
	struct buf gbody;
	size_t gcount;
	struct headers gheaders;	/* --header values of its first item */
	const char *gtype;
	struct buf gwrap_open, gwrap_close;
	/* a built child held back until we know whether it is the last */
	struct headers pend_h;
	struct buf pend_body;
	int pending;
	int write_failed;
	struct buf too_big;	/* why a child's header block would not fit */
};


void sink_init(struct sink *k, struct splitter *s, struct frame_writer *out,
	       const struct headers *parent);
void sink_release(struct sink *k);
/* The parent is an XML document whose document element is root: its
 * start tag goes onto the children's Sequence-Root when it has
 * attributes or namespace declarations, or the parent has one. */
void sink_set_root(struct sink *k, xmlNodePtr root);
/* --header values, from the context of the first item of each child. */
int sink_item_headers(struct sink *k, xmlNodePtr context, struct buf *err);
/* An item into the child being made, after the separator (NULL: none)
 * when it is not the child's first. */
int sink_add_item(struct sink *k, const char *p, size_t n, const char *type,
		  const char *separator);
/* The same with a separator of sep_len bytes, which may hold NUL. */
int sink_add_item_after(struct sink *k, const char *p, size_t n, const char *type,
			const char *sep, size_t sep_len);
/* The last child learns the size of the sequence it ends. */
int sink_finish(struct sink *k);
/* The end of an empty sequence, for a parent that had nothing to split. */
int sink_write_marker(struct sink *k);

/*
 * The ways of cutting a body: 0, or -1 (MSG_NO_MEMORY when libxml2 ran
 * out) with why in err; *source_failed when reading the body failed.
 */
int split_dom(struct splitter *s, struct sink *k, const char *body, size_t len,
	      struct buf *err);
int split_xml_stream(struct splitter *s, struct sink *k, struct body_source *src,
		     struct buf *err, int *source_failed);
int split_json(struct splitter *s, struct sink *k, struct body_source *src,
	       struct buf *err, int *source_failed);
int split_lines(struct sink *k, struct body_source *src, struct buf *err,
		int *source_failed);
int split_regex(struct splitter *s, struct sink *k, const char *body, size_t len,
		struct buf *err);
/* A node of the JSON mapping as an item: its JSON text. */
int json_node_item(struct sink *k, xmlNodePtr node, struct buf *err);

#endif
