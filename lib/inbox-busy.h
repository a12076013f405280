/*
 * inbox-busy: is a file in an inbox still being written on this machine?
 * Partners' upload programs (sftp-server, rsync, an FTP daemon) write a
 * file in place under its final name, slowly. While any process holds it
 * open for writing, Linux refuses a read lease on it (F_SETLEASE with
 * F_RDLCK fails with EAGAIN), whatever the gaps between its writes; a
 * writer that locks the file with flock(2) or fcntl(2) is seen by asking
 * for the lock. The lease needs the reader to own the file or to hold
 * CAP_LEASE; without that (and for writers on other machines, over NFS
 * or SMB) this check cannot tell, and says so.
 */
#ifndef MSG_INBOX_BUSY_H
#define MSG_INBOX_BUSY_H

enum inbox_busy {
	INBOX_IDLE,		/* no writer has it open or locked */
	INBOX_BUSY,		/* a writer has it open for writing, or locked */
	INBOX_UNKNOWN,		/* no lease allowed here: writers unseen */
};

/* What is known of the regular file open for reading as fd. */
enum inbox_busy inbox_busy(int fd);

#endif
