/* outbox: bodies published whole as files in a directory partners poll. */
#include "outbox.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io.h"

int outbox_exists_parse(const char *word, enum outbox_exists *out)
{
	static const char *const words[] = { "suffix", "fail", "skip", "replace" };

	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (!strcmp(word, words[i])) {
			*out = (enum outbox_exists)i;
			return 0;
		}
	return -1;
}

int outbox_open(struct outbox *ob, const char *path)
{
	memset(ob, 0, sizeof(*ob));
	buf_init(&ob->markers, 0);
	numbered_names_init(&ob->names);
	ob->mode = 0644;
	if (!*path) {
		errno = ENOENT;
		return ob->dirfd = -1;
	}
	ob->dirfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (ob->dirfd < 0 && errno == ENOENT && make_dirs(path) == 0)
		ob->dirfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return ob->dirfd < 0 ? -1 : 0;
}

enum outbox_result outbox_check(const struct outbox *ob, const char *name)
{
	struct stat st;

	if (ob->exists != OUTBOX_SKIP && ob->exists != OUTBOX_FAIL)
		return OUTBOX_PUBLISHED;
	if (fstatat(ob->dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return OUTBOX_PUBLISHED;
	return ob->exists == OUTBOX_SKIP ? OUTBOX_SKIPPED : OUTBOX_TAKEN;
}

int outbox_begin(struct outbox *ob)
{
	if (atomic_file_open(&ob->file, ob->dirfd, ob->mode) < 0)
		return -1;
	if (ob->exact_mode && atomic_file_chmod(&ob->file, ob->mode) < 0) {
		atomic_file_abort(&ob->file);
		return -1;
	}
	ob->writing = 1;
	return 0;
}

int outbox_write(struct outbox *ob, const void *p, size_t n)
{
	return atomic_file_write(&ob->file, p, n);
}

void outbox_abort(struct outbox *ob)
{
	if (ob->writing)
		atomic_file_abort(&ob->file);
	ob->writing = 0;
}

/* The sealed file under name, never replacing one. */
static int place_new(void *ctx, const char *name)
{
	struct outbox *ob = ctx;

	return atomic_file_place(&ob->file, name, 0);
}

/* Give the sealed file its name as ob->exists says. */
static enum outbox_result place(struct outbox *ob, const char *name,
				struct buf *final)
{
	buf_reset(final);
	buf_addstr(final, name);
	switch (ob->exists) {
	case OUTBOX_SUFFIX:
		return numbered_place(&ob->names, name, final, place_new, ob) == 0
			? OUTBOX_PUBLISHED : OUTBOX_ERROR;
	case OUTBOX_REPLACE:
		return atomic_file_place(&ob->file, name, 1) == 0
			? OUTBOX_PUBLISHED : OUTBOX_ERROR;
	case OUTBOX_FAIL:
	case OUTBOX_SKIP:
		break;
	}
	if (atomic_file_place(&ob->file, name, 0) == 0)
		return OUTBOX_PUBLISHED;
	if (errno != EEXIST)
		return OUTBOX_ERROR;
	atomic_file_abort(&ob->file);
	return ob->exists == OUTBOX_SKIP ? OUTBOX_SKIPPED : OUTBOX_TAKEN;
}

enum outbox_result outbox_publish(struct outbox *ob, const char *name,
				  struct buf *final)
{
	enum outbox_result r;

	ob->writing = 0;
	if (atomic_file_seal(&ob->file) < 0)
		return OUTBOX_ERROR;
	r = place(ob, name, final);
	if (r != OUTBOX_PUBLISHED)
		return r;
	ob->unsynced++;
	if (ob->done_marker) {
		buf_addstr(&ob->markers, final->ptr);
		buf_addstr(&ob->markers, ob->done_marker);
		buf_add(&ob->markers, "", 1);
	}
	return OUTBOX_PUBLISHED;
}

static int make_marker(struct outbox *ob, const char *name)
{
	int fd = openat(ob->dirfd, name,
			O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC,
			ob->mode);

	if (fd < 0)
		return -1;
	int r = ob->exact_mode ? fchmod(fd, ob->mode) : 0;

	if (close(fd) < 0)
		r = -1;
	return r;
}

static int sync_dir(struct outbox *ob)
{
	ob->syncs++;
	return xfsync(ob->dirfd);
}

int outbox_sync(struct outbox *ob)
{
	if (!ob->unsynced)
		return 0;
	/* The files first: a marker may be seen only once its file is
	 * durable. */
	if (sync_dir(ob) < 0)
		return -1;
	if (ob->markers.len) {
		for (size_t i = 0; i < ob->markers.len;
		     i += strlen(ob->markers.ptr + i) + 1)
			if (make_marker(ob, ob->markers.ptr + i) < 0)
				return -1;
		if (sync_dir(ob) < 0)
			return -1;
		buf_reset(&ob->markers);
	}
	ob->unsynced = 0;
	return 0;
}

void outbox_release(struct outbox *ob)
{
	outbox_abort(ob);
	if (ob->dirfd >= 0)
		close(ob->dirfd);
	ob->dirfd = -1;
	buf_release(&ob->markers);
	numbered_names_release(&ob->names);
}
