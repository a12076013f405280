/*
 * tapout: an output that must never hold up the flow it watches (the Wire
 * Tap's copy channel). Writes are non-blocking through a bounded queue of
 * whole frames: a frame that does not fit is dropped whole and counted,
 * never cut. A FIFO without a reader is not an error: frames are dropped
 * until a reader opens it, and one that goes away and comes back gets
 * whole frames from then on (what was queued for the old one is dropped).
 * In blocking mode it is an ordinary locked frame writer.
 */
#ifndef MSG_TAPOUT_H
#define MSG_TAPOUT_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "frame.h"

struct tapout {
	char *addr;
	int fd;			/* -1 while a FIFO has no reader */
	int drop;		/* non-blocking, bounded, drop whole frames */
	int is_fifo;
	struct buf q;		/* queued bytes: q.ptr[qstart .. q.len) */
	size_t qstart;
	/* Lengths of the frames queued, so a pipe is only ever given a
	 * frame it has room for whole (a reader never finds half of one). */
	size_t *lens;
	size_t nlens, lens_alloc, lens_head;
	size_t head_done;	/* bytes of the first queued frame written */
	size_t pipe_cap;	/* the FIFO's capacity, 0 if not known */
	size_t limit;
	int64_t retry_at;	/* next time to try opening a FIFO (ms) */
	struct frame_writer *w;	/* blocking mode */
	uint64_t frames, dropped, reopened;
	int err;		/* a file that failed for good (errno) */
};

/* Open addr: 0, or -1 with the reason in err. drop < 0 chooses: drop for
 * FIFOs, block for anything else. */
int tapout_open(struct tapout *t, const char *addr, int drop, size_t limit,
		struct buf *err);
/* Queue (or, blocking, write) one unit: a frame or a summary line.
 * -1 only for a blocking channel that failed (errno). */
int tapout_put(struct tapout *t, const char *p, size_t n);
/* Write what is queued without blocking. */
void tapout_pump(struct tapout *t);
/* Flush, waiting at most wait_ms for a slow reader; then close. */
int tapout_close(struct tapout *t, int wait_ms);
void tapout_release(struct tapout *t);

#endif
