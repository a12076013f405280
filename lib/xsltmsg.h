/*
 * xsltmsg: the extensions of the namespace XSLT_MSG_NS, as msg-translate(1)
 * documents them: msg:header('Name') reads a header of the message being
 * translated, <msg:header name="" select=""/> sets one of the message
 * made from it.
 */
#ifndef MSG_XSLTMSG_H
#define MSG_XSLTMSG_H

#include "header.h"
#include "xslt.h"

/* Once, after xsltInit(). */
void xsltmsg_register(void);

/* The headers of the run about to start; NULL, NULL when it is over. */
void xsltmsg_bind(const struct headers *in, struct headers *out);

#endif
