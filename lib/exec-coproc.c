/*
 * exec-coproc: msg-exec --coprocess: the command started once and spoken
 * to in frames, request frames on its stdin and one reply frame per
 * request on its stdout, in order. Requests are written ahead of the
 * replies (up to a window), so that a program that stays up costs a
 * write and a read per message rather than a process.
 *
 * When it dies, or writes what is not a frame, or the oldest request
 * waits longer than --timeout, the request in hand (the oldest without
 * a reply) fails, or is tried again under the retry rules; the requests
 * behind it go to the next process, started at once after a failure, or
 * after --retry-delay (doubling up to --retry-max) when the request in
 * hand is to be tried again, as a command run per message would wait.
 */
#include "exec-coproc.h"

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "clock.h"
#include "diag.h"
#include "io.h"
#include "sizes.h"

/* Requests written ahead of their replies. */
#define WINDOW 256

struct exec_coproc {
	struct exec_opt opt;
	char **argv, **envp;
	void (*done)(void *ctx, struct exec_job *j);
	void *ctx;
	pid_t pid;
	int pidfd, in_fd, out_fd, err_fd;	/* -1 when not running */
	struct buf inq;		/* request bytes not yet written */
	size_t inq_off;
	struct buf outq;	/* reply bytes not yet taken */
	struct exec_job *jobs[WINDOW];	/* waiting for a reply, in order */
	size_t njobs;
	int64_t progress;	/* when the last reply came, or the start */
	struct buf err_line, last_err;
	struct exec_pool_counts counts;
	int term_sent;
	int64_t kill_at;
	int64_t restart_at;	/* no process until then (a retry), 0: none */
};

struct exec_coproc *exec_coproc_new(const struct exec_opt *o, char **argv,
				    char **envp,
				    void (*done)(void *ctx, struct exec_job *j),
				    void *ctx)
{
	struct exec_coproc *c = xcalloc(1, sizeof(*c));

	c->opt = *o;
	c->argv = argv;
	c->envp = envp;
	c->done = done;
	c->ctx = ctx;
	c->pidfd = c->in_fd = c->out_fd = c->err_fd = -1;
	buf_init(&c->inq, 0);
	buf_init(&c->outq, 0);
	buf_init(&c->err_line, 0);
	buf_init(&c->last_err, 0);
	return c;
}

const struct exec_pool_counts *exec_coproc_counts(const struct exec_coproc *c)
{
	return &c->counts;
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

static void queue_request(struct exec_coproc *c, const struct exec_job *j)
{
	buf_add(&c->inq, j->block.ptr, j->block.len);
	buf_add(&c->inq, j->body.ptr, j->body.len);
	buf_addch(&c->inq, '\n');
}

/* Start the process and write it every request in hand: 0 or -1. */
static int start(struct exec_coproc *c)
{
	if (exec_spawn(c->opt.path, c->argv, c->envp, &c->pid, &c->in_fd,
		       &c->out_fd, &c->err_fd) < 0)
		return -1;
	c->pidfd = exec_pidfd(c->pid);
	c->counts.runs++;
	c->term_sent = 0;
	c->kill_at = 0;
	c->progress = clock_now_ms();
	buf_reset(&c->inq);
	buf_reset(&c->outq);
	buf_reset(&c->last_err);
	c->inq_off = 0;
	for (size_t i = 0; i < c->njobs; i++)
		queue_request(c, c->jobs[i]);
	return 0;
}

static void err_line(void *ctx, const char *p, size_t n)
{
	struct exec_coproc *c = ctx;

	warnx_msg("%s: %.*s", c->argv[0], (int)n, p);
	if (n) {
		buf_reset(&c->last_err);
		buf_add(&c->last_err, p, n);
	}
}

/* The head job is answered (out holds its frame): handed back. */
static void answered(struct exec_coproc *c, const char *frame, size_t n)
{
	struct exec_job *j = c->jobs[0];

	buf_reset(&j->out);
	buf_add(&j->out, frame, n);
	j->end = EXEC_EXITED;
	j->status = 0;
	j->state = EXEC_JOB_FINAL;
	memmove(c->jobs, c->jobs + 1, (c->njobs - 1) * sizeof(*c->jobs));
	c->njobs--;
	c->progress = clock_now_ms();
	c->done(c->ctx, j);
	exec_job_free(j);
}

/*
 * Is a whole frame at the start of p[0..n)? Its length (1), 0 when more
 * must come, -1 with why when it is not a frame.
 */
static int whole_frame(const char *p, size_t n, size_t *len, struct buf *why)
{
	uint64_t body = 0;
	int have = 0;

	for (size_t at = 0; at < n; ) {
		const char *nl = memchr(p + at, '\n', n - at);
		size_t line;
		if (!nl)
			break;
		line = (size_t)(nl - (p + at));
		if (line == 0 || (line == 1 && p[at] == '\r')) {
			size_t end = at + line + 1;
			if (!have) {
				buf_addstr(why, "a frame without Content-Length");
				return -1;
			}
			if (n - end < body + 1)
				return 0;
			if (p[end + body] != '\n') {
				buf_addstr(why, "a frame whose body does not end where Content-Length says");
				return -1;
			}
			*len = end + (size_t)body + 1;
			return 1;
		}
		if (line > 15 && !strncasecmp(p + at, "Content-Length:", 15)) {
			have = sscanf(p + at + 15, " %" SCNu64, &body) == 1;
		}
		at += line + 1;
	}
	if (n > FRAME_HEADER_MAX) {
		buf_addstr(why, "a header block over 64 KiB");
		return -1;
	}
	return 0;
}

/* Stop the process: TERM to its group now, KILL after --kill-after. */
static void stop(struct exec_coproc *c, int64_t now)
{
	if (c->term_sent)
		return;
	kill(-c->pid, SIGTERM);
	c->term_sent = 1;
	c->kill_at = now + c->opt.kill_after;
}

/* Take the whole reply frames read so far: 0, or -1 when the process
 * wrote what is not a frame (it is stopped). */
static int take_replies(struct exec_coproc *c, int64_t now)
{
	struct buf why = BUF_INIT;
	size_t off = 0, len;
	int r;

	while (c->njobs &&
	       (r = whole_frame(c->outq.ptr + off, c->outq.len - off, &len, &why)) == 1) {
		answered(c, c->outq.ptr + off, len);
		off += len;
	}
	memmove(c->outq.ptr, c->outq.ptr + off, c->outq.len - off);
	buf_setlen(&c->outq, c->outq.len - off);
	if (why.len || (!c->njobs && c->outq.len)) {
		buf_reset(&c->last_err);
		buf_addf(&c->last_err, "coprocess wrote %s", why.len ? why.ptr :
			 "a frame no request asked for");
		stop(c, now);
		buf_release(&why);
		return -1;
	}
	buf_release(&why);
	return 0;
}

/* Asked to stop: what has no reply is cut short, not failed. */
static void cut_short(struct exec_coproc *c)
{
	for (size_t i = 0; i < c->njobs; i++)
		exec_job_free(c->jobs[i]);
	c->counts.cut_short += c->njobs;
	c->njobs = 0;
}

/* The process is gone (status from waitpid): the head request fails or
 * waits to be tried again, and a new process takes the rest. */
static int died(struct exec_coproc *c, int st)
{
	struct exec_job *j = c->njobs ? c->jobs[0] : NULL;
	int64_t delay;

	close_fd(&c->in_fd), close_fd(&c->out_fd), close_fd(&c->err_fd);
	close_fd(&c->pidfd);
	if (c->err_line.len)
		exec_lines(&c->err_line, "", 0, 1, err_line, c);
	if (io_stop_requested) {
		cut_short(c);
		return 0;
	}
	if (!j)
		return 0;
	j->by_signal = WIFSIGNALED(st);
	j->end = WIFSIGNALED(st) ? EXEC_SIGNALED : EXEC_EXITED;
	j->status = WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st);
	if (c->term_sent && c->opt.timeout &&
	    clock_now_ms() - c->progress >= c->opt.timeout) {
		j->end = EXEC_TIMED_OUT;
		c->counts.timed_out++;
	}
	buf_reset(&j->last_err);
	buf_add(&j->last_err, c->last_err.ptr, c->last_err.len);
	buf_reset(&j->out);
	if (j->end == EXEC_EXITED && j->status == 0)
		j->end = EXEC_NO_REPLY;	/* a failure all the same */
	if (!j->last_err.len)
		buf_addf(&j->last_err, "coprocess ended (%s %d) before its reply",
			 j->by_signal ? "signal" : "exit status", j->status);
	if ((delay = exec_retry_delay(&c->opt, j))) {
		/* The next process, the retry and the requests behind it,
		 * waits for the delay (step starts it). */
		j->attempt++;
		c->counts.retried++;
		c->restart_at = clock_now_ms() + delay;
		return 0;
	}
	j->state = EXEC_JOB_FINAL;
	memmove(c->jobs, c->jobs + 1, (c->njobs - 1) * sizeof(*c->jobs));
	c->njobs--;
	c->done(c->ctx, j);
	exec_job_free(j);
	if (!c->njobs || io_stop_requested)
		return 0;
	return start(c);
}

static void pump_in(struct exec_coproc *c)
{
	ssize_t n = write(c->in_fd, c->inq.ptr + c->inq_off, c->inq.len - c->inq_off);

	if (n > 0)
		c->inq_off += (size_t)n;
	if (c->inq_off == c->inq.len) {
		buf_reset(&c->inq);
		c->inq_off = 0;
	}
	if (n < 0 && errno != EAGAIN && errno != EINTR)
		close_fd(&c->in_fd);	/* it closed its stdin: it will die */
}

/* Read what a pipe holds: 0 at its end (closed), 1 otherwise. */
static int pump_out(struct exec_coproc *c, int *fd, int is_err)
{
	char chunk[65536];
	ssize_t n;

	while ((n = read(*fd, chunk, sizeof(chunk))) > 0) {
		if (is_err)
			exec_lines(&c->err_line, chunk, (size_t)n, 0, err_line, c);
		else
			buf_add(&c->outq, chunk, (size_t)n);
	}
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return 1;
	close_fd(fd);
	return 0;
}

/* One round of waiting and moving bytes: 0, or -1 (errno). */
static int step(struct exec_coproc *c)
{
	struct pollfd fds[4];
	int n = 0, st, timeout = -1;
	int64_t now = clock_now_ms(), next = 0;

	if (c->pid <= 0) {
		if (io_stop_requested) {
			cut_short(c);
			return 0;
		}
		if (now < c->restart_at) {
			poll(NULL, 0, (int)(c->restart_at - now));
			return 0;
		}
		c->restart_at = 0;
		if (start(c) < 0)
			return -1;
	}
	n = exec_poll_fds(c->inq_off < c->inq.len ? c->in_fd : -1, c->out_fd,
			  c->err_fd, c->pidfd, fds);
	if (c->kill_at)
		next = c->kill_at;
	else if (c->opt.timeout && c->njobs)
		next = c->progress + c->opt.timeout;
	if (c->pidfd < 0 && (!next || next > now + 50))
		next = now + 50;
	if (next)
		timeout = next <= now ? 0 : (int)(next - now);
	poll(fds, (nfds_t)n, timeout);
	now = clock_now_ms();
	for (int i = 0; i < n; i++) {
		if (!fds[i].revents)
			continue;
		if (fds[i].fd == c->in_fd)
			pump_in(c);
		else if (fds[i].fd == c->out_fd)
			pump_out(c, &c->out_fd, 0);
		else if (fds[i].fd == c->err_fd)
			pump_out(c, &c->err_fd, 1);
	}
	take_replies(c, now);
	if (c->kill_at && now >= c->kill_at) {
		kill(-c->pid, SIGKILL);
		c->kill_at = 0;
	} else if (!c->term_sent && c->opt.timeout && c->njobs &&
		   now - c->progress >= c->opt.timeout) {
		stop(c, now);
	}
	if (waitpid(c->pid, &st, WNOHANG) != c->pid)
		return 0;
	if (c->out_fd >= 0)
		pump_out(c, &c->out_fd, 0);
	if (c->err_fd >= 0)
		pump_out(c, &c->err_fd, 1);
	take_replies(c, now);
	c->pid = 0;
	return died(c, st);
}

int exec_coproc_submit(struct exec_coproc *c, struct exec_job *j)
{
	while (c->njobs == WINDOW)
		if (step(c) < 0)
			return -1;
	j->attempt = 1;
	j->state = EXEC_JOB_RUNNING;
	c->jobs[c->njobs++] = j;
	if (c->pid > 0)
		queue_request(c, j);
	else if (!c->restart_at && start(c) < 0)
		return -1;	/* else the process waits to start for a retry */
	/* Move bytes once they make a pipe's worth. */
	while (c->inq.len - c->inq_off >= 65536)
		if (step(c) < 0)
			return -1;
	return 0;
}

int exec_coproc_drain(struct exec_coproc *c)
{
	while (c->njobs) {
		if (io_stop_requested && !c->term_sent && c->pid > 0)
			stop(c, clock_now_ms());
		if (step(c) < 0)
			return -1;
	}
	return 0;
}

void exec_coproc_end(struct exec_coproc *c)
{
	/* At the end of its input it ends; given --kill-after, then not. */
	close_fd(&c->in_fd);
	while (c->pid > 0) {
		int st;
		int64_t deadline = clock_now_ms() + c->opt.kill_after;
		while (waitpid(c->pid, &st, WNOHANG) != c->pid) {
			if (clock_now_ms() >= deadline) {
				kill(-c->pid, SIGKILL);
				waitpid(c->pid, &st, 0);
				break;
			}
			poll(NULL, 0, 10);
		}
		c->pid = 0;
	}
	close_fd(&c->out_fd), close_fd(&c->err_fd), close_fd(&c->pidfd);
	cut_short(c);
}

void exec_coproc_free(struct exec_coproc *c)
{
	if (!c)
		return;
	exec_coproc_end(c);
	buf_release(&c->inq);
	buf_release(&c->outq);
	buf_release(&c->err_line);
	buf_release(&c->last_err);
	free(c);
}
