/*
 * resequence-record: the resequencer's state as store records, written
 * as it changes and read back after a restart (the kinds and their bytes
 * are described in resequencer.h).
 */
#include "resequencer.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void rsq_group_value(struct buf *out, const struct rsq_group *g)
{
	buf_reset(out);
	buf_addf(out, "%" PRIu64 " %" PRIu64 " %d %d %" PRIu64 " %" PRId64 " %" PRIu64 "\n",
		 g->first, g->next, g->started, g->size_known, g->size, g->latest,
		 g->created);
	for (size_t i = 0; i < g->skipped.n; i++)
		buf_addf(out, "%s%" PRIu64 "-%" PRIu64, i ? "," : "",
			 g->skipped.v[i].lo, g->skipped.v[i].hi);
}

/* The skipped ranges "LO-HI,...", each above the one before. */
static int decode_skipped(struct rsq_group *g, const char *p)
{
	while (*p) {
		uint64_t lo, hi;
		int used;

		if (sscanf(p, "%" SCNu64 "-%" SCNu64 "%n", &lo, &hi, &used) != 2 ||
		    hi < lo || (g->skipped.n && lo <= seqset_max(&g->skipped)))
			return -1;
		rsq_restore_skipped(g, lo, hi);
		p += used;
		if (*p == ',' && p[1])
			p++;
		else if (*p)
			return -1;
	}
	return 0;
}

int rsq_group_decode(struct rsq_group *g, const char *value, size_t len)
{
	struct buf v = BUF_INIT;
	const char *nl;
	int used = 0, r = -1;

	buf_add(&v, value, len);
	if (!memchr(v.ptr, '\0', v.len) && (nl = strchr(v.ptr, '\n')) &&
	    sscanf(v.ptr, "%" SCNu64 " %" SCNu64 " %d %d %" SCNu64 " %" SCNd64 " %" SCNu64 "%n",
		   &g->first, &g->next, &g->started, &g->size_known, &g->size,
		   &g->latest, &g->created, &used) == 7 &&
	    v.ptr + used == nl && g->next >= g->first)
		r = decode_skipped(g, nl + 1);
	buf_release(&v);
	if (r < 0)
		errno = EINVAL;
	return r;
}
