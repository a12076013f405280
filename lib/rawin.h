/*
 * rawin: raw data (a file or stdin) as the body of one message. The length
 * must be known before the body is written, so a body from a pipe that
 * outgrows memory is spooled to an unlinked temporary file in $TMPDIR; a
 * regular file is read where it lies. Either way memory stays bounded.
 */
#ifndef MSG_RAWIN_H
#define MSG_RAWIN_H

#include <stdint.h>
#include <sys/types.h>

#include "buf.h"
#include "frame.h"

struct raw_input {
	int fd;			/* where the rest of the body is read from */
	int spool_fd;		/* temporary file, or -1 */
	off_t rest_at;		/* offset in fd of the bytes after head */
	struct buf head;	/* the body's first bytes (all of it if whole) */
	uint64_t len;		/* body length */
	int whole;
	const char *name;	/* for diagnostics */
};

/* Take the body from fd: 0, or -1 with the reason in err. */
int raw_input_open(struct raw_input *ri, int fd, const char *name,
		   struct buf *err);
/* Detected Content-Type (see message_detect_type). */
const char *raw_input_type(struct raw_input *ri);
/* Write the whole body to fw inside a frame begun with ri->len: 0 or -1;
 * on a read fault err says why and *write_failed is 0. */
int raw_input_copy(struct raw_input *ri, struct frame_writer *fw,
		   struct buf *err, int *write_failed);
void raw_input_release(struct raw_input *ri);

#endif
