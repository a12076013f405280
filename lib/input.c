/*
 * input: the input side of every tool (input.h): operands in order, dir:
 * claims and their deletion, set-aside files.
 */
#include "input.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "channel.h"
#include "diag.h"
#include "io.h"
#include "spool.h"

/*
 * A tool stopping at a message it cannot process (exit 65) would stop at
 * it again on every run if it stayed in the spool: it is set aside in
 * DIR/bad/, where it waits for whoever mends the flow.
 */
static void set_aside_claimed(struct input *in)
{
	struct buf where = BUF_INIT;

	if (spool_set_aside(in->claimed, &where) == 0) {
		warnx_msg("'%s' set aside as '%s'", in->claimed_name, where.ptr);
		in->set_aside++;
	} else {
		warn_errno("cannot set '%s' aside; it stays in the spool",
			   in->claimed_name);
		in->left_in_spool++;
	}
	buf_release(&where);
}

void input_before_exit(struct input *in, int code)
{
	if (in->claimed && code == EX_DATAERR) {
		set_aside_claimed(in);
		/* The messages read before it are done: their outputs are out. */
		if (frame_writers_flush_all() == 0)
			spool_done(in->claimed);
	}
}

void input_refuse(struct input *in, const char *line)
{
	if (!in->claimed)
		die(EX_DATAERR, "%s", line);
	warnx_msg("%s", line);
	in->claimed_refused = 1;
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
static int each_frame_of(struct input *in, int fd, const char *name,
			 struct headers *h, int spooled)
{
	struct frame_reader fr;
	int r = 0, stopped = 0;

	frame_reader_init(&fr, fd, name);
	while (!(stopped = io_stop_requested && !spooled) && !in->claimed_refused &&
	       (r = frame_reader_next(&fr, h)) > 0) {
		if (spooled && frame_whole(&fr, fd) < 0) {
			r = -1;
			break;
		}
		if (in->ops->frame(in->ctx, &fr, h) < 0)
			reader_failed(&fr);
	}
	if (r < 0 && spooled && frame_reader_exit_code(&fr) == EX_DATAERR) {
		if (!in->ops->divert_file(in->ctx, fd, name, frame_reader_error(&fr)))
			input_refuse(in, frame_reader_error(&fr));
		r = 0;
	}
	if (r < 0)
		reader_failed(&fr);
	frame_reader_release(&fr);
	return !stopped;	/* at its end, or refused: done with */
}

/*
 * What to do with one claimed spool file: 1 when it was read to its end,
 * 0 when a stop request came first.
 */
typedef int (*claimed_fn)(struct input *in, int fd, const char *display,
			  const char *file_name, void *arg);

/* The claimed files are done once what the tool wrote for them is out of
 * its buffers (and, for dir: outputs, durable): then they are deleted. */
static void finish_claimed(struct spool *sp, const char *addr)
{
	if (frame_writers_flush_all() < 0) {
		struct frame_writer *fw = frame_writers_failed();
		if (fw)
			die(EX_IOERR, "cannot write '%s': %s", fw->name,
			    strerror(fw->err));
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
static void report_entry(struct input *in, struct spool *sp, const char *addr,
			 int found, struct spool_entry *e)
{
	struct buf at = BUF_INIT;

	buf_addf(&at, "%s/%s/%s", addr, e->dir, e->name.ptr);
	if (e->kind)
		warnx_msg("'%s' is %s, not a regular file", at.ptr, e->kind);
	if (found == SPOOL_SET_ASIDE) {
		warnx_msg("'%s' set aside as '%s'", at.ptr, e->where.ptr);
		in->set_aside++;
	} else {
		in->left_in_spool++;
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
static void each_claimed(struct input *in, const char *addr, claimed_fn fn,
			 void *arg)
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
		found = spool_claim(sp, held ? 0 : !in->once, &e);
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
			report_entry(in, sp, addr, found, &e);
			continue;
		}
		held++;
		buf_reset(&display);
		buf_addf(&display, "%s/cur/%s", addr, e.name.ptr);
		in->claimed = sp;
		in->claimed_name = display.ptr;
		in->claimed_refused = 0;
		if (!fn(in, e.fd, display.ptr, e.name.ptr, arg)) {
			/* Stopped before its end: leave it for the next reader. */
			in->claimed = NULL;
			spool_release(sp);
			break;
		}
		if (in->claimed_refused) {
			set_aside_claimed(in);
			in->claimed_refused = 0;
			held--;
		}
		in->claimed = NULL;
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

static int frames_of_claimed(struct input *in, int fd, const char *display,
			     const char *file_name, void *arg)
{
	(void)file_name;
	return each_frame_of(in, fd, display, arg, 1);
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
	for (int i = 0; i < nargs && !io_stop_requested; i++) {
		int fd;

		if (!strncmp(args[i], "dir:", 4)) {
			each_claimed(in, args[i], frames_of_claimed, &h);
			continue;
		}
		fd = input_open(args[i]);
		each_frame_of(in, fd, channel_display(args[i], 0), &h, 0);
		if (fd != STDIN_FILENO)
			close(fd);
	}
	headers_release(&h);
}

static int raw_of_claimed(struct input *in, int fd, const char *display,
			  const char *file_name, void *arg)
{
	(void)arg;
	in->ops->raw(in->ctx, fd, display, file_name);
	return 1;	/* a raw file is read whole, stop request or not */
}

void input_each_raw(struct input *in, const struct input_ops *ops,
		    void *ctx, int nargs, char **args)
{
	in->ops = ops;
	in->ctx = ctx;
	if (nargs == 0)
		ops->raw(ctx, STDIN_FILENO, "stdin", NULL);
	for (int i = 0; i < nargs && !io_stop_requested; i++) {
		const char *path = args[i];
		struct stat st;
		int fd;

		if (!strcmp(path, "-")) {
			ops->raw(ctx, STDIN_FILENO, "stdin", NULL);
			continue;
		}
		if (!strncmp(path, "dir:", 4)) {
			each_claimed(in, path, raw_of_claimed, NULL);
			continue;
		}
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			die_errno(EX_NOINPUT, "cannot open '%s'", path);
		if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode))
			die(EX_NOINPUT, "cannot open '%s': Is a directory", path);
		{
			char *copy = xstrdup(path);
			ops->raw(ctx, fd, path, basename(copy));
			free(copy);
		}
		close(fd);
	}
}
