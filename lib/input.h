/*
 * input: the input side of every tool. Operands are read one after
 * another: frames from "-", PATH and fd:N, raw data for msg-wrap and
 * msg-split -r, and dir: spools, whose messages are claimed in groups and
 * deleted only once what the tool made of them is out (durably, for a
 * dir: output). A spool file that cannot be processed is diverted or set
 * aside, so that it does not stop every reader after it.
 *
 * What becomes of a message is the caller's (struct input_ops): input
 * knows nothing of options, outputs or counters. Its own state is one
 * struct input per program, which the exit hook and refusals reach.
 */
#ifndef MSG_INPUT_H
#define MSG_INPUT_H

#include "frame.h"
#include "header.h"

struct channel_in;
struct inbox_options;

struct input_ops {
	/* The frame in hand, its header block in h: 0, or -1 after a
	 * reader fault (the tool ends with the reader's diagnostic). */
	int (*frame)(void *ctx, struct frame_reader *fr, struct headers *h);
	/* One raw input: fd open for reading, name for diagnostics,
	 * file_headers what its messages say of its file (File-Name...),
	 * or NULL (stdin). */
	void (*raw)(void *ctx, int fd, const char *name,
		    const struct headers *file_headers);
	/* A file that holds one message whole but is not well framed
	 * (reason says how): 1 when it was diverted whole, 0 when there is
	 * nowhere to divert it, so that it is refused. */
	int (*divert_file)(void *ctx, int fd, const char *name,
			   const char *reason);
	/* The end of an input batch (tool.h, batch_end), before the outputs
	 * are made durable and the batch done: 0, or the exit status the
	 * tool ends with, its diagnostic given. NULL: nothing to do. */
	int (*batch_end)(void *ctx);
};

struct input {
	const struct input_ops *ops;
	void *ctx;
	int once;		/* stop when a spool is empty (--once) */
	/* What an inbox:DIR operand takes (--include...), or NULL. */
	const struct inbox_options *inbox;
	/* The channel whose source is being read, and the source's name
	 * for diagnostics. */
	struct channel_in *current;
	const char *current_name;
	/* It cannot be processed: set it aside once the tool is done with it. */
	int current_refused;
	/* Messages read since the last batch ended. */
	unsigned long batch_messages;
	/* For the exit status: files set aside, entries left where they were. */
	unsigned long set_aside, left_in_spool;
	/* Entries that are not messages, named and left alone (an inbox's
	 * symbolic links, FIFOs, directories): no fault of the run. */
	unsigned long passed_over;
	/* Sources taken before as they are, let go unread (--idempotent). */
	unsigned long repeated;
};

/*
 * Read every operand (default "-") as frames, or as raw inputs, in order,
 * handing each to ops with ctx. A stop request ends the reading after the
 * message in hand. An operand that cannot be opened ends the tool (66).
 *
 * Messages are read in batches. A batch ends every SPOOL_CLAIMS_MAX
 * sources claimed, before any wait for input (for a stream, before a
 * read that may block) and at the end of each operand; then, in this
 * order, ops->batch_end if the batch holds a message, every output made
 * durable (frame_writers_flush_all), and the batch done (its channel's
 * done: a spool deletes its claims). A failure at any step ends the tool
 * before the next, so a batch is never done before its outputs are
 * durable.
 */
void input_each_frame(struct input *in, const struct input_ops *ops,
		      void *ctx, int nargs, char **args);
void input_each_raw(struct input *in, const struct input_ops *ops,
		    void *ctx, int nargs, char **args);

/* Open an operand for reading, ending the tool with exit 66 if it
 * cannot be. */
int input_open(const char *addr);

/* Every output made durable, or the tool ends (input_writer_failed) with
 * the one that failed: the step of a batch's end, and of a tool that
 * writes between batches (what its timers released). */
void input_outputs_durable(void);

/* The writer fw failed: the tool ends with its channel's status (75
 * for a broker to try again, channel.h), naming the output, or quietly
 * when its sink already said why (the message named, the broker's
 * reason), so that the one line is the exact one. */
_Noreturn void input_writer_failed(const struct frame_writer *fw);

/*
 * The message in hand cannot be processed (line names it): where its
 * channel kind can set it aside (a spool file), that is done once the
 * tool is done with it, and the run goes on; from any other input the
 * tool exits 65 now.
 */
void input_refuse(struct input *in, const char *line);
/* The exit status the inputs call for at the end of a run that went on:
 * 74 when a spool entry could not be read, claimed or set aside, 65 when
 * a file was set aside, else 0. */
int input_status(const struct input *in);
/* For the exit hook: the tool stops with exit status code in the middle
 * of a source that can be set aside (a spool file, an inbox file): one it
 * refused (65) is set aside, one it stopped at for any other reason is
 * given back, and the ones before it are done, unless the tool has a
 * batch_end (its state may hold part of a message). */
void input_before_exit(struct input *in, int code);

#endif
