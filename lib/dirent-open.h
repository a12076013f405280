/*
 * dirent-open: opening an entry of a directory that others fill (a spool,
 * an inbox) as a regular file only. Whoever can write into the directory
 * decides what its entries are: a symbolic link would be followed out of
 * it (to /etc/passwd, to /dev/zero), a FIFO would block the reader for
 * ever, a directory or a device cannot be read as a message. Such an
 * entry is named by its kind, never opened, and left to the caller to
 * move aside.
 */
#ifndef MSG_DIRENT_OPEN_H
#define MSG_DIRENT_OPEN_H

#include <sys/types.h>

/*
 * Open name in dirfd for reading if it is a regular file: looked at
 * first (a device is not even opened), then opened without following a
 * symbolic link (O_NOFOLLOW) or waiting on a FIFO (O_NONBLOCK), and
 * checked again once open, so one swapped in between is caught too.
 * The descriptor; -1 with errno when it cannot be looked at or opened;
 * DIRENT_NOT_REGULAR with its type in *mode when it is something else.
 */
#define DIRENT_NOT_REGULAR (-2)
int dirent_open_regular(int dirfd, const char *name, mode_t *mode);

/* What an entry of type mode is, for diagnostics: "a symbolic link". */
const char *dirent_kind(mode_t mode);

#endif
