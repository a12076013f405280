/* test-timer: a wait for input runs the process's timers at their deadlines. */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <sys/wait.h>
#include <unistd.h>

#include "clock.h"
#include "io.h"
#include "timer.h"
#include "unit.h"

static int64_t deadlines[4];
static int64_t fired_at[4];
static int nfired;

/* The deadlines in order, one fired each time. */
static int64_t next_deadline(void *arg)
{
	(void)arg;
	return nfired < 3 ? deadlines[nfired] : 0;
}

static void fire(void *arg)
{
	(void)arg;
	fired_at[nfired++] = clock_now_ms();
}

/* No timer: the wait ends when there is something to read, or at once
 * with EINTR when a stop was asked for before it began. */
static void test_no_timer(void)
{
	int p[2];
	int64_t t0;

	CHECK(pipe(p) == 0);
	timer_remove(NULL);
	CHECK(write(p[1], "x", 1) == 1);
	t0 = clock_now_ms();
	CHECK(timer_wait_readable(p[0]) == 0);
	CHECK(clock_now_ms() - t0 < 1000);
	CHECK(timer_wait_ms(250) == 250);
	close(p[1]);
	CHECK(read(p[0], &(char){ 0 }, 1) == 1);
	io_stop_requested = 1;
	errno = 0;
	CHECK(timer_wait_readable(p[0]) == -1);
	CHECK(errno == EINTR);
	io_stop_requested = 0;
	close(p[0]);
}

/* Three deadlines pass while nothing comes; then data does. */
static void test_fires_while_waiting(void)
{
	int p[2];
	int64_t t0 = clock_now_ms();

	CHECK(pipe(p) == 0);
	deadlines[0] = t0 + 50;
	deadlines[1] = t0 + 120;
	deadlines[2] = t0 + 200;
	nfired = 0;
	CHECK(timer_add(next_deadline, fire, NULL) == 0);
	if (fork() == 0) {
		usleep(400 * 1000);
		(void)!write(p[1], "x", 1);
		_exit(0);
	}
	close(p[1]);
	CHECK(timer_wait_readable(p[0]) == 0);
	CHECK(nfired == 3);
	for (int i = 0; i < 3; i++) {
		/* Never early; late only by what a loaded machine takes. */
		CHECK(fired_at[i] >= deadlines[i]);
		CHECK(fired_at[i] - deadlines[i] < 5000);
	}
	CHECK(clock_now_ms() - t0 >= 400);
	close(p[0]);
	timer_remove(NULL);
}

/* A spool's bounded wait is cut to the deadline, and what is due runs. */
static void test_wait_ms(void)
{
	int64_t t0 = clock_now_ms();

	deadlines[0] = t0 - 1;		/* due: runs now */
	deadlines[1] = t0 + 100000;
	nfired = 0;
	CHECK(timer_add(next_deadline, fire, NULL) == 0);
	CHECK(timer_wait_ms(250) == 250);
	CHECK(nfired == 1);
	deadlines[1] = t0 + 100;
	{
		int ms = timer_wait_ms(250);
		CHECK(ms > 0 && ms <= 100);
	}
	timer_remove(NULL);
}

/* Two timers of their own, each with one deadline: run in the order of
 * their deadlines, each once; one removed runs no more. */
struct one_shot {
	int64_t at;
	int fired;
	int order;
};

static int shots_fired;

static int64_t one_shot_deadline(void *arg)
{
	struct one_shot *o = arg;

	return o->fired ? 0 : o->at;
}

static void one_shot_fire(void *arg)
{
	struct one_shot *o = arg;

	o->fired = 1;
	o->order = ++shots_fired;
}

static void test_several_timers(void)
{
	int64_t t0 = clock_now_ms();
	struct one_shot late = { .at = t0 + 120 }, early = { .at = t0 + 40 },
			gone = { .at = t0 + 10 }, many[TIMERS_MAX];

	CHECK(timer_add(one_shot_deadline, one_shot_fire, &late) == 0);
	CHECK(timer_add(one_shot_deadline, one_shot_fire, &early) == 0);
	/* Added twice: one timer, not two. */
	CHECK(timer_add(one_shot_deadline, one_shot_fire, &early) == 0);
	CHECK(timer_add(one_shot_deadline, one_shot_fire, &gone) == 0);
	timer_remove(&gone);
	while (!late.fired)
		(void)timer_wait_ms(20);
	CHECK(early.order == 1);
	CHECK(late.order == 2);
	CHECK(!gone.fired);
	CHECK(early.fired && late.fired);
	timer_remove(&late);
	timer_remove(&early);
	for (int i = 0; i < TIMERS_MAX; i++) {
		many[i] = (struct one_shot){ .at = t0 + 100000 };
		CHECK(timer_add(one_shot_deadline, one_shot_fire, &many[i]) == 0);
	}
	errno = 0;
	CHECK(timer_add(one_shot_deadline, one_shot_fire, &gone) == -1);
	CHECK(errno == ENOSPC);
	for (int i = 0; i < TIMERS_MAX; i++)
		timer_remove(&many[i]);
	CHECK(timer_wait_ms(250) == 250);
}

static void on_signal(int sig)
{
	if (sig == SIGTERM)
		io_stop_requested = 1;
}

/* A signal that is not a stop (msg-route's SIGHUP) leaves the wait
 * waiting; SIGTERM, as tool.c handles it, ends it. */
static void test_stop_signal(void)
{
	struct sigaction sa = { .sa_handler = on_signal };
	int p[2];
	int64_t t0;
	pid_t child;

	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	CHECK(pipe(p) == 0);
	timer_remove(NULL);
	t0 = clock_now_ms();
	child = fork();
	if (child == 0) {
		usleep(100000);
		kill(getppid(), SIGUSR1);
		usleep(200000);
		kill(getppid(), SIGTERM);
		_exit(0);
	}
	errno = 0;
	CHECK(timer_wait_readable(p[0]) == -1);
	CHECK(errno == EINTR);
	CHECK(io_stop_requested);
	CHECK(clock_now_ms() - t0 >= 250);
	waitpid(child, NULL, 0);
	io_stop_requested = 0;
	signal(SIGTERM, SIG_DFL);
	signal(SIGUSR1, SIG_DFL);
	close(p[0]);
	close(p[1]);
}

int main(void)
{
	test_no_timer();
	test_stop_signal();
	test_fires_while_waiting();
	test_wait_ms();
	test_several_timers();
	return unit_done();
}
