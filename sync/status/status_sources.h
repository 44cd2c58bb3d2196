/* status_sources: where each source of an index config fed by several
 * sources stands (docs/cluster.md, "Several sources, one index"), for
 * `searchsync status` and GET /api/v1/status of any of them: so one command
 * says whether the whole index is in step, and what holds a version being
 * built. Read from the metadata (each source's checkpoint, reader lock,
 * node state, its part of the build) and the engine (documents per source);
 * nothing is asked of the other sources' servers, whose credentials are
 * their configurations'. */
#ifndef SS_STATUS_SOURCES_H
#define SS_STATUS_SOURCES_H
#include <stdbool.h>
#include <stddef.h>

#include <mysql.h>

#include "config.h"
#include "sbuf.h"

struct search_conn;
struct mp_index;
struct jsonw;

struct status_source {
    char *name;
    char *checkpoint, *checkpoint_age; /* its saved checkpoint and seconds since (NULL: none) */
    int reader;           /* 1 a daemon reads it, 0 none, -1 not known */
    char *reader_node;    /* the node that last said it reads it (node_states) */
    int source_up;        /* 1 up, 0 its reader lost its server, -1 not known */
    char *source_error;   /* ... why (its reader's last error) */
    long long down_s;     /* ... for this long (s) */
    char *documents;      /* its documents behind the alias (ss_source), as the engine says */
    /* its part of the version being built (part -1: no build) */
    int part;             /* 0 not planned yet, 1 planned */
    char *part_start;     /* where its dual writes began */
    unsigned long long jobs, jobs_done;
    char *rows_read;
};

struct status_sources {
    struct status_source *v;
    size_t n;
    char *waits;          /* why the version being built is not switched to yet, NULL: not
                           * waiting (or no build) */
    bool attention;       /* a source is down, or no daemon reads it */
};

/* Gather the sources of index config mi (several, mp_index_multi) of
 * cfg's mapping: meta, the metadata schema selected; k the engine (NULL:
 * no documents per source). Parts that cannot be read stay unknown. */
void status_sources_collect(const struct ss_config *cfg, MYSQL *meta, struct search_conn *k,
                            const struct mp_index *mi, unsigned building,
                            struct status_sources *ss);
void status_sources_free(struct status_sources *ss);
/* As text (`searchsync status`, indented under the index) and as the
 * index's "sources" and "waits_for" members (docs/status.schema.json). */
void status_sources_text(const struct status_sources *ss, sbuf *out);
void status_sources_json(const struct status_sources *ss, struct jsonw *w);
/* Just each source's reader and part of the build, and what holds the
 * switch, in the same words (`searchsync reindex` following a build). */
void status_sources_build_text(const struct status_sources *ss, sbuf *out);

#endif
