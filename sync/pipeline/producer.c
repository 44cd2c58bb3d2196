/* producer: the shared pipeline outside the daemon (see producer.h). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exit_codes.h"
#include "sync/mapping/index_mapping.h"
#include "log.h"
#include "sync/pipeline/producer.h"
#include "sync/pipeline/streams.h"
#include "sync/mapping/mapping_shard.h"
#include "search/index_version.h"

/* versions being built: live changes (and the producer's) go to them too */
static int load_builds(struct pipeline *p, const char *source, char *err, size_t errlen) {
    sbuf q = SBUF_INIT;
    sbuf_adds(&q, "SELECT alias, building_version FROM index_configs WHERE state IN ('changing', "
                  "'switching') AND building_version > 0 AND source = ");
    db_quote(p->meta, &q, source, strlen(source));
    MYSQL_RES *res = db_query(p->meta, q.data, q.len, err, errlen);
    sbuf_free(&q);
    if (!res) return -1;
    size_t n = (size_t)mysql_num_rows(res);
    p->builds = xcalloc(n ? n : 1, sizeof *p->builds);
    MYSQL_ROW row;
    while ((row = mysql_fetch_row(res))) {
        unsigned v = (unsigned)atoi(row[1]);
        p->builds[p->nbuilds++] = (struct build){
            .alias = xstrdup(row[0]), .phys = index_version_dup(row[0], v), .version = v};
    }
    mysql_free_result(res);
    return 0;
}

int producer_open(struct producer *pr, const struct ss_config *cfg,
                  const struct producer_opts *o) {
    memset(pr, 0, sizeof *pr);
    struct pipeline *p = &pr->p;
    pipeline_init(p, cfg);
    p->metap = db_params_metadata(cfg);
    p->srcp = db_params_source(cfg);
    p->metap.database = cfg->metadata.database;
    p->meta = metadb_open(cfg, pr->err, sizeof pr->err);
    if (!p->meta) return EXIT_RUNTIME;
    p->src = db_connect(&p->srcp, pr->err, sizeof pr->err);
    if (!p->src) return EXIT_RUNTIME;
    if (mapping_db_load_for(p->meta, config_mapping_name(cfg), cfg->source.name, &pr->m, pr->err,
                            sizeof pr->err) < 0)
        return EXIT_RUNTIME;
    int bad = mapping_check_source(p->src, &pr->m, pr->err, sizeof pr->err);
    if (bad) return bad > 0 ? EXIT_USAGE : EXIT_RUNTIME;
    if (load_builds(p, config_mapping_name(cfg), pr->err, sizeof pr->err) < 0) return EXIT_RUNTIME;
    if (o->engine) {
        struct search_opts so;
        deliver_search_opts(&so, cfg);
        pr->client = search_client_new(&so, pr->err, sizeof pr->err);
        p->k = pr->client ? search_conn_new(pr->client) : NULL;
        if (!pr->client || search_detect(pr->client, p->k, pr->err, sizeof pr->err) != 0)
            return EXIT_RUNTIME;
        for (size_t i = 0; i < pr->m.nindices; i++) { /* indices older than the check's fields */
            char w[512];
            if (pr->m.indices[i].current_version &&
                index_mapping_put_hash_fields(p->k, pr->m.indices[i].alias, w, sizeof w) < 0)
                log_warn("producer", "%s", w);
        }
        struct deliver_opts dopts;
        deliver_opts_from_config(&dopts, cfg);
        dopts.flush_on_txn_end = o->flush_each_txn;
        dopts.linger_ms = 0; /* a one-off run goes as fast as it can; linger is the daemon's */
        dopts.linger_refresh_percent = 0;
        dopts.batch_to_refresh = false;
        if (o->flush_interval_ms > 0) dopts.flush_interval_ms = o->flush_interval_ms;
        pr->dls = dl_store_new(&p->metap, cfg->source.name, pr->err, sizeof pr->err);
        if (!pr->dls) return EXIT_RUNTIME;
        dopts.dead_letter = dl_store_put;
        dopts.dead_letter_ud = pr->dls;
        dopts.written = dl_store_written; /* supersedes older dead letters of these documents */
        dopts.written_ud = pr->dls;
        /* a bulk stream on the node's delivery in a daemon, else on one of
         * its own (src/deliver/stream.c) */
        const char *stream = o->stream ? o->stream : "producer";
        dopts.ordered_versions = stream_ordered(stream); /* I5 asserted at submit */
        p->d = deliver_open(o->hub, &dopts, pr->client, stream, DELIVER_BULK, pr->err,
                            sizeof pr->err);
        if (!p->d) return EXIT_RUNTIME;
    }
    pipeline_adopt(p, &pr->m, router_new(&pr->m));
    return EXIT_OK;
}

void producer_close(struct producer *pr) {
    struct pipeline *p = &pr->p;
    deliver_free(p->d);
    p->d = NULL;
    dl_store_free(pr->dls);
    for (size_t i = 0; i < p->nbuilds; i++) free(p->builds[i].alias), free(p->builds[i].phys);
    free(p->builds);
    p->builds = NULL, p->nbuilds = 0;
    search_conn_free(p->k);
    search_client_free(pr->client);
    pipeline_free(p);
    mapping_free(&pr->m);
    db_close(p->src);
    db_close(p->meta);
}

size_t producer_doc_key(const struct mp_index *ix, const char *id, char **key) {
    size_t n = 0;
    const char *k = mp_doc_key(ix, id, &n);
    if (!k) return SIZE_MAX;
    for (size_t t = 1; t < ix->ntables; t++) {
        const struct mp_table *tb = &ix->tables[t];
        size_t l = tb->parent_table && tb->join_name ? strlen(tb->join_name) : 0;
        if (l && l < n && !strncmp(k, tb->join_name, l) && k[l] == '-') {
            *key = xstrndup(k + l + 1, n - l - 1);
            return t;
        }
    }
    *key = xstrndup(k, n);
    return 0;
}
