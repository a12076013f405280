/* message: stamping and content detection for new messages. */
#include "message.h"

#include <string.h>

#include "clock.h"
#include "id.h"
#include "utf8.h"

void message_stamp(struct headers *h)
{
	char id[UUID_STR_LEN + 1], ts[TIMESTAMP_LEN + 1];
	int64_t now = clock_now_ms();

	/* One clock read, so the id and the Timestamp agree. */
	id_new_at(id, (uint64_t)now);
	timestamp_format(ts, now);
	headers_setn(h, "Message-Id", id, UUID_STR_LEN);
	headers_setn(h, "Timestamp", ts, TIMESTAMP_LEN);
}

int message_expired(const struct headers *h)
{
	const char *v = headers_get(h, "Expires");
	int64_t at;

	if (!v || !*v)
		return 0;
	if (timestamp_parse(v, &at) < 0)
		return -1;
	/* The clock is read only for messages that can expire. */
	return at <= clock_now_ms();
}

int utf8_valid_text(const char *p, size_t n)
{
	return utf8_is_valid(p, n, 0);
}

int utf8_valid(const char *p, size_t n)
{
	return utf8_is_valid(p, n, 1);
}

static int blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/* Trim a cut-off partial UTF-8 sequence so a head/tail slice validates. */
static size_t trim_partial_end(const char *p, size_t n)
{
	size_t k = 0;

	while (k < 3 && k < n && ((unsigned char)p[n - 1 - k] & 0xc0) == 0x80)
		k++;
	if (k < n && ((unsigned char)p[n - 1 - k] & 0xc0) == 0xc0)
		return n - 1 - k;
	return n;
}

static size_t skip_partial_start(const char *p, size_t n)
{
	size_t k = 0;

	while (k < 3 && k < n && ((unsigned char)p[k] & 0xc0) == 0x80)
		k++;
	return k;
}

const char *message_detect_type(const char *head, size_t head_len,
				const char *tail, size_t tail_len)
{
	const char *h = head, *t = tail;
	size_t hn = head_len, tn = tail_len;
	int whole = tail == NULL;
	char first, last;

	if (whole) {
		t = head;
		tn = head_len;
	}
	if (hn >= 3 && !memcmp(h, "\xef\xbb\xbf", 3))
		h += 3, hn -= 3;
	while (hn && blank(*h))
		h++, hn--;
	while (tn && blank(t[tn - 1]))
		tn--;
	if (!hn || !tn)
		return (head_len == 0 || utf8_valid_text(head, head_len))
			       ? "text/plain" : "application/octet-stream";
	first = *h;
	last = t[tn - 1];
	if (first == '<' && last == '>')
		return "application/xml";
	if ((first == '{' && last == '}') || (first == '[' && last == ']'))
		return "application/json";
	if (whole)
		return utf8_valid_text(head, head_len) ? "text/plain"
						       : "application/octet-stream";
	if (utf8_valid_text(head, trim_partial_end(head, head_len))) {
		size_t skip = skip_partial_start(tail, tail_len);
		if (utf8_valid_text(tail + skip, tail_len - skip))
			return "text/plain";
	}
	return "application/octet-stream";
}
