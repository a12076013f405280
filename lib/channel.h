/*
 * channel: the addresses of msg-tools(7) where messages are read and
 * written: "-" (stdin or stdout), "fd:N" (an inherited descriptor),
 * "dir:PATH" (a spool directory), "amqp://..." (a queue or exchange on
 * a broker, amqp-addr.h) and any other string, a PATH (a FIFO,
 * opened as one, or a regular file, created if missing and appended to);
 * and delivery to each kind, behind one interface a frame writer writes
 * to (struct channel_sink), so that a new kind changes neither the
 * writer nor the tools.
 */
#ifndef MSG_CHANNEL_H
#define MSG_CHANNEL_H

#include "buf.h"
#include "frame.h"
#include "header.h"

enum channel_kind {
	CHANNEL_STDIO,
	CHANNEL_FD,
	CHANNEL_PATH,
	CHANNEL_DIR,
	CHANNEL_AMQP,
};

struct channel_addr {
	enum channel_kind kind;
	const char *path;	/* PATH, the directory of dir:, an amqp: address */
	int fd;			/* fd:N, or 0/1 for "-" */
};

/* 0, or -1 with a reason in err (the address is malformed). */
int channel_parse(const char *addr, struct channel_addr *out, struct buf *err);
/* How diagnostics name the channel: "stdin", "stdout", "fd:3", the path. */
const char *channel_display(const char *addr, int for_writing);

/*
 * The exit status for a channel that failed with err, otherwise when the
 * failure says nothing of the kind: 75 (try again later) when a broker
 * could not be reached, went away or refused a message for now, 69 when
 * it has nowhere to route a message (no such queue or exchange).
 */
int channel_failure_status(int err, int otherwise);

/* Open for reading: the descriptor, or -1 with the reason in err. */
int channel_open_read(const char *addr, struct buf *err);
/* Open for writing: the descriptor, or -1 with the reason in err. A FIFO
 * open blocks until its reader opens it. */
int channel_open_write(const char *addr, struct buf *err);

/*
 * The output side of a channel kind. A frame writer buffers, locks and
 * keeps its errors; it writes each frame's bytes to the descriptor the
 * sink gives it, and the sink delivers them as its kind does:
 *
 *   begin_frame   a frame starts: the descriptor for its bytes (a
 *                 stream's one descriptor, a spool's new file), or -1
 *   end_frame     all its bytes are written: deliver it (a spool commits
 *                 the file), 0 or -1
 *   abort_frame   give the open frame up: none of it is delivered
 *   make_durable  every frame ended so far is as durable as the kind
 *                 makes it (a spool publishes into new/ and syncs it; a
 *                 stream has nothing beyond what write(2) did), 0 or -1
 *   close         no more frames: 0, or -1 when closing lost data
 *   free          the sink's memory, and whatever it still holds (a
 *                 spool removes what it never published)
 *
 * All set errno on failure. A kind whose frames each go alone (a file,
 * a broker message) sets separate_frames: the writer writes each frame
 * out whole before end_frame and refuses bytes outside frames. A kind
 * that takes frames from memory (take_frame, below) has neither
 * begin_frame nor end_frame.
 */
struct channel_sink;
struct channel_out_ops {
	int separate_frames;
	int (*begin_frame)(struct channel_sink *s);
	int (*end_frame)(struct channel_sink *s);
	void (*abort_frame)(struct channel_sink *s);
	int (*make_durable)(struct channel_sink *s);
	int (*close)(struct channel_sink *s);
	void (*free)(struct channel_sink *s);
	/* Optional, for a kind whose frames can be found again by a name
	 * (a spool): the next frame is named id; a frame named id that a
	 * writer which died left unpublished is taken up (1), or there is
	 * none (0), or -1 (spool_name_next, spool_adopt). */
	void (*name_next)(struct channel_sink *s, const char *id);
	int (*adopt)(struct channel_sink *s, const char *id);
	/* Optional, for a kind that sends a frame's bytes on from memory
	 * (a broker, which needs a message whole to publish it): each frame
	 * is held in the writer's buffer, however large, and handed over
	 * whole, n bytes at frame; then begin_frame and end_frame are not
	 * called and the writer has no descriptor. 0, or -1 with errno. */
	int (*take_frame)(struct channel_sink *s, const char *frame, size_t n);
};
/* What every kind's sink starts with. */
struct channel_sink {
	const struct channel_out_ops *ops;
	/* The sink said its failure on stderr itself, exactly (a broker's
	 * reason, the message named): the writer's is not said again. */
	int failure_said;
};

/* A stream: frames written to fd, one after another; owns_fd: the sink
 * closes it (not inherited ones). */
struct channel_sink *channel_stream_sink(int fd, int owns_fd);
struct spool;
/* A dir: spool: each frame one file (spool.h); the sink owns the spool. */
struct channel_sink *channel_spool_sink(struct spool *sp);
/* An amqp: queue or exchange, connected: NULL with the reason in err and
 * errno as channel_failure_status reads it. */
struct channel_sink *channel_amqp_sink(const char *addr, struct buf *err);

/* Open addr as a frame writer, any kind including dir: (0, or -1 with the
 * reason in err). Used by every tool's outputs. */
int channel_writer_open(const char *addr, struct frame_writer *fw,
			struct buf *err);

/*
 * The input side of a channel kind: the sources of messages one operand
 * holds, handed out one at a time, and what becomes of them.
 *
 *   next       the next source: a stream hands out its one descriptor
 *              once; a spool claims its oldest file, waiting for one if
 *              wait is set. Says what it found (below), -1 with errno
 *              when the channel itself cannot be read
 *   done       the sources handed out so far are finished with, their
 *              outputs durable: a spool deletes its claims; a stream has
 *              nothing to do (its bytes were consumed by reading)
 *   set_aside  the source in hand cannot be processed (why says what
 *              was wrong): a spool moves it to bad/, an inbox to its
 *              failed directory with the reason beside it (where says as
 *              what), 0 or -1; NULL for a kind that cannot, whose tool
 *              exits 65 instead
 *   release    give the source in hand back unread, for the next reader
 *   close      done with the channel, and its memory
 *   wait_fd    for a reader of several channels at once (poll(2)), a
 *              kind with no descriptor of its own to wait on (a spool):
 *              one that becomes readable when next may find more, or
 *              -1 to look again every little while; NULL for a stream,
 *              whose source's descriptor is waited on
 *
 * A new kind (an inbox directory, a broker queue) implements these and
 * nothing that reads through them changes.
 */
enum channel_found {
	CHANNEL_NONE,		/* nothing (more): the end, or asked to stop */
	CHANNEL_MESSAGE,	/* a source, open for reading */
	CHANNEL_SET_ASIDE,	/* not a message: moved away unopened */
	CHANNEL_SKIPPED,	/* not readable: left where it is */
	CHANNEL_PASSED,		/* not a message, named once and left where
				 * it is: no fault of the run (an inbox) */
	CHANNEL_REPEATED,	/* a source taken before as it is, done with
				 * unread, with the batch (an inbox's
				 * --idempotent) */
};

struct channel_source {
	int fd;
	const char *name;	/* for diagnostics: "stdin", "dir:D/cur/N" */
	/* What a raw source's messages say of its file (File-Name, and
	 * more for an inbox), or NULL (stdin, a FIFO, fd:N). */
	const struct headers *file_headers;
	/* It holds all of its message (a spool file): it is read to its end
	 * even when the tool is asked to stop, and a framing fault is the
	 * fault of this one message. */
	int whole;
	/* A whole source held in memory (a broker's delivery), fd -1: its
	 * bytes, valid until the next call on the channel. */
	const char *mem;
	size_t mem_len;
	/* CHANNEL_SET_ASIDE, _SKIPPED and _PASSED, about the entry in name */
	const char *kind;	/* what it is, "a directory", or NULL */
	const char *where;	/* SET_ASIDE: where it went */
	const char *action;	/* SKIPPED: what failed: "read", "claim"... */
	int err;		/* SKIPPED: errno */
};

struct channel_in;
struct channel_in_ops {
	int (*next)(struct channel_in *in, int wait, struct channel_source *src);
	int (*done)(struct channel_in *in);
	int (*set_aside)(struct channel_in *in, const char *why,
			 struct buf *where);
	void (*release)(struct channel_in *in);
	void (*close)(struct channel_in *in);
	int (*wait_fd)(struct channel_in *in);
};
/* What every kind's input starts with. */
struct channel_in {
	const struct channel_in_ops *ops;
	/* The kind said why next failed on stderr itself, exactly (a
	 * broker's reason): the input's "cannot read" is not said again. */
	int failure_said;
};

/*
 * Open addr for reading, its kind chosen here once: NULL with the reason
 * in err. With raw set, a PATH is a file read whole as one message (a
 * directory refused) rather than a stream of frames.
 */
struct channel_in *channel_in_open(const char *addr, int raw, struct buf *err);
/* The kinds: a stream over fd, named name (file_name for raw files);
 * a dir: spool at addr. */
struct channel_in *channel_stream_in(int fd, const char *name,
				     const char *file_name);
struct channel_in *channel_spool_in(const char *addr, struct buf *err);
/* An amqp: queue, consumed: NULL with the reason in err and errno as
 * channel_failure_status reads it. */
struct channel_in *channel_amqp_in(const char *addr, struct buf *err);
/* An inbox:DIR (inbox.h), its files chosen as opt says. */
struct inbox_options;
struct channel_in *channel_inbox_in(const char *addr,
				    const struct inbox_options *opt,
				    struct buf *err);

#endif
