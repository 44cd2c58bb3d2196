/* xa_prepared: what a prepared two-phase XA transaction leaves for its
 * XA COMMIT, and the checkpoint it holds back (see xa_prepared.h). */
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "sync/pipeline/xa_prepared.h"

struct xa_txn *xa_find(struct xa_set *s, const char *xid) {
    for (size_t i = 0; i < s->n; i++)
        if (!strcmp(s->t[i].xid, xid)) return &s->t[i];
    return NULL;
}

struct xa_txn *xa_prepare(struct xa_set *s, const char *xid, const char *hold,
                          const bl_pos *prepared, long long now_ms, struct changeset *cs,
                          const struct mapping *m) {
    struct xa_txn *t = xa_find(s, xid);
    if (!t) {
        if (s->n == s->cap) {
            s->cap = s->cap ? s->cap * 2 : 4;
            s->t = xrealloc(s->t, s->cap * sizeof *s->t);
        }
        t = &s->t[s->n++];
        memset(t, 0, sizeof *t);
        t->xid = xstrdup(xid);
        t->hold = hold ? xstrdup(hold) : NULL;
        t->expired = !hold; /* nothing of it to read again: it holds nothing back */
        t->prepared = *prepared;
        t->since_ms = now_ms;
    }
    for (size_t i = 0; i < cs->nrdocs; i++) { /* moved: they go at the commit */
        struct cs_rowdoc *r = &cs->rdocs[i];
        if (t->nrdocs == t->caprdocs) {
            t->caprdocs = t->caprdocs ? t->caprdocs * 2 : 16;
            t->rdocs = xrealloc(t->rdocs, t->caprdocs * sizeof *t->rdocs);
        }
        t->rdocs[t->nrdocs++] = (struct xa_rowdoc){xstrdup(m->indices[r->index].alias), r->id,
                                                   r->body, r->len, r->requery};
    }
    cs->nrdocs = 0;
    cs->nrequery = 0;
    if (cs->snaps.len) {
        if (t->snaps.len) sbuf_addc(&t->snaps, ',');
        sbuf_add(&t->snaps, cs->snaps.data, cs->snaps.len);
        t->nsnaps += cs->nsnaps;
        sbuf_reset(&cs->snaps);
        cs->nsnaps = 0;
    }
    return t;
}

static void add_doc(struct xa_txn *t, const struct mp_index *ix, size_t table, const char *key) {
    if (t->ndocs == t->capdocs) {
        t->capdocs = t->capdocs ? t->capdocs * 2 : 16;
        t->docs = xrealloc(t->docs, t->capdocs * sizeof *t->docs);
    }
    sbuf name = SBUF_INIT;
    sbuf_printf(&name, "%s.%s", ix->tables[table].db, ix->tables[table].table);
    t->docs[t->ndocs++] = (struct xa_doc){xstrdup(ix->alias), sbuf_detach(&name), xstrdup(key),
                                          table};
}

void xa_note_docs(struct xa_txn *t, const struct changeset *cs, const struct mapping *m) {
    for (size_t i = 0; i < cs->npend; i++)
        for (size_t k = 0; k < cs->pend[i].n; k++)
            add_doc(t, &m->indices[cs->pend[i].index], cs->pend[i].table, cs->pend[i].keys[k]);
    for (size_t i = 0; i < cs->nelems; i++) /* the element's document, rebuilt whole */
        add_doc(t, &m->indices[cs->elems[i].index], 0, cs->elems[i].doc);
    if (cs->copies_may_move) t->copies_may_move = true;
}

/* the index config's position in m, or -1 */
static long index_of(const struct mapping *m, const char *alias) {
    for (size_t i = 0; i < m->nindices; i++)
        if (!strcmp(m->indices[i].alias, alias)) return (long)i;
    return -1;
}

/* the document table named db.name in ix (at its old position if still
 * there), or -1 */
static long table_of(const struct mp_index *ix, const struct xa_doc *d) {
    sbuf name = SBUF_INIT;
    long found = -1;
    for (size_t j = 0; j < ix->ntables && found < 0; j++) {
        size_t at = (d->table_no + j) % ix->ntables;
        sbuf_reset(&name);
        sbuf_printf(&name, "%s.%s", ix->tables[at].db, ix->tables[at].table);
        if (!strcmp(name.data, d->table)) found = (long)at;
    }
    sbuf_free(&name);
    return found;
}

size_t xa_restore(const struct xa_txn *t, struct changeset *cs, const struct mapping *m) {
    size_t dropped = 0;
    for (size_t i = 0; i < t->ndocs; i++) {
        const struct xa_doc *d = &t->docs[i];
        long x = index_of(m, d->alias);
        long tb = x < 0 ? -1 : table_of(&m->indices[x], d);
        if (tb < 0) {
            dropped++;
            continue;
        }
        changeset_add_doc(cs, (size_t)x, (size_t)tb, d->key, strlen(d->key));
    }
    for (size_t i = 0; i < t->nrdocs; i++) {
        const struct xa_rowdoc *r = &t->rdocs[i];
        long x = index_of(m, r->alias);
        if (x < 0) {
            dropped++;
            continue;
        }
        if (r->requery)
            changeset_add_rowdoc_requery(cs, (size_t)x, r->id, strlen(r->id));
        else
            changeset_add_rowdoc(cs, (size_t)x, r->id, strlen(r->id), r->body, r->len);
    }
    if (t->snaps.len) {
        if (cs->snaps.len) sbuf_addc(&cs->snaps, ',');
        sbuf_add(&cs->snaps, t->snaps.data, t->snaps.len);
        cs->nsnaps += t->nsnaps;
    }
    if (t->copies_may_move) cs->copies_may_move = true;
    return dropped;
}

static void txn_free(struct xa_txn *t) {
    for (size_t i = 0; i < t->ndocs; i++)
        free(t->docs[i].alias), free(t->docs[i].table), free(t->docs[i].key);
    free(t->docs);
    for (size_t i = 0; i < t->nrdocs; i++)
        free(t->rdocs[i].alias), free(t->rdocs[i].id), free(t->rdocs[i].body);
    free(t->rdocs);
    sbuf_free(&t->snaps);
    free(t->xid);
    free(t->hold);
}

void xa_forget(struct xa_set *s, struct xa_txn *t) {
    size_t i = (size_t)(t - s->t);
    if (i >= s->n) return;
    txn_free(t);
    memmove(&s->t[i], &s->t[i + 1], (s->n - i - 1) * sizeof *s->t);
    s->n--;
}

const char *xa_hold(const struct xa_set *s) {
    for (size_t i = 0; i < s->n; i++)
        if (!s->t[i].expired) return s->t[i].hold;
    return NULL;
}

bool xa_expire(struct xa_set *s, long long now_ms, long long max_ms) {
    bool any = false;
    for (size_t i = 0; i < s->n && max_ms > 0; i++) {
        struct xa_txn *t = &s->t[i];
        if (t->expired || now_ms - t->since_ms < max_ms) continue;
        t->expired = any = true;
        log_warn("run", "XA transaction %s, prepared at %s:%llu, is neither committed nor rolled "
                 "back after %lld s ([source] xa_hold_max_s): the checkpoint no longer waits "
                 "for it. Its commit is still followed while this daemon runs; after a "
                 "restart it would not be (run `searchsync check --repair` once it commits). "
                 "XA RECOVER on the source lists prepared transactions",
                 t->xid, t->prepared.file, (unsigned long long)t->prepared.pos, max_ms / 1000);
    }
    return any;
}

void xa_set_free(struct xa_set *s) {
    for (size_t i = 0; i < s->n; i++) txn_free(&s->t[i]);
    free(s->t);
    memset(s, 0, sizeof *s);
}
