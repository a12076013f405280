/* nametemplate: file names from header templates, refused when unsafe. */
#include "nametemplate.h"

#include <stdint.h>
#include <string.h>
#include <time.h>

#include "clock.h"

/* The value of {field}, field being "Name" or "Name:FORMAT": 0, or -1
 * with the reason in why. */
static int expand_field(const char *field, size_t n, const struct headers *h,
			struct buf *out, struct buf *why)
{
	char name[HEADER_NAME_MAX + 1], text[256];
	const char *colon = memchr(field, ':', n), *v;
	size_t nl = colon ? (size_t)(colon - field) : n;
	int64_t ms;
	time_t secs;
	struct tm tm;
	struct buf format = BUF_INIT;

	if (nl > HEADER_NAME_MAX)
		nl = HEADER_NAME_MAX;
	memcpy(name, field, nl);
	name[nl] = '\0';
	v = headers_get(h, name);
	if (!v || !*v) {
		buf_addf(why, "no header '%s' for the file name", name);
		return -1;
	}
	if (!colon) {
		buf_addstr(out, v);
		return 0;
	}
	if (timestamp_parse(v, &ms) < 0) {
		buf_addf(why, "header '%s' is not an RFC 3339 date-time: '%s'",
			 name, v);
		return -1;
	}
	secs = (time_t)(ms / 1000 - (ms % 1000 < 0));
	gmtime_r(&secs, &tm);
	buf_add(&format, colon + 1, n - nl - 1);
	/* The format is the operator's, from the command line. strftime's
	 * 0 is also a valid empty result: an empty name is refused later
	 * either way. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
	buf_add(out, text, strftime(text, sizeof(text), format.ptr, &tm));
#pragma GCC diagnostic pop
	buf_release(&format);
	return 0;
}

/* Is name one plain entry of a directory? 0, or -1 with why. */
static int check_name(const char *name, size_t len, struct buf *why)
{
	if (len == 0) {
		buf_addstr(why, "the file name is empty");
		return -1;
	}
	if (len > NAME_TEMPLATE_MAX) {
		buf_addf(why, "the file name is longer than %d bytes",
			 NAME_TEMPLATE_MAX);
		return -1;
	}
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)name[i];
		if (c == '/') {
			buf_addf(why, "the file name '%s' holds '/'", name);
			return -1;
		}
		if (c < 0x20 || c == 0x7f) {
			buf_addf(why, "the file name holds the control byte 0x%02x",
				 c);
			return -1;
		}
	}
	/* A leading dot covers "." and "..", and hidden names, which are
	 * the outbox's temporaries and which partners skip. */
	if (name[0] == '.') {
		buf_addf(why, "the file name '%s' starts with '.'", name);
		return -1;
	}
	return 0;
}

int name_template_expand(const char *tpl, const struct headers *h,
			 struct buf *out, struct buf *why)
{
	size_t start = out->len;

	for (const char *p = tpl; *p; p++) {
		const char *close;

		if (*p != '{' || !(close = strchr(p, '}'))) {
			buf_addch(out, *p);
			continue;
		}
		if (expand_field(p + 1, (size_t)(close - p - 1), h, out, why) < 0)
			return -1;
		p = close;
	}
	/* A NUL from a header would cut the name short unseen. */
	if (memchr(out->ptr + start, '\0', out->len - start)) {
		buf_addstr(why, "the file name holds a NUL byte");
		return -1;
	}
	return check_name(out->ptr + start, out->len - start, why);
}
