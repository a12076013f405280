/*
 * trickle-admin: msg-trickle's operator commands, on the same state as
 * a running instance, and safe beside it:
 *
 *   status    reads a snapshot of the committed state (store.h,
 *             store_open_snapshot): no lock, nothing written.
 *   retry, skip, release
 *             are checked against that snapshot, then written, durably,
 *             as a message into the spool DIR/commands/. An instance that
 *             holds the state reads that spool beside its inputs and
 *             applies each command in its own next batch, so a change
 *             never races the instance's own; when none does, the
 *             command runs the feed itself for just that spool, under
 *             the lock, sending nothing (what may go is left ready for
 *             the next run).
 */
#ifndef MSG_TRICKLE_ADMIN_H
#define MSG_TRICKLE_ADMIN_H

#include <stdint.h>

#include "buf.h"
#include "header.h"
#include "trickle.h"

struct store;

/* The feed itself, as the command line runs it; hold: send nothing. */
typedef int (*trickle_feed_fn)(int argc, char **argv, int hold);

/* argv[1] is an operator command: run it and return its exit status.
 * Otherwise -1. */
int trickle_admin_main(int argc, char **argv, trickle_feed_fn feed);

/* "dir:STATE/commands", the spool commands come through. */
void trickle_admin_commands_addr(const char *state, struct buf *out);
/* Make that spool if it is not there: 0, or -1 with errno. */
int trickle_admin_commands_make(const char *state);
/* The command a queued message holds: 0, or -1 when it holds none. */
int trickle_admin_command_of(const struct headers *h, enum trickle_command *c);
const char *trickle_admin_command_name(enum trickle_command c);

/* What the state holds, for --stats. */
struct trickle_totals {
	uint64_t failed, waiting, in_flight;
};
int trickle_admin_totals(struct store *s, struct trickle_totals *t);

#endif
