/*
 * test-frame: the frame reader on byte streams (whole, one byte per read,
 * larger than its buffer) with every framing fault, and the exact bytes
 * the frame writer produces.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "channel.h"
#include "frame.h"
#include "io.h"
#include "unit.h"

#define HINT "; not a message stream; wrap raw data with msg-wrap"

/* A descriptor that reads back n bytes of data and then EOF. */
static int memfd_with(const void *data, size_t n)
{
	int fd = memfd_create("frame-test", MFD_CLOEXEC);

	if (fd < 0 || write_all(fd, data, n) < 0 || lseek(fd, 0, SEEK_SET) < 0) {
		perror("memfd");
		exit(1);
	}
	return fd;
}

/*
 * A descriptor on which every read(2) returns one byte: a child writes
 * the data as one-byte packets on a SOCK_SEQPACKET pair.
 */
static int trickle_fd(const void *data, size_t n, pid_t *pid)
{
	int sv[2];

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
		perror("socketpair");
		exit(1);
	}
	*pid = fork();
	if (*pid < 0) {
		perror("fork");
		exit(1);
	}
	if (*pid == 0) {
		close(sv[0]);
		for (size_t i = 0; i < n; i++)
			if (write(sv[1], (const char *)data + i, 1) != 1)
				_exit(1);
		_exit(0);
	}
	close(sv[1]);
	return sv[0];
}

static int child_ok(pid_t pid)
{
	int st;

	return waitpid(pid, &st, 0) == pid && WIFEXITED(st) &&
	       WEXITSTATUS(st) == 0;
}

static void dump_headers(const struct headers *h, struct buf *out)
{
	for (size_t i = 0; i < headers_count(h); i++) {
		buf_addstr(out, headers_name(h, i, NULL));
		buf_addch(out, '=');
		buf_addstr(out, headers_value(h, i, NULL));
		buf_addch(out, ';');
	}
}

/*
 * Read a whole stream: each frame as "headers[body]" (NUL shown as '@'),
 * bodies alternately whole and by chunks. Returns the last status; the
 * error text, if any, is in the reader.
 */
static int read_all(struct frame_reader *fr, struct buf *out)
{
	struct headers h = HEADERS_INIT;
	struct buf body = BUF_INIT, block = BUF_INIT;
	int r, k = 0;

	while ((r = frame_reader_next(fr, &h)) > 0) {
		const char *p, *blk;
		size_t n, blk_len;

		dump_headers(&h, out);
		buf_reset(&body);
		frame_reader_header_block(fr, &blk, &blk_len);
		buf_reset(&block);
		buf_add(&block, blk, blk_len);
		if (k % 3 == 2 && (r = frame_reader_whole(fr, &p, &n)) != 0) {
			/* The frame whole: its block as the reader saw it, the
			 * body, one LF; what is wrong with a frame the chunks
			 * below report. */
			if (r < 0)
				break;
			CHECK(n == blk_len + frame_reader_body_length(fr) + 1);
			CHECK(p[n - 1] == '\n');
			CHECK(!memcmp(p, block.ptr, blk_len));
			buf_add(&body, p + blk_len, n - blk_len - 1);
			r = frame_reader_chunk(fr, &p, &n);
			CHECK(r == 0);
		} else if (k % 3 == 0) {
			r = frame_reader_body(fr, &body);
		} else {
			while ((r = frame_reader_chunk(fr, &p, &n)) > 0)
				buf_add(&body, p, n);
		}
		k++;
		if (r < 0)
			break;
		buf_addch(out, '[');
		for (size_t i = 0; i < body.len; i++)
			buf_addch(out, body.ptr[i] ? body.ptr[i] : '@');
		buf_addch(out, ']');
	}
	headers_release(&h);
	buf_release(&body);
	buf_release(&block);
	return r;
}

static void check_stream_from(const char *data, size_t n, int in_memory,
			      const char *want_frames, const char *want_err);

/* Read data (from a memfd, then from memory) and expect the error text
 * want, or none. */
static void check_stream(const char *data, size_t n, const char *want_frames,
			 const char *want_err)
{
	for (int in_memory = 0; in_memory < 2; in_memory++)
		check_stream_from(data, n, in_memory, want_frames, want_err);
}

static void check_stream_from(const char *data, size_t n, int in_memory,
			      const char *want_frames, const char *want_err)
{
	struct frame_reader fr;
	struct headers after = HEADERS_INIT;
	struct buf got = BUF_INIT;
	int fd = in_memory ? -1 : memfd_with(data, n);
	int r;

	if (in_memory)
		frame_reader_init_mem(&fr, data, n, "in");
	else
		frame_reader_init(&fr, fd, "in");
	r = read_all(&fr, &got);
	CHECK_STR(got.ptr, want_frames);
	if (want_err) {
		CHECK(r == -1);
		CHECK_STR(frame_reader_error(&fr), want_err);
		CHECK(frame_reader_exit_code(&fr) == 65);
	} else {
		CHECK(r == 0);
		/* End of input stays the end. */
		CHECK(frame_reader_next(&fr, &after) == 0);
	}
	frame_reader_release(&fr);
	if (fd >= 0)
		close(fd);
	headers_release(&after);
	buf_release(&got);
}

#define STREAM(s, frames, err) check_stream(s, sizeof(s) - 1, frames, err)

static const char good[] =
	"Message-Id: m1\nContent-Type: text/plain\nContent-Length: 5\n\nhello\n"
	"Content-Length: 0\n\n\n"
	"X-Crlf: yes\r\nContent-Length: 3\r\n\r\na\0b\n"
	"A: 1\na:  2 \nContent-Length: 12\n\nhello\nworld\n\n"
	"Content-Length: 00\n\n\n";
static const char good_dump[] =
	"Message-Id=m1;Content-Type=text/plain;Content-Length=5;[hello]"
	"Content-Length=0;[]"
	"X-Crlf=yes;Content-Length=3;[a@b]"
	"A=1;a=2;Content-Length=12;[hello\nworld\n]"
	"Content-Length=00;[]";

static void test_good(void)
{
	STREAM("", "", NULL);
	STREAM(good, good_dump, NULL);
	STREAM("Content-Length: 1\n\nx\n", "Content-Length=1;[x]", NULL);
	/* Same length twice is not a conflict. */
	STREAM("Content-Length: 1\ncontent-length: 1\n\nx\n",
	       "Content-Length=1;content-length=1;[x]", NULL);
	STREAM("Content-Length: 2\r\n\r\n\r\n\n", "Content-Length=2;[\r\n]", NULL);
	STREAM("Content-Length:3\n\n\n\n\n\n", "Content-Length=3;[\n\n\n]", NULL);
	/* Names that begin as the common ones do, and are others. */
	STREAM("Content-Lengthy: 9\nContent-Typed: a\nMessage-Ids: b\n"
	       "Timestamps: c\nC: d\nM: e\nT: f\ncontent-type: g\nContent-Length: 1\n\nx\n",
	       "Content-Lengthy=9;Content-Typed=a;Message-Ids=b;Timestamps=c;C=d;M=e;"
	       "T=f;content-type=g;Content-Length=1;[x]", NULL);
	STREAM("Message-Id: m\nTimestamp: t\nContent-Type: c\nContent-Length: 0\n\n\n",
	       "Message-Id=m;Timestamp=t;Content-Type=c;Content-Length=0;[]", NULL);
}

static void test_trickle(void)
{
	struct frame_reader fr;
	struct headers h = HEADERS_INIT;
	struct buf body = BUF_INIT, got = BUF_INIT;
	pid_t pid;
	const char *p;
	size_t n, chunks = 0;
	int fd;

	/* The whole good stream, one byte per read(2). */
	fd = trickle_fd(good, sizeof(good) - 1, &pid);
	frame_reader_init(&fr, fd, "in");
	CHECK(read_all(&fr, &got) == 0);
	CHECK_STR(got.ptr, good_dump);
	frame_reader_release(&fr);
	close(fd);
	CHECK(child_ok(pid));

	/*
	 * A 2000-byte body arrives in 2000 reads and is put back together
	 * (how many chunks it is handed out in is the reader's choice).
	 */
	buf_addstr(&body, "Message-Id: slow\nContent-Length: 2000\n\n");
	for (int i = 0; i < 2000; i++)
		buf_addch(&body, (char)(i * 7));
	buf_addch(&body, '\n');
	fd = trickle_fd(body.ptr, body.len, &pid);
	frame_reader_init(&fr, fd, "in");
	CHECK(frame_reader_next(&fr, &h) == 1);
	CHECK_STR(headers_get(&h, "Message-Id"), "slow");
	CHECK(frame_reader_body_length(&fr) == 2000);
	buf_reset(&got);
	while (frame_reader_chunk(&fr, &p, &n) > 0) {
		chunks++;
		buf_add(&got, p, n);
	}
	CHECK(chunks >= 1 && chunks <= 2000);
	CHECK(got.len == 2000 && !memcmp(got.ptr, body.ptr + 39, 2000));
	CHECK(frame_reader_next(&fr, &h) == 0);
	frame_reader_release(&fr);
	close(fd);
	CHECK(child_ok(pid));

	/* A fault found one byte at a time reports the same offset. */
	fd = trickle_fd("Content-Length: 2\n\nabc\n", 23, &pid);
	frame_reader_init(&fr, fd, "in");
	CHECK(frame_reader_next(&fr, &h) == 1);
	CHECK(frame_reader_body(&fr, &got) == -1);
	CHECK_STR(frame_reader_error(&fr),
		  "in: offset 21: Content-Length mismatch: byte after the 2-byte body is not LF");
	frame_reader_release(&fr);
	close(fd);
	waitpid(pid, NULL, 0);

	headers_release(&h);
	buf_release(&body);
	buf_release(&got);
}

/* Bodies larger than the reader's buffer pass through in pieces. */
static void test_large(void)
{
	const size_t len = 1000003;
	struct frame_reader fr;
	struct headers h = HEADERS_INIT;
	struct buf in = BUF_INIT, got = BUF_INIT;
	const char *p;
	size_t n, total = 0, chunks = 0, biggest = 0;
	int fd, same = 1;

	for (int f = 0; f < 2; f++) {
		buf_addstr(&in, "Content-Length: 1000003\n\n");
		for (size_t i = 0; i < len; i++)
			buf_addch(&in, (char)(i % 251 + f));
		buf_addch(&in, '\n');
	}
	fd = memfd_with(in.ptr, in.len);
	frame_reader_init(&fr, fd, "in");
	CHECK(frame_reader_next(&fr, &h) == 1);
	while (frame_reader_chunk(&fr, &p, &n) > 0) {
		for (size_t i = 0; i < n; i++)
			same &= p[i] == (char)((total + i) % 251);
		total += n;
		chunks++;
		if (n > biggest)
			biggest = n;
	}
	CHECK(total == len && same);
	CHECK(chunks >= 4);
	CHECK(biggest <= 256 * 1024 + FRAME_HEADER_MAX);
	CHECK(frame_reader_next(&fr, &h) == 1);
	CHECK(frame_reader_body(&fr, &got) == 0);
	CHECK(got.len == len);
	CHECK(got.len == len && !memcmp(got.ptr, in.ptr + 2 * 25 + len + 1, len));
	CHECK(frame_reader_next(&fr, &h) == 0);
	frame_reader_release(&fr);
	close(fd);
	headers_release(&h);
	buf_release(&in);
	buf_release(&got);
}

static void test_faults(void)
{
	STREAM("A: 1\n\nxx\n", "", "in: offset 0: missing Content-Length");
	/* A common name with a bad byte after it, or a space before its colon. */
	STREAM("Content-Length : 1\n\nx\n", "", "in: offset 0: invalid header name 'Content-Length '" HINT);
	STREAM("Message-Id\x01: 1\nContent-Length: 1\n\nx\n", "",
	       "in: offset 0: invalid header name 'Message-Id\x01'" HINT);
	STREAM("Timestamp\n\n", "", "in: offset 0: header line without colon" HINT);
	STREAM("Message-Id: abc\nA: 1\n\n", "",
	       "in: offset 0: missing Content-Length (Message-Id abc)");
	STREAM("Content-Length: 1\n\nx\n\n", "Content-Length=1;[x]",
	       "in: offset 21: missing Content-Length");
	STREAM("Content-Length: 12a\n\n", "",
	       "in: offset 0: invalid Content-Length '12a'");
	STREAM("A: 1\nContent-Length: -1\n\n\n", "",
	       "in: offset 5: invalid Content-Length '-1'");
	STREAM("Content-Length: +1\n\nx\n", "",
	       "in: offset 0: invalid Content-Length '+1'");
	STREAM("Content-Length:\n\n\n", "",
	       "in: offset 0: invalid Content-Length ''");
	STREAM("Content-Length: 1 2\n\n\n", "",
	       "in: offset 0: invalid Content-Length '1 2'");
	STREAM("Content-Length: 18446744073709551616\n\n\n", "",
	       "in: offset 0: invalid Content-Length '18446744073709551616'");
	STREAM("A: 1\nContent-Len", "",
	       "in: offset 16: truncated frame: end of input in the header block");
	STREAM("Content-Length: 1\n\nx\nB", "Content-Length=1;[x]",
	       "in: offset 22: truncated frame: end of input in the header block");
	STREAM("Content-Length: 1\n", "",
	       "in: offset 18: truncated frame: end of input in the header block");
	STREAM("Message-Id: abc\nContent-Length: 10\n\nhello",
	       "Message-Id=abc;Content-Length=10;",
	       "in: offset 41: truncated frame: end of input after 5 of 10 body bytes (Message-Id abc)");
	STREAM("Content-Length: 1\n\nx\nMessage-Id: m2\nContent-Length: 3\n\n",
	       "Content-Length=1;[x]Message-Id=m2;Content-Length=3;",
	       "in: offset 55: truncated frame: end of input after 0 of 3 body bytes (Message-Id m2)");
	STREAM("Content-Length: 2\n\nabc\n", "Content-Length=2;",
	       "in: offset 21: Content-Length mismatch: byte after the 2-byte body is not LF");
	STREAM("Message-Id: x\nContent-Length: 2\n\nab\r\n",
	       "Message-Id=x;Content-Length=2;",
	       "in: offset 35: Content-Length mismatch: byte after the 2-byte body is not LF (Message-Id x)");
	STREAM("Content-Length: 2\n\nab", "Content-Length=2;",
	       "in: offset 21: truncated frame: end of input before the LF that ends the frame");
	STREAM("Content-Length: 0\n\n", "Content-Length=0;",
	       "in: offset 19: truncated frame: end of input before the LF that ends the frame");
	STREAM("Bad Name: x\nContent-Length: 0\n\n\n", "",
	       "in: offset 0: invalid header name 'Bad Name'" HINT);
	STREAM("Content-Length: 0\n\n\nA: 1\nB@d: x\nContent-Length: 0\n\n\n",
	       "Content-Length=0;[]", "in: offset 25: invalid header name 'B@d'");
	STREAM("Content-Length: 0\n\n\n: x\n\n", "Content-Length=0;[]",
	       "in: offset 20: invalid header name ''");
	STREAM("just some text\n\n", "",
	       "in: offset 0: header line without colon" HINT);
	STREAM("Content-Length: 0\n\n\nA: 1\nno colon\n\n", "Content-Length=0;[]",
	       "in: offset 25: header line without colon");
	STREAM("Content-Length: 1\nContent-Length: 2\n\nx\n", "",
	       "in: offset 18: conflicting Content-Length headers");
	STREAM("A: x\ry\nContent-Length: 0\n\n\n", "",
	       "in: offset 0: invalid byte in value of header 'A'");
	STREAM("Content-Length: 0\nA: x\0y\n\n\n", "",
	       "in: offset 18: invalid byte in value of header 'A'");
	/* The block is looked at 16 bytes at a time: a CR or NUL in the
	 * last byte of a 16, the first of the next, or the short tail. */
	STREAM("A: 123456789012\rB: 1\nContent-Length: 0\n\n\n", "",
	       "in: offset 0: invalid byte in value of header 'A'");
	STREAM("A: 1234567890123\0: 1\nContent-Length: 0\n\n\n", "",
	       "in: offset 0: invalid byte in value of header 'A'");
	STREAM("Content-Length: 0\nA: 12345678901234\r\n\n\n",
	       "Content-Length=0;A=12345678901234;[]", NULL);
	STREAM("Content-Length: 0\nA: 1234567\r8\n\n\n", "",
	       "in: offset 18: invalid byte in value of header 'A'");
}

/* The bytes after a block's blank line are the body's: a CR or NUL there
 * is no fault of the block, even in the same 16 bytes as its end. */
static void test_block_edges(void)
{
	STREAM("Content-Length: 4\n\n\r\0\r\0\n",
	       "Content-Length=4;[\r@\r@]", NULL);
	STREAM("A: 1\nContent-Length: 1\n\n\r\n",
	       "A=1;Content-Length=1;[\r]", NULL);
	STREAM("Content-Length: 1\nB: 2345678\n\n\0\n",
	       "Content-Length=1;B=2345678;[@]", NULL);
}

/* frame_reader_whole hands a frame out whole only when all of it is
 * there and well framed; else nothing is consumed and the chunks tell. */
static void test_whole(void)
{
	static const char two[] = "Content-Length: 2\n\nab\nContent-Length: 1\n\nc\n";
	static const char bad_lf[] = "Content-Length: 2\n\nabc";
	struct frame_reader fr;
	struct headers h = HEADERS_INIT;
	const char *p;
	size_t n;
	int fd = memfd_with(two, sizeof(two) - 1);

	frame_reader_init(&fr, fd, "in");
	CHECK(frame_reader_next(&fr, &h) == 1);
	CHECK(frame_reader_whole(&fr, &p, &n) == 1);
	CHECK(n == 22 && !memcmp(p, two, 22));
	/* Called again after the frame, there is no frame in hand. */
	CHECK(frame_reader_whole(&fr, &p, &n) == 0);
	CHECK(frame_reader_next(&fr, &h) == 1);
	/* A body begun is no longer whole. */
	CHECK(frame_reader_chunk(&fr, &p, &n) == 1 && n == 1 && *p == 'c');
	CHECK(frame_reader_whole(&fr, &p, &n) == 0);
	CHECK(frame_reader_chunk(&fr, &p, &n) == 0);
	CHECK(frame_reader_next(&fr, &h) == 0);
	frame_reader_release(&fr);
	close(fd);

	fd = memfd_with(bad_lf, sizeof(bad_lf) - 1);
	frame_reader_init(&fr, fd, "in");
	CHECK(frame_reader_next(&fr, &h) == 1);
	CHECK(frame_reader_whole(&fr, &p, &n) == 0);
	CHECK(frame_reader_chunk(&fr, &p, &n) == -1);
	CHECK_STR(frame_reader_error(&fr),
		  "in: offset 21: Content-Length mismatch: byte after the 2-byte body is not LF");
	frame_reader_release(&fr);
	close(fd);
	headers_release(&h);
}

static void test_raw_hint(void)
{
	STREAM("<?xml version=\"1.0\"?>\n<a/>\n", "",
	       "in: offset 27: truncated frame: end of input in the header block" HINT);
	STREAM("{\"a\": 1}\n\n", "",
	       "in: offset 0: invalid header name '{\"a\"'" HINT);
	CHECK(frame_looks_raw("  \n<a/>", 7));
	CHECK(frame_looks_raw("[1]", 3));
	CHECK(frame_looks_raw("\"s\"", 3));
	CHECK(frame_looks_raw("\xef\xbb\xbfhello", 8));
	CHECK(!frame_looks_raw("Content-Length: 0", 17));
	CHECK(!frame_looks_raw("   ", 3));
	CHECK(!frame_looks_raw("", 0));
}

/* A header block of exactly len bytes, blank line included. */
static void block_of(struct buf *b, size_t len)
{
	buf_reset(b);
	buf_addstr(b, "Content-Length: 0\nX: ");
	while (b->len < len - 2)
		buf_addch(b, 'v');
	buf_add(b, "\n\n\n", 3);
}

static void test_header_limit(void)
{
	struct buf b = BUF_INIT, want = BUF_INIT;

	block_of(&b, FRAME_HEADER_MAX);
	buf_addstr(&want, "Content-Length=0;X=");
	buf_add(&want, b.ptr + 21, FRAME_HEADER_MAX - 23);
	buf_addstr(&want, ";[]");
	check_stream(b.ptr, b.len, want.ptr, NULL);
	block_of(&b, FRAME_HEADER_MAX + 1);
	check_stream(b.ptr, b.len, "", "in: offset 0: header block over 64 KiB");
	/* Many short lines, after a good frame, with no end in sight. */
	buf_reset(&b);
	buf_addstr(&b, "Content-Length: 0\n\n\n");
	for (int i = 0; i < 20000; i++)
		buf_addstr(&b, "A: 1\n");
	check_stream(b.ptr, b.len, "Content-Length=0;[]",
		     "in: offset 20: header block over 64 KiB");
	buf_release(&b);
	buf_release(&want);
}

static void test_skip_and_errors(void)
{
	struct frame_reader fr;
	struct headers h = HEADERS_INIT;
	const char *p;
	size_t n;
	int fd;

	/* Bodies not read are skipped, and still checked. */
	fd = memfd_with(good, sizeof(good) - 1);
	frame_reader_init(&fr, fd, "in");
	for (int i = 0; i < 5; i++)
		CHECK(frame_reader_next(&fr, &h) == 1);
	CHECK_STR(headers_get(&h, "Content-Length"), "00");
	CHECK(frame_reader_next(&fr, &h) == 0);
	CHECK(headers_count(&h) == 0);
	CHECK(frame_reader_next(&fr, &h) == 0);
	frame_reader_release(&fr);
	close(fd);

	fd = memfd_with("Content-Length: 5\n\nhelloX", 25);
	frame_reader_init(&fr, fd, "in");
	CHECK(frame_reader_next(&fr, &h) == 1);
	CHECK(frame_reader_next(&fr, &h) == -1);
	CHECK_STR(frame_reader_error(&fr),
		  "in: offset 24: Content-Length mismatch: byte after the 5-byte body is not LF");
	frame_reader_release(&fr);
	close(fd);

	/* Past the body, a chunk call says there is no more. */
	fd = memfd_with("Content-Length: 1\n\nx\n", 21);
	frame_reader_init(&fr, fd, "in");
	CHECK(frame_reader_next(&fr, &h) == 1);
	CHECK(frame_reader_skip(&fr) == 0);
	CHECK(frame_reader_chunk(&fr, &p, &n) == 0);
	CHECK(frame_reader_next(&fr, &h) == 0);
	frame_reader_release(&fr);
	close(fd);

	/* A read error is an I/O error (74), named by the input. */
	fd = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	frame_reader_init(&fr, fd, "dir");
	CHECK(frame_reader_next(&fr, &h) == -1);
	CHECK_STR(frame_reader_error(&fr), "cannot read 'dir': Is a directory");
	CHECK(frame_reader_exit_code(&fr) == 74);
	frame_reader_release(&fr);
	close(fd);
	headers_release(&h);
}

/* Everything written to fd since it was created. */
static void slurp(int fd, struct buf *out)
{
	char tmp[4096];
	ssize_t r;

	buf_reset(out);
	lseek(fd, 0, SEEK_SET);
	while ((r = read(fd, tmp, sizeof(tmp))) > 0)
		buf_add(out, tmp, (size_t)r);
}

static void hdr(struct headers *h, const char *line)
{
	if (headers_add_line(h, line) < 0)
		abort();
}

/* Frames written in a child with $MSG_HISTORY set before the first use. */
static void write_with_history(const char *history, struct buf *out)
{
	int fd = memfd_with("", 0);
	pid_t pid = fork();

	if (pid == 0) {
		struct frame_writer fw;
		struct headers h = HEADERS_INIT;

		setenv("MSG_HISTORY", history, 1);
		frame_writer_init(&fw, fd, "out");
		frame_writer_write(&fw, &h, "a", 1);
		hdr(&h, "Message-History: msg-wrap");
		hdr(&h, "X: 1");
		hdr(&h, "message-history: dropped");
		frame_writer_write(&fw, &h, "", 0);
		headers_reset(&h);
		hdr(&h, "Message-History:");
		frame_writer_write(&fw, &h, "", 0);
		_exit(frame_writer_flush(&fw) < 0);
	}
	CHECK(child_ok(pid));
	slurp(fd, out);
	close(fd);
}

static void test_history(void)
{
	struct buf out = BUF_INIT;

	write_with_history("msg-test", &out);
	CHECK_STR(out.ptr,
		  "Message-History: msg-test\nContent-Length: 1\n\na\n"
		  "Message-History: msg-wrap, msg-test\nX: 1\nContent-Length: 0\n\n\n"
		  "Message-History: msg-test\nContent-Length: 0\n\n\n");
	/* A value that could not be a header value is not written. */
	write_with_history("bad\nvalue", &out);
	CHECK_STR(out.ptr,
		  "Content-Length: 1\n\na\n"
		  "Message-History: msg-wrap\nX: 1\nmessage-history: dropped\nContent-Length: 0\n\n\n"
		  "Message-History: \nContent-Length: 0\n\n\n");
	buf_release(&out);
}

static void test_writer(void)
{
	struct frame_writer fw;
	struct headers h = HEADERS_INIT;
	struct buf out = BUF_INIT;
	int fd = memfd_with("", 0);

	frame_writer_init(&fw, fd, "out");
	hdr(&h, "B: 2");
	hdr(&h, "Content-Length: 99");
	hdr(&h, "a: 1");
	hdr(&h, "content-length: 7");
	CHECK(frame_writer_write(&fw, &h, "hel\0o", 5) == 0);
	headers_reset(&h);
	CHECK(frame_writer_write(&fw, &h, "", 0) == 0);
	CHECK(frame_writer_begin(&fw, &h, 6) == 0);
	CHECK(frame_writer_body(&fw, "ab", 2) == 0);
	CHECK(frame_writer_body(&fw, "", 0) == 0);
	CHECK(frame_writer_body(&fw, "cd\n\n", 4) == 0);
	CHECK(frame_writer_end(&fw) == 0);
	CHECK(frame_writer_raw(&fw, "raw", 3) == 0);
	CHECK(fw.frames == 3);
	CHECK(frame_writer_flush(&fw) == 0);
	slurp(fd, &out);
	CHECK(out.len == 84);
	CHECK(out.len == 84 && !memcmp(out.ptr,
		"B: 2\na: 1\nContent-Length: 5\n\nhel\0o\n"
		"Content-Length: 0\n\n\n"
		"Content-Length: 6\n\nabcd\n\n\n"
		"raw", 84));

	/* Large bodies go around the buffer; the bytes are the same. */
	{
		size_t big = 300000;
		char *body = malloc(big);
		struct frame_reader fr;
		struct buf got = BUF_INIT;

		for (size_t i = 0; i < big; i++)
			body[i] = (char)(i * 13);
		ftruncate(fd, 0);
		lseek(fd, 0, SEEK_SET);
		hdr(&h, "Message-Id: big");
		CHECK(frame_writer_write(&fw, &h, body, big) == 0);
		CHECK(frame_writer_begin(&fw, &h, big) == 0);
		CHECK(frame_writer_body(&fw, body, 10) == 0);
		CHECK(frame_writer_body(&fw, body + 10, big - 10) == 0);
		CHECK(frame_writer_end(&fw) == 0);
		CHECK(frame_writer_flush(&fw) == 0);
		lseek(fd, 0, SEEK_SET);
		frame_reader_init(&fr, fd, "back");
		for (int i = 0; i < 2; i++) {
			CHECK(frame_reader_next(&fr, &h) == 1);
			CHECK_STR(headers_get(&h, "Message-Id"), "big");
			CHECK(frame_reader_body(&fr, &got) == 0);
			CHECK(got.len == big && !memcmp(got.ptr, body, big));
		}
		CHECK(frame_reader_next(&fr, &h) == 0);
		frame_reader_release(&fr);
		buf_release(&got);
		free(body);
	}
	CHECK(frame_writer_close(&fw) == 0);
	CHECK(fw.fd == -1);
	frame_writer_release(&fw);
	headers_release(&h);
	buf_release(&out);
}

static void test_writer_full(void)
{
	struct frame_writer fw;
	struct headers h = HEADERS_INIT;
	static char big[100000];
	int fd = open("/dev/full", O_WRONLY | O_CLOEXEC);

	if (fd < 0) {
		printf("# skipped: no /dev/full\n");
		return;
	}
	frame_writer_init(&fw, fd, "full");
	CHECK(frame_writer_write(&fw, &h, "x", 1) == 0);	/* buffered */
	CHECK(frame_writers_flush_all() == -1);
	errno = 0;
	CHECK(frame_writer_flush(&fw) == -1 && errno == ENOSPC);
	CHECK(fw.err == ENOSPC);
	/* Sticky: every later call fails the same way. */
	errno = 0;
	CHECK(frame_writer_write(&fw, &h, "y", 1) == -1 && errno == ENOSPC);
	errno = 0;
	CHECK(frame_writer_begin(&fw, &h, 1) == -1 && errno == ENOSPC);
	errno = 0;
	CHECK(frame_writer_raw(&fw, "z", 1) == -1 && errno == ENOSPC);
	errno = 0;
	CHECK(frame_writer_close(&fw) == -1 && errno == ENOSPC);
	frame_writer_release(&fw);
	CHECK(frame_writers_flush_all() == 0);

	/* A body too big for the buffer fails on the spot. */
	fd = open("/dev/full", O_WRONLY | O_CLOEXEC);
	frame_writer_init(&fw, fd, "full");
	CHECK(frame_writer_begin(&fw, &h, sizeof(big)) == 0);
	errno = 0;
	CHECK(frame_writer_body(&fw, big, sizeof(big)) == -1 && errno == ENOSPC);
	errno = 0;
	CHECK(frame_writer_end(&fw) == -1 && errno == ENOSPC);
	close(fd);
	frame_writer_release(&fw);
	headers_release(&h);
}

/* A sink that takes frames from memory, as a broker's does: what it
 * was handed, each frame between brackets. */
struct taking_sink {
	struct channel_sink base;
	struct buf got;
	int fail;		/* refuse the next frame with EIO */
};

static int taking_take(struct channel_sink *s, const char *frame, size_t n)
{
	struct taking_sink *ts = (struct taking_sink *)s;

	if (ts->fail) {
		errno = EIO;
		return -1;
	}
	buf_addch(&ts->got, '[');
	buf_add(&ts->got, frame, n);
	buf_addch(&ts->got, ']');
	return 0;
}

static void taking_abort(struct channel_sink *s) { (void)s; }
static int taking_ok(struct channel_sink *s) { (void)s; return 0; }
static void taking_free(struct channel_sink *s) { (void)s; }

static const struct channel_out_ops taking_ops = {
	.separate_frames = 1,
	.abort_frame = taking_abort,
	.make_durable = taking_ok,
	.close = taking_ok,
	.free = taking_free,
	.take_frame = taking_take,
};

/* Each frame reaches such a sink whole, once, however large its body and
 * however it was written; a refusal is the writer's sticky error. */
static void test_writer_takes(void)
{
	struct taking_sink ts = { .base.ops = &taking_ops, .got = BUF_INIT };
	struct frame_writer fw;
	struct headers h = HEADERS_INIT;
	struct buf big = BUF_INIT, want = BUF_INIT;

	frame_writer_init_sink(&fw, &ts.base, -1, "taking");
	headers_add(&h, "A", 1, "1", 1);
	CHECK(frame_writer_write(&fw, &h, "hi", 2) == 0);
	CHECK(frame_writer_whole(&fw, "Content-Length: 1\n\nx\n", 21) == 0);
	CHECK_STR(ts.got.ptr, "[A: 1\nContent-Length: 2\n\nhi\n]"
			      "[Content-Length: 1\n\nx\n]");
	/* A body four times the flush size, in pieces of both sizes. */
	for (int i = 0; i < 4 * 65536 + 5; i++)
		buf_addch(&big, (char)('a' + i % 26));
	buf_reset(&ts.got);
	CHECK(frame_writer_begin(&fw, &h, big.len) == 0);
	CHECK(frame_writer_body(&fw, big.ptr, 5) == 0);
	CHECK(frame_writer_body(&fw, big.ptr + 5, big.len - 5) == 0);
	CHECK(ts.got.len == 0);
	CHECK(frame_writer_end(&fw) == 0);
	buf_addf(&want, "[A: 1\nContent-Length: %zu\n\n", big.len);
	buf_add(&want, big.ptr, big.len);
	buf_addstr(&want, "\n]");
	CHECK(ts.got.len == want.len && !memcmp(ts.got.ptr, want.ptr, want.len));
	CHECK(fw.frames == 3);
	CHECK(frame_writer_flush(&fw) == 0);
	ts.fail = 1;
	CHECK(frame_writer_write(&fw, &h, "no", 2) == -1 && errno == EIO);
	CHECK(frame_writer_write(&fw, &h, "no", 2) == -1 && errno == EIO);
	CHECK(ts.got.len == want.len);
	frame_writer_release(&fw);
	headers_release(&h);
	buf_release(&ts.got);
	buf_release(&big);
	buf_release(&want);
}

/* The writer refuses a block a reader would refuse, and goes on. */
static void test_writer_limit(void)
{
	struct frame_writer fw;
	struct headers h = HEADERS_INIT;
	struct buf why = BUF_INIT, value = BUF_INIT;
	char path[] = "/tmp/test-frame-XXXXXX";
	int fd = mkstemp(path);

	unlink(path);
	/* "X: " value "\n" + "Content-Length: 1\n\n" is 65536 at most. */
	for (size_t i = 0; i < 65536 - 4 - 19; i++)
		buf_addch(&value, 'v');
	headers_set(&h, "X", value.ptr);
	CHECK(frame_header_size(&h, 1) == 65536);
	frame_writer_init(&fw, fd, "limit");
	CHECK(frame_writer_write(&fw, &h, "a", 1) == 0);
	buf_addch(&value, 'v');
	headers_set(&h, "X", value.ptr);
	errno = 0;
	CHECK(frame_writer_write(&fw, &h, "b", 1) == -1 && errno == EMSGSIZE);
	frame_header_too_big(&why, &h, 1);
	CHECK_STR(why.ptr, "header block over 64 KiB (65537 bytes): header 'X' is 65517 bytes");
	/* Not sticky: the next message is written, the refused one is not. */
	headers_reset(&h);
	CHECK(frame_writer_write(&fw, &h, "c", 1) == 0);
	CHECK(frame_writer_close(&fw) == 0);
	CHECK(lseek(fd, 0, SEEK_END) == 65536 + 2 + 19 + 2);
	frame_writer_release(&fw);
	close(fd);

	/* An Error text is cut to the room left, with "...": 100 bytes
	 * for "Error: " TEXT "\n". */
	headers_reset(&h);
	buf_setlen(&value, 65536 - 4 - 19 - 100);
	headers_set(&h, "X", value.ptr);
	buf_reset(&why);
	for (int i = 0; i < 15; i++)
		buf_addstr(&why, "0123456789");
	frame_set_error(&h, 1, why.ptr);
	CHECK(frame_header_size(&h, 1) == 65536);
	buf_setlen(&why, 89);
	buf_addstr(&why, "...");
	CHECK_STR(headers_get(&h, "Error"), why.ptr);
	/* No room even for a short reason: the longest header goes, named. */
	headers_reset(&h);
	buf_reset(&value);
	for (size_t i = 0; i < 65536 - 4 - 19; i++)
		buf_addch(&value, 'v');
	headers_set(&h, "X", value.ptr);
	frame_set_error(&h, 1, "msg-x: why");
	CHECK(frame_header_size(&h, 1) <= 65536);
	CHECK(headers_get(&h, "X") == NULL);
	CHECK_STR(headers_get(&h, "Error"), "msg-x: why; header 'X' of 65513 bytes dropped");
	headers_release(&h);
	buf_release(&why);
	buf_release(&value);
}

/* Bytes read ahead are parsed before the descriptor is read again, in
 * their order, up to the limit asked; the end of input or a read error
 * met ahead comes after them. */
static void test_read_ahead(void)
{
	struct frame_reader fr;
	struct buf got = BUF_INIT;
	struct headers h = HEADERS_INIT;
	int p[2], r;

	CHECK(pipe(p) == 0);
	CHECK(write_all(p[1], good, sizeof(good) - 1) == 0);
	close(p[1]);
	frame_reader_init(&fr, p[0], "in");
	CHECK(!frame_reader_buffered(&fr));
	CHECK(frame_reader_read_ahead(&fr, 10) == 1);
	CHECK(fr.ahead.len == 10 && frame_reader_buffered(&fr));
	CHECK(frame_reader_read_ahead(&fr, 10) == 0);	/* at the limit */
	CHECK(frame_reader_read_ahead(&fr, 1 << 20) == 1);
	CHECK(frame_reader_read_ahead(&fr, 1 << 20) == 0);	/* the end */
	CHECK(fr.ahead_eof);
	close(p[0]);	/* everything comes from what was read ahead */
	r = read_all(&fr, &got);
	CHECK(r == 0);
	CHECK_STR(got.ptr, good_dump);
	CHECK(frame_reader_next(&fr, &h) == 0);
	frame_reader_release(&fr);

	/* Part ahead, the rest read as usual. */
	buf_reset(&got);
	CHECK(pipe(p) == 0);
	CHECK(write_all(p[1], good, 30) == 0);
	frame_reader_init(&fr, p[0], "in");
	CHECK(frame_reader_read_ahead(&fr, 1 << 20) == 1);
	CHECK(write_all(p[1], good + 30, sizeof(good) - 1 - 30) == 0);
	close(p[1]);
	CHECK(read_all(&fr, &got) == 0);
	CHECK_STR(got.ptr, good_dump);
	frame_reader_release(&fr);
	close(p[0]);

	/* A read that fails ahead fails the parse, after the bytes before. */
	buf_reset(&got);
	CHECK(pipe(p) == 0);
	frame_reader_init(&fr, p[1], "in");	/* the write end: EBADF */
	CHECK(frame_reader_read_ahead(&fr, 1 << 20) == 0);
	CHECK(frame_reader_next(&fr, &h) == -1);
	CHECK_STR(frame_reader_error(&fr), "cannot read 'in': Bad file descriptor");
	CHECK(frame_reader_exit_code(&fr) == 74);
	frame_reader_release(&fr);
	close(p[0]);
	close(p[1]);
	headers_release(&h);
	buf_release(&got);
}

int main(void)
{
	unsetenv("MSG_HISTORY");
	/* Forked first: the writer reads $MSG_HISTORY once per process. */
	test_history();
	test_good();
	test_trickle();
	test_large();
	test_faults();
	test_block_edges();
	test_whole();
	test_raw_hint();
	test_header_limit();
	test_skip_and_errors();
	test_writer();
	test_writer_full();
	test_writer_limit();
	test_writer_takes();
	test_read_ahead();
	return unit_done();
}
