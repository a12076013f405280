/*
 * aggregate-live: the aggregate a group would give now, kept up to date
 * member by member for --until. Building the whole group again after
 * every member made a group of n members cost O(n^2); here each member
 * is parsed and put in its place once: its part of the body's text and,
 * when the expression reads paths, its element in a document kept for
 * the group, so the expression needs no parse of the whole either.
 * What the expression sees is what agg_build would give (the default
 * strategy; not -b, and not an empty group: those are built whole).
 */
#ifndef MSG_AGGREGATE_LIVE_H
#define MSG_AGGREGATE_LIVE_H

#include "aggregate.h"
#include "buf.h"

struct agg_live;

/* opt must outlive it; want_doc: keep the document of an XML or JSON
 * aggregate too. */
struct agg_live *agg_live_new(const struct agg_build_opt *opt, int want_doc);
void agg_live_free(struct agg_live *l);

/*
 * Take in the members g gained since the last call (a group only ever
 * gains members, at the end of g->m). 0; or -1 when the group cannot be
 * one message (mixed kinds, a member that does not parse, a wrap that is
 * no element name, memory): agg_build fails on it too, and since members
 * stay, so does every later call.
 */
int agg_live_update(struct agg_live *l, const struct agg_group *g);

/* After a successful update: the body agg_build would give, its kind,
 * and its document (NULL when not kept, or for text). Valid until the
 * next update. */
const struct buf *agg_live_body(const struct agg_live *l);
enum body_kind agg_live_kind(const struct agg_live *l);
struct _xmlDoc *agg_live_doc(const struct agg_live *l);

#endif
