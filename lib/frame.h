/*
 * frame: reading and writing the message frame of msg-format(5):
 * a header block, an empty line, Content-Length bytes of body, one LF.
 *
 * struct frame_reader owns a read buffer over one input descriptor. It
 * parses one header block at a time and hands the body out either whole
 * (frame_reader_body) or as chunks that point into its buffer
 * (frame_reader_chunk), so a body of any size passes in constant memory.
 * Every framing fault is reported with its byte offset and, when one was
 * read, the Message-Id; the stream cannot be resynchronised after one.
 *
 * struct frame_writer owns an output buffer over one output descriptor.
 * Frames are written whole: on a FIFO, pipe or regular file (which other
 * writers may share) an exclusive POSIX record lock (fcntl F_SETLKW) is
 * held from the first byte of a frame to its last, so frames from several
 * processes never interleave. Errors
 * are sticky: after one, every call fails with the same errno.
 */
#ifndef MSG_FRAME_H
#define MSG_FRAME_H

#include <stdint.h>
#include <stddef.h>

#include "buf.h"
#include "header.h"
#include "sizes.h"

enum frame_error {
	FRAME_ERR_NONE,
	FRAME_ERR_FORMAT,	/* bad data: exit 65 */
	FRAME_ERR_IO,		/* read(2) failed: exit 74 */
};

struct frame_reader {
	int fd;
	char *name;		/* how diagnostics name this input */
	char *buf;
	size_t cap, pos, end;
	uint64_t base;		/* stream offset of buf[0] */
	int eof;
	int may_wait;		/* reads can block: flush outputs before */
	int borrowed;		/* buf is the caller's (frame_reader_init_mem) */
	void (*before_wait)(void *arg);	/* instead of flushing them */
	void *before_wait_arg;
	int in_body;		/* body (or its final LF) not yet consumed */
	uint64_t body_len, body_left;
	uint64_t frame_offset;
	size_t block_len;	/* of the current header block, ending at pos */
	uint64_t frames;	/* frames whose header block was read */
	char msgid[80];		/* Message-Id of the current frame, for errors */
	/* Where the lines of the header block end (their LFs, from the
	 * block's start), as its end was found: the parse then need not
	 * look for them again. A block of more lines looks for the rest. */
	uint16_t line_end[16];
	size_t lines;
	int block_clean;	/* the block holds no CR and no NUL */
	/* Bytes read ahead of buf (frame_reader_read_ahead), handed to the
	 * parser before the descriptor is read again; where that reading
	 * ended (an end of input, or the errno of a failed read). */
	struct buf ahead;
	size_t ahead_pos;
	int ahead_eof, ahead_err;
	enum frame_error err_kind;
	struct buf err;		/* "NAME: offset N: what" */
};

/* name is copied; fd is not closed by release. */
void frame_reader_init(struct frame_reader *fr, int fd, const char *name);
/* A reader of the n bytes at p, which stay the caller's and unchanged
 * until the reader is released; their end is the end of input. */
void frame_reader_init_mem(struct frame_reader *fr, const char *p, size_t n,
			   const char *name);
/* Before a read(2) that may block, call fn(arg) instead of
 * frame_writers_flush_all() (the input loop ends its batch there). */
static inline void frame_reader_before_wait(struct frame_reader *fr,
					    void (*fn)(void *arg), void *arg)
{
	fr->before_wait = fn;
	fr->before_wait_arg = arg;
}
void frame_reader_release(struct frame_reader *fr);

/*
 * Read the next header block into h (reset first). Any unread part of the
 * previous body is skipped. Returns 1 for a frame, 0 at a clean end of
 * input, -1 on a fault (see frame_reader_error()).
 */
int frame_reader_next(struct frame_reader *fr, struct headers *h);
/* The whole body into out (replacing its content): 0 or -1. */
int frame_reader_body(struct frame_reader *fr, struct buf *out);
/*
 * The next piece of the body: 1 with *p, *n pointing into the reader's
 * buffer (valid until the next call), 0 when the body and its LF are
 * consumed, -1 on a fault.
 */
int frame_reader_chunk(struct frame_reader *fr, const char **p, size_t *n);
int frame_reader_skip(struct frame_reader *fr);
/*
 * Read what the descriptor holds now (poll(2) said it is readable) into
 * memory beside the buffer, to be parsed later, for an input whose writer
 * must not wait on this reader: the answers of a loop, read while an
 * output of the same loop waits for its reader. Holds no more than max
 * bytes unparsed. 1 when bytes came, 0 when nothing more can be read
 * ahead (the end of input or of a failed read, which the parser meets
 * after the bytes before it, or max reached). Never moves the buffer.
 */
int frame_reader_read_ahead(struct frame_reader *fr, size_t max);
/* Are bytes, or an end, waiting to be parsed without a read(2)? */
static inline int frame_reader_buffered(const struct frame_reader *fr)
{
	return fr->pos < fr->end || fr->ahead.len > fr->ahead_pos ||
	       fr->ahead_eof || fr->ahead_err;
}
/*
 * The current frame whole, as read (header block, body and the LF after
 * it), when it fits the buffer: 1 with *p, *n pointing into the buffer
 * (valid until the next call), the frame consumed. 0 when it is larger
 * than the buffer, its body was begun, or it is not whole (cut short or
 * of the wrong length): nothing consumed, and frame_reader_chunk reads it
 * (and reports its fault). -1 on a read error.
 */
int frame_reader_whole(struct frame_reader *fr, const char **p, size_t *n);
/* The current frame's header block exactly as read, blank line included;
 * valid after frame_reader_next() until the body is read. */
void frame_reader_header_block(const struct frame_reader *fr, const char **p,
			       size_t *n);
static inline uint64_t frame_reader_body_length(const struct frame_reader *fr)
{
	return fr->body_len;
}
static inline const char *frame_reader_error(const struct frame_reader *fr)
{
	return fr->err.ptr;
}
/* 65 for a framing fault, 74 for a read error. */
int frame_reader_exit_code(const struct frame_reader *fr);
/* Does this look like raw data rather than a message stream? (For hints.) */
int frame_looks_raw(const char *p, size_t n);

struct channel_sink;

struct frame_writer {
	int fd;			/* where the bytes of the open frame go */
	struct channel_sink *sink;	/* delivers them (channel.h) */
	int separate_frames;	/* the sink's: each frame goes alone */
	int tolerated;		/* its failure is the tool's to handle */
	int durable_by_tool;	/* not made durable on the way out (below) */
	char *name;
	struct buf out;
	int lock;		/* lock per frame (shared FIFO, pipe or file) */
	int locked;
	int in_frame;
	size_t frame_start;	/* where in out the open frame begins */
	uint64_t body_left;
	int err;		/* sticky errno, 0 while healthy */
	uint64_t frames;
	struct frame_writer *next_registered;
};

/* A writer to the descriptor fd, which it does not close; name is copied. */
void frame_writer_init(struct frame_writer *fw, int fd, const char *name);
/* A writer to a sink of any channel kind (channel.h), which it owns; fd
 * is the sink's descriptor between frames, or -1 when it has none. */
void frame_writer_init_sink(struct frame_writer *fw, struct channel_sink *sink,
			    int fd, const char *name);
/* Frees the sink (see frame_writer_close). */
void frame_writer_release(struct frame_writer *fw);

/*
 * Start a frame: the headers of h in order, with Content-Length set to
 * body_len (any Content-Length in h is ignored) and, when $MSG_HISTORY is
 * set, its value appended to Message-History. Then body_len bytes through
 * frame_writer_body and frame_writer_end. All return 0 or -1 (errno).
 * A header block over FRAME_HEADER_MAX is refused with EMSGSIZE and
 * nothing written: that message is invalid (frame_header_too_big says
 * why), the writer goes on.
 */
int frame_writer_begin(struct frame_writer *fw, const struct headers *h,
		       uint64_t body_len);
/* Start a frame with a header block given as bytes (from
 * frame_reader_header_block), so a frame passes byte for byte. */
int frame_writer_begin_raw(struct frame_writer *fw, const char *block,
			   size_t n, uint64_t body_len);
int frame_writer_body(struct frame_writer *fw, const void *p, size_t n);
int frame_writer_end(struct frame_writer *fw);
int frame_writer_write(struct frame_writer *fw, const struct headers *h,
		       const void *body, size_t len);
/* Write bytes as they are, outside any frame (raw output of msg-unwrap). */
int frame_writer_raw(struct frame_writer *fw, const void *p, size_t n);
/* Write one complete frame given as bytes (a copy of one read). */
int frame_writer_whole(struct frame_writer *fw, const char *frame, size_t n);
int frame_writer_flush(struct frame_writer *fw);
/* Can fw's frames be named and found again (a dir: spool)? Then the next
 * frame is named id, and a frame of that id left unpublished by a writer
 * that died is taken up to publish: 1, 0 (none), -1 (channel.h). */
int frame_writer_nameable(const struct frame_writer *fw);
void frame_writer_name_next(struct frame_writer *fw, const char *id);
int frame_writer_adopt(struct frame_writer *fw, const char *id);
/* Flush, make what was written durable, close the sink: 0 or -1 (errno). */
int frame_writer_close(struct frame_writer *fw);

/* The header block of (h, body_len) as frame_writer_begin writes it. */
void frame_format_header(struct buf *out, const struct headers *h,
			 uint64_t body_len);
/* The size of that block. */
size_t frame_header_size(const struct headers *h, uint64_t body_len);
/* Append why (h, body_len) cannot be written: the block's size and its
 * longest header, named. */
void frame_header_too_big(struct buf *why, const struct headers *h,
			  uint64_t body_len);
/*
 * Set Error to text on a message being diverted, so that it can always be
 * written: the text is cut (ending in "...") to the room the block has.
 * If the message's own headers leave no room even for a short reason,
 * the longest ones are removed, each named in the Error text.
 */
void frame_set_error(struct headers *h, uint64_t body_len, const char *text);
/* A header block as read (frame_reader_header_block) with header name
 * set to value: every line of name removed, one line added before
 * Content-Length (or the blank line); the other lines byte for byte. */
void frame_block_set(struct buf *out, const char *block, size_t n,
		     const char *name, const char *value);
/* Is $MSG_HISTORY set (so frames do not pass byte for byte)? */
int frame_history_on(void);

/*
 * The output batch is durable: every writer that exists writes out its
 * buffered whole frames and has its sink make them durable (channel.h,
 * make_durable). Readers call this before a read(2) that may block, so a
 * message never waits in an output buffer while the tool waits for
 * input; the inputs before they delete a dir: batch. Returns -1 if any
 * writer has failed.
 */
int frame_writers_flush_all(void);
/* The first writer that has failed, or NULL; tolerated ones aside. */
struct frame_writer *frame_writers_failed(void);
/* A writer the tool can go on without (msg-route --on-error
 * skip-channel): its failure no longer fails frame_writers_flush_all,
 * and the tool finds it when it next writes to it, or closes it. */
static inline void frame_writer_tolerate(struct frame_writer *fw)
{
	fw->tolerated = 1;
}
/* A writer whose frames the tool makes durable only once its state says
 * so (msg-dedupe's named frames: published after their keys are
 * committed): the way out after an error leaves them unpublished. */
static inline void frame_writer_durable_by_tool(struct frame_writer *fw)
{
	fw->durable_by_tool = 1;
}
/* On the way out after an error: write what is buffered of whole frames
 * only, so no output ends in a frame cut short by the error. */
void frame_writers_flush_whole(void);

#endif
