/*
 * msgrec: a message kept as bytes by a stateful tool, in memory or as the
 * value of a store record: "ARRIVAL\n" (milliseconds, decimal), the
 * header lines, a blank line, the body. Text, so that a state directory
 * can be read with ordinary tools when something went wrong.
 */
#ifndef MSG_MSGREC_H
#define MSG_MSGREC_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "header.h"

/* out (reset first) holds the message that arrived at arrived. */
void msgrec_encode(struct buf *out, int64_t arrived, const struct headers *h,
		   const void *body, size_t len);
/* The same with the header block as read (frame_reader_header_block),
 * so that the message can be written again byte for byte. */
void msgrec_encode_block(struct buf *out, int64_t arrived, const char *block,
			 size_t block_len, const void *body, size_t len);
/* rec's parts without parsing its headers: 0, or -1 (EINVAL). */
int msgrec_split(const char *rec, size_t len, int64_t *arrived,
		 const char **block, size_t *block_len, const char **body,
		 size_t *body_len);
/* The header lines of a block into h (reset first): 0, or -1 (EINVAL). */
int msgrec_parse_block(const char *block, size_t n, struct headers *h);
/*
 * Decode rec into *arrived, h (reset first) and the body, which points
 * into rec. 0, or -1 with errno EINVAL when rec is damaged.
 */
int msgrec_decode(const char *rec, size_t len, int64_t *arrived,
		  struct headers *h, const char **body, size_t *body_len);
/* A record key for message number n of a group: the group key, a NUL,
 * n as 8 bytes big-endian, so that the store's byte order meets a
 * group's messages together and in order of n. */
void msgrec_key(struct buf *out, const char *key, size_t key_len, uint64_t n);
/* The group key's length and n of such a key: 0, or -1 (EINVAL). */
int msgrec_key_decode(const char *key, size_t len, size_t *key_len,
		      uint64_t *n);
/* A decimal int64 from p up to the '\n' at or before end: the byte after
 * that '\n', or NULL when there is none or it is no number. */
const char *msgrec_read_ms(const char *p, const char *end, int64_t *ms);

#endif
