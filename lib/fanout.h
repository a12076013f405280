/*
 * fanout: the output channels of a tool that writes to many (msg-route,
 * msg-tap): opened once each, in the order they are named, and found again
 * by address, so "--to a.fifo" twice shares one writer. A channel whose
 * writes failed is marked dead, with the reason, and left alone after.
 * Writing one message to a set of channels streams its body through all of
 * them at once, so a large body is never held whole.
 */
#ifndef MSG_FANOUT_H
#define MSG_FANOUT_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "frame.h"
#include "header.h"

struct fanout_channel {
	char *addr;
	struct frame_writer *w;
	int owned;		/* opened here (else borrowed from the tool) */
	int dead;
	int reported;		/* its failure was said on stderr */
	struct buf why;		/* why it died */
	uint64_t sent;
};

struct fanout {
	struct fanout_channel *v;
	size_t n, alloc;
};

void fanout_init(struct fanout *f);
/* Register a writer opened elsewhere (the tool's main output). */
size_t fanout_borrow(struct fanout *f, const char *addr, struct frame_writer *w);
/* The index of addr, opening it if new: -1 with the reason in err. */
long fanout_open(struct fanout *f, const char *addr, struct buf *err);
/* Index of an already open addr, or -1. */
long fanout_find(const struct fanout *f, const char *addr);

/* Where a message goes: indexes into the fanout, each at most once. */
struct fanout_set {
	size_t *idx;
	size_t n, alloc;
};
void fanout_set_add(struct fanout_set *s, size_t i);
static inline void fanout_set_clear(struct fanout_set *s) { s->n = 0; }

/*
 * Write one message to every live channel of the set: its header block as
 * read (block, when not NULL: the message passes unchanged) or made from
 * h, and the body either whole (body != NULL) or streamed from next(). A
 * channel that fails is marked dead and the others go on. Returns -1 only
 * if reading the body failed; *failed counts channels that died now.
 */
/* Write one message given whole, as read (frame_reader_whole), to every
 * live channel of the set; *failed counts channels that died now. */
void fanout_write_whole(struct fanout *f, const struct fanout_set *s,
			const char *frame, size_t n, size_t *failed);
int fanout_write(struct fanout *f, const struct fanout_set *s,
		 const struct headers *h, const char *block, size_t block_len,
		 const char *body, uint64_t len,
		 int (*next)(void *arg, const char **p, size_t *n), void *arg,
		 size_t *failed);

/* Flush and close every channel opened here; -1 if any failed. */
int fanout_close(struct fanout *f);
void fanout_release(struct fanout *f);

#endif
