/*
 * keyset: keys remembered for a time and up to a count, in bounded
 * memory: each is forgotten a while after it was added, and the oldest
 * first when the count is reached. msg-aggregate keeps the keys of
 * released groups (--remember) to tell a late member from a new group;
 * msg-resequence those of complete groups; msg-dedupe every key it let
 * through (--window, --max-keys). Keys are bytes (a hash will do).
 */
#ifndef MSG_KEYSET_H
#define MSG_KEYSET_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"

struct keyset;
struct store;

/* Keys live ttl_ms after they are added; at most max of them (0: no
 * limit). */
struct keyset *keyset_new(int64_t ttl_ms, uint64_t max);
void keyset_free(struct keyset *c);
/* Called with each key forgotten to make room (not those that expire). */
void keyset_on_evict(struct keyset *c,
		     void (*fn)(void *ctx, const char *key, size_t len),
		     void *ctx);
/* Remember key as added at now (again: the later time counts). */
void keyset_add(struct keyset *c, const char *key, size_t key_len, int64_t now);
/* The same, with data (bytes, copied) kept with the key and given back
 * by keyset_data; adding a key again replaces its data. */
void keyset_add_data(struct keyset *c, const char *key, size_t key_len,
		     int64_t now, const void *data, size_t data_len);
/* The data of key (data_len bytes, not aligned), or NULL when key is not
 * held. Expired keys are only forgotten by keyset_has and keyset_expire. */
const char *keyset_data(const struct keyset *c, const char *key, size_t key_len,
			size_t *data_len);
/* At most max bytes of data in all (0: no limit): past it, the oldest
 * keys are forgotten, as when the count is reached. */
void keyset_limit_data(struct keyset *c, uint64_t max);
/* Remember key as added at now if it is not held: 1, or 0 when it is (its
 * time stays: a window runs from the first time a key was seen). */
int keyset_insert(struct keyset *c, const char *key, size_t key_len, int64_t now);
/* Is key held at now? 1 or 0. Forgets what expired first. */
int keyset_has(struct keyset *c, const char *key, size_t key_len, int64_t now);
/* Forget every key that expired at now; returns how many. */
uint64_t keyset_expire(struct keyset *c, int64_t now);
uint64_t keyset_count(const struct keyset *c);
/* Keys forgotten to make room, ever. */
uint64_t keyset_evicted(const struct keyset *c);
/* When key expires, or 0 if it is not held: a record's deadline. */
int64_t keyset_expiry(const struct keyset *c, const char *key, size_t key_len);

/* A key's time as a store record's value, and back: 0, or -1 (EINVAL). */
void keyset_value(struct buf *out, int64_t at);
int keyset_decode(const char *value, size_t value_len, int64_t *at);
/* Add every key of the records of kind (keyset_value's values, or values
 * that begin with one and a space) whose deadline is after now: 0, or -1
 * with errno (EINVAL: a damaged value). */
int keyset_restore(struct keyset *c, struct store *s, const char *kind,
		   int64_t now);
/* The same, the bytes after the space kept as the key's data. */
int keyset_restore_data(struct keyset *c, struct store *s, const char *kind,
			int64_t now);

#endif
