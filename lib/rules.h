/*
 * rules: the routing table of msg-route: rules "EXPR -> CHANNEL" tried in
 * order and an optional "otherwise -> CHANNEL", from the command line or a
 * rules file (one rule a line, '#' comments). A table is built in two
 * steps: every rule is read and compiled first, and only a table found
 * whole opens its channels (rule_table_open), in the order the rules name
 * them. So a bad rule creates no file and opens no FIFO, and a bad rules
 * file read again on SIGHUP leaves the old table in force untouched.
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
	char *addr;		/* the channel named */
	unsigned long line;	/* in the rules file; 0: the command line */
	size_t channel;		/* index in the fanout, once open */
	uint64_t matched;
};

struct rule_table {
	struct rule *v;
	size_t n, alloc;
	const char *file;	/* the rules file, for messages; or NULL */
	char *otherwise_addr;	/* or NULL */
	unsigned long otherwise_line;
	long otherwise;		/* fanout index once open, or -1 */
	uint64_t otherwise_count;
};

void rule_table_init(struct rule_table *t);
void rule_table_release(struct rule_table *t);
/* Add "EXPR -> CHANNEL", compiled: 0, or -1 with the reason in err. */
int rule_table_add(struct rule_table *t, struct expr_env *env,
		   const char *expr, const char *channel, struct buf *err);
/* Read a rules file into t (empty on entry) and compile it: 0, or -1
 * with "FILE:LINE: reason" in err and *cause set: RULES_BAD_RULE or
 * RULES_NO_FILE (cannot be read). */
enum { RULES_BAD_RULE, RULES_NO_FILE, RULES_NO_CHANNEL };
int rule_table_load(struct rule_table *t, const char *path,
		    struct expr_env *env, struct buf *err, int *cause);
/* Open the channels of t in f, in rule order, the otherwise channel
 * last: 0, or -1 with "[FILE:LINE: ]reason" in err (RULES_NO_CHANNEL). */
int rule_table_open(struct rule_table *t, struct fanout *f, struct buf *err);
/* Does any rule's expression read the body? */
int rule_table_needs_body(const struct rule_table *t);

#endif
