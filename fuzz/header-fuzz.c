/*
 * header-fuzz: header lines as the tools take them (-H 'Name: value'),
 * and the parsers of header values (RFC 3339 timestamps, durations,
 * sizes, Expires). Each input line goes to headers_add_line; whatever is
 * accepted must be a well-formed header, survive a frame written and read
 * back unchanged, and a timestamp that parses must read the same once
 * written in UTC.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1	/* memfd_create */
#endif
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "clock.h"
#include "frame.h"
#include "fuzz.h"
#include "io.h"
#include "message.h"

static int mem_fd = -1;
/* Kept for the whole run: each new one would cost a large allocation. */
static struct frame_writer mem_out;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	mem_fd = memfd_create("header-fuzz", MFD_CLOEXEC);
	REQUIRE(mem_fd >= 0);
	frame_writer_init(&mem_out, mem_fd, "mem");
	return 0;
}

/* What an accepted header must be. */
static void check_header(const struct headers *h, size_t i)
{
	size_t nl, vl;
	const char *n = headers_name(h, i, &nl), *v = headers_value(h, i, &vl);

	REQUIRE(header_name_valid(n, nl) && n[nl] == '\0');
	REQUIRE(v[vl] == '\0' && memchr(v, '\0', vl) == NULL);
	REQUIRE(memchr(v, '\n', vl) == NULL && memchr(v, '\r', vl) == NULL);
	REQUIRE(vl == 0 || (v[0] != ' ' && v[0] != '\t' &&
			    v[vl - 1] != ' ' && v[vl - 1] != '\t'));
}

/* The value parsers: none may crash; a timestamp must read back. */
static void parse_value(const char *v)
{
	char ts[TIMESTAMP_LEN + 1];
	int64_t ms, again;
	uint64_t bytes;

	if (timestamp_parse(v, &ms) == 0) {
		timestamp_format(ts, ms);
		REQUIRE(timestamp_parse(ts, &again) == 0 && again == ms);
	}
	(void)duration_parse(v, &ms);
	(void)size_parse(v, &bytes);
}

/* h written as a frame with an empty body and read back is h again. */
static void round_trip(const struct headers *h)
{
	struct frame_reader fr;
	struct headers back = HEADERS_INIT;

	REQUIRE(ftruncate(mem_fd, 0) == 0 && lseek(mem_fd, 0, SEEK_SET) == 0);
	REQUIRE(frame_writer_write(&mem_out, h, "", 0) == 0);
	REQUIRE(frame_writer_flush(&mem_out) == 0);
	REQUIRE(lseek(mem_fd, 0, SEEK_SET) == 0);
	frame_reader_init(&fr, mem_fd, "mem");
	REQUIRE(frame_reader_next(&fr, &back) == 1);
	REQUIRE(headers_remove(&back, "Content-Length") == 1);
	same_headers(h, &back);
	frame_reader_release(&fr);
	headers_release(&back);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct headers h = HEADERS_INIT;
	struct buf line = BUF_INIT;
	const char *p = (const char *)data, *end = p + size, *nl;
	size_t before;

	for (; p < end; p = nl + 1) {
		nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl)
			nl = end;
		buf_reset(&line);
		buf_add(&line, p, (size_t)(nl - p));
		if (strlen(line.ptr) != line.len)
			continue;	/* an argument cannot hold a NUL */
		before = headers_count(&h);
		if (headers_add_line(&h, line.ptr) < 0) {
			REQUIRE(headers_count(&h) == before);
			continue;
		}
		REQUIRE(headers_count(&h) == before + 1);
		check_header(&h, before);
		parse_value(headers_value(&h, before, &(size_t){ 0 }));
	}
	(void)message_expired(&h);
	/* Content-Length is the writer's own. */
	headers_remove(&h, "Content-Length");
	round_trip(&h);
	headers_release(&h);
	buf_release(&line);
	return 0;
}
