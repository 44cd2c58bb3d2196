/* producer: the shared pipeline outside the daemon, for commands that
 * produce change sets on their own (resync, delayed-run): the metadata
 * schema (migrated) and the source, the mapping validated against it, the
 * versions being built (their dual writes, as the daemon has them), the
 * engine, and a delivery whose dead letters go to the dead-letter table
 * and whose full writes supersede older dead letters. */
#ifndef SS_PRODUCER_H
#define SS_PRODUCER_H
#include <stdbool.h>

#include "deliver/store.h"
#include "sync/pipeline/pipeline.h"

struct producer {
    struct pipeline p;  /* p.m is &m once open */
    struct mapping m;
    struct search_client *client;
    struct dl_store *dls;
    char err[2048];
};

struct producer_opts {
    bool engine;          /* false: no engine and no delivery (a dry run) */
    bool flush_each_txn;  /* a transaction's changes leave at once (it is waited for) */
    int flush_interval_ms; /* > 0: overrides [delivery] flush_interval_ms */
    const char *stream;   /* its delivery stream's name ("delayed", "repair", ...) */
    /* the delivery it writes through: a daemon's node hands its own; NULL (a
     * command): one of the producer's own */
    struct deliver_hub *hub;
};

/* Open everything. EXIT_OK, EXIT_USAGE (the mapping does not match the
 * source) or EXIT_RUNTIME, with pr->err; producer_close in every case. */
int producer_open(struct producer *pr, const struct ss_config *cfg,
                  const struct producer_opts *o);
void producer_close(struct producer *pr);

/* The document table and key document id `id` of index config (or
 * shard unit) ix names: a parent/child table whose join name prefixes the
 * key part ("review-7" → that table, key "7"), else the root (key the id's
 * key part). A shard unit's ids carry their shard (mp_doc_key): an id of
 * another shard is none of ix's, SIZE_MAX. *key is malloc'd. */
size_t producer_doc_key(const struct mp_index *ix, const char *id, char **key);

#endif
