/*
 * exec-reply: the reply a job's result becomes (exec-reply.c).
 */
#ifndef MSG_EXEC_REPLY_H
#define MSG_EXEC_REPLY_H

#include "exec.h"

struct exec_reply_opt {
	const char *progname;		/* Error texts start "PROG: " */
	const char *content_type;	/* -t, or NULL: detected */
	int no_copy;			/* --no-copy-headers */
	int reply_frames;		/* the command writes a frame itself */
};

/*
 * j's reply into h (reset first) and the body (pointing into j's
 * output): a new Message-Id and Timestamp, Correlation-Id, Exit-Status,
 * Status, Exec-Attempt after the first attempt, Error on a failure, the
 * request's other headers unless no_copy, Content-Type. 1 when it is a
 * success, 0 a failure (an output that is not one frame under
 * reply_frames is one).
 */
int exec_reply(const struct exec_job *j, const struct exec_opt *o,
	       const struct exec_reply_opt *ro, struct headers *h,
	       const char **body, size_t *len);

#endif
