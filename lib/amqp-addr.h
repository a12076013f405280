/*
 * amqp-addr: the amqp: channel address of msg-tools(7),
 *
 *   amqp://[user@]host[:port][/vhost]?queue=NAME[&option=value...]
 *   amqp://[user@]host[:port][/vhost]?exchange=NAME[&key=KEY]...
 *
 * read as rabbitmq-c's amqp_parse_url reads an AMQP URI (the path is the
 * vhost, percent-encoded: %2F for "/"; none means "/"), and the query's
 * options; and the password, which is never part of the address (it
 * would show in ps(1) and in every diagnostic naming the channel).
 */
#ifndef MSG_AMQP_ADDR_H
#define MSG_AMQP_ADDR_H

#include <stdint.h>

#include "buf.h"

enum mq_queue_type {
	MQ_QUORUM,	/* replicated, every message kept across a crash */
	MQ_CLASSIC,
};

struct mq_addr {
	char *host;
	int port;
	char *vhost;
	char *user;		/* "guest" when the address names none */
	int user_given;
	char *queue;		/* queue=, or NULL */
	char *exchange;		/* exchange=, or NULL (the default exchange) */
	char *key;		/* key=, or NULL */
	unsigned prefetch;	/* unacknowledged deliveries a reader holds */
	unsigned confirm_window;	/* unconfirmed messages a writer sends */
	enum mq_queue_type queue_type;
	int declare;		/* declare the queue (durable) if missing */
	int64_t reconnect_ms;	/* how long to try again a lost broker, 0: not */
	unsigned heartbeat_s;	/* heartbeat interval asked for, 0: none */
};

#define MQ_DEFAULT_PORT 5672
#define MQ_DEFAULT_PREFETCH 256
#define MQ_DEFAULT_CONFIRM_WINDOW 256
#define MQ_DEFAULT_RECONNECT_MS 30000
/* RabbitMQ's own default; the broker may ask for less. */
#define MQ_DEFAULT_HEARTBEAT_S 60
#define MQ_HEARTBEAT_MAX_S 65535
/* Larger windows buy nothing on one connection and hold more to resend. */
#define MQ_WINDOW_MAX 65535

/* Is addr an amqp: address (whether well formed or not)? */
int mq_addr_is(const char *addr);
/* 0, or -1 with the reason in err (which never holds a password). */
int mq_addr_parse(const char *addr, struct mq_addr *out, struct buf *err);
void mq_addr_release(struct mq_addr *a);
/* The routing a publisher uses: the exchange ("" for the default one)
 * and the routing key (the queue's name through the default exchange). */
const char *mq_addr_exchange(const struct mq_addr *a);
const char *mq_addr_routing_key(const struct mq_addr *a);

/*
 * The password for a: $MSG_AMQP_PASSWORD, else the first line of the file
 * $MSG_AMQP_PASSWORD_FILE names (refused when its group or others may
 * read it), else "guest" for an address that names no user. 0 with the
 * password in out, or -1 with the reason in err.
 */
int mq_password(const struct mq_addr *a, struct buf *out, struct buf *err);

#endif
