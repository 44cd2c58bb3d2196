/* cmd_resync: `searchsync resync --config FILE INDEX --ids ID,..` — given
 * documents rebuilt from MySQL, as one more producer of change sets.
 *
 * The ids become a change set (root keys, `<join_name>-<key>` child ids)
 * built and delivered by the same back half as live sync (sync/pipeline.c):
 * to the live alias and to a version being built, a document whose row is
 * gone deleted, a child's copies under other routings deleted
 * (child_copies.c). Its version is the binlog position read before the rows
 * are (seed 000): a live change made since is newer and wins, and the
 * rebuilt content is at least as new as that position. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "deliver/store.h"
#include "log.h"
#include "pipeline.h"

static void resync_usage(FILE *out) {
    fprintf(out, "usage: searchsync resync --config FILE INDEX --ids ID[,ID...]\n\n"
                 "Rebuild just these documents of index config INDEX from MySQL: root keys\n"
                 "(42) or child ids (review-7). A document whose row is gone is deleted.\n");
}

/* The table an id names: a child table whose join name prefixes it
 * ("review-7" → that table, key "7"), else the root. */
static size_t table_of(const struct mp_index *ix, const char *id, const char **key) {
    for (size_t t = 1; t < ix->ntables; t++) {
        const struct mp_table *tb = &ix->tables[t];
        size_t l = tb->parent_table && tb->join_name ? strlen(tb->join_name) : 0;
        if (l && !strncmp(id, tb->join_name, l) && id[l] == '-') {
            *key = id + l + 1;
            return t;
        }
    }
    *key = id;
    return 0;
}

int cmd_resync(int argc, char **argv) {
    static const struct option opts[] = {{"config", required_argument, NULL, 'c'},
                                         {"ids", required_argument, NULL, 'i'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    const char *path = NULL, *ids = NULL;
    int o;
    optind = 1;
    while ((o = getopt_long(argc, argv, "c:i:h", opts, NULL)) != -1) {
        if (o == 'c') path = optarg;
        else if (o == 'i') ids = optarg;
        else if (o == 'h') return resync_usage(stdout), EXIT_OK;
        else return resync_usage(stderr), EXIT_USAGE;
    }
    if (!path || !ids || !*ids || optind != argc - 1) return resync_usage(stderr), EXIT_USAGE;
    const char *alias = argv[optind];
    struct ss_config cfg;
    char err[2048];
    if (command_config("resync", path, &cfg) != 0) return EXIT_USAGE;
    int rc = EXIT_RUNTIME;
    struct pipeline p;
    pipeline_init(&p, &cfg);
    struct changeset cs = {0};
    struct mapping m = {0};
    struct search_client *client = NULL;
    struct dl_store *dls = NULL;
    p.metap = db_params_metadata(&cfg);
    p.srcp = db_params_source(&cfg);
    db_params bare = p.metap;
    p.metap.database = cfg.metadata.database;
    p.meta = db_connect(&bare, err, sizeof err);
    if (!p.meta || metadb_migrate(p.meta, cfg.metadata.database, err, sizeof err) < 0) goto fail;
    p.src = db_connect(&p.srcp, err, sizeof err);
    if (!p.src) goto fail;
    struct search_opts so;
    deliver_search_opts(&so, &cfg);
    client = search_client_new(&so, err, sizeof err);
    p.k = client ? search_conn_new(client) : NULL;
    if (!client || search_detect(client, p.k, err, sizeof err) != 0) goto fail;

    if (mapping_db_load(p.meta, cfg.source.name, &m, err, sizeof err) < 0) goto fail;
    size_t at = 0;
    while (at < m.nindices && strcmp(m.indices[at].alias, alias)) at++;
    if (at == m.nindices) {
        snprintf(err, sizeof err, "source %s has no index config \"%s\"", cfg.source.name, alias);
        rc = EXIT_USAGE;
        goto fail;
    }
    int bad = mapping_check_source(p.src, &m, err, sizeof err);
    if (bad) {
        if (bad > 0) rc = EXIT_USAGE;
        goto fail;
    }
    const struct mp_index *ix = &m.indices[at];
    /* its targets: the live version (behind the alias) and a version being
     * built, as the daemon's dual writes have them */
    sbuf q = SBUF_INIT;
    sbuf_adds(&q, "SELECT building_version FROM index_configs WHERE state IN ('changing', "
                  "'switching') AND source = ");
    db_quote(p.meta, &q, cfg.source.name, strlen(cfg.source.name));
    sbuf_adds(&q, " AND alias = ");
    db_quote(p.meta, &q, alias, strlen(alias));
    char *building = db_scalar(p.meta, q.data, (char[64]){0}, 64);
    sbuf_free(&q);
    if (building && strcmp(building, "0")) {
        p.builds = xcalloc(1, sizeof *p.builds);
        sbuf ph = SBUF_INIT;
        sbuf_printf(&ph, "%s_v%s", alias, building);
        p.builds[0] = (struct build){xstrdup(alias), ph.data, (unsigned)atoi(building), NULL};
        p.nbuilds = 1;
    }
    free(building);
    if (!ix->current_version && !p.nbuilds) {
        snprintf(err, sizeof err, "index %s has no version yet: run searchsync reindex %s", alias,
                 alias);
        rc = EXIT_USAGE;
        goto fail;
    }
    /* the version: the binlog position before the rows are read */
    bl_pos end = {0};
    unsigned long long pos = 0;
    if (db_binlog_status(p.src, end.file, sizeof end.file, &pos, err, sizeof err) != 1) {
        snprintf(err + strlen(err), sizeof err - strlen(err),
                 " (resync versions documents by the source's binlog position)");
        goto fail;
    }
    end.pos = pos;

    struct deliver_opts dopts;
    deliver_opts_from_config(&dopts, &cfg);
    dopts.flush_interval_ms = 5;
    dls = dl_store_new(&p.metap, cfg.source.name, err, sizeof err);
    if (!dls) goto fail;
    dopts.dead_letter = dl_store_put;
    dopts.dead_letter_ud = dls;
    dopts.written = dl_store_written; /* supersedes older dead letters of these documents */
    dopts.written_ud = dls;
    p.d = deliver_new(&dopts, client, err, sizeof err);
    if (!p.d) goto fail;
    pipeline_adopt(&p, &m, router_new(&m));

    /* the change set: each id under its document table */
    for (const char *s = ids; *s;) {
        const char *c = strchr(s, ',');
        size_t len = c ? (size_t)(c - s) : strlen(s);
        if (len) {
            char *id = xstrndup(s, len);
            const char *key;
            size_t t = table_of(ix, id, &key);
            changeset_add_doc(&cs, at, t, key, strlen(key));
            free(id);
        }
        s += len + (c ? 1 : 0);
    }
    cs.copies_may_move = true; /* a child's copies under any other routing go */
    int brc = pipeline_build(&p, &cs, &end);
    if (brc != 0) snprintf(err, sizeof err, "%s", p.err);
    pipeline_end(&p, &cs, &end, false);
    int drc = deliver_drain(p.d, cfg.delivery.drain_timeout_ms);
    struct deliver_stats ds;
    deliver_get_stats(p.d, &ds);
    if (brc != 0) goto fail;
    if (drc != DELIVER_OK) {
        snprintf(err, sizeof err, "delivery did not finish within drain_timeout_ms");
        goto fail;
    }
    printf("%s: %llu document(s) rebuilt, %llu deleted, %llu dead letter(s), %llu stale (newer "
           "data already there)\n",
           alias, p.docs, p.deletes, (unsigned long long)ds.dead_letters,
           (unsigned long long)ds.stale);
    rc = ds.dead_letters ? EXIT_FOUND : EXIT_OK;
    goto out;
fail:
    fprintf(stderr, "searchsync resync: %s\n", err);
out:
    deliver_free(p.d);
    dl_store_free(dls);
    changeset_free(&cs);
    for (size_t i = 0; i < p.nbuilds; i++) free(p.builds[i].alias), free(p.builds[i].phys);
    free(p.builds);
    search_conn_free(p.k);
    search_client_free(client);
    pipeline_free(&p);
    mapping_free(&m);
    db_close(p.src);
    db_close(p.meta);
    config_free(&cfg);
    mysql_library_end();
    return rc;
}
