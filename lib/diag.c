/* diag: stderr diagnostics and exits with sysexits codes. */
#include "diag.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"

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

/* Length of the well-formed UTF-8 sequence at p (2 to 4 bytes) that is
 * not a C1 control, or 0. */
static size_t printable_utf8(const unsigned char *p, size_t n)
{
	size_t len = p[0] >= 0xf0 && p[0] <= 0xf4 ? 4
		   : p[0] >= 0xe0 ? (p[0] <= 0xef ? 3 : 0)
		   : p[0] >= 0xc2 ? 2 : 0;

	if (!len || len > n)
		return 0;
	for (size_t i = 1; i < len; i++)
		if ((p[i] & 0xc0) != 0x80)
			return 0;
	if (p[0] == 0xc2 && p[1] < 0xa0)
		return 0;	/* U+0080..U+009F: C1 controls, CSI among them */
	return len;
}

void diag_escape(struct buf *out, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	static const char hex[] = "0123456789abcdef";

	for (size_t i = 0; i < n;) {
		size_t len = p[i] < 0x80 ? (p[i] >= 0x20 && p[i] != 0x7f)
					 : printable_utf8(p + i, n - i);

		if (len) {
			buf_add(out, p + i, len);
			i += len;
			continue;
		}
		buf_add(out, "\\x", 2);
		buf_addch(out, hex[p[i] >> 4]);
		buf_addch(out, hex[p[i] & 15]);
		i++;
	}
}

/* One line on stderr; what it quotes from input may hold any byte, so
 * control bytes are escaped here, once for every diagnostic. */
/* The last line reported, without the program's name: what a source
 * set aside at a stop was stopped for. */
static struct buf last_line = BUF_INIT;

const char *diag_last(void)
{
	return last_line.ptr ? last_line.ptr : "";
}

static void vreport(const char *fmt, va_list ap, int err)
{
	struct buf line = BUF_INIT, safe = BUF_INIT;

	buf_addf(&line, "%s: ", progname);
	buf_vaddf(&line, fmt, ap);
	if (err)
		buf_addf(&line, ": %s", strerror(err));
	diag_escape(&safe, line.ptr, line.len);
	buf_reset(&last_line);
	buf_add(&last_line, safe.ptr + strlen(progname) + 2,
		safe.len - strlen(progname) - 2);
	buf_addch(&safe, '\n');
	fwrite(safe.ptr, 1, safe.len, stderr);
	fflush(stderr);
	buf_release(&line);
	buf_release(&safe);
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

void die_said(int code)
{
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
