/*
 * crc32c: the CRC-32C (Castagnoli) checksum, as iSCSI, ext4 and SCTP use
 * it: what the store puts in every record and log header.
 */
#ifndef MSG_CRC32C_H
#define MSG_CRC32C_H

#include <stddef.h>
#include <stdint.h>

/* Fill the tables once, before the first crc32c(); calling it again
 * does nothing. Not thread-safe: call it before threads start. */
void crc32c_init(void);

/* Continue a CRC: crc32c(crc32c(0, a), b) is the CRC of a then b, and
 * crc32c(0, "123456789", 9) is 0xe3069283. */
uint32_t crc32c(uint32_t crc, const void *data, size_t n);

#endif
