/* amqp-map: headers to AMQP message properties and back (amqp-map.h). */
#include "amqp-map.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"

/* Properties are AMQP short strings, as are table keys. */
#define SHORTSTR_MAX 255
/* The longest expiration RabbitMQ takes (about 49 days): a later
 * Expires is left to the tools, which check it on every message. */
#define EXPIRATION_MAX_MS 4294967295LL

/* The headers that have a string property of their own, in the order a
 * message read back shows them. */
enum { PROP_MESSAGE_ID, PROP_CORRELATION_ID, PROP_REPLY_TO,
       PROP_CONTENT_TYPE, PROP_COUNT };
static const struct string_prop {
	const char *header;
	amqp_flags_t flag;
	size_t offset;
} string_props[PROP_COUNT] = {
	{ "Message-Id", AMQP_BASIC_MESSAGE_ID_FLAG,
	  offsetof(amqp_basic_properties_t, message_id) },
	{ "Correlation-Id", AMQP_BASIC_CORRELATION_ID_FLAG,
	  offsetof(amqp_basic_properties_t, correlation_id) },
	{ "Reply-To", AMQP_BASIC_REPLY_TO_FLAG,
	  offsetof(amqp_basic_properties_t, reply_to) },
	{ "Content-Type", AMQP_BASIC_CONTENT_TYPE_FLAG,
	  offsetof(amqp_basic_properties_t, content_type) },
};

static amqp_bytes_t *prop_field(amqp_basic_properties_t *p,
				const struct string_prop *sp)
{
	return (amqp_bytes_t *)((char *)p + sp->offset);
}

static const amqp_bytes_t *prop_field_const(const amqp_basic_properties_t *p,
					    const struct string_prop *sp)
{
	return (const amqp_bytes_t *)((const char *)p + sp->offset);
}

void mq_props_init(struct mq_props *mp)
{
	memset(mp, 0, sizeof(*mp));
}

void mq_props_release(struct mq_props *mp)
{
	free(mp->entries);
	memset(mp, 0, sizeof(*mp));
}

static amqp_bytes_t bytes_of(const char *p, size_t n)
{
	return (amqp_bytes_t){ .len = n, .bytes = (void *)p };
}

/* Set the string property for header name when it has one, is not set
 * yet and the value fits: 1, or 0 when the header goes to the table. */
static int take_string_prop(amqp_basic_properties_t *p, const char *name,
			    size_t nlen, const char *v, size_t vlen)
{
	for (int i = 0; i < PROP_COUNT; i++) {
		const struct string_prop *sp = &string_props[i];
		if (!header_name_eq(name, nlen, sp->header, strlen(sp->header)))
			continue;
		if ((p->_flags & sp->flag) || vlen > SHORTSTR_MAX)
			return 0;
		p->_flags |= sp->flag;
		*prop_field(p, sp) = bytes_of(v, vlen);
		return 1;
	}
	return 0;
}

/* Timestamp and Expires also set their properties, when they parse. */
static void set_time_props(struct mq_props *mp, const char *name, size_t nlen,
			   const char *v, int64_t now_ms)
{
	int64_t ms;

	if (timestamp_parse(v, &ms) < 0)
		return;
	if (header_name_eq(name, nlen, "Timestamp", 9) &&
	    !(mp->p._flags & AMQP_BASIC_TIMESTAMP_FLAG) && ms >= 0) {
		mp->p._flags |= AMQP_BASIC_TIMESTAMP_FLAG;
		mp->p.timestamp = (uint64_t)(ms / 1000);
	} else if (header_name_eq(name, nlen, "Expires", 7) &&
		   !(mp->p._flags & AMQP_BASIC_EXPIRATION_FLAG) &&
		   ms - now_ms <= EXPIRATION_MAX_MS) {
		snprintf(mp->expiration, sizeof(mp->expiration), "%" PRId64,
			 ms > now_ms ? ms - now_ms : 0);
		mp->p._flags |= AMQP_BASIC_EXPIRATION_FLAG;
		mp->p.expiration = amqp_cstring_bytes(mp->expiration);
	}
}

static void add_entry(struct mq_props *mp, const char *name, size_t nlen,
		      const char *v, size_t vlen)
{
	amqp_table_t *t = &mp->p.headers;
	amqp_table_entry_t *e;

	if ((size_t)t->num_entries == mp->alloc) {
		mp->alloc = mp->alloc ? 2 * mp->alloc : 16;
		mp->entries = xrealloc(mp->entries, mp->alloc * sizeof(*e));
		t->entries = mp->entries;
	}
	e = &mp->entries[t->num_entries++];
	e->key = bytes_of(name, nlen);
	e->value.kind = AMQP_FIELD_KIND_BYTES;
	e->value.value.bytes = bytes_of(v, vlen);
}

int mq_props_set(struct mq_props *mp, const struct headers *h, int64_t now_ms,
		 struct buf *why)
{
	amqp_basic_properties_t *p = &mp->p;

	memset(p, 0, sizeof(*p));
	p->_flags = AMQP_BASIC_DELIVERY_MODE_FLAG;
	p->delivery_mode = AMQP_DELIVERY_PERSISTENT;
	p->headers.entries = mp->entries;
	for (size_t i = 0; i < headers_count(h); i++) {
		size_t nlen, vlen;
		const char *name = headers_name(h, i, &nlen);
		const char *v = headers_value(h, i, &vlen);

		if (header_name_eq(name, nlen, "Content-Length", 14) ||
		    take_string_prop(p, name, nlen, v, vlen))
			continue;
		if (nlen > SHORTSTR_MAX) {
			buf_addf(why, "header '%.40s...' has a name over %d bytes, "
				 "too long for an AMQP message", name, SHORTSTR_MAX);
			errno = EMSGSIZE;
			return -1;
		}
		set_time_props(mp, name, nlen, v, now_ms);
		add_entry(mp, name, nlen, v, vlen);
	}
	/* No table at all for a message without other headers: the broker
	 * then has none to decode and keep with it. */
	if (p->headers.num_entries)
		p->_flags |= AMQP_BASIC_HEADERS_FLAG;
	return 0;
}

/* One header line; a CR, LF or NUL in a value from another publisher
 * becomes a space, as headers_add makes it. */
static void add_line(struct buf *out, const void *name, size_t nlen,
		     const void *v, size_t vlen)
{
	const char *s = v;

	buf_add(out, name, nlen);
	buf_add(out, ": ", 2);
	for (size_t i = 0; i < vlen; i++)
		buf_addch(out, s[i] == '\r' || s[i] == '\n' || !s[i] ? ' ' : s[i]);
	buf_addch(out, '\n');
}

/* A table value as header text: 0, or -1 for one that has none. */
static int field_text(const amqp_field_value_t *f, struct buf *text)
{
	buf_reset(text);
	switch (f->kind) {
	case AMQP_FIELD_KIND_UTF8:
	case AMQP_FIELD_KIND_BYTES:
		buf_add(text, f->value.bytes.bytes, f->value.bytes.len);
		return 0;
	case AMQP_FIELD_KIND_BOOLEAN:
		buf_addstr(text, f->value.boolean ? "true" : "false");
		return 0;
	case AMQP_FIELD_KIND_I8: buf_addf(text, "%d", f->value.i8); return 0;
	case AMQP_FIELD_KIND_U8: buf_addf(text, "%u", f->value.u8); return 0;
	case AMQP_FIELD_KIND_I16: buf_addf(text, "%d", f->value.i16); return 0;
	case AMQP_FIELD_KIND_U16: buf_addf(text, "%u", f->value.u16); return 0;
	case AMQP_FIELD_KIND_I32: buf_addf(text, "%" PRId32, f->value.i32); return 0;
	case AMQP_FIELD_KIND_U32: buf_addf(text, "%" PRIu32, f->value.u32); return 0;
	case AMQP_FIELD_KIND_I64: buf_addf(text, "%" PRId64, f->value.i64); return 0;
	case AMQP_FIELD_KIND_U64:
	case AMQP_FIELD_KIND_TIMESTAMP:
		buf_addf(text, "%" PRIu64, f->value.u64);
		return 0;
	case AMQP_FIELD_KIND_F32: buf_addf(text, "%.9g", f->value.f32); return 0;
	case AMQP_FIELD_KIND_F64: buf_addf(text, "%.17g", f->value.f64); return 0;
	case AMQP_FIELD_KIND_VOID: return 0;
	default: return -1;	/* a table, an array, a decimal */
	}
}

static int table_has(const amqp_table_t *t, const char *name)
{
	for (int i = 0; i < t->num_entries; i++)
		if (header_name_eq(t->entries[i].key.bytes, t->entries[i].key.len,
				   name, strlen(name)))
			return 1;
	return 0;
}

void mq_props_to_block(const amqp_basic_properties_t *p, int redelivered,
		       struct buf *out)
{
	int has_table = p->_flags & AMQP_BASIC_HEADERS_FLAG;
	static const amqp_table_t none;
	const amqp_table_t *t = has_table ? &p->headers : &none;
	struct buf text = BUF_INIT;

	for (int i = 0; i < PROP_COUNT; i++) {
		const amqp_bytes_t *b = prop_field_const(p, &string_props[i]);
		if (p->_flags & string_props[i].flag)
			add_line(out, string_props[i].header,
				 strlen(string_props[i].header), b->bytes, b->len);
	}
	for (int i = 0; i < t->num_entries; i++) {
		const amqp_table_entry_t *e = &t->entries[i];
		if (redelivered && header_name_eq(e->key.bytes, e->key.len,
						  "Redelivered", 11))
			continue;
		if (field_text(&e->value, &text) == 0)
			add_line(out, e->key.bytes, e->key.len, text.ptr, text.len);
	}
	/* Another publisher's timestamp, which our table would have held. */
	if ((p->_flags & AMQP_BASIC_TIMESTAMP_FLAG) && !table_has(t, "Timestamp") &&
	    p->timestamp <= INT64_MAX / 1000) {
		char ts[TIMESTAMP_LEN + 1];
		timestamp_format(ts, (int64_t)p->timestamp * 1000);
		add_line(out, "Timestamp", 9, ts, strlen(ts));
	}
	if (redelivered)
		add_line(out, "Redelivered", 11, "yes", 3);
	buf_release(&text);
}
