/* envelope: JSON envelopes of messages (jansson). */
#include "envelope.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"
#include "message.h"

static const char b64[] =
	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

void base64_encode(const char *p, size_t n, struct buf *out)
{
	const unsigned char *s = (const unsigned char *)p;
	size_t i;
	char *o;

	buf_grow(out, (n + 2) / 3 * 4);
	o = out->ptr + out->len;
	for (i = 0; i + 2 < n; i += 3) {
		unsigned v = (unsigned)s[i] << 16 | (unsigned)s[i + 1] << 8 | s[i + 2];
		*o++ = b64[v >> 18];
		*o++ = b64[(v >> 12) & 63];
		*o++ = b64[(v >> 6) & 63];
		*o++ = b64[v & 63];
	}
	if (i < n) {
		unsigned v = (unsigned)s[i] << 16 | (i + 1 < n ? (unsigned)s[i + 1] << 8 : 0);
		*o++ = b64[v >> 18];
		*o++ = b64[(v >> 12) & 63];
		*o++ = i + 1 < n ? b64[(v >> 6) & 63] : '=';
		*o++ = '=';
	}
	buf_setlen(out, (size_t)(o - out->ptr));
}

static int b64_value(unsigned char c)
{
	if (c >= 'A' && c <= 'Z') return c - 'A';
	if (c >= 'a' && c <= 'z') return c - 'a' + 26;
	if (c >= '0' && c <= '9') return c - '0' + 52;
	if (c == '+') return 62;
	if (c == '/') return 63;
	return -1;
}

int base64_decode(const char *p, size_t n, struct buf *out)
{
	unsigned acc = 0;
	int bits = 0;
	size_t i, pad = 0;

	if (n % 4)
		return -1;
	while (pad < 2 && pad < n && p[n - 1 - pad] == '=')
		pad++;
	buf_grow(out, n / 4 * 3);
	for (i = 0; i < n - pad; i++) {
		int v = b64_value((unsigned char)p[i]);
		if (v < 0)
			return -1;
		acc = (acc << 6) | (unsigned)v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			buf_addch(out, (char)((acc >> bits) & 0xff));
		}
	}
	/* Padding bits must be zero, so each body has exactly one encoding. */
	if (acc & ((1u << bits) - 1))
		return -1;
	return 0;
}

static int add_value(struct headers *h, const char *name, json_t *v,
		     struct buf *err)
{
	char num[64];
	const char *s;
	size_t n;

	switch (json_typeof(v)) {
	case JSON_STRING:
		s = json_string_value(v);
		n = json_string_length(v);
		break;
	case JSON_INTEGER:
		n = (size_t)snprintf(num, sizeof(num), "%" JSON_INTEGER_FORMAT,
				     json_integer_value(v));
		s = num;
		break;
	case JSON_REAL:
		/* The shortest text that reads back as the same double. */
		for (int prec = 1; prec <= 17; prec++) {
			n = (size_t)snprintf(num, sizeof(num), "%.*g", prec,
					     json_real_value(v));
			if (strtod(num, NULL) == json_real_value(v))
				break;
		}
		s = num;
		break;
	case JSON_TRUE:
		s = "true", n = 4;
		break;
	case JSON_FALSE:
		s = "false", n = 5;
		break;
	case JSON_NULL:
		return 0;
	default:
		buf_addf(err, "header '%s' is not a string", name);
		return -1;
	}
	if (headers_add(h, name, strlen(name), s, n) < 0) {
		buf_addf(err, "invalid header name '%s'", name);
		return -1;
	}
	return 0;
}

static int parse_headers(json_t *obj, struct headers *h, struct buf *err)
{
	const char *name;
	json_t *v;

	if (!json_is_object(obj)) {
		buf_addstr(err, "\"headers\" is not an object");
		return -1;
	}
	json_object_foreach(obj, name, v) {
		if (header_name_eq(name, strlen(name), "Content-Length", 14))
			continue;
		if (json_is_array(v)) {
			size_t i;
			json_t *item;
			json_array_foreach(v, i, item)
				if (add_value(h, name, item, err) < 0)
					return -1;
		} else if (add_value(h, name, v, err) < 0) {
			return -1;
		}
	}
	return 0;
}

/* Length of the JSON number at p (RFC 8259 grammar), or 0. */
static size_t json_number_length(const char *p, size_t n)
{
	size_t i = 0, digits;

	if (i < n && p[i] == '-')
		i++;
	if (i < n && p[i] == '0')
		i++;
	else if (i < n && p[i] >= '1' && p[i] <= '9')
		while (i < n && p[i] >= '0' && p[i] <= '9')
			i++;
	else
		return 0;
	if (i < n && p[i] == '.') {
		for (digits = 0, i++; i < n && p[i] >= '0' && p[i] <= '9'; i++)
			digits++;
		if (!digits)
			return 0;
	}
	if (i < n && (p[i] == 'e' || p[i] == 'E')) {
		i++;
		if (i < n && (p[i] == '+' || p[i] == '-'))
			i++;
		for (digits = 0; i < n && p[i] >= '0' && p[i] <= '9'; i++)
			digits++;
		if (!digits)
			return 0;
	}
	return i;
}

/* Does jansson refuse this number: an integer outside int64, or a real
 * whose magnitude overflows a double? */
static int number_too_wide(const char *p, size_t n)
{
	char *text = xmemdup(p, n);
	int wide;

	errno = 0;
	if (strpbrk(text, ".eE")) {
		double d = strtod(text, NULL);
		wide = errno == ERANGE && isinf(d);
	} else {
		(void)strtoll(text, NULL, 10);
		wide = errno == ERANGE;
	}
	free(text);
	return wide;
}

/*
 * Header values that are valid JSON numbers too wide for jansson become
 * strings of their own text, so they are kept as written. Only inside
 * "headers" (nesting 2 and deeper): elsewhere a number is refused anyway.
 * Returns how many were quoted.
 */
static size_t quote_wide_numbers(const char *p, size_t n, struct buf *out)
{
	size_t i = 0, done = 0, quoted = 0;
	int depth = 0;

	while (i < n) {
		size_t len;

		if (p[i] == '"') {
			for (i++; i < n && p[i] != '"'; i++)
				if (p[i] == '\\')
					i++;
			i++;
		} else if (p[i] == '{' || p[i] == '[') {
			depth++, i++;
		} else if (p[i] == '}' || p[i] == ']') {
			depth--, i++;
		} else if ((p[i] == '-' || (p[i] >= '0' && p[i] <= '9')) &&
			   (len = json_number_length(p + i, n - i))) {
			if (depth >= 2 && number_too_wide(p + i, len)) {
				buf_add(out, p + done, i - done);
				buf_addch(out, '"');
				buf_add(out, p + i, len);
				buf_addch(out, '"');
				done = i + len;
				quoted++;
			}
			i += len;
		} else {
			i++;
		}
	}
	if (quoted && done < n)
		buf_add(out, p + done, n - done);
	return quoted;
}

/* Parse with jansson; numbers it cannot hold are kept as text. */
static json_t *load_envelope(const char *text, size_t n, json_error_t *je)
{
	const size_t flags = JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL;
	json_t *root = json_loadb(text, n, flags, je);
	struct buf widened = BUF_INIT;

	if (!root && quote_wide_numbers(text, n, &widened)) {
		json_error_t again;
		root = json_loadb(widened.ptr, widened.len, flags, &again);
		if (!root)
			*je = again;
	}
	buf_release(&widened);
	return root;
}

int envelope_parse(const char *text, size_t n, struct headers *h,
		   struct buf *body, struct buf *err)
{
	json_error_t je;
	json_t *root = load_envelope(text, n, &je);
	const char *key;
	json_t *v;
	int have_body = 0, r = -1;

	buf_reset(body);
	if (!root) {
		buf_addf(err, "not JSON: %s at column %d", je.text, je.column);
		return -1;
	}
	if (!json_is_object(root)) {
		buf_addstr(err, "not a JSON object");
		goto out;
	}
	json_object_foreach(root, key, v) {
		if (!strcmp(key, "headers")) {
			if (parse_headers(v, h, err) < 0)
				goto out;
		} else if (!strcmp(key, "body") || !strcmp(key, "body_base64")) {
			if (have_body++) {
				buf_addstr(err, "both \"body\" and \"body_base64\"");
				goto out;
			}
			if (!json_is_string(v)) {
				buf_addf(err, "\"%s\" is not a string", key);
				goto out;
			}
			if (key[4] == '_') {
				if (base64_decode(json_string_value(v),
						  json_string_length(v), body) < 0) {
					buf_addstr(err, "\"body_base64\" is not valid base64");
					goto out;
				}
			} else {
				buf_add(body, json_string_value(v), json_string_length(v));
			}
		} else {
			buf_addf(err, "unknown key '%s'", key);
			goto out;
		}
	}
	r = 0;
out:
	json_decref(root);
	return r;
}

static int dump_to_buf(const char *p, size_t n, void *data)
{
	buf_add(data, p, n);
	return 0;
}

void envelope_format(const struct headers *h, const char *body, size_t n,
		     struct buf *out)
{
	json_t *root = json_object(), *hs = json_object();

	for (size_t i = 0; i < headers_count(h); i++) {
		size_t nl, vl;
		const char *name = headers_name(h, i, &nl);
		const char *val = headers_value(h, i, &vl);
		json_t *s, *old;

		if (header_name_eq(name, nl, "Content-Length", 14))
			continue;
		/* Names are ASCII by the frame rules; values may be any bytes. */
		s = utf8_valid(val, vl) ? json_stringn(val, vl) : NULL;
		if (!s) {
			struct buf tmp = BUF_INIT;
			for (size_t k = 0; k < vl; k++)
				buf_addch(&tmp, (unsigned char)val[k] < 0x80 ? val[k] : '?');
			s = json_stringn(tmp.ptr, tmp.len);
			buf_release(&tmp);
		}
		old = json_object_get(hs, name);
		if (!old) {
			json_object_set_new(hs, name, s);
		} else if (json_is_array(old)) {
			json_array_append_new(old, s);
		} else {
			json_t *arr = json_array();
			json_array_append(arr, old);
			json_array_append_new(arr, s);
			json_object_set_new(hs, name, arr);
		}
	}
	json_object_set_new(root, "headers", hs);
	if (utf8_valid(body, n)) {
		json_object_set_new(root, "body", json_stringn(body, n));
	} else {
		struct buf enc = BUF_INIT;
		base64_encode(body, n, &enc);
		json_object_set_new(root, "body_base64", json_stringn(enc.ptr, enc.len));
		buf_release(&enc);
	}
	if (json_dump_callback(root, dump_to_buf, out, JSON_COMPACT) < 0)
		die(EX_SOFTWARE, "cannot format JSON envelope");
	buf_addch(out, '\n');
	json_decref(root);
}
