/*
 * trickle: the state of msg-trickle's trickle feed. Versions of an
 * entity go to the target one at a time, in version order: the next
 * only once the one before was answered with a success; a failure holds
 * the entity until a retry (timed, or an operator's). Everything lives
 * in the store, so that a crash loses nothing stored:
 *
 *   trickle-entity   KEY -> the entity (struct trickle_entity, as text);
 *                    its deadline is its next retry or resend
 *   trickle-version  KEYLEN(2) KEY VERSION -> the message (msgrec.h);
 *                    VERSION in sort order (trickle_version_key), so the
 *                    store's order is each entity's version order
 *   trickle-sent     MESSAGE-ID -> KEY, while the message is in flight
 *   trickle-meta     "order" -> "number" or "text"
 *   trickle-command  MESSAGE-ID of an operator's command applied, kept a
 *                    week: a command read again after a crash (its file
 *                    not yet deleted) is not applied twice
 *
 * The order of a batch: what the inputs bring is put (a request stored,
 * the entity marked in flight), the batch committed, and only then is
 * what was decided sent (trickle_sync); the tool's inputs are done with
 * after that. A crash before the commit forgets the batch whole (its
 * inputs are read again); after it, a message marked in flight may not
 * have gone out: it is resent by --resend-after or an operator's retry,
 * with its Message-Id, so the target can tell it again.
 */
#ifndef MSG_TRICKLE_H
#define MSG_TRICKLE_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"

struct store;

#define TRICKLE_ENTITY "trickle-entity"
#define TRICKLE_VERSION "trickle-version"
#define TRICKLE_SENT "trickle-sent"
#define TRICKLE_META "trickle-meta"
#define TRICKLE_APPLIED "trickle-command"

enum trickle_state { TR_IDLE, TR_READY, TR_IN_FLIGHT, TR_FAILED };

/* An entity as its record keeps it. Versions are in sort order. */
struct trickle_entity {
	enum trickle_state state;
	uint64_t attempts;	/* of the current version */
	int64_t since;		/* the current version was sent at, ms */
	int64_t failed_at;	/* the last failure response came at */
	int64_t next_at;	/* the next retry or resend, 0: none */
	struct buf current;	/* the version in flight or failed */
	struct buf horizon;	/* the highest version sent or done */
	struct buf last_ok;	/* the last version that succeeded */
	struct buf msgid;	/* of the current version */
	struct buf status, error;	/* of the last failure response */
};

void trickle_entity_init(struct trickle_entity *e);
void trickle_entity_release(struct trickle_entity *e);
void trickle_entity_encode(const struct trickle_entity *e, struct buf *out);
/* 0, or -1 (EINVAL) for a damaged record. */
int trickle_entity_decode(struct trickle_entity *e, const char *p, size_t n);
const char *trickle_state_name(enum trickle_state s);

/* Versions compare as integers (number) or as bytes (text). */
enum trickle_order { TRICKLE_NUMBER, TRICKLE_TEXT };
/* A version's sort key into out (reset first): 0, or -1 with why (not
 * an integer). */
int trickle_version_sortkey(enum trickle_order o, const char *v, size_t n,
			    struct buf *out, struct buf *why);
/* A sort key back as the version's text, appended to out. */
void trickle_version_text(enum trickle_order o, const char *k, size_t n,
			  struct buf *out);
/* The record key of key's version sortkey; with sortkey NULL, the prefix
 * every version of key starts with. */
void trickle_version_key(struct buf *out, const char *key, size_t klen,
			 const char *sortkey, size_t slen);

struct trickle_opt {
	enum trickle_order order;
	int latest;		/* send only the newest waiting version */
	int hold;		/* send nothing: what could go is left ready */
	int64_t retry_after, resend_after;	/* ms, 0: never */
	int64_t forget;		/* an idle entity's record goes after (ms) */
	uint64_t max_attempts;	/* 0: no limit */
	uint64_t max_in_flight;	/* 0: no cap */
};

/* Where what the feed decides goes: a message to send (its header block
 * as read, Trickle-Attempt set on a second attempt and later), a waiting
 * version superseded under --latest. 0, or -1 with why (it cannot be
 * written: the message is left where it was). */
struct trickle_out {
	void *ctx;
	int (*send)(void *ctx, const char *block, size_t n, const char *body,
		    size_t len, struct buf *why);
	void (*superseded)(void *ctx, const char *block, size_t n,
			   const char *body, size_t len, const char *what);
};

struct trickle_counts {
	uint64_t sent, succeeded, failed, retried, resent, superseded,
		 skipped, released;
};

enum trickle_verdict {
	TRICKLE_STORED, TRICKLE_DUPLICATE, TRICKLE_STALE, TRICKLE_INVALID,
};

enum trickle_command { TRICKLE_RETRY, TRICKLE_SKIP, TRICKLE_RELEASE };

struct trickle;

struct trickle *trickle_new(const struct trickle_opt *opt, struct store *s,
			    const struct trickle_out *out);
void trickle_free(struct trickle *tr);
/*
 * Take up the state the store holds: the entities in flight counted, the
 * ready ones sent (as the cap allows). 0, or -1 with errno (EINVAL: a
 * damaged record, or the store kept with the other --version-order,
 * why says which).
 */
int trickle_restore(struct trickle *tr, int64_t now, struct buf *why);

/* A request: key's version, the message (header block as read, body).
 * The verdict, or -1 (store). STALE and INVALID say why. */
int trickle_request(struct trickle *tr, const char *key, size_t klen,
		    const char *version, size_t vlen, const char *msgid,
		    const char *block, size_t blen, const char *body,
		    size_t len, int64_t now, struct buf *why);
/* A response to the message msgid: 1 matched, 0 matched nothing in
 * flight, -1 (store). status and error are kept on a failure. */
int trickle_response(struct trickle *tr, const char *msgid, int success,
		     const char *status, const char *error, int64_t now);
/* An operator's command on key, from the message id: 1 done, 0 it does
 * not apply (why says why), 2 it was applied before (read again after a
 * crash), -1 (store). */
int trickle_command(struct trickle *tr, enum trickle_command c, const char *id,
		    const char *key, size_t klen, int64_t now, struct buf *why);
/* Retries and resends due by now: 0 or -1 (store). */
int trickle_tick(struct trickle *tr, int64_t now);
/* The next timer (a retry, a resend, an idle entity forgotten), 0 if
 * none. */
int64_t trickle_deadline(const struct trickle *tr);
/* Is a failed entity waiting for its --retry-after? (A count kept as
 * entities change: no scan.) */
int trickle_retry_pending(const struct trickle *tr);
/* Commit, then send what was decided: 0, or -1 with errno (store). */
int trickle_sync(struct trickle *tr);
/* Entities in flight now. */
uint64_t trickle_in_flight(const struct trickle *tr);
const struct trickle_counts *trickle_counts(const struct trickle *tr);

#endif
