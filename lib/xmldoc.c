/* xmldoc: secure libxml2 parsing with errors captured, not printed. */
#include "xmldoc.h"

#include <libxml/parser.h>
#include <libxml/xmlerror.h>
#include <string.h>

static int initialised;
static int failed;
static struct buf first_error = BUF_INIT;
static struct buf refused_entity = BUF_INIT;

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

static void record_error(void *data, xmlErrorPtr e)
{
	size_t len;

	(void)data;
	if (!e || e->level < XML_ERR_ERROR || first_error.len)
		return;
	failed = 1;
	if (e->line > 0)
		buf_addf(&first_error, "line %d: ", e->line);
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
	buf_reset(&first_error);
	buf_reset(&refused_entity);
}

int xmldoc_end(struct buf *err)
{
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

xmlDocPtr xmldoc_parse(const char *p, size_t n, struct buf *err)
{
	xmlDocPtr doc;

	if (n > (size_t)INT32_MAX) {
		buf_addstr(err, "document larger than 2 GiB");
		return NULL;
	}
	xmldoc_begin();
	doc = xmlReadMemory(p, (int)n, NULL, NULL, xmldoc_parse_options());
	if (xmldoc_end(err) < 0 || !doc) {
		if (!err->len)
			buf_addstr(err, "not well-formed XML");
		xmlFreeDoc(doc);
		return NULL;
	}
	return doc;
}
