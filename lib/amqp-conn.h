/*
 * amqp-conn: one connection to a broker for one amqp: channel (its
 * address, amqp-addr.h): connected, logged in, one AMQP channel open,
 * the queue declared when the address asks; and the broker's errors
 * named in words and as errno values that say what they mean for the
 * run (channel.h, channel_failure_status).
 */
#ifndef MSG_AMQP_CONN_H
#define MSG_AMQP_CONN_H

#include <amqp.h>
#include <stdint.h>

#include "amqp-addr.h"
#include "buf.h"

/* The AMQP channel every connection uses. */
#define MQ_CHANNEL 1

struct mq_conn {
	amqp_connection_state_t conn;
	struct mq_addr addr;
	char *name;		/* the address, for diagnostics */
	int confirming;		/* in publisher confirm mode */
	int consuming;		/* taking deliveries from the queue */
};

/*
 * Connect to the broker of addr: 0, or -1 with the reason in err and
 * errno ECONNREFUSED (cannot reach it, or it closed on us), EACCES
 * (login or vhost refused), ENXIO (no such queue or exchange) or
 * EINVAL (the address, or a queue declared otherwise).
 */
int mq_conn_open(struct mq_conn *c, const char *addr, struct buf *err);
void mq_conn_close(struct mq_conn *c);

/* Put in publisher confirm mode: 0, or -1 as mq_conn_open. */
int mq_conn_confirm(struct mq_conn *c, struct buf *err);
/* Take deliveries from the queue, at most prefetch unacknowledged: 0,
 * or -1 as mq_conn_open. */
int mq_conn_consume(struct mq_conn *c, struct buf *err);
/* The queue's messages ready for delivery now: the count, or -1 as
 * mq_conn_open. */
long mq_conn_ready(struct mq_conn *c, struct buf *err);

/* Does errno value e say the connection is lost (the broker gone, or it
 * closed the connection), where one may be made again? */
int mq_conn_lost(int e);
/*
 * After a lost connection (its reason in err): connect again, in the
 * mode it was in, trying again with pauses of 0.1 s doubling up to 2 s,
 * for as long as the address's reconnect= allows (none when it is 0). A
 * warning says the loss and one the new connection. 0, or -1 with errno
 * as it was and err saying why not (or the loss, when reconnect=0).
 * What the old connection had not acknowledged is redelivered by the
 * broker; what it had published unconfirmed is the caller's to resend.
 */
int mq_conn_reconnect(struct mq_conn *c, struct buf *err);

/* Why the last RPC failed, into err, with errno set as above: -1. */
int mq_conn_reply_error(struct mq_conn *c, amqp_rpc_reply_t r, const char *what,
			struct buf *err);
/* A channel.close or connection.close the broker sent, answered and said
 * in err, errno set as above: -1. */
int mq_conn_closed(struct mq_conn *c, const amqp_frame_t *frame,
		   struct buf *err);
/* A library status (AMQP_STATUS_...) in err: -1, errno ECONNRESET. */
int mq_conn_status_error(struct mq_conn *c, int status, const char *what,
			 struct buf *err);

#endif
