/* channel: parsing and opening channel addresses. */
#include "channel.h"

#include "amqp-addr.h"
#include "inbox.h"
#include "io.h"
#include "spool.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sysexits.h>
#include <unistd.h>

int channel_parse(const char *addr, struct channel_addr *out, struct buf *err)
{
	memset(out, 0, sizeof(*out));
	if (!*addr) {
		buf_addstr(err, "empty channel address");
		return -1;
	}
	if (!strcmp(addr, "-")) {
		out->kind = CHANNEL_STDIO;
		return 0;
	}
	if (!strncmp(addr, "fd:", 3)) {
		char *end;
		long n;

		errno = 0;
		n = strtol(addr + 3, &end, 10);
		if (!addr[3] || *end || errno || n < 0 || n > INT_MAX) {
			buf_addf(err, "invalid descriptor in channel '%s'", addr);
			return -1;
		}
		out->kind = CHANNEL_FD;
		out->fd = (int)n;
		return 0;
	}
	if (!strncmp(addr, "dir:", 4)) {
		if (!addr[4]) {
			buf_addf(err, "missing directory in channel '%s'", addr);
			return -1;
		}
		out->kind = CHANNEL_DIR;
		out->path = addr + 4;
		return 0;
	}
	if (mq_addr_is(addr)) {
		struct mq_addr mq;
		if (mq_addr_parse(addr, &mq, err) < 0)
			return -1;
		mq_addr_release(&mq);
		out->kind = CHANNEL_AMQP;
		out->path = addr;
		return 0;
	}
	out->kind = CHANNEL_PATH;
	out->path = addr;
	return 0;
}

int channel_failure_status(int err, int otherwise)
{
	switch (err) {
	case ECONNREFUSED:
	case ECONNRESET:
	case ETIMEDOUT:
	case EAGAIN:
		return EX_TEMPFAIL;
	case ENXIO:
		return EX_UNAVAILABLE;
	default:
		return otherwise;
	}
}

/* A broker's queue is no stream of bytes. */
static int not_a_stream(const char *addr, const char *what, struct buf *err)
{
	buf_addf(err, "cannot open '%s' as a stream: it is %s", addr, what);
	errno = EISDIR;
	return -1;
}

const char *channel_display(const char *addr, int for_writing)
{
	if (!strcmp(addr, "-"))
		return for_writing ? "stdout" : "stdin";
	return addr;
}

static int check_fd(int fd, int for_writing, const char *addr, struct buf *err)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0) {
		buf_addf(err, "cannot use '%s': %s", addr, strerror(errno));
		return -1;
	}
	if ((fl & O_ACCMODE) == (for_writing ? O_RDONLY : O_WRONLY)) {
		buf_addf(err, "cannot use '%s': not open for %s", addr,
			 for_writing ? "writing" : "reading");
		return -1;
	}
	return fd;
}

int channel_open_read(const char *addr, struct buf *err)
{
	struct channel_addr a;
	int fd;

	if (channel_parse(addr, &a, err) < 0)
		return -1;
	switch (a.kind) {
	case CHANNEL_STDIO:
		return check_fd(STDIN_FILENO, 0, "stdin", err);
	case CHANNEL_FD:
		return check_fd(a.fd, 0, addr, err);
	case CHANNEL_DIR:
		return not_a_stream(addr, "a spool directory", err);
	case CHANNEL_AMQP:
		return not_a_stream(addr, "a broker's queue", err);
	case CHANNEL_PATH:
		break;
	}
	fd = io_open_read(a.path);
	if (fd < 0)
		buf_addf(err, "cannot open '%s': %s", addr, strerror(errno));
	return fd;
}

int channel_open_write(const char *addr, struct buf *err)
{
	struct channel_addr a;
	struct stat st;
	int fd, flags = O_WRONLY | O_CLOEXEC;

	if (channel_parse(addr, &a, err) < 0)
		return -1;
	switch (a.kind) {
	case CHANNEL_STDIO:
		return check_fd(STDOUT_FILENO, 1, "stdout", err);
	case CHANNEL_FD:
		return check_fd(a.fd, 1, addr, err);
	case CHANNEL_DIR:
		return not_a_stream(addr, "a spool directory", err);
	case CHANNEL_AMQP:
		return not_a_stream(addr, "a broker's queue", err);
	case CHANNEL_PATH:
		break;
	}
	/* A FIFO is opened as one; anything else is created and appended. */
	if (stat(a.path, &st) < 0 || !S_ISFIFO(st.st_mode))
		flags |= O_CREAT | O_APPEND;
	fd = open(a.path, flags, 0666);
	if (fd < 0)
		buf_addf(err, "cannot open '%s': %s", addr, strerror(errno));
	return fd;
}

int channel_writer_open(const char *addr, struct frame_writer *fw, struct buf *err)
{
	struct channel_addr a;
	int fd;

	if (channel_parse(addr, &a, err) < 0)
		return -1;
	if (a.kind == CHANNEL_DIR) {
		struct spool *sp = spool_open(a.path, 1, err);
		if (!sp)
			return -1;
		frame_writer_init_sink(fw, channel_spool_sink(sp), -1, addr);
		return 0;
	}
	if (a.kind == CHANNEL_AMQP) {
		struct channel_sink *sink = channel_amqp_sink(addr, err);
		if (!sink)
			return -1;
		frame_writer_init_sink(fw, sink, -1, addr);
		return 0;
	}
	fd = channel_open_write(addr, err);
	if (fd < 0)
		return -1;
	/* stdin, stdout and fd:N belong to whoever started us. */
	frame_writer_init_sink(fw, channel_stream_sink(fd, a.kind == CHANNEL_PATH),
			       fd, channel_display(addr, 1));
	return 0;
}

/* A file read whole: opened as it is, never a directory. */
static struct channel_in *raw_file_in(const char *path, struct buf *err)
{
	struct channel_in *in;
	struct stat st;
	char *copy;
	int fd = io_open_read(path);

	if (fd < 0) {
		buf_addf(err, "cannot open '%s': %s", path, strerror(errno));
		return NULL;
	}
	if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
		buf_addf(err, "cannot open '%s': Is a directory", path);
		close(fd);
		return NULL;
	}
	copy = xstrdup(path);
	in = channel_stream_in(fd, path, basename(copy));
	free(copy);
	return in;
}

struct channel_in *channel_in_open(const char *addr, int raw, struct buf *err)
{
	int fd;

	if (!strncmp(addr, "dir:", 4))
		return channel_spool_in(addr, err);
	if (mq_addr_is(addr)) {
		if (!raw)
			return channel_amqp_in(addr, err);
		buf_addf(err, "cannot read '%s': a queue holds messages, not raw "
			 "data", addr);
		errno = EINVAL;
		return NULL;
	}
	if (!strncmp(addr, "inbox:", 6)) {
		/* Its files are raw data (msg-wrap, msg-split -r). */
		if (raw)
			return channel_inbox_in(addr, &(struct inbox_options){ 0 }, err);
		buf_addf(err, "cannot read '%s': an inbox holds raw data, not "
			 "messages", addr);
		return NULL;
	}
	if (!strcmp(addr, "-") && raw)
		return channel_stream_in(STDIN_FILENO, "stdin", NULL);
	if (raw)
		return raw_file_in(addr, err);
	fd = channel_open_read(addr, err);
	if (fd < 0)
		return NULL;
	return channel_stream_in(fd, channel_display(addr, 0), NULL);
}
