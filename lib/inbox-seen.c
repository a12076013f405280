/* inbox-seen: the files an inbox took, by name and content, in a store
 * under DIR/.msg (inbox-seen.h). */
#include "inbox-seen.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "hash128.h"
#include "io.h"
#include "store.h"
#include "store-later.h"

/* How often a run waiting for the store looks again. */
#define SEEN_WAIT_NS 100000000L

struct inbox_seen {
	struct store *store;
	int64_t remember_ms;
	struct buf value;
};

/* The store, waited for while another run holds it: NULL with err. */
static struct store *open_store(const char *dir, struct buf *err)
{
	struct store_err serr;
	struct store *st;

	while (!(st = store_open(dir, &serr)) && serr.status == STORE_BUSY &&
	       !io_stop_requested)
		nanosleep(&(struct timespec){ .tv_nsec = SEEN_WAIT_NS }, NULL);
	if (!st)
		buf_addstr(err, serr.msg);
	return st;
}

struct inbox_seen *inbox_seen_open(const char *dir, int64_t remember_ms,
				   struct buf *err)
{
	struct buf path = BUF_INIT;
	struct inbox_seen *s = NULL;
	struct store *st;

	buf_addf(&path, "%s/.msg/seen", dir);
	st = open_store(path.ptr, err);
	buf_release(&path);
	if (st) {
		s = xcalloc(1, sizeof(*s));
		s->store = st;
		s->remember_ms = remember_ms;
		buf_init(&s->value, 0);
	}
	return s;
}

void inbox_seen_close(struct inbox_seen *s)
{
	if (!s)
		return;
	store_close(s->store);
	buf_release(&s->value);
	free(s);
}

/* The hash of what fd holds, read from its start and left there. */
static int content_hash(int fd, unsigned char out[16])
{
	hash128_t h = hash128_init();
	char chunk[65536];
	ssize_t n;

	if (lseek(fd, 0, SEEK_SET) < 0)
		return -1;
	while ((n = xread(fd, chunk, sizeof(chunk))) > 0)
		hash128_add(&h, chunk, (size_t)n);
	if (n < 0 || lseek(fd, 0, SEEK_SET) < 0)
		return -1;
	hash128_bytes(h, out);
	return 0;
}

/* "SIZE HASH", the part of a record that says whether it is a repeat. */
static const char *identity(const char *record)
{
	const char *space = strchr(record, ' ');

	return space ? space + 1 : record;
}

static size_t identity_len(const char *id)
{
	const char *space = strchr(id, ' ');

	return space && (space = strchr(space + 1, ' ')) ? (size_t)(space - id)
							 : strlen(id);
}

int inbox_seen_check(struct inbox_seen *s, const char *path, int fd,
		     const struct stat *st, struct buf *record)
{
	unsigned char hash[16];
	int64_t now = clock_now_ms(), deadline;
	const char *mine, *before;
	int found;

	if (content_hash(fd, hash) < 0)
		return -1;
	buf_reset(record);
	buf_addf(record, "%" PRId64 " %lld ", now, (long long)st->st_size);
	for (int i = 0; i < 16; i++)
		buf_addf(record, "%02x", hash[i]);
	buf_addf(record, " %" PRId64, (int64_t)st->st_mtim.tv_sec * 1000 +
		 st->st_mtim.tv_nsec / 1000000);
	found = store_get(s->store, INBOX_SEEN_KIND, path, strlen(path),
			  &s->value, &deadline);
	if (found <= 0)
		return found;
	if (deadline && deadline <= now)
		return 0;	/* forgotten: past --remember */
	mine = identity(record->ptr);
	before = identity(s->value.ptr);
	if (identity_len(mine) != identity_len(before) ||
	    memcmp(mine, before, identity_len(mine)))
		return 0;
	return 1;
}

int inbox_seen_put(struct inbox_seen *s, const char *path, const char *record)
{
	int64_t taken = strtoll(record, NULL, 10);

	return store_put(s->store, INBOX_SEEN_KIND, path, strlen(path), record,
			 strlen(record), taken + s->remember_ms);
}

int inbox_seen_commit(struct inbox_seen *s)
{
	if (store_delete_expired(s->store, clock_now_ms()) < 0)
		return -1;
	return store_commit(s->store);
}
