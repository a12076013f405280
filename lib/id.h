/*
 * id: UUIDv7 message ids (RFC 9562). Time-ordered and monotonic within a
 * process (a 12-bit counter in rand_a, method 1 of RFC 9562 section 6.2);
 * the random bits come from a per-process generator seeded by getrandom(2),
 * so ids are unique across processes without a syscall per id.
 */
#ifndef MSG_ID_H
#define MSG_ID_H

#include <stdint.h>

#define UUID_STR_LEN 36

/* Write a new id into out (UUID_STR_LEN chars plus NUL). */
void id_new(char out[UUID_STR_LEN + 1]);
/* Same, for a given Unix time in milliseconds (tests, --clock event). */
void id_new_at(char out[UUID_STR_LEN + 1], uint64_t unix_ms);
/* Random 64-bit value from the same generator. */
uint64_t id_random64(void);

#endif
