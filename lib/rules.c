/* rules: the ordered routing table and its file format. */
#include "rules.h"

#include "channel.h"

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
	for (size_t i = 0; i < t->n; i++) {
		expr_free(t->v[i].expr);
		free(t->v[i].addr);
	}
	free(t->v);
	free(t->otherwise_addr);
	rule_table_init(t);
}

static int add_rule(struct rule_table *t, struct expr_env *env, const char *expr,
		    const char *channel, unsigned long line, struct buf *err)
{
	struct expr *e = expr_compile(env, expr, err);
	struct channel_addr a;

	if (!e)
		return -1;
	if (channel_parse(channel, &a, err) < 0) {
		expr_free(e);
		return -1;
	}
	if (t->n == t->alloc) {
		t->alloc = t->alloc ? 2 * t->alloc : 8;
		t->v = xrealloc(t->v, t->alloc * sizeof(*t->v));
	}
	t->v[t->n] = (struct rule){ .expr = e, .addr = xstrdup(channel), .line = line };
	t->n++;
	return 0;
}

int rule_table_add(struct rule_table *t, struct expr_env *env,
		   const char *expr, const char *channel, struct buf *err)
{
	return add_rule(t, env, expr, channel, 0, err);
}

/* One channel of the table, opened: its fanout index, or -1 with err. */
static long open_channel(const struct rule_table *t, struct fanout *f,
			 const char *addr, unsigned long line, struct buf *err)
{
	struct buf why = BUF_INIT;
	long ch = fanout_open(f, addr, &why);

	if (ch < 0) {
		if (line)
			buf_addf(err, "%s:%lu: ", t->file, line);
		buf_addstr(err, why.ptr);
	}
	buf_release(&why);
	return ch;
}

int rule_table_open(struct rule_table *t, struct fanout *f, struct buf *err)
{
	long ch;

	for (size_t i = 0; i < t->n; i++) {
		if ((ch = open_channel(t, f, t->v[i].addr, t->v[i].line, err)) < 0)
			return -1;
		t->v[i].channel = (size_t)ch;
	}
	if (t->otherwise_addr) {
		if ((ch = open_channel(t, f, t->otherwise_addr, t->otherwise_line, err)) < 0)
			return -1;
		t->otherwise = ch;
	}
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
static int load_line(struct rule_table *t, char *line, unsigned long lineno,
		     struct expr_env *env, struct buf *why)
{
	char *arrow = NULL, *expr, *channel;
	struct channel_addr a;

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
		if (t->otherwise_addr) {
			buf_addstr(why, "a second 'otherwise'");
			return -1;
		}
		if (channel_parse(channel, &a, why) < 0)
			return -1;
		t->otherwise_addr = xstrdup(channel);
		t->otherwise_line = lineno;
		return 0;
	}
	return add_rule(t, env, expr, channel, lineno, why);
}

int rule_table_load(struct rule_table *t, const char *path,
		    struct expr_env *env, struct buf *err, int *cause)
{
	FILE *fp = fopen(path, "r");
	char *line = NULL;
	size_t cap = 0;
	unsigned long lineno = 0;
	struct buf why = BUF_INIT;
	int r = 0;

	*cause = RULES_BAD_RULE;
	t->file = path;
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
		if (load_line(t, s, lineno, env, &why) < 0) {
			buf_addf(err, "%s:%lu: %s", path, lineno, why.ptr);
			r = -1;
		}
	}
	if (r == 0 && ferror(fp)) {
		buf_addf(err, "cannot read '%s': %s", path, strerror(errno));
		*cause = RULES_NO_FILE;
		r = -1;
	}
	if (r == 0 && t->n == 0 && !t->otherwise_addr) {
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
