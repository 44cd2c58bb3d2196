/* stats.c: delivery statistics: windowed counters' rotation, the hub's
 * and each stream's figures (deliver_get_stats, deliver_hub_stats,
 * deliver_streams_json), deliver_fuse_blown and the Prometheus exposition. */
#include "deliver/deliver_int.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonw.h"
#include "log.h"
#include "search/search.h"

void rotate_stats(struct deliver_hub *d, int64_t now) {
    if (now - d->win_start_ns < (int64_t)d->o.stats_window_ms * NS_PER_MS) return;
    d->win_start_ns = now;
    struct wcounter *cs[] = {&d->docs_ok, &d->stale, &d->missing, &d->retries, &d->failures,
                             &d->dead_letters, &d->purged, &d->coalesced, &d->batches,
                             &d->requests_failed, &d->blocked, &d->drains,
                             &d->drain_timeouts, &d->drain_failures, &d->fuse_blows,
                             &d->submitted};
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) wc_rotate(cs[i]);
    hist_rotate(&d->lat_doc_us);
    hist_rotate(&d->lat_batch_us);
    hist_rotate(&d->batch_size);
    hist_rotate(&d->drain_us);
}

/* ---------- statistics ---------- */

static void hub_stats_locked(struct deliver_hub *d, struct deliver_stats *s) {
    memset(s, 0, sizeof *s);
    s->docs_ok = d->docs_ok.total;
    s->stale = d->stale.total;
    s->missing = d->missing.total;
    s->retries = d->retries.total;
    s->failures = d->failures.total;
    s->dead_letters = d->dead_letters.total;
    s->purged = d->purged.total;
    s->coalesced = d->coalesced.total;
    s->batches = d->batches.total;
    s->requests_failed = d->requests_failed.total;
    s->blocked = d->blocked.total;
    s->drains = d->drains.total;
    s->drain_timeouts = d->drain_timeouts.total;
    s->drain_failures = d->drain_failures.total;
    s->fuse_blows = d->fuse_blows.total;
    s->submitted = d->submitted.total;
    s->checkpoints_saved = d->checkpoints_saved;
    s->checkpoint_failures = d->checkpoint_failures;
    s->queued = d->total - d->inflight;
    s->inflight = d->inflight;
    for (struct fuse *f = d->fuses; f; f = f->next) s->fuses_blown += f->blown;
}

void deliver_hub_stats(struct deliver_hub *d, struct deliver_stats *s) {
    pthread_mutex_lock(&d->mu);
    hub_stats_locked(d, s);
    pthread_mutex_unlock(&d->mu);
}

void deliver_get_stats(struct deliver *st, struct deliver_stats *s) {
    struct deliver_hub *d = st->d;
    pthread_mutex_lock(&d->mu);
    hub_stats_locked(d, s);
    s->submitted = st->n_submitted;
    s->docs_ok = st->n_ok;
    s->stale = st->n_stale;
    s->missing = st->n_missing;
    s->dead_letters = st->n_dead;
    s->purged = st->n_purged;
    s->coalesced = st->n_coalesced;
    s->blocked = st->n_blocked;
    s->checkpoints_saved = st->checkpoints_saved;
    s->checkpoint_failures = st->checkpoint_failures;
    s->queued = st->outstanding - st->inflight;
    s->inflight = st->inflight;
    pthread_mutex_unlock(&d->mu);
}

int deliver_fuse_blown(struct deliver *st, const char *index) {
    struct deliver_hub *d = st->d;
    int r = -1;
    pthread_mutex_lock(&d->mu);
    for (struct fuse *f = d->fuses; f; f = f->next)
        if (!strcmp(f->index, index)) r = f->blown && now_ns() < f->heal_ns;
    pthread_mutex_unlock(&d->mu);
    return r;
}

/* the oldest change of the stream not covered by its saved checkpoint */
static int64_t unsaved_since(const struct deliver *st) {
    int64_t oldest = st->txn_head ? st->txn_head->opened_ns : 0;
    if (st->unsaved_since_ns && (!oldest || st->unsaved_since_ns < oldest))
        oldest = st->unsaved_since_ns;
    return oldest;
}

void deliver_streams_json(struct deliver *any, sbuf *out) {
    struct deliver_hub *d = any->d;
    pthread_mutex_lock(&d->mu);
    int64_t now = now_ns();
    jsonw w;
    jw_init(&w, out);
    jw_arr_open(&w);
    for (struct deliver *st = d->streams; st; st = st->next) {
        jw_obj_open(&w);
        jw_key(&w, "name");
        jw_str(&w, st->name);
        jw_key(&w, "class");
        jw_str(&w, deliver_class_name(st->cls));
        jw_key(&w, "queued");
        jw_int(&w, st->outstanding - st->inflight);
        jw_key(&w, "inflight");
        jw_int(&w, st->inflight);
        jw_key(&w, "submitted");
        jw_uint(&w, st->n_submitted);
        jw_key(&w, "acknowledged");
        jw_uint(&w, st->n_ok);
        jw_key(&w, "dead_letters");
        jw_uint(&w, st->n_dead);
        jw_key(&w, "blocked_seconds");
        jw_double(&w, (double)st->blocked_ns / 1e9);
        jw_key(&w, "acknowledged_position");
        if (st->lw_pos && *st->lw_pos)
            jw_str(&w, st->lw_pos);
        else
            jw_null(&w);
        int64_t oldest = unsaved_since(st);
        jw_key(&w, "checkpoint_age_seconds");
        if (st->checkpoint)
            jw_double(&w, oldest ? (double)(now - oldest) / 1e9 : 0.0);
        else
            jw_null(&w);
        jw_obj_close(&w);
    }
    jw_arr_close(&w);
    pthread_mutex_unlock(&d->mu);
}

static void prom_counter(sbuf *o, const char *name, const char *help,
                         const struct wcounter *c) {
    sbuf_printf(o, "# HELP searchsync_delivery_%s_total %s\n", name, help);
    sbuf_printf(o, "# TYPE searchsync_delivery_%s_total counter\n", name);
    sbuf_printf(o, "searchsync_delivery_%s_total %llu\n", name, (unsigned long long)c->total);
    sbuf_printf(o, "# HELP searchsync_delivery_%s_window %s, in the last whole window\n", name,
                help);
    sbuf_printf(o, "# TYPE searchsync_delivery_%s_window gauge\n", name);
    sbuf_printf(o, "searchsync_delivery_%s_window %llu\n", name, (unsigned long long)c->last);
}

static void prom_summary(sbuf *o, const char *name, const char *help, const struct hist *h,
                         double scale) {
    static const double qs[] = {0.5, 0.95, 0.99, 0.999};
    sbuf_printf(o, "# HELP searchsync_delivery_%s %s\n", name, help);
    sbuf_printf(o, "# TYPE searchsync_delivery_%s summary\n", name);
    for (size_t i = 0; i < 4; i++)
        sbuf_printf(o, "searchsync_delivery_%s{quantile=\"%g\"} %.6g\n", name, qs[i],
                    (double)hist_quantile(h, qs[i]) * scale);
    sbuf_printf(o, "searchsync_delivery_%s_sum %.6g\n", name, (double)h->sum * scale);
    sbuf_printf(o, "searchsync_delivery_%s_count %llu\n", name, (unsigned long long)h->count);
    static const char *const ext[] = {"min", "max", "mean"};
    double v[] = {(double)h->min * scale, (double)h->max * scale,
                  h->count ? (double)h->sum / (double)h->count * scale : 0.0};
    for (size_t i = 0; i < 3; i++) {
        sbuf_printf(o, "# HELP searchsync_delivery_%s_%s %s: the %s in the last whole window\n",
                    name, ext[i], help, ext[i]);
        sbuf_printf(o, "# TYPE searchsync_delivery_%s_%s gauge\n", name, ext[i]);
        sbuf_printf(o, "searchsync_delivery_%s_%s %.6g\n", name, ext[i], v[i]);
    }
}

static void prom_gauge(sbuf *o, const char *name, const char *help, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void prom_gauge(sbuf *o, const char *name, const char *help, const char *fmt, ...) {
    sbuf_printf(o, "# HELP searchsync_delivery_%s %s\n# TYPE searchsync_delivery_%s gauge\n"
                   "searchsync_delivery_%s ", name, help, name, name);
    char v[64];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(v, sizeof v, fmt, ap);
    va_end(ap);
    sbuf_adds(o, v);
    sbuf_addc(o, '\n');
}

static void prom_label(sbuf *o, const char *v) {
    for (; *v; v++) {
        if (*v == '\\' || *v == '"') sbuf_addc(o, '\\');
        if (*v == '\n') {
            sbuf_adds(o, "\\n");
            continue;
        }
        sbuf_addc(o, *v);
    }
}

/* every stream's gauges and counters, labelled stream="name" (under d->mu) */
static void prom_streams(struct deliver_hub *d, sbuf *o) {
    static const struct {
        const char *name, *type, *help;
    } m[] = {
        {"searchsync_delivery_stream_queued", "gauge",
         "Changes of the stream queued, not yet sent"},
        {"searchsync_delivery_stream_inflight", "gauge",
         "Changes of the stream in bulk requests"},
        {"searchsync_delivery_stream_submitted_total", "counter",
         "Changes the stream submitted"},
        {"searchsync_delivery_stream_acknowledged_total", "counter",
         "Changes of the stream the engine acknowledged"},
        {"searchsync_delivery_stream_dead_letters_total", "counter",
         "Changes of the stream written as dead letters"},
        {"searchsync_delivery_stream_blocked_seconds_total", "counter",
         "Time the stream's producer waited for room in the queues"},
    };
    for (size_t k = 0; k < sizeof m / sizeof m[0]; k++) {
        sbuf_printf(o, "# HELP %s %s\n# TYPE %s %s\n", m[k].name, m[k].help, m[k].name,
                    m[k].type);
        for (struct deliver *st = d->streams; st; st = st->next) {
            sbuf_printf(o, "%s{stream=\"", m[k].name);
            prom_label(o, st->name);
            sbuf_adds(o, "\"} ");
            switch (k) {
            case 0: sbuf_printf(o, "%ld\n", st->outstanding - st->inflight); break;
            case 1: sbuf_printf(o, "%ld\n", st->inflight); break;
            case 2: sbuf_printf(o, "%llu\n", (unsigned long long)st->n_submitted); break;
            case 3: sbuf_printf(o, "%llu\n", (unsigned long long)st->n_ok); break;
            case 4: sbuf_printf(o, "%llu\n", (unsigned long long)st->n_dead); break;
            default: sbuf_printf(o, "%.3f\n", (double)st->blocked_ns / 1e9); break;
            }
        }
    }
}

void deliver_stats_prometheus(struct deliver *live, sbuf *o) {
    struct deliver_hub *d = live->d;
    pthread_mutex_lock(&d->mu);
    int64_t now = now_ns();
    rotate_stats(d, now);
    prom_counter(o, "index_docs", "Changes the engine acknowledged", &d->docs_ok);
    prom_counter(o, "index_failures", "Item deliveries that failed (retried or dead-lettered)",
                 &d->failures);
    prom_counter(o, "index_stale", "Writes refused as older than the stored version (409)",
                 &d->stale);
    prom_counter(o, "update_missing", "Partial updates of documents that were gone",
                 &d->missing);
    prom_counter(o, "retries", "Items queued again after a transient failure", &d->retries);
    prom_counter(o, "dead_letters", "Changes written to the dead-letter table",
                 &d->dead_letters);
    prom_counter(o, "purged", "Changes purged at the high-water mark (also dead letters)",
                 &d->purged);
    prom_counter(o, "coalesced", "Queued changes replaced by a newer change of the same doc",
                 &d->coalesced);
    prom_counter(o, "batches", "Bulk requests sent", &d->batches);
    prom_counter(o, "request_failures", "Bulk requests that failed as a whole",
                 &d->requests_failed);
    prom_counter(o, "producer_blocked", "Submits that waited at the high-water mark",
                 &d->blocked);
    prom_counter(o, "drains", "Drains started", &d->drains);
    prom_counter(o, "drain_failures", "Drains that did not complete", &d->drain_failures);
    prom_counter(o, "drain_timeouts", "Drains that timed out", &d->drain_timeouts);
    prom_counter(o, "fuse_blows", "Times an index's fuse blew", &d->fuse_blows);
    prom_counter(o, "submitted", "Changes submitted", &d->submitted);
    prom_summary(o, "index_latency_seconds",
                 "Batch round trip divided by its size, per change", &d->lat_doc_us, 1e-6);
    prom_summary(o, "batch_latency_seconds", "Bulk request round trip", &d->lat_batch_us, 1e-6);
    prom_summary(o, "batch_size", "Changes per bulk request", &d->batch_size, 1);
    prom_summary(o, "drain_latency_seconds", "Time a drain took", &d->drain_us, 1e-6);
    /* the checkpoint figures are the live stream's (the one that saves the
     * binlog position); every stream's are below, labelled */
    int64_t oldest = unsaved_since(live);
    prom_gauge(o, "queue_length", "Changes queued, not yet sent", "%ld", d->total - d->inflight);
    prom_gauge(o, "inflight", "Changes in bulk requests awaiting the engine's answer", "%ld",
               d->inflight);
    prom_gauge(o, "high_watermark", "Queued changes at which producers wait ([delivery] "
               "high_watermark)", "%d", d->o.high_watermark);
    prom_gauge(o, "producer_blocked_now", "Producers waiting at the high-water mark now", "%ld",
               d->blocked_now);
    sbuf_printf(o, "# HELP searchsync_delivery_producer_blocked_seconds_total Time producers "
                   "(the binlog reader) waited at the high-water mark\n"
                   "# TYPE searchsync_delivery_producer_blocked_seconds_total counter\n"
                   "searchsync_delivery_producer_blocked_seconds_total %.3f\n",
                (double)(d->blocked_ns + d->blocked_now * now - d->blocked_since_sum) / 1e9);
    prom_gauge(o, "checkpoint_seq", "Sequence number of the last transaction the saved "
               "checkpoint covers", "%llu", (unsigned long long)live->ckpt_saved_seq);
    prom_gauge(o, "checkpoint_age_seconds", "How long the oldest change not covered by the "
               "saved checkpoint has waited (0: everything read is saved)", "%.3f",
               oldest ? (double)(now - oldest) / 1e9 : 0.0);
    sbuf_printf(o, "# HELP searchsync_delivery_checkpoints_saved_total Checkpoint saves\n"
                   "# TYPE searchsync_delivery_checkpoints_saved_total counter\n"
                   "searchsync_delivery_checkpoints_saved_total %llu\n",
                (unsigned long long)live->checkpoints_saved);
    sbuf_printf(o, "# HELP searchsync_delivery_checkpoint_failures_total Checkpoint saves "
                   "that failed (retried)\n"
                   "# TYPE searchsync_delivery_checkpoint_failures_total counter\n"
                   "searchsync_delivery_checkpoint_failures_total %llu\n",
                (unsigned long long)live->checkpoint_failures);
    prom_gauge(o, "engine_up", "0 while the engine is unreachable", "%d", !d->eng_down);
    prom_gauge(o, "engine_stalled", "1 while a bulk request has waited past its expected time",
               "%d", d->eng_stalled);
    prom_gauge(o, "engine_rejecting", "1 while the engine answers 429 (too many requests)", "%d",
               d->eng_rejecting);
    sbuf_adds(o, "# HELP searchsync_delivery_fuse_blown 1 while the index's fuse is blown\n"
                 "# TYPE searchsync_delivery_fuse_blown gauge\n");
    for (struct fuse *f = d->fuses; f; f = f->next) {
        sbuf_adds(o, "searchsync_delivery_fuse_blown{index=\"");
        prom_label(o, f->index);
        sbuf_printf(o, "\"} %d\n", f->blown && now < f->heal_ns);
    }
    prom_streams(d, o);
    pthread_mutex_unlock(&d->mu);
}

void deliver_fuses_json(struct deliver *st, sbuf *out, bool *engine_up) {
    struct deliver_hub *d = st->d;
    pthread_mutex_lock(&d->mu);
    int64_t now = now_ns();
    sbuf_addc(out, '[');
    bool first = true;
    for (struct fuse *f = d->fuses; f; f = f->next) {
        if (!f->blown || now >= f->heal_ns) continue;
        if (!first) sbuf_addc(out, ',');
        first = false;
        json_escape(out, f->index, strlen(f->index));
    }
    sbuf_addc(out, ']');
    if (engine_up) *engine_up = !d->eng_down;
    pthread_mutex_unlock(&d->mu);
}
