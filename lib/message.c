/* message: stamping and content detection for new messages. */
#include "message.h"

#include <string.h>

#include "clock.h"
#include "id.h"
#include "utf8.h"

void message_stamp(struct headers *h)
{
	/* One clock read, so the id and the Timestamp agree. */
	message_stamp_at(h, clock_now_ms());
}

void message_stamp_at(struct headers *h, int64_t now)
{
	char id[UUID_STR_LEN + 1], ts[TIMESTAMP_LEN + 1];

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

/*
 * How a body's text is encoded, as far as its first bytes tell: a
 * byte-order mark (UTF-8, UTF-16 or UTF-32, either byte order) or,
 * without one, '<' followed by '?' in UTF-16 or UTF-32, the start of an
 * XML declaration (XML 1.0, appendix F). Anything else is read a byte at
 * a time, which is right for UTF-8, ASCII and the encodings an XML
 * declaration in ASCII may name.
 */
struct encoding {
	unsigned unit;		/* bytes per code unit: 1, 2 or 4 */
	int big_endian;
	size_t bom;		/* bytes of byte-order mark */
};

static const struct {
	const char *bytes;
	size_t len;
	struct encoding enc;
} encoding_signs[] = {
	/* UTF-32 first: its little-endian mark begins like UTF-16's. */
	{ "\x00\x00\xfe\xff", 4, { 4, 1, 4 } },
	{ "\xff\xfe\x00\x00", 4, { 4, 0, 4 } },
	{ "\x00\x00\x00<", 4, { 4, 1, 0 } },
	{ "<\x00\x00\x00", 4, { 4, 0, 0 } },
	{ "\xfe\xff", 2, { 2, 1, 2 } },
	{ "\xff\xfe", 2, { 2, 0, 2 } },
	{ "\x00<\x00?", 4, { 2, 1, 0 } },
	{ "<\x00?\x00", 4, { 2, 0, 0 } },
	{ "\xef\xbb\xbf", 3, { 1, 0, 3 } },
};

static struct encoding sniff_encoding(const char *p, size_t n)
{
	static const struct encoding bytes = { 1, 0, 0 };

	/* Every sign starts with one of these: most bodies are done here. */
	if (!n || !memchr("\x00\xef\xfe\xff<", p[0], 5))
		return bytes;
	for (size_t i = 0; i < sizeof(encoding_signs) / sizeof(encoding_signs[0]); i++)
		if (n >= encoding_signs[i].len &&
		    !memcmp(p, encoding_signs[i].bytes, encoding_signs[i].len))
			return encoding_signs[i].enc;
	return bytes;
}

/* The code unit at p, as a number. */
static uint32_t unit_at(const char *p, const struct encoding *e)
{
	const unsigned char *u = (const unsigned char *)p;
	uint32_t c = 0;

	for (unsigned i = 0; i < e->unit; i++)
		c |= (uint32_t)u[e->big_endian ? i : e->unit - 1 - i] << (8 * (e->unit - 1 - i));
	return c;
}

static int blank(uint32_t c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/* The first character after the mark and blanks, or 0 when there is none
 * in p[0..n). */
static uint32_t first_char(const char *p, size_t n, const struct encoding *e)
{
	for (size_t i = e->bom; i + e->unit <= n; i += e->unit)
		if (!blank(unit_at(p + i, e)))
			return unit_at(p + i, e);
	return 0;
}

/* The last character before trailing blanks of a slice that ends where
 * the body ends, so its units line up from the end; 0 when none. */
static uint32_t last_char(const char *p, size_t n, const struct encoding *e)
{
	for (size_t end = n; end >= e->unit; end -= e->unit)
		if (!blank(unit_at(p + end - e->unit, e)))
			return unit_at(p + end - e->unit, e);
	return 0;
}

const char *message_xml_encoding(const char *p, size_t n)
{
	struct encoding e = sniff_encoding(p, n);

	if (e.unit != 4)
		return NULL;
	return e.bom ? "UTF-32" : e.big_endian ? "UTF-32BE" : "UTF-32LE";
}

enum body_start message_body_start(const char *p, size_t n)
{
	struct encoding e = sniff_encoding(p, n);
	uint32_t c = first_char(p, n, &e);

	if (c == '<')
		return STARTS_XML;
	/* JSON is UTF-8 (RFC 8259): a body in UTF-16 or UTF-32 is not. */
	if (e.unit == 1 && (c == '{' || c == '['))
		return STARTS_JSON;
	return STARTS_OTHER;
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

/* Text: UTF-8 without NUL, judged by head and tail when not whole. */
static int looks_like_text(const char *head, size_t head_len, const char *tail,
			   size_t tail_len)
{
	size_t skip;

	if (!tail)
		return utf8_valid_text(head, head_len);
	if (!utf8_valid_text(head, trim_partial_end(head, head_len)))
		return 0;
	skip = skip_partial_start(tail, tail_len);
	return utf8_valid_text(tail + skip, tail_len - skip);
}

const char *message_detect_type(const char *head, size_t head_len,
				const char *tail, size_t tail_len)
{
	struct encoding e = sniff_encoding(head, head_len);
	enum body_start start = message_body_start(head, head_len);
	uint32_t last;

	if (!tail) {
		tail = head;
		tail_len = head_len;
	}
	last = last_char(tail, tail_len, &e);
	if (start == STARTS_XML && last == '>')
		return "application/xml";
	if (start == STARTS_JSON && last == (first_char(head, head_len, &e) == '{' ? '}' : ']'))
		return "application/json";
	if (e.unit > 1)
		return "application/octet-stream";
	return looks_like_text(head, head_len, tail == head ? NULL : tail, tail_len)
		       ? "text/plain" : "application/octet-stream";
}
