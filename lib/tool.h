/*
 * tool: what every msgtools program shares, so cmd/ files hold only their
 * own options and message loop: the common long options (--output,
 * --invalid, --dead-letter, --ns, --stats, --once, --help, --version),
 * usage errors, the main and invalid-message outputs, iteration over the
 * input channels, diversion of invalid messages, counters for --stats and
 * the checked flush and close of every output before exit.
 */
#ifndef MSG_TOOL_H
#define MSG_TOOL_H

#include <getopt.h>
#include <stdint.h>

#include "buf.h"
#include "frame.h"
#include "header.h"
#include "inbox.h"

#define MSGTOOLS_VERSION "0.1.0"

/* Which shared options a tool accepts (--help and --version always). */
enum {
	TOOL_OPT_OUTPUT = 1 << 0,
	TOOL_OPT_INVALID = 1 << 1,
	TOOL_OPT_DEAD_LETTER = 1 << 2,
	TOOL_OPT_NS = 1 << 3,
	TOOL_OPT_STATS = 1 << 4,
	TOOL_OPT_ONCE = 1 << 5,
	/* Not an option: tool_each_frame keeps expired messages from the
	 * tool (msg-format(5), Expires), diverting them to --dead-letter. */
	TOOL_EXPIRES = 1 << 6,
	/* Raw inputs that may be inbox:DIR: --include, --exclude,
	 * --max-files, --recursive (tool_inbox_options). */
	TOOL_OPT_INBOX = 1 << 7,
};

struct tool_counter {
	const char *name;
	uint64_t n;
};

struct tool {
	/* Set by the tool before tool_parse(). */
	const char *usage;		/* "usage: msg-x ..." (may be several lines) */
	const char *shortopts;
	/* Options end at the first operand (msg-exec: what follows is a
	 * command line of its own). */
	int options_first;
	const struct option *longopts;	/* the tool's own, may be NULL */
	unsigned common;		/* TOOL_OPT_* */
	/* Handles one of the tool's own options; returns -1 for a usage error
	 * (after tool_usage_error or with a message of its own). */
	int (*option)(struct tool *t, int opt, const char *arg);
	/*
	 * Optional: the end of an input batch, for a tool that keeps state
	 * (a store) which must be committed before what it wrote is made
	 * durable and its inputs are deleted. tool_each_frame and
	 * tool_each_raw call it once a batch that holds a message ends:
	 * every SPOOL_CLAIMS_MAX dir: messages, before any wait for input
	 * (for a stream, before a read that may block, possibly while the
	 * tool is reading a body), and at the end of each input; then the
	 * outputs are made durable, then the batch is done (dir: files
	 * deleted). It returns 0, or the exit status (sysexits) the tool
	 * ends with after its own diagnostic: the batch is then neither
	 * made durable nor done, and its dir: files stay in cur/ for the
	 * next reader. A tool that has one and dies (die()) leaves its
	 * batch in cur/ too, whatever the status.
	 */
	int (*batch_end)(struct tool *t);
	/* Optional: the tool stops at a message it cannot process (65):
	 * what it holds for the messages before (msg-exec's children) is
	 * finished and written first, as a stop at bad data promises. */
	void (*before_data_exit)(struct tool *t);
	/* Optional: on every exit, what the tool holds whole outside its
	 * frame writers (msg-unwrap -d's files written and not yet named)
	 * is put out, as the writers' whole frames are. */
	void (*flush_whole)(struct tool *t);
	void *ctx;

	/* Filled by tool_parse() and tool_open_outputs(). */
	const char *output_addr;	/* default "-" */
	const char *invalid_addr;	/* NULL: stop at the first invalid message */
	const char *dead_letter_addr;
	char **ns;			/* PREFIX=URI strings from --ns */
	size_t nns;
	int stats;
	int once;
	struct inbox_options inbox;	/* with TOOL_OPT_INBOX */
	struct frame_writer *out;
	struct frame_writer *invalid;
	struct frame_writer *dead_letter;	/* with TOOL_EXPIRES */
	struct frame_writer **more;	/* tool_add_output's, in order */
	size_t nmore;

	struct tool_counter *counters;	/* NULL-name-terminated, for --stats */
	struct frame_reader *current;	/* the input being read, for messages */
};

/* Program name, exit hook, locale-free setup. */
void tool_init(struct tool *t, int argc, char **argv);
/* Parse the command line; returns the index of the first operand. */
int tool_parse(struct tool *t, int argc, char **argv);
_Noreturn void tool_usage_error(struct tool *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Open the main output (stdout or --output), --invalid and, for a tool
 * with TOOL_EXPIRES, --dead-letter, in that order. */
void tool_open_outputs(struct tool *t);
/* Open a further output channel, dying with exit 73 if it cannot be. */
struct frame_writer *tool_open_output(const char *addr);
/* The same for a channel of the tool's own (msg-aggregate --partial):
 * tool_finish flushes and closes it, checked, with the others. */
struct frame_writer *tool_add_output(struct tool *t, const char *addr);

/*
 * Call fn once per frame of every input operand (default "-"), in order.
 * fn reads (or skips) the body through the reader and returns 0, or -1
 * after a reader fault, which ends the tool with the reader's diagnostic.
 * With TOOL_EXPIRES, an expired message never reaches fn: it goes to
 * --dead-letter with "Error: PROGNAME: message expired", or is dropped
 * with a warning, and is counted as "in" and "expired"; one with an
 * Expires that is not a time is invalid.
 */
typedef int (*tool_frame_fn)(struct tool *t, struct frame_reader *fr,
			     struct headers *h);
void tool_each_frame(struct tool *t, int nargs, char **args, tool_frame_fn fn);

/*
 * Call fn once per raw input operand (default stdin): "-" is stdin, PATH
 * a file, dir:PATH a spool whose every file is one input, claimed oldest
 * first and deleted once the outputs for it are flushed, as for frames.
 * fn gets the open descriptor, a name for diagnostics and the file's base
 * name for a File-Name header (NULL for stdin). An operand that cannot be
 * opened, or is a directory, ends the tool with exit 66.
 */
typedef void (*tool_raw_fn)(struct tool *t, int fd, const char *name,
			    const struct headers *file_headers);
void tool_each_raw(struct tool *t, int nargs, char **args, tool_raw_fn fn);

/*
 * Operands read at once rather than one after another (input-poll.h):
 * fn gets each frame of addr, as tool_each_frame's does; flags are
 * input_poll_add's. The tool drives input_poll_round and _wait.
 */
struct input_poll;
struct input_poll *tool_poll_new(struct tool *t);
void tool_poll_add(struct tool *t, struct input_poll *p, const char *addr,
		   tool_frame_fn fn, unsigned flags);

/* Open an input operand for reading, dying with exit 66 if it cannot be. */
int tool_open_input(const char *addr);
/* End the tool on a reader fault with its diagnostic and exit status. */
_Noreturn void tool_reader_failed(struct frame_reader *fr);
/* End the tool on a writer fault: "cannot write 'ADDR': reason", exit 74. */
_Noreturn void tool_writer_failed(struct frame_writer *fw);
/* Write one whole frame to fw, or end the tool on a write error: 0, or
 * -1 when its header block would be over the limit, with nothing written
 * and the reason appended to why (the message is invalid). */
int tool_write(struct frame_writer *fw, const struct headers *h,
	       const void *body, size_t len, struct buf *why);

/* The frame in hand as bytes: its header block as read into block, its
 * body into body (frame_reader_body's result), so that it can be written
 * again byte for byte (tool_write_block). */
int tool_read_block(struct frame_reader *fr, struct buf *block, struct buf *body);
/* The same for a frame kept as bytes: its header block as read
 * (frame_reader_header_block), written byte for byte unless
 * $MSG_HISTORY asks for Message-History. */
int tool_write_block(struct frame_writer *fw, const char *block, size_t n,
		     const void *body, size_t len, struct buf *why);

/*
 * An invalid message (well framed, but it cannot be processed). With
 * --invalid it is written there with "Error: PROGNAME: reason" (cut so
 * the frame fits, see frame_set_error) and a warning line names it on
 * stderr (tool_warn_diverted); without, the message is named and refused
 * (tool_refuse: a spool file is set aside, else the tool exits 65).
 * Returns 0 either way.
 */
int tool_invalid(struct tool *t, struct headers *h, const void *body,
		 size_t len, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
/* Without --invalid: name the message and refuse it (tool_refuse). */
void tool_invalid_refuse(struct tool *t, const struct headers *h,
			 const char *reason);
/* The same for a body the caller then writes to t->invalid, ending the
 * frame itself: 1 when this began it there, 0 when the message was
 * refused (nothing to write). */
int tool_invalid_begin(struct tool *t, struct headers *h, uint64_t len,
		       const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/*
 * The warning for a message diverted to --invalid, one line, the same for
 * every tool so it can be grepped from a cron mail:
 *   PROGNAME: warning: message ID[: File-Name NAME]: REASON: diverted to 'ADDR'
 * ("message without Message-Id" when it has none).
 */
void tool_warn_diverted(struct tool *t, const struct headers *h,
			const char *reason);

/*
 * The message in hand cannot be processed and there is no --invalid: the
 * diagnostic names it. Read from a dir: spool, its file is set aside in
 * DIR/bad/ once the tool is done with it (the tool carries on as if the
 * message had been diverted) and the run goes on; from any other input
 * the tool exits 65 now.
 */
void tool_refuse(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/*
 * The exit status the inputs call for at the end of a run that went on:
 * 74 when a spool entry could not be read, claimed or set aside, 65 when
 * a file was set aside, else 0.
 */
int tool_inputs_status(void);
/*
 * The machine, not the message, failed (MSG_NO_MEMORY): the tool exits 70
 * naming the message, after flushing the output for earlier ones; a dir:
 * input keeps the message for a retry instead of setting it aside.
 */
_Noreturn void tool_no_memory(struct tool *t, struct headers *h,
			      const char *reason);
/* The same with the exit status given: a message the tool cannot set
 * aside without losing others with it (EX_DATAERR). */
_Noreturn void tool_stop_at(struct tool *t, const struct headers *h,
			    int status, const char *reason);

/* Count one in the counter called name, if the tool keeps one. */
void tool_count(struct tool *t, const char *name);
/* The counter called name (it must exist in t->counters). */
uint64_t *tool_counter(struct tool *t, const char *name);
/* Option arguments (tool-args.c), each a usage error naming what (the
 * option) when it is not what it should be: a positive count, a
 * positive duration (ms), a positive size (bytes), or one of words (its
 * index; the message names the first). */
uint64_t tool_arg_count(struct tool *t, const char *what, const char *arg);
int64_t tool_arg_duration(struct tool *t, const char *what, const char *arg);
uint64_t tool_arg_size(struct tool *t, const char *what, const char *arg);
int tool_arg_choice(struct tool *t, const char *what, const char *arg,
		    const char *const *words);

/* The options of TOOL_OPT_INBOX (tool-args.c), and their handler: 1 when
 * opt was one of them, else 0. */
extern const struct option tool_inbox_options[];
int tool_inbox_option(struct tool *t, int opt, const char *arg);

/* Flush and close every output, print --stats; exits 74 on a write error. */
void tool_finish(struct tool *t);

#endif
