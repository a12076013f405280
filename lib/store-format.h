/*
 * store-format: the bytes of a store's log, shared by the parts of the
 * store that write, read, index and compact it (msg-store(5) is the
 * reference). All numbers are little-endian.
 *
 * Log header (LOG_HDR bytes): "msgstore", format version (4), 4 zero
 * bytes, generation (8), CRC32C of the 24 bytes before it (4), 4 zero.
 * Record (REC_HDR bytes, then kind, key, value): CRC32C of everything
 * after it (4), type (1), kind length (1), key length (2), value
 * length (8), deadline (8).
 */
#ifndef MSG_STORE_FORMAT_H
#define MSG_STORE_FORMAT_H

#include <stddef.h>
#include <stdint.h>

#define LOG_HDR 32		/* log header: magic, version, generation, CRC */
#define REC_HDR 24		/* record header: CRC, type, lengths, deadline */
#define COMMIT_BODY 16		/* commit record value: count, sequence */
#define LOG_MAGIC "msgstore"	/* 8 bytes, no NUL */
#define LOG_NAME_MAX 32		/* "log." and 16 hex digits, and room */

enum rec_type { REC_PUT = 'P', REC_DEL = 'D', REC_COMMIT = 'C' };

/* What a record is about: its kind and key, neither NUL-terminated. */
struct rec_name {
	const char *kind;
	size_t kind_len;
	const char *key;
	size_t key_len;
};

static inline void put_le(unsigned char *p, uint64_t v, int n)
{
	for (int i = 0; i < n; i++, v >>= 8)
		p[i] = (unsigned char)v;
}

static inline uint64_t get_le(const unsigned char *p, int n)
{
	uint64_t v = 0;

	while (n--)
		v = v << 8 | p[n];
	return v;
}

/* The log bytes a record takes. */
static inline uint64_t rec_len(size_t kind_len, size_t key_len, uint64_t vlen)
{
	return REC_HDR + kind_len + key_len + vlen;
}

#endif
