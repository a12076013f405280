/* stamp: one header block formatted once for many new messages (stamp.h). */
#include "stamp.h"

#include <string.h>

#include "frame.h"
#include "id.h"
#include "sizes.h"

#define ID_LINE "Message-Id: "
#define TIME_LINE "Timestamp: "
#define LENGTH_LINE "Content-Length: "
#define ID_LINE_LEN (sizeof(ID_LINE) - 1 + UUID_STR_LEN + 1)
#define TIME_LINE_LEN (sizeof(TIME_LINE) - 1 + TIMESTAMP_LEN + 1)
#define LENGTH_ZERO_LEN (sizeof(LENGTH_LINE "0\n\n") - 1)
#define U64_DIGITS 20

static int named(const struct headers *h, size_t i, const char *name, size_t value_len)
{
	size_t nl, vl;
	const char *n = headers_name(h, i, &nl);

	headers_value(h, i, &vl);
	return header_name_eq(n, nl, name, strlen(name)) && vl == value_len;
}

int stamp_block_set(struct stamp_block *sb, const struct headers *h)
{
	struct buf block = BUF_INIT;
	int r = -1;

	if (frame_history_on() || headers_count(h) < 2 ||
	    !named(h, 0, "Message-Id", UUID_STR_LEN) ||
	    !named(h, 1, "Timestamp", TIMESTAMP_LEN))
		return -1;
	/* The writer's own formatting, so that the bytes cannot differ. */
	frame_format_header(&block, h, 0);
	/* Refused at the longest length a body can have: the writer alone
	 * decides which of such messages fit. */
	if (block.len - 1 + U64_DIGITS <= FRAME_HEADER_MAX &&
	    block.len >= ID_LINE_LEN + TIME_LINE_LEN + LENGTH_ZERO_LEN) {
		buf_reset(&sb->rest);
		buf_add(&sb->rest, block.ptr + ID_LINE_LEN + TIME_LINE_LEN,
			block.len - ID_LINE_LEN - TIME_LINE_LEN - LENGTH_ZERO_LEN);
		sb->formatted_ms = -1;
		r = 0;
	}
	buf_release(&block);
	return r;
}

static char *put(char *p, const char *s, size_t n)
{
	memcpy(p, s, n);
	return p + n;
}

void stamp_block_format(struct stamp_block *sb, int64_t now_ms,
			uint64_t body_len, struct buf *out)
{
	char id[UUID_STR_LEN + 1];
	char *p;

	id_new_at(id, (uint64_t)now_ms);
	if (now_ms != sb->formatted_ms) {
		timestamp_format(sb->timestamp, now_ms);
		sb->formatted_ms = now_ms;
	}
	buf_grow(out, ID_LINE_LEN + TIME_LINE_LEN + sb->rest.len + LENGTH_ZERO_LEN +
			      U64_DIGITS);
	p = out->ptr + out->len;
	p = put(p, ID_LINE, sizeof(ID_LINE) - 1);
	p = put(p, id, UUID_STR_LEN);
	p = put(p, "\n" TIME_LINE, sizeof(TIME_LINE));
	p = put(p, sb->timestamp, TIMESTAMP_LEN);
	*p++ = '\n';
	p = put(p, sb->rest.ptr, sb->rest.len);
	p = put(p, LENGTH_LINE, sizeof(LENGTH_LINE) - 1);
	buf_setlen(out, (size_t)(p - out->ptr));
	buf_addu64(out, body_len);
	buf_add(out, "\n\n", 2);
}

void stamp_block_release(struct stamp_block *sb)
{
	buf_release(&sb->rest);
}
