/* spool-write: a spool's writing side: a file a message in tmp/, synced,
 * then published into new/ with others (spool.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "io.h"
#include "spool-parts.h"

int spool_begin(struct spool *s)
{
	char id[UUID_STR_LEN + 1];

	if (*s->next_id) {
		memcpy(id, s->next_id, sizeof(id));
		*s->next_id = '\0';
	} else {
		id_new(id);
	}
	snprintf(s->wname, sizeof(s->wname), "%s.msg", id);
	s->wfd = openat(s->tmpfd, s->wname, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	/* Held until the file leaves tmp/: a reader clearing tmp/ of what
	 * dead writers left behind knows this one is alive. */
	if (s->wfd >= 0 && flock(s->wfd, LOCK_EX) < 0) {
		spool_abort(s);
		return -1;
	}
	return s->wfd;
}

void spool_unstage_from(struct spool *s, size_t i)
{
	int saved = errno;

	for (; i < s->nstaged && !s->named; i++)
		unlinkat(s->tmpfd, s->staged[i], 0);
	s->nstaged = 0;
	errno = saved;
}

static int stage(struct spool *s, const char *name)
{
	if (!s->staged)
		s->staged = xmalloc(STAGED_MAX * sizeof(*s->staged));
	snprintf(s->staged[s->nstaged++], sizeof(*s->staged), "%s", name);
	return s->nstaged == STAGED_MAX ? spool_publish(s) : 0;
}

int spool_commit(struct spool *s)
{
	int r = xfsync(s->wfd);

	if (close(s->wfd) < 0 && r == 0)
		r = -1;
	s->wfd = -1;
	if (r < 0) {
		/* The writer has failed: what waits with it is not published. */
		spool_abort(s);
		spool_unstage_from(s, 0);
		return -1;
	}
	return stage(s, s->wname);
}

void spool_name_next(struct spool *s, const char *id)
{
	s->named = 1;
	snprintf(s->next_id, sizeof(s->next_id), "%s", id);
}

int spool_adopt(struct spool *s, const char *id)
{
	char name[UUID_STR_LEN + 32];
	int fd, r;

	snprintf(name, sizeof(name), "%s.msg", id);
	fd = openat(s->tmpfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : -1;
	/* Held: a live writer's, not left by a dead one. */
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		r = errno == EWOULDBLOCK ? 0 : -1;
		close(fd);
		return r;
	}
	r = xfsync(fd);
	close(fd);
	if (r < 0)
		return -1;
	return stage(s, name) < 0 ? -1 : 1;
}

int spool_publish(struct spool *s)
{
	size_t i;

	if (!s->nstaged)
		return 0;
	for (i = 0; i < s->nstaged; i++)
		if (renameat(s->tmpfd, s->staged[i], s->newfd, s->staged[i]) < 0) {
			spool_unstage_from(s, i);
			return -1;
		}
	s->nstaged = 0;
	/* The renames are durable once new/ is: one sync for them all. */
	return xfsync(s->newfd);
}

void spool_abort(struct spool *s)
{
	int saved = errno;

	if (s->wfd >= 0)
		close(s->wfd);
	s->wfd = -1;
	unlinkat(s->tmpfd, s->wname, 0);
	errno = saved;
}

