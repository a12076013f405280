/*
 * frame-fuzz: libFuzzer harness for the frame reader (and, on what it
 * accepts, the header list and the frame writer).
 *
 * The first input byte steers the run, the rest is the stream:
 *   bits 0-5  if not 0, read the stream a second time through a socket
 *             that delivers it in pieces of that many bytes (larger for
 *             long inputs: at most 128 pieces), and require the same
 *             frames, bodies and error as when it is read whole
 *   bit 6     load bodies up to 1 MiB whole (frame_reader_body), else
 *             by chunks
 *   bit 7     skip the bodies of every other frame
 * Of the frames read by chunks, every other one is first asked for whole
 * (frame_reader_whole), which must agree with the chunks.
 * Every frame read is checked (headers well formed, Content-Length agrees),
 * copied and edited with headers_*, written to /dev/null, and the first
 * one is written to memory and read back: it must come back the same.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1	/* memfd_create */
#endif
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <fcntl.h>
#include <unistd.h>

#include "frame.h"
#include "fuzz.h"
#include "io.h"

static int null_fd = -1, whole_fd = -1, back_fd = -1;
/* Kept for the whole run: each new one would cost a large allocation. */
static struct frame_writer null_out, back_out;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	unsetenv("MSG_HISTORY");
	null_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	whole_fd = memfd_create("frame-fuzz-in", MFD_CLOEXEC);
	back_fd = memfd_create("frame-fuzz-back", MFD_CLOEXEC);
	REQUIRE(null_fd >= 0 && whole_fd >= 0 && back_fd >= 0);
	frame_writer_init(&null_out, null_fd, "null");
	frame_writer_init(&back_out, back_fd, "back");
	return 0;
}

/* Make fd read back p[0..n) from its start. */
static void load(int fd, const void *p, size_t n)
{
	REQUIRE(ftruncate(fd, 0) == 0 && lseek(fd, 0, SEEK_SET) == 0);
	REQUIRE(write_all(fd, p, n) == 0 && lseek(fd, 0, SEEK_SET) == 0);
}

static int has_byte(const char *p, size_t n, const char *set)
{
	for (size_t i = 0; i < n; i++)
		if (strchr(set, p[i]))
			return 1;
	return 0;
}

/* What the reader must guarantee about every header block it accepts. */
static void check_headers(const struct headers *h, uint64_t body_len)
{
	const char *cl = headers_get(h, "Content-Length");
	uint64_t v = 0;

	REQUIRE(cl != NULL && *cl);
	for (const char *p = cl; *p; p++) {
		REQUIRE(*p >= '0' && *p <= '9');
		v = v * 10 + (uint64_t)(*p - '0');
	}
	REQUIRE(v == body_len);
	for (size_t i = 0; i < headers_count(h); i++) {
		size_t nl, vl;
		const char *n = headers_name(h, i, &nl);
		const char *val = headers_value(h, i, &vl);

		REQUIRE(header_name_valid(n, nl) && n[nl] == '\0');
		REQUIRE(val[vl] == '\0' && !has_byte(val, vl, "\r\n"));
		REQUIRE(memchr(val, '\0', vl) == NULL);
		REQUIRE(vl == 0 || (val[0] != ' ' && val[0] != '\t' &&
				    val[vl - 1] != ' ' && val[vl - 1] != '\t'));
	}
}

/* Copy the headers and edit the copy; the original must not change. */
static void edit_headers(const struct headers *h, struct headers *copy)
{
	struct headers before = HEADERS_INIT;
	size_t vl;
	const char *v;

	headers_copy(&before, h);
	headers_copy(copy, h);
	same_headers(copy, h);
	REQUIRE(headers_remove(copy, "content-length") >= 1);
	REQUIRE(headers_get(copy, "Content-Length") == NULL);
	REQUIRE(headers_set(copy, "Message-History", "frame-fuzz") == 0);
	if (headers_count(copy) > 1) {
		/* A value taken from the list itself, set on another header. */
		v = headers_value(copy, 0, &vl);
		REQUIRE(headers_setn(copy, "X-Alias", v, vl) == 0);
		REQUIRE(headers_find(copy, "x-alias", 7) >= 0);
		REQUIRE(strlen(headers_get(copy, "X-Alias")) == vl);
		v = headers_name(copy, 0, &vl);
		REQUIRE(headers_set(copy, v, "replaced") == 0);
	}
	same_headers(h, &before);
	headers_release(&before);
}

/* Write h and body to memory and read it back: the same frame must return. */
static void round_trip(const struct headers *h, const struct buf *body)
{
	struct frame_reader fr;
	struct headers back = HEADERS_INIT, want = HEADERS_INIT;
	struct buf got = BUF_INIT;
	const char *cl;

	load(back_fd, "", 0);
	REQUIRE(frame_writer_write(&back_out, h, body->ptr, body->len) == 0);
	REQUIRE(frame_writer_flush(&back_out) == 0);
	REQUIRE(lseek(back_fd, 0, SEEK_SET) == 0);

	frame_reader_init(&fr, back_fd, "back");
	REQUIRE(frame_reader_next(&fr, &back) == 1);
	REQUIRE(frame_reader_body(&fr, &got) == 0);
	REQUIRE(got.len == body->len && !memcmp(got.ptr, body->ptr, got.len));
	REQUIRE(frame_reader_next(&fr, &want) == 0);
	frame_reader_release(&fr);
	/* The writer puts one Content-Length last; the rest is as it was. */
	headers_copy(&want, h);
	headers_remove(&want, "Content-Length");
	cl = headers_get(&back, "Content-Length");
	REQUIRE(cl && strtoull(cl, NULL, 10) == body->len);
	REQUIRE(headers_remove(&back, "Content-Length") == 1);
	same_headers(&want, &back);
	headers_release(&back);
	headers_release(&want);
	buf_release(&got);
}

/* Append a number or a byte run to the transcript, length first. */
static void note(struct buf *t, const void *p, size_t n)
{
	buf_addu64(t, n);
	buf_addch(t, ':');
	buf_add(t, p, n);
}

static void note_headers(struct buf *t, const struct headers *h)
{
	for (size_t i = 0; i < headers_count(h); i++) {
		size_t nl, vl;
		const char *n = headers_name(h, i, &nl);
		const char *v = headers_value(h, i, &vl);

		note(t, n, nl);
		note(t, v, vl);
	}
	buf_addch(t, '|');
}

/* The error text; a framing fault's offset must lie within the input. */
static void note_error(struct buf *t, const struct frame_reader *fr)
{
	const char *e = frame_reader_error(fr);

	if (fr->err_kind == FRAME_ERR_FORMAT) {
		REQUIRE(!strncmp(e, "in: offset ", 11));
		REQUIRE(strtoull(e + 11, NULL, 10) <= fr->base + fr->end);
	}
	buf_addstr(t, e);
}

/* Read a whole stream from fd, doing everything the flags say. */
static int read_stream(int fd, unsigned ctl, int first_pass, struct buf *t)
{
	struct frame_reader fr;
	struct headers h = HEADERS_INIT, copy = HEADERS_INIT;
	struct buf body = BUF_INIT;
	unsigned long frames = 0;
	int r;

	frame_reader_init(&fr, fd, "in");
	while ((r = frame_reader_next(&fr, &h)) > 0) {
		uint64_t len = frame_reader_body_length(&fr);
		const char *p;
		size_t n;

		check_headers(&h, len);
		note_headers(t, &h);
		edit_headers(&h, &copy);
		if ((ctl & 0x80) && frames++ % 2 == 0) {
			buf_addstr(t, "skipped|");
			REQUIRE(frame_writer_write(&null_out, &copy, "", 0) == 0);
			continue;
		}
		/*
		 * frame_reader_body reserves the declared length before any of
		 * it arrives, so a short input declaring terabytes would only
		 * measure malloc; such bodies go through by chunks.
		 */
		if ((ctl & 0x40) && len <= 1 << 20) {
			if ((r = frame_reader_body(&fr, &body)) < 0)
				break;
			note(t, body.ptr, body.len);
			REQUIRE(body.len == len);
			REQUIRE(frame_writer_write(&null_out, &copy, body.ptr, body.len) == 0);
			if (first_pass && fr.frames == 1)
				round_trip(&h, &body);
			continue;
		}
		/* Every other frame whole, when it fits the buffer and is well
		 * framed; else by chunks, which must then report what is wrong. */
		if (fr.frames % 2 == 0 && (r = frame_reader_whole(&fr, &p, &n)) != 0) {
			if (r < 0)
				break;
			REQUIRE(n == fr.block_len + len + 1 && p[n - 1] == '\n');
			REQUIRE(p[fr.block_len - 1] == '\n');
			REQUIRE(frame_writer_whole(&null_out, p, n) == 0);
			note(t, p + fr.block_len, (size_t)len);
			continue;
		}
		/* The chunks are kept, so no frame is left half written. */
		buf_reset(&body);
		while ((r = frame_reader_chunk(&fr, &p, &n)) > 0) {
			REQUIRE(n > 0 && body.len + n <= len);
			buf_add(&body, p, n);
		}
		if (r < 0)
			break;
		REQUIRE(body.len == len);
		REQUIRE(frame_writer_begin(&null_out, &copy, len) == 0);
		for (size_t off = 0; off < body.len; off += n) {
			n = body.len - off < 7 ? body.len - off : 7;
			REQUIRE(frame_writer_body(&null_out, body.ptr + off, n) == 0);
		}
		REQUIRE(frame_writer_end(&null_out) == 0);
		note(t, body.ptr, body.len);
	}
	buf_addf(t, "=%d ", r);
	if (r < 0)
		note_error(t, &fr);
	REQUIRE(r <= 0);
	if (r == 0)
		REQUIRE(frame_reader_next(&fr, &h) == 0);
	REQUIRE(frame_writer_flush(&null_out) == 0);
	frame_reader_release(&fr);
	headers_release(&h);
	headers_release(&copy);
	buf_release(&body);
	return r;
}

/*
 * Queue the stream on a SOCK_SEQPACKET pair as packets of piece bytes, so
 * that each read(2) of the reader gets exactly one. At most MAX_PACKETS
 * are queued, all before reading starts, so no second thread is needed.
 */
#define MAX_PACKETS 128

static void read_in_pieces(const uint8_t *p, size_t n, unsigned ctl,
			   struct buf *t)
{
	size_t piece = ctl & 0x3f;
	int sv[2], room = 1 << 20;

	if (n > 65536)
		return;
	if (piece < (n + MAX_PACKETS - 1) / MAX_PACKETS)
		piece = (n + MAX_PACKETS - 1) / MAX_PACKETS;
	REQUIRE(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == 0);
	setsockopt(sv[1], SOL_SOCKET, SO_SNDBUF, &room, sizeof(room));
	for (size_t off = 0; off < n; off += piece) {
		size_t k = n - off < piece ? n - off : piece;
		REQUIRE(send(sv[1], p + off, k, MSG_DONTWAIT | MSG_NOSIGNAL) ==
			(ssize_t)k);
	}
	close(sv[1]);
	read_stream(sv[0], ctl, 0, t);
	close(sv[0]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct buf whole = BUF_INIT, pieces = BUF_INIT;
	unsigned ctl;

	if (size == 0)
		return 0;
	ctl = data[0];
	data++, size--;
	load(whole_fd, data, size);
	read_stream(whole_fd, ctl, 1, &whole);
	if (ctl & 0x3f) {
		read_in_pieces(data, size, ctl, &pieces);
		if (whole.len != pieces.len || memcmp(whole.ptr, pieces.ptr, whole.len)) {
			fprintf(stderr, "whole:  %s\npieces: %s\n", whole.ptr, pieces.ptr);
			REQUIRE(!"reading in pieces changed the result");
		}
	}
	buf_release(&whole);
	buf_release(&pieces);
	return 0;
}
