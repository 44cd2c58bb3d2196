/* fuse.c: the fuse of a target index (docs/delivery.md, "Fuse"): blown by
 * fuse_failures failed rounds within fuse_interval_ms, that index's queues
 * then pause alone for fuse_reset_ms before it heals; a blown fuse is also
 * what a purge at the high-water mark takes from (purge.c). */
#include "deliver/deliver_int.h"

#include <stdlib.h>
#include <string.h>

#include "log.h"

struct fuse *fuse_get(struct deliver_hub *d, const char *index) {
    for (struct fuse *f = d->fuses; f; f = f->next)
        if (!strcmp(f->index, index)) return f;
    struct fuse *f = xcalloc(1, sizeof *f);
    f->index = xstrdup(index);
    f->melts = xcalloc((size_t)d->o.fuse_failures, sizeof(int64_t));
    f->next = d->fuses;
    d->fuses = f;
    return f;
}

void fuse_melt(struct deliver_hub *d, struct fuse *f, int64_t now) {
    if (f->blown) return;
    int n = d->o.fuse_failures;
    f->melts[f->head] = now;
    f->head = (f->head + 1) % n;
    if (f->nmelts < n) f->nmelts++;
    int recent = 0;
    for (int i = 0; i < f->nmelts; i++)
        if (now - f->melts[i] <= (int64_t)d->o.fuse_interval_ms * NS_PER_MS) recent++;
    if (recent >= n) {
        f->blown = true;
        f->heal_ns = now + (int64_t)d->o.fuse_reset_ms * NS_PER_MS;
        f->blows++;
        f->nmelts = 0;
        f->head = 0;
        wc_add(&d->fuse_blows, 1);
        if (!d->eng_down) /* else the engine's outage is what is said (engine.c) */
            log_warn("deliver", "fuse of index %s blown after %d failures within %d ms; "
                     "pausing it for %d ms", f->index, n, d->o.fuse_interval_ms,
                     d->o.fuse_reset_ms);
    }
}

bool fuse_check(struct deliver_hub *d, struct fuse *f, int64_t now, int64_t *wake) {
    (void)d;
    if (!f->blown) return true;
    if (now >= f->heal_ns) {
        f->blown = false;
        if (!d->eng_down)
            log_info("deliver", "fuse of index %s healed; resuming deliveries", f->index);
        return true;
    }
    if (f->heal_ns < *wake) *wake = f->heal_ns;
    return false;
}
