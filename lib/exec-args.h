/*
 * exec-args: a job's argv and environment (exec-args.c).
 */
#ifndef MSG_EXEC_ARGS_H
#define MSG_EXEC_ARGS_H

#include "buf.h"
#include "header.h"

/* args[0..n) with {Name} replaced ({{ and }} are braces): a new
 * NULL-terminated vector, 0; or -1 with why (no such header, too long). */
int exec_argv(char *const *args, int n, const struct headers *h, char ***out,
	      struct buf *why);
/* The inherited environment with MSG_NAME=VALUE for each header (the
 * first value of a repeated one): 0, or -1 with why (a value too long). */
int exec_envp(const struct headers *h, char ***out, struct buf *why);
void exec_strings_free(char **v);
/* Does every {Name} in args name a header a message can have? 0, or -1
 * with why (checked once, at start). */
int exec_check_names(char *const *args, int n, struct buf *why);
/* The file execve(2) runs for name: name itself when it holds a slash,
 * else the first executable of that name in $PATH. NULL with errno. */
char *exec_resolve(const char *name);

#endif
