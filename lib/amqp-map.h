/*
 * amqp-map: message headers to the properties of an AMQP message and
 * back (msg-tools(7), "amqp: channels"). Message-Id, Correlation-Id,
 * Reply-To and Content-Type become the properties of the same meaning,
 * Timestamp the timestamp (whole seconds), Expires the expiration (the
 * milliseconds left, which the broker enforces, when under the 49 days
 * RabbitMQ allows); every other header goes
 * to the headers table as a byte string, in order. The properties are
 * short strings: a value over 255 bytes stays in the table. Timestamp
 * and Expires are kept in the table too, since their properties hold
 * less than the header says (milliseconds, an absolute time), so that a
 * message read back has exactly the headers it was published with: the
 * properties' first (Message-Id, Correlation-Id, Reply-To, Content-Type),
 * then the table's in the order they were published.
 */
#ifndef MSG_AMQP_MAP_H
#define MSG_AMQP_MAP_H

#include <amqp.h>
#include <stdint.h>

#include "buf.h"
#include "header.h"

/* The properties of one message to publish, reused from message to
 * message; they point into the headers they were made from. */
struct mq_props {
	amqp_basic_properties_t p;
	amqp_table_entry_t *entries;
	size_t alloc;
	char expiration[24];
};

void mq_props_init(struct mq_props *mp);
void mq_props_release(struct mq_props *mp);
/*
 * The properties of a persistent message with headers h (Content-Length
 * aside), now_ms the time Expires is counted from: 0, or -1 (EMSGSIZE)
 * with the reason in why when a header's name is too long for the table.
 */
int mq_props_set(struct mq_props *mp, const struct headers *h, int64_t now_ms,
		 struct buf *why);

/*
 * The header block lines (without Content-Length) of a message read with
 * properties p, appended to out; "Redelivered: yes" last when the broker
 * delivered it before. Values of other types than strings (from other
 * publishers) are written as text: numbers in decimal, booleans as
 * true/false; nested tables and arrays are left out.
 */
void mq_props_to_block(const amqp_basic_properties_t *p, int redelivered,
		       struct buf *out);

#endif
