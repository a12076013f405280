/*
 * trickle-record: the records of msg-trickle's state (trickle.h): an
 * entity as lines of text, so that a state directory can be looked into
 * with ordinary tools, and the version keys in sort order:
 *
 *   STATE ATTEMPTS SINCE NEXT_AT FAILED_AT
 *                                    e.g. "in-flight 1 1764792062345 0 0"
 *   CURRENT                          sort keys in hex, empty for none
 *   HORIZON
 *   LAST_OK
 *   MESSAGE-ID                       of the current version
 *   STATUS                           of the last failure response
 *   ERROR
 */
#include "trickle.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const state_names[] = { "idle", "ready", "in-flight", "failed" };

const char *trickle_state_name(enum trickle_state s)
{
	return state_names[s];
}

void trickle_entity_init(struct trickle_entity *e)
{
	memset(e, 0, sizeof(*e));
	buf_init(&e->current, 0);
	buf_init(&e->horizon, 0);
	buf_init(&e->last_ok, 0);
	buf_init(&e->msgid, 0);
	buf_init(&e->status, 0);
	buf_init(&e->error, 0);
}

void trickle_entity_release(struct trickle_entity *e)
{
	buf_release(&e->current);
	buf_release(&e->horizon);
	buf_release(&e->last_ok);
	buf_release(&e->msgid);
	buf_release(&e->status);
	buf_release(&e->error);
}

static void add_hex(struct buf *out, const struct buf *b)
{
	static const char digits[] = "0123456789abcdef";

	for (size_t i = 0; i < b->len; i++) {
		buf_addch(out, digits[(unsigned char)b->ptr[i] >> 4]);
		buf_addch(out, digits[(unsigned char)b->ptr[i] & 15]);
	}
	buf_addch(out, '\n');
}

void trickle_entity_encode(const struct trickle_entity *e, struct buf *out)
{
	buf_reset(out);
	buf_addf(out, "%s %" PRIu64 " %" PRId64 " %" PRId64 " %" PRId64 "\n",
		 state_names[e->state], e->attempts, e->since, e->next_at,
		 e->failed_at);
	add_hex(out, &e->current);
	add_hex(out, &e->horizon);
	add_hex(out, &e->last_ok);
	buf_add(out, e->msgid.ptr, e->msgid.len);
	buf_addch(out, '\n');
	buf_add(out, e->status.ptr, e->status.len);
	buf_addch(out, '\n');
	buf_add(out, e->error.ptr, e->error.len);
	buf_addch(out, '\n');
}

/* The next line of [*p, end) without its '\n': 0, or -1 if there is none. */
static int next_line(const char **p, const char *end, const char **line,
		     size_t *n)
{
	const char *nl = memchr(*p, '\n', (size_t)(end - *p));

	if (!nl)
		return -1;
	*line = *p;
	*n = (size_t)(nl - *p);
	*p = nl + 1;
	return 0;
}

static int hex_value(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

static int read_hex(const char **p, const char *end, struct buf *out)
{
	const char *s;
	size_t n;

	buf_reset(out);
	if (next_line(p, end, &s, &n) < 0 || n % 2)
		return -1;
	for (size_t i = 0; i < n; i += 2) {
		int hi = hex_value(s[i]), lo = hex_value(s[i + 1]);
		if (hi < 0 || lo < 0)
			return -1;
		buf_addch(out, (char)(hi << 4 | lo));
	}
	return 0;
}

static int read_text(const char **p, const char *end, struct buf *out)
{
	const char *s;
	size_t n;

	buf_reset(out);
	if (next_line(p, end, &s, &n) < 0)
		return -1;
	buf_add(out, s, n);
	return 0;
}

static int read_head(struct trickle_entity *e, const char **p, const char *end)
{
	char word[16], line[100];
	const char *s;
	size_t n;
	int used = 0;

	if (next_line(p, end, &s, &n) < 0 || n >= sizeof(line))
		return -1;
	memcpy(line, s, n);
	line[n] = '\0';
	if (sscanf(line, "%15s %" SCNu64 " %" SCNd64 " %" SCNd64 " %" SCNd64 "%n",
		   word, &e->attempts, &e->since, &e->next_at, &e->failed_at,
		   &used) != 5 ||
	    (size_t)used != n)
		return -1;
	for (int i = 0; i < 4; i++)
		if (!strcmp(word, state_names[i])) {
			e->state = (enum trickle_state)i;
			return 0;
		}
	return -1;
}

int trickle_entity_decode(struct trickle_entity *e, const char *p, size_t n)
{
	const char *end = p + n;

	if (read_head(e, &p, end) < 0 || read_hex(&p, end, &e->current) < 0 ||
	    read_hex(&p, end, &e->horizon) < 0 ||
	    read_hex(&p, end, &e->last_ok) < 0 ||
	    read_text(&p, end, &e->msgid) < 0 ||
	    read_text(&p, end, &e->status) < 0 ||
	    read_text(&p, end, &e->error) < 0 || p != end) {
		errno = EINVAL;
		return -1;
	}
	return 0;
}

/* ---- versions ---------------------------------------------------------------- */

/* An integer's 8 bytes in an order memcmp agrees with: big-endian, the
 * sign bit flipped so that negative numbers come first. */
int trickle_version_sortkey(enum trickle_order o, const char *v, size_t n,
			    struct buf *out, struct buf *why)
{
	char text[32], *end;
	long long x;
	uint64_t u;

	buf_reset(out);
	if (o == TRICKLE_TEXT) {
		buf_add(out, v, n);
		return 0;
	}
	if (n == 0 || n >= sizeof(text))
		goto bad;
	memcpy(text, v, n);
	text[n] = '\0';
	errno = 0;
	x = strtoll(text, &end, 10);
	if (errno || *end || !(text[0] == '-' || (text[0] >= '0' && text[0] <= '9')))
		goto bad;
	u = (uint64_t)x ^ (UINT64_C(1) << 63);
	for (int i = 7; i >= 0; i--)
		buf_addch(out, (char)(u >> (8 * i)));
	return 0;
bad:
	buf_addstr(why, "version '");
	buf_add(why, v, n > 40 ? 40 : n);
	buf_addstr(why, n > 40 ? "...' is not an integer" : "' is not an integer");
	return -1;
}

void trickle_version_text(enum trickle_order o, const char *k, size_t n,
			  struct buf *out)
{
	uint64_t u = 0;

	if (o == TRICKLE_TEXT || n != 8) {
		buf_add(out, k, n);
		return;
	}
	for (int i = 0; i < 8; i++)
		u = u << 8 | (unsigned char)k[i];
	buf_addf(out, "%lld", (long long)(u ^ (UINT64_C(1) << 63)));
}

void trickle_version_key(struct buf *out, const char *key, size_t klen,
			 const char *sortkey, size_t slen)
{
	buf_reset(out);
	buf_addch(out, (char)(klen >> 8));
	buf_addch(out, (char)(klen & 255));
	buf_add(out, key, klen);
	if (sortkey)
		buf_add(out, sortkey, slen);
}
