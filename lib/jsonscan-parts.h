/*
 * jsonscan-parts: what the streaming scanner's state machine
 * (jsonscan.c) and its pointer (jsonscan-path.c) share; no tool sees it.
 */
#ifndef MSG_JSONSCAN_PARTS_H
#define MSG_JSONSCAN_PARTS_H

#include "jsonscan.h"

enum { TARGET_UNSEEN, TARGET_OPEN, TARGET_READ };

/* The pointer's tokens into s->tok, and room for s->index: 0, or -1 if
 * the pointer is malformed. */
int jsonscan_parse_pointer(struct jsonscan *s, const char *pointer);
/* Is the member name in s->key the pointer's token for this level? It
 * decodes the name in place. */
int jsonscan_name_matches(struct jsonscan *s);

#endif
