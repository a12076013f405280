/*
 * input-parts: what input.c's readers share with input-poll.c, which
 * reads several operands at once: the frames of one source, entries that
 * are not messages, the steps that end a batch.
 */
#ifndef MSG_INPUT_PARTS_H
#define MSG_INPUT_PARTS_H

#include "channel.h"
#include "input.h"

/* The frames of one source, until its end (1) or a stop request (0). */
int input_frames_of(struct input *in, const struct channel_source *src,
		    struct headers *h);
/* Say what the channel met that is not a message (counted for the exit
 * status). */
void input_report_entry(struct input *in, struct channel_in *ch,
			const char *addr, int found,
			const struct channel_source *src);
/* The source in hand was refused: move it aside where its kind can. */
void input_set_aside_current(struct input *in);
/* The tool's batch_end when the batch holds a message; a status other
 * than 0 ends the tool. */
void input_tool_batch_end(struct input *in);

#endif
