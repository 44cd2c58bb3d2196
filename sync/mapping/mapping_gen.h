/* mapping_gen: a mapping generation — one immutable, validated mapping,
 * shared by reference count between the threads that read it.
 *
 * `searchsync run`'s supervisor (sync/node/supervisor.c) loads, validates and
 * publishes each generation; the reader adopts a new one between two
 * transactions (sync/sources/binlog_source.c); a build pins the generation in force
 * when it starts (struct build, sync/node/daemon_builds.c) and its reindex runner
 * builds every page from that one (sync/reindex/reindex_runner.c), whatever the
 * reader adopts later. An edit of the build's index config cancels the build
 * and queues it again under the new generation (builds_mapping_changed), so
 * a version is never built from two mappings.
 *
 * Immutable once published, with one exception: the run-time fields of an
 * index config (state, current_version) are kept up to date by the reader,
 * the only thread that reads them; runners read the configuration only. A
 * generation is freed when its last reference goes (mapping_gen_unref, from
 * any thread). */
#ifndef SS_MAPPING_GEN_H
#define SS_MAPPING_GEN_H
#include <stdatomic.h>

#include "sync/mapping/mapping.h"
#include "sbuf.h"

struct mapping_gen {
    atomic_int refs;
    unsigned long id;
    struct mapping m;
    sbuf sig; /* what a reload compares (the canonical file and each epoch) */
};

/* A generation holding m (moved in: *m is emptied), one reference, id 0. */
struct mapping_gen *mapping_gen_new(struct mapping *m);
struct mapping_gen *mapping_gen_ref(struct mapping_gen *g); /* NULL-safe; returns g */
void mapping_gen_unref(struct mapping_gen *g);              /* NULL-safe */
/* The index config of g named alias (its first shard's unit when it reads
 * shard tables: sync/mapping/mapping_shard.h), or NULL. */
const struct mp_index *mapping_gen_index(const struct mapping_gen *g, const char *alias);
/* The canonical text of every unit of alias in g, each with its shard: two
 * generations hold the same index config when these are equal. */
void mapping_gen_index_write(const struct mapping_gen *g, const char *alias, sbuf *out);

#endif
