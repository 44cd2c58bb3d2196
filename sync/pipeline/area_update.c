/* area_update: element scripts for nested relations marked area_update.
 *
 * The changed elements of a transaction are collected by the router
 * (area_collect); at the commit, those whose document is rebuilt whole are
 * dropped, and so are those of a document whose root row is outside its
 * table's where (no such document exists); the rest are resolved (which
 * document each belongs to now) and built from their own rows, and each
 * document gets one painless script with all its element edits
 * (area_submit). No sibling element is read. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "sync/pipeline/docbuild.h"
#include "jsonw.h"
#include "sync/pipeline/pipeline.h"
#include "sync/mapping/mapping_shard.h"

int area_collect(void *ctx, size_t index, const struct mp_relation *rel, const char *doc,
                 const char *elem) {
    struct route_ctx *rc = ctx;
    struct pipeline *p = rc->p;
    /* a version just switched live may still get writes queued for it by
     * its old name or through the old alias before the switch: a script
     * landing before them would be overwritten by an older whole document
     * (a script raises the engine's version by one only). Whole documents
     * until those are acknowledged (their versions compare with anything). */
    if (p->scripts_after) {
        char pos[8];
        if (deliver_low_water(p->d, pos, sizeof pos) >= p->scripts_after) p->scripts_after = 0;
    }
    /* while a version is built most of its documents do not exist yet:
     * whole documents rather than element scripts */
    if (p->scripts_after || targets_build_of(p, p->m->indices[index].alias)) {
        if (!row_image_index(&rc->p->m->indices[index]))
            changeset_add_doc(rc->cs, index, 0, doc, strlen(doc));
        return 0;
    }
    changeset_add_element(rc->cs, index, rel, doc, elem);
    return 0;
}

static void elements_free(struct changeset *cs) {
    for (size_t i = 0; i < cs->nelems; i++) free(cs->elems[i].doc), free(cs->elems[i].elem);
    cs->nelems = 0;
}

/* params.ops: [{p: array field, k: element key field, v: key as text, e:
 * the element, or null to remove it}]. An element is found by its key; a new
 * one goes before the first element with a greater key (non-negative integer
 * keys keep the builder's order), else at the end. The document's version
 * guard (bulk.c) wraps this script. */
static const char AREA_SCRIPT[] =
    "for (op in params.ops) {"
    " def a = ctx._source[op.p];"
    " if (a == null) { a = new ArrayList(); ctx._source[op.p] = a; }"
    " int at = -1;"
    " for (int i = 0; i < a.size(); i++) {"
    "  def e = a.get(i);"
    "  if (e != null && e[op.k] != null && String.valueOf(e[op.k]) == op.v) { at = i; break; }"
    " }"
    " if (op.e == null) { if (at >= 0) { a.remove(at); } }"
    " else if (at >= 0) { a.set(at, op.e); }"
    " else {"
    "  int pos = a.size();"
    "  for (int i = 0; i < a.size(); i++) {"
    "   def e = a.get(i);"
    "   if (e == null || e[op.k] == null) { continue; }"
    "   String x = String.valueOf(e[op.k]);"
    "   if (x.length() > op.v.length() || (x.length() == op.v.length() && x.compareTo(op.v) > 0))"
    "   { pos = i; break; }"
    "  }"
    "  a.add(pos, op.e);"
    " }"
    "}";

struct elem_body {
    char *key, *body;
};
struct elem_sink {
    struct elem_body *v;
    size_t n, cap;
};

static int elem_doc(void *ctx, const char *id, const char *routing, const char *body, size_t len) {
    (void)routing;
    struct elem_sink *es = ctx;
    if (es->n == es->cap) {
        es->cap = es->cap ? es->cap * 2 : 64;
        es->v = xrealloc(es->v, es->cap * sizeof *es->v);
    }
    es->v[es->n++] = (struct elem_body){xstrdup(id), xstrndup(body, len)};
    return 0;
}

static int cmp_elem_body(const void *a, const void *b) {
    return strcmp(((const struct elem_body *)a)->key, ((const struct elem_body *)b)->key);
}

static int cmp_aop_elem(const void *a, const void *b) {
    const struct cs_element *x = a, *y = b;
    if (x->index != y->index) return x->index < y->index ? -1 : 1;
    if (x->rel != y->rel) return (uintptr_t)x->rel < (uintptr_t)y->rel ? -1 : 1;
    return strcmp(x->elem, y->elem);
}

static int cmp_aop_doc(const void *a, const void *b) {
    const struct cs_element *x = a, *y = b;
    if (x->index != y->index) return x->index < y->index ? -1 : 1;
    int c = strcmp(x->doc, y->doc);
    if (c) return c;
    if (x->rel != y->rel) return (uintptr_t)x->rel < (uintptr_t)y->rel ? -1 : 1;
    return strcmp(x->elem, y->elem);
}

static const char *rel_key_name(const struct mp_relation *rel) {
    const struct mp_column *k = mp_relation_key(rel);
    return k ? k->name : NULL;
}

/* Elements ops[0..n) (one relation, sorted by element): which belong to which
 * document now (key, join column; the relation's WHERE applied), then build
 * those elements with their own sub-relations, one chunked query per level. */
static int area_resolve(struct pipeline *p, struct cs_element *ops, size_t n, struct elem_sink *es,
                        struct strset *member) {
    const struct mp_relation *rel = ops[0].rel;
    const char *key = rel_key_name(rel);
    sbuf q = SBUF_INIT;
    char **members = NULL;
    size_t nm = 0, capm = 0;
    int rc = 0;
    for (size_t at = 0; at < n && rc == 0;) {
        sbuf_reset(&q);
        sbuf_adds(&q, "SELECT ");
        db_ident(&q, key);
        sbuf_addc(&q, ',');
        db_ident(&q, rel->join_column);
        sbuf_adds(&q, " FROM ");
        db_ident(&q, rel->db);
        sbuf_addc(&q, '.');
        db_ident(&q, rel->table);
        sbuf_adds(&q, " WHERE ");
        db_ident(&q, key);
        sbuf_adds(&q, " IN (");
        size_t k = 0;
        for (; at < n && k < DOCBUILD_CHUNK; at++) {
            if (at > 0 && !strcmp(ops[at].elem, ops[at - 1].elem)) continue;
            if (k++) sbuf_addc(&q, ',');
            db_quote(p->src, &q, ops[at].elem, strlen(ops[at].elem));
        }
        sbuf_addc(&q, ')');
        if (rel->where) {
            sbuf_adds(&q, " AND (");
            sbuf_adds(&q, rel->where);
            sbuf_addc(&q, ')');
        }
        MYSQL_RES *res = db_query(p->src, q.data, q.len, p->err, sizeof p->err);
        if (!res) {
            rc = errf(p->err, sizeof p->err, "finding the documents of %s.%s elements: %s (%u)",
                      rel->db, rel->table, mysql_error(p->src), mysql_errno(p->src));
            break;
        }
        MYSQL_ROW row;
        while ((row = mysql_fetch_row(res))) {
            unsigned long *len = mysql_fetch_lengths(res);
            if (!row[0] || !row[1]) continue;
            sbuf pair = SBUF_INIT;
            sbuf_add(&pair, row[0], len[0]);
            sbuf_addc(&pair, '\x1f');
            sbuf_add(&pair, row[1], len[1]);
            strset_add(member, pair.data, pair.len);
            sbuf_free(&pair);
            if (nm == capm) {
                capm = capm ? capm * 2 : 64;
                members = xrealloc(members, capm * sizeof *members);
            }
            members[nm++] = xstrndup(row[0], len[0]);
        }
        mysql_free_result(res);
    }
    if (rc == 0 && nm) {
        struct mp_table et = {0};
        et.db = rel->db, et.table = rel->table;
        et.columns = rel->columns, et.ncolumns = rel->ncolumns;
        et.relations = rel->relations, et.nrelations = rel->nrelations;
        struct mp_index ex = {0};
        ex.alias = p->m->indices[ops[0].index].alias;
        ex.tables = &et, ex.ntables = 1;
        struct docbuild b;
        docbuild_init(&b, p->src, &ex);
        struct docbuild_sink sink = {elem_doc, NULL, es};
        rc = docbuild_roots(&b, (const char *const *)members, nm, &sink, p->err, sizeof p->err);
        qsort(es->v, es->n, sizeof *es->v, cmp_elem_body);
    }
    for (size_t i = 0; i < nm; i++) free(members[i]);
    free(members);
    sbuf_free(&q);
    return rc;
}

/* Drop the elements of documents whose root row is outside its table's
 * where, or gone (roots of an index config with a where only): their
 * document does not exist (it was deleted when the row went out), and a
 * script would find it missing and have it rebuilt, to be deleted again.
 * One query per index config and chunk of documents, in the change set's
 * snapshot. */
static int drop_filtered(struct pipeline *p, struct changeset *cs) {
    bool any = false;
    for (size_t i = 0; i < cs->nelems && !any; i++)
        any = p->m->indices[cs->elems[i].index].tables[0].where != NULL;
    if (!any) return 0;
    struct strset in = {0}; /* "index\x1fkey" of the documents whose root is in */
    sbuf q = SBUF_INIT, k = SBUF_INIT;
    int rc = 0;
    for (size_t x = 0; x < p->m->nindices && rc == 0; x++) {
        const struct mp_table *root = &p->m->indices[x].tables[0];
        const struct mp_column *key = mp_table_key(root);
        if (!root->where || !key) continue;
        struct strset asked = {0};
        size_t at = 0;
        while (rc == 0) {
            sbuf_reset(&q);
            sbuf_adds(&q, "SELECT ");
            db_ident(&q, key->name);
            sbuf_adds(&q, " FROM ");
            db_ident(&q, root->db);
            sbuf_addc(&q, '.');
            db_ident(&q, root->table);
            sbuf_adds(&q, " WHERE ");
            db_ident(&q, key->name);
            sbuf_adds(&q, " IN (");
            size_t n = 0;
            for (; at < cs->nelems && n < DOCBUILD_CHUNK; at++) {
                const char *doc = cs->elems[at].doc;
                if (cs->elems[at].index != x || strset_has(&asked, doc, strlen(doc))) continue;
                strset_add(&asked, doc, strlen(doc));
                if (n++) sbuf_addc(&q, ',');
                db_quote(p->src, &q, doc, strlen(doc));
            }
            if (!n) break;
            sbuf_printf(&q, ") AND (%s)", root->where);
            MYSQL_RES *res = db_query(p->src, q.data, q.len, p->err, sizeof p->err);
            if (!res) {
                rc = -1;
                break;
            }
            MYSQL_ROW row;
            while ((row = mysql_fetch_row(res))) {
                unsigned long *len = mysql_fetch_lengths(res);
                if (!row[0]) continue;
                sbuf_reset(&k);
                sbuf_printf(&k, "%zu\x1f%.*s", x, (int)len[0], row[0]);
                strset_add(&in, k.data, k.len);
            }
            mysql_free_result(res);
        }
        strset_clear(&asked);
    }
    size_t n = 0;
    for (size_t i = 0; rc == 0 && i < cs->nelems; i++) {
        struct cs_element *e = &cs->elems[i];
        sbuf_reset(&k);
        sbuf_printf(&k, "%zu\x1f%s", e->index, e->doc);
        if (p->m->indices[e->index].tables[0].where && !strset_has(&in, k.data, k.len)) {
            free(e->doc), free(e->elem);
            continue;
        }
        cs->elems[n++] = *e;
    }
    if (rc == 0) cs->nelems = n;
    strset_clear(&in);
    sbuf_free(&q);
    sbuf_free(&k);
    return rc;
}

/* This transaction's changed elements: drop those of documents rebuilt whole
 * (full[index] holds their keys), resolve and build the rest, and submit one
 * script per document with all its element edits. */
int area_submit(struct pipeline *p, struct changeset *cs, const struct strset *full,
                const bl_pos *txn_end, bool after) {
    size_t n = 0;
    sbuf k = SBUF_INIT;
    for (size_t i = 0; i < cs->nelems; i++) { /* keep ops whose document is not rebuilt */
        sbuf_reset(&k);
        sbuf_printf(&k, "%zu\x1f%s", cs->elems[i].index, cs->elems[i].doc);
        if (strset_has(full, k.data, k.len)) {
            free(cs->elems[i].doc), free(cs->elems[i].elem);
            continue;
        }
        cs->elems[n++] = cs->elems[i];
    }
    cs->nelems = n;
    sbuf_free(&k);
    if (drop_filtered(p, cs) < 0) return -1;
    n = cs->nelems;
    if (!n) return 0;
    qsort(cs->elems, n, sizeof *cs->elems, cmp_aop_elem);
    struct elem_sink *sinks = NULL; /* one per relation group */
    size_t ngroups = 0;
    struct strset member = {0};
    int rc = 0;
    for (size_t at = 0; at < n && rc == 0;) {
        size_t end = at;
        while (end < n && cs->elems[end].index == cs->elems[at].index &&
               cs->elems[end].rel == cs->elems[at].rel)
            end++;
        sinks = xrealloc(sinks, (ngroups + 1) * sizeof *sinks);
        struct elem_sink *es = &sinks[ngroups++];
        memset(es, 0, sizeof *es);
        rc = area_resolve(p, cs->elems + at, end - at, es, &member);
        for (size_t i = at; rc == 0 && i < end; i++) {
            struct cs_element *op = &cs->elems[i];
            sbuf pair = SBUF_INIT;
            sbuf_printf(&pair, "%s\x1f%s", op->elem, op->doc);
            op->body = NULL;
            if (strset_has(&member, pair.data, pair.len)) {
                struct elem_body want = {op->elem, NULL};
                struct elem_body *eb = bsearch(&want, es->v, es->n, sizeof *es->v, cmp_elem_body);
                if (eb) op->body = eb->body;
            }
            sbuf_free(&pair);
        }
        at = end;
    }
    if (rc == 0) qsort(cs->elems, n, sizeof *cs->elems, cmp_aop_doc);
    sbuf params = SBUF_INIT;
    for (size_t at = 0; at < n && rc == 0;) {
        const struct mp_index *ix = &p->m->indices[cs->elems[at].index];
        sbuf_reset(&params);
        jsonw w;
        jw_init(&w, &params);
        jw_obj_open(&w);
        jw_key(&w, "ops");
        jw_arr_open(&w);
        size_t end = at;
        for (; end < n && cs->elems[end].index == cs->elems[at].index &&
               !strcmp(cs->elems[end].doc, cs->elems[at].doc);
             end++) {
            const struct cs_element *op = &cs->elems[end];
            const struct mp_table *root = &ix->tables[0];
            jw_obj_open(&w);
            jw_key(&w, "p");
            jw_str(&w, mp_relation_name(op->rel, root->columns, root->ncolumns));
            jw_key(&w, "k");
            jw_str(&w, rel_key_name(op->rel));
            jw_key(&w, "v");
            jw_str(&w, op->elem);
            jw_key(&w, "e");
            if (op->body)
                jw_raw(&w, op->body, strlen(op->body));
            else
                jw_null(&w);
            jw_obj_close(&w);
        }
        jw_arr_close(&w);
        jw_obj_close(&w);
        uint64_t v = targets_version(p, ix, txn_end, after);
        sbuf docid = SBUF_INIT; /* a shard's documents carry it in their ids */
        mp_doc_id(ix, cs->elems[at].doc, strlen(cs->elems[at].doc), &docid);
        struct change c = {.index = ix->alias, .doc_id = docid.data, .version = v,
                           .op = CHANGE_SCRIPT, .body = params.data, .body_len = params.len,
                           .script = AREA_SCRIPT};
        if (!v || targets_submit(p, ix, &c) != 0) rc = -1;
        sbuf_free(&docid);
        p->scripts++;
        at = end;
    }
    sbuf_free(&params);
    for (size_t g = 0; g < ngroups; g++) {
        for (size_t i = 0; i < sinks[g].n; i++) free(sinks[g].v[i].key), free(sinks[g].v[i].body);
        free(sinks[g].v);
    }
    free(sinks);
    strset_clear(&member);
    elements_free(cs);
    return rc;
}
