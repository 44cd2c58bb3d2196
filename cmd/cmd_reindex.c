/* cmd_reindex: `searchsync reindex`.
 *
 * reindex queues a build (the node's operation, sync/ops/ops_reindex.h, as
 * POST /api/v1/indices/{alias}/reindex does) and follows it until the alias
 * has moved (the jobs run in `searchsync run`, which also writes live
 * changes to the new version meanwhile); --reset cancels a build,
 * --delete-all removes an index config's indices. An index config fed by
 * several sources is followed part by part, in `searchsync status`'s words
 * (sync/status/status_sources.h): each source's jobs and what holds the
 * switch. (`searchsync resync` is cmd/cmd_resync.c.) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "binlog/binlog.h"
#include "commands.h"
#include "config.h"
#include "db.h"
#include "deliver/deliver.h"
#include "deliver/store.h"
#include "sync/pipeline/docbuild.h"
#include "json_exact.h"
#include "log.h"
#include "sync/mapping/mapping.h"
#include "sync/mapping/mapping_shard.h"
#include "sync/ops/ops_reindex.h"
#include "sync/status/status_sources.h"
#include "sbuf.h"
#include "search/search.h"
#include "search/index_version.h"

void usage_reindex(FILE *out) {
    fprintf(out,
            "usage: searchsync reindex --config FILE INDEX [--buckets N] [--by-mod] [--no-wait]\n"
            "       searchsync reindex --config FILE INDEX --reset\n"
            "       searchsync reindex --config FILE INDEX --delete-all\n\n"
            "Rebuild index config INDEX (its alias) into a new version <alias>_v<N> and move\n"
            "the alias to it when every job is done. The jobs run in `searchsync run`, which\n"
            "writes live changes to both versions meanwhile; this command waits and shows\n"
            "progress (fed by several sources: each source's part, and what holds the switch;\n"
            "--no-wait: return once queued). --buckets: jobs (default [reindex]\n"
            "buckets); --by-mod: bucket by MOD(bucket_column, N) instead of key ranges.\n"
            "--reset cancels a build; --delete-all deletes every version of the index.\n");
}

struct env {
    struct command c; /* c.cfg, c.meta */
    struct search_client *client;
    struct search_conn *k;
    char err[2048];
};

/* the metadata schema and the engine (an operation connects the source
 * where it needs it) */
static int env_open(struct env *e) {
    const char *cmd = e->c.name;
    int rc = command_meta(&e->c, "metadata schema: ");
    if (rc >= 0) return rc;
    struct search_opts so;
    deliver_search_opts(&so, &e->c.cfg);
    e->client = search_client_new(&so, e->err, sizeof e->err);
    e->k = e->client ? search_conn_new(e->client) : NULL;
    if (!e->client || search_detect(e->client, e->k, e->err, sizeof e->err) != 0) {
        fprintf(stderr, "searchsync %s: %s\n", cmd, e->err);
        return EXIT_RUNTIME;
    }
    return EXIT_OK;
}

static int env_close(struct env *e, int rc) {
    search_conn_free(e->k);
    search_client_free(e->client);
    return command_end(&e->c, rc);
}

/* the mapping of this configuration's source, quoted, appended to q */
static void quote_mapping(struct env *e, sbuf *q) {
    const char *m = config_mapping_name(&e->c.cfg);
    db_quote(e->c.meta, q, m, strlen(m));
}

#define FOLLOW_POLL_MS 200
/* the parts of a build across sources, as `status` says them: printed when
 * something other than a count changed (a part planned, a source down or
 * back), else at most every FOLLOW_PARTS_EVERY_S while counts move */
#define FOLLOW_PARTS_EVERY_S 5
struct follow_parts {
    struct mapping m;
    const struct mp_index *mi; /* NULL: one source (or the mapping unreadable) */
    sbuf last, last_shape;
    time_t last_at;
};

static void parts_open(struct env *e, const char *alias, struct follow_parts *fp) {
    memset(fp, 0, sizeof *fp);
    if (mapping_db_load_config(e->c.meta, &e->c.cfg, &fp->m, e->err, sizeof e->err) < 0)
        return; /* followed by the totals alone */
    for (size_t i = 0; i < fp->m.nindices; i++)
        if (!strcmp(fp->m.indices[i].alias, alias) && mp_index_multi(&fp->m.indices[i]))
            fp->mi = &fp->m.indices[i];
}

static void parts_close(struct follow_parts *fp) {
    mapping_free(&fp->m);
    sbuf_free(&fp->last);
    sbuf_free(&fp->last_shape);
}

static void parts_print(struct env *e, struct follow_parts *fp, unsigned v) {
    if (!fp->mi) return;
    struct status_sources ss;
    status_sources_collect(&e->c.cfg, e->c.meta, NULL, fp->mi, v, &ss);
    sbuf now = SBUF_INIT, shape = SBUF_INIT;
    status_sources_build_text(&ss, &now);
    status_sources_free(&ss);
    for (size_t i = 0; i < now.len; i++) /* the text without its counts */
        if (now.data[i] < '0' || now.data[i] > '9') sbuf_addc(&shape, now.data[i]);
    time_t t = time(NULL);
    bool changed = now.len != fp->last.len || memcmp(now.data, fp->last.data, now.len) != 0;
    bool reshaped = shape.len != fp->last_shape.len ||
                    memcmp(shape.data, fp->last_shape.data, shape.len) != 0;
    if (now.len && (reshaped || (changed && t - fp->last_at >= FOLLOW_PARTS_EVERY_S))) {
        fwrite(now.data, 1, now.len, stdout);
        fflush(stdout);
        sbuf_reset(&fp->last);
        sbuf_add(&fp->last, now.data, now.len);
        sbuf_reset(&fp->last_shape);
        sbuf_add(&fp->last_shape, shape.data, shape.len);
        fp->last_at = t;
    }
    sbuf_free(&now);
    sbuf_free(&shape);
}

/* once v is live: what each source's part did (reindex_run_jobs) */
static void parts_summary(struct env *e, const struct follow_parts *fp, const char *alias,
                          unsigned v) {
    if (!fp->mi) return;
    sbuf q = SBUF_INIT;
    sbuf_printf(&q, "SELECT COALESCE(j.source, '?'), COUNT(*), SUM(j.rows_read), "
                    "SUM(j.docs_written), SUM(j.rejected) FROM reindex_run_jobs j JOIN "
                    "reindex_runs r ON r.id = j.run_id WHERE r.version = %u AND r.index_id = "
                    "(SELECT id FROM index_configs WHERE source = ", v);
    quote_mapping(e, &q);
    sbuf_adds(&q, " AND alias = ");
    db_quote(e->c.meta, &q, alias, strlen(alias));
    sbuf_adds(&q, ") GROUP BY j.source ORDER BY j.source");
    MYSQL_RES *res = db_query(e->c.meta, q.data, q.len, e->err, sizeof e->err);
    MYSQL_ROW row;
    while (res && (row = mysql_fetch_row(res)))
        printf("  %s  its part: %s job(s), %s rows read, %s documents written, %s rejected\n",
               row[0], row[1], row[2], row[3], row[4]);
    if (res) mysql_free_result(res);
    sbuf_free(&q);
}

/* a build the engine lost writes of is queued again by the daemon that
 * rolled it back: the version queued in place of v (0: none within 10 s),
 * to be followed too */
static unsigned queued_after(struct env *e, const char *alias, unsigned v) {
    sbuf q = SBUF_INIT;
    unsigned next = 0;
    for (int waits = 0; next <= v && waits < 10 * (1000 / FOLLOW_POLL_MS); waits++) {
        if (waits) {
            struct timespec ts = {0, FOLLOW_POLL_MS * 1000000L};
            nanosleep(&ts, NULL);
        }
        sbuf_reset(&q);
        sbuf_adds(&q, "SELECT building_version FROM index_configs WHERE source = ");
        quote_mapping(e, &q);
        sbuf_adds(&q, " AND alias = ");
        db_quote(e->c.meta, &q, alias, strlen(alias));
        char *b[1];
        if (db_row1(e->c.meta, q.data, q.len, b, 1, e->err, sizeof e->err) == 1 && b[0])
            next = (unsigned)strtoul(b[0], NULL, 10);
        db_row_free(b, 1);
    }
    sbuf_free(&q);
    return next > v ? next : 0;
}

/* follow build `v` of alias until it is no longer building: its state is
 * read every FOLLOW_POLL_MS (so the command returns soon after the switch),
 * progress printed at most once a second */
static int follow(struct env *e, const char *alias, unsigned v) {
    sbuf q = SBUF_INIT;
    int rc = EXIT_RUNTIME, polls = 0;
    bool told = false, running_seen = false, again = false;
    char last[256] = "";
    struct follow_parts fp;
    parts_open(e, alias, &fp);
    for (;;) {
        sbuf_reset(&q);
        /* one pass over the version's jobs (idx_jobs_index) */
        sbuf_printf(&q, "SELECT ic.state, ic.building_version, COUNT(j.id), "
                        "COALESCE(SUM(j.status = 'done'), 0), COALESCE(SUM(j.rows_read), 0), "
                        "COALESCE(SUM(j.docs_written), 0), COALESCE(SUM(j.status <> 'init'), 0) "
                        "FROM index_configs ic LEFT JOIN jobs j ON j.index_id = ic.id AND "
                        "j.version = %u AND j.type = 'index' WHERE ic.source = ",
                    v);
        quote_mapping(e, &q);
        sbuf_adds(&q, " AND ic.alias = ");
        db_quote(e->c.meta, &q, alias, strlen(alias));
        sbuf_adds(&q, " GROUP BY ic.id");
        MYSQL_RES *res = db_query(e->c.meta, q.data, q.len, e->err, sizeof e->err);
        if (!res) {
            fprintf(stderr, "searchsync reindex: following %s v%u: %s. The build goes on in "
                    "searchsync run; follow it with searchsync status\n", alias, v,
                    mysql_error(e->c.meta));
            break;
        }
        MYSQL_ROW row = mysql_fetch_row(res);
        if (!row) {
            mysql_free_result(res);
            fprintf(stderr, "searchsync reindex: index config %s is gone\n", alias);
            break;
        }
        bool building = strtoul(row[1], NULL, 10) == v;
        char line[256];
        snprintf(line, sizeof line, "%s v%u: %s, jobs %s/%s done, %s rows read, %s documents", alias,
                 v, row[0], row[3], row[2], row[4], row[5]);
        running_seen |= strtol(row[6], NULL, 10) > 0;
        mysql_free_result(res);
        if (building && polls % (1000 / FOLLOW_POLL_MS) == 0) {
            if (strcmp(line, last)) {
                printf("%s\n", line);
                fflush(stdout);
                snprintf(last, sizeof last, "%s", line);
            }
            parts_print(e, &fp, v);
        }
        if (!building) break;
        if (!running_seen && polls >= 15 * (1000 / FOLLOW_POLL_MS) && !told) {
            printf("no daemon has started the jobs yet: they run in `searchsync run --config ...` "
                   "for source %s\n", e->c.cfg.source.name);
            told = true;
        }
        polls++;
        struct timespec ts = {0, FOLLOW_POLL_MS * 1000000L};
        nanosleep(&ts, NULL);
    }
    sbuf_reset(&q);
    sbuf_printf(&q, "SELECT status, rows_read, docs_written, rejected, COALESCE(error_text, ''), "
                    "TIMESTAMPDIFF(MICROSECOND, started_at, finished_at) / 1e6 FROM reindex_runs "
                    "WHERE version = %u AND index_id = (SELECT id FROM index_configs WHERE source = ",
                v);
    quote_mapping(e, &q);
    sbuf_adds(&q, " AND alias = ");
    db_quote(e->c.meta, &q, alias, strlen(alias));
    sbuf_adds(&q, ")");
    MYSQL_RES *res = db_query(e->c.meta, q.data, q.len, e->err, sizeof e->err);
    if (res) {
        MYSQL_ROW row = mysql_fetch_row(res);
        if (row && !strcmp(row[0], "done")) {
            char phys[600];
            printf("%s v%u is live: %s rows read, %s documents written, %s rejected in %s s; alias "
                   "%s -> %s\n",
                   alias, v, row[1], row[2], row[3], row[5] ? row[5] : "?", alias,
                   index_version_name(phys, sizeof phys, alias, v));
            parts_summary(e, &fp, alias, v);
            rc = EXIT_OK;
        } else if (row) {
            fprintf(stderr, "searchsync reindex: %s v%u %s: %s\n", alias, v, row[0], row[4]);
            again = strstr(row[4], "; queued again") != NULL;
        }
        mysql_free_result(res);
    }
    parts_close(&fp);
    sbuf_free(&q);
    unsigned next = again ? queued_after(e, alias, v) : 0;
    if (next) {
        printf("following %s v%u, queued in place of v%u\n", alias, next, v);
        fflush(stdout);
        return follow(e, alias, next);
    }
    return rc;
}

int cmd_reindex(int argc, char **argv) {
    static const struct option own[] = {{"buckets", required_argument, NULL, 'b'},
                                        {"by-mod", no_argument, NULL, 'm'},
                                        {"no-wait", no_argument, NULL, 'n'},
                                        {"reset", no_argument, NULL, 'r'},
                                        {"delete-all", no_argument, NULL, 'd'},
                                        {NULL, 0, NULL, 0}};
    struct env e = {.c = {.name = "reindex", .usage = usage_reindex, .opts = own,
                          .shortopts = "b:mnrd", .argc = argc, .argv = argv}};
    int buckets = 0;
    bool by_mod = false, no_wait = false, reset = false, delete_all = false;
    int o;
    while ((o = command_opt(&e.c)) > 0) {
        char *end = NULL;
        switch (o) {
        case 'b':
            buckets = (int)strtol(optarg, &end, 10);
            if (*end || buckets < 1 || buckets > 4096) {
                fprintf(stderr, "searchsync reindex: --buckets must be 1..4096\n");
                return EXIT_USAGE;
            }
            break;
        case 'm': by_mod = true; break;
        case 'n': no_wait = true; break;
        case 'r': reset = true; break;
        case 'd': delete_all = true; break;
        }
    }
    if (o < 0) return e.c.rc;
    if (!e.c.config || optind != argc - 1 || (reset && delete_all)) return command_usage(&e.c);
    const char *alias = argv[optind];
    int rc = command_begin(&e.c, 0);
    if (rc >= 0) return rc;
    const struct ss_config *cfg = &e.c.cfg;
    rc = env_open(&e);
    if (rc != EXIT_OK) return env_close(&e, rc);
    /* the node's operations (sync/ops/), on this command's connections */
    struct ops_env env = {.cfg = cfg, .client = e.client, .meta = e.c.meta,
                          .by = reset ? "reindex --reset" : "reindex command"};
    struct ops_err oe;
    if (reset) {
        struct ops_reset_res res;
        if (ops_reindex_reset(&env, alias, &res, &oe) == OPS_OK)
            printf("%s: the build was cancelled and its index deleted\n", alias);
        else fprintf(stderr, "searchsync reindex: %s\n", oe.msg);
        rc = ops_exit(oe.st);
    } else if (delete_all) {
        if (ops_reindex_delete_all(&env, alias, &oe) == OPS_OK)
            printf("%s: every version deleted; the config stays (unavailable)\n", alias);
        else fprintf(stderr, "searchsync reindex: %s\n", oe.msg);
        rc = ops_exit(oe.st);
    } else {
        struct ops_reindex_req rq = {alias, buckets, by_mod};
        struct ops_reindex_res res;
        if (ops_reindex_request(&env, &rq, &res, &oe) != OPS_OK) {
            fprintf(stderr, "searchsync reindex: %s\n", oe.msg);
            rc = ops_exit(oe.st);
        } else {
            char phys[600];
            printf("%s: version %u queued (%s)\n", alias, res.version,
                   index_version_name(phys, sizeof phys, alias, res.version));
            fflush(stdout);
            rc = no_wait ? EXIT_OK : follow(&e, alias, res.version);
        }
    }
    return env_close(&e, rc);
}
