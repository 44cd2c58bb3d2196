/* cmd_status: `searchsync status` — where one source's sync stands, read from
 * the metadata schema, the source and the engine (nothing here is kept in
 * the daemon's memory, so it works whether a daemon runs or not):
 *
 *   source   checkpoint (position, age) beside the binlog's end on the source,
 *            and how far behind that is when both are in one file
 *   indices  per index config: state, live version, epoch; where the alias
 *            points in the engine and how many documents it holds
 *   jobs     reindex jobs by status (issue 6)
 *   waiting  dead letters per index, change snapshots for the delayed run
 *
 * Exit: 0 all reported and nothing waits for an operator; 3 dead letters are
 * waiting (see `searchsync dead-letters list`); 1 a server could not be
 * asked (the rest is still printed); 2 usage or configuration. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "config.h"
#include "db.h"
#include "deliver/deliver.h"
#include "json_exact.h"
#include "mapping.h"
#include "sbuf.h"
#include "search/search.h"

static void status_usage(FILE *out) {
    fprintf(out, "usage: searchsync status --config FILE\n\n"
                 "Where the sync of the configured source stands: checkpoint against the\n"
                 "binlog's end, each index config's state and live version, the engine's\n"
                 "document counts, reindex jobs, dead letters and change snapshots.\n"
                 "Exit 0 ok, 3 dead letters are waiting, 1 a server could not be asked.\n");
}

/* print rows of a query as "  label<TAB>..." lines; returns rows or -1 */
static long print_rows(MYSQL *m, const char *sql, const char *indent, char *err, size_t errlen) {
    if (mysql_real_query(m, sql, strlen(sql)) != 0) {
        snprintf(err, errlen, "%s (%u)", mysql_error(m), mysql_errno(m));
        return -1;
    }
    MYSQL_RES *res = mysql_store_result(m);
    if (!res) return 0;
    long n = 0;
    unsigned nf = mysql_num_fields(res);
    MYSQL_ROW row;
    while ((row = mysql_fetch_row(res))) {
        fputs(indent, stdout);
        for (unsigned i = 0; i < nf; i++) printf("%s%s", i ? "  " : "", row[i] ? row[i] : "-");
        putchar('\n');
        n++;
    }
    mysql_free_result(res);
    return n;
}

static int engine_line(struct search_conn *k, const char *alias, char *err, size_t errlen) {
    struct search_resp r;
    search_resp_init(&r);
    char path[600];
    int rc = 0;
    snprintf(path, sizeof path, "/_alias/%s", alias);
    if (search_request(k, "GET", path, NULL, NULL, 0, &r) != 0) {
        rc = errf(err, errlen, "engine: %s", r.err);
        goto out;
    }
    sbuf targets = SBUF_INIT;
    if (r.status == 200) {
        cJSON *j = json_exact_parse(r.body.data, r.body.len);
        cJSON *it;
        cJSON_ArrayForEach(it, j) sbuf_printf(&targets, "%s%s", targets.len ? "," : "", it->string);
        cJSON_Delete(j);
    }
    if (!targets.len) {
        printf("    engine: alias %s does not exist yet (the daemon or a reindex creates it)\n",
               alias);
        sbuf_free(&targets);
        goto out;
    }
    snprintf(path, sizeof path, "/%s/_count", alias);
    const char *count = "?";
    cJSON *j = NULL;
    if (search_request(k, "GET", path, NULL, NULL, 0, &r) == 0 && r.status == 200) {
        j = json_exact_parse(r.body.data, r.body.len);
        cJSON *c = cJSON_GetObjectItem(j, "count");
        if (c && cJSON_IsRaw(c)) count = c->valuestring;
    }
    printf("    engine: alias %s -> %s, %s documents\n", alias, targets.data, count);
    cJSON_Delete(j);
    sbuf_free(&targets);
out:
    search_resp_free(&r);
    return rc;
}

int cmd_status(int argc, char **argv) {
    static const struct option opts[] = {{"config", required_argument, NULL, 'c'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    const char *path = NULL;
    int o;
    optind = 1;
    while ((o = getopt_long(argc, argv, "c:h", opts, NULL)) != -1) {
        if (o == 'c') path = optarg;
        else if (o == 'h') return status_usage(stdout), EXIT_OK;
        else return status_usage(stderr), EXIT_USAGE;
    }
    if (!path || optind != argc) return status_usage(stderr), EXIT_USAGE;
    struct ss_config cfg;
    char err[1024];
    if (config_load(&cfg, path, err, sizeof err) < 0) {
        fprintf(stderr, "searchsync: %s\n", err);
        config_free(&cfg);
        return EXIT_USAGE;
    }
    int rc = EXIT_OK;
    struct mapping m = {0};
    struct search_client *client = NULL;
    struct search_conn *k = NULL;
    MYSQL *src = NULL;
    db_params mp = db_params_metadata(&cfg);
    MYSQL *meta = db_connect(&mp, err, sizeof err);
    if (!meta || metadb_migrate(meta, cfg.metadata.database, err, sizeof err) < 0) {
        fprintf(stderr, "searchsync status: metadata schema: %s\n", err);
        rc = EXIT_RUNTIME;
        goto out;
    }
    sbuf q = SBUF_INIT;
    const char *name = cfg.source.name;

    /* ---- source */
    sbuf_adds(&q, "SELECT position, TIMESTAMPDIFF(SECOND, updated_at, NOW(3)) FROM offsets "
                  "WHERE source = ");
    db_quote(meta, &q, name, strlen(name));
    char ckpt[4200] = "", age[32] = "";
    if (mysql_real_query(meta, q.data, q.len) == 0) {
        MYSQL_RES *res = mysql_store_result(meta);
        MYSQL_ROW row = res ? mysql_fetch_row(res) : NULL;
        if (row) {
            snprintf(ckpt, sizeof ckpt, "%s", row[0] ? row[0] : "");
            snprintf(age, sizeof age, "%s", row[1] ? row[1] : "?");
        }
        if (res) mysql_free_result(res);
    }
    printf("source %s (%s:%d)\n", name, cfg.source.host ? cfg.source.host : "localhost",
           cfg.source.port);
    if (ckpt[0])
        printf("  checkpoint  %s (saved %s s ago)\n", ckpt, age);
    else
        printf("  checkpoint  none yet (the daemon starts at [source] start = %s)\n",
               cfg.source.start);
    db_params sp = db_params_source(&cfg);
    src = db_connect(&sp, err, sizeof err);
    char *end = NULL;
    if (src) {
        if (mysql_real_query(src, "SHOW MASTER STATUS", 18) == 0) {
            MYSQL_RES *res = mysql_store_result(src);
            MYSQL_ROW row = res ? mysql_fetch_row(res) : NULL;
            if (row && row[0] && row[1]) {
                sbuf e = SBUF_INIT;
                sbuf_printf(&e, "%s:%s", row[0], row[1]);
                end = e.data;
            }
            if (res) mysql_free_result(res);
        }
        if (end) {
            printf("  binlog end  %s", end);
            const char *c1 = strrchr(ckpt, ':'), *c2 = strrchr(end, ':');
            if (c1 && c2 && c1 - ckpt == c2 - end && !strncmp(ckpt, end, (size_t)(c1 - ckpt))) {
                long long behind = strtoll(c2 + 1, NULL, 10) - strtoll(c1 + 1, NULL, 10);
                printf(" (%lld bytes behind%s)", behind > 0 ? behind : 0,
                       behind <= 0 ? ": caught up" : "");
            }
            putchar('\n');
        } else {
            printf("  binlog end  unknown: SHOW MASTER STATUS failed or the binlog is off: %s\n",
                   mysql_error(src));
        }
    } else {
        printf("  source unreachable: %s\n", err);
        rc = EXIT_RUNTIME;
    }
    free(end);

    /* ---- indices */
    if (mapping_db_load(meta, name, &m, err, sizeof err) < 0) {
        fprintf(stderr, "searchsync status: mapping: %s\n", err);
        rc = EXIT_RUNTIME;
        goto done;
    }
    struct search_opts so;
    deliver_search_opts(&so, &cfg);
    client = search_client_new(&so, err, sizeof err);
    k = client ? search_conn_new(client) : NULL;
    bool engine_ok = client && k;
    if (!engine_ok) {
        printf("engine: %s\n", err);
        rc = EXIT_RUNTIME;
    }
    printf("indices (%zu)\n", m.nindices);
    if (!m.nindices) printf("  none: import a mapping (searchsync mapping import)\n");
    for (size_t i = 0; i < m.nindices; i++) {
        const struct mp_index *ix = &m.indices[i];
        printf("  %s  state %s, version %u, epoch %u, %zu table(s)\n", ix->alias,
               ix->state ? ix->state : "?", ix->current_version, ix->epoch, ix->ntables);
        if (engine_ok && engine_line(k, ix->alias, err, sizeof err) < 0) {
            printf("    %s\n", err);
            engine_ok = false;
            rc = EXIT_RUNTIME;
        }
    }

    /* ---- jobs, dead letters, snapshots */
    sbuf_reset(&q);
    sbuf_adds(&q, "SELECT ic.alias, j.status, COUNT(*), SUM(j.rows_read), SUM(j.docs_written), "
                  "SUM(j.errors) FROM jobs j JOIN index_configs ic ON ic.id = j.index_id "
                  "WHERE j.source = ");
    db_quote(meta, &q, name, strlen(name));
    sbuf_adds(&q, " GROUP BY ic.alias, j.status ORDER BY ic.alias, j.status");
    printf("jobs (index, status, jobs, rows read, documents written, errors)\n");
    long n = print_rows(meta, q.data, "  ", err, sizeof err);
    if (n == 0) printf("  none\n");
    sbuf_reset(&q);
    sbuf_adds(&q, "SELECT index_name, COUNT(*) FROM dead_letters WHERE source = ");
    db_quote(meta, &q, name, strlen(name));
    sbuf_adds(&q, " GROUP BY index_name ORDER BY index_name");
    printf("dead letters (index, count)\n");
    n = print_rows(meta, q.data, "  ", err, sizeof err);
    if (n == 0) printf("  none\n");
    else if (n > 0) {
        printf("  see: searchsync dead-letters list --config %s\n", path);
        if (rc == EXIT_OK) rc = EXIT_FOUND;
    }
    sbuf_reset(&q);
    sbuf_adds(&q, "SELECT CONCAT(db_name, '.', table_name), COUNT(*) FROM change_snapshots "
                  "WHERE status IN ('init', 'error') AND source = ");
    db_quote(meta, &q, name, strlen(name));
    sbuf_adds(&q, " GROUP BY db_name, table_name ORDER BY db_name, table_name");
    printf("change snapshots waiting for the delayed run (table, count)\n");
    n = print_rows(meta, q.data, "  ", err, sizeof err);
    if (n == 0) printf("  none\n");
done:
    sbuf_free(&q);
out:
    search_conn_free(k);
    search_client_free(client);
    mapping_free(&m);
    db_close(src);
    db_close(meta);
    config_free(&cfg);
    mysql_library_end();
    return rc;
}
