/* diag: stderr diagnostics and exits with sysexits codes. */
#include "diag.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *progname = "msg";
static void (*exit_hook)(int code);

void diag_init(const char *argv0)
{
	const char *slash;

	if (!argv0 || !*argv0)
		return;
	slash = strrchr(argv0, '/');
	progname = slash ? slash + 1 : argv0;
}

void diag_set_exit_hook(void (*hook)(int code))
{
	exit_hook = hook;
}

static void vreport(const char *fmt, va_list ap, int err)
{
	char line[4096];
	int n = snprintf(line, sizeof(line), "%s: ", progname);

	if (n > 0 && (size_t)n < sizeof(line))
		vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
	if (err) {
		size_t len = strlen(line);
		snprintf(line + len, sizeof(line) - len, ": %s", strerror(err));
	}
	fprintf(stderr, "%s\n", line);
}

void warnx_msg(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport(fmt, ap, 0);
	va_end(ap);
}

void warn_errno(const char *fmt, ...)
{
	int err = errno;
	va_list ap;

	va_start(ap, fmt);
	vreport(fmt, ap, err);
	va_end(ap);
}

static _Noreturn void finish(int code)
{
	void (*hook)(int) = exit_hook;

	exit_hook = NULL;	/* a failing hook must not recurse */
	if (hook)
		hook(code);
	exit(code);
}

void die(int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport(fmt, ap, 0);
	va_end(ap);
	finish(code);
}

void die_errno(int code, const char *fmt, ...)
{
	int err = errno;
	va_list ap;

	va_start(ap, fmt);
	vreport(fmt, ap, err);
	va_end(ap);
	finish(code);
}
