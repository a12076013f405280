/*
 * timer: the timers of a process that waits for input. A stateful tool
 * (msg-aggregate's --timeout and --idle) says when it next has work to do,
 * as an absolute deadline, and what that work is, and so does a channel
 * that must speak while the tool waits (an amqp: writer's heartbeats);
 * every wait for input (a read of a pipe, FIFO or terminal, a dir: spool
 * waiting for files, an amqp: queue waiting for deliveries) then waits
 * only until the first deadline, runs the work that is due and waits
 * again, so timers run on time while no message comes. Without timers
 * the waits are as before.
 */
#ifndef MSG_TIMER_H
#define MSG_TIMER_H

#include <stdint.h>

/* At most this many timers at once (a tool's, and one per channel kind
 * that keeps its connections alive). */
#define TIMERS_MAX 8

/* deadline(arg) gives the next deadline (Unix ms, 0 for none); fire(arg)
 * runs the work that is due. arg names the timer: one per arg, added
 * again it is replaced. 0, or -1 (ENOSPC) when TIMERS_MAX are set. */
int timer_add(int64_t (*deadline)(void *), void (*fire)(void *), void *arg);
/* The timer of arg gone, if there is one. */
void timer_remove(void *arg);
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
