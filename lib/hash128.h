/*
 * hash128: FNV-1a over 128 bits, for names that must be the same for the
 * same input (msg-aggregate --deterministic-ids) and for keys kept by
 * their hash (msg-dedupe --key-hash). Not for adversaries: a sender who
 * wants a collision can make one; for ids and keys of honest systems the
 * chance of one among n keys is about n^2 / 2^129.
 */
#ifndef MSG_HASH128_H
#define MSG_HASH128_H

#include <stddef.h>

typedef unsigned __int128 hash128_t;

static inline hash128_t hash128_init(void)
{
	return ((hash128_t)0x6c62272e07bb0142ull << 64) | 0x62b821756295c58dull;
}

static inline void hash128_add(hash128_t *h, const void *p, size_t n)
{
	const hash128_t prime = ((hash128_t)0x0000000001000000ull << 64) |
				0x000000000000013Bull;
	const unsigned char *c = p;

	for (size_t i = 0; i < n; i++) {
		*h ^= c[i];
		*h *= prime;
	}
}

/* The hash as 16 bytes, most significant first. */
static inline void hash128_bytes(hash128_t h, unsigned char out[16])
{
	for (int i = 15; i >= 0; i--, h >>= 8)
		out[i] = (unsigned char)h;
}

#endif
