/* store-later: store changes queued until their results are out. */
#include "store-later.h"

#include <string.h>

#include "store.h"

/* An entry: the op ('D' or 'P'), the kind's address, the deadline, the
 * key's and the value's lengths, then their bytes. */
struct later_head {
	char op;
	const char *kind;
	int64_t deadline;
	size_t key_len, value_len;
};

void store_later_init(struct store_later *l)
{
	buf_init(&l->q, 0);
}

void store_later_release(struct store_later *l)
{
	buf_release(&l->q);
}

static void queue(struct store_later *l, char op, const char *kind,
		  const void *key, size_t key_len, const void *value,
		  size_t value_len, int64_t deadline)
{
	struct later_head h;

	memset(&h, 0, sizeof(h));
	h.op = op;
	h.kind = kind;
	h.deadline = deadline;
	h.key_len = key_len;
	h.value_len = value_len;
	buf_add(&l->q, &h, sizeof(h));
	buf_add(&l->q, key, key_len);
	buf_add(&l->q, value, value_len);
}

void store_later_delete(struct store_later *l, const char *kind,
			const void *key, size_t key_len)
{
	queue(l, 'D', kind, key, key_len, "", 0, 0);
}

void store_later_put(struct store_later *l, const char *kind, const void *key,
		     size_t key_len, const void *value, size_t value_len,
		     int64_t deadline)
{
	queue(l, 'P', kind, key, key_len, value, value_len, deadline);
}

int store_later_apply(struct store_later *l, struct store *s)
{
	const char *p = l->q.ptr, *end = p + l->q.len;

	while (p < end) {
		struct later_head h;
		const char *key, *value;

		memcpy(&h, p, sizeof(h));
		key = p + sizeof(h);
		value = key + h.key_len;
		if (h.op == 'D' ? store_delete(s, h.kind, key, h.key_len) :
		    store_put(s, h.kind, key, h.key_len, value, h.value_len,
			      h.deadline))
			return -1;
		p = value + h.value_len;
	}
	buf_reset(&l->q);
	return 0;
}

int store_delete_expired(struct store *s, int64_t now)
{
	struct store_rec rec;

	while (store_earliest(s, &rec) == 1 && rec.deadline <= now)
		if (store_delete(s, rec.kind, rec.key, rec.key_len) < 0)
			return -1;
	return 0;
}
