/*
 * aggregate: the core of the Aggregator (msg-aggregate): a table of open
 * groups keyed by correlation, their members, completion, deadlines and
 * limits (aggregate-group.c, aggregate-timer.c); the keys of closed groups
 * remembered for a while (aggregate-closed.h); the message a group
 * becomes (aggregate-build.c); and every change as store records, so a
 * tool with --state rebuilds its groups after a restart
 * (aggregate-record.c). Nothing here reads input, writes output, opens
 * the store or evaluates expressions: the tool does, and hands the
 * results in.
 *
 * A tool's loop, in short:
 *
 *	r = agg_add(t, &in, &g, &why);		// one message
 *	AGG_ADDED: reason = agg_completed(t, g) (or --until on agg_build)
 *	AGG_FULL_*: per --on-limit, agg_oldest(t) released as "limit", retry
 *	release: agg_build(g, &opt, reason, &h, &body, &err); emit;
 *	         agg_closed_add(c, g, now); agg_remove(t, g)
 *	timers:  while ((g = agg_expired(t, now, &reason))) release
 */
#ifndef MSG_AGGREGATE_H
#define MSG_AGGREGATE_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "expr.h"
#include "header.h"
#include "keyset.h"
#include "seqset.h"

/* Why a group was released: Aggregate-Reason's words. */
enum agg_reason {
	AGG_OPEN,		/* not released */
	AGG_COMPLETE,		/* every Sequence-Number 1..Sequence-Size */
	AGG_COUNT,		/* --count members */
	AGG_UNTIL,
	AGG_TIMEOUT,		/* --timeout after the first member */
	AGG_IDLE,		/* --idle after the latest member */
	AGG_CLOSE,
	AGG_END,
	AGG_LIMIT,		/* released to make room (release-oldest) */
};
const char *agg_reason_name(enum agg_reason r);

/* ---- the group table (aggregate-group.c, aggregate-timer.c) ---- */

struct agg_limits {
	uint64_t count;		/* --count: complete at this many; 0 = off */
	int64_t timeout_ms;	/* 0 = off */
	int64_t idle_ms;	/* 0 = off */
	uint64_t max_groups;	/* 0 = no limit */
	uint64_t max_members;	/* per group; 0 = no limit */
	uint64_t max_bytes;	/* bodies of every open group; 0 = no limit */
};

/* Kept small: a million open members are a million of these. */
struct agg_member {
	size_t off, len;	/* its body in the group's data */
	uint64_t seq;		/* Sequence-Number, 0 when it has none */
	uint64_t serial;	/* table-wide arrival order: store keys */
	double best;		/* the -b number (NaN: none) */
	uint32_t id_len;	/* its Message-Id's, after the body; 0: none
				 * (a header is far shorter than 4 GiB) */
	enum body_kind kind;
};

struct agg_live;

/* Fields the tool reads; the table owns them. */
struct agg_group {
	char *key;		/* the correlation key, NUL-terminated */
	size_t key_len;
	struct agg_member *m;	/* in arrival order */
	size_t n, alloc;
	/* Every member's body, a NUL, its Message-Id and a NUL, in one
	 * buffer: a member costs no allocation of its own. */
	struct buf data;
	uint64_t bytes;		/* of the members' bodies */
	int64_t first, last;	/* arrival of the first and latest member */
	uint64_t size;		/* Sequence-Size, when size_known */
	int size_known;
	struct seqset seen;	/* Sequence-Numbers present */
	uint64_t marker;	/* serial of its Sequence-Size 0 marker (a
				 * message that is no member), or 0 */
	uint64_t duplicates;	/* members ignored as already present */
	/* Headers every member so far carries with the same value,
	 * per-message ones left out (agg_common_skip); and where the
	 * first had Correlation-Id and Sequence-*, whatever their values:
	 * agg_build sets or removes those in place. */
	struct headers common;
	/* the table's bookkeeping */
	uint32_t hash;
	uint64_t created;	/* order of creation: ties of time */
	struct agg_group *chain;
	size_t heap_pos[2];
	uint32_t *ids;		/* open addressing: member index + 1 */
	size_t ids_cap;
	/* --until's aggregate so far (aggregate-live.h): made by whoever
	 * evaluates --until, freed with the group. */
	struct agg_live *live;
};

/* A member's body (NUL-terminated, may hold NUL) and Message-Id (or
 * NULL): valid until the group changes. */
static inline const char *agg_member_body(const struct agg_group *g,
					  const struct agg_member *m)
{
	return g->data.ptr + m->off;
}

static inline const char *agg_member_id(const struct agg_group *g,
					const struct agg_member *m)
{
	return m->id_len ? g->data.ptr + m->off + m->len + 1 : NULL;
}

/* Numbered members in number order, then the others as they came: the
 * order of the aggregate's body. */
static inline int agg_member_cmp(const struct agg_member *x,
				 const struct agg_member *y)
{
	if (!x->seq != !y->seq)
		return x->seq ? -1 : 1;
	if (x->seq != y->seq)
		return x->seq < y->seq ? -1 : 1;
	return x->serial < y->serial ? -1 : x->serial > y->serial;
}

struct agg_table;

struct agg_table *agg_table_new(const struct agg_limits *lim);
void agg_table_free(struct agg_table *t);
/* Change the limits (not the timers): restoring a store takes every
 * member back, whatever limits this run was given. */
void agg_table_set_limits(struct agg_table *t, const struct agg_limits *lim);

/* One message for agg_add. */
struct agg_input {
	const char *key;	/* the correlation key (not empty) */
	size_t key_len;
	const struct headers *h;
	const char *body;
	size_t len;
	/* expr_env_kind() of the env the message is bound to: the rule
	 * every tool uses to tell XML, JSON and text apart */
	enum body_kind kind;
	int64_t now;		/* ms: wall clock or the Timestamp (--clock) */
	double best;		/* the -b value, NaN without -b */
	uint64_t serial;	/* 0: the next; from a record when restoring */
};

enum agg_added {
	AGG_ADDED,		/* a member (or a Sequence-Size 0 marker) */
	AGG_DUPLICATE,		/* its Message-Id or Sequence-Number is there:
				 * ignored, counted in the group */
	AGG_INVALID,		/* bad sequence headers: why says how */
	AGG_FULL_GROUPS,	/* a new group would pass max_groups */
	AGG_FULL_MEMBERS,	/* *g is at max_members */
	AGG_FULL_BYTES,		/* max_bytes would be passed */
};

/*
 * Add a message to its group, creating the group. *g is the group
 * (NULL for AGG_FULL_GROUPS and for AGG_INVALID when the group does not
 * exist); why is a static reason for AGG_INVALID, as
 * "Sequence-Number '0': out of range". When limits refuse the message
 * nothing changed: make room and call again.
 */
enum agg_added agg_add(struct agg_table *t, const struct agg_input *in,
		       struct agg_group **g, const char **why);
/* The group of key, or NULL. */
struct agg_group *agg_find(struct agg_table *t, const char *key, size_t key_len);
/* A new group of key without members (none is open for it), its
 * Content-Type type (or none): what a closing message for a key with no
 * open group releases, an empty document of its kind. */
struct agg_group *agg_open_empty(struct agg_table *t, const char *key,
				 size_t key_len, const char *type, int64_t now);
/* Has g met a condition of its own (sequence or --count)? AGG_OPEN if
 * not; --until is the tool's, on agg_build's document. */
enum agg_reason agg_completed(const struct agg_table *t, const struct agg_group *g);
/* Forget g and free it (after it was emitted or discarded). */
void agg_remove(struct agg_table *t, struct agg_group *g);

uint64_t agg_groups(const struct agg_table *t);
uint64_t agg_bytes(const struct agg_table *t);
/* The next serial agg_add will give (restoring moves it past every
 * serial it saw). */
uint64_t agg_next_serial(const struct agg_table *t);
/* Every open group, in no order: first with NULL, then the last one
 * (take the next before removing the one in hand). */
struct agg_group *agg_next_group(struct agg_table *t, struct agg_group *after);

/* The group whose first member arrived first (ties: created first), or
 * NULL: what release-oldest releases. O(1). */
struct agg_group *agg_oldest(const struct agg_table *t);
/* The earliest --timeout or --idle deadline of any group, 0 if none. */
int64_t agg_next_deadline(struct agg_table *t);
/* A group whose deadline is at or before now, with the reason of the
 * earliest deadline passed (AGG_TIMEOUT on a tie), or NULL. O(log n);
 * release or remove it before asking again. */
struct agg_group *agg_expired(struct agg_table *t, int64_t now,
			      enum agg_reason *reason);

/* ---- the message a group becomes (aggregate-build.c) ---- */

enum agg_best { AGG_BEST_NONE, AGG_BEST_MIN, AGG_BEST_MAX };

struct agg_build_opt {
	const char *wrap;	/* XML root element; NULL: "aggregate" */
	const char *separator;	/* between text bodies; NULL: none */
	size_t separator_len;
	enum agg_best best;	/* keep one member, by agg_input.best */
};

/*
 * The message g becomes, released for reason, into h and body (both
 * reset first). Message-Id and Timestamp are the caller's (message_stamp).
 *
 * Headers: every header all members (and a Sequence-Size 0 marker) carry
 * with the same value, in the first one's order, Message-History
 * included (the members' shared path; the writer appends the tool), but
 * never Message-Id, Timestamp, Content-Length, Error or Aggregate-*.
 * Then: Correlation-Id is the group key and the members' Sequence-*
 * go, since the aggregate ends their sequence; unless the members carry
 * Sequence-Stack, whose innermost entry "CORRELATION NUMBER SIZE" is
 * popped back into Correlation-Id, Sequence-Number, Sequence-Size and
 * Sequence-End (true when NUMBER is SIZE), in the places the members had
 * them, so that msg-split ... aggregate gives the parent's headers back.
 * Aggregate-Size (members), Aggregate-Reason, and Aggregate-Missing
 * ("3,5-7"; "3,9-" when Sequence-Size never came) for a sequence group
 * released without all of it.
 *
 * Body, members in order (by Sequence-Number, then those without one as
 * they came): XML members under one element named wrap, each document
 * element whole, serialised as msg-split serialises a part (no XML
 * declaration; Content-Type application/xml); JSON members as one array,
 * each value's bytes as they came without the blanks around them
 * (application/json); text joined by the separator (Content-Type as the
 * members share it). An empty group is "<wrap></wrap>", "[]" or empty as
 * the marker's Content-Type says. With a best mode, the body is that one
 * member's as it came.
 *
 * 0; -1 when the group cannot be one message (mixed kinds, a member that
 * does not parse, a malformed Sequence-Stack, a wrap that is no element
 * name), with the reason in err; MSG_NO_MEMORY when libxml2 ran out of
 * memory.
 */
int agg_build(const struct agg_group *g, const struct agg_build_opt *opt,
	      enum agg_reason reason, struct headers *h, struct buf *body,
	      struct buf *err);
/* agg_build's headers alone (those of the body's kind aside): 0, or -1
 * with err (a malformed Sequence-Stack). */
int agg_build_headers(const struct agg_group *g, enum agg_reason reason,
		      struct headers *h, struct buf *err);
/*
 * Member m's part of the default body, i its place (from 0, for err's
 * "member N"), appended to out: an XML member's document element as
 * serialised there (its parsed document into *doc when doc is not NULL,
 * the caller's to free), a JSON member's value, a text member's body.
 * 0, or -1 with err, or MSG_NO_MEMORY.
 */
struct _xmlDoc;
int agg_member_piece(const struct agg_group *g, const struct agg_member *m,
		     size_t i, struct buf *out, struct buf *err,
		     struct _xmlDoc **doc);
/* The Content-Type of an aggregate of XML or JSON; NULL for text (the
 * members' own is kept). */
const char *agg_kind_type(enum body_kind kind);
/* The start tag of g's XML aggregate: the innermost of the members'
 * Sequence-Root when its element is named wrap, else "<wrap>". */
void agg_xml_start(const struct agg_group *g, const char *wrap, struct buf *out);
/* Is wrap an element name? 0, or -1 with err. */
int agg_wrap_check(const char *wrap, struct buf *err);
/* Is header name one of a single message's own (listed at agg_build),
 * never carried from the members to the aggregate? */
int agg_common_skip(const char *name, size_t len);

/* ---- store records (aggregate-record.c) ---- */

/*
 * Kind AGG_KIND_MEMBER: one per member (and marker), put when agg_add
 * returns AGG_ADDED, deleted with its group. Key: the group key, a NUL,
 * the serial as 8 bytes big-endian, so a walk of the kind meets each
 * group's members together and in arrival order. Value: arrival ms and
 * the message's headers and body.
 *
 * Kind AGG_KIND_CLOSED: one per remembered closed key. Key: the group
 * key; value: the time it closed, a space and the digests of its
 * members' Message-Ids (agg_closed_value); the record's deadline: when it is
 * forgotten, so store_earliest finds those to delete.
 *
 * Restoring: walk AGG_KIND_MEMBER, decode each into an agg_input and
 * agg_add it (the group's deadlines follow from the arrival times);
 * walk AGG_KIND_CLOSED into the closed groups (agg_closed_restore).
 */
#define AGG_KIND_MEMBER "agg-member"
#define AGG_KIND_CLOSED "agg-closed"

void agg_member_key(struct buf *out, const char *key, size_t key_len,
		    uint64_t serial);
/* The value of a member record: in's arrival time, headers and body. */
void agg_member_value(struct buf *out, const struct agg_input *in);
/*
 * Decode a member record into in (key, serial, now, body pointing into
 * the record's bytes; h filled, reset first; kind and best are the
 * tool's to set again). 0, or -1 with errno EINVAL for a damaged record.
 */
int agg_member_decode(const char *key, size_t key_len, const char *value,
		      size_t value_len, struct agg_input *in, struct headers *h);
/* The member records g stands for (its members and its marker), and
 * the key of record i of them: what to delete when g is released. */
size_t agg_group_records(const struct agg_group *g);
void agg_group_record_key(struct buf *out, const struct agg_group *g, size_t i);



#endif
