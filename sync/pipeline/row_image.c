/* row_image: documents taken straight from the binlog's row images.
 *
 * A root table in mode row-image, with no relations, needs no query at all:
 * its document is the after image (the mapping's columns, formatted as the
 * builder would; docs/binlog.md "Values"), or a delete. A key change deletes the old
 * id. The table's where is decided from the after image too
 * (sync/mapping/row_filter.h): a row outside it is a delete. Where only the
 * server can decide it (a non-ASCII string under a case-insensitive
 * collation, ...), the document is rebuilt from MySQL by key as in re-query
 * mode, the where in the query (row_image_requery). Within one change set
 * the latest image of a document wins: the last read, or with coordinates
 * (Kafka: struct cs_at) the latest by them, and its document is versioned
 * by them (changeset_rowdoc_winners).
 *
 * An after image holding a value its producer's message could not give
 * with certainty (BL_UNSURE: a Kafka message's, src/mq) in a column the
 * mapping reads, or in any column of a table with a where, is no document
 * either: it is rebuilt from MySQL by key the same way, and holds the row as
 * of at least this image. The key must be certain: it names the document. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonw.h"
#include "sync/mapping/mapping_shard.h"
#include "sync/mapping/mapping_source.h"
#include "sync/mapping/row_filter.h"
#include "sync/pipeline/pipeline.h"

/* the document id of key v (a shard's carries it: mapping_shard.h) */
static char *unit_id(const struct mp_index *ix, const char *v, size_t len) {
    sbuf id = SBUF_INIT;
    mp_doc_id(ix, v, len, &id);
    return sbuf_detach(&id);
}

bool row_image_index(const struct mp_index *ix) {
    return ix->ntables && ix->tables[0].mode == MP_ROWIMAGE && !ix->tables[0].nrelations;
}

/* the state of column name's cell in cells (BL_ABSENT when the table has none) */
static int cell_state(const bl_table *bt, const bl_cell *cells, const char *name) {
    for (uint32_t i = 0; i < bt->ncols; i++)
        if (bt->cols[i].name && !strcmp(bt->cols[i].name, name)) return cells[i].state;
    return BL_ABSENT;
}

/* Does the after image hold an unsure value the document or the where may read? */
static bool image_unsure(const struct mp_table *t, const bl_table *bt, const bl_cell *cells) {
    for (uint32_t i = 0; i < bt->ncols; i++)
        if (cells[i].state == BL_UNSURE && t->where) return true;
    for (size_t c = 0; c < t->ncolumns; c++)
        if (cell_state(bt, cells, t->columns[c].name) == BL_UNSURE) return true;
    return false;
}

/* Is the after image of row in table t's where: RF_TRUE, RF_FALSE (NULL
 * too: out), RF_UNDECIDED (the server decides); -1 with p->err when the
 * image lacks a column the where reads. */
static int in_filter(struct pipeline *p, const struct mp_table *t, const bl_row *row) {
    if (!t->where) return RF_TRUE;
    if (!t->filter) return RF_UNDECIDED; /* not read here (validation refuses that) */
    struct image im = {p, row->table, row->after};
    const char *col = NULL;
    enum rf_truth r = row_filter_eval(t->filter, image_value, &im, &col);
    if (r == RF_ABSENT)
        return errf(p->err, sizeof p->err,
                    "%s.%s is in mode row-image but column %s, which its where reads, is not in "
                    "the binlog's row image: set binlog_row_image=FULL on the source (or use mode "
                    "re-query)", row->table->db, row->table->name, col ? col : "?");
    return r == RF_NULL ? RF_FALSE : (int)r;
}

int row_image_doc(struct pipeline *p, struct changeset *cs, size_t index, const bl_row *row) {
    const struct mp_index *ix = &p->m->indices[index];
    const struct mp_table *t = &ix->tables[0];
    const struct mp_column *key = mp_table_key(t);
    const bl_table *bt = row->table;
    char *old_id = NULL;
    size_t len = 0;
    bool absent = false;
    if ((row->before && cell_state(bt, row->before, key->name) == BL_UNSURE) ||
        (row->after && cell_state(bt, row->after, key->name) == BL_UNSURE))
        return errf(p->err, sizeof p->err, "%s.%s: the value of key column %s could not be "
                    "decoded with certainty, so the document of this row is not known",
                    bt->db, bt->name, key->name);
    if (row->before) {
        struct image im = {p, bt, row->before};
        const char *v = image_value(&im, key->name, &len, &absent);
        if (v) old_id = unit_id(ix, v, len);
    }
    if (!row->after) {
        if (old_id) changeset_add_rowdoc(cs, index, old_id, strlen(old_id), NULL, 0);
        free(old_id);
        return 0;
    }
    int in = image_unsure(t, bt, row->after) ? RF_UNDECIDED : in_filter(p, t, row);
    if (in != RF_TRUE) { /* out: a delete; undecided or unsure: rebuilt from MySQL */
        struct image im = {p, bt, row->after};
        const char *v = in < 0 ? NULL : image_value(&im, key->name, &len, &absent);
        if (in >= 0 && !v)
            in = errf(p->err, sizeof p->err, "%s.%s: a row without a value in key column %s",
                      bt->db, bt->name, key->name);
        if (in >= 0) {
            char *id = unit_id(ix, v, len);
            if (old_id && strcmp(old_id, id))
                changeset_add_rowdoc(cs, index, old_id, strlen(old_id), NULL, 0);
            if (in == RF_UNDECIDED) changeset_add_rowdoc_requery(cs, index, id, strlen(id));
            else changeset_add_rowdoc(cs, index, id, strlen(id), NULL, 0);
            free(id);
        }
        free(old_id);
        return in < 0 ? -1 : 0;
    }
    sbuf body = SBUF_INIT;
    jsonw w;
    jw_init(&w, &body);
    jw_obj_open(&w);
    for (size_t c = 0; c < t->ncolumns; c++) {
        const struct mp_column *mc = &t->columns[c];
        uint32_t i = 0;
        while (i < bt->ncols && (!bt->cols[i].name || strcmp(bt->cols[i].name, mc->name))) i++;
        if (i == bt->ncols || row->after[i].state == BL_ABSENT) {
            sbuf_free(&body);
            free(old_id);
            return errf(p->err, sizeof p->err,
                        "%s.%s is in mode row-image but column %s is not in the binlog's row "
                        "image: set binlog_row_image=FULL on the source (or use mode re-query)",
                        bt->db, bt->name, mc->name);
        }
        jw_key(&w, mc->name);
        bl_value_json(&p->v, &w, &bt->cols[i], &row->after[i], NULL);
    }
    if (mp_index_has_children(ix)) {
        jw_key(&w, ix->join_field ? ix->join_field : "relation");
        jw_obj_open(&w);
        jw_key(&w, "name");
        jw_str(&w, t->join_name ? t->join_name : t->table);
        jw_obj_close(&w);
    }
    if (ix->unit) { /* as the document builder writes it */
        jw_key(&w, MP_SHARD_FIELD);
        jw_str(&w, ix->unit);
    }
    if (ix->source) {
        jw_key(&w, MP_SOURCE_FIELD);
        jw_str(&w, ix->source);
    }
    jw_obj_close(&w);
    struct image im = {p, bt, row->after};
    const char *v = image_value(&im, key->name, &len, &absent);
    int rc = 0;
    if (!v) {
        rc = errf(p->err, sizeof p->err, "%s.%s: a row without a value in key column %s",
                  bt->db, bt->name, key->name);
    } else {
        char *id = unit_id(ix, v, len);
        if (old_id && strcmp(old_id, id))
            changeset_add_rowdoc(cs, index, old_id, strlen(old_id), NULL, 0);
        changeset_add_rowdoc(cs, index, id, strlen(id), body.data, body.len);
        free(id);
    }
    sbuf_free(&body);
    free(old_id);
    return rc;
}

void row_image_requery(struct pipeline *p, struct changeset *cs) {
    if (!cs->nrequery) return;
    size_t *win = xcalloc(cs->nrdocs ? cs->nrdocs : 1, sizeof *win);
    size_t n = changeset_rowdoc_winners(cs, win);
    for (size_t k = 0; k < n; k++) {
        const struct cs_rowdoc *r = &cs->rdocs[win[k]];
        size_t kl = 0;
        const char *key = r->requery ? mp_doc_key(&p->m->indices[r->index], r->id, &kl) : NULL;
        if (key) changeset_add_doc(cs, r->index, 0, key, kl);
    }
    free(win);
}

int row_image_submit(struct pipeline *p, struct changeset *cs, const bl_pos *end, bool after) {
    size_t *win = xcalloc(cs->nrdocs ? cs->nrdocs : 1, sizeof *win);
    size_t n = changeset_rowdoc_winners(cs, win);
    int rc = 0;
    for (size_t k = 0; k < n && rc == 0; k++) {
        const struct cs_rowdoc *r = &cs->rdocs[win[k]];
        if (r->requery) continue; /* rebuilt from MySQL (row_image_requery) */
        const struct mp_index *ix = &p->m->indices[r->index];
        /* an image with coordinates carries the row as of them: versioned
         * by them, not by the change set's largest (an image read in this
         * set may be older than another partition's messages in it, and the
         * row's next image, read in a later set, newer but below those) */
        uint64_t version = r->at.known ? version_make(ix->epoch, r->at.file, r->at.pos)
                                       : targets_version(p, ix, end, after);
        if (!version && r->at.known)
            errf(p->err, sizeof p->err, "position %u:%llu does not fit a version", r->at.file,
                 (unsigned long long)r->at.pos);
        struct change c = {.index = ix->alias, .doc_id = r->id, .version = version,
                           .op = r->body ? CHANGE_INDEX : CHANGE_DELETE, .body = r->body,
                           .body_len = r->len};
        if (r->body) p->docs++;
        else p->deletes++;
        if (!c.version || targets_submit(p, ix, &c) != 0) rc = -1;
    }
    free(win);
    return rc;
}
