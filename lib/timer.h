/*
 * timer: the one timer of a process that waits for input. A stateful tool
 * (msg-aggregate's --timeout and --idle) says when it next has work to do,
 * as an absolute deadline, and what that work is; every wait for input
 * (a read of a pipe, FIFO or terminal, a dir: spool waiting for files)
 * then waits only until that deadline, runs the work and waits again, so
 * timers run on time while no message comes. Tools without timers set
 * none, and their waits are as before.
 */
#ifndef MSG_TIMER_H
#define MSG_TIMER_H

#include <stdint.h>

/* deadline() gives the next deadline (Unix ms, 0 for none); fire() runs
 * the work that is due. NULL, NULL: no timer. */
void timer_set(int64_t (*deadline)(void *), void (*fire)(void *), void *arg);
/*
 * Wait until fd can be read, running the timer whenever its deadline
 * passes meanwhile: 0, or -1 with errno (EINTR when asked to stop, even
 * by a signal that came just before the wait: io_poll; other signals
 * do not end the wait).
 */
int timer_wait_readable(int fd);
/* Run the timer if it is due, then how long a wait may last: at most
 * cap ms, less when the deadline comes sooner. */
int timer_wait_ms(int cap);
/* Sleep until deadline (Unix ms) or a signal. */
void timer_sleep_until(int64_t deadline);

#endif
