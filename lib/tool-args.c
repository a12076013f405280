/*
 * tool-args: option arguments every tool reads the same way, each
 * refused with a usage error that names the option and what it takes.
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
