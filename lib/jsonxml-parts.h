/*
 * jsonxml-parts: the vocabulary of the XPath 3.1 mapping that both of its
 * directions share, JSON to XML (jsonxml-read.c) and XML to JSON
 * (jsonxml-write.c). No tool sees it: they use jsonxml.h.
 */
#ifndef MSG_JSONXML_PARTS_H
#define MSG_JSONXML_PARTS_H

#include <stdint.h>

#include "jsonxml.h"

/* What an element of the mapping stands for, by its name. */
enum jsonxml_kind {
	K_MAP, K_ARRAY, K_STRING, K_NUMBER, K_BOOLEAN, K_NULL, K_NONE
};

/* The element names, by kind. */
extern const char *const jsonxml_kind_name[K_NONE];

/* The kind of an element of the mapping; K_NONE for any other node. */
enum jsonxml_kind jsonxml_element_kind(xmlNodePtr node);
/* cp as UTF-8 onto b. */
void jsonxml_put_utf8(struct buf *b, uint32_t cp);
/* The canonical JSON escape of an ASCII character that needs one. */
void jsonxml_put_escape(struct buf *b, unsigned c);

#endif
