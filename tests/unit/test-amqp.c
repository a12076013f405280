/* test-amqp: the amqp: address, its password and the header mapping,
 * without a broker. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "amqp-addr.h"
#include "amqp-map.h"
#include "unit.h"

static int parse(const char *addr, struct mq_addr *a, struct buf *err)
{
	buf_reset(err);
	return mq_addr_parse(addr, a, err);
}

static void test_defaults(void)
{
	struct mq_addr a;
	struct buf err = BUF_INIT;

	CHECK(parse("amqp://broker.example?queue=orders", &a, &err) == 0);
	CHECK_STR(a.host, "broker.example");
	CHECK(a.port == 5672);
	CHECK_STR(a.vhost, "/");
	CHECK_STR(a.user, "guest");
	CHECK(!a.user_given);
	CHECK_STR(a.queue, "orders");
	CHECK(a.exchange == NULL);
	CHECK(a.prefetch == MQ_DEFAULT_PREFETCH);
	CHECK(a.confirm_window == MQ_DEFAULT_CONFIRM_WINDOW);
	CHECK(a.queue_type == MQ_QUORUM);
	CHECK(a.declare == 1);
	CHECK(a.heartbeat_s == MQ_DEFAULT_HEARTBEAT_S);
	CHECK_STR(mq_addr_exchange(&a), "");
	CHECK_STR(mq_addr_routing_key(&a), "orders");
	mq_addr_release(&a);
	buf_release(&err);
}

static void test_everything(void)
{
	struct mq_addr a;
	struct buf err = BUF_INIT;

	CHECK(parse("amqp://ops@10.0.0.7:5673/prod%2Feu?exchange=ev%26x&key=a.b"
		    "&prefetch=10&confirm-window=500&queue-type=classic&declare=no"
		    "&heartbeat=2m",
		    &a, &err) == 0);
	CHECK_STR(a.host, "10.0.0.7");
	CHECK(a.port == 5673);
	CHECK_STR(a.vhost, "prod/eu");
	CHECK_STR(a.user, "ops");
	CHECK(a.user_given);
	CHECK(a.queue == NULL);
	CHECK_STR(mq_addr_exchange(&a), "ev&x");
	CHECK_STR(mq_addr_routing_key(&a), "a.b");
	CHECK(a.prefetch == 10);
	CHECK(a.confirm_window == 500);
	CHECK(a.queue_type == MQ_CLASSIC);
	CHECK(a.declare == 0);
	CHECK(a.heartbeat_s == 120);
	mq_addr_release(&a);
	CHECK(parse("amqp://h?queue=q&heartbeat=0", &a, &err) == 0);
	CHECK(a.heartbeat_s == 0);
	mq_addr_release(&a);
	/* %2F is the vhost "/"; an empty path is the vhost "" (as
	 * amqp_parse_url reads it). */
	CHECK(parse("amqp://h/%2F?queue=q", &a, &err) == 0);
	CHECK_STR(a.vhost, "/");
	mq_addr_release(&a);
	CHECK(parse("amqp://h/?queue=q", &a, &err) == 0);
	CHECK_STR(a.vhost, "");
	mq_addr_release(&a);
	buf_release(&err);
}

/* Each refused, with the reason given. */
static void check_refused(const char *addr, const char *why)
{
	struct mq_addr a;
	struct buf err = BUF_INIT;
	int r = parse(addr, &a, &err);

	CHECK(r == -1);
	CHECK(strstr(err.ptr, why) != NULL);
	if (!strstr(err.ptr, why))
		printf("#   %s: got '%s'\n", addr, err.ptr);
	if (r == 0)
		mq_addr_release(&a);
	buf_release(&err);
}

static void test_refused(void)
{
	struct buf err = BUF_INIT;
	struct mq_addr a;

	check_refused("amqp://h", "names no queue");
	check_refused("amqp://h?prefetch=3", "neither a queue nor an exchange");
	check_refused("amqp://h?queue=a&exchange=b", "or both");
	check_refused("amqp://h?queue=a&queue=b", "names queue twice");
	check_refused("amqp://h?queue=a&key=k", "key without an exchange");
	check_refused("amqp://h?queue=a&prefetch=0", "invalid prefetch '0'");
	check_refused("amqp://h?queue=a&prefetch=65536", "invalid prefetch");
	check_refused("amqp://h?queue=a&confirm-window=-1", "invalid confirm-window");
	check_refused("amqp://h?queue=a&queue-type=stream", "quorum or classic");
	check_refused("amqp://h?queue=a&declare=1", "yes or no");
	check_refused("amqp://h?queue=a&heartbeat=1500ms",
		      "option heartbeat of amqp address: '1500ms' is not a "
		      "duration of whole seconds up to 65535s");
	check_refused("amqp://h?queue=a&heartbeat=65536s", "whole seconds");
	check_refused("amqp://h?queue=a&heartbeat=soon", "whole seconds");
	check_refused("amqp://h?queue=a&prefetc=1", "unknown option 'prefetc'");
	check_refused("amqp://h?queue", "malformed option 'queue'");
	check_refused("amqp://h?queue=a%2", "malformed %-escape");
	check_refused("amqp://h?queue=a%00b", "malformed %-escape");
	check_refused("amqp://h:99999999?queue=a", "malformed amqp address");
	check_refused("amqp://?queue=a", "malformed amqp address");
	/* A password is refused and never repeated. */
	CHECK(parse("amqp://u:s3cret@h?queue=a", &a, &err) == -1);
	CHECK(strstr(err.ptr, "holds a password") != NULL);
	CHECK(strstr(err.ptr, "s3cret") == NULL);
	buf_release(&err);
	CHECK(!mq_addr_is("dir:amqp://x"));
	CHECK(mq_addr_is("amqp://x"));
}

static int password(const char *addr, struct buf *pw, struct buf *err)
{
	struct mq_addr a;
	int r;

	buf_reset(err);
	if (parse(addr, &a, err) < 0)
		return -2;
	r = mq_password(&a, pw, err);
	mq_addr_release(&a);
	return r;
}

static void test_password(const char *top)
{
	struct buf pw = BUF_INIT, err = BUF_INIT, path = BUF_INIT;
	int fd;

	unsetenv("MSG_AMQP_PASSWORD");
	unsetenv("MSG_AMQP_PASSWORD_FILE");
	CHECK(password("amqp://h?queue=q", &pw, &err) == 0);
	CHECK_STR(pw.ptr, "guest");
	CHECK(password("amqp://ops@h?queue=q", &pw, &err) == -1);
	CHECK(strstr(err.ptr, "no password for amqp user 'ops'") != NULL);
	setenv("MSG_AMQP_PASSWORD", "from-env", 1);
	CHECK(password("amqp://ops@h?queue=q", &pw, &err) == 0);
	CHECK_STR(pw.ptr, "from-env");
	unsetenv("MSG_AMQP_PASSWORD");

	buf_addf(&path, "%s/pw", top);
	fd = open(path.ptr, O_WRONLY | O_CREAT | O_EXCL, 0600);
	CHECK(fd >= 0 && write(fd, "from-file\nsecond line\n", 22) == 22);
	close(fd);
	setenv("MSG_AMQP_PASSWORD_FILE", path.ptr, 1);
	CHECK(password("amqp://ops@h?queue=q", &pw, &err) == 0);
	CHECK_STR(pw.ptr, "from-file");
	CHECK(chmod(path.ptr, 0640) == 0);
	CHECK(password("amqp://ops@h?queue=q", &pw, &err) == -1);
	CHECK(strstr(err.ptr, "is readable by others (mode 0640)") != NULL);
	CHECK(strstr(err.ptr, "from-file") == NULL);
	CHECK(chmod(path.ptr, 0604) == 0);
	CHECK(password("amqp://ops@h?queue=q", &pw, &err) == -1);
	unlink(path.ptr);
	CHECK(password("amqp://ops@h?queue=q", &pw, &err) == -1);
	CHECK(strstr(err.ptr, "cannot open password file") != NULL);
	unsetenv("MSG_AMQP_PASSWORD_FILE");
	buf_release(&pw);
	buf_release(&err);
	buf_release(&path);
}

static void add(struct headers *h, const char *name, const char *value)
{
	headers_add(h, name, strlen(name), value, strlen(value));
}

static const char *table_value(const amqp_basic_properties_t *p,
			       const char *key)
{
	static char v[512];

	for (int i = 0; i < p->headers.num_entries; i++) {
		const amqp_table_entry_t *e = &p->headers.entries[i];
		if (e->key.len == strlen(key) && !memcmp(e->key.bytes, key, e->key.len)) {
			snprintf(v, sizeof(v), "%.*s", (int)e->value.value.bytes.len,
				 (const char *)e->value.value.bytes.bytes);
			return v;
		}
	}
	return NULL;
}

static void test_mapping(void)
{
	struct headers h = HEADERS_INIT;
	struct mq_props mp;
	struct buf why = BUF_INIT, block = BUF_INIT, long_id = BUF_INIT;
	const amqp_basic_properties_t *p = &mp.p;
	/* 2026-12-02T08:14:59.123Z */
	int64_t now = 1796199299123;

	mq_props_init(&mp);
	add(&h, "Message-Id", "m1");
	add(&h, "Timestamp", "2026-12-02T08:14:59.123Z");
	add(&h, "X-Region", "north");
	add(&h, "Expires", "2026-12-02T08:15:01.623Z");
	add(&h, "Correlation-Id", "c1");
	add(&h, "Reply-To", "amqp://h?queue=replies");
	add(&h, "Content-Type", "application/xml");
	add(&h, "Content-Length", "5");
	CHECK(mq_props_set(&mp, &h, now, &why) == 0);
	CHECK(p->delivery_mode == AMQP_DELIVERY_PERSISTENT);
	CHECK(p->_flags & AMQP_BASIC_MESSAGE_ID_FLAG);
	CHECK(p->timestamp == 1796199299);
	CHECK(p->_flags & AMQP_BASIC_EXPIRATION_FLAG);
	CHECK(p->expiration.len == 4 && !memcmp(p->expiration.bytes, "2500", 4));
	CHECK(p->headers.num_entries == 3);
	CHECK_STR(table_value(p, "Timestamp"), "2026-12-02T08:14:59.123Z");
	CHECK_STR(table_value(p, "X-Region"), "north");
	CHECK_STR(table_value(p, "Expires"), "2026-12-02T08:15:01.623Z");
	CHECK(table_value(p, "Content-Length") == NULL);
	CHECK(p->_flags & AMQP_BASIC_HEADERS_FLAG);

	mq_props_to_block(p, 0, &block);
	CHECK_STR(block.ptr, "Message-Id: m1\nCorrelation-Id: c1\n"
		  "Reply-To: amqp://h?queue=replies\nContent-Type: application/xml\n"
		  "Timestamp: 2026-12-02T08:14:59.123Z\nX-Region: north\n"
		  "Expires: 2026-12-02T08:15:01.623Z\n");
	buf_reset(&block);
	mq_props_to_block(p, 1, &block);
	CHECK(strstr(block.ptr, "\nRedelivered: yes\n") != NULL);

	/* Past: expires at once. Over 255 bytes: stays in the table. */
	headers_reset(&h);
	add(&h, "Expires", "2020-01-01T00:00:00Z");
	for (int i = 0; i < 300; i++)
		buf_addch(&long_id, 'a' + i % 26);
	add(&h, "Message-Id", long_id.ptr);
	add(&h, "Message-Id", "second");
	CHECK(mq_props_set(&mp, &h, now, &why) == 0);
	CHECK(p->expiration.len == 1 && !memcmp(p->expiration.bytes, "0", 1));
	CHECK_STR(table_value(p, "Message-Id"), long_id.ptr);
	CHECK(p->message_id.len == 6);
	buf_reset(&block);
	mq_props_to_block(p, 0, &block);
	CHECK(!strncmp(block.ptr, "Message-Id: second\nExpires: ", 28));

	/* Only properties: no table is sent, and none read back. */
	headers_reset(&h);
	add(&h, "Message-Id", "m2");
	add(&h, "Content-Length", "5");
	CHECK(mq_props_set(&mp, &h, now, &why) == 0);
	CHECK(!(p->_flags & AMQP_BASIC_HEADERS_FLAG));
	buf_reset(&block);
	mq_props_to_block(p, 0, &block);
	CHECK_STR(block.ptr, "Message-Id: m2\n");

	/* A header name too long for a table key. */
	headers_reset(&h);
	buf_reset(&long_id);
	for (int i = 0; i < 256; i++)
		buf_addch(&long_id, 'N');
	add(&h, long_id.ptr, "v");
	errno = 0;
	CHECK(mq_props_set(&mp, &h, now, &why) == -1 && errno == EMSGSIZE);
	CHECK(strstr(why.ptr, "over 255 bytes") != NULL);
	mq_props_release(&mp);
	headers_release(&h);
	buf_release(&why);
	buf_release(&block);
	buf_release(&long_id);
}

/* Another publisher's properties and table types. */
static void test_foreign(void)
{
	amqp_table_entry_t e[4] = {
		{ .key = amqp_cstring_bytes("Count"),
		  .value = { .kind = AMQP_FIELD_KIND_I32, .value.i32 = -7 } },
		{ .key = amqp_cstring_bytes("Flag"),
		  .value = { .kind = AMQP_FIELD_KIND_BOOLEAN, .value.boolean = 1 } },
		{ .key = amqp_cstring_bytes("Text"),
		  .value = { .kind = AMQP_FIELD_KIND_UTF8,
			     .value.bytes = amqp_cstring_bytes("a\nb") } },
		{ .key = amqp_cstring_bytes("Nested"),
		  .value = { .kind = AMQP_FIELD_KIND_TABLE } },
	};
	amqp_basic_properties_t p = {
		._flags = AMQP_BASIC_HEADERS_FLAG | AMQP_BASIC_TIMESTAMP_FLAG,
		.timestamp = 1796199299,
		.headers = { .num_entries = 4, .entries = e },
	};
	struct buf block = BUF_INIT;

	mq_props_to_block(&p, 0, &block);
	CHECK_STR(block.ptr, "Count: -7\nFlag: true\nText: a b\n"
		  "Timestamp: 2026-12-02T08:14:59.000Z\n");
	buf_release(&block);
}

int main(void)
{
	char top[256];

	if (unit_scratch_dir(top, sizeof(top), "test-amqp") < 0)
		return 1;
	test_defaults();
	test_everything();
	test_refused();
	test_password(top);
	test_mapping();
	test_foreign();
	rmdir(top);
	printf("1..%d\n", unit_count);
	return unit_failed != 0;
}
