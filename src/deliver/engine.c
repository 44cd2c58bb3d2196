/* engine.c: the search engine's state as delivery sees it, said once when
 * it starts and once when it ends: unreachable (transport errors) / answering
 * again, requests stalled (no answer for ENGINE_STALL_MS) / answered again,
 * rejections (429) started / stopped with their count. While the engine is
 * unreachable an idle helper probes it (GET /) every ENGINE_PROBE_MS; the
 * first answer, to a probe or a batch, heals the fuses and clears the
 * backoffs so that deliveries resume at once, and has a helper ask the
 * engine's version again (GET /) before its next batch: an engine stopped
 * and started again may be a newer one (an upgrade under a running daemon),
 * and bulk bodies and new index versions follow what it is now. Everything
 * here runs under d->mu. */
#include "deliver/deliver_int.h"

#include <stdio.h>

#include "log.h"

#define ENGINE_STALL_MS 5000   /* a request without an answer this long: stalled */
#define ENGINE_REJECT_QUIET_MS 5000 /* no 429 for this long: the rejections stopped */
#define ENGINE_PROBE_MS 1000   /* probes while the engine is unreachable */

static double secs(int64_t ns) { return (double)ns / 1e9; }

void engine_failed(struct deliver_hub *d, const char *why, int64_t now) {
    if (d->eng_stalled) {
        log_warn("deliver", "a request stalled for %.1f s failed: %s", secs(now - d->eng_stall_ns),
                 why && *why ? why : "transport error");
        d->eng_stalled = false;
        d->eng_stall_over_ns = now;
    }
    d->eng_down_fails++;
    if (d->eng_down) return;
    d->eng_down = true;
    d->eng_down_ns = now;
    d->eng_down_fails = 1;
    d->eng_probe_ns = now + (int64_t)ENGINE_PROBE_MS * NS_PER_MS;
    log_warn("deliver", "the search engine is unreachable (%s); deliveries wait and are retried "
             "until it answers (check that it runs and that [search] urls reach it)",
             why && *why ? why : "transport error");
}

void engine_answered(struct deliver_hub *d, int64_t now) {
    if (d->eng_stalled) {
        log_info("deliver", "the search engine answers again after %.1f s without answers",
                 secs(now - d->eng_stall_ns));
        d->eng_stalled = false;
        d->eng_stall_over_ns = now;
    }
    if (!d->eng_down) return;
    d->eng_down = false;
    d->eng_redetect = d->client && !d->o.transport;
    log_info("deliver", "the search engine answers again after %.1f s unreachable (%llu failed "
             "requests); resuming deliveries", secs(now - d->eng_down_ns),
             (unsigned long long)d->eng_down_fails);
    /* what blew or backed off because the engine was away goes again now */
    for (struct fuse *f = d->fuses; f; f = f->next) {
        f->blown = false;
        f->nmelts = 0;
        f->head = 0;
    }
    for (int w = 0; w < d->o.workers; w++)
        for (struct indexq *q = d->partitions[w].qs; q; q = q->next) {
            q->backoff_ms = 0;
            q->not_before_ns = 0;
        }
    pthread_cond_broadcast(&d->work_cv);
}

void engine_rejected(struct deliver_hub *d, long n, int64_t now) {
    if (n <= 0) return;
    if (!d->eng_rejecting) {
        d->eng_rejecting = true;
        d->eng_rej_ns = now;
        d->eng_rej_n = 0;
        log_warn("deliver", "the search engine rejects writes with 429 (too many requests); "
                 "delivery backs off and retries them");
    }
    d->eng_rej_n += (uint64_t)n;
    d->eng_rej_last_ns = now;
}

void engine_watch(struct deliver_hub *d, int64_t now) {
    if (!d->eng_stalled) {
        int64_t oldest = 0;
        for (int i = 0; i < d->o.helpers; i++) {
            /* requests sent before a stall ended were part of it: the
             * first answer ended it (a request that never gets one fails
             * at [search] timeout_ms and says so) */
            int64_t s = d->helpers[i].sending_ns;
            if (s > d->eng_stall_over_ns && (!oldest || s < oldest)) oldest = s;
        }
        if (oldest && now - oldest >= (int64_t)ENGINE_STALL_MS * NS_PER_MS) {
            d->eng_stalled = true;
            d->eng_stall_ns = oldest;
            log_warn("deliver", "a request to the search engine has had no answer for %.1f s "
                     "(engine hung or overloaded?); deliveries wait for it",
                     secs(now - oldest));
        }
    }
    if (d->eng_rejecting &&
        now - d->eng_rej_last_ns >= (int64_t)ENGINE_REJECT_QUIET_MS * NS_PER_MS) {
        d->eng_rejecting = false;
        log_info("deliver", "the search engine stopped rejecting writes: %llu rejection(s) (429) "
                 "in %.1f s", (unsigned long long)d->eng_rej_n,
                 secs(d->eng_rej_last_ns - d->eng_rej_ns));
    }
}

void engine_close(struct deliver_hub *d) {
    if (d->eng_rejecting)
        log_info("deliver", "delivery stops with the search engine rejecting writes: %llu "
                 "rejection(s) (429) in %.1f s", (unsigned long long)d->eng_rej_n,
                 secs(d->eng_rej_last_ns - d->eng_rej_ns));
    d->eng_rejecting = false;
}

bool engine_probe_due(struct deliver_hub *d, int64_t now, int64_t *wake) {
    if (!d->eng_down || !d->tr.probe || d->eng_probing) return false;
    if (now >= d->eng_probe_ns) {
        d->eng_probing = true;
        return true;
    }
    if (d->eng_probe_ns < *wake) *wake = d->eng_probe_ns;
    return false;
}

void engine_probed(struct deliver_hub *d, bool answered, const char *why, int64_t now) {
    d->eng_probing = false;
    if (answered)
        engine_answered(d, now);
    else
        engine_failed(d, why, now);
    d->eng_probe_ns = now + (int64_t)ENGINE_PROBE_MS * NS_PER_MS;
}
