/*
 * clock: wall-clock time in milliseconds, RFC 3339 timestamps (written in
 * UTC with milliseconds, read with any offset), and durations such as
 * "250ms", "30s", "5m", "2h", "1d".
 */
#ifndef MSG_CLOCK_H
#define MSG_CLOCK_H

#include <stdint.h>

#include "buf.h"

#define TIMESTAMP_LEN 24	/* 2026-12-02T08:14:59.123Z */

int64_t clock_now_ms(void);
/* Format unix_ms as RFC 3339 UTC with milliseconds into out. */
void timestamp_format(char out[TIMESTAMP_LEN + 1], int64_t unix_ms);
/* Parse an RFC 3339 date-time; 0 and *unix_ms, or -1 (EINVAL). */
int timestamp_parse(const char *s, int64_t *unix_ms);
/* Parse a duration (a number and ms, s, m, h or d; a bare number is
 * seconds) into milliseconds; 0, or -1 (EINVAL/ERANGE). */
int duration_parse(const char *s, int64_t *ms);
/* A duration in ms as duration_parse reads it: "30s", or "1500ms". */
void duration_add(struct buf *out, int64_t ms);
/* Parse a size (a number with optional k, M, G: powers of 1024) into bytes. */
int size_parse(const char *s, uint64_t *bytes);

#endif
