/*
 * rules: the routing table of msg-route: rules "EXPR -> CHANNEL" tried in
 * order and an optional "otherwise -> CHANNEL", from the command line or a
 * rules file (one rule a line, '#' comments). Channels are opened in the
 * fanout as rules name them. A table is built whole or not at all, so a
 * bad rules file read again on SIGHUP leaves the old table in force.
 */
#ifndef MSG_RULES_H
#define MSG_RULES_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "expr.h"
#include "fanout.h"

struct rule {
	struct expr *expr;
	size_t channel;		/* index in the fanout */
	uint64_t matched;
};

struct rule_table {
	struct rule *v;
	size_t n, alloc;
	long otherwise;		/* fanout index, or -1 */
	uint64_t otherwise_count;
};

void rule_table_init(struct rule_table *t);
void rule_table_release(struct rule_table *t);
/* Add "EXPR -> CHANNEL": 0, or -1 with the reason in err. */
int rule_table_add(struct rule_table *t, struct expr_env *env,
		   struct fanout *f, const char *expr, const char *channel,
		   struct buf *err);
/* Read a rules file into t (empty on entry): 0, or -1 with
 * "FILE:LINE: reason" in err and *cause set: RULES_BAD_RULE,
 * RULES_NO_FILE (cannot be read) or RULES_NO_CHANNEL (cannot be opened). */
enum { RULES_BAD_RULE, RULES_NO_FILE, RULES_NO_CHANNEL };
int rule_table_load(struct rule_table *t, const char *path,
		    struct expr_env *env, struct fanout *f, struct buf *err,
		    int *cause);
/* Does any rule's expression read the body? */
int rule_table_needs_body(const struct rule_table *t);

#endif
