/*
 * exec-args: the argv and environment a job's command runs with
 * (exec.h): {Name} in an argument replaced by the header's first value,
 * as part of that one argument (no shell, no splitting), and every
 * header as MSG_NAME beside the inherited environment.
 */
#include "exec-args.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern char **environ;

/* What one argv or environment string may hold on Linux, NUL included
 * (MAX_ARG_STRLEN). */
#define EXEC_STRING_MAX (128 * 1024)

static char **strings_new(size_t n)
{
	return xcalloc(n + 1, sizeof(char *));
}

/* One ARG with its {Name}s replaced: 0, or -1 with why. */
static int substitute(const char *arg, const struct headers *h, struct buf *out,
		      struct buf *why)
{
	buf_reset(out);
	for (const char *p = arg; *p; ) {
		const char *close, *v;
		if ((p[0] == '{' && p[1] == '{') || (p[0] == '}' && p[1] == '}')) {
			buf_addch(out, *p);
			p += 2;
			continue;
		}
		if (*p != '{' || !(close = strchr(p + 1, '}'))) {
			buf_addch(out, *p++);
			continue;
		}
		struct buf name = BUF_INIT;
		buf_add(&name, p + 1, (size_t)(close - p - 1));
		v = headers_get(h, name.ptr);
		if (!v)
			buf_addf(why, "no header '%s' for {%s}", name.ptr, name.ptr);
		buf_release(&name);
		if (!v)
			return -1;
		buf_addstr(out, v);
		p = close + 1;
	}
	if (out->len >= EXEC_STRING_MAX) {
		buf_addf(why, "argument '%.40s...' is too long for a command line", arg);
		return -1;
	}
	return 0;
}

int exec_argv(char *const *args, int n, const struct headers *h, char ***out,
	      struct buf *why)
{
	struct buf a = BUF_INIT;
	char **v = strings_new((size_t)n);

	for (int i = 0; i < n; i++) {
		if (substitute(args[i], h, &a, why) < 0) {
			exec_strings_free(v);
			buf_release(&a);
			return -1;
		}
		v[i] = xstrdup(a.ptr);
	}
	buf_release(&a);
	*out = v;
	return 0;
}

/* "MSG_" and name upper-cased, every other character as '_'. */
static void env_name(struct buf *out, const char *name, size_t n)
{
	buf_reset(out);
	buf_addstr(out, "MSG_");
	for (size_t i = 0; i < n; i++) {
		char c = name[i];
		if (c >= 'a' && c <= 'z')
			c = (char)(c - 'a' + 'A');
		else if (!((c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')))
			c = '_';
		buf_addch(out, c);
	}
}

/* Is the inherited "NAME=..." one of the names set in v[0..n)? */
static int shadowed(const char *entry, char **v, size_t n)
{
	size_t len = strcspn(entry, "=");

	if (strncmp(entry, "MSG_", 4))
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!strncmp(v[i], entry, len) && v[i][len] == '=')
			return 1;
	return 0;
}

/* Has an earlier header (a repeated one) set this name already? */
static int set_before(char **v, size_t n, const struct buf *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strncmp(v[i], name->ptr, name->len) && v[i][name->len] == '=')
			return 1;
	return 0;
}

int exec_envp(const struct headers *h, char ***out, struct buf *why)
{
	size_t nh = headers_count(h), ne = 0, k = 0;
	struct buf name = BUF_INIT, e = BUF_INIT;
	char **v;

	while (environ[ne])
		ne++;
	v = strings_new(nh + ne);
	for (size_t i = 0; i < nh; i++) {
		size_t nn, vn;
		const char *hn = headers_name(h, i, &nn);
		const char *hv = headers_value(h, i, &vn);
		env_name(&name, hn, nn);
		if (set_before(v, k, &name))
			continue;	/* the first value of a repeated header */
		if (name.len + 1 + vn >= EXEC_STRING_MAX) {
			buf_addf(why, "header '%.*s' is too long for the environment",
				 (int)nn, hn);
			exec_strings_free(v);
			buf_release(&name);
			return -1;
		}
		buf_reset(&e);
		buf_add(&e, name.ptr, name.len);
		buf_addch(&e, '=');
		buf_add(&e, hv, vn);
		v[k++] = xstrdup(e.ptr);
	}
	for (size_t i = 0, mine = k; i < ne; i++)
		if (!shadowed(environ[i], v, mine))
			v[k++] = xstrdup(environ[i]);
	buf_release(&name);
	buf_release(&e);
	*out = v;
	return 0;
}

void exec_strings_free(char **v)
{
	for (size_t i = 0; v && v[i]; i++)
		free(v[i]);
	free(v);
}

/* COMMAND as execve(2) will find it: named with a slash, or in $PATH. */
char *exec_resolve(const char *name)
{
	const char *path = getenv("PATH");
	struct buf p = BUF_INIT;

	if (strchr(name, '/'))
		return access(name, X_OK) == 0 ? xstrdup(name) : NULL;
	if (!path)
		path = "/usr/bin:/bin";
	for (const char *d = path; ; d += strcspn(d, ":") + 1) {
		size_t n = strcspn(d, ":");
		buf_reset(&p);
		buf_add(&p, n ? d : ".", n ? n : 1);
		buf_addf(&p, "/%s", name);
		if (access(p.ptr, X_OK) == 0)
			return buf_detach(&p, NULL);
		if (!d[n])
			break;
	}
	buf_release(&p);
	errno = ENOENT;
	return NULL;
}

int exec_check_names(char *const *args, int n, struct buf *why)
{
	for (int i = 0; i < n; i++)
		for (const char *p = args[i]; *p; p++) {
			const char *close;
			if ((p[0] == '{' && p[1] == '{') || (p[0] == '}' && p[1] == '}')) {
				p++;
				continue;
			}
			if (*p != '{' || !(close = strchr(p + 1, '}')))
				continue;
			if (!header_name_valid(p + 1, (size_t)(close - p - 1))) {
				buf_addf(why, "'%.*s' in '%s' names no header "
					 "(write {{ and }} for braces)",
					 (int)(close - p + 1), p, args[i]);
				return -1;
			}
			p = close;
		}
	return 0;
}
