/*
 * nametemplate: file names made from a message's headers. In a template
 * {Name} stands for the first value of the header Name and {Name:FORMAT}
 * for that value, an RFC 3339 date-time, formatted by strftime(3) in UTC.
 * A '{' with no '}' after it is literal text.
 */
#ifndef MSG_NAMETEMPLATE_H
#define MSG_NAMETEMPLATE_H

#include "buf.h"
#include "header.h"

/* Longest name a template may yield, in bytes. */
#define NAME_TEMPLATE_MAX 200

/* Expand tpl with the headers h into out: 0, or -1 with the reason the
 * message cannot be named this way in why. The name is then checked:
 * one plain name in a directory, never a path out of it. */
int name_template_expand(const char *tpl, const struct headers *h,
			 struct buf *out, struct buf *why);

#endif
