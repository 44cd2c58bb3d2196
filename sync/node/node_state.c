/* node_state: what each `searchsync run` of a source is, written to the
 * metadata schema's node_states row (source, node) when it changes, so that
 * `searchsync status` shows every node of a source (a reader and its
 * standbys) without asking each one: its role (reader while it holds the
 * source's reader lock or election, standby before, stopped at the end),
 * whether the engine answers, the fuses blown, its subsystems' health. Looked at every second on a
 * thread and connection of its own (schedule.c), written only when one of
 * those changed: an idle daemon writes nothing (with the metadata on the
 * source every write would be a binlog transaction, which the checkpoint
 * and `status`'s caught-up test would then have to account for). Counts
 * that move all the time (queues, acknowledgements, the reader's position)
 * are live figures: /metrics and GET /api/v1/live (web/api.c). */
#include "sync/node/node_state.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <mysql.h>

#include "db.h"
#include "deliver/deliver.h"
#include "jsonw.h"
#include "sync/cluster/leadership.h"
#include "sync/node/node.h"
#include "log.h"
#include "sync/sources/reader_stats.h"

static void write_state(struct node_state *ns, const char *role_override) {
    const char *role = role_override ? role_override : ns->lead->fence ? "reader" : "standby";
    bool engine_up = true;
    sbuf fuses = SBUF_INIT;
    deliver_fuses_json(ns->d, &fuses, &engine_up);
    sbuf js = SBUF_INIT;
    jsonw w;
    jw_init(&w, &js);
    jw_obj_open(&w);
    jw_key(&w, "version");
    jw_str(&w, PACKAGE_VERSION);
    jw_key(&w, "pid");
    jw_int(&w, (long long)getpid());
    jw_key(&w, "engine_up");
    jw_bool(&w, engine_up);
    jw_key(&w, "fuses_blown");
    jw_raw(&w, fuses.data, fuses.len);
    /* its source lost: other sources' status names it (several sources
     * feed one index, docs/cluster.md) */
    struct reader_figures f = reader_stats_copy(ns->rs);
    jw_key(&w, "source_up");
    jw_bool(&w, !f.source_down_ms);
    if (f.source_down_ms) {
        jw_key(&w, "source_down_since_ms");
        jw_int(&w, f.source_down_ms);
        jw_key(&w, "source_error");
        jw_str(&w, f.source_err);
    }
    /* its lag for `searchsync source list` and the UI's Databases screen,
     * which see every source but only this table: 0 at the binlog's end
     * (an idle heartbeat last), else the age of the newest transaction read
     * (an upper bound, as /metrics' searchsync_binlog_lag_seconds) */
    if (f.reading && (f.at_end || f.commit_ts)) {
        long long lag = f.at_end ? 0 : (long long)(reader_stats_now_ms() / 1000) - f.commit_ts;
        jw_key(&w, "lag_s");
        jw_int(&w, lag < 0 ? 0 : lag);
    }
    /* its subsystems' health, as systemd's watchdog asks it (each why
     * names a bound, not the time passed: the row is written once when a
     * subsystem turns unwell, once when it is well again) */
    if (ns->nd) {
        sbuf unwell = SBUF_INIT;
        bool well = node_health_json(ns->nd, &unwell);
        jw_key(&w, "healthy");
        jw_bool(&w, well);
        jw_key(&w, "unwell");
        jw_raw(&w, unwell.data, unwell.len);
        sbuf_free(&unwell);
    }
    jw_obj_close(&w);
    sbuf_free(&fuses);
    /* unchanged since the last write: nothing to write */
    if (ns->last.len && !strcmp(ns->last_role, role) && ns->last.len == js.len &&
        !memcmp(ns->last.data, js.data, js.len)) {
        sbuf_free(&js);
        return;
    }
    MYSQL *m = ns->conn;
    char err[512];
    db_params mp = db_params_metadata(ns->cfg);
    mp.database = ns->cfg->metadata.database;
    if (db_ensure(&m, &mp, err, sizeof err) < 0) {
        ns->conn = m;
        if (!ns->warned) log_warn("run", "node state not written (will retry): %s", err);
        ns->warned = true;
        sbuf_free(&js);
        return;
    }
    ns->conn = m;
    sbuf q = SBUF_INIT;
    sbuf_adds(&q, "INSERT INTO node_states (source, node, role, state) VALUES (");
    db_quote(m, &q, ns->cfg->source.name, strlen(ns->cfg->source.name));
    sbuf_addc(&q, ',');
    db_quote(m, &q, ns->lead->node_id, strlen(ns->lead->node_id));
    sbuf_addc(&q, ',');
    db_quote(m, &q, role, strlen(role));
    sbuf_addc(&q, ',');
    db_quote(m, &q, js.data, js.len);
    /* started_at: this process's start (a restart replaces the row) */
    /* started_at first: it reads the row as it was (assignments apply in order) */
    sbuf_printf(&q, ") ON DUPLICATE KEY UPDATE started_at = IF(JSON_EXTRACT(state, '$.pid') = "
                    "%lld AND role <> 'stopped', started_at, NOW(3)), role = VALUES(role), "
                    "state = VALUES(state), updated_at = NOW(3)", (long long)getpid());
    if (db_exec(m, q.data, err, sizeof err) < 0) {
        if (!ns->warned) log_warn("run", "node state not written (will retry): %s", err);
        ns->warned = true;
    } else {
        ns->warned = false;
        sbuf_reset(&ns->last);
        sbuf_add(&ns->last, js.data, js.len);
        snprintf(ns->last_role, sizeof ns->last_role, "%s", role);
    }
    sbuf_free(&q);
    sbuf_free(&js);
}

static void tick(struct schedule *s, void *ud) {
    (void)s;
    write_state(ud, NULL);
}

int node_state_start(struct node_state *ns, const struct ss_config *cfg, struct deliver *d,
                     struct reader_stats *rs, struct leadership *lead, struct node *nd,
                     volatile sig_atomic_t *daemon_stop) {
    memset(ns, 0, sizeof *ns);
    ns->cfg = cfg, ns->d = d, ns->rs = rs, ns->lead = lead, ns->nd = nd;
    return schedule_start_every(&ns->sch, 1, daemon_stop, tick, ns);
}

void node_state_stop(struct node_state *ns) {
    if (!ns->cfg) return;
    schedule_stop(&ns->sch);
    write_state(ns, "stopped");
    db_close(ns->conn);
    ns->conn = NULL;
    ns->cfg = NULL;
    sbuf_free(&ns->last);
}
