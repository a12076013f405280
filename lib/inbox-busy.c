/* inbox-busy: writers of an inbox file seen through a lease and locks. */
#include "inbox-busy.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

/* A lease is taken and given back at once: it is the asking that tells. */
static enum inbox_busy lease_says(int fd)
{
	if (fcntl(fd, F_SETLEASE, F_RDLCK) == 0) {
		(void)fcntl(fd, F_SETLEASE, F_UNLCK);
		return INBOX_IDLE;
	}
	return errno == EAGAIN || errno == EBUSY ? INBOX_BUSY : INBOX_UNKNOWN;
}

/* A writer's flock(2) lock: ours would have to wait for it. */
static int flocked(int fd)
{
	if (flock(fd, LOCK_SH | LOCK_NB) < 0)
		return errno == EWOULDBLOCK;
	(void)flock(fd, LOCK_UN);
	return 0;
}

/* A writer's fcntl(2) lock on any part of the file. */
static int fcntl_locked(int fd)
{
	struct flock fl = { .l_type = F_RDLCK, .l_whence = SEEK_SET };

	if (fcntl(fd, F_OFD_GETLK, &fl) < 0)
		return 0;
	return fl.l_type == F_WRLCK;
}

enum inbox_busy inbox_busy(int fd)
{
	if (flocked(fd) || fcntl_locked(fd))
		return INBOX_BUSY;
	return lease_says(fd);
}
