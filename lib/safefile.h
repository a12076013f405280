/*
 * safefile: files created in a directory atomically and without ever
 * replacing one: the data goes to a hidden temporary file, is fsynced,
 * and is then given its name with renameat2(RENAME_NOREPLACE) (or link(2)
 * where that is not supported). A taken name gets a numeric suffix before
 * its extension: orders.xml, orders-2.xml, orders-3.xml, ...
 * Names taken from messages are sanitised first: no '/', no leading '.'
 * (so no '..' and no hidden files), no control bytes.
 */
#ifndef MSG_SAFEFILE_H
#define MSG_SAFEFILE_H

#include <stddef.h>
#include <sys/types.h>

#include "buf.h"

#define SAFE_NAME_MAX 200

/* Append a safe file name made from in[0..n) to out: 0, or -1 if nothing
 * usable is left (empty name). */
int safe_name(const char *in, size_t n, struct buf *out);

struct atomic_file {
	int dirfd;
	int fd;
	char tmpname[64];
};

/* Start a new temporary file in the directory dirfd, created with mode
 * (as limited by the umask): 0 or -1 (errno). */
int atomic_file_open(struct atomic_file *af, int dirfd, mode_t mode);
int atomic_file_write(struct atomic_file *af, const void *p, size_t n);
/* Give the file exactly mode, whatever the umask: 0 or -1 (errno). */
int atomic_file_chmod(struct atomic_file *af, mode_t mode);
/* Start writing the file's data to disk, without waiting for it, so
 * that a later seal finds it on its way: a hint, never an error. */
void atomic_file_start_writeback(struct atomic_file *af);
/* fsync and close it: 0, or -1 (errno) with the temporary removed. */
int atomic_file_seal(struct atomic_file *af);
/* Give the sealed file name, replacing a file of that name when replace
 * is set: 0, or -1 (errno). EEXIST (name taken, replace unset) leaves
 * the temporary for another try; any other failure removes it. */
int atomic_file_place(struct atomic_file *af, const char *name, int replace);
/* fsync, close, and give it name (or name-2, name-3, ...); the name used
 * is put in final. 0 or -1 (errno); on failure the temporary is removed. */
int atomic_file_commit(struct atomic_file *af, const char *name,
		       struct buf *final);
void atomic_file_abort(struct atomic_file *af);

/* renameat(2) that fails with EEXIST rather than replace to: 0 or -1. */
int rename_noreplace(int fromdir, const char *from, int todir, const char *to);
/* name with the numeric suffix k (k > 1) before its extension, into out. */
void safe_suffixed(const char *name, unsigned k, struct buf *out);
/* Move from (in fromdir) into todir as name, or name-2, name-3, ... when
 * that is taken, never replacing a file; the name used is put in final.
 * Whatever from is (a symbolic link, a FIFO), it is moved, not opened. */
int rename_unique(int fromdir, const char *from, int todir, const char *name,
		  struct buf *final);

/*
 * The first free name of NAME, NAME.1, NAME.2, ... (msg-unwrap -d
 * --exists suffix, and where an inbox's files go once taken): each is
 * tried with place(ctx, name), which fails with EEXIST when the name is
 * taken and never replaces a file. The plain name is always tried first
 * (the file there may have gone); the numbers go on from where the last
 * search for the same name stopped, so that many files of one name do
 * not try .1, .2, ... every time.
 */
struct numbered_names {
	struct buf last_name;
	unsigned long last_k;
};
void numbered_names_init(struct numbered_names *nn);
void numbered_names_release(struct numbered_names *nn);
/* 0 with the name used in final, or place's -1 (errno) when it failed
 * for any reason but EEXIST. */
int numbered_place(struct numbered_names *nn, const char *name,
		   struct buf *final, int (*place)(void *ctx, const char *name),
		   void *ctx);

/* mkdir -p path (mode 0777 under the umask): each directory made is
 * synced into its parent, so that a file put in it later is not lost
 * with its directory at a crash. 0 or -1 (errno). */
int make_dirs(const char *path);

#endif
