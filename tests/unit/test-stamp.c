/*
 * test-stamp: a stamp block writes, for every message, the bytes the
 * frame writer's own formatting gives the same headers, and refuses the
 * headers it cannot stand for.
 */
#include <string.h>

#include "frame.h"
#include "id.h"
#include "message.h"
#include "sizes.h"
#include "stamp.h"
#include "unit.h"

/* The id and time a formatted block carries, set into h in their place. */
static void take_stamp(const struct buf *block, struct headers *h)
{
	const char *id = strstr(block->ptr, "Message-Id: ");
	const char *ts = strstr(block->ptr, "Timestamp: ");

	headers_setn(h, "Message-Id", id + 12, UUID_STR_LEN);
	headers_setn(h, "Timestamp", ts + 11, TIMESTAMP_LEN);
}

/* Format (h, len) both ways at now: 1 when the bytes are the same. */
static int same_as_writer(struct stamp_block *sb, struct headers *h,
			  int64_t now, uint64_t len)
{
	struct buf stamped = BUF_INIT, plain = BUF_INIT;
	int same;

	char want_ts[TIMESTAMP_LEN + 1];

	stamp_block_format(sb, now, len, &stamped);
	take_stamp(&stamped, h);
	/* The time is that of now, whatever was formatted before. */
	timestamp_format(want_ts, now);
	CHECK_STR(headers_get(h, "Timestamp"), want_ts);
	frame_format_header(&plain, h, len);
	same = stamped.len == plain.len && !memcmp(stamped.ptr, plain.ptr, plain.len);
	if (!same)
		printf("#   stamped:\n%s#   writer:\n%s", stamped.ptr, plain.ptr);
	buf_release(&stamped);
	buf_release(&plain);
	return same;
}

static void test_same_bytes(void)
{
	struct headers h = HEADERS_INIT;
	struct stamp_block sb = STAMP_BLOCK_INIT;
	const int64_t t0 = 1796000000123;

	message_stamp_at(&h, t0);
	headers_set(&h, "File-Name", "orders.txt");
	headers_set(&h, "Content-Type", "text/plain");
	headers_set(&h, "Content-Length", "999");	/* ignored, as the writer does */
	headers_set(&h, "X-Empty", "");
	CHECK(stamp_block_set(&sb, &h) == 0);
	CHECK(same_as_writer(&sb, &h, t0, 0));
	CHECK(same_as_writer(&sb, &h, t0, 100));
	/* A later millisecond is formatted anew, an earlier one too. */
	CHECK(same_as_writer(&sb, &h, t0 + 1, 18446744073709551615ull));
	CHECK(same_as_writer(&sb, &h, t0 - 5000, 7));
	stamp_block_release(&sb);
	headers_release(&h);
}

static void test_ids_new_and_in_order(void)
{
	struct headers h = HEADERS_INIT;
	struct stamp_block sb = STAMP_BLOCK_INIT;
	struct buf a = BUF_INIT, b = BUF_INIT;

	message_stamp_at(&h, 1796000000000);
	CHECK(stamp_block_set(&sb, &h) == 0);
	stamp_block_format(&sb, 1796000000000, 1, &a);
	stamp_block_format(&sb, 1796000000000, 1, &b);
	CHECK(a.len == b.len);
	CHECK(strncmp(a.ptr + 12, b.ptr + 12, UUID_STR_LEN) < 0);
	/* Appended: what out held stays. */
	CHECK(b.len > 0 && !strncmp(b.ptr, "Message-Id: ", 12));
	buf_reset(&b);
	buf_addstr(&b, "kept");
	stamp_block_format(&sb, 1796000000000, 1, &b);
	CHECK(!strncmp(b.ptr, "keptMessage-Id: ", 16));
	buf_release(&a);
	buf_release(&b);
	stamp_block_release(&sb);
	headers_release(&h);
}

static void test_refused(void)
{
	struct headers h = HEADERS_INIT;
	struct stamp_block sb = STAMP_BLOCK_INIT;
	struct buf big = BUF_INIT;

	/* Not begun with the stamp: -H 'Message-Id: x' moves it last. */
	headers_set(&h, "Content-Type", "text/plain");
	message_stamp_at(&h, 1796000000000);
	CHECK(stamp_block_set(&sb, &h) == -1);
	headers_reset(&h);
	headers_set(&h, "Message-Id", "short");
	headers_set(&h, "Timestamp", "2026-12-06T00:00:00.000Z");
	CHECK(stamp_block_set(&sb, &h) == -1);
	headers_reset(&h);
	headers_set(&h, "Message-Id", "01a24973-a58a-7124-80ec-9ad53bd07ebb");
	CHECK(stamp_block_set(&sb, &h) == -1);
	/* A block the longest length would push over the limit. */
	message_stamp_at(&h, 1796000000000);
	while (big.len + 200 < FRAME_HEADER_MAX)
		buf_addch(&big, 'x');
	headers_set(&h, "X-Big", big.ptr);
	while (frame_header_size(&h, 0) - 1 + 20 <= FRAME_HEADER_MAX) {
		buf_addch(&big, 'x');
		headers_set(&h, "X-Big", big.ptr);
	}
	CHECK(stamp_block_set(&sb, &h) == -1);
	/* One byte less, and it stands for them. */
	buf_setlen(&big, big.len - 1);
	headers_set(&h, "X-Big", big.ptr);
	CHECK(stamp_block_set(&sb, &h) == 0);
	CHECK(same_as_writer(&sb, &h, 1796000000000, 99999999999999999ull));
	buf_release(&big);
	stamp_block_release(&sb);
	headers_release(&h);
}

int main(void)
{
	test_same_bytes();
	test_ids_new_and_in_order();
	test_refused();
	return unit_done();
}
