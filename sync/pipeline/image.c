/* image: a column's value in a row image of the binlog, as the text MySQL
 * gives for it — what the router's IN lists, document ids and change
 * snapshots compare with (bl_value_text, not its JSON form). */
#include "sync/pipeline/pipeline.h"

/* The value's text as MySQL gives it (bl_value_text): what the router's IN
 * lists and the document ids compare with. */
const char *image_value(void *img, const char *column, size_t *len, bool *absent) {
    struct image *im = img;
    for (uint32_t i = 0; i < im->t->ncols; i++) {
        const bl_column *c = &im->t->cols[i];
        if (!c->name || strcmp(c->name, column) != 0) continue;
        const bl_cell *cell = &im->cells[i];
        /* a value its message could not give with certainty is as good as
         * absent: nothing is routed or compared by a guess */
        *absent = cell->state == BL_ABSENT || cell->state == BL_UNSURE;
        if (cell->state != BL_VALUE) return NULL;
        struct pipeline *p = im->p;
        sbuf_reset(&p->val);
        sbuf_add(&p->val, "", 0);
        if (!bl_value_text(&p->v, &p->val, c, cell)) return NULL;
        *len = p->val.len;
        return p->val.data ? p->val.data : "";
    }
    *absent = true;
    return NULL;
}

