/*
 * tool-args: option arguments every tool reads the same way, each
 * refused with a usage error that names the option and what it takes,
 * and the options of the tools whose raw inputs may be inboxes.
 */
#include "tool.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"

uint64_t tool_arg_count(struct tool *t, const char *what, const char *arg)
{
	char *end;
	unsigned long long n;

	errno = 0;
	n = strtoull(arg, &end, 10);
	if (errno || end == arg || *end || n == 0 || *arg == '-' || *arg == '+' ||
	    *arg == ' ')
		tool_usage_error(t, "%s takes a positive number, not '%s'", what, arg);
	return n;
}

int64_t tool_arg_duration(struct tool *t, const char *what, const char *arg)
{
	int64_t ms;

	if (duration_parse(arg, &ms) < 0 || ms <= 0)
		tool_usage_error(t, "%s takes a duration such as 30s or 5m, not '%s'",
				 what, arg);
	return ms;
}

uint64_t tool_arg_size(struct tool *t, const char *what, const char *arg)
{
	uint64_t bytes;

	if (size_parse(arg, &bytes) < 0 || bytes == 0)
		tool_usage_error(t, "%s takes a size such as 64M, not '%s'", what, arg);
	return bytes;
}

int tool_arg_choice(struct tool *t, const char *what, const char *arg,
		    const char *const *words)
{
	struct buf choices = BUF_INIT;

	for (int i = 0; words[i]; i++)
		if (!strcmp(arg, words[i]))
			return i;
	/* "wall or event", "flush, fail or keep" */
	for (int i = 0; words[i]; i++)
		buf_addf(&choices, "%s%s", i == 0 ? "" : words[i + 1] ? ", " : " or ",
			 words[i]);
	tool_usage_error(t, "%s takes %s, not '%s'", what, choices.ptr, arg);
}

enum {
	LONG_INCLUDE = 0x1100,
	LONG_EXCLUDE,
	LONG_MAX_FILES,
	LONG_RECURSIVE,
	LONG_DONE_MARKER,
	LONG_SETTLE,
	LONG_DONE,
	LONG_FAILED,
	LONG_IDEMPOTENT,
	LONG_REMEMBER,
};

const struct option tool_inbox_options[] = {
	{ "include", required_argument, NULL, LONG_INCLUDE },
	{ "exclude", required_argument, NULL, LONG_EXCLUDE },
	{ "max-files", required_argument, NULL, LONG_MAX_FILES },
	{ "recursive", no_argument, NULL, LONG_RECURSIVE },
	{ "done-marker", required_argument, NULL, LONG_DONE_MARKER },
	{ "settle", required_argument, NULL, LONG_SETTLE },
	{ "done", required_argument, NULL, LONG_DONE },
	{ "failed", required_argument, NULL, LONG_FAILED },
	{ "idempotent", no_argument, NULL, LONG_IDEMPOTENT },
	{ "remember", required_argument, NULL, LONG_REMEMBER },
	{ NULL, 0, NULL, 0 },
};

static void add_glob(const char ***globs, size_t *n, const char *arg)
{
	*globs = xrealloc(*globs, (*n + 1) * sizeof(**globs));
	(*globs)[(*n)++] = arg;
}

int tool_inbox_option(struct tool *t, int opt, const char *arg)
{
	struct inbox_options *o = &t->inbox;

	switch (opt) {
	case LONG_INCLUDE:
		add_glob(&o->include, &o->ninclude, arg);
		return 1;
	case LONG_EXCLUDE:
		add_glob(&o->exclude, &o->nexclude, arg);
		return 1;
	case LONG_MAX_FILES:
		o->max_files = tool_arg_count(t, "--max-files", arg);
		return 1;
	case LONG_RECURSIVE:
		o->recursive = 1;
		return 1;
	case LONG_DONE_MARKER:
		if (!*arg || strchr(arg, '/'))
			tool_usage_error(t, "--done-marker takes a suffix of a file "
					 "name, not '%s'", arg);
		o->done_marker = arg;
		return 1;
	case LONG_SETTLE:
		/* 0 is a choice here: the lease alone decides. */
		if (duration_parse(arg, &o->settle_ms) < 0 || o->settle_ms < 0)
			tool_usage_error(t, "--settle takes a duration such as 2s "
					 "or 0, not '%s'", arg);
		o->settle_set = 1;
		return 1;
	case LONG_DONE:
		o->done_dir = arg;
		return 1;
	case LONG_FAILED:
		o->failed_dir = arg;
		return 1;
	case LONG_IDEMPOTENT:
		o->idempotent = 1;
		return 1;
	case LONG_REMEMBER:
		o->remember_ms = tool_arg_duration(t, "--remember", arg);
		return 1;
	}
	return 0;
}
