/* test-batch: the input batch cycle a stateful tool hooks into (tool.h,
 * batch_end): when it is called, in what order with the outputs made
 * durable and the dir: inputs deleted, and a failure that ends the tool
 * with its claims kept. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "channel.h"
#include "diag.h"
#include "tool.h"
#include "unit.h"

static char top[] = "/tmp/test-batch.XXXXXX";

/* The number of entries in TOP/name/sub that do not begin with '.'. */
static int count_in(const char *name, const char *sub)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s/%s", top, name, sub);
	return unit_count_entries(path);
}

static void addr_of(char *addr, size_t size, const char *kind, const char *name)
{
	snprintf(addr, size, "%s%s/%s", kind, top, name);
}

/* n messages, one a file, into the spool TOP/name: 0, or -1. */
static int fill(const char *name, int n)
{
	struct frame_writer fw;
	struct headers h;
	struct buf err = BUF_INIT;
	char addr[512], id[32];
	int r = 0;

	addr_of(addr, sizeof(addr), "dir:", name);
	if (channel_writer_open(addr, &fw, &err) < 0) {
		printf("# %s\n", err.ptr);
		buf_release(&err);
		return -1;
	}
	headers_init(&h);
	for (int i = 0; i < n && r == 0; i++) {
		snprintf(id, sizeof(id), "m%d", i);
		headers_set(&h, "Message-Id", id);
		r = frame_writer_write(&fw, &h, id, strlen(id));
	}
	if (frame_writer_close(&fw) < 0)
		r = -1;
	frame_writer_release(&fw);
	headers_release(&h);
	return r;
}

/* What each batch_end saw: the messages of the batch, the claims still
 * in cur/, the outputs already published. */
#define BATCHES_MAX 8
static struct {
	int messages, claimed, published;
} seen[BATCHES_MAX];
static int batches, messages, fail_with, die_at;
static const char *in_name = "in", *out_name = "out";

static int copy_frame(struct tool *t, struct frame_reader *fr, struct headers *h)
{
	struct buf body = BUF_INIT, why = BUF_INIT;

	if (frame_reader_body(fr, &body) < 0)
		return -1;
	if (die_at && messages + 1 == die_at)
		die(EX_DATAERR, "message %d cannot be processed", die_at);
	tool_write(t->out, h, body.ptr, body.len, &why);
	messages++;
	buf_release(&body);
	buf_release(&why);
	return 0;
}

static int count_batch(struct tool *t)
{
	(void)t;
	if (batches < BATCHES_MAX) {
		seen[batches].messages = messages;
		seen[batches].claimed = count_in(in_name, "cur");
		seen[batches].published = count_in(out_name, "new");
	}
	batches++;
	messages = 0;
	if (fail_with)
		fprintf(stderr, "test-batch: cannot commit the batch\n");
	return fail_with;
}

/* Copy the spool TOP/in_name to TOP/out_name with --once. */
static void run_tool(void)
{
	static char *argv0[] = { "test-batch", NULL };
	struct tool t = { .usage = "usage: test-batch", .once = 1,
			  .batch_end = count_batch };
	char in[512], out[512];
	char *args[] = { in };

	addr_of(in, sizeof(in), "dir:", in_name);
	addr_of(out, sizeof(out), "dir:", out_name);
	tool_init(&t, 1, argv0);
	t.output_addr = out;
	tool_open_outputs(&t);
	tool_each_frame(&t, 1, args, copy_frame);
	tool_finish(&t);
}

/* 130 messages: two full batches of SPOOL_CLAIMS_MAX and the rest, each
 * ended by batch_end while its claims are in cur/ and before any of its
 * outputs are published. */
static void test_batches_of_a_spool(void)
{
	batches = messages = fail_with = 0;
	CHECK(fill("in", 130) == 0);
	CHECK(count_in("in", "new") == 130);
	run_tool();
	CHECK(batches == 3);
	CHECK(seen[0].messages == 64 && seen[0].claimed == 64 && seen[0].published == 0);
	CHECK(seen[1].messages == 64 && seen[1].claimed == 64 && seen[1].published == 64);
	CHECK(seen[2].messages == 2 && seen[2].claimed == 2 && seen[2].published == 128);
	CHECK(count_in("in", "new") == 0 && count_in("in", "cur") == 0);
	CHECK(count_in("out", "new") == 130);
}

/* A batch_end that fails ends the tool with its status: its batch is
 * neither published nor deleted, and the claims wait in cur/. */
static void test_failed_batch_keeps_its_claims(void)
{
	int status;
	pid_t pid;

	CHECK(fill("in2", 130) == 0);
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		batches = messages = 0;
		fail_with = EX_TEMPFAIL;
		in_name = "in2";
		out_name = "out2";
		run_tool();
		_exit(0);
	}
	CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == EX_TEMPFAIL);
	CHECK(count_in("in2", "cur") == 64);
	CHECK(count_in("in2", "new") == 66);
	CHECK(count_in("out2", "new") == 0);
}

/* A stateful tool that dies at a message it cannot process: that one is
 * set aside, and the ones before it stay claimed, for its state may hold
 * part of it. */
static void test_death_keeps_the_batch(void)
{
	int status;
	pid_t pid;

	CHECK(fill("in3", 20) == 0);
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		batches = messages = fail_with = 0;
		die_at = 10;
		in_name = "in3";
		out_name = "out3";
		run_tool();
		_exit(0);
	}
	CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == EX_DATAERR);
	CHECK(count_in("in3", "bad") == 1);
	CHECK(count_in("in3", "cur") == 9);
	CHECK(count_in("in3", "new") == 10);
}

/* A stream input (a regular file, whose reads never wait) is one batch,
 * ended at its end. */
static void test_stream_ends_one_batch(void)
{
	static char *argv0[] = { "test-batch", NULL };
	struct tool t = { .usage = "usage: test-batch", .batch_end = count_batch };
	char path[512], out[512];
	char *args[] = { path };
	struct frame_writer fw;
	struct headers h;
	FILE *f;

	snprintf(path, sizeof(path), "%s/stream.msg", top);
	addr_of(out, sizeof(out), "", "stream.out");
	f = fopen(path, "w");
	CHECK(f != NULL);
	if (!f)
		return;
	frame_writer_init(&fw, fileno(f), "stream");
	headers_init(&h);
	for (int i = 0; i < 3; i++)
		frame_writer_write(&fw, &h, "x", 1);
	CHECK(frame_writer_close(&fw) == 0);
	frame_writer_release(&fw);
	headers_release(&h);
	fclose(f);

	batches = messages = fail_with = 0;
	in_name = out_name = "none";
	tool_init(&t, 1, argv0);
	t.output_addr = out;
	tool_open_outputs(&t);
	tool_each_frame(&t, 1, args, copy_frame);
	tool_finish(&t);
	CHECK(batches == 1 && seen[0].messages == 3);
}

int main(void)
{
	char cmd[600];

	if (!mkdtemp(top)) {
		perror("mkdtemp");
		return 1;
	}
	test_batches_of_a_spool();
	test_failed_batch_keeps_its_claims();
	test_death_keeps_the_batch();
	test_stream_ends_one_batch();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", top);
	if (system(cmd) != 0)
		printf("# could not remove %s\n", top);
	return unit_done();
}
