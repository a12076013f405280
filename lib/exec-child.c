/*
 * exec-child: one run of msg-exec's command (exec.h). The child gets the
 * body on its stdin, our pipes on its stdout and stderr, and nothing
 * else of ours: descriptors 3 and up are closed for it, and the signals
 * msg-exec catches or ignores are back to their defaults. It leads a
 * process group of its own, so that a timeout stops whatever it started.
 *
 * Its end is seen on a pidfd (poll(2) says when it exits), not on its
 * pipes reaching EOF: a grandchild that keeps them open must not hold
 * the reply back. What it wrote before it exited is in the pipes and is
 * read out then.
 */
#include "exec.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "diag.h"

/* Signals msg-exec catches or ignores, which the child must not inherit
 * that way (an ignored SIGPIPE would stay ignored across exec). */
static const int reset_signals[] = { SIGPIPE, SIGTERM, SIGINT, SIGHUP, SIGCHLD };

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

int exec_spawn(const char *path, char **argv, char **envp, pid_t *pid,
	       int *in_fd, int *out_fd, int *err_fd)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	sigset_t none, dflt;
	int in[2], out[2], err[2], r;

	if (pipe2(in, O_CLOEXEC) < 0)
		return -1;
	if (pipe2(out, O_CLOEXEC) < 0) {
		close(in[0]), close(in[1]);
		return -1;
	}
	if (pipe2(err, O_CLOEXEC) < 0) {
		close(in[0]), close(in[1]), close(out[0]), close(out[1]);
		return -1;
	}
	sigemptyset(&none);
	sigemptyset(&dflt);
	for (size_t i = 0; i < sizeof(reset_signals) / sizeof(*reset_signals); i++)
		sigaddset(&dflt, reset_signals[i]);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, in[0], 0);
	posix_spawn_file_actions_adddup2(&fa, out[1], 1);
	posix_spawn_file_actions_adddup2(&fa, err[1], 2);
	/* Whatever we inherited without close-on-exec stays ours. */
	posix_spawn_file_actions_addclosefrom_np(&fa, 3);
	posix_spawnattr_init(&at);
	posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK |
				      POSIX_SPAWN_SETSIGDEF);
	posix_spawnattr_setpgroup(&at, 0);
	posix_spawnattr_setsigmask(&at, &none);
	posix_spawnattr_setsigdefault(&at, &dflt);
	r = posix_spawn(pid, path, &fa, &at, argv, envp);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
	close(in[0]), close(out[1]), close(err[1]);
	if (r) {
		close(in[1]), close(out[0]), close(err[0]);
		errno = r;
		return -1;
	}
	*in_fd = in[1];
	*out_fd = out[0];
	*err_fd = err[0];
	fcntl(*in_fd, F_SETFL, O_NONBLOCK);
	fcntl(*out_fd, F_SETFL, O_NONBLOCK);
	fcntl(*err_fd, F_SETFL, O_NONBLOCK);
	return 0;
}

void exec_lines(struct buf *pending, const char *p, size_t n, int at_end,
		void (*line)(void *ctx, const char *p, size_t n), void *ctx)
{
	const char *nl;

	buf_add(pending, p, n);
	while ((nl = memchr(pending->ptr, '\n', pending->len))) {
		size_t len = (size_t)(nl - pending->ptr);
		line(ctx, pending->ptr, len && nl[-1] == '\r' ? len - 1 : len);
		memmove(pending->ptr, nl + 1, pending->len - len - 1);
		buf_setlen(pending, pending->len - len - 1);
	}
	/* A line too long to wait for, or the last one, unterminated. */
	if ((at_end && pending->len) || pending->len > 4096) {
		line(ctx, pending->ptr, pending->len);
		buf_reset(pending);
	}
}

int exec_child_start(struct exec_child *c, struct exec_job *j,
		     const struct exec_opt *o, int64_t now)
{
	memset(c, 0, sizeof(*c));
	c->job = j;
	c->in_fd = c->out_fd = c->err_fd = c->pidfd = -1;
	buf_reset(&j->out);
	buf_reset(&j->last_err);
	if (exec_spawn(o->path, j->argv, j->envp, &c->pid, &c->in_fd, &c->out_fd,
		       &c->err_fd) < 0)
		return -1;
	buf_init(&c->err_line, 0);
	c->pidfd = exec_pidfd(c->pid);
	if (!j->body.len)
		close_fd(&c->in_fd);
	if (o->timeout)
		c->term_at = now + o->timeout;
	return 0;
}

int exec_pidfd(pid_t pid)
{
	int fd = (int)syscall(SYS_pidfd_open, pid, 0);

	if (fd >= 0)
		fcntl(fd, F_SETFD, FD_CLOEXEC);
	return fd;
}

int exec_poll_fds(int in_fd, int out_fd, int err_fd, int pidfd,
		  struct pollfd *fds)
{
	int n = 0;

	if (in_fd >= 0)
		fds[n++] = (struct pollfd){ .fd = in_fd, .events = POLLOUT };
	if (out_fd >= 0)
		fds[n++] = (struct pollfd){ .fd = out_fd, .events = POLLIN };
	if (err_fd >= 0)
		fds[n++] = (struct pollfd){ .fd = err_fd, .events = POLLIN };
	if (pidfd >= 0)
		fds[n++] = (struct pollfd){ .fd = pidfd, .events = POLLIN };
	return n;
}

int exec_child_poll(const struct exec_child *c, struct pollfd *fds)
{
	return exec_poll_fds(c->in_fd, c->out_fd, c->err_fd, c->pidfd, fds);
}

int64_t exec_child_deadline(const struct exec_child *c)
{
	if (c->kill_at)
		return c->kill_at;
	return c->term_at;
}

static void signal_group(struct exec_child *c, int sig)
{
	kill(-c->pid, sig);
}

void exec_child_stop(struct exec_child *c, const struct exec_opt *o,
		     int64_t now, enum exec_end why)
{
	if (c->killed_for)
		return;
	c->killed_for = why;
	if (why == EXEC_OVER_OUTPUT) {
		signal_group(c, SIGKILL);
		return;
	}
	signal_group(c, SIGTERM);
	c->term_at = 0;
	c->kill_at = now + o->kill_after;
}

/* The body into the child's stdin, as much as the pipe takes. A child
 * that closed its stdin is not an error: it did not want the rest. */
static void feed(struct exec_child *c)
{
	const struct buf *b = &c->job->body;
	ssize_t n = write(c->in_fd, b->ptr + c->in_off, b->len - c->in_off);

	if (n > 0)
		c->in_off += (size_t)n;
	if ((n < 0 && errno != EAGAIN && errno != EINTR) || c->in_off == b->len)
		close_fd(&c->in_fd);
}

/* A whole line of the child's stderr: passed on, named by the request;
 * the last non-empty one kept for the reply's Error. */
static void err_line(void *ctx, const char *p, size_t n)
{
	struct exec_child *c = ctx;

	warnx_msg("%s: %.*s", c->job->id, (int)n, p);
	if (n) {
		buf_reset(&c->job->last_err);
		buf_add(&c->job->last_err, p, n);
	}
}

static void take_err(struct exec_child *c, const char *p, size_t n, int at_end)
{
	exec_lines(&c->err_line, p, n, at_end, err_line, c);
}

/* What a pipe holds now: 1 while open, 0 once at its end (closed). */
static int drain(struct exec_child *c, int *fd, int is_out,
		 const struct exec_opt *o, int64_t now)
{
	char chunk[65536];
	ssize_t n;

	while ((n = read(*fd, chunk, sizeof(chunk))) > 0) {
		if (!is_out) {
			take_err(c, chunk, (size_t)n, 0);
			continue;
		}
		if (c->job->out.len + (size_t)n > o->max_output) {
			exec_child_stop(c, o, now, EXEC_OVER_OUTPUT);
			close_fd(fd);
			return 0;
		}
		buf_add(&c->job->out, chunk, (size_t)n);
	}
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return 1;
	if (!is_out)
		take_err(c, "", 0, 1);
	close_fd(fd);
	return 0;
}

/* Has the child exited? Reaped then, its status in its job. */
static int reap(struct exec_child *c)
{
	int st;
	pid_t r = waitpid(c->pid, &st, WNOHANG);

	if (r != c->pid)
		return 0;
	c->reaped = 1;
	c->job->by_signal = WIFSIGNALED(st);
	if (WIFSIGNALED(st)) {
		c->job->end = EXEC_SIGNALED;
		c->job->status = WTERMSIG(st);
	} else {
		c->job->end = EXEC_EXITED;
		c->job->status = WEXITSTATUS(st);
	}
	if (c->killed_for)
		c->job->end = (enum exec_end)c->killed_for;
	return 1;
}

/* The child is gone: what its pipes hold now is its output; a
 * grandchild that keeps them open is not waited for. */
static void finish(struct exec_child *c, const struct exec_opt *o, int64_t now)
{
	/* Stopped, and gone before its SIGKILL was due: what it started and
	 * left in its group (a grandchild deaf to SIGTERM) goes now, not
	 * after us. */
	if (c->killed_for && c->kill_at)
		signal_group(c, SIGKILL);
	if (c->out_fd >= 0)
		drain(c, &c->out_fd, 1, o, now);
	if (c->err_fd >= 0)
		drain(c, &c->err_fd, 0, o, now);
	if (c->err_line.len)
		take_err(c, "", 0, 1);
	close_fd(&c->in_fd);
	close_fd(&c->out_fd);
	close_fd(&c->err_fd);
	close_fd(&c->pidfd);
	buf_release(&c->err_line);
}

int exec_child_step(struct exec_child *c, const struct pollfd *fds, int n,
		    const struct exec_opt *o, int64_t now)
{
	for (int i = 0; i < n; i++) {
		if (!fds[i].revents)
			continue;
		if (fds[i].fd == c->in_fd)
			feed(c);
		else if (fds[i].fd == c->out_fd)
			drain(c, &c->out_fd, 1, o, now);
		else if (fds[i].fd == c->err_fd)
			drain(c, &c->err_fd, 0, o, now);
	}
	if (c->term_at && now >= c->term_at)
		exec_child_stop(c, o, now, EXEC_TIMED_OUT);
	else if (c->kill_at && now >= c->kill_at) {
		signal_group(c, SIGKILL);
		c->kill_at = 0;
	}
	if (!reap(c))
		return 0;
	finish(c, o, now);
	return 1;
}
