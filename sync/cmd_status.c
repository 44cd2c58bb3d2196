/* cmd_status: `searchsync status` — where one source's sync stands, read from
 * the metadata schema, the source and the engine (nothing here is kept in
 * the daemon's memory, so it works whether a daemon runs or not):
 *
 *   source   checkpoint (position, age) beside the binlog's end on the source,
 *            and how far behind that is when both are in one file (caught
 *            up when those bytes are only checkpoint saves)
 *   indices  per index config: state, live version, epoch; where the alias
 *            points in the engine and how many documents it holds
 *   jobs     reindex jobs by status (issue 6)
 *   waiting  dead letters per index, change snapshots for the delayed run
 *
 * The facts are gathered by sync/status.c (shared with the admin API's
 * GET /api/v1/status); this file prints them.
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
#include "sbuf.h"
#include "search/search.h"
#include "status.h"

static void status_usage(FILE *out) {
    fprintf(out, "usage: searchsync status --config FILE\n\n"
                 "Where the sync of the configured source stands: checkpoint against the\n"
                 "binlog's end, each index config's state and live version, the engine's\n"
                 "document counts, reindex jobs, dead letters and change snapshots.\n"
                 "Exit 0 ok, 3 dead letters are waiting, 1 a server could not be asked.\n");
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
    db_params sp = db_params_source(&cfg);
    char src_err[1024] = "", engine_err[1024] = "";
    src = db_connect(&sp, src_err, sizeof src_err);
    struct search_opts so;
    deliver_search_opts(&so, &cfg);
    client = search_client_new(&so, engine_err, sizeof engine_err);
    k = client ? search_conn_new(client) : NULL;
    struct ss_status st;
    status_collect(&cfg, meta, src, src_err, k, engine_err, &st);

    /* ---- source */
    printf("source %s (%s:%d)\n", st.source_name, st.source_host, st.source_port);
    if (st.checkpoint)
        printf("  checkpoint  %s (saved %s s ago)\n", st.checkpoint, st.checkpoint_age);
    else
        printf("  checkpoint  none yet (the daemon starts at [source] start = %s)\n", st.start);
    if (st.source_reached) {
        if (st.binlog_end) {
            printf("  binlog end  %s", st.binlog_end);
            if (st.bytes_behind >= 0)
                printf(" (%lld bytes behind%s)", st.bytes_behind,
                       st.bytes_behind == 0 ? ": caught up"
                       : st.caught_up       ? ": caught up, those are checkpoint writes"
                                            : "");
            putchar('\n');
        } else {
            printf("  binlog end  unknown: %s\n", st.binlog_err);
        }
    } else {
        printf("  source unreachable: %s\n", st.source_err);
        rc = EXIT_RUNTIME;
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
    printf("indices (%zu)\n", st.nindices);
    if (!st.nindices) printf("  none: import a mapping (searchsync mapping import)\n");
    for (size_t i = 0; i < st.nindices; i++) {
        const struct status_index *ix = &st.indices[i];
        printf("  %s  state %s, version %u, epoch %u, %zu table(s)", ix->alias, ix->state,
               ix->current_version, ix->epoch, ix->ntables);
        if (ix->building_version) printf(", building version %u", ix->building_version);
        putchar('\n');
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

    /* ---- jobs, dead letters, snapshots */
    printf("jobs (index, status, jobs, rows read, documents written, errors)\n");
    if (print_rows(&st.jobs) == 0) printf("  none\n");
    printf("dead letters (index, count)\n");
    long n = print_rows(&st.dead);
    if (n == 0) printf("  none\n");
    else if (n > 0) {
        printf("  see: searchsync dead-letters list --config %s\n", path);
        if (rc == EXIT_OK) rc = EXIT_FOUND;
    }
    printf("change snapshots waiting for the delayed run (table, count)\n");
    if (print_rows(&st.snapshots) == 0) printf("  none\n");
    printf("last delayed run (id, status, started, finished, snapshots, ids, documents rebuilt, "
           "deleted, errors)\n");
    if (print_rows(&st.delayed_run) == 0) printf("  none (searchsync delayed-run)\n");
    status_free(&st);
out:
    search_conn_free(k);
    search_client_free(client);
    db_close(src);
    db_close(meta);
    config_free(&cfg);
    mysql_library_end();
    return rc;
}
