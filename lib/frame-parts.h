/* frame-parts: what the frame reader's two parts share and no tool sees:
 * the reading of the stream (frame-read.c) and the parse of a header
 * block found in it (frame-block.c). */
#ifndef MSG_FRAME_PARTS_H
#define MSG_FRAME_PARTS_H

#include <stdint.h>

#include "frame.h"

/* Record a framing fault at offset (the text as fmt says, the hint and
 * Message-Id added); returns -1. */
__attribute__((format(printf, 3, 4)))
int frame_reader_fail(struct frame_reader *fr, uint64_t offset, const char *fmt, ...);

/*
 * Parse the block's len bytes at fr->buf + fr->pos into h, in a copy in
 * h's arena (one copy for the block, none per header); the lines end
 * where fr->line_end says, as far as it goes, and fr->block_clean says
 * whether the values need a byte-by-byte look. 0, or -1 on a fault.
 */
int frame_parse_block(struct frame_reader *fr, size_t len, struct headers *h);

#endif
