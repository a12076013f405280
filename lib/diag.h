/*
 * diag: diagnostics on stderr in one style ("msg-x: subject 'q': reason"),
 * the sysexits(3) exit codes every tool uses, and the program name.
 * Only cmd/ and these helpers exit; lib/ functions report failure upward.
 */
#ifndef MSG_DIAG_H
#define MSG_DIAG_H

#include <stdarg.h>
#include <stddef.h>
#include <sysexits.h>

extern const char *progname;

struct buf;

void diag_init(const char *argv0);
/*
 * Append s[0..n) to out as a diagnostic quotes it: control bytes (C0, DEL,
 * and C1 whether raw or UTF-8 encoded) and bytes that are not UTF-8 become
 * \xHH, so no input can drive the terminal. Every diagnostic goes
 * through it.
 */
void diag_escape(struct buf *out, const char *s, size_t n);
void warnx_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The last line reported (escaped, without the program's name), or "". */
const char *diag_last(void);
/* Like warnx_msg with ": strerror(errno)" appended. */
void warn_errno(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
_Noreturn void die(int code, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
_Noreturn void die_errno(int code, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Ends the run as die does, its reason already said on stderr. */
_Noreturn void die_said(int code);

/*
 * Before exiting on a fatal error, the tool flushes the output it already
 * produced (doc/design.md, "Errors and exit status"); the tool registers
 * that here and die() runs it with the exit status.
 */
void diag_set_exit_hook(void (*hook)(int code));

#endif
