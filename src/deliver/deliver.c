/* deliver.c: delivery's options and the hub's life cycle: defaults and
 * [delivery] from the configuration, hub_new (queues, helper threads, the
 * checkpointer) and hub_free. The rest of src/deliver/: stream.c (streams
 * and their hub), queue.c (items, partitions, indexq, submit), txn.c
 * (transactions, low-water mark, checkpointer, drain), helper.c (batches,
 * bulk sending, retries, fuses, dead letters, purges), stats.c, version.c;
 * deliver_int.h holds what they share. */
#include "deliver/deliver_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "search/search.h"

int purge_strategy_parse(const char *s) {
    if (!s || !*s || !strcmp(s, "off")) return PURGE_OFF;
    if (!strcmp(s, "purge_one")) return PURGE_ONE;
    if (!strcmp(s, "purge_index")) return PURGE_INDEX;
    if (!strcmp(s, "purge_all")) return PURGE_ALL;
    return -1;
}

void deliver_opts_defaults(struct deliver_opts *o) {
    memset(o, 0, sizeof *o);
    o->workers = 8;
    o->helpers = 4;
    o->batch_min = 1;
    o->batch_max = 500;
    o->batch_max_bytes = 10 << 20;
    o->flush_interval_ms = 1000;
    o->group_commit = true;
    o->high_watermark = 10000;
    o->fuse_failures = 3;
    o->fuse_interval_ms = 5000;
    o->fuse_reset_ms = 30000;
    o->purge = PURGE_OFF;
    o->drain_timeout_ms = 60000;
    o->retry_initial_ms = 100;
    o->retry_max_ms = 30000;
    o->checkpoint_interval_ms = 1000;
    o->idle_checkpoint_interval_ms = 60000;
    o->stats_window_ms = 60000;
    o->max_attempts_5xx = 10;
    o->version_field = "ss_version";
}

void deliver_opts_from_config(struct deliver_opts *o, const struct ss_config *c) {
    deliver_opts_defaults(o);
    o->content_hash = true; /* its indices' mappings declare the fields */
    o->workers = c->delivery.workers;
    /* each helper owns one kept-alive connection: [search] max_connections
     * caps how many run at once */
    o->helpers = c->delivery.helpers < c->search.max_connections ? c->delivery.helpers
                                                                 : c->search.max_connections;
    if (o->helpers < 1) o->helpers = 1;
    o->batch_min = c->delivery.batch_min;
    o->batch_max = c->delivery.batch_max;
    o->batch_max_bytes = c->delivery.batch_max_bytes;
    o->flush_interval_ms = c->delivery.flush_interval_ms;
    o->linger_ms = c->delivery.linger_ms;
    o->linger_refresh_percent = c->delivery.linger_refresh_percent;
    o->linger_refresh_batch = c->delivery.linger_refresh_batch;
    o->batch_to_refresh = c->delivery.batch_to_refresh;
    o->refresh_pairing_ms = c->delivery.refresh_pairing_ms;
    o->refresh_pairing_changes = c->delivery.refresh_pairing_changes;
    o->group_commit = c->delivery.group_commit;
    o->high_watermark = c->delivery.high_watermark;
    o->fuse_failures = c->delivery.fuse_failures;
    o->fuse_interval_ms = c->delivery.fuse_interval_ms;
    o->fuse_reset_ms = c->delivery.fuse_reset_ms;
    int p = purge_strategy_parse(c->delivery.purge_strategy);
    o->purge = p < 0 ? PURGE_OFF : (enum purge_strategy)p;
    o->drain_timeout_ms = c->delivery.drain_timeout_ms;
    o->retry_initial_ms = c->delivery.retry_initial_ms;
    o->retry_max_ms = c->delivery.retry_max_ms;
    o->checkpoint_interval_ms = c->delivery.checkpoint_interval_ms;
    o->idle_checkpoint_interval_ms = c->delivery.idle_checkpoint_interval_ms;
    o->max_attempts_5xx = c->delivery.max_attempts_5xx;
    o->stats_window_ms = c->delivery.stats_window_ms;
}

void deliver_search_opts(struct search_opts *so, const struct ss_config *c) {
    memset(so, 0, sizeof *so);
    so->urls = c->search.urls;
    so->user = c->search.user;
    so->password = c->search.password;
    so->api_key = c->search.api_key;
    so->ca_file = c->search.ca_file;
    so->client_cert = c->search.client_cert;
    so->client_key = c->search.client_key;
    so->tls_verify = c->search.tls_verify;
    so->timeout_ms = c->search.timeout_ms;
    so->connect_timeout_ms = c->search.connect_timeout_ms;
    so->compress = c->search.compress;
    search_opts_secured(so, c); /* credentials, signing, TLS: src/search_auth.c */
}

/* ---------- life cycle ---------- */

struct deliver_hub *hub_new(const struct deliver_opts *o, struct search_client *client,
                            char *err, size_t errlen) {
    if (!o->transport && !client) {
        snprintf(err, errlen, "delivery needs a search client");
        return NULL;
    }
    if (o->workers < 1 || o->helpers < 1 || o->batch_max < 1 || o->batch_min < 1 ||
        o->high_watermark < 1 || o->fuse_failures < 1) {
        snprintf(err, errlen, "[delivery] workers, helpers, batch sizes, high_watermark and "
                 "fuse_failures must be at least 1");
        return NULL;
    }
    if (client && !o->transport && !search_client_dialect(client)) {
        snprintf(err, errlen, "the engine's version is unknown (search_detect first)");
        return NULL;
    }
    struct deliver_hub *d = xcalloc(1, sizeof *d);
    d->o = *o;
    d->version_field = xstrdup(o->version_field ? o->version_field : "");
    d->o.version_field = d->version_field;
    if (d->o.batch_min > d->o.batch_max) d->o.batch_min = d->o.batch_max;
    if (d->o.stats_window_ms <= 0) d->o.stats_window_ms = 60000;
    if (d->o.max_attempts_5xx <= 0) d->o.max_attempts_5xx = 10;
    if (d->o.retry_initial_ms < 1) d->o.retry_initial_ms = 1;
    if (d->o.retry_max_ms < d->o.retry_initial_ms) d->o.retry_max_ms = d->o.retry_initial_ms;
    d->client = client;
    if (o->transport)
        d->tr = *o->transport;
    else
        d->tr = (struct deliver_transport){.ud = d, .bulk = default_bulk, .probe = default_probe,
                                           .refresh_probe = default_refresh_probe,
                                           .refresh_interval = default_refresh_interval,
                                           .bulk_wait = default_bulk_wait};
    pthread_mutex_init(&d->mu, NULL);
    pthread_mutex_init(&d->dl_log_mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&d->work_cv, &ca);
    pthread_cond_init(&d->space_cv, &ca);
    pthread_cond_init(&d->done_cv, &ca);
    pthread_condattr_destroy(&ca);
    d->partitions = xcalloc((size_t)d->o.workers, sizeof *d->partitions);
    d->win_start_ns = now_ns();
    d->helpers = xcalloc((size_t)d->o.helpers, sizeof *d->helpers);
    for (int i = 0; i < d->o.helpers; i++) {
        struct helper *h = &d->helpers[i];
        h->d = d;
        h->id = i;
        h->rnd = (unsigned)(now_ns() ^ (i * 2654435761u));
        search_resp_init(&h->resp);
        if (client && !o->transport) h->conn = search_conn_new(client);
    }
    int started = 0;
    for (int i = 0; i < d->o.helpers; i++) {
        if (pthread_create(&d->helpers[i].th, NULL, helper_main, &d->helpers[i]) != 0) break;
        started++;
    }
    if (started == d->o.helpers &&
        pthread_create(&d->ckpt_th, NULL, ckpt_main, d) == 0)
        d->ckpt_started = true;
    if (!d->ckpt_started) {
        snprintf(err, errlen, "cannot start delivery threads: %s", strerror(errno));
        d->o.helpers = started;
        hub_free(d);
        return NULL;
    }
    return d;
}

void hub_free(struct deliver_hub *d) {
    if (!d) return;
    pthread_mutex_lock(&d->mu);
    d->stop = true;
    pthread_cond_broadcast(&d->work_cv);
    pthread_cond_broadcast(&d->space_cv);
    pthread_cond_broadcast(&d->done_cv);
    pthread_mutex_unlock(&d->mu);
    for (int i = 0; i < d->o.helpers; i++) pthread_join(d->helpers[i].th, NULL);
    if (d->ckpt_started) pthread_join(d->ckpt_th, NULL);
    pthread_mutex_lock(&d->mu); /* the helpers settled every batch: nothing in flight */
    hub_reap_abandoned(d);
    pthread_mutex_unlock(&d->mu);
    engine_close(d);
    for (int i = 0; i < d->o.helpers; i++) {
        struct helper *h = &d->helpers[i];
        search_conn_free(h->conn);
        sbuf_free(&h->body);
        search_resp_free(&h->resp);
        free(h->res);
        free(h->qs);
    }
    free(d->helpers);
    for (int w = 0; w < d->o.workers; w++) {
        struct indexq *q = d->partitions[w].qs;
        while (q) {
            struct indexq *nq = q->next;
            while (q->main.head) { /* what no stream waited for (deliver_new's) */
                struct item *it = q->main.head;
                list_remove(&q->main, it);
                free(it);
            }
            free(q->map);
            free(q->index);
            free(q);
            q = nq;
        }
    }
    free(d->partitions);
    while (d->fuses) {
        struct fuse *f = d->fuses;
        d->fuses = f->next;
        free(f->index);
        free(f->melts);
        free(f);
    }
    free(d->version_field);
    pthread_mutex_destroy(&d->mu);
    pthread_mutex_destroy(&d->dl_log_mu);
    pthread_cond_destroy(&d->work_cv);
    pthread_cond_destroy(&d->space_cv);
    pthread_cond_destroy(&d->done_cv);
    free(d);
}
