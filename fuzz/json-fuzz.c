/*
 * json-fuzz: the JSON readers against each other. The streaming scanner
 * (jsonscan, fed in pieces) and the tree mapping (jsonxml) must accept
 * and reject the same documents with the same message, and hand out the
 * same elements: each element jsonscan gives, mapped on its own, is the
 * child of the tree's array at the same place. The pointer lookup
 * (jsonptr) must find each of those elements' exact text.
 *
 * The first input byte steers the run, the rest is the document:
 *   bits 0-6  the size of the pieces jsonscan is fed (0: all at once)
 *   bit 7     follow the pointer /0 instead of the whole document
 */
#include <string.h>

#include <libxml/parser.h>

#include "fuzz.h"
#include "jsonptr.h"
#include "jsonscan.h"
#include "jsonxml.h"

struct elements {
	struct buf all;		/* each element's text, length first */
};

static int keep(void *ctx, const char *text, size_t n)
{
	struct elements *e = ctx;

	buf_addu64(&e->all, n);
	buf_addch(&e->all, ':');
	buf_add(&e->all, text, n);
	return 0;
}

/* Run jsonscan over p[0..n) in pieces: 0, or -1 with its message in err. */
static int scan(const char *pointer, const char *p, size_t n, size_t piece,
		struct elements *e, struct buf *err)
{
	struct jsonscan s;
	size_t off, k;
	int r = 0;

	REQUIRE(jsonscan_init(&s, pointer) == 0);
	if (!piece)
		piece = n ? n : 1;
	for (off = 0; off < n && r == 0; off += k) {
		k = n - off < piece ? n - off : piece;
		r = jsonscan_feed(&s, p + off, k, keep, e);
	}
	if (r == 0)
		r = jsonscan_finish(&s);
	if (r < 0)
		buf_addstr(err, s.err.ptr);
	jsonscan_release(&s);
	return r;
}

static xmlNodePtr first_element(xmlNodePtr n)
{
	while (n && n->type != XML_ELEMENT_NODE)
		n = n->next;
	return n;
}

static const char *kind_of(xmlNodePtr node)
{
	static const char *const names[][2] = {
		{ "map", "an object" }, { "string", "a string" },
		{ "number", "a number" }, { "boolean", "a boolean" },
		{ "null", "null" },
	};
	size_t k;

	for (k = 0; k < sizeof(names) / sizeof(*names); k++)
		if (!strcmp((const char *)node->name, names[k][0]))
			return names[k][1];
	return NULL;
}

/* The compact JSON of node, which must serialize. */
static void compact(xmlNodePtr node, struct buf *out)
{
	struct buf err = BUF_INIT;

	buf_reset(out);
	REQUIRE(jsonxml_serialize(node, 0, out, &err) == 0);
	buf_release(&err);
}

/* Each element's mapping is the array's child at its place. */
static void same_elements(xmlNodePtr array, const struct elements *e,
			  const char *doc, size_t n)
{
	const char *p = e->all.ptr, *end = e->all.ptr + e->all.len;
	xmlNodePtr child = first_element(array->children);
	struct buf want = BUF_INIT, got = BUF_INIT, err = BUF_INIT, ptr = BUF_INIT;
	struct json_span span;
	size_t index = 0;

	while (p < end) {
		char *colon;
		size_t len = strtoull(p, &colon, 10);
		xmlDocPtr one;

		p = colon + 1;
		REQUIRE(child != NULL);
		one = jsonxml_parse(p, len, &err);
		REQUIRE(one != NULL);
		compact(child, &want);
		compact(xmlDocGetRootElement(one), &got);
		REQUIRE(want.len == got.len && !memcmp(want.ptr, got.ptr, got.len));
		xmlFreeDoc(one);
		/* The top array's elements, found by the pointer lookup. */
		if (array == xmlDocGetRootElement(array->doc) && index < 4) {
			buf_reset(&ptr);
			buf_addf(&ptr, "/%zu", index);
			REQUIRE(jsonptr_find(doc, n, ptr.ptr, &span, NULL) == 1);
			REQUIRE(span.n == len && !memcmp(span.p, p, len));
		}
		p += len;
		index++;
		child = first_element(child->next);
	}
	REQUIRE(child == NULL);
	buf_release(&want);
	buf_release(&got);
	buf_release(&err);
	buf_release(&ptr);
}

/* The node the pointer names: the root, or /0 in it (an array's first
 * element, or an object's first member named "0"). */
static xmlNodePtr at_pointer(xmlDocPtr doc, int first)
{
	xmlNodePtr root = xmlDocGetRootElement(doc), c;
	xmlChar *key;
	int found;

	if (!first)
		return root;
	c = first_element(root->children);
	if (!strcmp((const char *)root->name, "array"))
		return c;
	if (strcmp((const char *)root->name, "map"))
		return NULL;
	for (; c; c = first_element(c->next)) {
		key = xmlGetProp(c, BAD_CAST "key");
		found = key && !strcmp((const char *)key, "0");
		xmlFree(key);
		if (found)
			return c;
	}
	return NULL;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	LIBXML_TEST_VERSION
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct elements e = { BUF_INIT };
	struct buf tree_err = BUF_INIT, scan_err = BUF_INIT;
	const char *p = (const char *)data + 1, *pointer;
	size_t n = size - 1;
	xmlDocPtr doc;
	xmlNodePtr target;
	int r;

	if (size == 0)
		return 0;
	pointer = data[0] & 0x80 ? "/0" : "";
	doc = jsonxml_parse(p, n, &tree_err);
	r = scan(pointer, p, n, data[0] & 0x7f, &e, &scan_err);
	if (!doc) {
		/* The same reason, unless the pointer's value failed first. */
		REQUIRE(r < 0);
		if (!strstr(scan_err.ptr, ", not an array") &&
		    !strstr(tree_err.ptr, "out of memory") &&
		    !strstr(tree_err.ptr, "longer than 2 GiB"))
			REQUIRE(!strcmp(scan_err.ptr, tree_err.ptr));
	} else if (!(target = at_pointer(doc, data[0] & 0x80))) {
		REQUIRE(r < 0 && !strncmp(scan_err.ptr, "no value at", 11));
	} else if (strcmp((const char *)target->name, "array")) {
		REQUIRE(r < 0 && strstr(scan_err.ptr, kind_of(target)));
	} else {
		REQUIRE(r == 0);
		same_elements(target, &e, p, n);
	}
	xmlFreeDoc(doc);
	buf_release(&e.all);
	buf_release(&tree_err);
	buf_release(&scan_err);
	return 0;
}
