/* changeset: the record passed between the sync pipeline's stages (see
 * changeset.h): gathering documents, elements, row-image documents and
 * change snapshots, and forgetting them. */
#include <stdlib.h>
#include <string.h>

#include "sync/pipeline/changeset.h"

void changeset_add_doc(struct changeset *cs, size_t index, size_t table, const char *key,
                       size_t len) {
    struct cs_pending *p = NULL;
    for (size_t i = 0; i < cs->npend; i++)
        if (cs->pend[i].index == index && cs->pend[i].table == table) p = &cs->pend[i];
    if (!p) {
        cs->pend = xrealloc(cs->pend, (cs->npend + 1) * sizeof *cs->pend);
        p = &cs->pend[cs->npend++];
        memset(p, 0, sizeof *p);
        p->index = index, p->table = table;
    }
    if (p->n == p->cap) {
        p->cap = p->cap ? p->cap * 2 : 64;
        p->keys = xrealloc(p->keys, p->cap * sizeof *p->keys);
    }
    p->keys[p->n++] = xstrndup(key, len);
}

void changeset_add_element(struct changeset *cs, size_t index, const struct mp_relation *rel,
                           const char *doc, const char *elem) {
    if (cs->nelems == cs->capelems) {
        cs->capelems = cs->capelems ? cs->capelems * 2 : 64;
        cs->elems = xrealloc(cs->elems, cs->capelems * sizeof *cs->elems);
    }
    cs->elems[cs->nelems++] = (struct cs_element){index, rel, xstrdup(doc), xstrdup(elem), NULL};
}

void changeset_add_rowdoc(struct changeset *cs, size_t index, const char *id, size_t idlen,
                          const char *body, size_t len) {
    if (cs->nrdocs == cs->caprdocs) {
        cs->caprdocs = cs->caprdocs ? cs->caprdocs * 2 : 64;
        cs->rdocs = xrealloc(cs->rdocs, cs->caprdocs * sizeof *cs->rdocs);
    }
    struct cs_rowdoc *r = &cs->rdocs[cs->nrdocs++];
    r->index = index;
    r->id = xstrndup(id, idlen);
    r->body = body ? xstrndup(body, len) : NULL;
    r->len = body ? len : 0;
    r->at = cs->at;
    r->requery = false;
}

void changeset_add_rowdoc_requery(struct changeset *cs, size_t index, const char *id,
                                  size_t idlen) {
    changeset_add_rowdoc(cs, index, id, idlen, NULL, 0);
    cs->rdocs[cs->nrdocs - 1].requery = true;
    cs->nrequery++;
}

int cs_at_cmp(const struct cs_at *a, const struct cs_at *b) {
    if (a->file != b->file) return a->file < b->file ? -1 : 1;
    if (a->pos != b->pos) return a->pos < b->pos ? -1 : 1;
    if (a->row != b->row) return a->row < b->row ? -1 : 1;
    return 0;
}

/* qsort: by index, id, then read order */
struct rd_ref {
    const struct cs_rowdoc *r;
    size_t i; /* its place in cs->rdocs: the read order */
};
static int by_doc(const void *x, const void *y) {
    const struct rd_ref *a = x, *b = y;
    if (a->r->index != b->r->index) return a->r->index < b->r->index ? -1 : 1;
    int c = strcmp(a->r->id, b->r->id);
    if (c) return c;
    return a->i < b->i ? -1 : a->i > b->i;
}

size_t changeset_rowdoc_winners(const struct changeset *cs, size_t *win) {
    struct rd_ref *o = xcalloc(cs->nrdocs ? cs->nrdocs : 1, sizeof *o);
    for (size_t i = 0; i < cs->nrdocs; i++) o[i] = (struct rd_ref){&cs->rdocs[i], i};
    qsort(o, cs->nrdocs, sizeof *o, by_doc);
    size_t n = 0;
    for (size_t i = 0; i < cs->nrdocs;) {
        size_t best = i, j = i + 1;
        for (; j < cs->nrdocs && o[j].r->index == o[i].r->index && !strcmp(o[j].r->id, o[i].r->id);
             j++) {
            /* read later: it wins unless both have coordinates and it is older */
            const struct cs_at *c = &o[j].r->at, *b = &o[best].r->at;
            if (!(c->known && b->known) || cs_at_cmp(c, b) >= 0) best = j;
        }
        win[n++] = o[best].i;
        i = j;
    }
    free(o);
    return n;
}

bool changeset_reads(const struct changeset *cs) {
    return cs->npend > 0 || cs->nelems > 0 || cs->nrequery > 0;
}

void changeset_reset(struct changeset *cs) {
    for (size_t i = 0; i < cs->npend; i++) {
        for (size_t k = 0; k < cs->pend[i].n; k++) free(cs->pend[i].keys[k]);
        free(cs->pend[i].keys);
    }
    free(cs->pend);
    cs->pend = NULL, cs->npend = 0;
    for (size_t i = 0; i < cs->nelems; i++) free(cs->elems[i].doc), free(cs->elems[i].elem);
    cs->nelems = 0;
    for (size_t i = 0; i < cs->nrdocs; i++) free(cs->rdocs[i].id), free(cs->rdocs[i].body);
    cs->nrdocs = 0;
    cs->nrequery = 0;
    sbuf_reset(&cs->snaps);
    cs->copies_may_move = cs->rows = cs->saves = cs->other_rows = false;
    memset(&cs->at, 0, sizeof cs->at);
    route_seeds_clear(&cs->seeds);
}

void changeset_free(struct changeset *cs) {
    changeset_reset(cs);
    free(cs->elems);
    free(cs->rdocs);
    sbuf_free(&cs->snaps);
    route_seeds_free(&cs->seeds);
    memset(cs, 0, sizeof *cs);
}
