/* trickle-admin: msg-trickle's operator commands (trickle-admin.h). */
#include "trickle-admin.h"

#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>

#include "channel.h"
#include "clock.h"
#include "diag.h"
#include "frame.h"
#include "id.h"
#include "spool.h"
#include "store.h"

/* How long a command waits for a running instance to take it up. */
#define APPLY_WAIT_MS 10000

static const char *const command_names[] = { "retry", "skip", "release", NULL };

const char *trickle_admin_command_name(enum trickle_command c)
{
	return command_names[c];
}

int trickle_admin_command_of(const struct headers *h, enum trickle_command *c)
{
	const char *v = headers_get(h, "Command");

	for (int i = 0; v && command_names[i]; i++)
		if (!strcmp(v, command_names[i])) {
			*c = (enum trickle_command)i;
			return 0;
		}
	return -1;
}

void trickle_admin_commands_addr(const char *state, struct buf *out)
{
	buf_reset(out);
	buf_addf(out, "dir:%s/commands", state);
}

int trickle_admin_commands_make(const char *state)
{
	struct buf dir = BUF_INIT, err = BUF_INIT;
	struct spool *sp;

	buf_addf(&dir, "%s/commands", state);
	sp = spool_open(dir.ptr, 1, &err);
	if (sp)
		spool_close(sp);
	buf_release(&dir);
	buf_release(&err);
	return sp ? 0 : -1;
}

/* ---- reading the state ------------------------------------------------------------ */

/* One entity as status shows it. */
struct entity_view {
	const char *key;
	size_t key_len;
	struct trickle_entity e;
	struct buf waiting;	/* versions, as text, each ending in '\0' */
	size_t nwaiting;
};

/* The versions of key waiting (all but the current one) into v. */
static int read_waiting(struct store *s, enum trickle_order o,
			struct entity_view *v)
{
	struct store_iter it;
	struct store_rec rec;
	struct buf prefix = BUF_INIT;
	size_t off = 2 + v->key_len;
	int r;

	buf_reset(&v->waiting);
	v->nwaiting = 0;
	trickle_version_key(&prefix, v->key, v->key_len, NULL, 0);
	store_iter_init(&it, s, TRICKLE_VERSION, prefix.ptr, prefix.len);
	while ((r = store_iter_next(&it, &rec, NULL)) == 1) {
		const char *sk = rec.key + off;
		size_t n = rec.key_len - off;
		if ((v->e.state == TR_IN_FLIGHT || v->e.state == TR_FAILED) &&
		    n == v->e.current.len && !memcmp(sk, v->e.current.ptr, n))
			continue;
		trickle_version_text(o, sk, n, &v->waiting);
		buf_addch(&v->waiting, '\0');
		v->nwaiting++;
	}
	store_iter_release(&it);
	buf_release(&prefix);
	return r;
}

static enum trickle_order order_of(struct store *s)
{
	struct buf v = BUF_INIT;
	int text = store_get(s, TRICKLE_META, "order", 5, &v, NULL) > 0 &&
		   !strcmp(v.ptr, "text");

	buf_release(&v);
	return text ? TRICKLE_TEXT : TRICKLE_NUMBER;
}

int trickle_admin_totals(struct store *s, struct trickle_totals *t)
{
	struct store_iter it;
	struct store_rec rec;
	struct buf value = BUF_INIT;
	struct trickle_entity e;
	uint64_t versions = 0;
	int r;

	memset(t, 0, sizeof(*t));
	trickle_entity_init(&e);
	store_iter_init(&it, s, TRICKLE_ENTITY, "", 0);
	while ((r = store_iter_next(&it, &rec, &value)) == 1) {
		if (trickle_entity_decode(&e, value.ptr, value.len) < 0)
			continue;
		t->failed += e.state == TR_FAILED;
		t->in_flight += e.state == TR_IN_FLIGHT;
	}
	store_iter_release(&it);
	store_iter_init(&it, s, TRICKLE_VERSION, "", 0);
	while (r == 0 && store_iter_next(&it, &rec, NULL) == 1)
		versions++;
	store_iter_release(&it);
	t->waiting = versions - t->failed - t->in_flight;
	trickle_entity_release(&e);
	buf_release(&value);
	return r;
}

/* ---- status ------------------------------------------------------------------------ */

static void add_time(struct buf *out, int64_t ms)
{
	char ts[TIMESTAMP_LEN + 1];

	if (!ms) {
		buf_addch(out, '-');
		return;
	}
	timestamp_format(ts, ms);
	buf_addstr(out, ts);
}

static void add_version(struct buf *out, enum trickle_order o, const struct buf *k)
{
	if (!k->len)
		buf_addch(out, '-');
	else
		trickle_version_text(o, k->ptr, k->len, out);
}

static void print_text(const struct entity_view *v, enum trickle_order o)
{
	struct buf line = BUF_INIT;
	const struct trickle_entity *e = &v->e;
	int has_current = e->state == TR_IN_FLIGHT || e->state == TR_FAILED;

	buf_add(&line, v->key, v->key_len);
	buf_addf(&line, "\t%s\t", trickle_state_name(e->state));
	add_version(&line, o, has_current ? &e->current : &(struct buf)BUF_INIT);
	buf_addch(&line, '\t');
	add_time(&line, has_current ? e->since : 0);
	buf_addf(&line, "\t%llu\t", (unsigned long long)e->attempts);
	for (size_t i = 0, at = 0; i < v->nwaiting; i++) {
		buf_addf(&line, "%s%s", i ? " " : "", v->waiting.ptr + at);
		at += strlen(v->waiting.ptr + at) + 1;
	}
	if (!v->nwaiting)
		buf_addch(&line, '-');
	buf_addch(&line, '\t');
	add_version(&line, o, &e->last_ok);
	buf_addch(&line, '\t');
	if (e->state == TR_FAILED)
		buf_addf(&line, "%s: %s", e->status.len ? e->status.ptr : "-",
			 e->error.len ? e->error.ptr : "-");
	else
		buf_addch(&line, '-');
	printf("%s\n", line.ptr);
	buf_release(&line);
}

static json_t *json_version(enum trickle_order o, const struct buf *k)
{
	struct buf t = BUF_INIT;
	json_t *j;

	if (!k->len)
		return json_null();
	trickle_version_text(o, k->ptr, k->len, &t);
	j = json_stringn(t.ptr, t.len);
	buf_release(&t);
	return j;
}

static json_t *json_time(int64_t ms)
{
	char ts[TIMESTAMP_LEN + 1];

	if (!ms)
		return json_null();
	timestamp_format(ts, ms);
	return json_string(ts);
}

static json_t *json_of(const struct entity_view *v, enum trickle_order o)
{
	const struct trickle_entity *e = &v->e;
	int has_current = e->state == TR_IN_FLIGHT || e->state == TR_FAILED;
	json_t *j = json_object(), *waiting = json_array(), *failure = json_null();
	struct buf none = BUF_INIT;

	for (size_t i = 0, at = 0; i < v->nwaiting; i++) {
		json_array_append_new(waiting, json_string(v->waiting.ptr + at));
		at += strlen(v->waiting.ptr + at) + 1;
	}
	if (e->state == TR_FAILED) {
		failure = json_object();
		json_object_set_new(failure, "status", e->status.len ?
				    json_string(e->status.ptr) : json_null());
		json_object_set_new(failure, "error", e->error.len ?
				    json_string(e->error.ptr) : json_null());
		json_object_set_new(failure, "at", json_time(e->failed_at));
	}
	json_object_set_new(j, "key", json_stringn(v->key, v->key_len));
	json_object_set_new(j, "state", json_string(trickle_state_name(e->state)));
	json_object_set_new(j, "version", json_version(o, has_current ? &e->current : &none));
	json_object_set_new(j, "since", json_time(has_current ? e->since : 0));
	json_object_set_new(j, "attempts", json_integer((json_int_t)e->attempts));
	json_object_set_new(j, "waiting", waiting);
	json_object_set_new(j, "last_ok", json_version(o, &e->last_ok));
	json_object_set_new(j, "failure", failure);
	json_object_set_new(j, "next_attempt", json_time(e->next_at));
	return j;
}

/* Is rec's key one of keys (or are there none)? Marks it found. */
static int wanted(const struct store_rec *rec, char **keys, int nkeys, char *found)
{
	if (!nkeys)
		return 1;
	for (int i = 0; i < nkeys; i++)
		if (strlen(keys[i]) == rec->key_len && !memcmp(keys[i], rec->key, rec->key_len))
			return found[i] = 1;
	return 0;
}

static int status(const char *dir, int json, char **keys, int nkeys)
{
	struct store_err err;
	struct store *s = store_open_snapshot(dir, &err);
	struct store_iter it;
	struct store_rec rec;
	struct entity_view v = { .waiting = BUF_INIT };
	struct buf value = BUF_INIT;
	json_t *list;
	char *found;
	enum trickle_order o;
	int r, code = 0;

	if (!s) {
		warnx_msg("%s", err.msg);
		return err.exit;
	}
	list = json_array();
	found = xcalloc((size_t)nkeys + 1, 1);
	o = order_of(s);
	trickle_entity_init(&v.e);
	store_iter_init(&it, s, TRICKLE_ENTITY, "", 0);
	if (!json)
		printf("KEY\tSTATE\tVERSION\tSINCE\tATTEMPTS\tWAITING\tLAST-OK\tFAILURE\n");
	while ((r = store_iter_next(&it, &rec, &value)) == 1) {
		if (!wanted(&rec, keys, nkeys, found))
			continue;
		v.key = rec.key;
		v.key_len = rec.key_len;
		if (trickle_entity_decode(&v.e, value.ptr, value.len) < 0 ||
		    read_waiting(s, o, &v) < 0) {
			warnx_msg("'%s': a damaged entity record", dir);
			code = EX_DATAERR;
			continue;
		}
		if (json)
			json_array_append_new(list, json_of(&v, o));
		else
			print_text(&v, o);
	}
	store_iter_release(&it);
	if (json) {
		json_dumpf(list, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
		putchar('\n');
	}
	for (int i = 0; i < nkeys; i++)
		if (!found[i]) {
			warnx_msg("no entity '%s' in '%s'", keys[i], dir);
			code = EX_DATAERR;
		}
	if (r < 0) {
		warnx_msg("cannot read '%s': %s", dir, store_last_error(s));
		code = EX_IOERR;
	}
	if (fflush(stdout) == EOF || ferror(stdout)) {
		warn_errno("cannot write 'stdout'");
		code = EX_IOERR;
	}
	json_decref(list);
	free(found);
	trickle_entity_release(&v.e);
	buf_release(&v.waiting);
	buf_release(&value);
	store_close(s);
	return code;
}

/* ---- retry, skip, release -------------------------------------------------------- */

/* Does c apply to key as the snapshot has it? 0, or the exit status
 * after a diagnostic. */
static int check_command(struct store *s, enum trickle_command c, const char *key,
			 const char *dir)
{
	struct buf value = BUF_INIT;
	struct trickle_entity e;
	int r = store_get(s, TRICKLE_ENTITY, key, strlen(key), &value, NULL);
	int code = 0;

	trickle_entity_init(&e);
	if (r == 0) {
		warnx_msg("no entity '%s' in '%s'", key, dir);
		code = EX_DATAERR;
	} else if (r < 0 || trickle_entity_decode(&e, value.ptr, value.len) < 0) {
		warnx_msg("'%s': cannot read entity '%s'", dir, key);
		code = EX_DATAERR;
	} else if (!(e.state == TR_IN_FLIGHT ||
		     (e.state == TR_FAILED && c != TRICKLE_RELEASE))) {
		warnx_msg("%s: entity '%s' is %s, not %s", command_names[c], key,
			  trickle_state_name(e.state),
			  c == TRICKLE_RELEASE ? "in flight" : "failed or in flight");
		code = EX_DATAERR;
	}
	trickle_entity_release(&e);
	buf_release(&value);
	return code;
}

/* Write c on key into the commands spool, durably: 0 or the exit status. */
static int queue_command(const char *dir, enum trickle_command c, const char *key)
{
	struct buf addr = BUF_INIT, err = BUF_INIT;
	struct frame_writer fw;
	struct headers h;
	char id[UUID_STR_LEN + 1], ts[TIMESTAMP_LEN + 1];
	int code = 0;

	trickle_admin_commands_addr(dir, &addr);
	if (trickle_admin_commands_make(dir) < 0 ||
	    channel_writer_open(addr.ptr, &fw, &err) < 0) {
		warnx_msg("cannot open '%s'%s%s", addr.ptr, err.len ? ": " : "", err.ptr);
		buf_release(&addr);
		buf_release(&err);
		return EX_CANTCREAT;
	}
	headers_init(&h);
	id_new(id);
	timestamp_format(ts, clock_now_ms());
	headers_set(&h, "Message-Id", id);
	headers_set(&h, "Timestamp", ts);
	headers_set(&h, "Command", command_names[c]);
	headers_set(&h, "Entity-Key", key);
	if (frame_writer_write(&fw, &h, "", 0) < 0 || frame_writer_close(&fw) < 0) {
		warn_errno("cannot write '%s'", addr.ptr);
		code = errno == ENOSPC ? EX_TEMPFAIL : EX_IOERR;
	}
	frame_writer_release(&fw);
	headers_release(&h);
	buf_release(&addr);
	buf_release(&err);
	return code;
}

/* Files waiting in DIR/commands/new and cur: how many. */
static int commands_queued(const char *dir)
{
	static const char *const subdirs[] = { "new", "cur" };
	int n = 0;

	for (int i = 0; i < 2; i++) {
		struct buf path = BUF_INIT;
		DIR *d;
		struct dirent *e;
		buf_addf(&path, "%s/commands/%s", dir, subdirs[i]);
		if ((d = opendir(path.ptr))) {
			while ((e = readdir(d)))
				n += e->d_name[0] != '.';
			closedir(d);
		}
		buf_release(&path);
	}
	return n;
}

/* No instance holds the state: run the feed for the commands alone. */
static int apply_now(const char *argv0, const char *dir, trickle_feed_fn feed)
{
	char *args[] = { (char *)argv0, "--state", (char *)dir, NULL };

	optind = 0;	/* the feed parses its own command line afresh */
	return feed(3, args, 1);
}

static int command(const char *argv0, enum trickle_command c, const char *dir,
		   char **keys, int nkeys, trickle_feed_fn feed)
{
	struct store_err err;
	struct store *s = store_open_snapshot(dir, &err);
	int code = 0;

	if (!s) {
		warnx_msg("%s", err.msg);
		return err.exit;
	}
	for (int i = 0; i < nkeys && !code; i++)
		code = check_command(s, c, keys[i], dir);
	store_close(s);
	for (int i = 0; i < nkeys && !code; i++)
		code = queue_command(dir, c, keys[i]);
	if (code)
		return code;
	if (!(s = store_open(dir, &err)) && err.status != STORE_BUSY) {
		warnx_msg("%s", err.msg);
		return err.exit;
	}
	if (s) {
		store_close(s);
		return apply_now(argv0, dir, feed);
	}
	for (int waited = 0; commands_queued(dir) && waited < APPLY_WAIT_MS; waited += 50)
		poll(NULL, 0, 50);
	for (int i = 0; i < nkeys; i++)
		warnx_msg("%s '%s': %s", command_names[c], keys[i],
			  commands_queued(dir) ? "queued for the running instance"
					       : "applied by the running instance");
	return 0;
}

int trickle_admin_main(int argc, char **argv, trickle_feed_fn feed)
{
	static const struct option longopts[] = {
		{ "state", required_argument, NULL, 's' },
		{ "json", no_argument, NULL, 'j' },
		{ NULL, 0, NULL, 0 },
	};
	const char *dir = NULL;
	int json = 0, c, which = -1;

	if (!strcmp(argv[1], "status"))
		which = 3;
	for (int i = 0; i < 3; i++)
		if (!strcmp(argv[1], command_names[i]))
			which = i;
	if (which < 0)
		return -1;
	diag_init(argv[0]);
	optind = 2;
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		if (c == 's')
			dir = optarg;
		else if (c == 'j' && which == 3)
			json = 1;
		else
			goto usage;
	}
	if (!dir || (which < 3 && optind == argc))
		goto usage;
	if (which == 3)
		return status(dir, json, argv + optind, argc - optind);
	return command(argv[0], (enum trickle_command)which, dir, argv + optind,
		       argc - optind, feed);
usage:
	fprintf(stderr, "usage: msg-trickle status --state dir [--json] [key ...]\n"
			"       msg-trickle retry|skip|release --state dir key ...\n");
	return EX_USAGE;
}
