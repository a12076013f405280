/* xslt: libxslt for msg-translate: stylesheets, their cache, runs, errors. */
#include "xslt.h"

#include <errno.h>
#include <fcntl.h>
#include <libexslt/exslt.h>
#include <libxml/parser.h>
#include <libxml/uri.h>
#include <libxslt/documents.h>
#include <libxslt/security.h>
#include <libxslt/transform.h>
#include <libxslt/xslt.h>
#include <libxslt/xsltInternals.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "diag.h"
#include "io.h"
#include "jsonxml.h"
#include "message.h"
#include "sandbox.h"
#include "xmldoc.h"
#include "xsltlog.h"
#include "xsltmsg.h"
#include "xsltout.h"

struct xslt_sheet {
	char *key;		/* the path as given, or the name from a header */
	int named;		/* key is a name looked up in --allow-read */
	int pinned;		/* given on the command line: never evicted */
	struct sandbox_dirs dirs;	/* of its modules: document() reads there */
	xsltStylesheetPtr style;
	unsigned long long used;
};

struct xslt {
	struct xslt_options o;
	struct sandbox_dirs read_dirs, write_dirs;
	const char **params;		/* name, XPath, ..., NULL */
	size_t nparams;
	struct xslt_sheet *cache[XSLT_CACHE_MAX];
	size_t ncache;
	unsigned long long clock;
	xsltSecurityPrefsPtr sec;
	int parse_options;	/* bodies and document() */
	int sheet_options;	/* stylesheet modules */
};

/*
 * libxslt's callbacks carry no pointer of ours, so the engine and the
 * compile or run in progress live here (one engine per process).
 */
static struct xslt *engine;
static struct {
	struct xslt_sheet *sheet;	/* being compiled or run */
	int compiling;			/* stylesheet modules are being loaded */
} run;

/* ---- the security rules ---- */

/*
 * May the running stylesheet read this local file? Its own modules (the
 * stylesheet, its imports and includes) are code the operator installed,
 * read wherever they lie; documents only under the directories of those
 * modules and --allow-read.
 */
static int may_read(const char *path)
{
	if (run.compiling)
		return 1;
	return path && ((run.sheet && sandbox_dirs_allow(&run.sheet->dirs, path)) ||
			sandbox_dirs_allow(&engine->read_dirs, path));
}

static int may_write(const char *path)
{
	return path && sandbox_dirs_allow(&engine->write_dirs, path);
}

static int check_read(xsltSecurityPrefsPtr sec, xsltTransformContextPtr ctxt,
		      const char *path)
{
	(void)sec;
	(void)ctxt;
	return may_read(path);
}

static int check_write(xsltSecurityPrefsPtr sec, xsltTransformContextPtr ctxt,
		       const char *path)
{
	(void)sec;
	(void)ctxt;
	return may_write(path);
}

/* The local path a URI names, or NULL for anything but a file. */
static char *uri_path(const xmlChar *uri)
{
	xmlURIPtr u = xmlParseURI((const char *)uri);
	char *path = NULL;

	if (!u)
		return xstrdup((const char *)uri);
	if ((!u->scheme || !strcmp(u->scheme, "file")) && u->path)
		path = xstrdup(u->path);
	xmlFreeURI(u);
	return path;
}

/* ---- compiles and runs in progress ---- */

static void begin_capture(struct buf *raw, struct xslt_sheet *sheet)
{
	xsltlog_begin(raw);
	run.sheet = sheet;
}

static void end_capture(void)
{
	xsltlog_end();
	run.sheet = NULL;
	run.compiling = 0;
	xsltmsg_bind(NULL, NULL);
}

/* ---- loading stylesheets and documents ---- */

static int read_file(const char *path, struct buf *out)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat sb;
	int r, saved;

	if (fd < 0)
		return -1;
	if (fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode)) {
		close(fd);
		errno = EISDIR;
		return -1;
	}
	/* Room for all of it, and a byte to see the end in one read. */
	buf_grow(out, (size_t)sb.st_size + 1);
	r = read_to_end(fd, out, SIZE_MAX);
	saved = errno;
	close(fd);
	errno = saved;
	return r < 0 ? -1 : 0;
}

/*
 * Without --load-dtd nothing outside a body is read. A parser may
 * leave out the external DTD subset (attribute defaults declared inside
 * the document still apply, as with xsltproc); an external entity left
 * out would silently lose text, so refusing one fails the parse.
 */
static struct buf refused = BUF_INIT;

static xmlParserInputPtr refuse_entities(const char *url, const char *id,
					 xmlParserCtxtPtr ctxt)
{
	(void)id;
	if (!(ctxt && ctxt->inSubset == 2) && !refused.len)
		buf_addstr(&refused, url ? url : "(unnamed)");
	return NULL;
}

/*
 * For stylesheets, and bodies with --load-dtd: local files and catalogs,
 * never the network.
 */
static xmlParserInputPtr local_entities(const char *url, const char *id,
					xmlParserCtxtPtr ctxt)
{
	return xmlNoNetExternalEntityLoader(url, id, ctxt);
}

/*
 * Parse with our options and entity rules: local DTDs and entities for
 * trusted documents, none for the others. Errors go wherever libxml2's
 * are being captured; a refused entity is put in err. NULL unless the
 * document is well-formed.
 */
static xmlDocPtr parse_xml(xmlParserCtxtPtr pctxt, const char *p, size_t n,
			   const char *url, int opts, int trusted, struct buf *err)
{
	xmlExternalEntityLoader saved = xmlGetExternalEntityLoader();
	xmlDocPtr doc;

	xmlSetExternalEntityLoader(trusted ? local_entities : refuse_entities);
	buf_reset(&refused);
	doc = xmlCtxtReadMemory(pctxt, p, (int)n, url, message_xml_encoding(p, n), opts);
	xmlSetExternalEntityLoader(saved);
	if (refused.len)
		buf_addf(err, "external entity '%s' refused", refused.ptr);
	if (doc && (!pctxt->wellFormed || refused.len)) {
		xmlFreeDoc(doc);
		doc = NULL;
	}
	return doc;
}

/*
 * Every stylesheet, import, include and document() goes through here:
 * the file is read only if the rules allow it, and parsed with our
 * options, never libxslt's. A stylesheet module is parsed as xsltproc
 * --nonet parses it (its DTD and entities, local files only), and its
 * directory is noted for document(); documents read by document() are
 * parsed as bodies are.
 */
static xmlDocPtr load_doc(const xmlChar *uri, xmlDictPtr dict, int options,
			  void *ctx, xsltLoadType type)
{
	char *path = uri_path(uri);
	struct buf data = BUF_INIT, why = BUF_INIT;
	int module = type != XSLT_LOAD_DOCUMENT;
	xmlParserCtxtPtr pctxt;
	xmlDocPtr doc = NULL;

	(void)options;
	(void)ctx;
	if (!path || !may_read(path)) {
		buf_addf(&why, "reading '%s' is not allowed\n", (const char *)uri);
		goto out;
	}
	/* As xsltproc: a document that is not there is an empty node-set. */
	if (read_file(path, &data) < 0 || data.len > INT_MAX)
		goto out;
	pctxt = xmlNewParserCtxt();
	if (!pctxt)
		goto out;
	/* Stylesheet documents share the stylesheet's dictionary. */
	if (dict) {
		xmlDictFree(pctxt->dict);
		pctxt->dict = dict;
		xmlDictReference(dict);
	}
	doc = parse_xml(pctxt, data.ptr, data.len, (const char *)uri,
			module ? engine->sheet_options : engine->parse_options,
			module || engine->o.load_dtd, &why);
	xmlFreeParserCtxt(pctxt);
	if (doc && module && run.sheet)
		sandbox_dirs_add_parent(&run.sheet->dirs, path);
out:
	if (why.len) {
		buf_addch(&why, '\n');
		xsltlog_note(why.ptr);
	}
	free(path);
	buf_release(&data);
	buf_release(&why);
	return doc;
}

/* ---- the engine ---- */

static int add_dirs(char *const *in, size_t n, struct sandbox_dirs *d,
		    struct buf *err)
{
	for (size_t i = 0; i < n; i++)
		if (sandbox_dirs_add(d, in[i], err) < 0)
			return -1;
	return 0;
}

struct xslt *xslt_new(const struct xslt_options *o, struct buf *err)
{
	struct xslt *x = xmalloc(sizeof(*x));

	memset(x, 0, sizeof(*x));
	x->o = *o;
	x->params = xmalloc(sizeof(*x->params));
	x->params[0] = NULL;
	engine = x;
	if (add_dirs(o->allow_read, o->nallow_read, &x->read_dirs, err) < 0 ||
	    add_dirs(o->allow_write, o->nallow_write, &x->write_dirs, err) < 0)
		goto fail;
	xmldoc_init();
	if (o->encoding) {
		xmlCharEncodingHandlerPtr h = xmlFindCharEncodingHandler(o->encoding);
		if (!h) {
			buf_addf(err, "unknown encoding '%s'", o->encoding);
			goto fail;
		}
		xmlCharEncCloseFunc(h);
	}
	x->parse_options = xmldoc_parse_options() | XML_PARSE_NOCDATA |
			   XML_PARSE_DTDATTR;
	if (o->load_dtd)
		x->parse_options |= XML_PARSE_DTDLOAD;
	x->sheet_options = xmldoc_parse_options() | XSLT_PARSE_OPTIONS;
	xsltInit();
	exsltRegisterAll();
	xsltmsg_register();
	xsltlog_register();
	xsltSetLoaderFunc(load_doc);
	x->sec = xsltNewSecurityPrefs();
	xsltSetSecurityPrefs(x->sec, XSLT_SECPREF_READ_FILE, check_read);
	xsltSetSecurityPrefs(x->sec, XSLT_SECPREF_WRITE_FILE, check_write);
	xsltSetSecurityPrefs(x->sec, XSLT_SECPREF_CREATE_DIRECTORY, check_write);
	xsltSetSecurityPrefs(x->sec, XSLT_SECPREF_READ_NETWORK, xsltSecurityForbid);
	xsltSetSecurityPrefs(x->sec, XSLT_SECPREF_WRITE_NETWORK, xsltSecurityForbid);
	xsltSetDefaultSecurityPrefs(x->sec);
	return x;
fail:
	xslt_free(x);
	return NULL;
}

static void sheet_free(struct xslt_sheet *s)
{
	xsltFreeStylesheet(s->style);
	free(s->key);
	sandbox_dirs_release(&s->dirs);
	free(s);
}

void xslt_free(struct xslt *x)
{
	if (!x)
		return;
	for (size_t i = 0; i < x->ncache; i++)
		sheet_free(x->cache[i]);
	sandbox_dirs_release(&x->read_dirs);
	sandbox_dirs_release(&x->write_dirs);
	for (size_t i = 0; i < x->nparams; i++)
		free((char *)x->params[i]);
	free(x->params);
	if (x->sec) {
		xsltSetDefaultSecurityPrefs(NULL);
		xsltFreeSecurityPrefs(x->sec);
		xsltSetLoaderFunc(NULL);
		xsltCleanupGlobals();
		xmlCleanupParser();
	}
	xsltlog_release();
	buf_release(&refused);
	engine = NULL;
	free(x);
}

/* A string as an XPath literal; concat() when it holds both quotes. */
static char *xpath_literal(const char *s)
{
	struct buf b = BUF_INIT;

	if (!strchr(s, '\'')) {
		buf_addf(&b, "'%s'", s);
	} else if (!strchr(s, '"')) {
		buf_addf(&b, "\"%s\"", s);
	} else {
		buf_addstr(&b, "concat(''");
		while (*s) {
			size_t n = strcspn(s, "'");
			if (n)
				buf_addf(&b, ", '%.*s'", (int)n, s);
			s += n;
			if (*s == '\'') {
				buf_addstr(&b, ", \"'\"");
				s++;
			}
		}
		buf_addch(&b, ')');
	}
	return buf_detach(&b, NULL);
}

/* Is an XPath parameter well-formed? Its functions are checked when run. */
static int param_compiles(const char *xpath, struct buf *err)
{
	struct buf raw = BUF_INIT;
	xmlXPathCompExprPtr comp;

	begin_capture(&raw, NULL);
	comp = xmlXPathCompile(BAD_CAST xpath);
	end_capture();
	if (!comp) {
		if (raw.len)
			xsltlog_one_line(&raw, err);
		else
			buf_addstr(err, "invalid expression");
	}
	xmlXPathFreeCompExpr(comp);
	buf_release(&raw);
	return comp ? 0 : -1;
}

int xslt_param(struct xslt *x, const char *assignment, int literal,
	       struct buf *err)
{
	const char *eq = strchr(assignment, '=');
	struct buf why = BUF_INIT;

	if (!eq || eq == assignment) {
		buf_addf(err, "invalid parameter '%s': not name=value", assignment);
		return -1;
	}
	if (!literal && param_compiles(eq + 1, &why) < 0) {
		buf_addf(err, "invalid parameter '%s': %s", assignment, why.ptr);
		buf_release(&why);
		return -1;
	}
	x->params = xrealloc(x->params, (x->nparams + 3) * sizeof(*x->params));
	x->params[x->nparams++] = xmemdup(assignment, (size_t)(eq - assignment));
	x->params[x->nparams++] = literal ? xpath_literal(eq + 1) : xstrdup(eq + 1);
	x->params[x->nparams] = NULL;
	buf_release(&why);
	return 0;
}

/* ---- the stylesheet cache ---- */

static struct xslt_sheet *compile(const char *path, struct buf *err)
{
	struct xslt_sheet *s = xmalloc(sizeof(*s));
	struct buf raw = BUF_INIT;

	memset(s, 0, sizeof(*s));
	begin_capture(&raw, s);
	run.compiling = 1;
	s->style = xsltParseStylesheetFile(BAD_CAST path);
	end_capture();
	if (!s->style || s->style->errors) {
		buf_addf(err, "cannot compile '%s': ", path);
		if (raw.len)
			xsltlog_one_line(&raw, err);
		else
			buf_addstr(err, access(path, R_OK) ? strerror(errno) : "not a stylesheet");
		if (s->style)
			xsltFreeStylesheet(s->style);
		s->style = NULL;
		sandbox_dirs_release(&s->dirs);
		free(s);
		buf_release(&raw);
		return NULL;
	}
	if (raw.len) {
		struct buf line = BUF_INIT;
		xsltlog_one_line(&raw, &line);
		warnx_msg("'%s': %s", path, line.ptr);
		buf_release(&line);
	}
	if (engine->o.encoding) {
		xmlFree(s->style->encoding);
		s->style->encoding = xmlStrdup(BAD_CAST engine->o.encoding);
	}
	buf_release(&raw);
	return s;
}

static struct xslt_sheet *cache_find(struct xslt *x, const char *key, int named)
{
	for (size_t i = 0; i < x->ncache; i++) {
		struct xslt_sheet *s = x->cache[i];
		if (s->named == named && !strcmp(s->key, key)) {
			s->used = ++x->clock;
			return s;
		}
	}
	return NULL;
}

static void cache_add(struct xslt *x, struct xslt_sheet *s)
{
	if (x->ncache == XSLT_CACHE_MAX) {
		size_t old = XSLT_CACHE_MAX;
		for (size_t i = 0; i < x->ncache; i++)
			if (!x->cache[i]->pinned &&
			    (old == XSLT_CACHE_MAX || x->cache[i]->used < x->cache[old]->used))
				old = i;
		if (old == XSLT_CACHE_MAX)
			die(EX_SOFTWARE, "stylesheet cache full of pinned sheets");
		sheet_free(x->cache[old]);
		x->cache[old] = x->cache[--x->ncache];
	}
	s->used = ++x->clock;
	x->cache[x->ncache++] = s;
}

struct xslt_sheet *xslt_sheet_path(struct xslt *x, const char *path, struct buf *err)
{
	struct xslt_sheet *s = cache_find(x, path, 0);

	if (s)
		return s;
	s = compile(path, err);
	if (!s)
		return NULL;
	s->key = xstrdup(path);
	s->pinned = 1;
	cache_add(x, s);
	return s;
}

struct xslt_sheet *xslt_sheet_named(struct xslt *x, const char *name, struct buf *err)
{
	struct xslt_sheet *s = cache_find(x, name, 1);
	struct buf path = BUF_INIT;

	if (s)
		return s;
	if (!sandbox_plain_relative(name)) {
		buf_addf(err, "stylesheet name '%s' is not a plain relative path", name);
		return NULL;
	}
	for (size_t i = 0; i < x->read_dirs.n && !s; i++) {
		const char *dir = x->read_dirs.dir[i];

		buf_reset(&path);
		buf_addf(&path, "%s/%s", dir, name);
		if (access(path.ptr, F_OK) < 0)
			continue;
		/* A symlink must not lead out of the directory. */
		if (!sandbox_within(path.ptr, dir)) {
			buf_addf(err, "stylesheet '%s' leads out of '%s'", name, dir);
			buf_release(&path);
			return NULL;
		}
		s = compile(path.ptr, err);
		if (!s) {
			buf_release(&path);
			return NULL;
		}
	}
	buf_release(&path);
	if (!s) {
		buf_addf(err, "no stylesheet '%s' in the --allow-read directories", name);
		return NULL;
	}
	s->key = xstrdup(name);
	s->named = 1;
	cache_add(x, s);
	return s;
}

/*
 * For a stylesheet, CDATA sections are text, as xsltproc has them; the
 * pretty-printer keeps them, and drops blank text as xmllint does.
 */
static xmlDocPtr parse_input(struct xslt *x, const char *body, size_t len,
			     enum body_kind kind, int for_xslt, struct buf *err,
			     int *status)
{
	struct buf why = BUF_INIT, later = BUF_INIT;
	xmlParserCtxtPtr pctxt;
	xmlDocPtr doc = NULL;
	int opts;

	*status = -1;
	if (kind == BODY_TEXT) {
		buf_addstr(err, "body is neither XML nor JSON");
		return NULL;
	}
	if (kind == BODY_JSON) {
		doc = jsonxml_parse(body, len, &why);
		if (!doc)
			buf_addf(err, "body is not JSON: %s", why.ptr);
		buf_release(&why);
		return doc;
	}
	if (len > INT_MAX) {
		buf_addstr(err, "body larger than 2 GiB");
		return NULL;
	}
	pctxt = xmlNewParserCtxt();
	if (!pctxt) {
		buf_addstr(err, "out of memory parsing the body");
		*status = MSG_NO_MEMORY;
		return NULL;
	}
	opts = x->parse_options;
	if (!for_xslt)
		opts &= ~XML_PARSE_NOCDATA;
	if (!for_xslt && x->o.layout != XSLT_LAYOUT_KEEP)
		opts |= XML_PARSE_NOBLANKS;
	xmldoc_begin();
	doc = parse_xml(pctxt, body, len, NULL, opts, x->o.load_dtd, &why);
	/* A reason of parse_xml's own is the one to give. */
	if (xmldoc_end(why.len ? &later : &why) == MSG_NO_MEMORY) {
		buf_addstr(err, "out of memory parsing the body");
		*status = MSG_NO_MEMORY;
		xmlFreeDoc(doc);
		doc = NULL;
	} else if (why.len || !doc) {
		buf_addf(err, "body is not XML: %s", why.len ? why.ptr : "not well-formed");
		xmlFreeDoc(doc);
		doc = NULL;
	}
	xmlFreeParserCtxt(pctxt);
	buf_release(&why);
	buf_release(&later);
	return doc;
}

/* What a finished run came to: 0, or -1 with the reason in r->error. */
static int outcome(int state, xmlDocPtr res, const struct buf *raw,
		   struct xslt_result *r)
{
	if (raw->len) {
		xsltlog_one_line(raw, &r->error);
		return -1;
	}
	if (state == XSLT_STATE_STOPPED) {
		struct buf text = BUF_INIT;
		xsltlog_take_last(&r->messages, &text);
		buf_addstr(&r->error, "stylesheet terminated");
		if (text.len > 1) {
			buf_addstr(&r->error, ": ");
			xsltlog_one_line(&text, &r->error);
		}
		buf_release(&text);
		return -1;
	}
	if (state != XSLT_STATE_OK || !res) {
		buf_addstr(&r->error, "transformation failed");
		return -1;
	}
	return 0;
}

static int apply(struct xslt *x, struct xslt_sheet *s, xmlDocPtr doc,
		 const struct headers *h, struct xslt_result *r)
{
	xsltTransformContextPtr ctxt = xsltNewTransformContext(s->style, doc);
	struct buf raw = BUF_INIT;
	xmlDocPtr res;
	int state, rc;

	if (!ctxt) {
		buf_addstr(&r->error, "cannot create a transformation context");
		return -1;
	}
	xsltSetCtxtSecurityPrefs(x->sec, ctxt);
	begin_capture(&raw, s);
	xsltlog_watch(ctxt, &r->messages);
	xsltmsg_bind(h, &r->headers);
	res = xsltApplyStylesheetUser(s->style, doc, x->params, NULL, NULL, ctxt);
	state = ctxt->state;
	end_capture();
	xsltFreeTransformContext(ctxt);
	rc = outcome(state, res, &raw, r);
	if (rc == 0)
		rc = xsltout_result(&x->o, s->style, res, r);
	xmlFreeDoc(res);
	buf_release(&raw);
	return rc;
}

int xslt_translate(struct xslt *x, struct xslt_sheet *sheet,
		   const struct headers *h, const char *body, size_t len,
		   enum body_kind kind, struct xslt_result *r)
{
	xmlDocPtr doc;
	int rc;

	xsltout_reset(r);
	doc = parse_input(x, body, len, kind, sheet != NULL, &r->error, &rc);
	if (!doc)
		return rc;
	if (sheet)
		rc = apply(x, sheet, doc, h, r);
	else
		rc = xsltout_convert(&x->o, doc, kind, h, body, len, r);
	xmlFreeDoc(doc);
	return rc;
}
