/*
 * exec-reply: a job of msg-exec (exec.h) and the reply its result
 * becomes: a new message correlated to the request (Correlation-Id is
 * the request's Message-Id), saying how the command ended, its body the
 * command's stdout; or, with --reply-frames, the frame the command wrote,
 * whose headers win.
 */
#include "exec-reply.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "exec-args.h"
#include "message.h"
#include "msgrec.h"

struct exec_job *exec_job_new(void)
{
	struct exec_job *j = xcalloc(1, sizeof(*j));

	headers_init(&j->h);
	buf_init(&j->block, 0);
	buf_init(&j->body, 0);
	buf_init(&j->out, 0);
	buf_init(&j->last_err, 0);
	return j;
}

void exec_job_free(struct exec_job *j)
{
	if (!j)
		return;
	headers_release(&j->h);
	buf_release(&j->block);
	buf_release(&j->body);
	buf_release(&j->out);
	buf_release(&j->last_err);
	exec_strings_free(j->argv);
	exec_strings_free(j->envp);
	free(j);
}

int exec_job_ok(const struct exec_job *j)
{
	return j->end == EXEC_EXITED && j->status == 0;
}

void exec_job_reason(const struct exec_job *j, const struct exec_opt *o,
		     struct buf *out)
{
	switch (j->end) {
	case EXEC_TIMED_OUT:
		buf_addstr(out, "timeout after ");
		duration_add(out, o->timeout);
		return;
	case EXEC_OVER_OUTPUT:
		if (o->max_output_text)
			buf_addf(out, "output over %s", o->max_output_text);
		else
			buf_addf(out, "output over %" PRIu64 " bytes", o->max_output);
		return;
	case EXEC_STOPPED:
		buf_addstr(out, "stopped");
		return;
	case EXEC_NO_REPLY:
		break;
	case EXEC_SIGNALED:
		if (!j->last_err.len) {
			buf_addf(out, "killed by signal %d", j->status);
			return;
		}
		break;
	case EXEC_EXITED:
		if (!j->last_err.len) {
			buf_addf(out, "exit status %d", j->status);
			return;
		}
		break;
	}
	buf_add(out, j->last_err.ptr, j->last_err.len);
}

/* Headers of the request a reply does not copy: its own say otherwise. */
static const char *const not_copied[] = {
	"Message-Id", "Timestamp", "Content-Length", "Content-Type",
	"Correlation-Id", "Status", "Exit-Status", "Error", "Exec-Attempt", NULL,
};

static int copied(const char *name, size_t n)
{
	for (int i = 0; not_copied[i]; i++)
		if (header_name_eq(name, n, not_copied[i], strlen(not_copied[i])))
			return 0;
	return 1;
}

/*
 * The frame the command wrote, whole: its headers into h (over what is
 * there), its body's place in out. 0, or -1 with why.
 */
static int own_frame(const struct buf *out, const char *request_id,
		     struct headers *h, size_t *body_at, uint64_t *body_len,
		     struct buf *why)
{
	struct headers own;
	struct buf nm = BUF_INIT;
	const char *p = out->ptr, *end = p + out->len, *cl, *q = NULL;
	uint64_t len = 0;
	int r = -1;

	headers_init(&own);
	for (const char *s = p; s < end; ) {
		const char *nl = memchr(s, '\n', (size_t)(end - s));
		if (!nl)
			break;
		if (nl == s || (nl == s + 1 && *s == '\r')) {
			q = nl + 1;
			break;
		}
		s = nl + 1;
	}
	if (!q || msgrec_parse_block(p, (size_t)(q - p), &own) < 0)
		buf_addstr(why, "no header block");
	else if (!(cl = headers_get(&own, "Content-Length")) ||
		 sscanf(cl, "%" SCNu64, &len) != 1)
		buf_addstr(why, "no Content-Length");
	else if ((uint64_t)(end - q) != len + 1 || end[-1] != '\n')
		buf_addf(why, "Content-Length %" PRIu64 " but %zu bytes follow the header block",
			 len, (size_t)(end - q));
	else
		r = 0;
	for (size_t i = 0; r == 0 && i < headers_count(&own); i++) {
		size_t nn, vn;
		const char *name = headers_name(&own, i, &nn);
		const char *value = headers_value(&own, i, &vn);
		/* A command that echoes the request's Message-Id back does not
		 * give its reply the same one: each message keeps its own. */
		if (request_id && header_name_eq(name, nn, "Message-Id", 10) &&
		    strlen(request_id) == vn && !memcmp(value, request_id, vn))
			continue;
		if (!header_name_eq(name, nn, "Content-Length", 14)) {
			buf_reset(&nm);
			buf_add(&nm, name, nn);
			headers_setn(h, nm.ptr, value, vn);
		}
	}
	buf_release(&nm);
	*body_at = (size_t)(q ? q - p : 0);
	*body_len = len;
	headers_release(&own);
	return r;
}

int exec_reply(const struct exec_job *j, const struct exec_opt *o,
	       const struct exec_reply_opt *ro, struct headers *h,
	       const char **body, size_t *len)
{
	const char *id = headers_get(&j->h, "Message-Id");
	struct buf reason = BUF_INIT, why = BUF_INIT;
	char n[32];
	size_t at = 0;
	uint64_t blen = j->out.len;
	int ok = exec_job_ok(j), framed = 0;

	headers_reset(h);
	for (size_t i = 0; !ro->no_copy && i < headers_count(&j->h); i++) {
		size_t nn, vn;
		const char *name = headers_name(&j->h, i, &nn);
		const char *value = headers_value(&j->h, i, &vn);
		if (copied(name, nn))
			headers_add(h, name, nn, value, vn);
	}
	message_stamp(h);
	if (id)
		headers_set(h, "Correlation-Id", id);
	/* How the process ended, whatever it was ended for. */
	if (j->by_signal)
		snprintf(n, sizeof(n), "signal %d", j->status);
	else
		snprintf(n, sizeof(n), "%d", j->status);
	headers_set(h, "Exit-Status", n);
	if (j->attempt > 1)
		headers_set_u64(h, "Exec-Attempt", j->attempt);
	buf_addf(&reason, "%s: ", ro->progname);
	if (!ok) {
		exec_job_reason(j, o, &reason);
	} else if (ro->reply_frames) {
		struct headers own;
		headers_init(&own);
		framed = own_frame(&j->out, NULL, &own, &at, &blen, &why) == 0;
		if (!framed) {
			ok = 0;
			buf_addf(&reason, "output is not one message frame: %s", why.ptr);
			at = 0, blen = j->out.len;
		}
		headers_release(&own);
	}
	headers_set(h, "Status", ok ? "success" : "failure");
	if (!ok)
		headers_set(h, "Error", reason.ptr);
	headers_set(h, "Content-Type", ro->content_type ? ro->content_type :
		    message_detect_type(j->out.ptr + at, (size_t)blen, NULL, 0));
	if (framed)	/* the command's own headers win */
		own_frame(&j->out, id, h, &at, &blen, &why);
	buf_release(&reason);
	buf_release(&why);
	*body = j->out.ptr + at;
	*len = (size_t)blen;
	return ok;
}
