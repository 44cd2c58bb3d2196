/* stats.c: delivery statistics: windowed counters' rotation,
 * deliver_get_stats, deliver_fuse_blown and the Prometheus exposition. */
#include "deliver/deliver_int.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonw.h"
#include "log.h"
#include "search/search.h"

void rotate_stats(struct deliver *d, int64_t now) {
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

void deliver_get_stats(struct deliver *d, struct deliver_stats *s) {
    memset(s, 0, sizeof *s);
    pthread_mutex_lock(&d->mu);
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
    pthread_mutex_unlock(&d->mu);
}

int deliver_fuse_blown(struct deliver *d, const char *index) {
    int r = -1;
    pthread_mutex_lock(&d->mu);
    for (struct fuse *f = d->fuses; f; f = f->next)
        if (!strcmp(f->index, index)) r = f->blown && now_ns() < f->heal_ns;
    pthread_mutex_unlock(&d->mu);
    return r;
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

void deliver_stats_prometheus(struct deliver *d, sbuf *o) {
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
    int64_t oldest = d->txn_head ? d->txn_head->opened_ns : 0;
    if (d->unsaved_since_ns && (!oldest || d->unsaved_since_ns < oldest))
        oldest = d->unsaved_since_ns;
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
               "checkpoint covers", "%llu", (unsigned long long)d->ckpt_saved_seq);
    prom_gauge(o, "checkpoint_age_seconds", "How long the oldest change not covered by the "
               "saved checkpoint has waited (0: everything read is saved)", "%.3f",
               oldest ? (double)(now - oldest) / 1e9 : 0.0);
    sbuf_printf(o, "# HELP searchsync_delivery_checkpoints_saved_total Checkpoint saves\n"
                   "# TYPE searchsync_delivery_checkpoints_saved_total counter\n"
                   "searchsync_delivery_checkpoints_saved_total %llu\n",
                (unsigned long long)d->checkpoints_saved);
    sbuf_printf(o, "# HELP searchsync_delivery_checkpoint_failures_total Checkpoint saves "
                   "that failed (retried)\n"
                   "# TYPE searchsync_delivery_checkpoint_failures_total counter\n"
                   "searchsync_delivery_checkpoint_failures_total %llu\n",
                (unsigned long long)d->checkpoint_failures);
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
    pthread_mutex_unlock(&d->mu);
}

void deliver_fuses_json(struct deliver *d, sbuf *out, bool *engine_up) {
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
