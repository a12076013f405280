/* Unit tests for jsonxml: the JSON <-> XML mapping and its exactness. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libxml/parser.h>

#include "jsonxml.h"
#include "unit.h"

static struct buf out = BUF_INIT, err = BUF_INIT;

static const char *fixture_dir(void)
{
	static struct buf dir = BUF_INIT;
	const char *top = getenv("MSG_TOP");

	if (!dir.len)
		buf_addf(&dir, "%s/tests/fixtures/json", top ? top : ".");
	return dir.ptr;
}

/* The path of a corpus file: its name's first len bytes, then suffix. */
static const char *fixture(struct buf *path, const char *name, size_t len,
			   const char *suffix)
{
	buf_reset(path);
	buf_addf(path, "%s/", fixture_dir());
	buf_add(path, name, len);
	buf_addstr(path, suffix);
	return path->ptr;
}

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

/* The compact text of JSON p[0..n), or NULL with the reason in err. */
static const char *compact(const char *p, size_t n, int pretty)
{
	xmlDocPtr doc = jsonxml_parse(p, n, &err);
	int r;

	buf_reset(&out);
	if (!doc)
		return NULL;
	r = jsonxml_serialize(xmlDocGetRootElement(doc), pretty, &out, &err);
	xmlFreeDoc(doc);
	return r < 0 ? NULL : out.ptr;
}

static const char *compact_str(const char *s)
{
	return compact(s, strlen(s), 0);
}

/* The parse error for s, or "" if it parsed. */
static const char *parse_error(const char *p, size_t n)
{
	xmlDocPtr doc = jsonxml_parse(p, n, &err);

	if (doc) {
		xmlFreeDoc(doc);
		return "";
	}
	return err.ptr;
}

#define ERROR_IS(json, msg) CHECK_STR(parse_error(json, sizeof(json) - 1), msg)

/* The XML of JSON s, as libxml2 writes the root element. */
static const char *as_xml(const char *s)
{
	static struct buf x = BUF_INIT;
	xmlDocPtr doc = jsonxml_parse(s, strlen(s), &err);
	xmlBufferPtr xb;

	buf_reset(&x);
	if (!doc)
		return err.ptr;
	xb = xmlBufferCreate();
	xmlNodeDump(xb, doc, xmlDocGetRootElement(doc), 0, 0);
	buf_add(&x, xmlBufferContent(xb), (size_t)xmlBufferLength(xb));
	xmlBufferFree(xb);
	xmlFreeDoc(doc);
	return x.ptr;
}

/* Serialize the root of an XML document written by hand (or by XSLT). */
static const char *from_xml(const char *xml, int pretty)
{
	xmlDocPtr doc = xmlReadMemory(xml, (int)strlen(xml), "t.xml", NULL,
				      XML_PARSE_NONET);
	int r;

	buf_reset(&out);
	buf_reset(&err);
	if (!doc)
		return "(bad xml)";
	r = jsonxml_serialize(xmlDocGetRootElement(doc), pretty, &out, &err);
	xmlFreeDoc(doc);
	return r < 0 ? err.ptr : out.ptr;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The *.json files of the corpus, sorted; NULL-terminated. */
static char **corpus(size_t *count)
{
	DIR *d = opendir(fixture_dir());
	struct dirent *e;
	char **v = NULL;
	size_t n = 0, len;

	while (d && (e = readdir(d))) {
		len = strlen(e->d_name);
		if (len < 6 || strcmp(e->d_name + len - 5, ".json"))
			continue;
		v = xrealloc(v, (n + 2) * sizeof(*v));
		v[n++] = xstrdup(e->d_name);
	}
	if (d)
		closedir(d);
	if (v)
		qsort(v, n, sizeof(*v), by_name);
	else
		v = xmalloc(sizeof(*v));
	v[n] = NULL;
	*count = n;
	return v;
}

/* What the compact form of a corpus file must be: NAME.compact, or the
 * file itself without its final newline when it is already canonical. */
static void expected_compact(const char *name, const struct buf *doc,
			     struct buf *want)
{
	struct buf path = BUF_INIT;
	int r = read_file(fixture(&path, name, strlen(name) - 5, ".compact"), want);

	buf_release(&path);
	if (r == 0)
		return;
	buf_reset(want);
	buf_add(want, doc->ptr, doc->len);
	if (want->len && want->ptr[want->len - 1] == '\n')
		buf_setlen(want, want->len - 1);
}

static int same(const struct buf *a, const char *p)
{
	return p && strlen(p) == a->len && !memcmp(a->ptr, p, a->len);
}

static void test_corpus_file(const char *name)
{
	struct buf doc = BUF_INIT, want = BUF_INIT, pretty = BUF_INIT;
	struct buf path = BUF_INIT;
	const char *got;
	int ok;

	CHECK(read_file(fixture(&path, name, strlen(name), ""), &doc) == 0);
	buf_release(&path);
	expected_compact(name, &doc, &want);
	got = compact(doc.ptr, doc.len, 0);
	ok = same(&want, got);
	CHECK(ok && "compact round trip");
	if (!ok)
		printf("#   %s: %.200s\n", name, got ? got : err.ptr);
	/* The pretty form and the compact form read back to the same value. */
	got = compact(doc.ptr, doc.len, 1);
	buf_reset(&pretty);
	if (got)
		buf_add(&pretty, out.ptr, out.len);
	CHECK(got && same(&want, compact(pretty.ptr, pretty.len, 0)));
	CHECK(same(&want, compact(want.ptr, want.len, 0)));
	buf_release(&doc);
	buf_release(&want);
	buf_release(&pretty);
}

static void test_corpus(void)
{
	size_t n, k;
	char **names = corpus(&n);

	CHECK(n >= 30);
	for (k = 0; k < n; k++) {
		test_corpus_file(names[k]);
		free(names[k]);
	}
	free(names);
}

static void test_exact_values(void)
{
	CHECK_STR(compact_str("[1.50,-0,1e400,123456789012345678901234567890]"),
		  "[1.50,-0,1e400,123456789012345678901234567890]");
	CHECK_STR(compact_str(" { \"b\" : 1 , \"a\" : 2 , \"b\" : 3 } "),
		  "{\"b\":1,\"a\":2,\"b\":3}");
	CHECK_STR(compact_str("\"\\u00e9\\ud83d\\ude00\\/\""), "\"\xc3\xa9\xf0\x9f\x98\x80/\"");
	CHECK_STR(compact_str("\"\\u0001\\u001F\\u007f\""), "\"\\u0001\\u001f\x7f\"");
	CHECK_STR(compact_str("\"\\b\\f\\n\\r\\t\\\"\\\\\""), "\"\\b\\f\\n\\r\\t\\\"\\\\\"");
	CHECK_STR(compact_str("\"\\uD800\""), "\"\\ud800\"");
	CHECK_STR(compact_str("\"\\ufffe\""), "\"\xef\xbf\xbe\"");
	CHECK_STR(compact_str("[]"), "[]");
	CHECK_STR(compact_str("{}"), "{}");
	CHECK_STR(compact_str("null"), "null");
	CHECK_STR(compact_str("\"\""), "\"\"");
	CHECK_STR(compact(" 0 ", 3, 0), "0");
	/* A NUL in the input outside a string is an error, inside one escaped. */
	CHECK_STR(compact("\"a\\u0000b\"", 10, 0), "\"a\\u0000b\"");
}

static void test_pretty(void)
{
	static const char doc[] = "{\"a\":[1,{\"b\":null},[]],\"c\":{}}";

	CHECK_STR(compact(doc, sizeof(doc) - 1, 1),
		  "{\n  \"a\": [\n    1,\n    {\n      \"b\": null\n    },\n"
		  "    []\n  ],\n  \"c\": {}\n}");
	CHECK_STR(compact("\"x\"", 3, 1), "\"x\"");
	CHECK_STR(compact("[[]]", 4, 1), "[\n  []\n]");
}

static void test_xml_shape(void)
{
	CHECK_STR(as_xml("{\"a\":1.50,\"b\":[true,false,null],\"c\":\"x<&\"}"),
		  "<map><number key=\"a\">1.50</number><array key=\"b\">"
		  "<boolean>true</boolean><boolean>false</boolean><null/></array>"
		  "<string key=\"c\">x&lt;&amp;</string></map>");
	CHECK_STR(as_xml("\"top\""), "<string>top</string>");
	CHECK_STR(as_xml("-0"), "<number>-0</number>");
	CHECK_STR(as_xml("{\"k\":\"\"}"), "<map><string key=\"k\"/></map>");
	/* What XML 1.0 cannot hold is kept as JSON escape text. */
	CHECK_STR(as_xml("{\"a\\u0000\":\"\\u0001\\\\ \\\"\\n\\ud800\\uFFFF\"}"),
		  "<map><string key=\"a\\u0000\" escaped-key=\"true\" escaped=\"true\">"
		  "\\u0001\\\\ \"\\n\\ud800\\uffff</string></map>");
	CHECK_STR(as_xml("\"back\\\\slash\""), "<string>back\\slash</string>");
	CHECK_STR(as_xml("{\"a\":1,\"a\":2}"),
		  "<map><number key=\"a\">1</number><number key=\"a\">2</number></map>");
}

static void test_malformed(void)
{
	ERROR_IS("", "offset 0: empty document");
	ERROR_IS(" \n\t", "offset 3: empty document");
	ERROR_IS("[1,]", "offset 3: trailing comma before ']'");
	ERROR_IS("{\"a\":1,}", "offset 7: trailing comma before '}'");
	ERROR_IS("{\"a\":1 , }", "offset 9: trailing comma before '}'");
	ERROR_IS("[\"abc", "offset 5: unterminated string (opened at offset 1)");
	ERROR_IS("\"ab\\", "offset 4: unterminated string (opened at offset 0)");
	ERROR_IS("\"\\u12", "offset 5: unterminated string (opened at offset 0)");
	ERROR_IS("\"\\q\"", "offset 1: invalid escape '\\q'");
	ERROR_IS("\"\\\x01\"", "offset 1: invalid escape: byte 0x01 after '\\'");
	ERROR_IS("\"\\u12x4\"", "offset 1: invalid \\u escape");
	ERROR_IS("\"\xff\"", "offset 1: invalid UTF-8 in string");
	ERROR_IS("\"a\xc3(\"", "offset 2: invalid UTF-8 in string");
	ERROR_IS("\"\xc0\x80\"", "offset 1: invalid UTF-8 in string");
	ERROR_IS("\"\xed\xa0\x80\"", "offset 1: invalid UTF-8 in string");
	ERROR_IS("\"\xf4\x90\x80\x80\"", "offset 1: invalid UTF-8 in string");
	ERROR_IS("\"\xe2\x82", "offset 3: unterminated string (opened at offset 0)");
	ERROR_IS("\"a\nb\"", "offset 2: unescaped control character 0x0a in string");
	ERROR_IS("\"\x00\"", "offset 1: unescaped control character 0x00 in string");
	ERROR_IS("01", "offset 1: leading zero in number");
	ERROR_IS("[-012]", "offset 3: leading zero in number");
	ERROR_IS("-", "offset 1: digit expected after '-'");
	ERROR_IS("[-]", "offset 2: digit expected after '-'");
	ERROR_IS("1.", "offset 2: digit expected after '.'");
	ERROR_IS("1.e5", "offset 2: digit expected after '.'");
	ERROR_IS("1e", "offset 2: digit expected in exponent");
	ERROR_IS("1e+", "offset 3: digit expected in exponent");
	ERROR_IS("+1", "offset 0: unexpected '+', value expected");
	ERROR_IS(".5", "offset 0: unexpected '.', value expected");
	ERROR_IS("[1] x", "offset 4: unexpected 'x' after the JSON value");
	ERROR_IS("{} {}", "offset 3: unexpected '{' after the JSON value");
	ERROR_IS("1 2", "offset 2: unexpected '2' after the JSON value");
	ERROR_IS("\"a\"\x00", "offset 3: unexpected byte 0x00 after the JSON value");
	ERROR_IS("[1 2]", "offset 3: unexpected '2', ',' or ']' expected");
	ERROR_IS("[1}", "offset 2: unexpected '}', ',' or ']' expected");
	ERROR_IS("{\"a\":1]", "offset 6: unexpected ']', ',' or '}' expected");
	ERROR_IS("{\"a\" 1}", "offset 5: unexpected '1', ':' expected");
	ERROR_IS("{1:2}", "offset 1: unexpected '1', string key expected");
	ERROR_IS("{'a':2}", "offset 1: unexpected ''', string key expected");
	ERROR_IS("[,1]", "offset 1: unexpected ',', value expected");
	ERROR_IS("tru", "offset 3: unexpected end of input");
	ERROR_IS("[trUe]", "offset 3: unexpected 'U', 'true' expected");
	ERROR_IS("nul1", "offset 3: unexpected '1', 'null' expected");
	ERROR_IS("[NaN]", "offset 1: unexpected 'N', value expected");
	ERROR_IS("\xef\xbb\xbf[]", "offset 0: unexpected byte 0xef, value expected");
	ERROR_IS("[1,", "offset 3: unexpected end of input");
	ERROR_IS("{\"a\"", "offset 4: unexpected end of input");
	ERROR_IS("{\"a\":", "offset 5: unexpected end of input");
	ERROR_IS("[[[", "offset 3: unexpected end of input");
}

static void test_depth(void)
{
	char deep[2 * JSON_MAX_DEPTH + 2];

	memset(deep, '[', JSON_MAX_DEPTH + 1);
	memset(deep + JSON_MAX_DEPTH + 1, ']', JSON_MAX_DEPTH + 1);
	CHECK_STR(parse_error(deep, sizeof(deep)), "offset 512: nesting deeper than 512");
	CHECK_STR(parse_error(deep + 1, sizeof(deep) - 2), "");
	memset(deep, '{', 1);
	CHECK_STR(parse_error(deep, sizeof(deep)),
		  "offset 1: unexpected '[', string key expected");
}

static void test_serialize_trees(void)
{
	CHECK_STR(from_xml("<map>\n  <!-- c -->\n  <number key='n'> 12.0 </number>\n"
			   "  <?pi x?>\n  <string key='s'>a<![CDATA[<b>]]>c</string>\n"
			   "  <boolean key='b'> true </boolean><null key='z'> </null>\n"
			   "  <array key='a'>\n    <string>x</string>\n  </array>\n</map>", 0),
		  "{\"n\":12.0,\"s\":\"a<b>c\",\"b\":true,\"z\":null,\"a\":[\"x\"]}");
	/* Escaped text is written back canonically, whatever its escapes. */
	CHECK_STR(from_xml("<string escaped='true'>\\u0041\\/\"\\ud83d\\ude00\\u0000\\\\</string>", 0),
		  "\"A/\\\"\xf0\x9f\x98\x80\\u0000\\\\\"");
	CHECK_STR(from_xml("<string escaped='false'>\\u0041</string>", 0), "\"\\\\u0041\"");
	CHECK_STR(from_xml("<map><string key='\\u0001' escaped-key='1'/></map>", 0),
		  "{\"\\u0001\":\"\"}");
	/* A key on the node itself, a foreign attribute: ignored. */
	CHECK_STR(from_xml("<map key='outer' xmlns:x='urn:x' x:id='1'/>", 0), "{}");
	CHECK_STR(from_xml("<array><number key='k'>1</number></array>", 1), "[\n  1\n]");
	CHECK_STR(from_xml("<map><number>1</number></map>", 0),
		  "element '/map/number': map member without a key attribute");
	CHECK_STR(from_xml("<map><foo key='a'/></map>", 0),
		  "element '/map/foo': not a JSON mapping element (map, array, string, "
		  "number, boolean or null in no namespace)");
	CHECK_STR(from_xml("<map xmlns='urn:x'/>", 0),
		  "element '/*': not a JSON mapping element (map, array, string, "
		  "number, boolean or null in no namespace)");
	CHECK_STR(from_xml("<array><number>1</number><number>1.</number></array>", 0),
		  "element '/array/number[2]': '1.' is not a JSON number");
	CHECK_STR(from_xml("<number>NaN</number>", 0), "element '/number': 'NaN' is not a JSON number");
	CHECK_STR(from_xml("<number/>", 0), "element '/number': '' is not a JSON number");
	CHECK_STR(from_xml("<boolean>yes</boolean>", 0), "element '/boolean': 'yes' is not true or false");
	CHECK_STR(from_xml("<null>0</null>", 0), "element '/null': null element has content");
	CHECK_STR(from_xml("<string type='x'/>", 0), "element '/string': unexpected attribute 'type'");
	CHECK_STR(from_xml("<number escaped='true'>1</number>", 0),
		  "element '/number': unexpected attribute 'escaped'");
	CHECK_STR(from_xml("<string escaped='maybe'/>", 0),
		  "element '/string': attribute escaped='maybe' is not true or false");
	CHECK_STR(from_xml("<array>x<null/></array>", 0), "element '/array': unexpected text 'x'");
	CHECK_STR(from_xml("<string>a<b/></string>", 0),
		  "element '/string': unexpected child element 'b'");
	CHECK_STR(from_xml("<string escaped='true'>\\x</string>", 0),
		  "element '/string': invalid JSON escape in escaped text");
	CHECK_STR(from_xml("<string escaped='true'>\\u12</string>", 0),
		  "element '/string': invalid JSON escape in escaped text");
}

static void test_is_mapping(void)
{
	xmlDocPtr d = jsonxml_parse("[1]", 3, &err);

	CHECK(jsonxml_is_mapping(d));
	xmlFreeDoc(d);
	d = jsonxml_parse("{}", 2, &err);
	CHECK(jsonxml_is_mapping(d));
	xmlFreeDoc(d);
	d = jsonxml_parse("\"s\"", 3, &err);
	CHECK(!jsonxml_is_mapping(d));
	xmlFreeDoc(d);
	d = xmlReadMemory("<map xmlns='urn:x'/>", 20, "t", NULL, 0);
	CHECK(!jsonxml_is_mapping(d));
	xmlFreeDoc(d);
	CHECK(!jsonxml_is_mapping(NULL));
}

/* ---- random documents: a canonical text and a noisy one of the same value ---- */

static unsigned long long rng = 88172645463325252ULL;

static unsigned rnd(unsigned n)
{
	rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
	return (unsigned)(rng % n);
}

static void noise(struct buf *b)
{
	static const char ws[] = " \t\n\r";

	while (rnd(4) == 0)
		buf_addch(b, ws[rnd(4)]);
}

static void put_u8(struct buf *b, uint32_t cp)
{
	char u[4];
	size_t n;

	if (cp < 0x80)
		u[0] = (char)cp, n = 1;
	else if (cp < 0x800)
		u[0] = (char)(0xc0 | cp >> 6), u[1] = (char)(0x80 | (cp & 0x3f)), n = 2;
	else if (cp < 0x10000)
		u[0] = (char)(0xe0 | cp >> 12), u[1] = (char)(0x80 | (cp >> 6 & 0x3f)),
		u[2] = (char)(0x80 | (cp & 0x3f)), n = 3;
	else
		u[0] = (char)(0xf0 | cp >> 18), u[1] = (char)(0x80 | (cp >> 12 & 0x3f)),
		u[2] = (char)(0x80 | (cp >> 6 & 0x3f)), u[3] = (char)(0x80 | (cp & 0x3f)), n = 4;
	buf_add(b, u, n);
}

static uint32_t random_char(void)
{
	static const uint32_t odd[] = { '"', '\\', '/', 0, 0x1f, '\t', '\n', 0x7f,
		0xe9, 0x20ac, 0xfffe, 0xffff, 0xfffd, 0x1f600, 0x10ffff, 0xd800,
		0xdbff, 0xdc00, 0xdfff, '<', '&' };

	switch (rnd(4)) {
	case 0: return odd[rnd(sizeof(odd) / sizeof(odd[0]))];
	case 1: return 0x80 + rnd(0x2000);
	default: return 0x20 + rnd(0x5f);
	}
}

static void random_string(struct buf *canon, struct buf *noisy)
{
	static const char shortc[] = "\"\\/\b\f\n\r\t", shorte[] = "\"\\/bfnrt";
	unsigned k, len = rnd(12);
	uint32_t cp, prev = 0;

	buf_addch(canon, '"');
	buf_addch(noisy, '"');
	for (k = 0; k < len; k++) {
		cp = random_char();
		/* A high surrogate then a low one would pair up: skip. */
		if (prev >= 0xd800 && prev <= 0xdbff && cp >= 0xdc00 && cp <= 0xdfff)
			cp = 'x';
		prev = cp;
		if (cp < 0x20 || cp == '"' || cp == '\\') {
			const char *s = cp && cp < 0x80 ? strchr(shortc, (int)cp) : NULL;

			if (s && cp != '/')
				buf_addf(canon, "\\%c", shorte[s - shortc]);
			else
				buf_addf(canon, "\\u%04x", (unsigned)cp);
		} else if (cp >= 0xd800 && cp <= 0xdfff) {
			buf_addf(canon, "\\u%04x", (unsigned)cp);
		} else {
			put_u8(canon, cp);
		}
		if (cp >= 0xd800 && cp <= 0xdfff)
			buf_addf(noisy, rnd(2) ? "\\u%04X" : "\\u%04x", (unsigned)cp);
		else if (cp < 0x20 || cp == '"' || cp == '\\' || rnd(5) == 0) {
			const char *s = cp && cp < 0x80 ? strchr(shortc, (int)cp) : NULL;

			if (s && rnd(2))
				buf_addf(noisy, "\\%c", shorte[s - shortc]);
			else if (cp >= 0x10000)
				buf_addf(noisy, "\\u%04x\\u%04x",
					 0xd800 + ((cp - 0x10000) >> 10),
					 0xdc00 + ((cp - 0x10000) & 0x3ff));
			else
				buf_addf(noisy, "\\u%04X", (unsigned)cp);
		} else {
			put_u8(noisy, cp);
		}
	}
	buf_addch(canon, '"');
	buf_addch(noisy, '"');
}

static void random_number(struct buf *canon, struct buf *noisy)
{
	struct buf n = BUF_INIT;
	unsigned k;

	if (rnd(3) == 0)
		buf_addch(&n, '-');
	if (rnd(4) == 0)
		buf_addch(&n, '0');
	else
		for (buf_addch(&n, '1' + (int)rnd(9)), k = rnd(25); k; k--)
			buf_addch(&n, '0' + (int)rnd(10));
	if (rnd(3) == 0)
		for (buf_addch(&n, '.'), k = 1 + rnd(5); k; k--)
			buf_addch(&n, '0' + (int)rnd(10));
	if (rnd(4) == 0) {
		buf_addstr(&n, rnd(2) ? "e" : "E");
		if (rnd(2))
			buf_addstr(&n, rnd(2) ? "+" : "-");
		for (k = 1 + rnd(4); k; k--)
			buf_addch(&n, '0' + (int)rnd(10));
	}
	buf_add(canon, n.ptr, n.len);
	buf_add(noisy, n.ptr, n.len);
	buf_release(&n);
}

static void random_value(struct buf *canon, struct buf *noisy, int depth);

static void random_container(struct buf *canon, struct buf *noisy, int depth,
			     int map)
{
	unsigned k, len = rnd(depth > 6 ? 1 : 6);

	buf_addch(canon, map ? '{' : '[');
	buf_addch(noisy, map ? '{' : '[');
	for (k = 0; k < len; k++) {
		if (k) {
			buf_addch(canon, ',');
			noise(noisy);
			buf_addch(noisy, ',');
		}
		noise(noisy);
		if (map) {
			random_string(canon, noisy);
			buf_addch(canon, ':');
			noise(noisy);
			buf_addch(noisy, ':');
			noise(noisy);
		}
		random_value(canon, noisy, depth + 1);
	}
	noise(noisy);
	buf_addch(canon, map ? '}' : ']');
	buf_addch(noisy, map ? '}' : ']');
}

static void random_value(struct buf *canon, struct buf *noisy, int depth)
{
	static const char *const lit[] = { "true", "false", "null" };
	const char *l;

	switch (rnd(depth > 8 ? 3 : 6)) {
	case 0: random_string(canon, noisy); return;
	case 1: random_number(canon, noisy); return;
	case 2:
		l = lit[rnd(3)];
		buf_addstr(canon, l);
		buf_addstr(noisy, l);
		return;
	case 3: case 4: random_container(canon, noisy, depth, 1); return;
	default: random_container(canon, noisy, depth, 0); return;
	}
}

static void test_random_round_trips(void)
{
	struct buf canon = BUF_INIT, noisy = BUF_INIT;
	int k, bad = 0;
	const char *got;

	for (k = 0; k < 3000; k++) {
		buf_reset(&canon);
		buf_reset(&noisy);
		noise(&noisy);
		random_value(&canon, &noisy, 0);
		noise(&noisy);
		got = compact(noisy.ptr, noisy.len, 0);
		if (!same(&canon, got)) {
			if (!bad++)
				printf("#   %s\n#   %s\n#   %s\n", noisy.ptr, canon.ptr,
				       got ? got : err.ptr);
		}
	}
	CHECK(bad == 0);
	buf_release(&canon);
	buf_release(&noisy);
}

int main(void)
{
	LIBXML_TEST_VERSION
	test_corpus();
	test_exact_values();
	test_pretty();
	test_xml_shape();
	test_malformed();
	test_depth();
	test_serialize_trees();
	test_is_mapping();
	test_random_round_trips();
	buf_release(&out);
	buf_release(&err);
	xmlCleanupParser();
	return unit_done();
}
