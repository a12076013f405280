/*
 * input-poll: several operands read at once, none starving another
 * (msg-trickle reads requests, responses and operator commands side by
 * side: a loop through a target must not deadlock on one of them while
 * another waits). poll(2) watches every stream's descriptor and every
 * spool's change notices; a round takes what each operand holds now,
 * operand by operand in the order they were added, and ends the batch
 * as input.h's readers do: the tool's batch_end, every output durable,
 * then each channel read from done.
 *
 * A stream is read a frame at a time, only when bytes are there; a
 * frame begun is read to its end (writers write frames whole, so its
 * bytes follow). A spool gives what new/ holds, up to SPOOL_CLAIMS_MAX
 * files a round.
 */
#ifndef MSG_INPUT_POLL_H
#define MSG_INPUT_POLL_H

#include <stdint.h>

#include "input.h"

/* Flags of an operand; the bits from INPUT_POLL_USER up are the
 * caller's, for input_poll_open. */
enum {
	/* A FIFO reopened when its last writer closes, so that a reader
	 * that runs long outlives its writers. */
	INPUT_POLL_REOPEN = 1 << 0,
	/* A stream that must never wait on this reader: the answers of a
	 * loop through a target, whose writer is blocked while the tool's
	 * output to that target waits. While any output of the tool waits
	 * for room, what such a stream holds is read ahead into memory, up
	 * to INPUT_POLL_AHEAD_MAX bytes (a loop holds no more answers than
	 * messages in flight), to be taken in the rounds after. */
	INPUT_POLL_DRAIN = 1 << 1,
	INPUT_POLL_USER = 1 << 8,
};

#define INPUT_POLL_AHEAD_MAX ((size_t)64 << 20)

struct input_poll;

/* in is the program's input state (refusals, exit status). Every
 * operand's ops must have the same batch_end: it ends each batch that
 * read a message (input.h). With once, a spool is read up to what it
 * holds when first read (--once); else to its end each round. */
struct input_poll *input_poll_new(struct input *in, int once);
void input_poll_free(struct input_poll *p);
/* Read addr beside the others: its messages go to ops->frame with ctx.
 * An operand that cannot be opened ends the tool (66). */
void input_poll_add(struct input_poll *p, const char *addr,
		    const struct input_ops *ops, void *ctx, unsigned flags);
/* Take what every operand holds now and end the batch: the number of
 * messages read. */
unsigned long input_poll_round(struct input_poll *p);
/* Wait until an operand may hold more, or until deadline (absolute ms
 * on clock_now_ms, 0 for none) has passed, or a stop request: 0; -1 when
 * nothing can come any more (every operand at its end, no deadline). */
int input_poll_wait(struct input_poll *p, int64_t deadline);
/* Operands with any of the flags in mask that are not at their end. */
int input_poll_open(const struct input_poll *p, unsigned mask);

#endif
