/*
 * aggregate-record: the aggregator's state as store records, written as
 * it changes and read back after a restart (the kinds and their bytes
 * are described in aggregate.h).
 */
#include "aggregate.h"
#include "msgrec.h"
#include "store.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void agg_member_key(struct buf *out, const char *key, size_t key_len,
		    uint64_t serial)
{
	/* In order of serial: of arrival. */
	msgrec_key(out, key, key_len, serial);
}

size_t agg_group_records(const struct agg_group *g)
{
	return g->n + (g->marker != 0);
}

void agg_group_record_key(struct buf *out, const struct agg_group *g, size_t i)
{
	agg_member_key(out, g->key, g->key_len,
		       i < g->n ? g->m[i].serial : g->marker);
}

void agg_member_value(struct buf *out, const struct agg_input *in)
{
	msgrec_encode(out, in->now, in->h, in->body, in->len);
}

int agg_member_decode(const char *key, size_t key_len, const char *value,
		      size_t value_len, struct agg_input *in, struct headers *h)
{

	memset(in, 0, sizeof(*in));
	headers_reset(h);
	if (msgrec_key_decode(key, key_len, &in->key_len, &in->serial) < 0 ||
	    !in->key_len)
		goto damaged;
	in->key = key;
	if (!in->serial ||
	    msgrec_decode(value, value_len, &in->now, h, &in->body, &in->len) < 0)
		goto damaged;
	in->h = h;
	in->best = NAN;
	return 0;
damaged:
	errno = EINVAL;
	return -1;
}

