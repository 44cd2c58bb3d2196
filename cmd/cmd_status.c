/* cmd_status: `searchsync status` — where one source's sync stands, read from
 * the metadata schema, the source and the engine (nothing here is kept in
 * the daemon's memory, so it works whether a daemon runs or not):
 *
 *   source   checkpoint (position, age) beside the binlog's end on the source,
 *            and how far behind that is when both are in one file (caught
 *            up when those bytes are only checkpoint saves)
 *   indices  per index config: state, live version, epoch; where the alias
 *            points in the engine and how many documents it holds
 *   jobs     reindex jobs by status
 *   waiting  dead letters per index, change snapshots for the delayed run
 *
 * The facts are gathered by sync/status/status.c (shared with the admin API's
 * GET /api/v1/status); this file prints them.
 *
 * Exit (usage_status says it to the user): 0 all reported and nothing waits
 * for an operator; 3 something does (dead letters, an index config stopped,
 * the checkpoint's binlog file purged); 1 a server could not be asked (the
 * rest is still printed); 2 usage or configuration. --json: 0 or 3 (2 for
 * refused credentials), its object printed whatever is down. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

#include "commands.h"
#include "config.h"
#include "db.h"
#include "deliver/deliver.h"
#include "sbuf.h"
#include "search/search.h"
#include "json_exact.h"
#include "rebalance/registry.h"
#include "sync/status/status.h"

void usage_status(FILE *out) {
    fprintf(out, "usage: searchsync status --config FILE [--json]\n\n"
                 "Where the sync of the configured source stands: checkpoint against the\n"
                 "binlog's end, each index config's state and live version, the engine's\n"
                 "document counts, reindex jobs, dead letters, change snapshots, and who\n"
                 "reads the source. What a server that is down keeps from being read is\n"
                 "said, and the rest still printed.\n"
                 "Exit 0 ok; 3 a problem found that waits for an operator: dead letters,\n"
                 "an index config stopped, the checkpoint's binlog file purged; 1 a server\n"
                 "could not be asked (the metadata, the source or the engine; before 3);\n"
                 "2 a server refused the configured credentials.\n\n"
                 "--json: one JSON object (schema: docs/status.schema.json, the same as\n"
                 "GET /api/v1/status), printed whatever is down: `errors` names each part\n"
                 "that could not be read. Exit 0 when the source is reached, the checkpoint\n"
                 "is caught up and nothing waits (no dead letters, no index config\n"
                 "stopped, no errors); 2 a server refused the configured credentials; else\n"
                 "3 (a server down, behind, dead letters, stopped, purged).\n");
}

/* rows as "  a  b  c" lines ("-" for NULL); returns rows, -1 if the query failed */
static long print_rows(const struct status_rows *t) {
    if (t->failed) return -1;
    for (size_t r = 0; r < t->nrows; r++) {
        fputs("  ", stdout);
        for (size_t c = 0; c < t->ncols; c++)
            printf("%s%s", c ? "  " : "", STATUS_CELL(t, r, c) ? STATUS_CELL(t, r, c) : "-");
        putchar('\n');
    }
    return (long)t->nrows;
}

static const char *str_or(const cJSON *o, const char *key) {
    const char *v = cJSON_GetStringValue(cJSON_GetObjectItem(o, key));
    return v ? v : "?";
}

/* each daemon's role and health (node_states, written when they change) */
static void print_nodes(const struct ss_status *st) {
    printf("daemons (role and health, as each wrote them when they changed)\n");
    if (!st->nodes.nrows) printf("  none has run with this metadata schema yet\n");
    for (size_t r = 0; r < st->nodes.nrows; r++) {
        const char *node = STATUS_CELL(&st->nodes, r, 0), *role = STATUS_CELL(&st->nodes, r, 1);
        const char *ago = STATUS_CELL(&st->nodes, r, 2), *sj = STATUS_CELL(&st->nodes, r, 3);
        cJSON *j = sj ? json_exact_parse(sj, strlen(sj)) : NULL;
        printf("  %s  %s for %s s", node ? node : "?", role ? role : "?", ago ? ago : "?");
        if (j && role && strcmp(role, "stopped")) {
            cJSON *fz = cJSON_GetObjectItem(j, "fuses_blown");
            sbuf fuses = SBUF_INIT;
            cJSON *f;
            cJSON_ArrayForEach(f, fz) {
                if (cJSON_IsString(f))
                    sbuf_printf(&fuses, "%s%s", fuses.len ? ", " : "", f->valuestring);
            }
            printf(": engine %s, fuses blown: %s",
                   cJSON_IsFalse(cJSON_GetObjectItem(j, "engine_up")) ? "DOWN" : "up",
                   fuses.len ? fuses.data : "none");
            sbuf_free(&fuses);
            const cJSON *u;
            cJSON_ArrayForEach(u, cJSON_GetObjectItem(j, "unwell")) {
                printf("\n    UNWELL %s: %s", str_or(u, "subsystem"), str_or(u, "why"));
            }
        }
        putchar('\n');
        cJSON_Delete(j);
    }
}

/* The running daemon's live figures (GET /api/v1/live), when this
 * configuration names its admin server and token: queues, fuses, the
 * engine, what the reader read. Said, not failed, when it cannot be asked. */
static size_t live_body(char *p, size_t size, size_t n, void *ud) {
    sbuf_add(ud, p, size * n);
    return size * n;
}

static void print_live(const struct ss_config *cfg) {
    printf("the daemon's live figures ([admin] listen)\n");
    if (!cfg->admin.token || !cfg->admin.token[0]) {
        printf("  not asked: no [admin] token in this configuration (GET /api/v1/live and "
               "/metrics have them)\n");
        return;
    }
    const char *listen = cfg->admin.listen ? cfg->admin.listen : "127.0.0.1:8089";
    const char *colon = strrchr(listen, ':');
    sbuf url = SBUF_INIT;
    size_t hl = colon ? (size_t)(colon - listen) : 0;
    if (!hl || (hl == 7 && !strncmp(listen, "0.0.0.0", 7)))
        sbuf_adds(&url, "http://127.0.0.1");
    else if (hl == 4 && !strncmp(listen, "[::]", 4))
        sbuf_adds(&url, "http://[::1]");
    else
        sbuf_printf(&url, "http://%.*s", (int)hl, listen);
    sbuf_printf(&url, "%s/api/v1/live", colon ? colon : ":8089");
    sbuf auth = SBUF_INIT, body = SBUF_INIT;
    sbuf_printf(&auth, "Authorization: Bearer %s", cfg->admin.token);
    CURL *c = curl_easy_init();
    struct curl_slist *h = curl_slist_append(NULL, auth.data);
    long code = 0;
    CURLcode rc = CURLE_FAILED_INIT;
    if (c) {
        curl_easy_setopt(c, CURLOPT_URL, url.data);
        curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
        curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, 2000L);
        curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
        curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, live_body);
        curl_easy_setopt(c, CURLOPT_WRITEDATA, &body);
        rc = curl_easy_perform(c);
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
    }
    cJSON *j = rc == CURLE_OK && code == 200 ? json_exact_parse(body.data, body.len) : NULL;
    if (!j) {
        if (rc == CURLE_OK && code == 421)
            printf("  not answered at %s: the admin server does not answer to this address's "
                   "host (HTTP 421): add it to [admin] allowed_hosts\n", url.data);
        else if (rc == CURLE_OK && code != 200)
            printf("  not answered at %s: HTTP %ld, %s\n", url.data, code,
                   code == 401 || code == 403 ? "the token is refused ([admin] token is not the "
                                                "running daemon's: reload it with SIGHUP?)"
                                              : "an unexpected answer");
        else
            printf("  not reached at %s: %s (is `searchsync run` running here?)\n", url.data,
                   rc != CURLE_OK ? curl_easy_strerror(rc) : "an answer that is not JSON");
    } else {
        const cJSON *q = cJSON_GetObjectItem(j, "queued"), *fl = cJSON_GetObjectItem(j, "inflight");
        sbuf fuses = SBUF_INIT;
        const cJSON *f;
        cJSON_ArrayForEach(f, cJSON_GetObjectItem(j, "fuses_blown")) {
            if (cJSON_IsString(f)) sbuf_printf(&fuses, "%s%s", fuses.len ? ", " : "", f->valuestring);
        }
        printf("  %.0f queued, %.0f in flight, engine %s, fuses blown: %s\n",
               cJSON_IsNumber(q) ? q->valuedouble : 0, cJSON_IsNumber(fl) ? fl->valuedouble : 0,
               cJSON_IsFalse(cJSON_GetObjectItem(j, "engine_up")) ? "DOWN" : "up",
               fuses.len ? fuses.data : "none");
        const cJSON *st;
        cJSON_ArrayForEach(st, cJSON_GetObjectItem(j, "streams")) { /* one line per producer */
            const cJSON *sq = cJSON_GetObjectItem(st, "queued"),
                        *sf = cJSON_GetObjectItem(st, "inflight"),
                        *sa = cJSON_GetObjectItem(st, "acknowledged"),
                        *sd = cJSON_GetObjectItem(st, "dead_letters");
            printf("  stream %s (%s): %.0f queued, %.0f in flight, %.0f acknowledged, %.0f dead "
                   "letter(s)\n", str_or(st, "name"), str_or(st, "class"),
                   cJSON_IsNumber(sq) ? sq->valuedouble : 0, cJSON_IsNumber(sf) ? sf->valuedouble : 0,
                   cJSON_IsNumber(sa) ? sa->valuedouble : 0, cJSON_IsNumber(sd) ? sd->valuedouble : 0);
        }
        const cJSON *rd = cJSON_GetObjectItem(j, "reader");
        if (cJSON_IsObject(rd))
            printf("  reader: %s, read to %s%s\n",
                   cJSON_IsTrue(cJSON_GetObjectItem(rd, "reading")) ? "reading" : "stopped",
                   str_or(rd, "position"),
                   cJSON_IsTrue(cJSON_GetObjectItem(rd, "at_end")) ? " (the binlog's end)" : "");
        else
            printf("  reader: not reading (standing by)\n");
        sbuf_free(&fuses);
        cJSON_Delete(j);
    }
    curl_slist_free_all(h);
    if (c) curl_easy_cleanup(c);
    sbuf_free(&url);
    sbuf_free(&auth);
    sbuf_free(&body);
}

/* Who reads the source: the registered nodes with ZooKeeper, else the
 * standalone reader lock (sync/cluster/leadership.c; meta required then). */
static void print_readers(const struct ss_config *cfg, MYSQL *meta) {
    if (cfg->cluster.zookeeper && cfg->cluster.zookeeper[0]) {
        char err[600];
        printf("nodes of cluster %s (ZooKeeper %s)\n", cfg->cluster.name, cfg->cluster.zookeeper);
        struct zk *z = zk_open(cfg->cluster.zookeeper, cfg->cluster.session_timeout_ms, 3000, err,
                               sizeof err);
        sbuf out = SBUF_INIT;
        if (!z || registry_list(z, cfg->cluster.name, &out, err, sizeof err) < 0) {
            printf("  not known: %s\n", err);
        } else {
            cJSON *j = json_exact_parse(out.data, out.len);
            cJSON *n;
            int count = 0;
            cJSON_ArrayForEach(n, j) {
                cJSON *e = cJSON_GetObjectItem(n, "entity");
                printf("  %s  %s of source %s, %s %s (rebalance session %s), %d job(s) "
                       "running\n", str_or(n, "node"), str_or(e, "reader"), str_or(e, "source"),
                       str_or(e, "cloud_status"), str_or(e, "node_status"),
                       *str_or(e, "session_id") ? str_or(e, "session_id") : "none",
                       cJSON_GetObjectItem(e, "alive_work")
                           ? cJSON_GetObjectItem(e, "alive_work")->valueint : 0);
                count++;
            }
            if (!count) printf("  none registered (no daemon runs)\n");
            cJSON_Delete(j);
        }
        sbuf_free(&out);
        zk_close(z);
        return;
    }
    printf("reader of source %s (standalone)\n", cfg->source.name);
    sbuf q = SBUF_INIT;
    sbuf_adds(&q, "SELECT owner, fence, heartbeat_at, IS_USED_LOCK(CONCAT('searchsync:reader:', "
                  "MD5(source))) IS NOT NULL FROM reader_locks WHERE source = ");
    db_quote(meta, &q, cfg->source.name, strlen(cfg->source.name));
    char err[512];
    MYSQL_RES *res = db_query(meta, q.data, q.len, err, sizeof err);
    MYSQL_ROW row = res ? mysql_fetch_row(res) : NULL;
    if (row)
        printf("  %s (token %s, since %s UTC)%s\n", row[0], row[1], row[2],
               row[3] && !strcmp(row[3], "1") ? "" : ": not running now, no daemon reads");
    else
        printf("  none yet\n");
    if (res) mysql_free_result(res);
    sbuf_free(&q);
}

/* An index config fed by several sources: where each stands and what a
 * build waits for (status_sources.h); rc, EXIT_FOUND when one of them needs
 * an operator. */
static int print_sources(const struct status_index *ix, int rc) {
    sbuf t = SBUF_INIT;
    status_sources_text(&ix->sources, &t);
    fputs(t.data ? t.data : "", stdout);
    sbuf_free(&t);
    return ix->sources.attention && rc == EXIT_OK ? EXIT_FOUND : rc;
}

/* --json: the status object (docs/status.schema.json); EXIT_FOUND when
 * something needs an operator or could not be read. */
static int print_json(const struct ss_status *st) {
    sbuf out = SBUF_INIT;
    status_json(st, &out);
    puts(out.data);
    sbuf_free(&out);
    bool stopped = false;
    for (size_t i = 0; i < st->nindices; i++) stopped |= st->indices[i].stopped != NULL;
    return !st->source_reached || !st->caught_up || st->dead.nrows > 0 || st->nerrors > 0 ||
                   stopped || st->sources_attention ? EXIT_FOUND : EXIT_OK;
}

/* The metadata server and the source: the checkpoint against the binlog's
 * end. EXIT_OK, or EXIT_RUNTIME when either cannot be read. */
static int print_source(const struct ss_status *st) {
    int rc = EXIT_OK;
    if (!st->meta_reached) {
        fprintf(stderr, "searchsync status: metadata schema: %s\n", st->meta_err);
        printf("metadata schema %s (%s:%d): %s\n", st->meta_database, st->meta_host,
               st->meta_port, st->meta_err);
        rc = EXIT_RUNTIME;
    }
    printf("source %s (%s:%d)\n", st->source_name, st->source_host, st->source_port);
    if (!st->meta_reached)
        printf("  checkpoint  not known: the metadata server cannot be read\n");
    else if (st->checkpoint)
        printf("  checkpoint  %s (saved %s s ago)\n", st->checkpoint, st->checkpoint_age);
    else
        printf("  checkpoint  none yet (the daemon starts at [source] start = %s)\n", st->start);
    if (st->source_reached) {
        if (st->binlog_end) {
            printf("  binlog end  %s", st->binlog_end);
            if (st->bytes_behind >= 0)
                printf(" (%lld bytes behind%s)", st->bytes_behind,
                       st->bytes_behind == 0 ? ": caught up"
                       : st->caught_up       ? ": caught up, those are checkpoint writes"
                                            : "");
            putchar('\n');
        } else {
            printf("  binlog end  unknown: %s\n", st->binlog_err);
        }
    } else {
        printf("  source: %s\n", st->source_err);
        rc = EXIT_RUNTIME;
    }
    if (st->skipped_at) /* the last time the binlog was skipped (on_purged = rebuild, ...) */
        printf("  skipped     at %s by %s: %s\n", st->skipped_at,
               st->skipped_node ? st->skipped_node : "?", st->skipped_detail ? st->skipped_detail : "");
    return rc;
}

/* Each index config: its state, shards, stop, sources and engine side;
 * rc, raised when one needs an operator or its engine side failed. */
static int print_indices(const struct ss_status *st, int rc) {
    printf("indices (%zu)\n", st->nindices);
    if (!st->nindices) printf("  none: import a mapping (searchsync mapping import)\n");
    for (size_t i = 0; i < st->nindices; i++) {
        const struct status_index *ix = &st->indices[i];
        printf("  %s  state %s, version %u, epoch %u, %zu table(s)", ix->alias, ix->state,
               ix->current_version, ix->epoch, ix->ntables);
        if (ix->building_version) printf(", building version %u", ix->building_version);
        putchar('\n');
        if (ix->pattern) /* over shard tables */
            printf("    shards of %s: %zu read into its live version%s\n", ix->pattern,
                   ix->nshards, ix->current_version ? "" : " (none before its first build)");
        if (ix->stopped) {
            printf("    STOPPED: %s\n", ix->stopped);
            if (rc == EXIT_OK) rc = EXIT_FOUND;
        }
        if (ix->multi) rc = print_sources(ix, rc);
        if (!ix->engine_read) continue;
        if (ix->engine_err) {
            printf("    %s\n", ix->engine_err);
            rc = EXIT_RUNTIME;
        } else if (!ix->targets) {
            printf("    engine: alias %s does not exist yet (the daemon or a reindex creates it)\n",
                   ix->alias);
        } else {
            printf("    engine: alias %s -> %s, %s documents\n", ix->alias, ix->targets,
                   ix->documents ? ix->documents : "?");
        }
    }
    return rc;
}

/* The metadata's tables: jobs, dead letters, snapshots, the last delayed
 * run and checks; rc, EXIT_FOUND when dead letters wait (path: the
 * configuration, for the command that lists them). */
static int print_tables(const struct ss_status *st, const char *path, int rc) {
    printf("jobs (index, status, jobs, rows read, documents written, errors)\n");
    if (print_rows(&st->jobs) == 0) printf("  none\n");
    if (st->job_list.nrows) {
        printf("jobs of running builds and delayed runs (index, version, bucket, status, node, "
               "rows read, moved by a rebalance, type, delayed run)\n");
        print_rows(&st->job_list);
    }
    printf("dead letters (index, count)\n");
    long n = print_rows(&st->dead);
    if (n == 0) printf("  none\n");
    else if (n > 0) {
        printf("  see: searchsync dead-letters list --config %s\n", path);
        if (rc == EXIT_OK) rc = EXIT_FOUND;
    }
    printf("change snapshots waiting for the delayed run (table, count)\n");
    if (print_rows(&st->snapshots) == 0) printf("  none\n");
    printf("last delayed run (id, status, started, finished, snapshots, ids, documents rebuilt, "
           "deleted, errors)\n");
    if (print_rows(&st->delayed_run) == 0) printf("  none (searchsync delayed-run)\n");
    printf("last check per index (index, status, finished, window s, differences, documents "
           "fetched)\n");
    if (print_rows(&st->checks) == 0) printf("  none (searchsync check)\n");
    return rc;
}

int cmd_status(int argc, char **argv) {
    static const struct option own[] = {{"json", no_argument, NULL, 'j'}, {NULL, 0, NULL, 0}};
    struct command c = {.name = "status", .usage = usage_status, .opts = own, .shortopts = "j",
                        .argc = argc, .argv = argv};
    bool json = false;
    int o;
    while ((o = command_opt(&c)) > 0) json = true; /* 'j' */
    if (o < 0) return c.rc;
    if (!c.config || optind != argc) return command_usage(&c);
    int rc = command_begin(&c, 0);
    if (rc >= 0) return rc;
    /* a metadata server that is down is part of the answer, not the end of
     * it: what can still be read is (the source's binlog end, the daemon's
     * live figures), and --json still prints its object */
    char meta_err[1024] = "";
    c.meta = metadb_open(&c.cfg, meta_err, sizeof meta_err);
    const struct ss_config *cfg = &c.cfg;
    const char *path = c.config;
    MYSQL *meta = c.meta;
    rc = EXIT_OK;
    struct search_client *client = NULL;
    struct search_conn *k = NULL;
    MYSQL *src = NULL;
    db_params sp = db_params_source(cfg);
    char src_err[1024] = "", engine_err[1024] = "";
    src = db_connect(&sp, src_err, sizeof src_err);
    struct search_opts so;
    deliver_search_opts(&so, cfg);
    client = search_client_new(&so, engine_err, sizeof engine_err);
    k = client ? search_conn_new(client) : NULL;
    struct ss_status st;
    status_collect(cfg, meta, meta_err, src, src_err, k, engine_err, &st);
    if (json) { /* docs/status.schema.json */
        rc = print_json(&st);
        status_free(&st);
        goto out;
    }

    /* ---- metadata, source */
    rc = print_source(&st);

    if (!st.meta_reached) { /* the mapping, jobs, dead letters, ...: in the metadata */
        printf("indices, jobs, dead letters, change snapshots, checks: not known without the "
               "metadata server\n");
        if (cfg->cluster.zookeeper && cfg->cluster.zookeeper[0]) print_readers(cfg, NULL);
        print_live(cfg);
        status_free(&st);
        goto out;
    }

    /* ---- indices */
    if (st.mapping_err) {
        fprintf(stderr, "searchsync status: mapping: %s\n", st.mapping_err);
        status_free(&st);
        rc = EXIT_RUNTIME;
        goto out;
    }
    if (st.engine_err) {
        printf("engine: %s\n", st.engine_err);
        rc = EXIT_RUNTIME;
    }
    rc = print_indices(&st, rc);

    /* ---- jobs, dead letters, snapshots */
    rc = print_tables(&st, path, rc);
    print_readers(cfg, meta);
    print_nodes(&st);
    print_live(cfg);
    if (st.checkpoint_purged) {
        printf("the checkpoint's binlog file is no longer on the source (purged): the changes "
               "since it cannot be read; recover with `searchsync run --config %s "
               "--from-current` (it starts at the binlog's end and rebuilds every index)\n",
               path);
        if (rc == EXIT_OK) rc = EXIT_FOUND;
    }
    status_free(&st);
out:
    search_conn_free(k);
    search_client_free(client);
    db_close(src);
    return command_end(&c, rc);
}
