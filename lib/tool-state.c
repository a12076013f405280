/* tool-state: the stateful tools' common ground (tool-state.h). */
#include "tool-state.h"

#include <errno.h>
#include <string.h>

#include "clock.h"
#include "diag.h"
#include "store.h"
#include "timer.h"
#include "tool.h"

void tool_state_failed(struct store *s, const char *doing)
{
	int err = errno;

	if (s && store_failed(s))
		die(store_exit_code(err), "%s: %s", doing, store_last_error(s));
	/* Read whole and checked, yet not what the tool wrote: a store of
	 * another tool or version, or one edited by hand. */
	if (s && err == EINVAL)
		die(EX_DATAERR, "%s: a record in '%s' is damaged", doing, store_dir(s));
	die(err == ENOMEM ? EX_SOFTWARE : EX_IOERR, "%s: %s", doing, strerror(err));
}

int64_t tool_clock_now(const struct tool_clock *c)
{
	return c->event ? c->latest : clock_now_ms();
}

int tool_clock_message(struct tool_clock *c, struct tool *t, struct headers *h,
		       const struct buf *body, int64_t *now)
{
	const char *ts;
	int64_t at;

	if (!c->event) {
		*now = clock_now_ms();
		return 0;
	}
	ts = headers_get(h, "Timestamp");
	if (!ts || timestamp_parse(ts, &at) < 0) {
		tool_invalid(t, h, body->ptr, body->len, ts ?
			     "Timestamp '%s' is not a time (--clock event)" :
			     "no Timestamp%s (--clock event)", ts ? ts : "");
		return -1;
	}
	if (at > c->latest)
		c->latest = at;
	*now = c->latest;
	return 0;
}

void tool_set_aside(struct frame_writer *fw, struct headers *h,
		    const struct buf *body, const char *what)
{
	const char *id = headers_get(h, "Message-Id");
	struct buf error = BUF_INIT;

	if (!fw) {
		warnx_msg("warning: message %s: %s; dropped",
			  id ? id : "without Message-Id", what);
		return;
	}
	buf_addf(&error, "%s: %s", progname, what);
	frame_set_error(h, body->len, error.ptr);
	buf_release(&error);
	if (frame_writer_write(fw, h, body->ptr, body->len) < 0)
		tool_writer_failed(fw);
}

void tool_state_sync(struct tool_state *s)
{
	struct frame_writer *fw;

	if (s->sync(s->run) == 0)
		return;
	/* The outputs are made durable in the sync too: name a failed one
	 * as any writer's failure is named. */
	if ((fw = frame_writers_failed()))
		tool_writer_failed(fw);
	tool_state_failed(s->store, "cannot keep the state");
}

void tool_state_tick(struct tool_state *s, int64_t now)
{
	if (s->tick(s->run, now) < 0)
		tool_state_failed(s->store, "cannot keep the state");
}

static void timer_fire(void *arg)
{
	struct tool_state *s = arg;

	tool_state_tick(s, clock_now_ms());
	tool_state_sync(s);
	/* What the timers released goes out before the wait goes on. */
	if (frame_writers_flush_all() < 0 && frame_writers_failed())
		tool_writer_failed(frame_writers_failed());
}

static int64_t timer_deadline(void *arg)
{
	struct tool_state *s = arg;

	return s->deadline(s->run);
}

void tool_state_timers(struct tool_state *s)
{
	static struct tool_state *timed;

	if (timed)
		timer_remove(timed);
	timed = NULL;
	/* One of TIMERS_MAX, the first a process sets: there is room. */
	if (s && !s->clock.event && timer_add(timer_deadline, timer_fire, s) == 0)
		timed = s;
}

int tool_state_wait(struct tool_state *s)
{
	int64_t d = s->clock.event ? 0 : s->deadline(s->run);

	if (!d)
		return -1;
	tool_state_sync(s);
	timer_sleep_until(d);
	tool_state_tick(s, clock_now_ms());
	return 0;
}
