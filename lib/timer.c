/* timer: the process's timers, run from its waits for input (timer.h). */
#include "timer.h"

#include <errno.h>
#include <poll.h>
#include <stddef.h>

#include "clock.h"
#include "io.h"

struct timer {
	int64_t (*deadline)(void *);
	void (*fire)(void *);
	void *arg;
};

static struct timer timers[TIMERS_MAX];
static size_t ntimers;

int timer_add(int64_t (*deadline)(void *), void (*run)(void *), void *arg)
{
	timer_remove(arg);
	if (ntimers == TIMERS_MAX) {
		errno = ENOSPC;
		return -1;
	}
	timers[ntimers++] = (struct timer){ deadline, run, arg };
	return 0;
}

void timer_remove(void *arg)
{
	for (size_t i = 0; i < ntimers; i++)
		if (timers[i].arg == arg) {
			timers[i] = timers[--ntimers];
			return;
		}
}

/* The first deadline of all, and the timer that has it (NULL, 0: none). */
static int64_t first_deadline(struct timer **which)
{
	int64_t first = 0;

	*which = NULL;
	for (size_t i = 0; i < ntimers; i++) {
		int64_t d = timers[i].deadline(timers[i].arg);

		if (d && (!first || d < first)) {
			first = d;
			*which = &timers[i];
		}
	}
	return first;
}

/* Milliseconds until the first deadline, running each timer while it is
 * due: -1 when there is none. */
static int64_t until_due(void)
{
	for (;;) {
		struct timer *t;
		int64_t d = first_deadline(&t);
		int64_t left;

		if (!d)
			return -1;
		left = d - clock_now_ms();
		if (left > 0)
			return left;
		t->fire(t->arg);
	}
}

int timer_wait_ms(int cap)
{
	int64_t left = until_due();

	return left >= 0 && left < cap ? (int)left : cap;
}

int timer_wait_readable(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	for (;;) {
		int64_t left = until_due();
		int r = io_poll(&p, left < 0 ? -1 : left > 60000 ? 60000 : (int)left);

		if (r > 0)
			return 0;
		/* Another signal (msg-route's SIGHUP) is not a stop. */
		if (r < 0 && (errno != EINTR || io_stop_requested))
			return -1;
	}
}

void timer_sleep_until(int64_t deadline)
{
	int64_t left = deadline - clock_now_ms();

	if (left > 0)
		poll(NULL, 0, left > 60000 ? 60000 : (int)left);
}
