/*
 * stamp: the header block of messages made one after another that differ
 * only in Message-Id, Timestamp and Content-Length (msg-wrap -l makes one
 * per line). The other headers are formatted once; each message costs a
 * new id, the time (formatted again only when the millisecond changes)
 * and its length, written around them. The bytes are those
 * frame_format_header writes for the same headers.
 */
#ifndef MSG_STAMP_H
#define MSG_STAMP_H

#include <stdint.h>

#include "buf.h"
#include "clock.h"
#include "header.h"

struct stamp_block {
	struct buf rest;	/* the lines between Timestamp and Content-Length */
	int64_t formatted_ms;	/* the time in timestamp, or -1 */
	char timestamp[TIMESTAMP_LEN + 1];
};

#define STAMP_BLOCK_INIT { BUF_INIT, -1, "" }

/*
 * Take the headers every message shares from h, headers as
 * message_stamp sets them (Message-Id first, Timestamp second) and the
 * rest after them: 0, or -1 when the block cannot be made this way (h
 * does not begin so, $MSG_HISTORY is set, or a block could be over
 * FRAME_HEADER_MAX, so the message must be refused as invalid by the
 * writer): then write through frame_writer_begin.
 */
int stamp_block_set(struct stamp_block *sb, const struct headers *h);
/* Append the block of a new message made at now_ms with a body of
 * body_len bytes to out. */
void stamp_block_format(struct stamp_block *sb, int64_t now_ms,
			uint64_t body_len, struct buf *out);
void stamp_block_release(struct stamp_block *sb);

#endif
