/* rules: the ordered routing table and its file format. */
#include "rules.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void rule_table_init(struct rule_table *t)
{
	memset(t, 0, sizeof(*t));
	t->otherwise = -1;
}

void rule_table_release(struct rule_table *t)
{
	for (size_t i = 0; i < t->n; i++)
		expr_free(t->v[i].expr);
	free(t->v);
	rule_table_init(t);
}

int rule_table_add(struct rule_table *t, struct expr_env *env,
		   struct fanout *f, const char *expr, const char *channel,
		   struct buf *err)
{
	struct expr *e = expr_compile(env, expr, err);
	long ch;

	if (!e)
		return -1;
	ch = fanout_open(f, channel, err);
	if (ch < 0) {
		expr_free(e);
		return -1;
	}
	if (t->n == t->alloc) {
		t->alloc = t->alloc ? 2 * t->alloc : 8;
		t->v = xrealloc(t->v, t->alloc * sizeof(*t->v));
	}
	t->v[t->n].expr = e;
	t->v[t->n].channel = (size_t)ch;
	t->v[t->n].matched = 0;
	t->n++;
	return 0;
}

static char *trim(char *s)
{
	char *end;

	while (*s == ' ' || *s == '\t')
		s++;
	end = s + strlen(s);
	while (end > s && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\n' ||
			   end[-1] == '\r'))
		*--end = '\0';
	return s;
}

/* One line of a rules file; the arrow is the last "->" on the line. */
static int load_line(struct rule_table *t, char *line, struct expr_env *env,
		     struct fanout *f, struct buf *why)
{
	char *arrow = NULL, *expr, *channel;

	for (char *p = strstr(line, "->"); p; p = strstr(p + 1, "->"))
		arrow = p;
	if (!arrow) {
		buf_addstr(why, "missing '->' between expression and channel");
		return -1;
	}
	*arrow = '\0';
	expr = trim(line);
	channel = trim(arrow + 2);
	if (!*expr || !*channel) {
		buf_addstr(why, *expr ? "missing channel after '->'" :
					"missing expression before '->'");
		return -1;
	}
	if (!strcmp(expr, "otherwise")) {
		long ch;
		if (t->otherwise >= 0) {
			buf_addstr(why, "a second 'otherwise'");
			return -1;
		}
		ch = fanout_open(f, channel, why);
		if (ch < 0)
			return -1;
		t->otherwise = ch;
		return 0;
	}
	return rule_table_add(t, env, f, expr, channel, why);
}

int rule_table_load(struct rule_table *t, const char *path,
		    struct expr_env *env, struct fanout *f, struct buf *err,
		    int *cause)
{
	FILE *fp = fopen(path, "r");
	char *line = NULL;
	size_t cap = 0;
	unsigned long lineno = 0;
	struct buf why = BUF_INIT;
	int r = 0;

	*cause = RULES_BAD_RULE;
	if (!fp) {
		buf_addf(err, "cannot open '%s': %s", path, strerror(errno));
		*cause = RULES_NO_FILE;
		return -1;
	}
	while (r == 0 && getline(&line, &cap, fp) >= 0) {
		char *s = trim(line);
		lineno++;
		if (!*s || *s == '#')
			continue;
		buf_reset(&why);
		if (load_line(t, s, env, f, &why) < 0) {
			buf_addf(err, "%s:%lu: %s", path, lineno, why.ptr);
			/* fanout_open's reasons start so; a rule's never do. */
			if (!strncmp(why.ptr, "cannot open", 11) ||
			    !strncmp(why.ptr, "cannot use", 10))
				*cause = RULES_NO_CHANNEL;
			r = -1;
		}
	}
	if (r == 0 && ferror(fp)) {
		buf_addf(err, "cannot read '%s': %s", path, strerror(errno));
		*cause = RULES_NO_FILE;
		r = -1;
	}
	if (r == 0 && t->n == 0 && t->otherwise < 0) {
		buf_addf(err, "%s: no rules", path);
		r = -1;
	}
	free(line);
	fclose(fp);
	buf_release(&why);
	return r;
}

int rule_table_needs_body(const struct rule_table *t)
{
	for (size_t i = 0; i < t->n; i++)
		if (expr_needs(t->v[i].expr) & EXPR_NEEDS_BODY)
			return 1;
	return 0;
}
