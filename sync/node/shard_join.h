/* shard_join: a shard that joins an index config over shard tables
 * (sync/mapping/mapping_shard.h) has its rows built into the live version —
 * the rows it already holds when the reader starts routing it (a table
 * renamed into the family, a shard created while no daemon ran, one whose
 * other tables came later), while its live changes are written as it is
 * read: the dual-write rule of a reindex, for one shard.
 *
 * The reader posts a shard when it adopts the first generation that routes
 * it (daemon_between_txns) or at start (the shards the live version has not
 * read: index_configs.shards_read); so every change after the join's first
 * read snapshot is routed to it, and every row before it is in a page. A
 * page is read in a snapshot and carries the version of the snapshot's
 * binlog position: a live change older than it loses to it, a newer one
 * wins. While it runs the live version keeps deletes longer (index.gc_deletes
 * raised), so a page that lands after a newer delete of one of its rows is
 * refused, not a resurrection. When the shard is read whole it is recorded
 * in index_configs.shards_read; a stop midway reads it again at the next
 * start. One thread, its own connections and delivery stream ("join").
 *
 * Its health (shard_joins_healthy, the node's "shard joins" row): the
 * thread beats at each page read and delivered and at each step of a join
 * (its connections, the engine's gc_deletes), each bounded by a timeout of
 * the configuration (the source's read timeout, the engine's request
 * timeout, [delivery] drain_timeout_ms for a page's delivery), so a long
 * shard is never taken for a stall; waiting for a shard to read, or for
 * room in delivery, is well. */
#ifndef SS_SYNC_SHARD_JOIN_H
#define SS_SYNC_SHARD_JOIN_H
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "liveness.h"
#include "sync/mapping/mapping.h"

struct deliver_hub;
struct deliver;

struct shard_joins {
    const struct ss_config *cfg;
    struct deliver_hub *hub; /* the node's delivery: the joins write through it */
    pthread_t th;
    bool running;
    atomic_int stop;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    char **q; /* "alias\x1fdb.table" waiting */
    size_t nq;
    unsigned long long joined; /* shards read whole since start */
    struct liveness live;      /* its thread's beats (shard_joins_healthy) */
    pthread_mutex_t cur_mu;    /* guards the two below, for the health's reads */
    struct deliver *d;         /* the join's stream while one runs */
    char cur[300];             /* "shard S of index A" while one runs */
};

int shard_joins_start(struct shard_joins *j, const struct ss_config *cfg,
                      struct deliver_hub *hub);
/* The shard unit of alias, to read into its live version. */
void shard_joins_post(struct shard_joins *j, const char *alias, const char *unit);
void shard_joins_stop(struct shard_joins *j); /* idempotent; a join midway is read again */
/* The joins thread is well: it has beaten within bound_ms (the node's
 * bound), waits for a shard to read or for room in delivery, or was
 * stopped; else false with why (the shard it reads, or its death). Not
 * started: well. Any thread. */
bool shard_joins_healthy(struct shard_joins *j, int64_t bound_ms, char *why, size_t whylen);
/* its named wait between joins */
#define JOINS_WAIT_IDLE "no shard to read"

/* At start: for every index config over shard tables with a live version,
 * its units in m the live version has not read (index_configs.shards_read)
 * are posted; a config that records none yet (a version built before shards
 * were recorded) takes m's as read. Reader thread, on meta. 0 or -1 (err). */
struct st_mysql;
int shard_joins_at_start(struct shard_joins *j, struct st_mysql *meta, const char *source,
                         const struct mapping *m, char *err, size_t errlen);

/* index_configs.shards_read of alias (source: the mapping's name): label
 * added or removed, or (set) the units of alias in m (a version built from
 * them went live); with several sources each one's lines are its own and
 * name it (shard_label). Any thread, on meta. */
int shards_read_add(struct st_mysql *meta, const char *source, const char *alias,
                    const char *label, bool add, char *err, size_t errlen);
int shards_read_set(struct st_mysql *meta, const char *source, const char *alias,
                    const struct mapping *m, char *err, size_t errlen);
/* A unit's line in shards_read: its shard ("db.table"), after its source
 * ("east/db.table") in an index config of several sources. */
struct sbuf;
void shard_label(const struct mp_index *u, struct sbuf *out);

#endif
