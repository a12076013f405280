/*
 * message: what it takes to make a new message: fresh Message-Id and
 * Timestamp, Content-Type detection from the body, and the UTF-8 check
 * that detection and the JSON envelope share.
 */
#ifndef MSG_MESSAGE_H
#define MSG_MESSAGE_H

#include <stddef.h>
#include <stdint.h>

#include "header.h"

/* Set a new Message-Id and Timestamp (replacing any there). */
void message_stamp(struct headers *h);
/* The same for a message made at now (Unix milliseconds). */
void message_stamp_at(struct headers *h, int64_t now);

/*
 * What a body's first bytes say it is: STARTS_XML when its first
 * character, after a byte-order mark and blanks, is '<' (in UTF-8, UTF-16
 * or UTF-32, told by the mark or by an XML declaration), STARTS_JSON for
 * '{' or '[' in UTF-8. This is how every tool tells XML from JSON from
 * text when a message's Content-Type does not say.
 */
enum body_start { STARTS_OTHER, STARTS_XML, STARTS_JSON };
enum body_start message_body_start(const char *p, size_t n);
/*
 * The encoding to tell libxml2 an XML body is in, or NULL to let it read
 * the mark and declaration itself: libxml2 finds UTF-8 and UTF-16 on its
 * own, but not UTF-32, which it then calls an empty document.
 */
const char *message_xml_encoding(const char *p, size_t n);

/*
 * Guess a media type from the body's first and last bytes:
 * "application/xml" when it starts as message_body_start says XML does
 * and ends with '>' (in the same encoding), "application/json" for {...}
 * or [...], "text/plain" for UTF-8 without NUL, else
 * "application/octet-stream". Blanks at both ends are ignored. For a
 * body too large to hold, pass its head and tail (tail NULL: head is all
 * of it).
 */
const char *message_detect_type(const char *head, size_t head_len,
				const char *tail, size_t tail_len);

/* Has the message expired (an Expires header before now)? 1 or 0, or -1
 * when Expires is not an RFC 3339 date-time. */
int message_expired(const struct headers *h);

/* Is p[0..n) valid UTF-8 with no NUL byte? */
int utf8_valid_text(const char *p, size_t n);
/* Is p[0..n) valid UTF-8 (NUL allowed)? */
int utf8_valid(const char *p, size_t n);

#endif
