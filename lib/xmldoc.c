/* xmldoc: secure libxml2 parsing with errors captured, not printed. */
#include "xmldoc.h"

#include <libxml/dict.h>
#include <libxml/parser.h>
#include <libxml/parserInternals.h>
#include <libxml/xmlerror.h>
#include <string.h>
#include <strings.h>

#include "message.h"

static int initialised;
static int failed;
static int out_of_memory;
static struct buf first_error = BUF_INIT;
static struct buf refused_entity = BUF_INIT;

/*
 * One parser context serves every body (xmlCtxtReadMemory resets it), so
 * a small message costs a parse, not a parser's set-up and tear-down; its
 * dictionary of names is shared by the documents it makes. The names
 * bodies bring are not bounded, so past DICT_NAMES_MAX the context is
 * replaced and its dictionary goes with the last document that uses it.
 */
#define DICT_NAMES_MAX 4096
static xmlParserCtxtPtr parser;

/* Every external entity or DTD is refused: no XXE, no network, no files. */
static xmlParserInputPtr refuse_external(const char *url, const char *id,
					 xmlParserCtxtPtr ctxt)
{
	(void)id;
	(void)ctxt;
	if (!refused_entity.len)
		buf_addstr(&refused_entity, url ? url : "(unnamed)");
	return NULL;
}

/*
 * Errors libxml2 gives when the input stopped in the middle of a
 * construct: at the very end of the input they mean the document was cut
 * short, not that what is there is wrong.
 */
static int unfinished_construct(int code)
{
	switch (code) {
	case XML_ERR_DOCUMENT_EMPTY:
	case XML_ERR_ENTITYREF_SEMICOL_MISSING:
	case XML_ERR_STRING_NOT_STARTED:
	case XML_ERR_STRING_NOT_CLOSED:
	case XML_ERR_LITERAL_NOT_STARTED:
	case XML_ERR_LITERAL_NOT_FINISHED:
	case XML_ERR_ATTRIBUTE_NOT_STARTED:
	case XML_ERR_ATTRIBUTE_NOT_FINISHED:
	case XML_ERR_ATTRIBUTE_WITHOUT_VALUE:
	case XML_ERR_COMMENT_NOT_FINISHED:
	case XML_ERR_HYPHEN_IN_COMMENT:
	case XML_ERR_RESERVED_XML_NAME:
	case XML_ERR_PI_NOT_STARTED:
	case XML_ERR_PI_NOT_FINISHED:
	case XML_ERR_CDATA_NOT_FINISHED:
	case XML_ERR_SPACE_REQUIRED:
	case XML_ERR_NAME_REQUIRED:
	case XML_ERR_EQUAL_REQUIRED:
	case XML_ERR_GT_REQUIRED:
	case XML_ERR_LTSLASH_REQUIRED:
	case XML_ERR_VERSION_MISSING:
	case XML_ERR_XMLDECL_NOT_FINISHED:
		return 1;
	}
	return 0;
}

/*
 * Where the parser stopped, does the input hold nothing but the start of
 * a token, too short to tell (the parser stops before "<!" when the input
 * ends in "<![CD", before "--" when it ends in "<!--c--")?
 */
static int ends_in_partial_token(const xmlParserCtxt *ctxt)
{
	static const char *const tokens[] = {
		"<!--", "<![CDATA[", "/>", "-->", "?>", "version",
	};
	const xmlChar *cur = ctxt->input->cur, *end = ctxt->input->end;

	for (size_t i = 0; i < sizeof(tokens) / sizeof(tokens[0]); i++)
		for (size_t back = 0; back < 2 && cur - back >= ctxt->input->base; back++) {
			size_t left = (size_t)(end - (cur - back));
			if (left < strlen(tokens[i]) && !memcmp(cur - back, tokens[i], left))
				return 1;
		}
	return 0;
}

/*
 * Was the document cut short (a half-uploaded file)? The tree parser says
 * "Premature end of data in tag", or names the construct the input ended
 * in; the streaming reader, which learns of the end only when it has
 * parsed everything before it, says "Extra content at the end of the
 * document" in any state but the one after the document element.
 */
static int truncated(const xmlError *e)
{
	const xmlParserCtxt *ctxt = e->domain == XML_FROM_PARSER ? e->ctxt : NULL;

	if (!ctxt || !ctxt->input)
		return 0;
	if (e->code == XML_ERR_TAG_NOT_FINISHED)
		return 1;
	if (e->code == XML_ERR_DOCUMENT_END)
		return ctxt->instate != XML_PARSER_EPILOG &&
		       ctxt->instate != XML_PARSER_EOF &&
		       (ctxt->nameNr > 0 || ctxt->input->end > ctxt->input->base);
	return unfinished_construct(e->code) && ctxt->input->end > ctxt->input->base &&
	       (ctxt->input->cur >= ctxt->input->end || ends_in_partial_token(ctxt));
}

static void describe_truncation(const xmlError *e)
{
	const xmlParserCtxt *ctxt = e->ctxt;

	buf_addstr(&first_error, "truncated: the document ends");
	if (ctxt->nameNr > 0 && ctxt->name)
		buf_addf(&first_error, " inside element '%s'", (const char *)ctxt->name);
	else
		buf_addstr(&first_error, " before it is complete");
}

static void record_error(void *data, xmlErrorPtr e)
{
	size_t len;

	(void)data;
	/* Nothing is allocated here when memory has run out. */
	if (e && e->code == XML_ERR_NO_MEMORY)
		out_of_memory = failed = 1;
	if (!e || e->level < XML_ERR_ERROR || first_error.len || out_of_memory)
		return;
	failed = 1;
	if (e->line > 0)
		buf_addf(&first_error, "line %d: ", e->line);
	if (truncated(e)) {
		describe_truncation(e);
		return;
	}
	buf_addstr(&first_error, e->message ? e->message : "parse error");
	len = first_error.len;
	while (len && (first_error.ptr[len - 1] == '\n' || first_error.ptr[len - 1] == ' '))
		len--;
	buf_setlen(&first_error, len);
}

static void ignore_generic(void *ctx, const char *msg, ...)
{
	(void)ctx;
	(void)msg;
}

void xmldoc_init(void)
{
	if (initialised)
		return;
	LIBXML_TEST_VERSION
	xmlInitParser();
	xmlSetExternalEntityLoader(refuse_external);
	xmlSetStructuredErrorFunc(NULL, record_error);
	xmlSetGenericErrorFunc(NULL, ignore_generic);
	initialised = 1;
}

void xmldoc_restore_errors(void)
{
	xmlSetStructuredErrorFunc(NULL, record_error);
}

int xmldoc_parse_options(void)
{
	return XML_PARSE_NONET | XML_PARSE_NOENT | XML_PARSE_NOWARNING |
	       XML_PARSE_NOERROR | XML_PARSE_COMPACT;
}

void xmldoc_begin(void)
{
	xmldoc_init();
	failed = 0;
	out_of_memory = 0;
	buf_reset(&first_error);
	buf_reset(&refused_entity);
}

int xmldoc_end(struct buf *err)
{
	/* Whatever else went wrong, it may have been for want of memory. */
	if (out_of_memory) {
		buf_addstr(err, "out of memory");
		return MSG_NO_MEMORY;
	}
	if (refused_entity.len) {
		buf_addf(err, "external entity '%s' refused", refused_entity.ptr);
		return -1;
	}
	if (failed) {
		buf_add(err, first_error.ptr, first_error.len);
		return -1;
	}
	return 0;
}

/* The context for the next body, or NULL when none can be had (for
 * want of memory: xmlCtxtReadMemory then fails, and xmldoc_parse says so). */
static xmlParserCtxtPtr reused_parser(void)
{
	if (parser && parser->dict && xmlDictSize(parser->dict) > DICT_NAMES_MAX) {
		xmlFreeParserCtxt(parser);
		parser = NULL;
	}
	if (!parser)
		parser = xmlNewParserCtxt();
	return parser;
}

/*
 * Is the body UTF-8 (or ASCII) from its first byte, with no declaration
 * of another encoding? (No byte order mark, "<" first and no NUL after
 * it, and an XML declaration, if any, that names no encoding or UTF-8.)
 */
static int utf8_as_declared(const char *p, size_t n)
{
	const char *end, *enc;

	/* "<" then NUL is UTF-16LE without its mark. */
	if (n < 2 || p[0] != '<' || p[1] == '\0')
		return 0;
	if (n < 5 || memcmp(p, "<?xml", 5))
		return 1;
	end = memmem(p, n, "?>", 2);
	if (!end)
		return 0;
	enc = memmem(p, (size_t)(end - p), "encoding", 8);
	if (!enc)
		return 1;
	enc += 8;
	while (enc < end && (*enc == ' ' || *enc == '=' || *enc == '"' || *enc == '\''))
		enc++;
	return end - enc >= 5 && !strncasecmp(enc, "UTF-8", 5) &&
	       (enc[5] == '"' || enc[5] == '\'');
}

/*
 * libxml2 2.9 misparses a large body read in place (a 12 MB document of
 * tests/44); below twice its INPUT_CHUNK it never shrinks the input, and
 * reads such a body right: only those are read in place.
 */
#define IN_PLACE_MAX (2 * INPUT_CHUNK)

/*
 * xmlCtxtReadMemory for a small body in UTF-8 as it declares (above),
 * read where it lies: xmlCtxtReadMemory copies it into a buffer that the
 * parser then asks to grow at nearly every token of a document under 250
 * bytes (a third of msg-route -f's time on 200-byte orders).
 */
static xmlDocPtr read_in_place(xmlParserCtxtPtr ctxt, const char *p, int n)
{
	xmlParserInputBufferPtr in;
	xmlParserInputPtr stream;
	xmlDocPtr doc;

	if (!ctxt)
		return NULL;
	xmlCtxtReset(ctxt);
	in = xmlParserInputBufferCreateStatic(p, n, XML_CHAR_ENCODING_NONE);
	if (!in)
		return NULL;
	stream = xmlNewIOInputStream(ctxt, in, XML_CHAR_ENCODING_NONE);
	if (!stream) {
		xmlFreeParserInputBuffer(in);
		return NULL;
	}
	inputPush(ctxt, stream);
	xmlCtxtUseOptions(ctxt, xmldoc_parse_options());
	xmlParseDocument(ctxt);
	doc = ctxt->myDoc;
	ctxt->myDoc = NULL;
	if (!ctxt->wellFormed) {
		xmlFreeDoc(doc);
		doc = NULL;
	}
	return doc;
}

xmlDocPtr xmldoc_parse(const char *p, size_t n, struct buf *err, int *status)
{
	xmlDocPtr doc;
	const char *enc;

	*status = -1;
	if (n > (size_t)INT32_MAX) {
		buf_addstr(err, "document larger than 2 GiB");
		return NULL;
	}
	if (n == 0) {
		/* libxml2 gives no reason for nothing at all. */
		buf_addstr(err, "the body is empty");
		return NULL;
	}
	xmldoc_begin();
	enc = message_xml_encoding(p, n);
	doc = enc || n > IN_PLACE_MAX || !utf8_as_declared(p, n)
		      ? xmlCtxtReadMemory(reused_parser(), p, (int)n, NULL, enc,
					  xmldoc_parse_options())
		      : read_in_place(reused_parser(), p, (int)n);
	*status = xmldoc_end(err);
	if (*status < 0 || !doc) {
		if (*status == 0) {
			/* No error reported and no document: libxml2 could not
			 * even set up a parser, which is for want of memory. */
			*status = MSG_NO_MEMORY;
			buf_addstr(err, "out of memory");
		}
		xmlFreeDoc(doc);
		return NULL;
	}
	return doc;
}
