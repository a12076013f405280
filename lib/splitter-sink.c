/* splitter-sink: the children of one parent, made from its items, each
 * stamped with its place in the sequence. */
#include "splitter-parts.h"

#include <errno.h>
#include <string.h>

#include "message.h"
#include "xmlout.h"

void sink_init(struct sink *k, struct splitter *s, struct frame_writer *out,
	       const struct headers *parent)
{
	const char *id = headers_get(parent, "Message-Id");
	const char *num = headers_get(parent, "Sequence-Number");

	memset(k, 0, sizeof(*k));
	k->s = s;
	k->out = out;
	k->parent = parent;
	buf_init(&k->stack, 0);
	buf_init(&k->root, 0);
	buf_init(&k->too_big, 0);
	buf_init(&k->gbody, 0);
	buf_init(&k->gwrap_open, 0);
	buf_init(&k->gwrap_close, 0);
	buf_init(&k->pend_body, 0);
	headers_init(&k->gheaders);
	headers_init(&k->pend_h);
	/* Children point at their parent; a parent without an id gets one. */
	if (id && *id && strlen(id) < sizeof(k->parent_id))
		strcpy(k->parent_id, id);
	else
		id_new(k->parent_id);
	/* A nested split saves the parent's own place in its sequence. */
	if (num && *num) {
		const char *corr = headers_get(parent, "Correlation-Id");
		const char *size = headers_get(parent, "Sequence-Size");
		const char *old = headers_get(parent, "Sequence-Stack");
		if (old && *old)
			buf_addf(&k->stack, "%s, ", old);
		buf_addf(&k->stack, "%s %s %s", corr && *corr ? corr : "-", num,
			 size && *size ? size : "-");
	}
}

/*
 * An aggregate of the children wraps them in an element of its own
 * naming; Sequence-Root gives it the parent's document element as it
 * was, attributes and all, one start tag a level, innermost last (no
 * tag has a '<' but its first). A level whose element is bare, with
 * none above, is left out: the aggregate's own is the same.
 */
void sink_set_root(struct sink *k, xmlNodePtr root)
{
	const char *outer = headers_get(k->parent, "Sequence-Root");

	if (!root || !((outer && *outer) || root->properties || root->nsDef))
		return;
	buf_reset(&k->root);
	if (outer)
		buf_addstr(&k->root, outer);
	xmlout_start_tag(root, &k->root);
}

void sink_release(struct sink *k)
{
	buf_release(&k->stack);
	buf_release(&k->root);
	buf_release(&k->too_big);
	buf_release(&k->gbody);
	buf_release(&k->gwrap_open);
	buf_release(&k->gwrap_close);
	buf_release(&k->pend_body);
	headers_release(&k->gheaders);
	headers_release(&k->pend_h);
}

static int write_child(struct sink *k, const struct headers *h, const char *body,
		       size_t len)
{
	if (frame_writer_write(k->out, h, body, len) < 0) {
		/* Too big is the parent's fault (--header values), not
		 * the output's. */
		if (errno == EMSGSIZE)
			frame_header_too_big(&k->too_big, h, len);
		else
			k->write_failed = 1;
		return -1;
	}
	k->written++;
	return 0;
}

static void child_headers(struct sink *k, struct headers *h, const char *type)
{
	headers_copy(h, k->parent);
	headers_remove(h, "Content-Length");
	headers_remove(h, "Sequence-Size");
	headers_remove(h, "Sequence-End");
	message_stamp(h);
	headers_set(h, "Correlation-Id", k->parent_id);
	headers_set_u64(h, "Sequence-Number", k->made);
	if (k->stack.len)
		headers_set(h, "Sequence-Stack", k->stack.ptr);
	else
		headers_remove(h, "Sequence-Stack");
	if (k->root.len)
		headers_set(h, "Sequence-Root", k->root.ptr);
	headers_set(h, "Content-Type", type);
	for (size_t i = 0; i < headers_count(&k->gheaders); i++) {
		size_t nl, vl;
		const char *n = headers_name(&k->gheaders, i, &nl);
		const char *v = headers_value(&k->gheaders, i, &vl);
		headers_setn(h, n, v, vl);
	}
}

/* Close the group being filled into a child; hold it back or write it. */
static int make_child(struct sink *k)
{
	struct buf *body = &k->gbody;

	if (!k->gcount)
		return 0;
	if (k->gwrap_open.len || k->gwrap_close.len) {
		struct buf wrapped = BUF_INIT;
		buf_add(&wrapped, k->gwrap_open.ptr, k->gwrap_open.len);
		buf_add(&wrapped, body->ptr, body->len);
		buf_add(&wrapped, k->gwrap_close.ptr, k->gwrap_close.len);
		buf_reset(body);
		buf_add(body, wrapped.ptr, wrapped.len);
		buf_release(&wrapped);
	}
	k->made++;
	if (k->size_known) {
		struct headers h = HEADERS_INIT;
		int r;
		child_headers(k, &h, k->gtype);
		headers_set_u64(&h, "Sequence-Size", k->total);
		if (k->made == k->total)
			headers_set(&h, "Sequence-End", "true");
		r = write_child(k, &h, body->ptr, body->len);
		headers_release(&h);
		if (r < 0)
			return -1;
	} else {
		if (k->pending &&
		    write_child(k, &k->pend_h, k->pend_body.ptr, k->pend_body.len) < 0)
			return -1;
		child_headers(k, &k->pend_h, k->gtype);
		buf_reset(&k->pend_body);
		buf_add(&k->pend_body, body->ptr, body->len);
		k->pending = 1;
	}
	buf_reset(body);
	k->gcount = 0;
	headers_reset(&k->gheaders);
	return 0;
}

/* The last child learns the size of the sequence it ends. */
int sink_finish(struct sink *k)
{
	if (make_child(k) < 0)
		return -1;
	if (k->pending) {
		headers_set_u64(&k->pend_h, "Sequence-Size", k->made);
		headers_set(&k->pend_h, "Sequence-End", "true");
		k->pending = 0;
		return write_child(k, &k->pend_h, k->pend_body.ptr, k->pend_body.len);
	}
	return 0;
}

/* A split that found nothing still ends a sequence, so that an
 * aggregator downstream completes instead of waiting for ever. */
int sink_write_marker(struct sink *k)
{
	struct headers h = HEADERS_INIT;
	const char *type = headers_get(k->parent, "Content-Type");
	int r;

	headers_copy(&h, k->parent);
	headers_remove(&h, "Content-Length");
	headers_remove(&h, "Sequence-Number");
	message_stamp(&h);
	headers_set(&h, "Correlation-Id", k->parent_id);
	headers_set(&h, "Sequence-Size", "0");
	headers_set(&h, "Sequence-End", "true");
	if (k->stack.len)
		headers_set(&h, "Sequence-Stack", k->stack.ptr);
	if (k->root.len)
		headers_set(&h, "Sequence-Root", k->root.ptr);
	if (!type)
		headers_set(&h, "Content-Type", "text/plain");
	r = write_child(k, &h, "", 0);
	headers_release(&h);
	return r;
}

/* ---- items ---- */

/* --header values are taken from the first item of each child. */
int sink_item_headers(struct sink *k, xmlNodePtr context, struct buf *err)
{
	struct buf v = BUF_INIT;
	int r;

	for (size_t i = 0; i < k->s->cfg.nheaders; i++) {
		if ((r = expr_string_at(k->s->hexpr[i], k->s->env, context, &v, err)) < 0) {
			buf_release(&v);
			return r;
		}
		headers_set(&k->gheaders, k->s->cfg.headers[i].name, v.ptr);
	}
	buf_release(&v);
	return 0;
}

/* An item into the child being made; with -g, after sep_len bytes of sep
 * when it is not the child's first. */
int sink_add_item_after(struct sink *k, const char *p, size_t n, const char *type,
			const char *sep, size_t sep_len)
{
	if (k->gcount)
		buf_add(&k->gbody, sep, sep_len);
	buf_add(&k->gbody, p, n);
	k->gtype = type;
	if (++k->gcount >= k->s->cfg.group)
		return make_child(k);
	return 0;
}

int sink_add_item(struct sink *k, const char *p, size_t n, const char *type,
		  const char *separator)
{
	return sink_add_item_after(k, p, n, type, separator ? separator : "",
				   separator ? strlen(separator) : 0);
}
