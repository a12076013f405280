/*
 * router: what msg-route decides, apart from reading and writing the
 * messages. One of four ways sends each message to channels of a fanout:
 *
 *   ROUTER_RULES      rules tried in order (-w/-t pairs or a rules file):
 *                     the first that matches, or with all every one;
 *                     none: the otherwise channel
 *   ROUTER_FILTER     one expression: true keeps the message on the main
 *                     output (fanout index 0), false drops it
 *   ROUTER_PARTITION  the string value of an expression, hashed (FNV-1a)
 *                     onto the channels, so a key goes to the same one on
 *                     every run and host
 *   ROUTER_HEADER     the channels a header lists, each one allowed
 *
 * A router is built in steps, so that a mistake is found before anything
 * is created: router_check (the options make sense), router_compile
 * (every expression and address; opens nothing), router_open (the
 * channels, in the order they are named).
 */
#ifndef MSG_ROUTER_H
#define MSG_ROUTER_H

#include <stddef.h>

#include "buf.h"
#include "expr.h"
#include "fanout.h"
#include "header.h"
#include "rules.h"

enum router_mode { ROUTER_RULES, ROUTER_FILTER, ROUTER_PARTITION, ROUTER_HEADER };

/* As given on the command line. */
struct router_options {
	enum router_mode mode;	/* set by router_check */
	int all;
	const char **when, **to;
	size_t nwhen, nto;
	const char *otherwise, *filter, *rules_file, *partition, *to_header;
	const char **allow;
	size_t nallow;
};

struct router {
	const struct router_options *o;
	struct expr_env *env;
	struct rule_table table;	/* its otherwise: -o, or the file's */
	struct expr *single;		/* the filter or the partition key */
};

/* What router_decide found. */
enum { ROUTE_MATCHED, ROUTE_UNMATCHED, ROUTE_DROPPED };

/* Which way the options ask for (o->mode): 0, or -1 with the usage
 * error in err. */
int router_check(struct router_options *o, struct buf *err);
/* Compile every expression and rule: 0, or -1 with the reason in err and
 * *cause RULES_BAD_RULE (a usage error) or RULES_NO_FILE. */
int router_compile(struct router *r, const struct router_options *o,
		   struct expr_env *env, struct buf *err, int *cause);
/* Open the channels of the rules, -p or --allow, then -o: 0, or -1 with
 * the reason in err. */
int router_open(struct router *r, struct fanout *f, struct buf *err);
/* Read the rules file again: 0 with the new rules in force, or -1 with
 * the reason in err and the old ones kept. A bad file opens nothing. */
int router_reload(struct router *r, struct fanout *f, struct buf *err);
/* Does deciding read the body? */
int router_needs_body(const struct router *r);
/* The channels for the message bound to r->env (headers h) into dest:
 * ROUTE_*, or with the reason in err -1 (the message is invalid) or
 * MSG_NO_MEMORY. */
int router_decide(struct router *r, const struct fanout *f,
		  const struct headers *h, struct fanout_set *dest, struct buf *err);
void router_release(struct router *r);

#endif
