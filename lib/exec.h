/*
 * exec: msg-exec's runs of a command, one per message (the Service
 * Activator): the command's process (exec-child.c), the pool that keeps
 * up to N of them going and hands results out in input order
 * (exec-pool.c), and the reply a result becomes (exec-reply.c).
 *
 * A job is one message: its argv and environment made by the caller,
 * its body for the command's stdin. Its result is the command's stdout,
 * the last line of its stderr, and how it ended.
 */
#ifndef MSG_EXEC_H
#define MSG_EXEC_H

#include <stddef.h>
#include <poll.h>
#include <stdint.h>
#include <sys/types.h>

#include "buf.h"
#include "header.h"

struct exec_opt {
	const char *path;	/* the command, resolved in PATH at start */
	unsigned parallel;	/* children at once, >= 1 */
	int unordered;		/* results as they come, not in input order */
	int64_t timeout;	/* ms, 0: none */
	int64_t kill_after;	/* ms from SIGTERM to SIGKILL */
	uint64_t max_output;	/* stdout bytes kept */
	const char *max_output_text;	/* as the user wrote it ("64M") */
	unsigned retries;	/* attempts after the first */
	int64_t retry_delay, retry_max;	/* ms */
	int retry_any;		/* any failure, not only retry_on's codes */
	const int *retry_on;	/* exit statuses that are retried */
	size_t nretry_on;
};

/* How a run ended. */
enum exec_end {
	EXEC_EXITED,		/* status is the exit status */
	EXEC_SIGNALED,		/* status is the signal */
	EXEC_TIMED_OUT,		/* killed after --timeout */
	EXEC_OVER_OUTPUT,	/* killed: stdout over --max-output */
	EXEC_STOPPED,		/* killed because msg-exec was asked to stop */
	EXEC_NO_REPLY,		/* a coprocess ended before its reply */
};

/* Where a job is in its runs. */
enum exec_job_state {
	EXEC_JOB_WAITING,	/* not started yet */
	EXEC_JOB_RUNNING,	/* an attempt under way */
	EXEC_JOB_RETRY_WAIT,	/* failed, to run again at retry_at */
	EXEC_JOB_FINAL,		/* its last attempt's result is its result */
};

struct exec_job {
	uint64_t seq;		/* input order */
	struct headers h;	/* the request's */
	struct buf block;	/* its header block as read */
	struct buf body;
	char **argv, **envp;	/* NULL-terminated, owned by the job */
	char id[96];		/* the request's Message-Id, for stderr lines */
	enum exec_job_state state;
	unsigned attempt;	/* 1, 2, ... */
	int64_t retry_at;	/* in EXEC_JOB_RETRY_WAIT, runs again then */
	/* The result of the last attempt. */
	enum exec_end end;
	int status;		/* exit status, or the signal */
	int by_signal;		/* the process ended by a signal */
	struct buf out;		/* stdout, up to max_output */
	struct buf last_err;	/* the last non-empty line of stderr */
};

struct exec_job *exec_job_new(void);
void exec_job_free(struct exec_job *j);
/* Did the last attempt succeed (exit 0)? */
int exec_job_ok(const struct exec_job *j);
/* Why it failed, appended to out ("exit status 3", "timeout after 2s",
 * or the last line of stderr). */
void exec_job_reason(const struct exec_job *j, const struct exec_opt *o,
		     struct buf *out);

/* ---- one child (exec-child.c) ---- */

struct exec_child {
	struct exec_job *job;
	pid_t pid;		/* also its process group */
	int pidfd;		/* readable when it exits, -1: poll waitpid */
	int in_fd, out_fd, err_fd;	/* -1 once closed */
	size_t in_off;
	struct buf err_line;	/* stderr's line in progress */
	int64_t term_at, kill_at;	/* 0: none */
	int killed_for;		/* the exec_end it was killed for, or 0 */
	int reaped;
};

/* Start path with argv and envp in a process group of its own, only
 * fds 0-2 its, signals at their defaults; its stdin, stdout and stderr
 * our non-blocking pipe ends. 0, or -1 with errno. */
int exec_spawn(const char *path, char **argv, char **envp, pid_t *pid,
	       int *in_fd, int *out_fd, int *err_fd);
/* pollfds for a process's pipes and pidfd (those not -1), appended to
 * fds: how many. */
int exec_poll_fds(int in_fd, int out_fd, int err_fd, int pidfd,
		  struct pollfd *fds);
/* A descriptor readable once pid exits, or -1 (then poll waitpid). */
int exec_pidfd(pid_t pid);
/* Bytes of a stream split into lines for line (CR LF as LF): what is
 * not yet a line waits in pending, unless at_end or over 4 KiB. */
void exec_lines(struct buf *pending, const char *p, size_t n, int at_end,
		void (*line)(void *ctx, const char *p, size_t n), void *ctx);

/* Start j's command: 0, or -1 with errno (the process could not be
 * made: EAGAIN, EMFILE... a fault of the machine, not of the message). */
int exec_child_start(struct exec_child *c, struct exec_job *j,
		     const struct exec_opt *o, int64_t now);
/* The descriptors to poll for c, appended to fds: how many. */
int exec_child_poll(const struct exec_child *c, struct pollfd *fds);
/* Act on what poll said of c's descriptors (fds as exec_child_poll
 * filled them) and on its deadlines: 1 when c has ended (its result is
 * in its job), 0 while it runs. */
int exec_child_step(struct exec_child *c, const struct pollfd *fds, int n,
		    const struct exec_opt *o, int64_t now);
/* The earliest of c's deadlines, 0 if none. */
int64_t exec_child_deadline(const struct exec_child *c);
/* Stop c: SIGTERM now, SIGKILL after kill_after. */
void exec_child_stop(struct exec_child *c, const struct exec_opt *o,
		     int64_t now, enum exec_end why);

#endif
