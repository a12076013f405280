/*
 * aggregate-eval: what msg-aggregate's expressions and stylesheet say:
 * each message's correlation key, --close-on and -b; --until on the
 * aggregate built so far; -x on a released one. Compiled once, evaluated
 * per message in one expr_env.
 */
#ifndef MSG_AGGREGATE_EVAL_H
#define MSG_AGGREGATE_EVAL_H

#include <stddef.h>

#include "aggregate.h"
#include "buf.h"
#include "header.h"

struct agg_eval_opt {
	const char *correlate;	/* never NULL */
	const char *until, *close_on, *best;	/* NULL: not given */
	const char *xslt;	/* a stylesheet's path, or NULL */
	/* -p and -s: "p" or "s", then NAME=VALUE, in pairs */
	char *const *params;
	size_t nparams;
	char *const *ns;	/* --ns PREFIX=URI */
	size_t nns;
};

struct agg_eval;

/* NULL with err (an expression or stylesheet that does not compile;
 * errno ENOENT when the stylesheet does not exist). */
struct agg_eval *agg_eval_new(const struct agg_eval_opt *opt, struct buf *err);
void agg_eval_free(struct agg_eval *e);

int agg_eval_has_until(const struct agg_eval *e);
int agg_eval_has_condense(const struct agg_eval *e);

/*
 * A message read: its key into key (not empty), whether it closes its
 * group into *closing, and into in its kind and -b number (NaN without
 * -b, or for a closing message that is no member). 0, or -1 (the message
 * is invalid) or MSG_NO_MEMORY with why.
 */
int agg_eval_message(struct agg_eval *e, const struct headers *h,
		     const char *body, size_t len, int include_close,
		     struct buf *key, int *closing, struct agg_input *in,
		     struct buf *why);
/* A member restored from the store: its kind and -b number again. */
void agg_eval_classify(struct agg_eval *e, struct agg_input *in);
/* What --until reads besides headers (expr_needs), 0 without it. */
unsigned agg_eval_until_needs(const struct agg_eval *e);
/* --until on the aggregate so far, whose document is doc when not NULL
 * (the caller's; else parsed from body if the expression reads paths):
 * 1 met, 0 not (or it cannot say). */
int agg_eval_until(struct agg_eval *e, const struct headers *h,
		   const struct buf *body, struct _xmlDoc *doc);
/* -x on a released aggregate, in place: 0, or -1 with why. */
int agg_eval_condense(struct agg_eval *e, struct headers *h, struct buf *body,
		      struct buf *why);

#endif
