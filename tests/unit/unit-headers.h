/* unit-headers: a message's headers written as one string in a test. */
#ifndef MSG_UNIT_HEADERS_H
#define MSG_UNIT_HEADERS_H

#include <stdlib.h>
#include <string.h>

#include "header.h"

/* h, reset, from "Name: value" lines joined by '|'. */
static inline void make_headers(struct headers *h, const char *lines)
{
	char *copy = strdup(lines), *save = NULL;

	headers_reset(h);
	for (char *l = strtok_r(copy, "|", &save); l; l = strtok_r(NULL, "|", &save))
		headers_add_line(h, l);
	free(copy);
}

#endif
