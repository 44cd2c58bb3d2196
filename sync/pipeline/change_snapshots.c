/* change_snapshots: the change_snapshots rows a change set writes for the
 * delayed run, one per changed row of a delay-effect table, gathered into
 * one multi-row INSERT (changeset.snaps) and written when it is built. */
#include <stdio.h>

#include "sync/pipeline/pipeline.h"
#include "jsonw.h"

/* A change of a delay-effect (metadata) table is not routed now: it becomes a
 * change snapshot, refreshed by the delayed run.
 * Inserts and updates record the business id only (a later change of the same
 * row the same day folds into the same row); deletes keep the before image,
 * since the row is gone. Written at commit, before the transaction can be
 * checkpointed, so a crash replays rather than loses it. */
int snapshots_add_row(struct pipeline *p, struct changeset *cs, const bl_row *row) {
    const bl_table *t = row->table;
    const bl_cell *img = row->after ? row->after : row->before;
    sbuf id = SBUF_INIT;
    for (uint32_t i = 0; i < t->ncols; i++) {
        if (!t->cols[i].is_pk || !t->cols[i].name) continue;
        bool absent = false;
        size_t len = 0;
        struct image im = {p, t, img};
        const char *v = image_value(&im, t->cols[i].name, &len, &absent);
        if (id.len) sbuf_addc(&id, ',');
        if (v) sbuf_add(&id, v, len);
    }
    if (!id.len) {
        sbuf_free(&id);
        return errf(p->err, sizeof p->err,
                    "%s.%s is delay-effect but has no primary key in the binlog's table map: "
                    "give it one (change snapshots are keyed by it)", t->db, t->name);
    }
    const char *op = row->kind == BL_INSERT ? "insert" : row->kind == BL_UPDATE ? "update" : "delete";
    sbuf *q = &cs->snaps;
    sbuf_adds(q, q->len ? ",(" : "(");
    db_quote(p->meta, q, p->cfg->source.name, strlen(p->cfg->source.name));
    sbuf_addc(q, ',');
    db_quote(p->meta, q, t->db, strlen(t->db));
    sbuf_addc(q, ',');
    db_quote(p->meta, q, t->name, strlen(t->name));
    sbuf_printf(q, ",'%s',", op);
    db_quote(p->meta, q, id.data, id.len);
    sbuf_adds(q, ",'init',UTC_DATE(),");
    if (row->kind == BL_DELETE) {
        sbuf img_json = SBUF_INIT;
        jsonw w;
        jw_init(&w, &img_json);
        bl_image_json(&p->v, &w, t, row->before, NULL);
        db_quote(p->meta, q, img_json.data, img_json.len);
        sbuf_free(&img_json);
    } else {
        sbuf_adds(q, "NULL");
    }
    sbuf_addc(q, ')');
    sbuf_free(&id);
    cs->nsnaps++;
    p->snapshots++;
    return 0;
}

int snapshots_write(struct pipeline *p, struct changeset *cs) {
    if (!cs->snaps.len) return 0;
    sbuf q = SBUF_INIT;
    sbuf_adds(&q, "INSERT INTO change_snapshots (source, db_name, table_name, operation, "
                  "business_id, status, attach_date, row_image) VALUES ");
    sbuf_add(&q, cs->snaps.data, cs->snaps.len);
    sbuf_adds(&q, " ON DUPLICATE KEY UPDATE row_image = VALUES(row_image), "
                  "updated_at = CURRENT_TIMESTAMP(3)");
    int rc = db_exec(p->meta, q.data, p->err, sizeof p->err);
    sbuf_free(&q);
    sbuf_reset(&cs->snaps);
    return rc;
}
