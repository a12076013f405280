/* deduper: keys let through, and the order that writes each message once
 * across a crash (deduper.h). */
#include "deduper.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "frame.h"
#include "keyset.h"
#include "store.h"
#include "store-later.h"

struct deduper {
	struct deduper_opt opt;
	struct store *store;
	struct frame_writer *out;
	int named;
	struct keyset *keys;
	/* Keys whose frames were named this batch: each as its length, the
	 * key and the time it was seen; their records become "SEEN" once
	 * the frames are published. */
	struct buf pending;
	uint64_t npending;
	struct store_later after;
	char id[UUID_STR_LEN + 1];
	struct buf value;
	int evict_err;		/* a record of a forgotten key not deleted */
};

/* A key forgotten to make room: its record goes too. */
static void evicted(void *ctx, const char *key, size_t len)
{
	struct deduper *d = ctx;

	if (d->store && store_delete(d->store, DEDUPE_KIND, key, len) < 0 &&
	    !d->evict_err)
		d->evict_err = errno;
}

struct deduper *deduper_new(const struct deduper_opt *opt, struct store *store,
			    struct frame_writer *out)
{
	struct deduper *d = xcalloc(1, sizeof(*d));

	d->opt = *opt;
	d->store = store;
	d->out = out;
	d->named = store && out && frame_writer_nameable(out);
	if (d->named)
		frame_writer_durable_by_tool(out);
	d->keys = keyset_new(opt->window_ms, opt->max_keys);
	keyset_on_evict(d->keys, evicted, d);
	buf_init(&d->pending, 0);
	buf_init(&d->value, 0);
	store_later_init(&d->after);
	return d;
}

void deduper_free(struct deduper *d)
{
	if (!d)
		return;
	keyset_free(d->keys);
	buf_release(&d->pending);
	buf_release(&d->value);
	store_later_release(&d->after);
	free(d);
}

int deduper_named(const struct deduper *d)
{
	return d->named;
}

static int failed_before(struct deduper *d)
{
	if (!d->evict_err)
		return 0;
	errno = d->evict_err;
	return -1;
}

int deduper_seen(struct deduper *d, const char *key, size_t len, int64_t now)
{
	/* Remembered once written: a message that cannot be written (an
	 * invalid one) leaves no key behind. */
	if (keyset_has(d->keys, key, len, now))
		return 1;
	if (d->named) {
		/* A UUIDv7, so that the output spool still sorts in time. */
		id_new(d->id);
		frame_writer_name_next(d->out, d->id);
	}
	return 0;
}

static void add_pending(struct deduper *d, const char *key, size_t len,
			int64_t seen)
{
	buf_add(&d->pending, &len, sizeof(len));
	buf_add(&d->pending, key, len);
	buf_add(&d->pending, &seen, sizeof(seen));
	d->npending++;
}

int deduper_written(struct deduper *d, const char *key, size_t len,
		    int64_t now)
{
	int64_t seen = now;

	keyset_add(d->keys, key, len, now);
	if (!d->store)
		return 0;
	if (failed_before(d) < 0)
		return -1;
	keyset_value(&d->value, seen);
	if (d->named) {
		buf_addf(&d->value, " %s", d->id);
		add_pending(d, key, len, seen);
	}
	return store_put(d->store, DEDUPE_KIND, key, len, d->value.ptr,
			 d->value.len, seen + d->opt.window_ms);
}

/* The frames are published: their records say only when they were seen,
 * from the next commit on. */
static void pending_done(struct deduper *d)
{
	const char *p = d->pending.ptr, *end = p + d->pending.len;

	while (p < end) {
		size_t len;
		int64_t seen;

		memcpy(&len, p, sizeof(len));
		memcpy(&seen, p + sizeof(len) + len, sizeof(seen));
		/* A key forgotten meanwhile (--max-keys) had its record
		 * deleted: it stays forgotten. */
		if (keyset_expiry(d->keys, p + sizeof(len), len)) {
			keyset_value(&d->value, seen);
			store_later_put(&d->after, DEDUPE_KIND, p + sizeof(len), len,
					d->value.ptr, d->value.len,
					seen + d->opt.window_ms);
		}
		p += sizeof(len) + len + sizeof(seen);
	}
	buf_reset(&d->pending);
	d->npending = 0;
}

int deduper_sync(struct deduper *d)
{
	if (!d->store)
		return 0;
	if (failed_before(d) < 0)
		return -1;
	/* A stream cannot be looked into after a crash: what it was given
	 * is written out before its keys are committed (at least once). */
	if (!d->named && frame_writers_flush_all() < 0)
		return -1;
	if (store_later_apply(&d->after, d->store) < 0 || store_commit(d->store) < 0)
		return -1;
	/* Named frames are published once their keys are committed. */
	if (d->named && frame_writers_flush_all() < 0)
		return -1;
	pending_done(d);
	return 0;
}

uint64_t deduper_pending(const struct deduper *d)
{
	return d->npending;
}

int deduper_tick(struct deduper *d, int64_t now)
{
	keyset_expire(d->keys, now);
	return d->store ? store_delete_expired(d->store, now) : 0;
}

uint64_t deduper_keys(const struct deduper *d)
{
	return keyset_count(d->keys);
}

uint64_t deduper_forgotten(const struct deduper *d)
{
	return keyset_evicted(d->keys);
}

/* Frames named by records still "SEEN NAME": published if a crash left
 * them in tmp/, and their records made "SEEN" after the next publish. */
static int adopt_named(struct deduper *d, int64_t now)
{
	struct store_iter it;
	struct store_rec rec;
	struct buf value = BUF_INIT;
	int r;

	store_iter_init(&it, d->store, DEDUPE_KIND, NULL, 0);
	while ((r = store_iter_next(&it, &rec, &value)) == 1) {
		const char *space = memchr(value.ptr, ' ', value.len);
		int64_t seen;

		if (!space || rec.deadline <= now)
			continue;
		if (keyset_decode(value.ptr, (size_t)(space - value.ptr), &seen) < 0 ||
		    (d->named && frame_writer_adopt(d->out, space + 1) < 0)) {
			r = -1;
			break;
		}
		add_pending(d, rec.key, rec.key_len, seen);
	}
	store_iter_release(&it);
	buf_release(&value);
	return r;
}

int deduper_restore(struct deduper *d, int64_t now)
{
	if (!d->store)
		return 0;
	if (keyset_restore(d->keys, d->store, DEDUPE_KIND, now) < 0)
		return -1;
	return adopt_named(d, now);
}
