/* Unit tests for jsonscan: pointers, chunk boundaries, errors, memory. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "jsonscan.h"
#include "jsonxml.h"
#include "unit.h"

#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif

/* Elements collected by a scan: each one's text then a newline. */
struct collect {
	struct buf all;
	int stop_after;		/* > 0: return -1 on that element */
	int seen;
};

static int collect_fn(void *ctx, const char *text, size_t n)
{
	struct collect *c = ctx;

	buf_add(&c->all, text, n);
	buf_addch(&c->all, '\n');
	return ++c->seen == c->stop_after ? -1 : 0;
}

static unsigned long long rng = 0x9e3779b97f4a7c15ULL;

static size_t rnd(size_t n)
{
	rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
	return (size_t)(rng % n);
}

/*
 * Scan doc with pointer in chunks: cut = 0 whole, cut > 0 chunks of cut
 * bytes, cut < 0 random sizes up to -cut. Returns the elements, or
 * "ERR <message> (N elements)" after an error.
 */
static const char *scan_chunked(const char *doc, size_t n, const char *pointer,
				long cut)
{
	static struct buf res = BUF_INIT;
	struct collect c = { BUF_INIT, 0, 0 };
	struct jsonscan s;
	size_t at = 0, len;
	int r = jsonscan_init(&s, pointer);

	while (r == 0 && at < n) {
		len = cut == 0 ? n : cut > 0 ? (size_t)cut : 1 + rnd((size_t)-cut);
		if (len > n - at)
			len = n - at;
		r = jsonscan_feed(&s, doc + at, len, collect_fn, &c);
		at += len;
	}
	if (r == 0)
		r = jsonscan_finish(&s);
	buf_reset(&res);
	if (r < 0)
		buf_addf(&res, "ERR %s (%llu elements)", s.err.ptr,
			 (unsigned long long)c.seen);
	else
		buf_add(&res, c.all.ptr, c.all.len);
	jsonscan_release(&s);
	buf_release(&c.all);
	return res.ptr;
}

static const char *scan(const char *doc, const char *pointer)
{
	return scan_chunked(doc, strlen(doc), pointer, 0);
}

/* Every way of cutting doc gives the same result as scanning it whole. */
static int same_in_chunks(const char *doc, size_t n, const char *pointer)
{
	struct buf whole = BUF_INIT;
	size_t k;
	int ok = 1;

	buf_addstr(&whole, scan_chunked(doc, n, pointer, 0));
	ok &= !strcmp(whole.ptr, scan_chunked(doc, n, pointer, 1));
	for (k = 0; k < 20; k++)
		ok &= !strcmp(whole.ptr, scan_chunked(doc, n, pointer, -17));
	for (k = 1; k < n && ok; k++) {
		struct collect c = { BUF_INIT, 0, 0 };
		struct jsonscan s;
		int r = jsonscan_init(&s, pointer);

		r = r ? r : jsonscan_feed(&s, doc, k, collect_fn, &c);
		r = r ? r : jsonscan_feed(&s, doc + k, n - k, collect_fn, &c);
		r = r ? r : jsonscan_finish(&s);
		if (r == 0)
			ok &= c.all.len == whole.len &&
			      !memcmp(c.all.ptr, whole.ptr, whole.len);
		else
			ok &= !strncmp(whole.ptr, "ERR ", 4) &&
			      !!strstr(whole.ptr, s.err.ptr);
		jsonscan_release(&s);
		buf_release(&c.all);
	}
	if (!ok)
		printf("#   chunking changed the result for %s\n", doc);
	buf_release(&whole);
	return ok;
}

static void test_pointers(void)
{
	static const char doc[] =
		"{\"a\": {\"x\": [9], \"b~/\": [1, \"x]\\\"[\", [2, [3]], {\"k\": \"}\"}, true,"
		" null, -1.5e3, \"\"]}, \"list\": [[0], [{\"items\": [7, 8]}]],"
		" \"a\\u0062\": [\"escaped name\"], \"\xc3\xa9\": [\"\xc3\xa9\"], \"\": [\"empty\"]}";

	CHECK_STR(scan(doc, "/a/b~0~1"),
		  "1\n\"x]\\\"[\"\n[2, [3]]\n{\"k\": \"}\"}\ntrue\nnull\n-1.5e3\n\"\"\n");
	CHECK_STR(scan(doc, "/a/x"), "9\n");
	CHECK_STR(scan(doc, "/list/1/0/items"), "7\n8\n");
	CHECK_STR(scan(doc, "/list/0"), "0\n");
	CHECK_STR(scan(doc, "/list"), "[0]\n[{\"items\": [7, 8]}]\n");
	CHECK_STR(scan(doc, "/ab"), "\"escaped name\"\n");
	CHECK_STR(scan(doc, "/\xc3\xa9"), "\"\xc3\xa9\"\n");
	CHECK_STR(scan(doc, "/"), "\"empty\"\n");
	CHECK_STR(scan(" [ 1 ,2\n,\t3 ] ", ""), "1\n2\n3\n");
	CHECK_STR(scan("[[1,[2]],[],{}]", ""), "[1,[2]]\n[]\n{}\n");
	CHECK(same_in_chunks(doc, sizeof(doc) - 1, "/a/b~0~1"));
	CHECK(same_in_chunks(doc, sizeof(doc) - 1, "/list/1/0/items"));
	CHECK(same_in_chunks(doc, sizeof(doc) - 1, "/ab"));
	/* The first of two equal names is the one that counts. */
	CHECK_STR(scan("{\"o\":[1],\"o\":[2]}", "/o"), "1\n");
	/* Index tokens: no leading zeros, no "-". */
	CHECK_STR(scan("[[1],[2]]", "/01"), "ERR no value at '/01' (0 elements)");
	CHECK_STR(scan("[[1],[2]]", "/-"), "ERR no value at '/-' (0 elements)");
	CHECK_STR(scan("{\"1\":[5]}", "/1"), "5\n");
	CHECK_STR(scan("[[1],[2]]", "/1"), "2\n");
}

static void test_missing_and_wrong_kind(void)
{
	struct jsonscan s;

	CHECK_STR(scan("{\"order\":[]}", "/orders"), "ERR no value at '/orders' (0 elements)");
	CHECK_STR(scan("[1,2]", "/5"), "ERR no value at '/5' (0 elements)");
	CHECK_STR(scan("{\"a\":1}", "/a/b"), "ERR no value at '/a/b' (0 elements)");
	CHECK_STR(scan("{\"orders\":{\"x\":[]}}", "/orders"),
		  "ERR offset 10: value at '/orders' is an object, not an array (0 elements)");
	CHECK_STR(scan("{\"o\":\"[1]\"}", "/o"),
		  "ERR offset 5: value at '/o' is a string, not an array (0 elements)");
	CHECK_STR(scan("{\"o\":-1}", "/o"),
		  "ERR offset 5: value at '/o' is a number, not an array (0 elements)");
	CHECK_STR(scan("{\"o\":false}", "/o"),
		  "ERR offset 5: value at '/o' is a boolean, not an array (0 elements)");
	CHECK_STR(scan("{\"o\":null}", "/o"),
		  "ERR offset 5: value at '/o' is null, not an array (0 elements)");
	CHECK_STR(scan("  7", ""), "ERR offset 2: value at '' is a number, not an array (0 elements)");
	CHECK_STR(scan("[]", ""), "");
	CHECK_STR(scan("{\"orders\": [ ]}", "/orders"), "");
	CHECK(jsonscan_init(&s, "orders") == -1 && errno == EINVAL);
	CHECK_STR(s.err.ptr, "malformed JSON pointer 'orders'");
	jsonscan_release(&s);
	CHECK(jsonscan_init(&s, "/a~2") == -1 && errno == EINVAL);
	jsonscan_release(&s);
	CHECK(jsonscan_init(&s, "/a~") == -1 && errno == EINVAL);
	jsonscan_release(&s);
}

static void test_errors_mid_array(void)
{
	static const char doc[] = "{\"orders\": [{\"id\": 1}, {\"id\": 2}, {\"id\": 3,}, {\"id\": 4}]}";
	struct collect c = { BUF_INIT, 0, 0 };
	struct jsonscan s;
	size_t k;
	int r = 0;

	CHECK(jsonscan_init(&s, "/orders") == 0);
	for (k = 0; k < sizeof(doc) - 1 && r == 0; k++)
		r = jsonscan_feed(&s, doc + k, 1, collect_fn, &c);
	CHECK(r == -1);
	CHECK_STR(c.all.ptr, "{\"id\": 1}\n{\"id\": 2}\n");
	CHECK(c.seen == 2 && jsonscan_count(&s) == 2);
	CHECK_STR(s.err.ptr, "offset 43: trailing comma before '}'");
	CHECK(jsonscan_feed(&s, "]", 1, collect_fn, &c) == -1);
	CHECK(jsonscan_finish(&s) == -1);
	CHECK_STR(s.err.ptr, "offset 43: trailing comma before '}'");
	jsonscan_release(&s);
	buf_release(&c.all);
	/* The whole document is checked, also after the array. */
	CHECK_STR(scan("{\"o\":[1,2],\"p\":tru}", "/o"),
		  "ERR offset 18: unexpected '}', 'true' expected (2 elements)");
	CHECK_STR(scan("{\"o\":[1,2]", "/o"), "ERR offset 10: unexpected end of input (2 elements)");
	CHECK_STR(scan("[1,2] [", ""), "ERR offset 6: unexpected '[' after the JSON value (2 elements)");
	CHECK_STR(scan("[\"a\", \"b\xff\"]", ""), "ERR offset 8: invalid UTF-8 in string (1 elements)");
	CHECK(same_in_chunks(doc, sizeof(doc) - 1, "/orders"));
}

static void test_stop(void)
{
	struct collect c = { BUF_INIT, 2, 0 };
	struct jsonscan s;

	CHECK(jsonscan_init(&s, "") == 0);
	CHECK(jsonscan_feed(&s, "[1,2,3]", 7, collect_fn, &c) == -1);
	CHECK(c.seen == 2);
	CHECK_STR(c.all.ptr, "1\n2\n");
	CHECK(jsonscan_feed(&s, "]", 1, collect_fn, &c) == -1);
	/* The element the handler refused was handed out all the same. */
	CHECK(c.seen == 2 && jsonscan_count(&s) == 2);
	jsonscan_release(&s);
	buf_release(&c.all);
}

/* ---- the scanner accepts exactly what jsonxml_parse accepts ---- */

static const char *scan_error(const char *doc, size_t n, long cut)
{
	const char *r = scan_chunked(doc, n, "/no such member", cut);

	if (!strcmp(r, "ERR no value at '/no such member' (0 elements)"))
		return "";
	return strncmp(r, "ERR ", 4) ? "(elements?)" : r + 4;
}

static const char *parse_error(const char *doc, size_t n)
{
	static struct buf err = BUF_INIT;
	xmlDocPtr d = jsonxml_parse(doc, n, &err);

	if (d) {
		xmlFreeDoc(d);
		return "";
	}
	buf_addstr(&err, " (0 elements)");
	return err.ptr;
}

/* 1 if the scanner and the parser agree on doc, else 0 (and say how). */
static int agree(const char *doc, size_t n, long cut)
{
	static struct buf a = BUF_INIT;
	const char *b;

	buf_reset(&a);
	buf_addstr(&a, parse_error(doc, n));
	b = scan_error(doc, n, cut);
	if (!strcmp(a.ptr, b))
		return 1;
	printf("#   '%.*s': parser '%s', scanner '%s'\n", (int)n, doc, a.ptr, b);
	return 0;
}

static const char *const malformed[] = {
	"", " \n\t", "[1,]", "{\"a\":1,}", "{\"a\":1 , }", "[\"abc", "\"ab\\",
	"\"\\u12", "\"\\q\"", "\"\\\x01\"", "\"\\u12x4\"", "\"\xff\"", "\"a\xc3(\"",
	"\"\xc0\x80\"", "\"\xed\xa0\x80\"", "\"\xf4\x90\x80\x80\"", "\"\xe2\x82",
	"\"a\nb\"", "01", "[-012]", "-", "[-]", "1.", "1.e5", "1e", "1e+", "+1",
	".5", "[1] x", "{} {}", "1 2", "[1 2]", "[1}", "{\"a\":1]", "{\"a\" 1}",
	"{1:2}", "[,1]", "tru", "[trUe]", "nul1", "[NaN]", "\xef\xbb\xbf[]",
	"[1,", "{\"a\"", "{\"a\":", "[[[", "{\"a\":[1,{\"b\":\"\\ud800\"}]}x",
	"[\"\\u0000\\uDFFF\", 1e400, -0.0E+00]", "[true,false,null]", "\"\\/\"",
	"{\"k\":\"v\"}", "[\"\xf0\x9f\x98\x80\", \"\xef\xbf\xbf\"]", "  [ ]  ",
	"0", "-0", "[0,1,-1,0.5,1E5,1e-5]", "[\"\\", "[\"\\u", "\"\xf0\x9f\x98",
};

static void test_same_rules_as_parser(void)
{
	size_t k, n, cut;
	int ok = 1;
	char deep[1030];

	for (k = 0; k < sizeof(malformed) / sizeof(malformed[0]); k++) {
		n = strlen(malformed[k]);
		ok &= agree(malformed[k], n, 0) && agree(malformed[k], n, 1);
	}
	ok &= agree("\"\x00\"", 3, 1) && agree("[1]\x00", 4, 0);
	memset(deep, '[', 513);
	memset(deep + 513, ']', 513);
	ok &= agree(deep, 1026, 0) && agree(deep + 1, 1024, 0);
	/* Every prefix of a document, and every one-byte change to it. */
	for (k = 0; k < sizeof(malformed) / sizeof(malformed[0]); k++) {
		const char *doc = malformed[k];

		n = strlen(doc);
		for (cut = 0; cut < n; cut++) {
			static const char bad[] = "\"\\[]{},:0-.eu\x80\xff\x01 ";
			char mutated[64];
			size_t b;

			ok &= agree(doc, cut, 0);
			if (n >= sizeof(mutated))
				continue;
			for (b = 0; b < sizeof(bad) - 1; b++) {
				memcpy(mutated, doc, n);
				mutated[cut] = bad[b];
				ok &= agree(mutated, n, 0) && agree(mutated, n, -3);
			}
		}
	}
	CHECK(ok);
}

/* ---- the corpus: elements are the exact texts of the DOM's children ---- */

static int read_file(const char *path, struct buf *b)
{
	FILE *f = fopen(path, "rb");
	char tmp[65536];
	size_t r;

	buf_reset(b);
	if (!f)
		return -1;
	while ((r = fread(tmp, 1, sizeof(tmp), f)) > 0)
		buf_add(b, tmp, r);
	fclose(f);
	return 0;
}

struct compare {
	xmlNodePtr next;	/* the DOM child the next element must equal */
	struct buf a, b, err;
	int bad;
};

static int compare_fn(void *ctx, const char *text, size_t n)
{
	struct compare *c = ctx;
	xmlDocPtr d = jsonxml_parse(text, n, &c->err);

	while (c->next && c->next->type != XML_ELEMENT_NODE)
		c->next = c->next->next;
	buf_reset(&c->a);
	buf_reset(&c->b);
	if (!d || !c->next ||
	    jsonxml_serialize(xmlDocGetRootElement(d), 0, &c->a, &c->err) < 0 ||
	    jsonxml_serialize(c->next, 0, &c->b, &c->err) < 0 ||
	    c->a.len != c->b.len || memcmp(c->a.ptr, c->b.ptr, c->a.len))
		c->bad++;
	if (c->next)
		c->next = c->next->next;
	xmlFreeDoc(d);
	return 0;
}

static void test_large_corpus_file(void)
{
	struct compare c = { NULL, BUF_INIT, BUF_INIT, BUF_INIT, 0 };
	struct buf doc = BUF_INIT, path = BUF_INIT;
	const char *top = getenv("MSG_TOP");
	struct jsonscan s;
	xmlDocPtr d;
	size_t at, len;
	int r = 0;

	buf_addf(&path, "%s/tests/fixtures/json/32-large-1mb.json", top ? top : ".");
	CHECK(read_file(path.ptr, &doc) == 0);
	d = jsonxml_parse(doc.ptr, doc.len, &c.err);
	CHECK(d != NULL);
	if (!d)
		goto out;
	c.next = xmlDocGetRootElement(d)->children->children;
	CHECK(jsonscan_init(&s, "/orders") == 0);
	for (at = 0; at < doc.len && r == 0; at += len) {
		len = 1 + rnd(8192);
		if (len > doc.len - at)
			len = doc.len - at;
		r = jsonscan_feed(&s, doc.ptr + at, len, compare_fn, &c);
	}
	CHECK(r == 0 && jsonscan_finish(&s) == 0);
	/* Each element took the next child: as many as the tree has. */
	CHECK(c.bad == 0 && c.next == NULL);
	jsonscan_release(&s);
	xmlFreeDoc(d);
out:
	buf_release(&doc);
	buf_release(&path);
	buf_release(&c.a);
	buf_release(&c.b);
	buf_release(&c.err);
}

/* ---- a 50 MB array in constant memory ---- */

struct tally {
	uint64_t bytes, elements;
};

static int count_fn(void *ctx, const char *text, size_t n)
{
	struct tally *t = ctx;

	t->bytes += n;
	t->elements++;
	return text[0] == '{' && text[n - 1] == '}' ? 0 : -1;
}

static long max_rss_kb(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss;
}

static void test_constant_memory(void)
{
	static const char head[] = "{\"meta\": {\"n\": 1}, \"orders\": [\n";
	struct buf chunk = BUF_INIT;
	struct jsonscan s;
	struct tally seen = { 0, 0 };
	uint64_t total = 0, id = 0;
	long before = max_rss_kb(), after;
	int r;

	CHECK(jsonscan_init(&s, "/orders") == 0);
	r = jsonscan_feed(&s, head, sizeof(head) - 1, count_fn, &seen);
	while (r == 0 && total < 50u << 20) {
		buf_reset(&chunk);
		while (chunk.len < 60000) {
			buf_addf(&chunk, "%s{\"id\": %llu, \"type\": \"%s\", \"items\": "
				 "[{\"sku\": \"A-%llu\", \"qty\": %u, \"note\": \"[\\\"x\\\"]"
				 " \\u00e9 \xe2\x82\xac\"}], \"ok\": true}", id ? ",\n" : "",
				 (unsigned long long)id, id % 3 ? "normal" : "rush",
				 (unsigned long long)id * 7, (unsigned)(id % 9));
			id++;
		}
		total += chunk.len;
		r = jsonscan_feed(&s, chunk.ptr, chunk.len, count_fn, &seen);
	}
	r = r ? r : jsonscan_feed(&s, "\n], \"end\": null}\n", 17, count_fn, &seen);
	CHECK(r == 0 && jsonscan_finish(&s) == 0);
	CHECK(seen.elements == id);
	CHECK(seen.bytes + 2 * (id - 1) == total);
	after = max_rss_kb();
	printf("# 50 MB array: %llu elements, max RSS %ld kB (%ld kB before)\n",
	       (unsigned long long)id, after, before);
#ifdef UNDER_ASAN
	CHECK(after - before < 32 * 1024);
#else
	CHECK(after < 32 * 1024);
#endif
	jsonscan_release(&s);
	buf_release(&chunk);
}

int main(void)
{
	test_constant_memory();	/* first, while max RSS is still low */
	test_pointers();
	test_missing_and_wrong_kind();
	test_errors_mid_array();
	test_stop();
	test_same_rules_as_parser();
	test_large_corpus_file();
	return unit_done();
}
