/*
 * envelope: one message as one line of JSON, for jq and friends:
 *   {"headers": {"Name": "value", ...}, "body": "text"}
 * with "body_base64" instead of "body" when the body is not UTF-8.
 * A header that occurs more than once is an array of its values.
 * Content-Length is never in an envelope; it follows from the body.
 */
#ifndef MSG_ENVELOPE_H
#define MSG_ENVELOPE_H

#include <stddef.h>

#include "buf.h"
#include "header.h"

/* Parse one envelope into h (added to what is there) and body (replaced).
 * 0, or -1 with a reason in err. */
int envelope_parse(const char *text, size_t n, struct headers *h,
		   struct buf *body, struct buf *err);
/* Append the envelope of (h, body) and a LF to out. */
void envelope_format(const struct headers *h, const char *body, size_t n,
		     struct buf *out);

/* Standard base64 (RFC 4648) with padding. decode: 0, or -1 if malformed. */
void base64_encode(const char *p, size_t n, struct buf *out);
int base64_decode(const char *p, size_t n, struct buf *out);

#endif
