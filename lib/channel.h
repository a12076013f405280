/*
 * channel: the addresses of msg-tools(7) where messages are read and
 * written: "-" (stdin or stdout), "fd:N" (an inherited descriptor),
 * "dir:PATH" (a spool directory) and any other string, a PATH (a FIFO,
 * opened as one, or a regular file, created if missing and appended to).
 */
#ifndef MSG_CHANNEL_H
#define MSG_CHANNEL_H

#include "buf.h"
#include "frame.h"

enum channel_kind {
	CHANNEL_STDIO,
	CHANNEL_FD,
	CHANNEL_PATH,
	CHANNEL_DIR,
};

struct channel_addr {
	enum channel_kind kind;
	const char *path;	/* PATH, or the directory of dir: */
	int fd;			/* fd:N, or 0/1 for "-" */
};

/* 0, or -1 with a reason in err (the address is malformed). */
int channel_parse(const char *addr, struct channel_addr *out, struct buf *err);
/* How diagnostics name the channel: "stdin", "stdout", "fd:3", the path. */
const char *channel_display(const char *addr, int for_writing);

/* Open for reading: the descriptor, or -1 with the reason in err. */
int channel_open_read(const char *addr, struct buf *err);
/* Open for writing: the descriptor, or -1 with the reason in err. A FIFO
 * open blocks until its reader opens it. */
int channel_open_write(const char *addr, struct buf *err);

/* Open addr as a frame writer, any kind including dir: (0, or -1 with the
 * reason in err). Used by every tool's outputs. */
int channel_writer_open(const char *addr, struct frame_writer *fw,
			struct buf *err);

#endif
