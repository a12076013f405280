/*
 * xsltlog: what libxslt and libxml2 say while a stylesheet compiles or
 * runs, caught rather than printed: errors as raw text for one line of a
 * diagnostic or an Error header, and xsl:message text apart from them.
 */
#ifndef MSG_XSLTLOG_H
#define MSG_XSLTLOG_H

#include <libxslt/xsltInternals.h>

#include "buf.h"

/* Once, after xsltInit(): libxslt's generic errors come here. */
void xsltlog_register(void);
/* Frees what the log keeps between runs: call it last. */
void xsltlog_release(void);

/* Errors go to raw (lines, some blank) until xsltlog_end(). */
void xsltlog_begin(struct buf *raw);
/*
 * During the transformation ctxt, xsl:message text goes to messages, one
 * line per message, rather than to the errors.
 */
void xsltlog_watch(xsltTransformContextPtr ctxt, struct buf *messages);
/* Ends the capture; a message cut off by the end of the run is closed. */
void xsltlog_end(void);

/* An error of our own, added to the capture in progress. */
void xsltlog_note(const char *text);

/*
 * The text of the last whole xsl:message of the run (that of
 * terminate="yes"), taken out of messages into text: 0, or -1 for none.
 */
int xsltlog_take_last(struct buf *messages, struct buf *text);

/* Raw libxslt text as one line, "a; b; c", cut to a header's worth. */
void xsltlog_one_line(const struct buf *raw, struct buf *out);

#endif
