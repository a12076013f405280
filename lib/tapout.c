/* tapout: bounded, non-blocking output of whole frames. */
#include "tapout.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "channel.h"
#include "clock.h"

#define RETRY_MS 200

/* A FIFO opened for writing without blocking: fails (ENXIO) with no reader. */
static void try_open_fifo(struct tapout *t)
{
	struct channel_addr a;
	struct buf err = BUF_INIT;
	int64_t now = clock_now_ms();

	if (t->fd >= 0 || now < t->retry_at)
		return;
	t->retry_at = now + RETRY_MS;
	if (channel_parse(t->addr, &a, &err) == 0 && a.kind == CHANNEL_PATH) {
		t->fd = open(a.path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
		if (t->fd >= 0 && t->frames + t->dropped > 0)
			t->reopened++;
		if (t->fd >= 0) {
			/* Room for a whole --buffer, as far as the system allows. */
			fcntl(t->fd, F_SETPIPE_SZ, (int)(t->limit < (1 << 20) ? t->limit : (1 << 20)));
			int cap = fcntl(t->fd, F_GETPIPE_SZ);
			t->pipe_cap = cap > 0 ? (size_t)cap : 0;
		}
	}
	buf_release(&err);
}

int tapout_open(struct tapout *t, const char *addr, int drop, size_t limit,
		struct buf *err)
{
	struct channel_addr a;
	struct stat st;

	memset(t, 0, sizeof(*t));
	t->addr = xstrdup(addr);
	t->fd = -1;
	t->limit = limit;
	buf_init(&t->q, 0);
	if (channel_parse(addr, &a, err) < 0)
		return -1;
	t->is_fifo = a.kind == CHANNEL_PATH && stat(a.path, &st) == 0 &&
		     S_ISFIFO(st.st_mode);
	t->drop = drop < 0 ? t->is_fifo : drop;
	if (t->drop && t->is_fifo) {
		try_open_fifo(t);
		return 0;
	}
	if (a.kind == CHANNEL_DIR)
		t->drop = 0;	/* a spool never makes the flow wait */
	if (!t->drop) {
		t->w = xmalloc(sizeof(*t->w));
		if (channel_writer_open(addr, t->w, err) < 0) {
			free(t->w);
			t->w = NULL;
			return -1;
		}
		t->fd = t->w->fd;
		return 0;
	}
	t->fd = channel_open_write(addr, err);
	if (t->fd < 0)
		return -1;
	fcntl(t->fd, F_SETFL, fcntl(t->fd, F_GETFL) | O_NONBLOCK);
	return 0;
}

static void lens_push(struct tapout *t, size_t n)
{
	if (t->nlens == t->lens_alloc) {
		size_t alloc = t->lens_alloc ? 2 * t->lens_alloc : 64;
		size_t *v = xmalloc(alloc * sizeof(*v));
		for (size_t i = 0; i < t->nlens; i++)
			v[i] = t->lens[(t->lens_head + i) % (t->lens_alloc ? t->lens_alloc : 1)];
		free(t->lens);
		t->lens = v;
		t->lens_alloc = alloc;
		t->lens_head = 0;
	}
	t->lens[(t->lens_head + t->nlens++) % t->lens_alloc] = n;
}

static size_t lens_first(const struct tapout *t)
{
	return t->lens[t->lens_head];
}

static void lens_pop(struct tapout *t)
{
	t->lens_head = (t->lens_head + 1) % t->lens_alloc;
	t->nlens--;
	t->head_done = 0;
}

/* Free room in a pipe, or (size_t)-1 when it cannot be known. */
static size_t pipe_room(const struct tapout *t)
{
	int queued;

	if (!t->pipe_cap || ioctl(t->fd, FIONREAD, &queued) < 0 || queued < 0)
		return (size_t)-1;
	return (size_t)queued >= t->pipe_cap ? 0 : t->pipe_cap - (size_t)queued;
}

/* The reader went away: what is queued was meant for it; start afresh. */
static void lose_reader(struct tapout *t, int err)
{
	close(t->fd);
	t->fd = -1;
	buf_reset(&t->q);
	t->qstart = 0;
	t->dropped += t->nlens;
	t->frames -= t->nlens < t->frames ? t->nlens : t->frames;
	t->nlens = 0;
	t->head_done = 0;
	if (!t->is_fifo)
		t->err = err;	/* a file or pipe does not come back */
}

void tapout_pump(struct tapout *t)
{
	if (!t->drop)
		return;
	if (t->fd < 0 && t->is_fifo)
		try_open_fifo(t);
	while (t->fd >= 0 && t->qstart < t->q.len) {
		size_t left = lens_first(t) - t->head_done;
		ssize_t w;

		/* A frame goes into a pipe only when all of it fits. */
		if (t->head_done == 0 && t->is_fifo) {
			size_t room = pipe_room(t);
			if (room != (size_t)-1 && lens_first(t) > room) {
				if (lens_first(t) <= t->pipe_cap)
					break;	/* wait for the reader */
				/* Larger than the pipe can ever hold: drop it. */
				t->qstart += lens_first(t);
				lens_pop(t);
				t->dropped++;
				t->frames--;
				continue;
			}
		}
		w = write(t->fd, t->q.ptr + t->qstart, left);
		if (w > 0) {
			t->qstart += (size_t)w;
			t->head_done += (size_t)w;
			if (t->head_done == lens_first(t))
				lens_pop(t);
			continue;
		}
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			break;
		lose_reader(t, w < 0 ? errno : ENOSPC);
	}
	if (t->qstart == t->q.len) {
		buf_reset(&t->q);
		t->qstart = 0;
	}
}

int tapout_put(struct tapout *t, const char *p, size_t n)
{
	if (!t->drop) {
		if (frame_writer_whole(t->w, p, n) < 0)
			return -1;
		t->frames++;
		return 0;
	}
	tapout_pump(t);
	if (t->fd < 0 || t->q.len - t->qstart + n > t->limit) {
		t->dropped++;
		return 0;
	}
	if (t->qstart > t->q.len / 2) {
		memmove(t->q.ptr, t->q.ptr + t->qstart, t->q.len - t->qstart);
		buf_setlen(&t->q, t->q.len - t->qstart);
		t->qstart = 0;
	}
	buf_add(&t->q, p, n);
	lens_push(t, n);
	t->frames++;
	tapout_pump(t);
	return 0;
}

int tapout_close(struct tapout *t, int wait_ms)
{
	int64_t until = clock_now_ms() + wait_ms;
	int r = 0;

	if (t->w) {
		r = frame_writer_close(t->w);
		t->fd = -1;
		return r;
	}
	while (t->fd >= 0 && t->qstart < t->q.len) {
		size_t before = t->qstart;
		int64_t left = until - clock_now_ms();
		if (left <= 0)
			break;
		tapout_pump(t);
		/* Room for the next whole frame comes as the reader reads. */
		if (t->qstart == before)
			poll(NULL, 0, 10);
	}
	/* What never went out was dropped, not copied. */
	t->dropped += t->nlens;
	t->frames -= t->nlens < t->frames ? t->nlens : t->frames;
	t->nlens = 0;
	if (t->fd > 2 && strncmp(t->addr, "fd:", 3))
		close(t->fd);
	t->fd = -1;
	return r;
}

void tapout_release(struct tapout *t)
{
	if (t->w) {
		frame_writer_release(t->w);
		free(t->w);
	}
	free(t->addr);
	free(t->lens);
	buf_release(&t->q);
	memset(t, 0, sizeof(*t));
	t->fd = -1;
}
