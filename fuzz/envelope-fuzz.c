/*
 * envelope-fuzz: the JSON envelopes of msg-wrap -e and msg-unwrap -e. An
 * envelope that parses is written back and read again: the same body
 * bytes and as many headers must return. Writing groups the values of a
 * header that occurs more than once, so the order of headers may change
 * once; from then on writing and reading change nothing.
 */
#include <string.h>

#include "envelope.h"
#include "fuzz.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	return 0;
}

/* Parse text (which must parse) into h and body; write it into line. */
static void parse_format(const struct buf *text, struct headers *h,
			 struct buf *body, struct buf *line)
{
	struct buf err = BUF_INIT;

	REQUIRE(text->len && text->ptr[text->len - 1] == '\n');
	REQUIRE(memchr(text->ptr, '\n', text->len) == text->ptr + text->len - 1);
	REQUIRE(envelope_parse(text->ptr, text->len, h, body, &err) == 0);
	envelope_format(h, body->ptr, body->len, line);
	buf_release(&err);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct headers h = HEADERS_INIT, h2 = HEADERS_INIT, h3 = HEADERS_INIT;
	struct buf body = BUF_INIT, body2 = BUF_INIT, err = BUF_INIT;
	struct buf line = BUF_INIT, line2 = BUF_INIT, line3 = BUF_INIT;

	if (envelope_parse((const char *)data, size, &h, &body, &err) == 0) {
		REQUIRE(headers_get(&h, "Content-Length") == NULL);
		envelope_format(&h, body.ptr, body.len, &line);
		parse_format(&line, &h2, &body2, &line2);
		REQUIRE(headers_count(&h) == headers_count(&h2));
		REQUIRE(body.len == body2.len && !memcmp(body.ptr, body2.ptr, body.len));
		parse_format(&line2, &h3, &body2, &line3);
		same_headers(&h2, &h3);
		REQUIRE(line2.len == line3.len && !memcmp(line2.ptr, line3.ptr, line2.len));
	} else {
		REQUIRE(err.len > 0);
	}
	headers_release(&h);
	headers_release(&h2);
	headers_release(&h3);
	buf_release(&body);
	buf_release(&body2);
	buf_release(&err);
	buf_release(&line);
	buf_release(&line2);
	buf_release(&line3);
	return 0;
}
