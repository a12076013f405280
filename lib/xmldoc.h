/*
 * xmldoc: libxml2 set up once for the whole suite, and the one secure way
 * msgtools parses XML (msg-format(5), Security): no network, no DTD loading,
 * no external entities (a document that declares one it uses is
 * rejected, never fetched), libxml2's depth and amplification limits on
 * (no XML_PARSE_HUGE, so "billion laughs" fails), internal entities
 * substituted. libxml2's own error printing is silenced; every failure
 * comes back as one line in err.
 */
#ifndef MSG_XMLDOC_H
#define MSG_XMLDOC_H

#include <libxml/tree.h>
#include <stddef.h>

#include "buf.h"

/* Once per process, before any other libxml2 call. */
void xmldoc_init(void);
/* Options for parsers that are set up elsewhere (xmlTextReader). */
int xmldoc_parse_options(void);
/*
 * Parse a body: the document, or NULL with "line N: reason" in err and
 * *status -1 (not well-formed; "line N: truncated: ..." when the input
 * stops before the document is complete) or MSG_NO_MEMORY (libxml2 ran
 * out of memory: no fault of the body's).
 */
xmlDocPtr xmldoc_parse(const char *p, size_t n, struct buf *err, int *status);
/*
 * For readers built by the caller: clear the error state before, and
 * after parsing ask whether it failed: 0, or -1 or MSG_NO_MEMORY as for
 * xmldoc_parse, with the reason in err.
 */
void xmldoc_begin(void);
int xmldoc_end(struct buf *err);
/* After a module captured libxml2 errors itself, route them back here. */
void xmldoc_restore_errors(void);

#endif
