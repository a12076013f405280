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
	buf_init(&ob->pending_names, 0);
	buf_init(&ob->failed, 0);
	buf_init(&ob->final, 0);
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

enum outbox_result outbox_check(struct outbox *ob, const char *name)
{
	struct stat st;

	if (ob->exists != OUTBOX_SKIP && ob->exists != OUTBOX_FAIL)
		return OUTBOX_PUBLISHED;
	if (fstatat(ob->dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return OUTBOX_PUBLISHED;
	if (ob->exists == OUTBOX_FAIL)
		return OUTBOX_TAKEN;
	ob->skipped++;
	return OUTBOX_SKIPPED;
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
	struct atomic_file *af = ctx;

	return atomic_file_place(af, name, 0);
}

/* Give the sealed file af its name as ob->exists says; the name used is
 * put in ob->final. */
static enum outbox_result place(struct outbox *ob, struct atomic_file *af,
				const char *name)
{
	buf_reset(&ob->final);
	buf_addstr(&ob->final, name);
	switch (ob->exists) {
	case OUTBOX_SUFFIX:
		return numbered_place(&ob->names, name, &ob->final, place_new, af) == 0
			? OUTBOX_PUBLISHED : OUTBOX_ERROR;
	case OUTBOX_REPLACE:
		return atomic_file_place(af, name, 1) == 0
			? OUTBOX_PUBLISHED : OUTBOX_ERROR;
	case OUTBOX_FAIL:
	case OUTBOX_SKIP:
		break;
	}
	if (atomic_file_place(af, name, 0) == 0)
		return OUTBOX_PUBLISHED;
	if (errno != EEXIST)
		return OUTBOX_ERROR;
	atomic_file_abort(af);
	return ob->exists == OUTBOX_SKIP ? OUTBOX_SKIPPED : OUTBOX_TAKEN;
}

int outbox_publish(struct outbox *ob, const char *name)
{
	struct outbox_pending *p = &ob->pending[ob->npending++];

	ob->writing = 0;
	atomic_file_start_writeback(&ob->file);
	p->file = ob->file;
	p->name_at = ob->pending_names.len;
	buf_add(&ob->pending_names, name, strlen(name) + 1);
	return ob->npending == OUTBOX_GROUP ? outbox_publish_group(ob) : 0;
}

/* Give the sealed file p its name: 0, or -1 (errno, EEXIST for a name
 * --exists fail found taken) with the file dropped. */
static int name_one(struct outbox *ob, struct outbox_pending *p)
{
	const char *name = ob->pending_names.ptr + p->name_at;

	switch (place(ob, &p->file, name)) {
	case OUTBOX_PUBLISHED:
		break;
	case OUTBOX_SKIPPED:
		ob->skipped++;
		return 0;
	case OUTBOX_TAKEN:
		errno = EEXIST;
		return -1;
	case OUTBOX_ERROR:
		return -1;
	}
	ob->published++;
	ob->unsynced++;
	if (ob->done_marker) {
		buf_addstr(&ob->markers, ob->final.ptr);
		buf_addstr(&ob->markers, ob->done_marker);
		buf_add(&ob->markers, "", 1);
	}
	return 0;
}

/* Drop the files of the group from i on. */
static void drop_pending(struct outbox *ob, unsigned i)
{
	int saved = errno;

	for (; i < ob->npending; i++)
		atomic_file_abort(&ob->pending[i].file);
	ob->npending = 0;
	buf_reset(&ob->pending_names);
	errno = saved;
}

/* The group failed at file i (errno): name it, drop it and those after. */
static int group_failed(struct outbox *ob, unsigned i)
{
	buf_addstr(&ob->failed, ob->pending_names.ptr + ob->pending[i].name_at);
	drop_pending(ob, i + 1);
	return -1;
}

int outbox_publish_group(struct outbox *ob)
{
	unsigned sealed = 0, i;
	int seal_errno = 0;

	buf_reset(&ob->failed);
	/*
	 * Every file is synced before any is named: a rename between two
	 * fsyncs would put the directory into the journal's next commit, and
	 * the next fsync would wait for that commit too.
	 */
	for (; sealed < ob->npending; sealed++)
		if (atomic_file_seal(&ob->pending[sealed].file) < 0) {
			seal_errno = errno;
			break;
		}
	for (i = 0; i < sealed; i++)
		if (name_one(ob, &ob->pending[i]) < 0)
			return group_failed(ob, i);
	if (sealed < ob->npending) {
		errno = seal_errno;
		return group_failed(ob, sealed);
	}
	drop_pending(ob, ob->npending);
	return 0;
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
	if (outbox_publish_group(ob) < 0)
		return -1;
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
	drop_pending(ob, 0);
	if (ob->dirfd >= 0)
		close(ob->dirfd);
	ob->dirfd = -1;
	buf_release(&ob->markers);
	buf_release(&ob->pending_names);
	buf_release(&ob->failed);
	buf_release(&ob->final);
	numbered_names_release(&ob->names);
}
