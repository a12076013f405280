/* rawin: a raw file or stream as one message body, in bounded memory. */
#include "rawin.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io.h"
#include "message.h"
#include "sizes.h"

#define DETECT_BYTES 4096

/* A pipe that outgrew memory: everything goes to an unlinked temp file. */
static int spool(struct raw_input *ri, struct buf *err)
{
	struct buf chunk = BUF_INIT;
	int end = 0;

	ri->spool_fd = tmpfile_open();
	if (ri->spool_fd < 0) {
		buf_addf(err, "cannot create a temporary file for '%s': %s",
			 ri->name, strerror(errno));
		return -1;
	}
	if (write_all(ri->spool_fd, ri->head.ptr, ri->head.len) < 0)
		goto write_fail;
	ri->len = ri->head.len;
	while (!end) {
		buf_reset(&chunk);
		end = read_to_end(ri->fd, &chunk, IO_CHUNK);
		if (end < 0) {
			buf_addf(err, "cannot read '%s': %s", ri->name, strerror(errno));
			buf_release(&chunk);
			return -1;
		}
		if (write_all(ri->spool_fd, chunk.ptr, chunk.len) < 0) {
			buf_release(&chunk);
			goto write_fail;
		}
		ri->len += chunk.len;
	}
	buf_release(&chunk);
	ri->fd = ri->spool_fd;
	ri->rest_at = (off_t)ri->head.len;
	return 0;
write_fail:
	buf_addf(err, "cannot spool '%s' to a temporary file: %s", ri->name,
		 strerror(errno));
	return -1;
}

int raw_input_open(struct raw_input *ri, int fd, const char *name,
		   struct buf *err)
{
	struct stat st;
	off_t at;
	int end;

	memset(ri, 0, sizeof(*ri));
	ri->fd = fd;
	ri->spool_fd = -1;
	ri->name = name;
	buf_init(&ri->head, 0);
	/* A regular file of size 0 may still have content (procfs): it is
	 * read to its end like a pipe, which also gives an empty body for
	 * an empty one. */
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
	    (at = lseek(fd, 0, SEEK_CUR)) >= 0 && st.st_size > at) {
		/* A regular file: its size now is the body length. */
		ri->len = (uint64_t)(st.st_size - at);
		if (read_to_end(fd, &ri->head,
				ri->len < RAWIN_MEMORY ? ri->len : RAWIN_MEMORY) < 0)
			goto read_fail;
		if (ri->head.len < ri->len && ri->len <= RAWIN_MEMORY)
			goto shrank;
		ri->whole = ri->head.len == ri->len;
		ri->rest_at = at + (off_t)ri->head.len;
		return 0;
	}
	if ((end = read_to_end(fd, &ri->head, RAWIN_MEMORY)) < 0)
		goto read_fail;
	if (end) {
		ri->len = ri->head.len;
		ri->whole = 1;
		return 0;
	}
	/* Exactly RAWIN_MEMORY bytes so far: is there more? */
	return spool(ri, err);
read_fail:
	buf_addf(err, "cannot read '%s': %s", name, strerror(errno));
	return -1;
shrank:
	buf_addf(err, "cannot read '%s': file shrank while being read", name);
	return -1;
}

const char *raw_input_type(struct raw_input *ri)
{
	char tail[DETECT_BYTES];
	size_t headn = ri->head.len < DETECT_BYTES ? ri->head.len : DETECT_BYTES;
	off_t tail_at;
	ssize_t r;

	if (ri->whole)
		return message_detect_type(ri->head.ptr, ri->head.len, NULL, 0);
	tail_at = ri->rest_at + (off_t)(ri->len - ri->head.len) - DETECT_BYTES;
	r = pread(ri->fd, tail, sizeof(tail), tail_at);
	if (r < 0)
		r = 0;
	return message_detect_type(ri->head.ptr, headn, tail, (size_t)r);
}

int raw_input_copy(struct raw_input *ri, struct frame_writer *fw,
		   struct buf *err, int *write_failed)
{
	uint64_t left = ri->len - ri->head.len;
	off_t at = ri->rest_at;
	char *chunk;

	*write_failed = 0;
	if (frame_writer_body(fw, ri->head.ptr, ri->head.len) < 0)
		goto write_fail;
	if (!left)
		return 0;
	chunk = xmalloc(IO_CHUNK);
	while (left) {
		size_t want = left < IO_CHUNK ? (size_t)left : IO_CHUNK;
		ssize_t r;

		do
			r = pread(ri->fd, chunk, want, at);
		while (r < 0 && errno == EINTR);
		if (r <= 0) {
			if (r == 0)
				buf_addf(err, "cannot read '%s': file shrank while being read",
					 ri->name);
			else
				buf_addf(err, "cannot read '%s': %s", ri->name,
					 strerror(errno));
			free(chunk);
			return -1;
		}
		if (frame_writer_body(fw, chunk, (size_t)r) < 0) {
			free(chunk);
			goto write_fail;
		}
		left -= (uint64_t)r;
		at += r;
	}
	free(chunk);
	return 0;
write_fail:
	*write_failed = 1;
	return -1;
}

void raw_input_release(struct raw_input *ri)
{
	if (ri->spool_fd >= 0)
		close(ri->spool_fd);
	buf_release(&ri->head);
	ri->spool_fd = -1;
}
