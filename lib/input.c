/*
 * input: the input side of every tool (input.h): operands in order, each
 * read through its channel kind (channel.h, struct channel_in), in
 * batches that end with the tool's batch_end, durable outputs and the
 * batch done; sources that cannot be processed set aside.
 */
#include "input.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "channel.h"
#include "diag.h"
#include "input-parts.h"
#include "io.h"
#include "spool.h"

/*
 * A tool stopping at a message it cannot process (exit 65) would stop at
 * it again on every run if it stayed where it was read: a kind that can
 * sets it aside (a spool, in DIR/bad/), where it waits for whoever mends
 * the flow.
 */
void input_set_aside_current(struct input *in)
{
	struct buf where = BUF_INIT;

	if (in->current->ops->set_aside(in->current, diag_last(), &where) == 0) {
		warnx_msg("'%s' set aside as '%s'", in->current_name, where.ptr);
		in->set_aside++;
	} else {
		warn_errno("cannot set '%s' aside; it stays in the spool",
			   in->current_name);
		in->left_in_spool++;
	}
	buf_release(&where);
}

/* Can the source in hand be set aside, so that the run goes on? */
static int can_set_aside(const struct input *in)
{
	return in->current && in->current->ops->set_aside;
}

void input_before_exit(struct input *in, int code)
{
	if (!can_set_aside(in))
		return;
	/* The source in hand is set aside only when the tool refused its
	 * data; when the machine failed (a read, memory), it goes back for
	 * the next run, never blamed on its data. */
	if (code == EX_DATAERR)
		input_set_aside_current(in);
	else
		in->current->ops->release(in->current);
	/* The sources read before it are done once their outputs are out,
	 * or the next run would deliver them again; a tool with state of
	 * its own may stop in the middle of a message, so its batch is left
	 * to be read again. */
	if (!in->ops->batch_end && frame_writers_flush_all() == 0)
		in->current->ops->done(in->current);
}

void input_refuse(struct input *in, const char *line)
{
	if (!can_set_aside(in))
		die(EX_DATAERR, "%s", line);
	warnx_msg("%s", line);
	in->current_refused = 1;
}

int input_status(const struct input *in)
{
	if (in->left_in_spool)
		return EX_IOERR;
	return in->set_aside ? EX_DATAERR : 0;
}

int input_open(const char *addr)
{
	struct buf err = BUF_INIT;
	int fd = channel_open_read(addr, &err);

	if (fd < 0)
		die(EX_NOINPUT, "%s", err.ptr);
	buf_release(&err);
	return fd;
}

static _Noreturn void reader_failed(struct frame_reader *fr)
{
	die(frame_reader_exit_code(fr), "%s", frame_reader_error(fr));
}

/* The tool's batch_end, when the batch holds a message: 0, or the tool
 * ends now with the status it chose, nothing of the batch made durable
 * or done (a crash there would leave the same). */
void input_tool_batch_end(struct input *in)
{
	int status;

	if (!in->batch_messages || !in->ops->batch_end)
		return;
	in->batch_messages = 0;
	status = in->ops->batch_end(in->ctx);
	if (status) {
		in->current = NULL;	/* nothing to set aside on the way out */
		exit(status);
	}
}

/*
 * The end of an input batch: the tool's batch_end, then every output
 * made durable, then the batch done (a spool deletes its claims). Each
 * step only after the one before succeeded: a crash or failure in
 * between means the batch is read again, never lost.
 */
void input_outputs_durable(void)
{
	if (frame_writers_flush_all() < 0) {
		struct frame_writer *fw = frame_writers_failed();

		if (fw)
			input_writer_failed(fw);
		die(EX_IOERR, "cannot write output: %s", strerror(errno));
	}
}

void input_writer_failed(const struct frame_writer *fw)
{
	int status = channel_failure_status(fw->err, EX_IOERR);

	if (fw->sink && fw->sink->failure_said)
		die_said(status);
	die(status, "cannot write '%s': %s", fw->name, strerror(fw->err));
}

static void end_batch(struct input *in, struct channel_in *ch, const char *addr)
{
	input_tool_batch_end(in);
	input_outputs_durable();
	if (ch->ops->done(ch) < 0)
		die_errno(channel_failure_status(errno, EX_IOERR),
			  "cannot finish with what was read from '%s'", addr);
}

/*
 * The reader is about to wait for input (a pipe, a FIFO): the batch ends
 * there, so that no message waits in an output buffer while the tool
 * does. A writer that failed is found when the tool next writes to it.
 */
static void before_wait(void *arg)
{
	struct input *in = arg;

	input_tool_batch_end(in);
	if (frame_writers_flush_all() == 0)
		in->current->ops->done(in->current);
}

/*
 * A source holding all of its message holds all there is of its frames,
 * so one cut short or with a Content-Length that does not match is known
 * before its body is handed to the tool, which then never fails in the
 * middle of one: 0 when the frame in hand is whole, -1 with the reader's
 * error when not.
 */
static int frame_whole(struct frame_reader *fr, const struct channel_source *src)
{
	/* Where the frame's final LF must be: its header block, then body. */
	uint64_t lf_at = fr->frame_offset + fr->block_len + frame_reader_body_length(fr);
	struct stat st;
	char c;

	if (src->mem) {
		if (lf_at < src->mem_len && src->mem[lf_at] == '\n')
			return 0;
	} else if (fstat(src->fd, &st) == 0 && (uint64_t)st.st_size > lf_at &&
		   pread(src->fd, &c, 1, (off_t)lf_at) == 1 && c == '\n') {
		return 0;
	}
	/* The reader reads on to the fault and names it as it would. */
	return frame_reader_skip(fr) < 0 ? -1 : 0;
}

/* A whole source that is not well framed goes to --invalid whole (1),
 * or is the tool's to refuse (0); one held in memory is put in a file
 * for it first. */
static int divert_source(struct input *in, const struct channel_source *src,
			 const char *reason)
{
	int fd, r;

	if (!src->mem)
		return in->ops->divert_file(in->ctx, src->fd, src->name, reason);
	fd = memfd_create("msg-source", MFD_CLOEXEC);
	if (fd < 0 || write_all(fd, src->mem, src->mem_len) < 0)
		die_errno(EX_OSERR, "cannot hold '%s' to set it aside", src->name);
	r = in->ops->divert_file(in->ctx, fd, src->name, reason);
	close(fd);
	return r;
}

/*
 * The frames of one source, until its end (1) or a stop request (0).
 * One that holds its message whole is read to its end even then: it is
 * the message in hand. A framing error in one goes with the whole file
 * to --invalid, or the file is set aside; the run goes on either way.
 */
int input_frames_of(struct input *in, const struct channel_source *src,
			 struct headers *h)
{
	struct frame_reader fr;
	int r = 0, stopped = 0;

	if (src->mem)
		frame_reader_init_mem(&fr, src->mem, src->mem_len, src->name);
	else
		frame_reader_init(&fr, src->fd, src->name);
	frame_reader_before_wait(&fr, before_wait, in);
	while (!(stopped = io_stop_requested && !src->whole) &&
	       !in->current_refused && (r = frame_reader_next(&fr, h)) > 0) {
		if (src->whole && frame_whole(&fr, src) < 0) {
			r = -1;
			break;
		}
		/* Counted once the tool is done with it: a wait inside its
		 * body (before_wait) ends the batch of the messages before
		 * it, and must leave this one in the next (msg-exec starts
		 * its child after that wait, and must wait for it at the
		 * next). */
		if (in->ops->frame(in->ctx, &fr, h) < 0)
			reader_failed(&fr);
		in->batch_messages++;
	}
	if (r < 0 && src->whole && frame_reader_exit_code(&fr) == EX_DATAERR) {
		if (!divert_source(in, src, frame_reader_error(&fr)))
			input_refuse(in, frame_reader_error(&fr));
		r = 0;
	}
	if (r < 0)
		reader_failed(&fr);
	frame_reader_release(&fr);
	return !stopped;	/* at its end, or refused: done with */
}

/*
 * Say what the channel met that is not a message: an entry set aside (65
 * at the end) or left where it was (74 at the end). A channel on a
 * read-only file system can have nothing claimed: it ends the tool now.
 */
void input_report_entry(struct input *in, struct channel_in *ch,
			 const char *addr, int found,
			 const struct channel_source *src)
{
	if (found == CHANNEL_PASSED) {
		warnx_msg("'%s' is %s, not a regular file: left where it is",
			  src->name, src->kind);
		in->passed_over++;
		return;
	}
	if (src->kind)
		warnx_msg("'%s' is %s, not a regular file", src->name, src->kind);
	if (found == CHANNEL_SET_ASIDE) {
		warnx_msg("'%s' set aside as '%s'", src->name, src->where);
		in->set_aside++;
		return;
	}
	in->left_in_spool++;
	errno = src->err;
	if (src->err == EROFS) {
		end_batch(in, ch, addr);
		errno = src->err;
		die_errno(EX_IOERR, "cannot %s '%s'", src->action, src->name);
	}
	if (!strcmp(src->action, "set aside"))
		warn_errno("cannot set '%s' aside; it stays in the spool", src->name);
	else
		warn_errno("cannot %s '%s'", src->action, src->name);
}

/* One source to its end (1), or until a stop request (0). */
static int read_source(struct input *in, const struct channel_source *src,
		       struct headers *h)
{
	if (!h) {
		/* A raw source is read whole, stop request or not. */
		in->batch_messages++;
		in->ops->raw(in->ctx, src->fd, src->name, src->file_headers);
		return 1;
	}
	return input_frames_of(in, src, h);
}

/* An inbox takes the files the tool's options say. */
static struct channel_in *open_operand(struct input *in, const char *addr,
				       int raw, struct buf *err)
{
	if (in->inbox && raw && !strncmp(addr, "inbox:", 6))
		return channel_inbox_in(addr, in->inbox, err);
	return channel_in_open(addr, raw, err);
}

/*
 * One operand: its sources in order, read as frames (h) or raw (h NULL).
 * A source is done with only once what the tool wrote for it is out: a
 * crash in between means it is read again, never lost. Up to
 * SPOOL_CLAIMS_MAX are processed before their outputs are made durable
 * together (one sync of a dir: output for them all), and never while the
 * tool waits for more. A source the tool cannot process, and an entry
 * that is not a message, is set aside where the kind can, and the run
 * goes on. With --once, stop when there is nothing more to read.
 */
static void each_source(struct input *in, const char *addr, struct headers *h)
{
	struct buf err = BUF_INIT;
	struct channel_source src;
	struct channel_in *ch = open_operand(in, addr, !h, &err);
	size_t held = 0;
	int found;

	if (!ch) {
		/* Asked to stop while the open waited (a FIFO with no writer
		 * yet): nothing was read, so the run just ends. */
		if (io_stop_requested) {
			buf_release(&err);
			return;
		}
		die(channel_failure_status(errno, EX_NOINPUT), "%s", err.ptr);
	}
	in->batch_messages = 0;
	while (!io_stop_requested) {
		/* What the held sources made goes out before any wait. */
		found = ch->ops->next(ch, held ? 0 : !in->once, &src);
		if (found < 0) {
			int saved = errno;
			end_batch(in, ch, addr);
			errno = saved;
			if (ch->failure_said)
				die_said(channel_failure_status(saved, EX_IOERR));
			die_errno(channel_failure_status(saved, EX_IOERR),
				  "cannot read '%s'", addr);
		}
		if (found == CHANNEL_NONE) {
			if (!held)
				break;
			end_batch(in, ch, addr);
			held = 0;
			continue;
		}
		if (found == CHANNEL_REPEATED) {
			/* Let go with the batch, as the files read are. */
			in->repeated++;
			held++;
			continue;
		}
		if (found != CHANNEL_MESSAGE) {
			input_report_entry(in, ch, addr, found, &src);
			continue;
		}
		held++;
		in->current = ch;
		in->current_name = src.name;
		in->current_refused = 0;
		if (!read_source(in, &src, h)) {
			/* Stopped before its end: leave it for the next reader. */
			in->current = NULL;
			ch->ops->release(ch);
			break;
		}
		if (in->current_refused) {
			input_set_aside_current(in);
			in->current_refused = 0;
			held--;
		}
		in->current = NULL;
		if (held == SPOOL_CLAIMS_MAX) {
			end_batch(in, ch, addr);
			held = 0;
		}
	}
	if (held)
		end_batch(in, ch, addr);
	ch->ops->close(ch);
	buf_release(&err);
}

void input_each_frame(struct input *in, const struct input_ops *ops,
		      void *ctx, int nargs, char **args)
{
	static char *stdin_only[] = { "-" };
	struct headers h;

	if (nargs == 0) {
		nargs = 1;
		args = stdin_only;
	}
	in->ops = ops;
	in->ctx = ctx;
	headers_init(&h);
	for (int i = 0; i < nargs && !io_stop_requested; i++)
		each_source(in, args[i], &h);
	headers_release(&h);
}

void input_each_raw(struct input *in, const struct input_ops *ops,
		    void *ctx, int nargs, char **args)
{
	static char *stdin_only[] = { "-" };

	if (nargs == 0) {
		nargs = 1;
		args = stdin_only;
	}
	in->ops = ops;
	in->ctx = ctx;
	for (int i = 0; i < nargs && !io_stop_requested; i++)
		each_source(in, args[i], NULL);
}
