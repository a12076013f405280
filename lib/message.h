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

/*
 * Guess a media type from the body's first and last bytes: "application/xml"
 * when it starts with '<' and ends with '>', "application/json" for {...}
 * or [...], "text/plain" for UTF-8 without NUL, else
 * "application/octet-stream". Leading BOM and blanks at both ends are
 * ignored. For a body too large to hold, pass its head and tail.
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
