/* xsltlog: libxslt's and libxml2's errors and xsl:message text, caught. */
#include "xsltlog.h"

#include <libxml/xmlerror.h>
#include <libxslt/xsltutils.h>
#include <stdarg.h>
#include <string.h>

#include "xmldoc.h"

/* Error text longer than this is cut: it ends up in one header line. */
#define ERROR_MAX 1024

/* libxslt's and libxml2's error callbacks carry no pointer of ours. */
static struct {
	struct buf *err;		/* raw error text; NULL: nothing runs */
	xsltTransformContextPtr ctxt;	/* during a transformation */
	struct buf *messages;		/* where xsl:message text goes */
	struct buf message;		/* xsl:message text being assembled */
	size_t last;			/* start of the last whole message */
	int have_last;
} cap = { .message = BUF_INIT };

void xsltlog_note(const char *text)
{
	if (cap.err && cap.err->len < ERROR_MAX)
		buf_addstr(cap.err, text);
}

/* xsl:message calls this with its text, then "\n" unless it ended so. */
static void note_message(const char *text)
{
	struct buf *out = cap.messages;

	buf_addstr(&cap.message, text);
	if (*text && cap.message.ptr[cap.message.len - 1] != '\n')
		return;
	cap.last = out->len;
	cap.have_last = 1;
	buf_add(out, cap.message.ptr, cap.message.len);
	if (!cap.message.len)
		buf_addch(out, '\n');
	buf_reset(&cap.message);
}

/*
 * libxslt reports through one printf-like function for a context. The
 * state tells errors (libxslt sets XSLT_STATE_ERROR before it prints
 * one) from xsl:message text (printed while the state is still OK).
 */
static void on_xslt_error(void *ctx, const char *fmt, ...)
{
	struct buf text = BUF_INIT;
	va_list ap;

	(void)ctx;
	va_start(ap, fmt);
	buf_vaddf(&text, fmt, ap);
	va_end(ap);
	if (cap.ctxt && cap.messages && cap.ctxt->state == XSLT_STATE_OK)
		note_message(text.ptr);
	else
		xsltlog_note(text.ptr);
	buf_release(&text);
}

static void on_xml_error(void *data, xmlErrorPtr e)
{
	struct buf text = BUF_INIT;

	(void)data;
	if (!e || e->level < XML_ERR_ERROR || !cap.err)
		return;
	if (e->file && e->line > 0)
		buf_addf(&text, "file %s line %d: ", e->file, e->line);
	else if (e->line > 0)
		buf_addf(&text, "line %d: ", e->line);
	buf_addstr(&text, e->message ? e->message : "error");
	if (text.len && text.ptr[text.len - 1] != '\n')
		buf_addch(&text, '\n');
	xsltlog_note(text.ptr);
	buf_release(&text);
}

/* Raw libxslt text (lines, some blank) as one line: "a; b; c". */
void xsltlog_one_line(const struct buf *raw, struct buf *out)
{
	const char *p = raw->ptr, *end = raw->ptr + raw->len;
	size_t start = out->len;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *e = nl ? nl : end;

		while (p < e && (*p == ' ' || *p == '\t' || *p == '\r'))
			p++;
		while (e > p && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
			e--;
		/* libxslt's context line for an error with no context. */
		if (e - p == 5 && !memcmp(p, "error", 5))
			e = p;
		if (e > p) {
			if (out->len > start)
				buf_addstr(out, "; ");
			buf_add(out, p, (size_t)(e - p));
		}
		p = nl ? nl + 1 : end;
	}
	if (out->len - start > ERROR_MAX) {
		size_t cut = start + ERROR_MAX;
		/* Not in the middle of a UTF-8 sequence. */
		while (cut > start && ((unsigned char)out->ptr[cut] & 0xc0) == 0x80)
			cut--;
		buf_setlen(out, cut);
		buf_addstr(out, "...");
	}
}

void xsltlog_register(void)
{
	xsltSetGenericErrorFunc(NULL, on_xslt_error);
}

void xsltlog_release(void)
{
	buf_release(&cap.message);
}

void xsltlog_begin(struct buf *raw)
{
	cap.err = raw;
	xmlSetStructuredErrorFunc(NULL, on_xml_error);
}

void xsltlog_watch(xsltTransformContextPtr ctxt, struct buf *messages)
{
	cap.ctxt = ctxt;
	cap.messages = messages;
	cap.have_last = 0;
	buf_reset(&cap.message);
	xsltSetTransformErrorFunc(ctxt, NULL, on_xslt_error);
}

void xsltlog_end(void)
{
	if (cap.messages && cap.message.len)
		note_message("\n");
	xmldoc_restore_errors();
	cap.err = NULL;
	cap.ctxt = NULL;
	cap.messages = NULL;
}

int xsltlog_take_last(struct buf *messages, struct buf *text)
{
	if (!cap.have_last || cap.last > messages->len)
		return -1;
	buf_add(text, messages->ptr + cap.last, messages->len - cap.last);
	buf_setlen(messages, cap.last);
	cap.have_last = 0;
	return 0;
}
