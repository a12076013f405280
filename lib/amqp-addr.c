/* amqp-addr: the amqp: address and its password (amqp-addr.h). */
#include "amqp-addr.h"

#include <amqp.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "clock.h"
#include "io.h"

#define SCHEME "amqp://"
/* Names on the wire are AMQP short strings. */
#define SHORTSTR_MAX 255

int mq_addr_is(const char *addr)
{
	return !strncmp(addr, SCHEME, strlen(SCHEME));
}

static int hex_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* %XX decoded, as in the rest of a URI: NULL when malformed or when it
 * would hold a NUL. */
static char *percent_decode(const char *p, size_t n)
{
	char *out = xmalloc(n + 1), *o = out;

	for (size_t i = 0; i < n; i++) {
		int hi, lo;
		if (p[i] != '%') {
			*o++ = p[i];
			continue;
		}
		if (n - i < 3)
			goto bad;
		hi = hex_value(p[i + 1]);
		lo = hex_value(p[i + 2]);
		if (hi < 0 || lo < 0 || (hi | lo) == 0)
			goto bad;
		*o++ = (char)(hi << 4 | lo);
		i += 2;
	}
	*o = '\0';
	return out;
bad:
	free(out);
	return NULL;
}

static int parse_count(const char *name, const char *v, unsigned max,
		       unsigned *out, struct buf *err)
{
	char *end;
	unsigned long n;

	errno = 0;
	n = strtoul(v, &end, 10);
	if (!*v || *end || *v == '-' || *v == '+' || errno || n < 1 || n > max) {
		buf_addf(err, "invalid %s '%s' in amqp address: a count from 1 "
			 "to %u", name, v, max);
		return -1;
	}
	*out = (unsigned)n;
	return 0;
}

static int parse_choice(const char *name, const char *v, const char *yes,
			const char *no, int *out, struct buf *err)
{
	if (!strcmp(v, yes) || !strcmp(v, no)) {
		*out = !strcmp(v, yes);
		return 0;
	}
	buf_addf(err, "invalid %s '%s' in amqp address: %s or %s", name, v,
		 yes, no);
	return -1;
}

/* A name (queue, exchange, key) set once, at most a short string long. */
static int set_name(char **slot, const char *name, char *v, struct buf *err)
{
	if (*slot) {
		buf_addf(err, "amqp address names %s twice", name);
		free(v);
		return -1;
	}
	if (strlen(v) > SHORTSTR_MAX) {
		buf_addf(err, "%s in amqp address is over %d bytes", name,
			 SHORTSTR_MAX);
		free(v);
		return -1;
	}
	*slot = v;
	return 0;
}

/* One name=value of the query, value decoded. */
/* A duration, 0 for never (a lost broker ends the run at once). */
static int parse_reconnect(const char *v, int64_t *ms, struct buf *err)
{
	if (duration_parse(v, ms) == 0)
		return 0;
	buf_addf(err, "option reconnect of amqp address: '%s' is not a duration "
		 "(such as 30s, 500ms or 0)", v);
	return -1;
}

/* A duration of whole seconds (AMQP counts them so), 0 for none. */
static int parse_heartbeat(const char *v, unsigned *s, struct buf *err)
{
	int64_t ms;

	if (duration_parse(v, &ms) == 0 && ms % 1000 == 0 &&
	    ms / 1000 <= MQ_HEARTBEAT_MAX_S) {
		*s = (unsigned)(ms / 1000);
		return 0;
	}
	buf_addf(err, "option heartbeat of amqp address: '%s' is not a duration "
		 "of whole seconds up to %ds (such as 60s, 1m or 0)", v,
		 MQ_HEARTBEAT_MAX_S);
	return -1;
}

static int parse_option(struct mq_addr *a, const char *name, char *v,
			struct buf *err)
{
	int quorum, r;

	if (!strcmp(name, "queue"))
		return set_name(&a->queue, name, v, err);
	if (!strcmp(name, "exchange"))
		return set_name(&a->exchange, name, v, err);
	if (!strcmp(name, "key"))
		return set_name(&a->key, name, v, err);
	if (!strcmp(name, "prefetch"))
		r = parse_count(name, v, MQ_WINDOW_MAX, &a->prefetch, err);
	else if (!strcmp(name, "confirm-window"))
		r = parse_count(name, v, MQ_WINDOW_MAX, &a->confirm_window, err);
	else if (!strcmp(name, "reconnect"))
		r = parse_reconnect(v, &a->reconnect_ms, err);
	else if (!strcmp(name, "heartbeat"))
		r = parse_heartbeat(v, &a->heartbeat_s, err);
	else if (!strcmp(name, "declare"))
		r = parse_choice(name, v, "yes", "no", &a->declare, err);
	else if (!strcmp(name, "queue-type")) {
		r = parse_choice(name, v, "quorum", "classic", &quorum, err);
		a->queue_type = quorum ? MQ_QUORUM : MQ_CLASSIC;
	} else {
		buf_addf(err, "unknown option '%s' in amqp address", name);
		r = -1;
	}
	free(v);
	return r;
}

static int parse_query(struct mq_addr *a, const char *q, struct buf *err)
{
	while (*q) {
		size_t n = strcspn(q, "&");
		const char *eq = memchr(q, '=', n);
		char name[32];
		char *v;

		if (!eq || (size_t)(eq - q) >= sizeof(name) || eq == q) {
			buf_addf(err, "malformed option '%.*s' in amqp address: "
				 "NAME=VALUE", (int)n, q);
			return -1;
		}
		memcpy(name, q, (size_t)(eq - q));
		name[eq - q] = '\0';
		v = percent_decode(eq + 1, n - (size_t)(eq - q) - 1);
		if (!v) {
			buf_addf(err, "malformed %%-escape in option '%s' of amqp "
				 "address", name);
			return -1;
		}
		if (parse_option(a, name, v, err) < 0)
			return -1;
		q += n + (q[n] == '&');
	}
	return 0;
}

/* What the address says of where to connect, as amqp_parse_url reads it;
 * a password there is refused without echoing it. */
static int parse_authority(struct mq_addr *a, const char *addr, size_t n,
			   struct buf *err)
{
	char *base = xmalloc(n + 1);
	const char *auth = addr + strlen(SCHEME);
	size_t auth_len = strcspn(auth, "/?");
	const char *at = memchr(auth, '@', auth_len);
	struct amqp_connection_info info;
	int r = -1;

	memcpy(base, addr, n);
	base[n] = '\0';
	if (at && memchr(auth, ':', (size_t)(at - auth))) {
		buf_addstr(err, "amqp address holds a password: give it in "
			   "MSG_AMQP_PASSWORD or MSG_AMQP_PASSWORD_FILE");
	} else if (strchr(":/?", *(at ? at + 1 : auth)) ||
		   amqp_parse_url(base, &info) != AMQP_STATUS_OK) {
		buf_addf(err, "malformed amqp address '%s': "
			 "amqp://[user@]host[:port][/vhost]?queue=NAME", base);
	} else {
		a->host = xstrdup(info.host);
		a->port = info.port;
		a->vhost = xstrdup(info.vhost);
		a->user = xstrdup(info.user);
		a->user_given = at != NULL;
		r = 0;
	}
	free(base);
	return r;
}

int mq_addr_parse(const char *addr, struct mq_addr *out, struct buf *err)
{
	const char *q = strchr(addr, '?');
	struct mq_addr a = {
		.prefetch = MQ_DEFAULT_PREFETCH,
		.confirm_window = MQ_DEFAULT_CONFIRM_WINDOW,
		.queue_type = MQ_QUORUM,
		.declare = 1,
		.reconnect_ms = MQ_DEFAULT_RECONNECT_MS,
		.heartbeat_s = MQ_DEFAULT_HEARTBEAT_S,
	};

	memset(out, 0, sizeof(*out));
	if (!mq_addr_is(addr)) {
		buf_addf(err, "not an amqp address: '%s'", addr);
		return -1;
	}
	if (parse_authority(&a, addr, q ? (size_t)(q - addr) : strlen(addr), err) < 0)
		return -1;
	if (!q || parse_query(&a, q + 1, err) < 0)
		goto bad;
	if (!a.queue == !a.exchange) {
		buf_addstr(err, "amqp address names neither a queue nor an exchange, "
			   "or both: ?queue=NAME or ?exchange=NAME&key=KEY");
		goto bad;
	}
	if (a.key && !a.exchange) {
		buf_addstr(err, "amqp address has a key without an exchange");
		goto bad;
	}
	*out = a;
	return 0;
bad:
	if (!q)
		buf_addstr(err, "amqp address names no queue: ?queue=NAME or "
			   "?exchange=NAME&key=KEY");
	mq_addr_release(&a);
	return -1;
}

void mq_addr_release(struct mq_addr *a)
{
	free(a->host);
	free(a->vhost);
	free(a->user);
	free(a->queue);
	free(a->exchange);
	free(a->key);
	memset(a, 0, sizeof(*a));
}

const char *mq_addr_exchange(const struct mq_addr *a)
{
	return a->exchange ? a->exchange : "";
}

const char *mq_addr_routing_key(const struct mq_addr *a)
{
	if (a->exchange)
		return a->key ? a->key : "";
	return a->queue;
}

/* The file's first line; refused when anyone but its owner may read it. */
static int password_from_file(const char *path, struct buf *out,
			      struct buf *err)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	int r;

	if (fd < 0 || fstat(fd, &st) < 0) {
		buf_addf(err, "cannot open password file '%s': %s", path,
			 strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	if (st.st_mode & (S_IRGRP | S_IROTH)) {
		buf_addf(err, "password file '%s' is readable by others (mode "
			 "%04o): make it readable by its owner only", path,
			 (unsigned)(st.st_mode & 07777));
		close(fd);
		return -1;
	}
	buf_reset(out);
	r = read_to_end(fd, out, 4096);
	close(fd);
	if (r < 0) {
		buf_addf(err, "cannot read password file '%s': %s", path,
			 strerror(errno));
		return -1;
	}
	buf_setlen(out, strcspn(out->ptr, "\r\n"));
	return 0;
}

int mq_password(const struct mq_addr *a, struct buf *out, struct buf *err)
{
	const char *pw = getenv("MSG_AMQP_PASSWORD");
	const char *file = getenv("MSG_AMQP_PASSWORD_FILE");

	buf_reset(out);
	if (pw && *pw) {
		buf_addstr(out, pw);
		return 0;
	}
	if (file && *file)
		return password_from_file(file, out, err);
	if (!a->user_given) {
		buf_addstr(out, "guest");
		return 0;
	}
	buf_addf(err, "no password for amqp user '%s': set MSG_AMQP_PASSWORD "
		 "or MSG_AMQP_PASSWORD_FILE", a->user);
	return -1;
}
