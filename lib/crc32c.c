/* crc32c: CRC-32C by table lookup, eight bytes a step ("slicing by
 * eight"), so the checksum costs little next to the write it guards. */
#include "crc32c.h"

#include <string.h>

#define CRC32C_POLY 0x82f63b78u	/* Castagnoli, bits reversed */

static uint32_t crc_table[8][256];

void crc32c_init(void)
{
	if (crc_table[0][1])
		return;
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;
		for (int k = 0; k < 8; k++)
			c = c & 1 ? (c >> 1) ^ CRC32C_POLY : c >> 1;
		crc_table[0][i] = c;
	}
	/* Table t gives the CRC of a byte followed by t zero bytes. */
	for (int t = 1; t < 8; t++)
		for (int i = 0; i < 256; i++) {
			uint32_t c = crc_table[t - 1][i];
			crc_table[t][i] = (c >> 8) ^ crc_table[0][c & 0xff];
		}
}

uint32_t crc32c(uint32_t crc, const void *data, size_t n)
{
	const unsigned char *p = data;
	uint32_t c = ~crc;

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	while (n >= 8) {
		uint64_t w;
		memcpy(&w, p, 8);
		w ^= c;
		c = crc_table[7][w & 0xff] ^ crc_table[6][(w >> 8) & 0xff] ^
		    crc_table[5][(w >> 16) & 0xff] ^ crc_table[4][(w >> 24) & 0xff] ^
		    crc_table[3][(w >> 32) & 0xff] ^ crc_table[2][(w >> 40) & 0xff] ^
		    crc_table[1][(w >> 48) & 0xff] ^ crc_table[0][w >> 56];
		p += 8;
		n -= 8;
	}
#endif
	while (n--)
		c = (c >> 8) ^ crc_table[0][(c ^ *p++) & 0xff];
	return ~c;
}
