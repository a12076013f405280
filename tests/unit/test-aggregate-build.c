/* test-aggregate-build: the message a group becomes: bodies, shared
 * headers, Aggregate-*, and Sequence-Stack popped after msg-split. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "aggregate.h"
#include "aggregate-live.h"
#include "expr.h"
#include "jsonxml.h"
#include "xmlout.h"
#include "unit.h"
#include "unit-headers.h"

static struct expr_env *env;
static struct agg_table *table;
static struct headers out_h = HEADERS_INIT;
static struct buf out_body = BUF_INIT, out_err = BUF_INIT;

/* Add as the tool will: the kind by the rule every tool uses. */
static struct agg_group *add_n(const char *key, const struct headers *h,
			       const char *body, size_t len, double best)
{
	struct agg_input in = { .key = key, .key_len = strlen(key), .h = h,
				.body = body, .len = len, .best = best };
	struct agg_group *g;
	const char *why;

	expr_env_bind(env, h, body, in.len);
	in.kind = expr_env_kind(env);
	CHECK(agg_add(table, &in, &g, &why) == AGG_ADDED);
	return g;
}

static struct agg_group *add_h(const char *key, const struct headers *h,
			       const char *body, double best)
{
	return add_n(key, h, body, strlen(body), best);
}

static struct agg_group *add(const char *key, const char *lines, const char *body)
{
	struct headers h = HEADERS_INIT;
	struct agg_group *g;

	make_headers(&h, lines);
	g = add_h(key, &h, body, NAN);
	headers_release(&h);
	return g;
}

/* The output headers as "Name: value|..." */
static const char *dump(const struct headers *h)
{
	static struct buf s = BUF_INIT;

	buf_reset(&s);
	for (size_t i = 0; i < headers_count(h); i++)
		buf_addf(&s, "%s%s: %s", i ? "|" : "", headers_name(h, i, NULL),
			 headers_value(h, i, NULL));
	return s.ptr;
}

static int build(struct agg_group *g, const struct agg_build_opt *opt,
		 enum agg_reason reason)
{
	static const struct agg_build_opt none;

	buf_reset(&out_err);
	return agg_build(g, opt ? opt : &none, reason, &out_h, &out_body, &out_err);
}

static void done(struct agg_group *g)
{
	agg_remove(table, g);
}

/* ---- bodies ---- */

/* A group whose last member (after first, if any) cannot be in its
 * message, and the start of what is said of it. */
static void refused(const char *first, const char *type, const char *last,
		    const char *want)
{
	struct agg_group *g;

	if (first)
		add("bad", "", first);
	g = add("bad", type, last);
	CHECK(build(g, NULL, AGG_END) == -1);
	CHECK(!strncmp(out_err.ptr, want, strlen(want)));
	if (strncmp(out_err.ptr, want, strlen(want)))
		printf("#   got '%s'\n", out_err.ptr);
	done(g);
}

static void test_xml(void)
{
	struct agg_build_opt wrap = { .wrap = "orders" };
	struct headers h = HEADERS_INIT;
	struct agg_group *g;

	add("x", "Sequence-Number: 2", "<?xml version=\"1.0\"?>\n<item n=\"2\">b &amp; c</item>\n");
	add("x", "Sequence-Number: 3|Sequence-Size: 3",
	    "<!-- before --><p:i xmlns:p=\"urn:p\"><p:j/></p:i>");
	g = add("x", "Sequence-Number: 1", "  <item n=\"1\">a</item>");
	CHECK(build(g, NULL, AGG_COMPLETE) == 0);
	CHECK_STR(out_body.ptr, "<aggregate><item n=\"1\">a</item><item n=\"2\">b &amp; c</item>"
		  "<p:i xmlns:p=\"urn:p\"><p:j/></p:i></aggregate>");
	CHECK_STR(headers_get(&out_h, "Content-Type"), "application/xml");
	CHECK(build(g, &wrap, AGG_COMPLETE) == 0);
	CHECK(!strncmp(out_body.ptr, "<orders><item", 13));
	wrap.wrap = "no good";
	CHECK(build(g, &wrap, AGG_COMPLETE) == -1);
	CHECK_STR(out_err.ptr, "'no good' is not an element name");
	done(g);

	refused("<a/>", "Content-Type: application/xml", "<a><b></a>", "member 2: line 1: ");

	/* Members in UTF-16 join the others in UTF-8. */
	make_headers(&h, "");
	add_n("u", &h, "\xff\xfe<\0a\0>\0\xe9\0<\0/\0a\0>\0", 18, NAN);
	g = add_h("u", &h, "<b>\xc3\xa9</b>", NAN);
	CHECK(build(g, NULL, AGG_END) == 0);
	CHECK_STR(out_body.ptr, "<aggregate><a>\xc3\xa9</a><b>\xc3\xa9</b></aggregate>");
	done(g);
	headers_release(&h);
}

static void test_json(void)
{
	struct agg_group *g;

	add("j", "", " {\"a\": 1}\n");
	add("j", "", "[1, 2]");
	add("j", "Content-Type: application/json", "\t\"s\" ");
	g = add("j", "Content-Type: application/json", "-0.5e3");
	CHECK(build(g, NULL, AGG_COUNT) == 0);
	CHECK_STR(out_body.ptr, "[{\"a\": 1},[1, 2],\"s\",-0.5e3]");
	CHECK_STR(headers_get(&out_h, "Content-Type"), "application/json");
	done(g);

	refused("{}", "Content-Type: application/json", "{\"a\":}", "member 2: offset 5: ");
	refused(NULL, "Content-Type: application/json", "1,2", "member 1: not one JSON value");
	refused(NULL, "Content-Type: application/json", " ", "member 1: not one JSON value");
}

/* Three members that cannot be one message, and what is said of them. */
static void mixed(const char *h1, const char *b1, const char *h2, const char *b2,
		  const char *h3, const char *b3, const char *kinds)
{
	struct agg_group *g;
	char want[128];

	add("m", h1, b1);
	add("m", h2, b2);
	g = add("m", h3, b3);
	CHECK(build(g, NULL, AGG_COUNT) == -1);
	snprintf(want, sizeof(want), "mixed bodies in one group: %s", kinds);
	CHECK_STR(out_err.ptr, want);
	done(g);
}

static void test_text_and_mixed(void)
{
	struct agg_build_opt sep = { .separator = "\n--\n", .separator_len = 4 };
	struct agg_group *g;

	add("t", "Content-Type: text/csv", "a,b");
	g = add("t", "Content-Type: text/csv", "c,d");
	CHECK(build(g, NULL, AGG_COUNT) == 0);
	CHECK_STR(out_body.ptr, "a,bc,d");
	CHECK(build(g, &sep, AGG_COUNT) == 0);
	CHECK_STR(out_body.ptr, "a,b\n--\nc,d");
	CHECK_STR(headers_get(&out_h, "Content-Type"), "text/csv");
	done(g);

	mixed("", "<a/>", "", "plain", "", "[1]", "XML and text");
	/* The type decides before the first byte does. */
	mixed("Content-Type: application/json", "1", "Content-Type: text/plain", "[2]",
	      "Content-Type: text/xml", "[3]", "JSON and XML");
}

/* ---- headers ---- */

static void test_common_headers(void)
{
	struct agg_group *g;

	add("c", "Message-Id: 1|Timestamp: t1|X-Same: v|X-Diff: 1|X-One: o|Error: e"
	    "|Message-History: msg-wrap|Content-Type: text/plain|Correlation-Id: c", "a");
	g = add("c", "Message-Id: 2|Timestamp: t2|x-same: v|X-Diff: 2|Error: e"
		"|Message-History: msg-wrap|Content-Type: text/plain|Correlation-Id: c", "b");
	CHECK(build(g, NULL, AGG_COUNT) == 0);
	CHECK_STR(dump(&out_h), "X-Same: v|Message-History: msg-wrap|Content-Type: text/plain"
		  "|Correlation-Id: c|Aggregate-Size: 2|Aggregate-Reason: count");
	done(g);
}

static void test_missing(void)
{
	struct agg_group *g;

	add("s", "Sequence-Number: 1", "a");
	add("s", "Sequence-Number: 4", "d");
	g = add("s", "Sequence-Number: 7|Sequence-Size: 9|Sequence-End: false", "g");
	CHECK(build(g, NULL, AGG_TIMEOUT) == 0);
	CHECK_STR(dump(&out_h), "Correlation-Id: s|Aggregate-Size: 3|Aggregate-Reason: timeout"
		  "|Aggregate-Missing: 2-3,5-6,8-9");
	CHECK_STR(out_body.ptr, "adg");
	done(g);
	/* Without the last, the size is unknown: the rest is open. */
	g = add("u", "Sequence-Number: 2", "b");
	CHECK(build(g, NULL, AGG_IDLE) == 0);
	CHECK_STR(headers_get(&out_h, "Aggregate-Missing"), "1,3-");
	done(g);
	/* A group of no sequence misses nothing. */
	g = add("n", "", "x");
	CHECK(build(g, NULL, AGG_END) == 0);
	CHECK(!headers_get(&out_h, "Aggregate-Missing"));
	done(g);
}

static void test_best(void)
{
	struct agg_build_opt min = { .best = AGG_BEST_MIN }, max = { .best = AGG_BEST_MAX };
	struct headers h = HEADERS_INIT;
	struct agg_group *g;

	make_headers(&h, "Content-Type: application/json");
	add_h("q", &h, "{\"p\": 5}", 5);
	add_h("q", &h, "{\"p\": 3}", 3);
	add_h("q", &h, "{\"p\": \"none\"}", NAN);
	add_h("q", &h, "{\"p\": 3.0}", 3);
	g = add_h("q", &h, "{\"p\": 9}", 9);
	CHECK(build(g, &min, AGG_TIMEOUT) == 0);
	CHECK_STR(out_body.ptr, "{\"p\": 3}");
	CHECK_STR(headers_get(&out_h, "Aggregate-Size"), "5");
	CHECK(build(g, &max, AGG_TIMEOUT) == 0);
	CHECK_STR(out_body.ptr, "{\"p\": 9}");
	done(g);
	/* Nothing numbered: the earliest. */
	g = add_h("z", &h, "first", NAN);
	add_h("z", &h, "second", NAN);
	CHECK(build(g, &max, AGG_END) == 0);
	CHECK_STR(out_body.ptr, "first");
	done(g);
	headers_release(&h);
}

/* ---- Sequence-Stack, with children made as msg-split makes them ---- */

/*
 * Child num of parent (of total, known to each child or to the last
 * only), as lib/splitter.c writes it: the parent's headers but its
 * sequence, a new id, the parent's id as Correlation-Id, and the
 * parent's own place pushed on Sequence-Stack.
 */
static void split_child(struct headers *c, const struct headers *parent,
			const char *id, uint64_t num, uint64_t total, int size_known)
{
	const char *pnum = headers_get(parent, "Sequence-Number");
	const char *pcorr = headers_get(parent, "Correlation-Id");
	const char *psize = headers_get(parent, "Sequence-Size");
	const char *old = headers_get(parent, "Sequence-Stack");
	struct buf stack = BUF_INIT;

	if (pnum) {
		if (old)
			buf_addf(&stack, "%s, ", old);
		buf_addf(&stack, "%s %s %s", pcorr ? pcorr : "-", pnum, psize ? psize : "-");
	}
	headers_copy(c, parent);
	headers_remove(c, "Content-Length");
	headers_remove(c, "Sequence-Size");
	headers_remove(c, "Sequence-End");
	headers_set(c, "Message-Id", id);
	headers_set(c, "Timestamp", "2026-12-03T00:00:00.000Z");
	headers_set(c, "Correlation-Id", headers_get(parent, "Message-Id"));
	headers_set_u64(c, "Sequence-Number", num);
	if (stack.len)
		headers_set(c, "Sequence-Stack", stack.ptr);
	else
		headers_remove(c, "Sequence-Stack");
	headers_set(c, "Content-Type", "application/xml");
	if (size_known || num == total)
		headers_set_u64(c, "Sequence-Size", total);
	if (num == total)
		headers_set(c, "Sequence-End", "true");
	buf_release(&stack);
}

/* The headers a message has beyond its own id and time. */
static const char *outer(const struct headers *h)
{
	static struct headers copy = HEADERS_INIT;

	headers_copy(&copy, h);
	headers_remove(&copy, "Message-Id");
	headers_remove(&copy, "Timestamp");
	headers_remove(&copy, "Aggregate-Size");
	headers_remove(&copy, "Aggregate-Reason");
	return dump(&copy);
}

/* Aggregate the parts of one item (in reverse order) and compare. */
static void check_level(const struct headers *item, const char *item_id,
			int size_known, struct headers *restored)
{
	struct agg_build_opt wrap = { .wrap = "item" };
	struct headers part = HEADERS_INIT;
	struct agg_group *g = NULL;
	char want[4096];

	for (uint64_t n = 3; n >= 1; n--) {
		char id[64];
		snprintf(id, sizeof(id), "%s-part%llu", item_id, (unsigned long long)n);
		split_child(&part, item, id, n, 3, size_known);
		g = add_h(item_id, &part, n == 1 ? "<part>1</part>" : n == 2
			  ? "<part>2</part>" : "<part>3</part>", NAN);
	}
	CHECK(agg_completed(table, g) == AGG_COMPLETE);
	CHECK(build(g, &wrap, AGG_COMPLETE) == 0);
	CHECK_STR(out_body.ptr, "<item><part>1</part><part>2</part><part>3</part></item>");
	snprintf(want, sizeof(want), "%s", outer(item));
	CHECK_STR(outer(&out_h), want);
	headers_copy(restored, &out_h);
	done(g);
	headers_release(&part);
}

static void test_stack_one_level(void)
{
	struct headers order = HEADERS_INIT, item = HEADERS_INIT, back = HEADERS_INIT;

	/* A top-level split: no stack; the key is the parent's id. */
	make_headers(&order, "Message-Id: O1|Content-Type: application/xml|X-Customer: acme");
	split_child(&item, &order, "I1", 1, 1, 1);
	CHECK(!headers_get(&item, "Sequence-Stack"));
	/* An item that is itself in a sequence: its parts pop it back. */
	check_level(&item, "I1", 1, &back);
	CHECK_STR(outer(&back), "Content-Type: application/xml|X-Customer: acme"
		  "|Correlation-Id: O1|Sequence-Number: 1|Sequence-Size: 1|Sequence-End: true");
	headers_release(&order);
	headers_release(&item);
	headers_release(&back);
}

static void test_stack_two_levels(void)
{
	struct headers batch = HEADERS_INIT, order = HEADERS_INIT, item = HEADERS_INIT;
	struct headers back_item = HEADERS_INIT, back_order = HEADERS_INIT;
	struct agg_build_opt wrap = { .wrap = "order" };
	struct agg_group *g = NULL;

	make_headers(&batch, "Message-Id: B1|Content-Type: application/xml|X-Run: 7");
	/* order 2 of 3 in its batch (sizes known), items streamed (the
	 * first item does not know how many there are) */
	split_child(&order, &batch, "O2", 2, 3, 1);
	for (uint64_t n = 1; n <= 2; n++) {
		char id[8];
		snprintf(id, sizeof(id), "I%llu", (unsigned long long)n);
		split_child(&item, &order, id, n, 2, 0);
		CHECK_STR(headers_get(&item, "Sequence-Stack"), "B1 2 3");
		check_level(&item, id, 0, &back_item);
		CHECK_STR(headers_get(&back_item, "Sequence-Stack"), "B1 2 3");
		CHECK_STR(headers_get(&back_item, "Correlation-Id"), "O2");
		g = add_h("O2", &back_item, out_body.ptr, NAN);
	}
	/* The items, restored, aggregate back into the order. */
	CHECK(agg_completed(table, g) == AGG_COMPLETE);
	CHECK(build(g, &wrap, AGG_COMPLETE) == 0);
	CHECK_STR(out_body.ptr, "<order><item><part>1</part><part>2</part><part>3</part></item>"
		  "<item><part>1</part><part>2</part><part>3</part></item></order>");
	headers_copy(&back_order, &out_h);
	CHECK_STR(outer(&back_order), outer(&order));
	CHECK(!headers_get(&back_order, "Sequence-End"));
	done(g);
	headers_release(&batch);
	headers_release(&order);
	headers_release(&item);
	headers_release(&back_item);
	headers_release(&back_order);
}

static void test_stack_entries(void)
{
	struct agg_group *g;

	g = add("k", "Sequence-Stack: A 1 2, - 3 -|Sequence-Number: 1|Sequence-Size: 1", "x");
	CHECK(build(g, NULL, AGG_COMPLETE) == 0);
	CHECK_STR(dump(&out_h), "Sequence-Stack: A 1 2|Sequence-Number: 3"
		  "|Aggregate-Size: 1|Aggregate-Reason: complete");
	done(g);
	g = add("k", "Sequence-Stack: A 1 2, a b c 4 4|Sequence-Number: 1", "x");
	CHECK(build(g, NULL, AGG_END) == 0);
	/* Where the members had them; what they lacked at the end. */
	CHECK_STR(dump(&out_h), "Sequence-Stack: A 1 2|Sequence-Number: 4"
		  "|Correlation-Id: a b c|Sequence-Size: 4|Sequence-End: true"
		  "|Aggregate-Size: 1|Aggregate-Reason: end|Aggregate-Missing: 2-");
	done(g);
	g = add("k", "Sequence-Stack: A 5 2|Sequence-Number: 1", "x");
	CHECK(build(g, NULL, AGG_END) == -1);
	CHECK_STR(out_err.ptr, "Sequence-Stack entry 'A 5 2' is not 'CORRELATION NUMBER SIZE'");
	done(g);
	g = add("k", "Sequence-Stack: 3 -|Sequence-Number: 1", "x");
	CHECK(build(g, NULL, AGG_END) == -1);
	done(g);
}

/* A split of nothing sends one marker: the parent comes back empty. */
static void test_empty_marker(void)
{
	struct headers parent = HEADERS_INIT, marker = HEADERS_INIT;
	struct agg_group *g;

	make_headers(&parent, "Message-Id: O9|Correlation-Id: B|Sequence-Number: 4"
		     "|Content-Type: application/json");
	make_headers(&marker, "Message-Id: M|Correlation-Id: O9|Sequence-Size: 0"
		     "|Sequence-End: true|Sequence-Stack: B 4 -|Content-Type: application/json");
	g = add_h("O9", &marker, "", NAN);
	CHECK(agg_completed(table, g) == AGG_COMPLETE);
	CHECK(build(g, NULL, AGG_COMPLETE) == 0);
	CHECK_STR(out_body.ptr, "[]");
	CHECK_STR(dump(&out_h), "Correlation-Id: B|Content-Type: application/json"
		  "|Sequence-Number: 4|Aggregate-Size: 0|Aggregate-Reason: complete");
	done(g);
	make_headers(&marker, "Sequence-Size: 0|Content-Type: application/xml");
	g = add_h("x", &marker, "", NAN);
	CHECK(build(g, NULL, AGG_COMPLETE) == 0);
	CHECK_STR(out_body.ptr, "<aggregate></aggregate>");
	done(g);
	headers_release(&parent);
	headers_release(&marker);
}

/* msg-split's Sequence-Root: the innermost tag is the wrapper when its
 * element is the one asked for, and leaves the list in any case. */
static void test_root(void)
{
	struct agg_build_opt b = { .wrap = "b" }, c = { .wrap = "c" };
	struct agg_live *l = agg_live_new(&b, 1);
	struct agg_group *g;
	const char *roots = "Sequence-Root: <a x=\"1\"><b y=\"&lt;\" z=\"2\">";
	char lines[128];

	snprintf(lines, sizeof(lines), "Content-Type: application/xml|%s", roots);
	add("r", lines, "<i/>");
	g = add("r", lines, "<j/>");
	CHECK(build(g, &b, AGG_COUNT) == 0);
	CHECK_STR(out_body.ptr, "<b y=\"&lt;\" z=\"2\"><i/><j/></b>");
	CHECK_STR(headers_get(&out_h, "Sequence-Root"), "<a x=\"1\">");
	/* The aggregate so far begins the same. */
	CHECK(agg_live_update(l, g) == 0);
	CHECK_STR(agg_live_body(l)->ptr, out_body.ptr);
	CHECK(build(g, &c, AGG_COUNT) == 0);
	CHECK_STR(out_body.ptr, "<c><i/><j/></c>");
	CHECK_STR(headers_get(&out_h, "Sequence-Root"), "<a x=\"1\">");
	agg_live_free(l);
	done(g);

	/* The last level: the header goes. A prefix of the name is not it. */
	g = add("r", "Content-Type: application/xml|Sequence-Root: <bb k=\"v\">", "<i/>");
	CHECK(build(g, &b, AGG_COUNT) == 0);
	CHECK_STR(out_body.ptr, "<b><i/></b>");
	CHECK(!headers_get(&out_h, "Sequence-Root"));
	done(g);

	/* Text is no level of an XML split: the list stays. */
	g = add("r", "Content-Type: text/plain|Sequence-Root: <b k=\"v\">", "t");
	CHECK(build(g, &b, AGG_COUNT) == 0);
	CHECK_STR(headers_get(&out_h, "Sequence-Root"), "<b k=\"v\">");
	done(g);
}

/* ---- the aggregate so far (aggregate-live.c) ---- */

/* After each member of g comes in, the live body is agg_build's byte for
 * byte, and its document serialises to the same. */
static void live_matches(struct agg_live *l, struct agg_group *g,
			 const struct agg_build_opt *opt)
{
	struct buf doc_text = BUF_INIT, want = BUF_INIT, err = BUF_INIT;
	struct _xmlDoc *doc;

	CHECK(agg_live_update(l, g) == 0);
	CHECK(build(g, opt, AGG_OPEN) == 0);
	CHECK(agg_live_body(l)->len == out_body.len);
	CHECK(!memcmp(agg_live_body(l)->ptr, out_body.ptr, out_body.len));
	if ((doc = agg_live_doc(l))) {
		xmlNodePtr root = xmlDocGetRootElement(doc);
		if (agg_live_kind(l) == BODY_XML) {
			xmlout_element(root, &doc_text);
			CHECK_STR(doc_text.ptr, out_body.ptr);
		} else {
			/* The mapping's text is canonical: the built body's, parsed and
			 * written back. */
			xmlDocPtr built = jsonxml_parse(out_body.ptr, out_body.len, &err);
			CHECK(jsonxml_serialize(root, 0, &doc_text, &err) == 0);
			CHECK(jsonxml_serialize(xmlDocGetRootElement(built), 0, &want, &err) == 0);
			CHECK_STR(doc_text.ptr, want.ptr);
			xmlFreeDoc(built);
		}
	}
	buf_release(&doc_text);
	buf_release(&want);
	buf_release(&err);
}

/* Members out of order, numbered and not, each kind: a new member goes
 * first, between, or last, as agg_build would put it. */
static void live_kind(const char *type, const char *const bodies[4],
		      const struct agg_build_opt *opt, int want_doc)
{
	static const char *const seqs[4] = { "Sequence-Number: 3", "",
					     "Sequence-Number: 1", "Sequence-Number: 2" };
	struct agg_live *l = agg_live_new(opt, want_doc);
	struct agg_group *g = NULL;
	char lines[128];

	for (int i = 0; i < 4; i++) {
		snprintf(lines, sizeof(lines), "%s%s%s", type, *seqs[i] ? "|" : "", seqs[i]);
		g = add("live", lines, bodies[i]);
		live_matches(l, g, opt);
	}
	CHECK(!want_doc == !agg_live_doc(l) || strstr(type, "text"));
	agg_live_free(l);
	done(g);
}

static void test_live(void)
{
	static const char *const xml[4] = { "<c n=\"3\"/>", "<x>&amp;</x>",
					    "<?xml version=\"1.0\"?><a/>",
					    "<p:b xmlns:p=\"urn:p\"><p:q/></p:b>" };
	static const char *const json[4] = { "3", " \"s\" ", "{\"a\": 1}", "[2]" };
	static const char *const text[4] = { "c", "x", "a", "b" };
	static const struct agg_build_opt none;
	struct agg_build_opt sep = { .wrap = "all", .separator = ";", .separator_len = 1 };
	struct agg_live *l;
	struct agg_group *g;

	for (int want_doc = 0; want_doc < 2; want_doc++) {
		live_kind("Content-Type: application/xml", xml, &sep, want_doc);
		live_kind("Content-Type: application/json", json, &sep, want_doc);
		live_kind("Content-Type: text/plain", text, &sep, want_doc);
		live_kind("Content-Type: text/plain", text, &none, want_doc);
		live_kind("Content-Type: application/xml", xml, &none, want_doc);
	}

	/* What agg_build refuses, it refuses for good: members stay. */
	l = agg_live_new(&sep, 1);
	add("bad", "Content-Type: application/xml", "<a/>");
	g = add("bad", "Content-Type: application/json", "[1]");
	CHECK(agg_live_update(l, g) == -1);
	g = add("bad", "Content-Type: application/xml", "<b/>");
	CHECK(agg_live_update(l, g) == -1);
	agg_live_free(l);
	done(g);
	l = agg_live_new(&sep, 0);
	g = add("bad", "Content-Type: application/xml", "<a>");
	CHECK(agg_live_update(l, g) == -1);
	agg_live_free(l);
	done(g);
}

int main(void)
{
	static const struct agg_limits none;
	struct buf err = BUF_INIT;

	env = expr_env_new(NULL, 0, &err);
	table = agg_table_new(&none);
	test_xml();
	test_json();
	test_text_and_mixed();
	test_common_headers();
	test_missing();
	test_best();
	test_stack_one_level();
	test_stack_two_levels();
	test_stack_entries();
	test_empty_marker();
	test_root();
	test_live();
	CHECK(agg_groups(table) == 0);
	agg_table_free(table);
	expr_env_free(env);
	headers_release(&out_h);
	buf_release(&out_body);
	buf_release(&out_err);
	buf_release(&err);
	return unit_done();
}
