/* message: stamping and content detection for new messages. */
#include "message.h"

#include <string.h>

#include "clock.h"
#include "id.h"

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

static int utf8_check(const unsigned char *s, size_t n, int allow_nul)
{
	size_t i = 0;

	while (i < n) {
		/* Runs of ASCII without NUL are the common case: 8 at a time. */
		while (n - i >= 8) {
			uint64_t w;
			memcpy(&w, s + i, 8);
			if ((w & 0x8080808080808080ull) ||
			    (!allow_nul && ((w - 0x0101010101010101ull) & ~w &
					    0x8080808080808080ull)))
				break;
			i += 8;
		}
		if (i >= n)
			break;
		unsigned c = s[i];
		size_t len;
		unsigned min;
		unsigned cp;

		if (c < 0x80) {
			if (!c && !allow_nul)
				return 0;
			i++;
			continue;
		}
		if (c >= 0xc2 && c <= 0xdf) {
			len = 2; cp = c & 0x1f; min = 0x80;
		} else if (c >= 0xe0 && c <= 0xef) {
			len = 3; cp = c & 0x0f; min = 0x800;
		} else if (c >= 0xf0 && c <= 0xf4) {
			len = 4; cp = c & 0x07; min = 0x10000;
		} else {
			return 0;
		}
		if (n - i < len)
			return 0;
		for (size_t k = 1; k < len; k++) {
			if ((s[i + k] & 0xc0) != 0x80)
				return 0;
			cp = (cp << 6) | (s[i + k] & 0x3f);
		}
		if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
			return 0;
		i += len;
	}
	return 1;
}

int utf8_valid_text(const char *p, size_t n)
{
	return utf8_check((const unsigned char *)p, n, 0);
}

int utf8_valid(const char *p, size_t n)
{
	return utf8_check((const unsigned char *)p, n, 1);
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
