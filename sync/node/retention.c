/* retention: the metadata schema's history cleaned by age (see retention.h). */
#include "sync/node/retention.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mysql.h>

#include "db.h"
#include "log.h"
#include "sbuf.h"

struct rule {
    const char *table;
    bool by_source;
    const char *cond; /* with %d for keep_days */
};

static const struct rule rules[] = {
    {"sync_log", true, "created_at < NOW(3) - INTERVAL %d DAY"},
    {"job_errors", false, "created_at < NOW(3) - INTERVAL %d DAY"},
    {"change_snapshots", true, "status = 'done' AND updated_at < NOW(3) - INTERVAL %d DAY"},
    {"delayed_runs", true, "status <> 'running' AND started_at < NOW(3) - INTERVAL %d DAY"},
    {"check_runs", true, "started_at < NOW(3) - INTERVAL %d DAY"},
    {"node_states", true, "updated_at < NOW(3) - INTERVAL %d DAY"},
};

int retention_prune(MYSQL *meta, const char *source, unsigned long long *deleted, char *err,
                    size_t errlen) {
    *deleted = 0;
    static const char sel[] = "SELECT table_name, keep_days FROM retention";
    MYSQL_RES *res = db_query(meta, sel, sizeof sel - 1, err, errlen);
    if (!res) return -1;
    int keep[sizeof rules / sizeof rules[0]];
    for (size_t i = 0; i < sizeof rules / sizeof rules[0]; i++) keep[i] = -1;
    MYSQL_ROW row;
    while ((row = mysql_fetch_row(res)))
        for (size_t i = 0; i < sizeof rules / sizeof rules[0]; i++)
            if (row[0] && row[1] && !strcmp(row[0], rules[i].table)) keep[i] = atoi(row[1]);
    mysql_free_result(res);
    for (size_t i = 0; i < sizeof rules / sizeof rules[0]; i++) {
        if (keep[i] < 1) continue; /* no row (or 0): kept for ever */
        for (;;) {
            sbuf q = SBUF_INIT;
            sbuf_printf(&q, "DELETE FROM %s WHERE ", rules[i].table);
            sbuf_printf(&q, rules[i].cond, keep[i]);
            if (rules[i].by_source) {
                sbuf_adds(&q, " AND source = ");
                db_quote(meta, &q, source, strlen(source));
            }
            sbuf_printf(&q, " LIMIT %d", RETENTION_BATCH);
            long long n = db_exec_rows(meta, q.data, err, errlen);
            sbuf_free(&q);
            if (n < 0) return -1;
            *deleted += (unsigned long long)n;
            if (n < RETENTION_BATCH) break;
        }
    }
    return 0;
}

static void run_prune(struct schedule *sch, void *ud) {
    (void)sch;
    struct retention_schedule *r = ud;
    char err[1024];
    db_params mp = db_params_metadata(r->cfg);
    mp.database = r->cfg->metadata.database;
    MYSQL *meta = db_connect(&mp, err, sizeof err);
    unsigned long long n = 0;
    if (meta && retention_prune(meta, r->cfg->source.name, &n, err, sizeof err) == 0) {
        if (n) log_info("run", "retention: %llu history row(s) older than the retention table "
                        "keeps removed from the metadata schema", n);
        r->warned = false;
    } else if (!r->warned) {
        log_warn("run", "retention: the metadata schema's history not cleaned: %s (tried again "
                 "every hour)", err);
        r->warned = true;
    }
    db_close(meta);
}

int retention_schedule_start(struct retention_schedule *r, const struct ss_config *cfg,
                             volatile sig_atomic_t *daemon_stop) {
    memset(r, 0, sizeof *r);
    r->cfg = cfg;
    return schedule_start_every(&r->sch, 3600, daemon_stop, run_prune, r);
}

void retention_schedule_stop(struct retention_schedule *r) { schedule_stop(&r->sch); }
