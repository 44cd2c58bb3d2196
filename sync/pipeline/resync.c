/* resync: see resync.h. */
#include "sync/pipeline/resync.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exit_codes.h"
#include "log.h"
#include "sync/pipeline/producer.h"
#include "sync/mapping/mapping_shard.h"

int resync_ids(const struct ss_config *cfg, struct deliver_hub *hub, const char *alias,
               const char *const *ids, size_t n, struct resync_result *res, char *errout,
               size_t errlen) {
    memset(res, 0, sizeof *res);
    struct producer pr;
    struct producer_opts po = {.engine = true, .flush_interval_ms = 5, .stream = "resync",
                               .hub = hub};
    int rc = producer_open(&pr, cfg, &po);
    struct pipeline *p = &pr.p;
    struct changeset cs = {0};
    char *err = pr.err;
    const size_t elen = sizeof pr.err;
    if (rc != EXIT_OK) goto out;
    rc = EXIT_RUNTIME;
    size_t at = 0; /* the first of its units when it reads shard tables */
    while (at < pr.m.nindices && strcmp(pr.m.indices[at].alias, alias)) at++;
    if (at == pr.m.nindices) {
        snprintf(err, elen, "source %s has no index config \"%s\"", cfg->source.name, alias);
        rc = EXIT_USAGE;
        goto out;
    }
    const struct mp_index *ix = &pr.m.indices[at];
    if (!ix->current_version && !targets_build_of(p, alias)) {
        snprintf(err, elen, "index %s has no version yet: run searchsync reindex %s", alias,
                 alias);
        rc = EXIT_USAGE;
        goto out;
    }
    /* the version: the position of the snapshot the rows are read in */
    bl_pos end;
    if (pipeline_snapshot_begin(p, alias, NULL, &end) < 0) {
        snprintf(err, elen, "%s", p->err);
        goto out;
    }
    /* the change set: each id under its document table (of its shard's
     * unit: mapping_shard.h) */
    for (size_t i = 0; i < n; i++) {
        char *key = NULL;
        size_t t = SIZE_MAX, u = at;
        for (; u < pr.m.nindices && t == SIZE_MAX; u++)
            if (!strcmp(pr.m.indices[u].alias, alias))
                t = producer_doc_key(&pr.m.indices[u], ids[i], &key);
        if (t == SIZE_MAX) {
            snprintf(err, elen, "index %s: \"%s\" is the id of no document of its shards "
                     "(ids are made by its id template, %s)", alias, ids[i], mp_id_template(ix));
            rc = EXIT_USAGE;
            pipeline_snapshot_end(p);
            goto out;
        }
        changeset_add_doc(&cs, u - 1, t, key, strlen(key));
        free(key);
    }
    cs.copies_may_move = true; /* a child's copies under any other routing go */
    int brc = pipeline_build(p, &cs, &end);
    pipeline_snapshot_end(p);
    if (brc != 0) snprintf(err, elen, "%s", p->err);
    pipeline_end(p, &cs, &end, NULL, false);
    int drc = deliver_drain(p->d, cfg->delivery.drain_timeout_ms);
    struct deliver_stats ds;
    deliver_get_stats(p->d, &ds);
    if (brc != 0) goto out;
    if (drc != DELIVER_OK) {
        snprintf(err, elen, "delivery did not finish within drain_timeout_ms");
        goto out;
    }
    res->rebuilt = p->docs;
    res->deleted = p->deletes;
    res->dead_letters = ds.dead_letters;
    res->stale = ds.stale;
    rc = EXIT_OK;
out:
    if (rc != EXIT_OK) snprintf(errout, errlen, "%s", err);
    changeset_free(&cs);
    producer_close(&pr);
    return rc;
}
