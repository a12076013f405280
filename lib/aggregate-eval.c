/*
 * aggregate-eval: msg-aggregate's expressions and stylesheet, compiled
 * once and evaluated per message (aggregate-eval.h).
 */
#include "aggregate-eval.h"

#include <math.h>
#include <stdlib.h>

#include "expr.h"
#include "xslt.h"

struct agg_eval {
	struct expr_env *env;
	struct expr *correlate, *until, *close_on, *best;
	struct xslt *engine;
	struct xslt_sheet *sheet;
};

/* NULL text: NULL in *out, and 0. */
static int compile(struct agg_eval *e, const char *text, struct expr **out,
		   struct buf *err)
{
	*out = NULL;
	if (!text)
		return 0;
	*out = expr_compile(e->env, text, err);
	return *out ? 0 : -1;
}

static int load_sheet(struct agg_eval *e, const struct agg_eval_opt *opt,
		      struct buf *err)
{
	struct xslt_options o = { 0 };

	if (!opt->xslt)
		return 0;
	if (!(e->engine = xslt_new(&o, err)))
		return -1;
	for (size_t i = 0; i + 1 < opt->nparams; i += 2)
		if (xslt_param(e->engine, opt->params[i + 1],
			       opt->params[i][0] == 's', err) < 0)
			return -1;
	e->sheet = xslt_sheet_path(e->engine, opt->xslt, err);
	return e->sheet ? 0 : -1;
}

struct agg_eval *agg_eval_new(const struct agg_eval_opt *opt, struct buf *err)
{
	struct agg_eval *e = xcalloc(1, sizeof(*e));

	if (!(e->env = expr_env_new(opt->ns, opt->nns, err)) ||
	    compile(e, opt->correlate, &e->correlate, err) < 0 ||
	    compile(e, opt->until, &e->until, err) < 0 ||
	    compile(e, opt->close_on, &e->close_on, err) < 0 ||
	    compile(e, opt->best, &e->best, err) < 0 ||
	    load_sheet(e, opt, err) < 0) {
		agg_eval_free(e);
		return NULL;
	}
	return e;
}

void agg_eval_free(struct agg_eval *e)
{
	if (!e)
		return;
	expr_free(e->correlate);
	expr_free(e->until);
	expr_free(e->close_on);
	expr_free(e->best);
	expr_env_free(e->env);
	if (e->engine)
		xslt_free(e->engine);
	free(e);
}

int agg_eval_has_until(const struct agg_eval *e)
{
	return e->until != NULL;
}

int agg_eval_has_condense(const struct agg_eval *e)
{
	return e->sheet != NULL;
}

/* The -b number of the bound message: 0, or -1 with why. */
static int best_of(struct agg_eval *e, double *out, struct buf *why)
{
	struct buf s = BUF_INIT;
	char *end;
	int r = expr_eval_string(e->best, e->env, &s, why);

	if (r == 0) {
		*out = strtod(s.ptr, &end);
		if (!s.len || *end || isnan(*out)) {
			buf_addf(why, "-b gives '%s', not a number", s.ptr);
			r = -1;
		}
	}
	buf_release(&s);
	return r;
}

int agg_eval_message(struct agg_eval *e, const struct headers *h,
		     const char *body, size_t len, int include_close,
		     struct buf *key, int *closing, struct agg_input *in,
		     struct buf *why)
{
	int r;

	*closing = 0;
	in->best = NAN;
	expr_env_bind(e->env, h, body, len);
	in->kind = expr_env_kind(e->env);
	if ((r = expr_eval_string(e->correlate, e->env, key, why)) == 0 && !key->len) {
		buf_addstr(why, "empty correlation key");
		r = -1;
	}
	if (r == 0 && e->close_on)
		r = expr_eval_bool(e->close_on, e->env, closing, why);
	if (r == 0 && e->best && (!*closing || include_close))
		r = best_of(e, &in->best, why);
	return r;
}

void agg_eval_classify(struct agg_eval *e, struct agg_input *in)
{
	struct buf why = BUF_INIT;

	expr_env_bind(e->env, in->h, in->body, in->len);
	in->kind = expr_env_kind(e->env);
	in->best = NAN;
	/* It gave a number when it came; a store that says otherwise was
	 * read back wrong, and the member simply has no -b number. */
	if (e->best && best_of(e, &in->best, &why) < 0)
		in->best = NAN;
	buf_release(&why);
}

unsigned agg_eval_until_needs(const struct agg_eval *e)
{
	return e->until ? expr_needs(e->until) : 0;
}

int agg_eval_until(struct agg_eval *e, const struct headers *h,
		   const struct buf *body, struct _xmlDoc *doc)
{
	struct buf err = BUF_INIT;
	int met = 0;

	expr_env_bind_doc(e->env, h, body->ptr, body->len, doc);
	if (expr_eval_bool(e->until, e->env, &met, &err) < 0)
		met = 0;
	/* The document is the caller's: no binding outlives the call. */
	expr_env_bind(e->env, NULL, NULL, 0);
	buf_release(&err);
	return met;
}

int agg_eval_condense(struct agg_eval *e, struct headers *h, struct buf *body,
		      struct buf *why)
{
	struct xslt_result res;
	int r;

	expr_env_bind(e->env, h, body->ptr, body->len);
	xslt_result_init(&res);
	r = xslt_translate(e->engine, e->sheet, h, body->ptr, body->len,
			   expr_env_kind(e->env), &res);
	if (r == 0) {
		buf_reset(body);
		buf_add(body, res.body.ptr, res.body.len);
		if (res.type.len)
			headers_set(h, "Content-Type", res.type.ptr);
		for (size_t i = 0; i < headers_count(&res.headers); i++)
			headers_set(h, headers_name(&res.headers, i, NULL),
				    headers_value(&res.headers, i, NULL));
	} else {
		buf_addstr(why, res.error.ptr);
	}
	xslt_result_release(&res);
	return r < 0 ? -1 : 0;
}
