/* router: msg-route's four ways of choosing channels. */
#include "router.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int router_check(struct router_options *o, struct buf *err)
{
	int ways = (o->nwhen || o->rules_file) + !!o->filter + !!o->partition +
		   !!o->to_header;

	if (ways != 1)
		buf_addstr(err, "give one of -w/-t rules, -R, -f, -p or --to-header");
	else if (o->nwhen && o->rules_file)
		buf_addstr(err, "-R cannot be combined with -w");
	else if (o->filter) {
		if (o->nto || o->otherwise || o->all)
			buf_addstr(err, "-f takes no -t, -o or -a");
		o->mode = ROUTER_FILTER;
	} else if (o->partition) {
		if (!o->nto || o->otherwise || o->all)
			buf_addstr(err, "-p needs -t channels and takes no -o or -a");
		o->mode = ROUTER_PARTITION;
	} else if (o->to_header) {
		if (!o->nallow || o->nto)
			buf_addstr(err, "--to-header needs --allow channels and takes no -t");
		o->mode = ROUTER_HEADER;
	} else {
		if (o->nwhen != o->nto && !o->rules_file)
			buf_addf(err, "each -w needs its -t (%zu -w, %zu -t)", o->nwhen, o->nto);
		else if (o->rules_file && o->nto)
			buf_addstr(err, "-R takes no -t");
		o->mode = ROUTER_RULES;
	}
	if (!err->len && o->nallow && o->mode != ROUTER_HEADER)
		buf_addstr(err, "--allow needs --to-header");
	return err->len ? -1 : 0;
}

int router_compile(struct router *r, const struct router_options *o,
		   struct expr_env *env, struct buf *err, int *cause)
{
	memset(r, 0, sizeof(*r));
	r->o = o;
	r->env = env;
	rule_table_init(&r->table);
	*cause = RULES_BAD_RULE;
	switch (o->mode) {
	case ROUTER_RULES:
		if (o->rules_file &&
		    rule_table_load(&r->table, o->rules_file, env, err, cause) < 0)
			return -1;
		for (size_t i = 0; i < o->nwhen; i++)
			if (rule_table_add(&r->table, env, o->when[i], o->to[i], err) < 0)
				return -1;
		return 0;
	case ROUTER_FILTER:
		r->single = expr_compile(env, o->filter, err);
		return r->single ? 0 : -1;
	case ROUTER_PARTITION:
		r->single = expr_compile(env, o->partition, err);
		return r->single ? 0 : -1;
	case ROUTER_HEADER:
		return 0;
	}
	return -1;
}

static int open_all(struct fanout *f, const char **addrs, size_t n, struct buf *err)
{
	for (size_t i = 0; i < n; i++)
		if (fanout_open(f, addrs[i], err) < 0)
			return -1;
	return 0;
}

int router_open(struct router *r, struct fanout *f, struct buf *err)
{
	const struct router_options *o = r->o;

	if ((o->mode == ROUTER_RULES && rule_table_open(&r->table, f, err) < 0) ||
	    (o->mode == ROUTER_PARTITION && open_all(f, o->to, o->nto, err) < 0) ||
	    (o->mode == ROUTER_HEADER && open_all(f, o->allow, o->nallow, err) < 0))
		return -1;
	/* -o on the command line wins over a rules file's otherwise. */
	if (o->otherwise) {
		long ch = fanout_open(f, o->otherwise, err);
		if (ch < 0)
			return -1;
		r->table.otherwise = ch;
	}
	return 0;
}

int router_reload(struct router *r, struct fanout *f, struct buf *err)
{
	struct rule_table fresh;
	int cause;

	rule_table_init(&fresh);
	/* Compiled whole first: a bad file opens none of its channels. */
	if (rule_table_load(&fresh, r->o->rules_file, r->env, err, &cause) < 0 ||
	    rule_table_open(&fresh, f, err) < 0) {
		rule_table_release(&fresh);
		return -1;
	}
	if (r->o->otherwise)
		fresh.otherwise = r->table.otherwise;
	rule_table_release(&r->table);
	r->table = fresh;
	return 0;
}

int router_needs_body(const struct router *r)
{
	if (r->o->mode == ROUTER_RULES)
		return rule_table_needs_body(&r->table);
	return r->single && (expr_needs(r->single) & EXPR_NEEDS_BODY);
}

/* FNV-1a: the same key goes to the same channel on every run and host. */
static uint64_t key_hash(const char *s, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (size_t i = 0; i < n; i++) {
		h ^= (unsigned char)s[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

static int by_partition(struct router *r, const struct fanout *f,
			struct fanout_set *dest, struct buf *err)
{
	struct buf key = BUF_INIT;
	const char *to;
	int rc = expr_eval_string(r->single, r->env, &key, err);

	if (rc < 0) {
		buf_release(&key);
		return rc;
	}
	to = r->o->to[key_hash(key.ptr, key.len) % r->o->nto];
	fanout_set_add(dest, (size_t)fanout_find(f, to));
	buf_release(&key);
	return ROUTE_MATCHED;
}

/* The recipients a header lists, separated by commas or blanks. */
static int by_header(struct router *r, const struct fanout *f,
		     const struct headers *h, struct fanout_set *dest, struct buf *err)
{
	const struct router_options *o = r->o;
	const char *list = headers_get(h, o->to_header);
	char *copy = xstrdup(list ? list : ""), *save = NULL;
	int found = ROUTE_UNMATCHED;

	for (char *tok = strtok_r(copy, ", \t", &save); tok; tok = strtok_r(NULL, ", \t", &save)) {
		long i = -1;
		for (size_t k = 0; k < o->nallow && i < 0; k++)
			if (!strcmp(o->allow[k], tok))
				i = fanout_find(f, tok);
		if (i < 0) {
			buf_addf(err, "recipient '%s' in %s is not allowed", tok, o->to_header);
			found = -1;
			break;
		}
		fanout_set_add(dest, (size_t)i);
		found = ROUTE_MATCHED;
	}
	free(copy);
	return found;
}

static int by_rules(struct router *r, struct fanout_set *dest, struct buf *err)
{
	int hit, found = ROUTE_UNMATCHED, rc;

	for (size_t i = 0; i < r->table.n; i++) {
		if ((rc = expr_eval_bool(r->table.v[i].expr, r->env, &hit, err)) < 0)
			return rc;
		if (!hit)
			continue;
		r->table.v[i].matched++;
		fanout_set_add(dest, r->table.v[i].channel);
		found = ROUTE_MATCHED;
		if (!r->o->all)
			break;
	}
	return found;
}

int router_decide(struct router *r, const struct fanout *f,
		  const struct headers *h, struct fanout_set *dest, struct buf *err)
{
	int hit, rc;

	switch (r->o->mode) {
	case ROUTER_FILTER:
		if ((rc = expr_eval_bool(r->single, r->env, &hit, err)) < 0)
			return rc;
		if (!hit)
			return ROUTE_DROPPED;
		fanout_set_add(dest, 0);
		return ROUTE_MATCHED;
	case ROUTER_PARTITION:
		return by_partition(r, f, dest, err);
	case ROUTER_HEADER:
		return by_header(r, f, h, dest, err);
	case ROUTER_RULES:
		return by_rules(r, dest, err);
	}
	return -1;
}

void router_release(struct router *r)
{
	rule_table_release(&r->table);
	expr_free(r->single);
	r->single = NULL;
}
