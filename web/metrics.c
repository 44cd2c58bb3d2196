/* metrics: the /metrics page of `searchsync run` (metrics_handle), in Prometheus' text
 * format (version 0.0.4); every name is listed in docs/metrics.md.
 *
 * Three kinds of figures, gathered when a scrape comes:
 *   process    delivery's counters, latencies, queues and fuses
 *              (deliver_stats_prometheus) and the binlog reader's
 *              (sync/sources/reader_stats.h): this process since it started
 *   source     how far the reader and the saved checkpoint are behind the
 *              binlog's end, in bytes (SHOW BINARY LOGS) and seconds
 *   metadata   what every node and cron run of the source wrote down:
 *              dead letters waiting, change snapshots by status, the
 *              reindexes under way (buckets, rows read, documents
 *              written), the last delayed run, the last consistency check
 * The source's and the metadata's figures are read through
 * sync/status/status_figures.h; this file writes the page.
 * A server that cannot be reached leaves its part out and says so in
 * searchsync_scrape_part_up{part=...} 0 (and once in the log): the
 * process's own figures are served regardless.
 * Every sample carries source="[source] name": a process reads one source,
 * and several sources feeding one index are several processes, whose pages
 * Prometheus sums or splits by that label (metrics_label_all). */
#include "metrics.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "binlog/binlog.h"
#include "db.h"
#include "deliver/deliver.h"
#include "log.h"
#include "sync/sources/reader_stats.h"
#include "stmt.h"
#include "sync/status/status_figures.h"
#include "web/api.h"

static void help(sbuf *o, const char *name, const char *type, const char *text) {
    sbuf_printf(o, "# HELP %s %s\n# TYPE %s %s\n", name, text, name, type);
}

static void label_value(sbuf *o, const char *v) {
    for (; v && *v; v++) {
        if (*v == '\\' || *v == '"') sbuf_addc(o, '\\');
        if (*v == '\n') {
            sbuf_adds(o, "\\n");
            continue;
        }
        sbuf_addc(o, *v);
    }
}

/* name{k1="v1",k2="v2"} value — labels as NULL-terminated pairs */
static void sample(sbuf *o, const char *name, const char *const *labels, const char *value) {
    sbuf_adds(o, name);
    if (labels && labels[0]) {
        sbuf_addc(o, '{');
        for (size_t i = 0; labels[i]; i += 2) {
            if (i) sbuf_addc(o, ',');
            sbuf_printf(o, "%s=\"", labels[i]);
            label_value(o, labels[i + 1]);
            sbuf_addc(o, '"');
        }
        sbuf_addc(o, '}');
    }
    sbuf_printf(o, " %s\n", value && *value ? value : "0");
}

static void sample_num(sbuf *o, const char *name, const char *const *labels, double v) {
    char b[64];
    snprintf(b, sizeof b, "%.3f", v);
    sample(o, name, labels, b);
}

static void sample_u64(sbuf *o, const char *name, const char *const *labels,
                       unsigned long long v) {
    char b[32];
    snprintf(b, sizeof b, "%llu", v);
    sample(o, name, labels, b);
}

/* ---------- the source: bytes behind the binlog's end ---------- */

/* "file:pos[...]" as offsets.position holds it */
static bool split_position(const char *p, char *file, size_t filelen, unsigned long long *pos) {
    const char *c = p ? strchr(p, ':') : NULL;
    if (!c || (size_t)(c - p) >= filelen) return false;
    memcpy(file, p, (size_t)(c - p));
    file[c - p] = '\0';
    *pos = strtoull(c + 1, NULL, 10);
    return true;
}

static void reader_part(sbuf *o, const struct ss_config *cfg, const struct reader_figures *f,
                        const struct status_binlogs *logs, bool have_logs) {
    const char *src[] = {"source", cfg->source.name, NULL};
    int64_t now = reader_stats_now_ms();
    help(o, "searchsync_info", "gauge", "Always 1; the labels say which build runs");
    const char *info[] = {"version", PACKAGE_VERSION, "source", cfg->source.name, NULL};
    sample(o, "searchsync_info", info, "1");
    help(o, "searchsync_start_time_seconds", "gauge", "When this process started (unix time)");
    sample_num(o, "searchsync_start_time_seconds", NULL, (double)f->started_ms / 1000.0);
    help(o, "searchsync_reader_reading", "gauge",
         "1 while this node reads the source's binlog (0: standing by, or stopped)");
    sample_u64(o, "searchsync_reader_reading", src, f->reading);
    help(o, "searchsync_binlog_transactions_total", "counter",
         "Source transactions read from the binlog and handed to delivery");
    sample_u64(o, "searchsync_binlog_transactions_total", src, f->txns);
    help(o, "searchsync_binlog_rows_total", "counter",
         "Row changes of mapped tables read from the binlog");
    sample_u64(o, "searchsync_binlog_rows_total", src, f->rows);
    help(o, "searchsync_binlog_ddl_total", "counter", "DDL statements read from the binlog");
    sample_u64(o, "searchsync_binlog_ddl_total", src, f->ddls);
    help(o, "searchsync_binlog_reconnects_total", "counter",
         "Times the binlog connection was made again after it dropped");
    sample_u64(o, "searchsync_binlog_reconnects_total", src, f->reconnects);
    help(o, "searchsync_binlog_replays_total", "counter",
         "Transactions read again because their reads lost a connection midway");
    sample_u64(o, "searchsync_binlog_replays_total", src, f->replays);
    help(o, "searchsync_binlog_purged_rebuilds_total", "counter",
         "Times the binlog after the checkpoint was found purged on the source and every index "
         "rebuilt from MySQL, reading going on at the binlog's end ([source] on_purged = rebuild)");
    sample_u64(o, "searchsync_binlog_purged_rebuilds_total", src, f->purge_rebuilds);
    help(o, "searchsync_binlog_xa_prepared", "gauge",
         "Two-phase XA transactions read up to their XA PREPARE and not yet committed or rolled "
         "back (their documents are rebuilt at the commit; the checkpoint waits before them)");
    sample_u64(o, "searchsync_binlog_xa_prepared", src, f->xa_prepared);
    help(o, "searchsync_ttl_expired_total", "counter",
         "Documents deleted because their row's expiry column passed");
    sample_u64(o, "searchsync_ttl_expired_total", src, f->expired);

    long long behind = -1;
    if (have_logs && f->file[0]) behind = status_bytes_behind(logs, f->file, f->pos);
    help(o, "searchsync_binlog_lag_bytes", "gauge",
         "Binlog bytes between the reader's position and the binlog's end (-1: unknown)");
    char b[32];
    snprintf(b, sizeof b, "%lld", f->reading ? behind : -1);
    sample(o, "searchsync_binlog_lag_bytes", src, b);
    /* 0 when nothing is left to read; else the age of the newest transaction
     * read (the transactions after it are younger: an upper bound) */
    double lag = 0;
    if (f->reading && f->commit_ts && !f->at_end && behind != 0) {
        lag = (double)now / 1000.0 - (double)f->commit_ts;
        if (lag < 0) lag = 0;
    } else if (f->reading && !f->commit_ts && behind > 0) {
        lag = (double)(now - f->started_ms) / 1000.0; /* nothing read yet */
    }
    help(o, "searchsync_binlog_lag_seconds", "gauge",
         "Seconds the reader is behind the source: 0 at the binlog's end, else the age of "
         "the newest transaction it read");
    sample_num(o, "searchsync_binlog_lag_seconds", src, f->reading ? lag : 0);
}

/* ---------- the metadata ---------- */

/* a part left out is said at most once a minute (scrapes come every few
 * seconds while a server is down) */
static atomic_llong warned_ms;

static void part_warn(const char *what, const char *err) {
    long long now = reader_stats_now_ms(), last = atomic_load(&warned_ms);
    if (now - last < 60000 || !atomic_compare_exchange_strong(&warned_ms, &last, now)) return;
    log_warn("admin", "/metrics: %s left out of this scrape: %s (said once a minute)", what,
             err);
}

static void query_warn(const char *what, const char *err) {
    part_warn(what, err);
}

/* One family of samples over rows of the metadata: its labels are the
 * rows' first columns (named by labels, NULL-ended), its value column col. */
struct family {
    const char *name, *type, *help;
    size_t col;
};

static void families(sbuf *o, const struct stmt_rows *r, const char *const *labels,
                     const struct family *f, size_t nf) {
    for (size_t k = 0; k < nf; k++) {
        help(o, f[k].name, f[k].type, f[k].help);
        for (size_t i = 0; i < r->nrows; i++) {
            const char *l[9];
            size_t n = 0;
            for (size_t c = 0; labels[c] && n + 2 < sizeof l / sizeof *l; c++)
                l[n++] = labels[c], l[n++] = STMT_CELL(r, i, c);
            l[n] = NULL;
            sample(o, f[k].name, l, STMT_CELL(r, i, f[k].col));
        }
    }
}

/* Run a query of this source's rows (its one parameter) and render its
 * families; a failure leaves them out of this scrape (said). */
static void query_families(sbuf *o, MYSQL *meta, const char *source, const char *what,
                           enum status_figure fig, const char *const *labels,
                           const struct family *f, size_t nf) {
    char err[1024];
    struct stmt_rows r = {0};
    if (status_figure_rows(meta, source, fig, &r, err, sizeof err) < 0)
        query_warn(what, err);
    else
        families(o, &r, labels, f, nf);
    stmt_rows_free(&r);
}

/* The saved checkpoint: its age, and how far behind the binlog's end it is
 * (logs: the source's binlogs, when have_logs). */
static void checkpoint_part(sbuf *o, MYSQL *meta, const char *source, const struct status_binlogs *logs,
                            bool have_logs) {
    char err[1024];
    struct stmt_rows r = {0};
    if (status_figure_rows(meta, source, SF_CHECKPOINT, &r, err, sizeof err) < 0) {
        query_warn("the checkpoint", err);
    } else if (r.nrows) {
        const char *l[] = {"source", source, NULL};
        help(o, "searchsync_checkpoint_saved_age_seconds", "gauge",
             "Seconds since the checkpoint row was last written (by any node)");
        sample_num(o, "searchsync_checkpoint_saved_age_seconds", l,
                   STMT_CELL(&r, 0, 1) ? strtod(STMT_CELL(&r, 0, 1), NULL) / 1e6 : 0);
        char file[BL_FILE_MAX];
        unsigned long long pos = 0;
        long long behind = -1;
        if (have_logs && split_position(STMT_CELL(&r, 0, 0), file, sizeof file, &pos))
            behind = status_bytes_behind(logs, file, pos);
        help(o, "searchsync_checkpoint_lag_bytes", "gauge",
             "Binlog bytes between the saved checkpoint and the binlog's end (-1: unknown)");
        char b[32];
        snprintf(b, sizeof b, "%lld", behind);
        sample(o, "searchsync_checkpoint_lag_bytes", l, b);
    }
    stmt_rows_free(&r);
}

/* The last delayed run: its status and figures (absent before the first). */
static void delayed_run_part(sbuf *o, MYSQL *meta, const char *source) {
    char err[1024];
    struct stmt_rows r = {0};
    if (status_figure_rows(meta, source, SF_DELAYED_RUN, &r, err, sizeof err) < 0) {
        query_warn("the delayed runs", err);
    } else {
        const char *l[] = {"source", source, NULL};
        help(o, "searchsync_delayed_run_last", "gauge",
             "1, labelled with the status of the last delayed run (running, done, failed)");
        if (r.nrows) {
            const char *ls[] = {"source", source, "status", STMT_CELL(&r, 0, 0), NULL};
            sample(o, "searchsync_delayed_run_last", ls, "1");
        }
        static const char *const names[] = {
            "searchsync_delayed_run_snapshots", "searchsync_delayed_run_ids",
            "searchsync_delayed_run_documents_written", "searchsync_delayed_run_documents_deleted",
            "searchsync_delayed_run_errors", "searchsync_delayed_run_start_time_seconds",
            "searchsync_delayed_run_end_time_seconds"};
        static const char *const helps[] = {
            "Change snapshots the last delayed run took", "Root ids the last delayed run resolved",
            "Documents the last delayed run rewrote", "Documents the last delayed run deleted",
            "Snapshots or pages the last delayed run failed on",
            "When the last delayed run started (unix time)",
            "When the last delayed run ended (unix time; absent while it runs)"};
        for (size_t k = 0; k < 7; k++) {
            help(o, names[k], "gauge", helps[k]);
            if (r.nrows && STMT_CELL(&r, 0, 1 + k)) sample(o, names[k], l, STMT_CELL(&r, 0, 1 + k));
        }
    }
    stmt_rows_free(&r);
}

static void metadata_part(sbuf *o, const struct ss_config *cfg, MYSQL *meta,
                          const struct status_binlogs *logs, bool have_logs) {
    const char *source = cfg->source.name;
    checkpoint_part(o, meta, source, logs, have_logs);

    /* dead letters waiting for a replay, per index */
    static const char *const by_index[] = {"index", NULL};
    static const struct family dead[] = {
        {"searchsync_dead_letters", "gauge",
         "Changes the engine refused, waiting in the dead-letter table (searchsync "
         "dead-letters)", 1}};
    query_families(o, meta, source, "the dead letters",
                   SF_DEAD_LETTERS, by_index, dead, 1);

    /* change snapshots by status (every status, 0 included) */
    static const char *const by_status[] = {"status", NULL};
    static const struct family snaps[] = {
        {"searchsync_change_snapshots", "gauge",
         "Metadata changes waiting for (init), in (running), failed in (error) or done by the "
         "delayed run, as kept", 1}};
    query_families(o, meta, source, "the change snapshots",
                   SF_SNAPSHOTS, by_status, snaps, 1);

    /* the reindexes under way: their bucket jobs by status, rows and documents */
    static const char *const by_build[] = {"index", "version", "status", NULL};
    static const struct family builds[] = {
        {"searchsync_reindex_buckets", "gauge",
         "Bucket jobs of the version being built, by status (init, running, error, done)", 3},
        {"searchsync_reindex_rows_read", "gauge",
         "Root rows the version being built has read so far, by bucket status", 4},
        {"searchsync_reindex_documents_written", "gauge",
         "Documents the version being built has written so far, by bucket status", 5},
        {"searchsync_reindex_errors", "gauge",
         "Pages of the version being built that failed, by bucket status", 6}};
    query_families(o, meta, source, "the reindex jobs",
                   SF_BUILDS, by_build, builds, 4);

    /* reindexes kept in the history, by outcome */
    static const char *const by_outcome[] = {"index", "status", NULL};
    static const struct family runs[] = {
        {"searchsync_reindex_runs", "gauge",
         "Reindexes in the history ([reindex] keep_runs), by outcome", 2},
        {"searchsync_reindex_runs_documents_written", "gauge",
         "Documents written by the reindexes in the history, by outcome", 3}};
    query_families(o, meta, source, "the reindex runs",
                   SF_RUNS, by_outcome, runs, 2);

    delayed_run_part(o, meta, source);

    /* the consistency checks */
    static const struct family checks[] = {
        {"searchsync_check_differences", "gauge",
         "Differences the last consistency check of the index found (docs/check.md)", 1},
        {"searchsync_check_detected_repairs_total", "gauge",
         "Documents rewritten or deleted by the consistency checks kept in check_runs (old "
         "runs leave with retention, so it can go down)", 2},
        {"searchsync_check_last_time_seconds", "gauge",
         "When the last consistency check of the index started (unix time)", 3}};
    query_families(o, meta, source, "the checks' figures",
                   SF_CHECKS, by_index, checks, 3);
}

/* the '}' closing the labels that open at b ('{'), values escaped; NULL
 * when the line ends first */
static const char *labels_end(const char *b, const char *e) {
    bool quoted = false;
    for (const char *p = b + 1; p < e; p++) {
        if (quoted && *p == '\\') p++;
        else if (*p == '"') quoted = !quoted;
        else if (!quoted && *p == '}') return p;
    }
    return NULL;
}

/* the sample line s (name, optional {labels}, value) has label key already */
static bool has_label(const char *s, size_t n, const char *key) {
    const char *b = memchr(s, '{', n);
    if (!b) return false;
    size_t kl = strlen(key);
    const char *e = s + n;
    for (const char *p = b + 1; p < e;) { /* key="value" pairs, values escaped */
        const char *eq = memchr(p, '=', (size_t)(e - p));
        if (!eq) return false;
        if ((size_t)(eq - p) == kl && !memcmp(p, key, kl)) return true;
        p = eq + 2;
        while (p < e && *p != '"') p += *p == '\\' ? 2 : 1;
        p++;
        if (p < e && *p == ',') p++;
        if (p < e && *p == '}') return false;
    }
    return false;
}

void metrics_label_all(const char *text, size_t len, const char *key, const char *value,
                       sbuf *out) {
    const char *e = text + len;
    for (const char *s = text; s < e;) {
        const char *nl = memchr(s, '\n', (size_t)(e - s));
        size_t n = nl ? (size_t)(nl - s) : (size_t)(e - s);
        size_t name = strcspn(s, "{ \n");
        if (n == 0 || s[0] == '#' || name >= n || has_label(s, n, key)) {
            sbuf_add(out, s, n);
        } else { /* after the sample's own labels: name{a="1",source="x"} */
            const char *close = s[name] == '{' ? labels_end(s + name, s + n) : NULL;
            size_t head = close ? (size_t)(close - s) : name;
            sbuf_add(out, s, head);
            sbuf_printf(out, "%s%s=\"", close ? (close[-1] == '{' ? "" : ",") : "{", key);
            label_value(out, value);
            sbuf_addc(out, '"');
            if (!close) sbuf_addc(out, '}');
            sbuf_add(out, s + head, n - head);
        }
        if (nl) sbuf_addc(out, '\n');
        s += n + (nl ? 1 : 0);
    }
}

void metrics_render(const struct ss_config *cfg, struct deliver *d, struct reader_stats *rs,
                    MYSQL *meta, const char *meta_err, MYSQL *src, const char *src_err,
                    sbuf *out) {
    sbuf page = SBUF_INIT, *o = &page;
    deliver_stats_prometheus(d, o);
    struct status_binlogs logs = {0};
    char err[1024] = "";
    bool have_logs = src && status_binlogs_read(src, &logs, err, sizeof err) == 0;
    if (src && !have_logs) part_warn("the binlog's end", err);
    struct reader_figures f = {0};
    if (rs) f = reader_stats_copy(rs);
    reader_part(o, cfg, &f, &logs, have_logs);
    if (meta) metadata_part(o, cfg, meta, &logs, have_logs);
    help(o, "searchsync_scrape_part_up", "gauge",
         "1 when this scrape could read the part (source: the binlog's end; metadata: the "
         "metadata schema's tables)");
    const char *ls[] = {"part", "source", NULL}, *lm[] = {"part", "metadata", NULL};
    sample(o, "searchsync_scrape_part_up", ls, have_logs ? "1" : "0");
    sample(o, "searchsync_scrape_part_up", lm, meta ? "1" : "0");
    if (!src && src_err && *src_err) part_warn("the source", src_err);
    if (!meta && meta_err && *meta_err) part_warn("the metadata", meta_err);
    status_binlogs_free(&logs);
    metrics_label_all(page.data ? page.data : "", page.len, "source", cfg->source.name, out);
    sbuf_free(&page);
}

void metrics_handle(const struct api_ctx *ctx, struct api_resp *r) {
    if (!ctx->d) {
        api_error(r, 503, "the daemon is still starting: delivery is not running yet",
                  "retry in a few seconds");
        return;
    }
    char meta_err[1024] = "", src_err[1024] = "";
    db_params mp = db_params_metadata(ctx->cfg);
    mp.database = ctx->cfg->metadata.database;
    MYSQL *meta = db_connect(&mp, meta_err, sizeof meta_err);
    db_params sp = db_params_source(ctx->cfg);
    MYSQL *src = db_connect(&sp, src_err, sizeof src_err);
    metrics_render(ctx->cfg, ctx->d, ctx->rs, meta, meta_err, src, src_err, &r->body);
    db_close(src);
    db_close(meta);
    r->status = 200;
    r->content_type = "text/plain; version=0.0.4; charset=utf-8";
}
