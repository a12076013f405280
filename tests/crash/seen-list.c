/*
 * seen-list DIR: the names that the --idempotent store of the inbox DIR
 * remembers as taken, one a line, as last committed (read as a snapshot,
 * changing nothing, so what a killed run had not committed is not
 * there).
 */
#include <stdio.h>
#include <sysexits.h>

#include "buf.h"
#include "inbox-seen.h"
#include "store.h"

int main(int argc, char **argv)
{
	struct buf path = BUF_INIT;
	struct store_err err;
	struct store_iter it;
	struct store_rec rec;
	struct store *st;
	int r;

	if (argc != 2) {
		fprintf(stderr, "usage: seen-list DIR\n");
		return EX_USAGE;
	}
	buf_addf(&path, "%s/.msg/seen", argv[1]);
	st = store_open_snapshot(path.ptr, &err);
	if (!st) {
		fprintf(stderr, "seen-list: %s\n", err.msg);
		return err.exit;
	}
	store_iter_init(&it, st, INBOX_SEEN_KIND, "", 0);
	while ((r = store_iter_next(&it, &rec, NULL)) > 0)
		printf("%s\n", rec.key);
	store_iter_release(&it);
	store_close(st);
	buf_release(&path);
	if (r < 0) {
		perror("seen-list");
		return EX_IOERR;
	}
	return fflush(stdout) == 0 ? 0 : EX_IOERR;
}
