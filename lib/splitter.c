/* splitter: one parent message into a sequence of children: the
 * configuration, and what happens to each parent whatever cuts it. */
#include "splitter-parts.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "diag.h"
#include "io.h"
#include "jsonscan.h"
#include "message.h"
#include "sizes.h"

/* Plain paths (/a/b, //b, /p:a/b) can be matched while the body streams. */
static int streamable_path(const char *x)
{
	size_t n = strlen(x);

	/* At least one name step, and no step left empty at the end. */
	if (x[0] != '/' || n < 2 || x[n - 1] == '/')
		return 0;
	for (const char *p = x; *p; p++)
		if (strchr("[]()@|.=$'\" \t", *p))
			return 0;
	return !strstr(x, "::");
}

struct splitter *splitter_new(const struct splitter_config *cfg, struct buf *err)
{
	struct splitter *s = xmalloc(sizeof(*s));

	memset(s, 0, sizeof(*s));
	s->cfg = *cfg;
	if (s->cfg.group == 0)
		s->cfg.group = 1;
	s->env = expr_env_new(cfg->ns, cfg->nns, err);
	if (!s->env)
		goto fail;
	s->hexpr = xmalloc((cfg->nheaders + 1) * sizeof(*s->hexpr));
	for (size_t i = 0; i < cfg->nheaders; i++) {
		s->hexpr[i] = expr_compile(s->env, cfg->headers[i].expr, err);
		if (!s->hexpr[i])
			goto fail;
	}
	if (cfg->mode == SPLIT_XPATH) {
		s->xpath = expr_compile(s->env, cfg->xpath, err);
		if (!s->xpath)
			goto fail;
		if (!expr_selects_nodes(s->xpath, s->env)) {
			buf_addf(err, "expression '%s' does not select nodes", cfg->xpath);
			goto fail;
		}
		s->stream_xml = !cfg->no_stream && streamable_path(cfg->xpath);
	}
	if (cfg->mode == SPLIT_JSON) {
		struct jsonscan probe;
		if (jsonscan_init(&probe, cfg->pointer) < 0) {
			buf_addf(err, "invalid JSON pointer '%s' (it must be empty or start with '/')",
				 cfg->pointer);
			jsonscan_release(&probe);
			goto fail;
		}
		jsonscan_release(&probe);
	}
	if (cfg->mode == SPLIT_REGEX) {
		int rc = regcomp(&s->re, cfg->regex, REG_EXTENDED);
		regmatch_t m;
		if (rc) {
			char msg[256];
			regerror(rc, &s->re, msg, sizeof(msg));
			buf_addf(err, "invalid regular expression '%s': %s", cfg->regex, msg);
			goto fail;
		}
		s->have_re = 1;
		if (regexec(&s->re, "", 1, &m, 0) == 0) {
			buf_addf(err, "delimiter '%s' matches the empty string", cfg->regex);
			goto fail;
		}
	}
	return s;
fail:
	splitter_free(s);
	return NULL;
}

void splitter_free(struct splitter *s)
{
	if (!s)
		return;
	expr_free(s->xpath);
	for (size_t i = 0; s->hexpr && i < s->cfg.nheaders && s->hexpr[i]; i++)
		expr_free(s->hexpr[i]);
	free(s->hexpr);
	expr_env_free(s->env);
	if (s->have_re)
		regfree(&s->re);
	free(s);
}

uint64_t splitter_empty_count(const struct splitter *s)
{
	return s->empty;
}

int splitter_streams(const struct splitter *s)
{
	return s->cfg.mode == SPLIT_JSON || s->cfg.mode == SPLIT_LINES ||
	       (s->cfg.mode == SPLIT_XPATH && s->stream_xml);
}

/* ---- one parent ---- */

/* The first piece of a body, read ahead and then handed out again. */
struct replay {
	struct body_source *inner;
	const char *p;
	size_t n;
	int pending;
};

static int replay_next(void *arg, const char **p, size_t *n)
{
	struct replay *r = arg;

	if (r->pending) {
		r->pending = 0;
		*p = r->p;
		*n = r->n;
		return 1;
	}
	return r->inner->next(r->inner->arg, p, n);
}

/*
 * A plain path streams XML; a parent that is something else (JSON,
 * through the mapping, or text) needs the document built. The type says
 * which; without one, the first bytes do, as for any expression.
 */
static int streams_for(const struct splitter *s, const struct headers *parent,
		       struct replay *peek, int *source_failed)
{
	const char *type = headers_get(parent, "Content-Type");
	int r;

	if (s->cfg.mode != SPLIT_XPATH || !s->stream_xml)
		return splitter_streams(s);
	r = peek->inner->next(peek->inner->arg, &peek->p, &peek->n);
	if (r < 0) {
		*source_failed = 1;
		return 1;
	}
	peek->pending = r > 0;
	/* libxml2's reader cannot read UTF-32; its tree parser can. */
	if (message_xml_encoding(peek->p, peek->n))
		return 0;
	if (type && *type)
		return strcasestr(type, "xml") ||
		       !(strcasestr(type, "json") || !strncasecmp(type, "text/", 5));
	return message_body_start(peek->p, peek->n) == STARTS_XML;
}

/* While a parent streams, a copy of its body goes to a temporary file, so
 * that an invalid parent can still be diverted whole. */
struct tee {
	struct body_source *inner;
	int fd;
	uint64_t bytes;
	int write_errno;
};

static int tee_next(void *arg, const char **p, size_t *n)
{
	struct tee *t = arg;
	int r = t->inner->next(t->inner->arg, p, n);

	if (r > 0 && t->fd >= 0 && !t->write_errno) {
		if (write_all(t->fd, *p, *n) < 0)
			t->write_errno = errno;
		t->bytes += *n;
	}
	return r;
}

static int load_body(struct body_source *src, struct buf *out)
{
	const char *p;
	size_t n;
	int r;

	buf_reset(out);
	if (src->length < (uint64_t)1 << 40)
		buf_grow(out, (size_t)src->length);
	while ((r = src->next(src->arg, &p, &n)) > 0)
		buf_add(out, p, n);
	return r;
}

/* divert()'s failure of the temporary copy, told apart from the
 * writer's (-1): the parent is not at fault, and no output is. */
#define DIVERT_READ_BACK_FAILED (-2)

static int divert(struct frame_writer *invalid, struct headers *parent,
		  const char *body, size_t len, struct tee *t, const char *reason)
{
	struct buf e = BUF_INIT;
	uint64_t body_len = body ? len : t ? t->bytes : 0;
	char *chunk;
	int r = 0;

	buf_addf(&e, "%s: %s", progname, reason);
	frame_set_error(parent, body_len, e.ptr);
	buf_release(&e);
	if (body || !t)
		return frame_writer_write(invalid, parent, body ? body : "", body ? len : 0);
	if (frame_writer_begin(invalid, parent, t->bytes) < 0)
		return -1;
	chunk = xmalloc(IO_CHUNK);
	for (uint64_t at = 0; at < t->bytes && r == 0;) {
		ssize_t got = pread(t->fd, chunk, IO_CHUNK, (off_t)at);
		if (got <= 0) {
			if (got == 0)
				errno = EIO;	/* the copy is shorter than written */
			free(chunk);
			return DIVERT_READ_BACK_FAILED;
		}
		r = frame_writer_body(invalid, chunk, (size_t)got);
		at += (uint64_t)got;
	}
	free(chunk);
	return r < 0 ? -1 : frame_writer_end(invalid);
}

/* What err says when the temporary copy failed: that step alone, errno
 * kept, in place of why the parent could not be split. */
static void temp_failed(struct buf *err, const char *step)
{
	int saved = errno;

	buf_reset(err);
	buf_addstr(err, step);
	errno = saved;
}

static int run_mode(struct splitter *s, struct sink *k, const char *body,
		    size_t len, struct body_source *src, struct buf *err,
		    int *source_failed)
{
	switch (s->cfg.mode) {
	case SPLIT_REGEX:
		return split_regex(s, k, body, len, err);
	case SPLIT_XPATH:
		if (body)
			return split_dom(s, k, body, len, err);
		/* streams_for() chose the reader */
		return split_xml_stream(s, k, src, err, source_failed);
	case SPLIT_JSON:
		return split_json(s, k, src, err, source_failed);
	case SPLIT_LINES:
		return split_lines(k, src, err, source_failed);
	}
	return -1;
}

enum split_result splitter_run(struct splitter *s, struct headers *parent,
			       struct body_source *src, struct frame_writer *out,
			       struct frame_writer *invalid, uint64_t *written,
			       struct buf *err)
{
	struct buf whole = BUF_INIT;
	struct replay peek = { src, NULL, 0, 0 };
	struct body_source replayed = { replay_next, &peek, src->length };
	struct tee t = { &replayed, -1, 0, 0 };
	struct body_source teed = { tee_next, &t, src->length };
	struct sink k;
	enum split_result res = SPLIT_OK;
	int source_failed = 0, rc, streaming, saved_errno;
	const char *body = NULL;

	sink_init(&k, s, out, parent);
	streaming = streams_for(s, parent, &peek, &source_failed);
	src = &replayed;
	if (source_failed) {
		res = SPLIT_SOURCE_FAILED;
		goto out;
	}
	if (!streaming) {
		if (load_body(src, &whole) < 0) {
			res = SPLIT_SOURCE_FAILED;
			goto out;
		}
		body = whole.ptr;
	} else if (invalid) {
		/* Streaming: keep a copy, so an invalid parent goes out whole. */
		t.fd = tmpfile_open();
		if (t.fd < 0) {
			temp_failed(err, "cannot create a temporary file");
			res = SPLIT_TEMP_CREATE_FAILED;
			goto out;
		}
		src = &teed;
	}
	/* An empty body has nothing to split (an outer split's marker, say):
	 * that is the --empty case, not a malformed document. An empty raw
	 * file, though, is no document at all, and the split is where that
	 * is to be told, not some later step. */
	if (src->length == 0 && (body ? whole.len == 0 : 1)) {
		rc = src->next(src->arg, &(const char *){ NULL }, &(size_t){ 0 }) < 0 ? -1 : 0;
		source_failed = rc < 0;
		if (rc == 0 && s->cfg.raw_documents &&
		    (s->cfg.mode == SPLIT_XPATH || s->cfg.mode == SPLIT_JSON)) {
			buf_addf(err, "the file is empty: not %s document",
				 s->cfg.mode == SPLIT_JSON ? "a JSON" : "an XML or JSON");
			rc = -1;
		}
	} else
		rc = run_mode(s, &k, body, whole.len, src, err, &source_failed);
	if (rc == 0)
		rc = sink_finish(&k);
	if (rc == 0 && k.made == 0) {
		s->empty++;
		if (s->cfg.empty == EMPTY_MARKER)
			rc = sink_write_marker(&k);
		else if (s->cfg.empty == EMPTY_INVALID) {
			buf_addstr(err, "nothing to split: no items found");
			rc = -1;
		}
	}
	if (k.write_failed) {
		res = SPLIT_WRITE_FAILED;
	} else if (source_failed) {
		res = SPLIT_SOURCE_FAILED;
	} else if (rc == MSG_NO_MEMORY) {
		res = SPLIT_NO_MEMORY;
	} else if (rc < 0) {
		res = SPLIT_INVALID;
		if (k.too_big.len) {
			buf_reset(err);
			buf_add(err, k.too_big.ptr, k.too_big.len);
		}
		if (k.written)
			buf_addf(err, "; %llu children written before the error",
				 (unsigned long long)k.written);
		if (invalid) {
			const char *p;
			size_t n;
			int r = 0;
			/* The rest of the parent joins what the tee kept. */
			while (t.fd >= 0 && (r = src->next(src->arg, &p, &n)) > 0)
				;
			if (t.fd >= 0 && r < 0) {
				res = SPLIT_SOURCE_FAILED;
				goto out;
			}
			if (t.write_errno) {
				errno = t.write_errno;
				temp_failed(err, "cannot spool the invalid message");
				res = SPLIT_TEMP_IO_FAILED;
				goto out;
			}
			rc = divert(invalid, parent, body, whole.len,
				    t.fd >= 0 ? &t : NULL, err->ptr);
			if (rc == DIVERT_READ_BACK_FAILED) {
				temp_failed(err, "cannot read back the spooled message");
				res = SPLIT_TEMP_IO_FAILED;
			} else if (rc < 0) {
				res = SPLIT_INVALID_WRITE_FAILED;
			}
		}
	}
out:
	saved_errno = errno;	/* the caller tells why a step failed */
	*written = k.written;
	if (t.fd >= 0)
		close(t.fd);
	sink_release(&k);
	buf_release(&whole);
	errno = saved_errno;
	return res;
}
