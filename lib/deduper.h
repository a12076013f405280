/*
 * deduper: the Idempotent Receiver of msg-dedupe: the keys of messages
 * let through, remembered for a window and up to a count (keyset.h), and
 * with a store the order that writes each message once across a crash.
 *
 * With a store, a key is a record from the message that brought it:
 * value "SEEN" (ms, when first seen), deadline SEEN + window. When the
 * output can name its frames (a dir: spool), the frame is written under
 * a name chosen here and the record says so ("SEEN NAME") until the
 * frame is published:
 *
 *   1. the frame goes to the spool's tmp/ under NAME (written, synced);
 *   2. deduper_sync commits the records, then publishes the frames (the
 *      outputs made durable), then queues "SEEN" for the next commit;
 *   3. the tool's input batch is done (its dir: files deleted).
 *
 * After a crash before 2's commit the record is not there: the input is
 * read again and its message written again under a new name (the first
 * file, never published, is cleared from tmp/ as any dead writer's).
 * After it, the message read again is a duplicate, and deduper_restore
 * publishes NAME if it is still in tmp/ (frame_writer_adopt): each
 * message reaches the output spool once. Nothing publishes a named frame
 * but the sync: not the way out after an error (the writer is
 * durable_by_tool), and a spool that fails to publish keeps the file for
 * the restart. A stream output cannot be looked into: its frames are
 * written out, then their keys committed; a crash between writes them
 * again (at least once, never lost).
 */
#ifndef MSG_DEDUPER_H
#define MSG_DEDUPER_H

#include <stddef.h>
#include <stdint.h>

#include "id.h"

struct store;
struct frame_writer;

#define DEDUPE_KIND "dedupe-key"

struct deduper_opt {
	int64_t window_ms;
	uint64_t max_keys;
};

struct deduper;

/* store may be NULL (keys in memory only); out is the output whose
 * frames are named when it can be (frame_writer_nameable). */
struct deduper *deduper_new(const struct deduper_opt *opt, struct store *store,
			    struct frame_writer *out);
void deduper_free(struct deduper *d);
/* The keys back from the store, and the frames a crash left unpublished
 * taken up: 0, or -1 with errno. */
int deduper_restore(struct deduper *d, int64_t now);
/*
 * Has key been seen (in the window, at now)? 1: a duplicate. 0: no; the
 * caller writes the message (to the output given, its frame named when
 * deduper_named) and, if it was written, calls deduper_written, which
 * remembers the key: a message that could not be written (invalid)
 * leaves none.
 */
int deduper_seen(struct deduper *d, const char *key, size_t len, int64_t now);
/* The message of the key just let through was written: its record.
 * 0, or -1 (store). */
int deduper_written(struct deduper *d, const char *key, size_t len,
		    int64_t now);
/* Frames of the output are named: deduper_seen named the next one. */
int deduper_named(const struct deduper *d);
/* Commit, publish, queue what is done: 0, or -1 with errno (the store's,
 * or EIO after an output's own error). Without a store: 0. */
int deduper_sync(struct deduper *d);
/* Keys let through since the last sync (a tool syncs when there are
 * many: a spool publishes by itself past 256). */
uint64_t deduper_pending(const struct deduper *d);
/* Forget keys past the window: 0, or -1 (store). */
int deduper_tick(struct deduper *d, int64_t now);
uint64_t deduper_keys(const struct deduper *d);
uint64_t deduper_forgotten(const struct deduper *d);

#endif
