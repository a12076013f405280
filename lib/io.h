/*
 * io: read/write wrappers that retry EINTR and loop over short writes.
 * A write that makes no progress is reported as ENOSPC.
 */
#ifndef MSG_IO_H
#define MSG_IO_H

#include <stddef.h>
#include <sys/types.h>

#include <poll.h>
#include <signal.h>

#include "buf.h"

/*
 * Set by SIGTERM and SIGINT (see tool.c): a read that is interrupted then
 * returns -1 with EINTR instead of being retried, so a tool waiting for
 * input can finish cleanly; everything else retries EINTR as usual.
 */
extern volatile sig_atomic_t io_stop_requested;

/*
 * open(2) of path for reading, which a stop cuts short: a FIFO is opened
 * without waiting for a writer, then waited on in short polls until one
 * has written or come and gone, so a stop that comes at any moment, even
 * just before the wait, ends it (-1 with EINTR). The descriptor returned
 * blocks as usual.
 */
int io_open_read(const char *path);
/*
 * poll(2) of one descriptor that a stop request ends even when it came
 * just before the wait: SIGTERM and SIGINT are held from the look at
 * io_stop_requested until ppoll lets them in, so none can land between
 * the two and leave the wait blocked. timeout_ms < 0 waits for ever.
 * poll's result, or -1 with EINTR when asked to stop.
 */
int io_poll(struct pollfd *p, int timeout_ms);
/* Sleep ms milliseconds, as io_poll waits: 0, or -1 with EINTR. */
int io_sleep_ms(int ms);
/* One read(2), retried on EINTR: bytes read, 0 at EOF, -1 with errno. */
ssize_t xread(int fd, void *p, size_t n);
/* Can a read of fd wait (a pipe, FIFO, socket, terminal), unlike one of a
 * regular file? Outputs are flushed before reads that can. */
int io_read_may_wait(int fd);
/* Write all n bytes: 0, or -1 with errno. */
int write_all(int fd, const void *p, size_t n);
/*
 * While wait is set, write_all to a pipe or FIFO goes in pieces of
 * PIPE_BUF bytes (which a pipe with room takes without blocking), each
 * after wait(fd, arg) returned 0: fd has room. So a tool whose output
 * waits for its reader can go on reading what must not wait on it (a
 * loop's answers, which that reader is blocked writing). wait returns
 * 1 when it has nothing to read meanwhile (the rest is written as
 * usual), -1 with errno to fail the write. NULL to unset.
 */
void io_set_write_wait(int (*wait)(int fd, void *arg), void *arg);
/* Read until n bytes or EOF: bytes read, or -1 with errno. */
ssize_t read_full(int fd, void *p, size_t n);
/*
 * Append to out what fd holds up to its end, but no more than max bytes
 * (SIZE_MAX: all of it): 1 when the end was reached, 0 when max bytes came
 * first (nothing past them is read, so a pipe is not waited on for more),
 * -1 with errno. The one way a descriptor is read to its end.
 */
int read_to_end(int fd, struct buf *out, size_t max);
/* fsync(2) retried on EINTR. */
int xfsync(int fd);
/* fsync the directory that holds path (or dir itself when path is a dir). */
int fsync_dir(const char *dir);

/*
 * A new file in dirfd named prefix and 16 random hex digits (into name,
 * size bytes), never one that exists: opened with flags (O_CREAT, O_EXCL
 * and O_CLOEXEC added) and mode. Its descriptor, or -1 with errno.
 */
int open_unique(int dirfd, const char *prefix, int flags, mode_t mode,
		char *name, size_t size);
/* An unlinked temporary file in $TMPDIR (default /tmp), mode 0600. */
int tmpfile_open(void);

#endif
