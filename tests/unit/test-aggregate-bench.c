/*
 * test-aggregate-bench: members through the group table and the builder
 * as msg-aggregate -n 10 feeds them, interleaved so that every group is
 * open at once, with the rate printed. By default a small run that
 * checks the output; AGG_BENCH_GROUPS=100000 makes it the 1,000,000
 * member measurement (run under /usr/bin/time -v for the peak RSS), and
 * AGG_BENCH_MEMBERS=N sends N members through that many open groups,
 * round after round.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "aggregate.h"
#include "id.h"
#include "unit.h"

#define PER_GROUP 10

/* CPU time, not wall: the machine may be shared. */
static double seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Message i as a frame reader would hand it over. */
static void make_message(uint64_t i, uint64_t groups, struct headers *h,
			 struct buf *body, char *key, size_t *key_len)
{
	char id[UUID_STR_LEN + 1];

	uint64_t round = i / (groups * PER_GROUP);

	*key_len = (size_t)snprintf(key, 32, "order-%llu",
				    (unsigned long long)(round * groups + i % groups));
	id_new(id);
	headers_reset(h);
	headers_add(h, "Message-Id", 10, id, UUID_STR_LEN);
	headers_add(h, "Correlation-Id", 14, key, *key_len);
	headers_add(h, "Content-Type", 12, "text/plain", 10);
	buf_reset(body);
	buf_addf(body, "item %llu of %s", (unsigned long long)(i / groups % PER_GROUP),
		 key);
}

int main(void)
{
	const char *env = getenv("AGG_BENCH_GROUPS");
	uint64_t groups = env ? strtoull(env, NULL, 10) : 2000;
	struct agg_limits lim = { .count = PER_GROUP, .idle_ms = 60000 };
	struct agg_table *t = agg_table_new(&lim);
	struct keyset *closed = keyset_new(3600000, 0);
	struct agg_build_opt opt = { .separator = "\n", .separator_len = 1 };
	struct headers h = HEADERS_INIT, out_h = HEADERS_INIT;
	struct buf body = BUF_INIT, out = BUF_INIT, err = BUF_INIT;
	const char *many = getenv("AGG_BENCH_MEMBERS");
	uint64_t emitted = 0, bad = 0, open_peak = 0;
	uint64_t members = many ? strtoull(many, NULL, 10) : groups * PER_GROUP;
	char key[32];
	size_t key_len;
	double start, made, took;

	/* What making the messages costs, to tell it from the core's. */
	start = seconds();
	for (uint64_t i = 0; i < members; i++)
		make_message(i, groups, &h, &body, key, &key_len);
	made = seconds() - start;
	start = seconds();
	for (uint64_t i = 0; i < members; i++) {
		struct agg_input in = { .key = key, .h = &h, .kind = BODY_TEXT,
					.now = (int64_t)i, .best = NAN };
		struct agg_group *g;
		const char *why;

		make_message(i, groups, &h, &body, key, &in.key_len);
		in.body = body.ptr;
		in.len = body.len;
		if (agg_add(t, &in, &g, &why) != AGG_ADDED) {
			bad++;
			continue;
		}
		if (agg_groups(t) > open_peak)
			open_peak = agg_groups(t);
		if (agg_completed(t, g) == AGG_OPEN)
			continue;
		if (agg_build(g, &opt, AGG_COUNT, &out_h, &out, &err) < 0 ||
		    out.len < PER_GROUP * 10)
			bad++;
		emitted++;
		keyset_add(closed, g->key, g->key_len, in.now);
		agg_remove(t, g);
	}
	took = seconds() - start;
	CHECK(bad == 0 && emitted == members / PER_GROUP && agg_groups(t) == 0);
	CHECK(open_peak == groups);
	CHECK(keyset_count(closed) == members / PER_GROUP);
	printf("# %llu members in %llu groups: %.3f s of CPU, %.3f s of it making"
	       " the messages; the core: %.0f members/s\n",
	       (unsigned long long)members, (unsigned long long)groups, took, made,
	       (double)members / (took - made));
	/* The last group out, its members in order. */
	buf_reset(&body);
	for (int j = 0; j < PER_GROUP; j++)
		buf_addf(&body, "%sitem %d of order-%llu", j ? "\n" : "", j,
			 (unsigned long long)(members / PER_GROUP - 1));
	CHECK_STR(out.ptr, body.ptr);
	agg_table_free(t);
	keyset_free(closed);
	headers_release(&h);
	headers_release(&out_h);
	buf_release(&body);
	buf_release(&out);
	buf_release(&err);
	return unit_done();
}
