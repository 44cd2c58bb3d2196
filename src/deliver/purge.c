/* purge.c: purges at the high-water mark (docs/delivery.md, "Purge
 * strategies"): with a producer blocked there and some index's fuse blown,
 * queued changes of blown indices (purge_one, purge_index, purge_all) are
 * taken out and written as dead letters first, so a purge delays a change
 * but never loses it. */
#include "deliver/deliver_int.h"

#include <stdlib.h>
#include <string.h>

#include "log.h"

/* Under d->mu with the producer blocked at the high-water mark: move queued
 * items of blown indices into *out (they stay counted in d->total until the
 * dead letter is written and they are acknowledged). */
/* q's queued items (only its first with one) into *out; true if one was taken */
static bool purge_queue(struct deliver_hub *d, struct indexq *q, struct list *out, bool one) {
    bool took = false;
    while (q->main.head) {
        struct item *it = q->main.head;
        list_remove(&q->main, it);
        d->main_queued--;
        q->main_bytes -= it->size;
        map_del(q, it);
        it->txn->s->reporting++; /* its dead letter is written unlocked (purge_flush):
                                  * its stream is not freed meanwhile */
        list_push_back(out, it);
        took = true;
        if (one) break;
    }
    return took && one;
}

void purge_collect(struct deliver_hub *d, struct list *out) {
    if (d->o.purge == PURGE_OFF) return;
    int nq = 0;
    for (int w = 0; w < d->o.workers; w++)
        for (struct indexq *q = d->partitions[w].qs; q; q = q->next)
            if (q->fuse->blown && q->main.n > 0) nq++;
    if (nq == 0) return;
    int pick = rand() % nq, i = 0;
    const char *pick_index = NULL;
    for (int w = 0; w < d->o.workers; w++) {
        for (struct indexq *q = d->partitions[w].qs; q; q = q->next) {
            if (!(q->fuse->blown && q->main.n > 0)) continue;
            bool take;
            if (d->o.purge == PURGE_ALL)
                take = true;
            else if (d->o.purge == PURGE_ONE)
                take = i == pick;
            else {
                if (i == pick) pick_index = q->index;
                take = false;
            }
            i++;
            if (!take) continue;
            if (purge_queue(d, q, out, d->o.purge == PURGE_ONE)) return;
        }
    }
    if (pick_index) {
        for (int w = 0; w < d->o.workers; w++)
            for (struct indexq *q = d->partitions[w].qs; q; q = q->next)
                if (!strcmp(q->index, pick_index)) purge_queue(d, q, out, false);
    }
}

/* Called with d->mu held; drops and retakes it. */
void purge_flush(struct deliver_hub *d, struct list *pl) {
    if (!pl->head) return;
    pthread_mutex_unlock(&d->mu);
    struct list ok = {0}, failed = {0};
    while (pl->head) {
        struct item *it = pl->head;
        list_remove(pl, it);
        const char *why = "purged at the high-water mark while the index's fuse was blown";
        if (write_dead_letter(d, it, why, strlen(why), 0) == 0)
            list_push_back(&ok, it);
        else
            list_push_back(&failed, it);
    }
    pthread_mutex_lock(&d->mu);
    while (ok.head) {
        struct item *it = ok.head;
        list_remove(&ok, it);
        wc_add(&d->purged, 1);
        wc_add(&d->dead_letters, 1);
        struct deliver *st = it->txn->s;
        st->n_purged++;
        st->n_dead++;
        st->reporting--;
        ack_item(d, it);
        advance_low_water(st);
    }
    while (failed.tail) { /* back to the front of its queue, order kept */
        struct item *it = failed.tail;
        list_remove(&failed, it);
        struct deliver *st = it->txn->s;
        st->reporting--;
        if (st->closing || st->halted) { /* closed meanwhile: nothing of it is sent */
            item_drop(d, it);
            continue;
        }
        list_push_front(&it->q->main, it);
        d->main_queued++;
        it->q->main_bytes += it->size;
        if (!map_get(it->q, it->doc_id, it->routing, it->hash)) map_put(it->q, it);
    }
    pthread_cond_broadcast(&d->space_cv);
    pthread_cond_broadcast(&d->done_cv); /* a stream closing waits for its reports */
}
