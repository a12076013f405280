/*
 * tool-state: what every stateful tool (msg-aggregate, msg-resequence)
 * does the same way around its state: the exit when the store fails,
 * the clock deadlines are measured by (--clock), and the message it
 * sets aside, late or a duplicate (--late).
 */
#ifndef MSG_TOOL_STATE_H
#define MSG_TOOL_STATE_H

#include <stdint.h>

#include "buf.h"
#include "frame.h"
#include "header.h"

struct store;
struct tool;

/* The state could not be kept or read: exit with the store's status and
 * its words (errno's without them; out of memory is 70, not the disk). */
_Noreturn void tool_state_failed(struct store *s, const char *doing);

/* --clock wall (the machine's) or event (the latest Timestamp read). */
struct tool_clock {
	int event;
	int64_t latest;
};

int64_t tool_clock_now(const struct tool_clock *c);
/*
 * The time a message arrives at: the wall clock, or with the event clock
 * its Timestamp (the clock moves to it when it is later). 0; -1 when the
 * event clock finds no Timestamp or a bad one, after tool_invalid.
 */
int tool_clock_message(struct tool_clock *c, struct tool *t, struct headers *h,
		       const struct buf *body, int64_t *now);

/*
 * A stateful tool's run (an aggregator, a resequencer) as the command
 * drives it: made durable at the end of each input batch, its timers
 * run as messages come and, on the wall clock, while the tool waits for
 * input. Each call dies through tool_state_failed when the store fails.
 */
struct tool_state {
	struct store *store;
	void *run;
	/* Commit the batch and write what it held back: 0 or -1. */
	int (*sync)(void *run);
	/* Run out what timed out by now: 0 or -1. */
	int (*tick)(void *run, int64_t now);
	/* The next deadline (ms), 0 if none. */
	int64_t (*deadline)(void *run);
	struct tool_clock clock;
};

void tool_state_sync(struct tool_state *s);
void tool_state_tick(struct tool_state *s, int64_t now);
/* On the wall clock, have the timers fire while the tool waits for
 * input (and what they release written at once); off again with NULL. */
void tool_state_timers(struct tool_state *s);
/* A full tool's "block": sync, sleep until the next deadline, run it:
 * 0, or -1 when nothing will time out (none, or the event clock). */
int tool_state_wait(struct tool_state *s);

/*
 * A message set aside, late or a duplicate: to fw with the Error
 * "PROG: what" (cut to fit, as every diversion's), or without fw
 * dropped with the warning "message ID: what; dropped".
 */
void tool_set_aside(struct frame_writer *fw, struct headers *h,
		    const struct buf *body, const char *what);

#endif
