/* row_image: documents taken straight from the binlog's row images.
 *
 * A root table in mode row-image, with no relations, needs no query at all:
 * its document is the after image (the mapping's columns, formatted as the
 * builder would; docs/binlog.md "Values"), or a delete. A key change deletes the old
 * id. Within one change set the latest image of a document wins: the last
 * read, or with coordinates (Kafka: struct cs_at) the latest by them, and
 * its document is versioned by them (changeset_rowdoc_winners). */
#include <stdio.h>
#include <stdlib.h>

#include "jsonw.h"
#include "sync/mapping/mapping_shard.h"
#include "sync/mapping/mapping_source.h"
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

int row_image_doc(struct pipeline *p, struct changeset *cs, size_t index, const bl_row *row) {
    const struct mp_index *ix = &p->m->indices[index];
    const struct mp_table *t = &ix->tables[0];
    const struct mp_column *key = mp_table_key(t);
    const bl_table *bt = row->table;
    char *old_id = NULL;
    size_t len = 0;
    bool absent = false;
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

int row_image_submit(struct pipeline *p, struct changeset *cs, const bl_pos *end) {
    size_t *win = xcalloc(cs->nrdocs ? cs->nrdocs : 1, sizeof *win);
    size_t n = changeset_rowdoc_winners(cs, win);
    int rc = 0;
    for (size_t k = 0; k < n && rc == 0; k++) {
        const struct cs_rowdoc *r = &cs->rdocs[win[k]];
        const struct mp_index *ix = &p->m->indices[r->index];
        /* an image with coordinates carries the row as of them: versioned
         * by them, not by the change set's largest (an image read in this
         * set may be older than another partition's messages in it, and the
         * row's next image, read in a later set, newer but below those) */
        uint64_t version = r->at.known ? version_make(ix->epoch, r->at.file, r->at.pos)
                                       : targets_version(p, ix, end, cs->version_after);
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
