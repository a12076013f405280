/* test-envelope: base64 and the JSON envelope, both ways. */
#include <string.h>

#include "envelope.h"
#include "unit.h"

static void dump_headers(const struct headers *h, struct buf *out)
{
	buf_reset(out);
	for (size_t i = 0; i < headers_count(h); i++) {
		buf_addstr(out, headers_name(h, i, NULL));
		buf_addch(out, '=');
		buf_addstr(out, headers_value(h, i, NULL));
		buf_addch(out, ';');
	}
}

static void encodes(const char *in, size_t n, const char *want)
{
	struct buf out = BUF_INIT, back = BUF_INIT;

	buf_addstr(&out, ">");		/* appends to what is there */
	base64_encode(in, n, &out);
	CHECK(out.ptr[0] == '>');
	CHECK_STR(out.ptr + 1, want);
	CHECK(base64_decode(out.ptr + 1, out.len - 1, &back) == 0);
	CHECK(back.len == n && !memcmp(back.ptr, in, n));
	buf_release(&out);
	buf_release(&back);
}

static void decode_rejects(const char *in)
{
	struct buf out = BUF_INIT;

	CHECK(base64_decode(in, strlen(in), &out) == -1);
	buf_release(&out);
}

static void test_base64(void)
{
	struct buf out = BUF_INIT;

	/* RFC 4648 section 10. */
	encodes("", 0, "");
	encodes("f", 1, "Zg==");
	encodes("fo", 2, "Zm8=");
	encodes("foo", 3, "Zm9v");
	encodes("foob", 4, "Zm9vYg==");
	encodes("fooba", 5, "Zm9vYmE=");
	encodes("foobar", 6, "Zm9vYmFy");
	/* The last two letters of the alphabet, and NUL bytes. */
	encodes("\xfb\xff", 2, "+/8=");
	encodes("\xff\xff\xff", 3, "////");
	encodes("\xfb\xef\xbe", 3, "++++");
	encodes("\0\0\0\0", 4, "AAAAAA==");

	CHECK(base64_decode("", 0, &out) == 0 && out.len == 0);
	decode_rejects("Zg=");
	decode_rejects("Zm9");
	decode_rejects("Z");
	decode_rejects("Zm9vY");
	decode_rejects("Zm9*");
	decode_rejects("Zm9-");		/* base64url is not accepted */
	decode_rejects("Zm9_");
	decode_rejects(" Zg=");
	decode_rejects("Zg\n=");
	decode_rejects("Zg==Zg==");
	decode_rejects("Zg=a");
	decode_rejects("====");
	decode_rejects("A===");
	/* Non-zero bits under the padding: each body has one encoding. */
	decode_rejects("Zh==");
	decode_rejects("Zm9=");
	CHECK(base64_decode("Zm8/", 4, &out) == 0 && out.len == 3);
	CHECK(!memcmp(out.ptr, "fo?", 3));
	buf_release(&out);
}

/* parse text; expect the headers dump and body, or the error err. */
static void parse(const char *text, const char *want_h, const char *want_body,
		  size_t body_len, const char *want_err)
{
	struct headers h = HEADERS_INIT;
	struct buf body = BUF_INIT, err = BUF_INIT, d = BUF_INIT;
	int r;

	buf_addstr(&body, "stale");
	r = envelope_parse(text, strlen(text), &h, &body, &err);
	if (want_err) {
		CHECK(r == -1);
		CHECK_STR(err.ptr, want_err);
	} else {
		CHECK(r == 0);
		CHECK_STR(err.ptr, "");
		dump_headers(&h, &d);
		CHECK_STR(d.ptr, want_h);
		CHECK(body.len == body_len && !memcmp(body.ptr, want_body, body_len));
	}
	headers_release(&h);
	buf_release(&body);
	buf_release(&err);
	buf_release(&d);
}

static void test_parse(void)
{
	parse("{\"headers\":{\"A\":\"x\",\"N\":42,\"Neg\":-7,\"R\":1.5,\"Tenth\":0.1,"
	      "\"Big\":1e300,\"T\":true,\"F\":false,\"Z\":null,"
	      "\"L\":[\"a\",2,null,\"b\"],\"Content-Length\":\"99\","
	      "\"content-length\":5},\"body\":\"hi\"}",
	      "A=x;N=42;Neg=-7;R=1.5;Tenth=0.1;Big=1e+300;T=true;F=false;L=a;L=2;L=b;",
	      "hi", 2, NULL);
	parse("{\"body\":\"no headers\"}", "", "no headers", 10, NULL);
	parse("{\"headers\":{}}", "", "", 0, NULL);
	parse("{}", "", "", 0, NULL);
	parse("  {\"headers\":{\"V\":\" a\\r\\nb \"}}\n", "V=a b;", "", 0, NULL);
	parse("{\"body\":\"a\\u0000b\\u00e9\"}", "", "a\0b\xc3\xa9", 5, NULL);
	parse("{\"body_base64\":\"AP8=\"}", "", "\0\xff", 2, NULL);
	parse("{\"body_base64\":\"\"}", "", "", 0, NULL);
	parse("{\"body\":\"x\",\"headers\":{\"A\":\"1\"}}", "A=1;", "x", 1, NULL);

	parse("{\"headers\":{\"A\":\"1\"},\"extra\":1}", NULL, NULL, 0,
	      "unknown key 'extra'");
	parse("{\"body\":\"x\",\"body_base64\":\"eA==\"}", NULL, NULL, 0,
	      "both \"body\" and \"body_base64\"");
	parse("{\"body_base64\":\"eA==\",\"body\":\"x\"}", NULL, NULL, 0,
	      "both \"body\" and \"body_base64\"");
	parse("{\"body_base64\":\"eA=\"}", NULL, NULL, 0,
	      "\"body_base64\" is not valid base64");
	parse("{\"body\":1}", NULL, NULL, 0, "\"body\" is not a string");
	parse("{\"body_base64\":null}", NULL, NULL, 0,
	      "\"body_base64\" is not a string");
	parse("{\"headers\":[]}", NULL, NULL, 0, "\"headers\" is not an object");
	parse("{\"headers\":{\"O\":{\"a\":1}}}", NULL, NULL, 0,
	      "header 'O' is not a string");
	parse("{\"headers\":{\"L\":[\"a\",[\"b\"]]}}", NULL, NULL, 0,
	      "header 'L' is not a string");
	parse("{\"headers\":{\"bad name\":\"v\"}}", NULL, NULL, 0,
	      "invalid header name 'bad name'");
	parse("{\"headers\":{\"\":\"v\"}}", NULL, NULL, 0,
	      "invalid header name ''");
	parse("[1,2]", NULL, NULL, 0, "not a JSON object");
}

static void parse_fails_with(const char *text, const char *prefix)
{
	struct headers h = HEADERS_INIT;
	struct buf body = BUF_INIT, err = BUF_INIT;

	CHECK(envelope_parse(text, strlen(text), &h, &body, &err) == -1);
	CHECK(!strncmp(err.ptr, prefix, strlen(prefix)));
	CHECK(err.len > strlen(prefix) + 10);	/* says what is wrong */
	printf("# %s\n", err.ptr);
	headers_release(&h);
	buf_release(&body);
	buf_release(&err);
}

static void test_bad_json(void)
{
	parse_fails_with("", "not JSON: ");
	parse_fails_with("{\"headers\":", "not JSON: ");
	parse_fails_with("{\"body\":\"x\"} trailing", "not JSON: ");
	parse_fails_with("{'body':'x'}", "not JSON: ");
	parse_fails_with("{\"body\":\"x\",\"body\":\"y\"}", "not JSON: ");
	parse_fails_with("{\"body\":\"\xff\"}", "not JSON: ");
	parse_fails_with("\"s\"", "not JSON: ");
}

static void formats(const struct headers *h, const char *body, size_t n,
		    const char *want)
{
	struct buf out = BUF_INIT;

	buf_addstr(&out, "prev\n");
	envelope_format(h, body, n, &out);
	CHECK(!strncmp(out.ptr, "prev\n", 5));
	CHECK_STR(out.ptr + 5, want);
	buf_release(&out);
}

static void test_format(void)
{
	struct headers h = HEADERS_INIT;

	formats(&h, "", 0, "{\"headers\":{},\"body\":\"\"}\n");
	headers_add_line(&h, "Message-Id: m1");
	headers_add_line(&h, "Content-Length: 3");
	headers_add_line(&h, "Message-History: a, b");
	headers_add_line(&h, "X: 1");
	headers_add_line(&h, "X: 2");
	headers_add_line(&h, "Y: \"q\" \\");
	headers_add_line(&h, "X: 3");
	formats(&h, "abc", 3,
		"{\"headers\":{\"Message-Id\":\"m1\",\"Message-History\":\"a, b\","
		"\"X\":[\"1\",\"2\",\"3\"],\"Y\":\"\\\"q\\\" \\\\\"},\"body\":\"abc\"}\n");
	headers_reset(&h);
	formats(&h, "\xff\xfe\x00", 3, "{\"headers\":{},\"body_base64\":\"//4A\"}\n");
	formats(&h, "caf\xc3\xa9", 5, "{\"headers\":{},\"body\":\"caf\xc3\xa9\"}\n");
	formats(&h, "caf\xe9", 4, "{\"headers\":{},\"body_base64\":\"Y2Fm6Q==\"}\n");
	formats(&h, "a\0b\n\t\x01", 6,
		"{\"headers\":{},\"body\":\"a\\u0000b\\n\\t\\u0001\"}\n");
	/* Header values are text: bytes that are not UTF-8 become '?'. */
	headers_add(&h, "V", 1, "caf\xe9 ok", 7);
	formats(&h, "", 0, "{\"headers\":{\"V\":\"caf? ok\"},\"body\":\"\"}\n");
	headers_release(&h);
}

static void round_trip(const struct headers *h, const char *body, size_t n)
{
	struct headers back = HEADERS_INIT;
	struct buf text = BUF_INIT, got = BUF_INIT, err = BUF_INIT;
	struct buf d1 = BUF_INIT, d2 = BUF_INIT;

	envelope_format(h, body, n, &text);
	CHECK(text.ptr[text.len - 1] == '\n');
	CHECK(memchr(text.ptr, '\n', text.len) == text.ptr + text.len - 1);
	CHECK(envelope_parse(text.ptr, text.len, &back, &got, &err) == 0);
	CHECK_STR(err.ptr, "");
	dump_headers(h, &d1);
	dump_headers(&back, &d2);
	CHECK_STR(d2.ptr, d1.ptr);
	CHECK(got.len == n && !memcmp(got.ptr, body, n));
	headers_release(&back);
	buf_release(&text);
	buf_release(&got);
	buf_release(&err);
	buf_release(&d1);
	buf_release(&d2);
}

static void test_round_trip(void)
{
	struct headers h = HEADERS_INIT;
	char bin[1024];

	for (size_t i = 0; i < sizeof(bin); i++)
		bin[i] = (char)(i * 37 + 11);
	round_trip(&h, "", 0);
	round_trip(&h, bin, sizeof(bin));
	round_trip(&h, bin, 1);
	headers_add_line(&h, "Message-Id: 0192f1d4-7b9e-7c31-9a55-2f4b8e61d0aa");
	headers_add_line(&h, "Timestamp: 2026-12-02T08:14:59.123Z");
	headers_add_line(&h, "Unicode: \xe2\x82\xac \xf0\x9f\x98\x80 \xc3\xa9");
	headers_add_line(&h, "Dup: one");
	headers_add_line(&h, "Dup: two");
	headers_add_line(&h, "Empty:");
	headers_add_line(&h, "Quote: \"{}[]\\/\"");
	round_trip(&h, "hello\n", 6);
	round_trip(&h, "a\0b", 3);
	round_trip(&h, "\xe2\x82\xac\xf0\x9f\x98\x80", 7);
	round_trip(&h, "\xe2\x82", 2);		/* cut UTF-8: base64 */
	round_trip(&h, "\xed\xa0\x80", 3);	/* a surrogate is not UTF-8 */
	round_trip(&h, "\xc0\x80", 2);		/* neither is an overlong NUL */
	round_trip(&h, bin, sizeof(bin));
	headers_release(&h);
}

int main(void)
{
	test_base64();
	test_parse();
	test_bad_json();
	test_format();
	test_round_trip();
	return unit_done();
}
