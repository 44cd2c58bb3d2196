/* streams: the producers' streams and their order promise (see streams.h).
 *
 * Ordered: every document such a stream submits carries the version of the
 * read it was built from, and its reads only move forward — a resync takes
 * one read; a delayed run, a check's repair (and the daily replay, a check
 * too) and a shard's join one per page (pipeline_snapshot_begin: the
 * binlog's end, read before each); a build's worker one per page or per
 * SNAPSHOT_REUSE_MS (sync/reindex/reindex_runner.c). A document read twice
 * by one stream is read again later, so never with an older version.
 * Not ordered: a replay of dead letters submits them in the order they
 * died (their ids), and dead letters of one document from several streams
 * (a build's page and a live write) need not have died in version order;
 * the engine's external versions settle them, and a newer full write that
 * landed has deleted them already (src/deliver/store.c). */
#include "sync/pipeline/streams.h"

#include <string.h>

static const struct {
    const char *name;
    bool prefix; /* "reindex:" + alias and version */
} ORDERED[] = {
    {"resync", false}, {"delayed", false}, {"repair", false},
    {"replay", false}, {"join", false},    {"reindex:", true},
};

bool stream_ordered(const char *name) {
    if (!name) return false;
    for (size_t i = 0; i < sizeof ORDERED / sizeof ORDERED[0]; i++)
        if (ORDERED[i].prefix ? !strncmp(name, ORDERED[i].name, strlen(ORDERED[i].name))
                              : !strcmp(name, ORDERED[i].name))
            return true;
    return false;
}
