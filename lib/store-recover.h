/*
 * store-recover: what store_open() does to a directory: make it, lock
 * it, read its version, and bring its log back to the last whole batch,
 * removing whatever a crash left around it (see msg-store(5), RECOVERY).
 */
#ifndef MSG_STORE_RECOVER_H
#define MSG_STORE_RECOVER_H

#include "store.h"
#include "store-index.h"
#include "store-log.h"

/* Fill err: the status, the exit code (or store_exit_code(errno) when
 * code is 0), the message, and for STORE_SYSERR errno's text after it. */
void store_err_set(struct store_err *err, enum store_status status, int code,
		   const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* Make and lock l->dir (the lock's descriptor in *lockfd), then load its
 * log into x, or create the files a new store lacks. 0, or -1 with err. */
int recover_open(struct store_log *l, struct store_index *x, int *lockfd,
		 struct store_err *err);

/* The committed state of l->dir as it is now, read without the lock and
 * changing nothing: 0, or -1 with err. */
int recover_snapshot(struct store_log *l, struct store_index *x,
		     struct store_err *err);

#endif
