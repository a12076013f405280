/*
 * fcntl-hold FILE READY: hold FILE under a POSIX record lock, as a
 * writer that locks what it writes does (fcntl(2) F_SETLK, F_WRLCK, the
 * whole file; not flock(2), which a shell can take with flock(1)),
 * create READY once it is held, and keep it until killed. The lock goes
 * with the process.
 */
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
	int fd, ready;

	if (argc != 3) {
		fprintf(stderr, "usage: fcntl-hold FILE READY\n");
		return 64;
	}
	fd = open(argv[1], O_RDWR);
	if (fd < 0 || fcntl(fd, F_SETLK, &fl) < 0) {
		perror(argv[1]);
		return 1;
	}
	ready = open(argv[2], O_WRONLY | O_CREAT | O_EXCL, 0644);
	if (ready < 0) {
		perror(argv[2]);
		return 1;
	}
	close(ready);
	for (;;)
		pause();
}
