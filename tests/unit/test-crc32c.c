/* test-crc32c: the checksum against published values, and its eight-byte
 * steps against one byte at a time, at every alignment and length. */
#include <stdint.h>
#include <string.h>

#include "crc32c.h"
#include "unit.h"

/* The checksum bit by bit, as the polynomial defines it. */
static uint32_t slow_crc32c(const unsigned char *p, size_t n)
{
	uint32_t c = ~0u;

	while (n--) {
		c ^= *p++;
		for (int k = 0; k < 8; k++)
			c = c & 1 ? (c >> 1) ^ 0x82f63b78u : c >> 1;
	}
	return ~c;
}

int main(void)
{
	unsigned char data[300], zeros[32] = { 0 }, ones[32];
	int bad = 0;

	crc32c_init();
	crc32c_init();	/* again: nothing changes */
	/* RFC 3720, B.4, and the usual check value. */
	CHECK(crc32c(0, "123456789", 9) == 0xe3069283u);
	CHECK(crc32c(0, zeros, 32) == 0x8a9136aau);
	memset(ones, 0xff, sizeof(ones));
	CHECK(crc32c(0, ones, 32) == 0x62a8ab43u);
	CHECK(crc32c(0, "", 0) == 0);

	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (unsigned char)(i * 37 + (i >> 3));
	for (size_t start = 0; start < 8; start++)
		for (size_t n = 0; start + n <= sizeof(data); n++)
			bad += crc32c(0, data + start, n) != slow_crc32c(data + start, n);
	CHECK(bad == 0);
	/* Continued over any split point, it is the checksum of the whole. */
	bad = 0;
	for (size_t cut = 0; cut <= sizeof(data); cut++)
		bad += crc32c(crc32c(0, data, cut), data + cut, sizeof(data) - cut) !=
		       crc32c(0, data, sizeof(data));
	CHECK(bad == 0);
	return unit_done();
}
