/* seqset: arrived sequence numbers as sorted ranges. */
#include "seqset.h"

#include <stdlib.h>
#include <string.h>

void seqset_init(struct seqset *s)
{
	memset(s, 0, sizeof(*s));
}

void seqset_release(struct seqset *s)
{
	free(s->v);
	seqset_init(s);
}

/* Index of the first range whose hi is >= n (s->n when none is). */
static size_t first_reaching(const struct seqset *s, uint64_t n)
{
	size_t lo = 0, hi = s->n;

	/* Members mostly arrive in order: look at the last range first. */
	if (s->n && s->v[s->n - 1].hi < n)
		return s->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (s->v[mid].hi < n)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int seqset_has(const struct seqset *s, uint64_t n)
{
	size_t i = first_reaching(s, n);

	return i < s->n && s->v[i].lo <= n;
}

static void insert_range(struct seqset *s, size_t i, uint64_t n)
{
	if (s->n == s->alloc) {
		s->alloc = s->alloc ? 2 * s->alloc : 4;
		s->v = xrealloc(s->v, s->alloc * sizeof(*s->v));
	}
	memmove(s->v + i + 1, s->v + i, (s->n - i) * sizeof(*s->v));
	s->v[i].lo = s->v[i].hi = n;
	s->n++;
}

int seqset_add(struct seqset *s, uint64_t n)
{
	size_t i = first_reaching(s, n);
	int joins_prev = i > 0 && s->v[i - 1].hi + 1 == n;
	int joins_next = i < s->n && s->v[i].lo == n + 1;

	if (i < s->n && s->v[i].lo <= n)
		return 0;
	s->count++;
	if (joins_prev && joins_next) {
		s->v[i - 1].hi = s->v[i].hi;
		memmove(s->v + i, s->v + i + 1, (s->n - i - 1) * sizeof(*s->v));
		s->n--;
	} else if (joins_prev) {
		s->v[i - 1].hi = n;
	} else if (joins_next) {
		s->v[i].lo = n;
	} else {
		insert_range(s, i, n);
	}
	return 1;
}

void seqset_append(struct seqset *s, uint64_t lo, uint64_t hi)
{
	s->count += hi - lo + 1;
	if (s->n && s->v[s->n - 1].hi + 1 == lo) {
		s->v[s->n - 1].hi = hi;
		return;
	}
	insert_range(s, s->n, lo);
	s->v[s->n - 1].hi = hi;
}

uint64_t seqset_max(const struct seqset *s)
{
	return s->n ? s->v[s->n - 1].hi : 0;
}

int seqset_complete(const struct seqset *s, uint64_t size)
{
	if (size == 0)
		return s->n == 0;
	return s->n == 1 && s->v[0].lo == 1 && s->v[0].hi == size;
}

static void add_gap(struct buf *out, uint64_t lo, uint64_t hi, int open)
{
	if (out->len)
		buf_addch(out, ',');
	buf_addu64(out, lo);
	if (open)
		buf_addch(out, '-');
	else if (hi > lo)
		buf_addf(out, "-%llu", (unsigned long long)hi);
}

void seqset_missing(const struct seqset *s, uint64_t size, struct buf *out)
{
	uint64_t next = 1;	/* the lowest number not yet accounted for */
	struct buf gaps = BUF_INIT;

	for (size_t i = 0; i < s->n && (size == 0 || next <= size); i++) {
		if (s->v[i].lo > next)
			add_gap(&gaps, next, size && s->v[i].lo - 1 > size
				? size : s->v[i].lo - 1, 0);
		next = s->v[i].hi + 1;
	}
	if (size == 0)
		add_gap(&gaps, next, 0, 1);
	else if (next <= size)
		add_gap(&gaps, next, size, 0);
	buf_add(out, gaps.ptr, gaps.len);
	buf_release(&gaps);
}

int seq_parse(const char *s, uint64_t min, uint64_t *out, const char **why)
{
	uint64_t v = 0;
	const char *p = s;

	*why = "not a number";
	if (!*p)
		return -1;
	for (; *p; p++) {
		if (*p < '0' || *p > '9')
			return -1;
		if (v > (SEQ_NUMBER_MAX - (uint64_t)(*p - '0')) / 10) {
			*why = "out of range";
			return -1;
		}
		v = v * 10 + (uint64_t)(*p - '0');
	}
	if (v < min) {
		*why = "out of range";
		return -1;
	}
	*out = v;
	return 0;
}
