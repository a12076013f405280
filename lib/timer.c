/* timer: the process's one timer, run from its waits for input (timer.h). */
#include "timer.h"

#include <errno.h>
#include <poll.h>
#include <stddef.h>

#include "clock.h"
#include "io.h"

static int64_t (*next_deadline)(void *);
static void (*fire)(void *);
static void *fire_arg;

void timer_set(int64_t (*deadline)(void *), void (*run)(void *), void *arg)
{
	next_deadline = deadline;
	fire = run;
	fire_arg = arg;
}

/* Milliseconds until the deadline, running the timer while it is due:
 * -1 when there is none. */
static int64_t until_due(void)
{
	for (;;) {
		int64_t d = next_deadline ? next_deadline(fire_arg) : 0;
		int64_t left;

		if (!d)
			return -1;
		left = d - clock_now_ms();
		if (left > 0)
			return left;
		fire(fire_arg);
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
