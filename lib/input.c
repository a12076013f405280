/*
 * input: the input side of every tool. Operands are read one after
 * another: frames from "-", PATH and fd:N, raw data for msg-wrap and
 * msg-split -r, and dir: spools, whose messages are claimed in groups and
 * deleted only once what the tool made of them is out (durably, for a
 * dir: output). Expired messages are kept from the tool, and a spool file
 * that cannot be processed is diverted or set aside, so that it does not
 * stop every reader after it.
 */
#include "tool.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "channel.h"
#include "diag.h"
#include "io.h"
#include "message.h"
#include "spool.h"

/* The dir: input message being read, and its name for diagnostics. */
static struct spool *claimed;
static const char *claimed_name;
/* It cannot be processed: set it aside once the tool is done with it. */
static int claimed_refused;
/* For the exit status: files set aside, entries left where they were. */
static unsigned long set_aside, left_in_spool;

/*
 * A tool stopping at a message it cannot process (exit 65) would stop at
 * it again on every run if it stayed in the spool: it is set aside in
 * DIR/bad/, where it waits for whoever mends the flow.
 */
static void set_aside_claimed(void)
{
	struct buf where = BUF_INIT;

	if (spool_set_aside(claimed, &where) == 0) {
		warnx_msg("'%s' set aside as '%s'", claimed_name, where.ptr);
		set_aside++;
	} else {
		warn_errno("cannot set '%s' aside; it stays in the spool", claimed_name);
		left_in_spool++;
	}
	buf_release(&where);
}

void tool_inputs_before_exit(int code)
{
	if (claimed && code == EX_DATAERR) {
		set_aside_claimed();
		/* The messages read before it are done: their outputs are out. */
		if (frame_writers_flush_all() == 0)
			spool_done(claimed);
	}
}

void tool_refuse(const char *fmt, ...)
{
	va_list ap;
	char line[4096];

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (!claimed)
		die(EX_DATAERR, "%s", line);
	warnx_msg("%s", line);
	claimed_refused = 1;
}

int tool_inputs_status(void)
{
	if (left_in_spool)
		return EX_IOERR;
	return set_aside ? EX_DATAERR : 0;
}

void tool_count(struct tool *t, const char *name)
{
	if (t->counters)
		for (struct tool_counter *c = t->counters; c->name; c++)
			if (!strcmp(c->name, name))
				c->n++;
}

/* The body of the frame in hand, streamed to fw after h. */
static int copy_frame(struct frame_reader *fr, const struct headers *h,
		      struct frame_writer *fw)
{
	const char *p;
	size_t n;
	int r;

	if (frame_writer_begin(fw, h, frame_reader_body_length(fr)) < 0)
		tool_writer_failed(fw);
	while ((r = frame_reader_chunk(fr, &p, &n)) > 0)
		if (frame_writer_body(fw, p, n) < 0)
			tool_writer_failed(fw);
	if (r == 0 && frame_writer_end(fw) < 0)
		tool_writer_failed(fw);
	return r;
}

/*
 * An expired message is never processed (msg-format(5), Expires): 1 when
 * the message in hand was one and has been dealt with here, 0 when the
 * tool is to process it, -1 on a reader fault.
 */
static int divert_expired(struct tool *t, struct frame_reader *fr, struct headers *h)
{
	int expired = message_expired(h);
	struct buf why = BUF_INIT;

	if (expired == 0)
		return 0;
	tool_count(t, "in");
	if (expired < 0) {
		struct buf body = BUF_INIT;
		int r = frame_reader_body(fr, &body);
		if (r == 0)
			tool_invalid(t, h, body.ptr, body.len, "invalid Expires '%s'",
				     headers_get(h, "Expires"));
		buf_release(&body);
		return r < 0 ? -1 : 1;
	}
	tool_count(t, "expired");
	if (!t->dead_letter) {
		const char *id = headers_get(h, "Message-Id");
		warnx_msg("message expired; message %s dropped", id ? id : "(without Message-Id)");
		return frame_reader_skip(fr) < 0 ? -1 : 1;
	}
	buf_addf(&why, "%s: message expired", progname);
	frame_set_error(h, frame_reader_body_length(fr), why.ptr);
	buf_release(&why);
	return copy_frame(fr, h, t->dead_letter) < 0 ? -1 : 1;
}

/*
 * A spool file that is not well framed goes to --invalid whole, as the
 * body of a message of its own: its bytes cannot be told apart into
 * headers and body, but they are one message, and nothing of it is lost.
 */
static void divert_file(struct tool *t, int fd, const char *reason)
{
	struct headers h;
	struct buf err = BUF_INIT;
	struct stat st;
	char chunk[1 << 16];
	off_t at = 0;

	if (fstat(fd, &st) < 0)
		die_errno(EX_IOERR, "cannot read '%s'", claimed_name);
	headers_init(&h);
	message_stamp(&h);
	headers_set(&h, "Content-Type", "application/octet-stream");
	buf_addf(&err, "%s: %s", progname, reason);
	headers_set(&h, "Error", err.ptr);
	tool_warn_diverted(t, &h, reason);
	if (frame_writer_begin(t->invalid, &h, (uint64_t)st.st_size) < 0)
		tool_writer_failed(t->invalid);
	while (at < st.st_size) {
		ssize_t n = pread(fd, chunk, sizeof(chunk), at);
		if (n <= 0)
			die_errno(EX_IOERR, "cannot read '%s'", claimed_name);
		if (n > st.st_size - at)	/* grown meanwhile: not ours */
			n = st.st_size - at;
		if (frame_writer_body(t->invalid, chunk, (size_t)n) < 0)
			tool_writer_failed(t->invalid);
		at += n;
	}
	if (frame_writer_end(t->invalid) < 0)
		tool_writer_failed(t->invalid);
	tool_count(t, "invalid");
	headers_release(&h);
	buf_release(&err);
}

/*
 * A spool file holds all there is of its frames, so one cut short or
 * with a Content-Length that does not match is known before its body is
 * handed to the tool, which then never fails in the middle of one: 0
 * when the frame in hand is whole, -1 with the reader's error when not.
 */
static int frame_whole(struct frame_reader *fr, int fd)
{
	/* Where the frame's final LF must be: its header block, then body. */
	uint64_t lf_at = fr->frame_offset + fr->block_len + frame_reader_body_length(fr);
	struct stat st;
	char c;

	if (fstat(fd, &st) == 0 && (uint64_t)st.st_size > lf_at &&
	    pread(fd, &c, 1, (off_t)lf_at) == 1 && c == '\n')
		return 0;
	/* The reader reads on to the fault and names it as it would. */
	return frame_reader_skip(fr) < 0 ? -1 : 0;
}

/*
 * The frames of one open input, until its end (1) or a stop request (0).
 * A spooled file is read to its end even then: it is the message in hand.
 * A framing error in one goes with the whole file to --invalid, or the
 * file is set aside; the spool goes on either way.
 */
static int each_frame_of(struct tool *t, int fd, const char *name,
			 struct headers *h, tool_frame_fn fn, int spooled)
{
	struct frame_reader fr;
	int r = 0, stopped = 0;

	frame_reader_init(&fr, fd, name);
	t->current = &fr;
	while (!(stopped = io_stop_requested && !spooled) && !claimed_refused &&
	       (r = frame_reader_next(&fr, h)) > 0) {
		int done;

		if (spooled && frame_whole(&fr, fd) < 0) {
			r = -1;
			break;
		}
		done = (t->common & TOOL_EXPIRES) ? divert_expired(t, &fr, h) : 0;
		if (done < 0 || (!done && fn(t, &fr, h) < 0))
			tool_reader_failed(&fr);
	}
	if (r < 0 && spooled && frame_reader_exit_code(&fr) == EX_DATAERR) {
		if (t->invalid)
			divert_file(t, fd, frame_reader_error(&fr));
		else
			tool_refuse("%s", frame_reader_error(&fr));
		r = 0;
	}
	if (r < 0)
		tool_reader_failed(&fr);
	t->current = NULL;
	frame_reader_release(&fr);
	return !stopped;	/* at its end, or refused: done with */
}

/*
 * What to do with one claimed spool file: 1 when it was read to its end,
 * 0 when a stop request came first.
 */
typedef int (*claimed_fn)(struct tool *t, int fd, const char *display,
			  const char *file_name, void *arg);

/* The claimed files are done once what the tool wrote for them is out of
 * its buffers (and, for dir: outputs, durable): then they are deleted. */
static void finish_claimed(struct spool *sp, const char *addr)
{
	if (frame_writers_flush_all() < 0) {
		struct frame_writer *fw = frame_writers_failed();
		if (fw)
			tool_writer_failed(fw);
		die(EX_IOERR, "cannot write output: %s", strerror(errno));
	}
	if (spool_done(sp) < 0)
		die_errno(EX_IOERR, "cannot remove a message of '%s'", addr);
}

/*
 * Say what the spool met that is not a message: an entry set aside (65
 * at the end) or left where it was (74 at the end). A spool on a
 * read-only file system can have nothing claimed: it ends the tool now.
 */
static void report_entry(struct spool *sp, const char *addr, int found,
			 struct spool_entry *e)
{
	struct buf at = BUF_INIT;

	buf_addf(&at, "%s/%s/%s", addr, e->dir, e->name.ptr);
	if (e->kind)
		warnx_msg("'%s' is %s, not a regular file", at.ptr, e->kind);
	if (found == SPOOL_SET_ASIDE) {
		warnx_msg("'%s' set aside as '%s'", at.ptr, e->where.ptr);
		set_aside++;
	} else {
		left_in_spool++;
		errno = e->err;
		if (e->err == EROFS) {
			finish_claimed(sp, addr);
			errno = e->err;
			die_errno(EX_IOERR, "cannot %s '%s'", e->action, at.ptr);
		}
		if (!strcmp(e->action, "set aside"))
			warn_errno("cannot set '%s' aside; it stays in the spool", at.ptr);
		else
			warn_errno("cannot %s '%s'", e->action, at.ptr);
	}
	buf_release(&at);
}

/*
 * A dir: input: claim files oldest first, and delete them only once what
 * the tool wrote for them is out: a crash in between means they are read
 * again, never lost. Up to SPOOL_CLAIMS_MAX are processed before their
 * outputs are flushed together (one sync of a dir: output for them all),
 * and never while the tool waits for more. A file the tool cannot
 * process, and an entry that is not a regular file, is set aside and
 * the spool goes on. With --once, stop when the directory is empty.
 */
static void each_claimed(struct tool *t, const char *addr, claimed_fn fn, void *arg)
{
	struct buf err = BUF_INIT, display = BUF_INIT;
	struct spool_entry e = SPOOL_ENTRY_INIT;
	struct spool *sp = spool_open(addr + 4, 0, &err);
	size_t held = 0;
	int found;

	if (!sp)
		die(EX_NOINPUT, "%s", err.ptr);
	while (!io_stop_requested) {
		/* What the held messages made goes out before any wait. */
		found = spool_claim(sp, held ? 0 : !t->once, &e);
		if (found < 0) {
			int saved = errno;
			finish_claimed(sp, addr);
			errno = saved;
			die_errno(EX_IOERR, "cannot read '%s'", addr);
		}
		if (found == SPOOL_NONE) {
			if (!held)
				break;
			finish_claimed(sp, addr);
			held = 0;
			continue;
		}
		if (found != SPOOL_MESSAGE) {
			report_entry(sp, addr, found, &e);
			continue;
		}
		held++;
		buf_reset(&display);
		buf_addf(&display, "%s/cur/%s", addr, e.name.ptr);
		claimed = sp;
		claimed_name = display.ptr;
		claimed_refused = 0;
		if (!fn(t, e.fd, display.ptr, e.name.ptr, arg)) {
			/* Stopped before its end: leave it for the next reader. */
			claimed = NULL;
			spool_release(sp);
			break;
		}
		if (claimed_refused) {
			set_aside_claimed();
			claimed_refused = 0;
			held--;
		}
		claimed = NULL;
		if (held == SPOOL_CLAIMS_MAX) {
			finish_claimed(sp, addr);
			held = 0;
		}
	}
	finish_claimed(sp, addr);
	spool_close(sp);
	spool_entry_release(&e);
	buf_release(&err);
	buf_release(&display);
}

struct frames_of {
	struct headers *h;
	tool_frame_fn fn;
};

static int frames_of_claimed(struct tool *t, int fd, const char *display,
			     const char *file_name, void *arg)
{
	struct frames_of *f = arg;

	(void)file_name;
	return each_frame_of(t, fd, display, f->h, f->fn, 1);
}

void tool_each_frame(struct tool *t, int nargs, char **args, tool_frame_fn fn)
{
	static char *stdin_only[] = { "-" };
	struct headers h;
	struct frames_of f = { &h, fn };

	if (nargs == 0) {
		nargs = 1;
		args = stdin_only;
	}
	headers_init(&h);
	for (int i = 0; i < nargs && !io_stop_requested; i++) {
		int fd;

		if (!strncmp(args[i], "dir:", 4)) {
			each_claimed(t, args[i], frames_of_claimed, &f);
			continue;
		}
		fd = tool_open_input(args[i]);
		each_frame_of(t, fd, channel_display(args[i], 0), &h, fn, 0);
		if (fd != STDIN_FILENO)
			close(fd);
	}
	headers_release(&h);
}

struct raw_of {
	tool_raw_fn fn;
};

static int raw_of_claimed(struct tool *t, int fd, const char *display,
			  const char *file_name, void *arg)
{
	struct raw_of *r = arg;

	r->fn(t, fd, display, file_name);
	return 1;	/* a raw file is read whole, stop request or not */
}

void tool_each_raw(struct tool *t, int nargs, char **args, tool_raw_fn fn)
{
	struct raw_of r = { fn };

	if (nargs == 0)
		fn(t, STDIN_FILENO, "stdin", NULL);
	for (int i = 0; i < nargs && !io_stop_requested; i++) {
		const char *path = args[i];
		struct stat st;
		int fd;

		if (!strcmp(path, "-")) {
			fn(t, STDIN_FILENO, "stdin", NULL);
			continue;
		}
		if (!strncmp(path, "dir:", 4)) {
			each_claimed(t, path, raw_of_claimed, &r);
			continue;
		}
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			die_errno(EX_NOINPUT, "cannot open '%s'", path);
		if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode))
			die(EX_NOINPUT, "cannot open '%s': Is a directory", path);
		{
			char *copy = xstrdup(path);
			fn(t, fd, path, basename(copy));
			free(copy);
		}
		close(fd);
	}
}

