/*
 * store-index: the store's records in memory: a skip list in (kind, key)
 * byte order for lookups and ordered walks, and a binary heap of the
 * records that have a deadline, earliest first. Values stay in the log;
 * a node says where its record is.
 */
#ifndef MSG_STORE_INDEX_H
#define MSG_STORE_INDEX_H

#include <stddef.h>
#include <stdint.h>

#include "store-format.h"

#define INDEX_LEVEL_MAX 24	/* skip list: enough for 4^24 records */

struct index_node {
	uint64_t roff;		/* offset of its record in the log */
	uint64_t vlen;
	int64_t deadline;	/* 0: none, and not in the heap */
	size_t heap_pos;
	uint16_t key_len;
	uint8_t kind_len;
	uint8_t level;
	char op;		/* REC_PUT or REC_DEL while pending in recovery */
	struct index_node *next[];	/* level links, then "kind\0key\0" */
};

struct store_index {
	struct index_node *head[INDEX_LEVEL_MAX];
	int levels;
	uint64_t rng;		/* the skip list's coin */
	struct index_node **heap;
	size_t heap_len, heap_cap;
	uint64_t records;
	uint64_t live_bytes;	/* log bytes the records take */
};

void index_init(struct store_index *x);
/* Free every node and the heap; the index is empty and usable again. */
void index_release(struct store_index *x);

/* A node for nm, not yet in the index, its other fields zero. */
struct index_node *index_node_new(struct store_index *x, const struct rec_name *nm);
const char *node_kind(const struct index_node *n);
const char *node_key(const struct index_node *n);
/* The log bytes n's record takes. */
uint64_t node_rlen(const struct index_node *n);
/* n's name against nm, in (kind, key) byte order, as memcmp. */
int node_cmp(const struct index_node *n, const struct rec_name *nm);
int bytes_cmp(const char *a, size_t an, const char *b, size_t bn);

/* The node named nm, or NULL. */
struct index_node *index_find(struct store_index *x, const struct rec_name *nm);
/* The first node at or after nm, or NULL. */
struct index_node *index_seek(struct store_index *x, const struct rec_name *nm);
/* The first node of all, or NULL; then n->next[0]. */
struct index_node *index_first(const struct store_index *x);
/* The node with the earliest deadline (ties in key order), or NULL. */
struct index_node *index_earliest(const struct store_index *x);

/* Put n in the index, in place of (and freeing) a node of its name. */
void index_put(struct store_index *x, struct index_node *n);
/* Remove and free the node named nm, if there is one. */
void index_delete(struct store_index *x, const struct rec_name *nm);

#endif
