/* absent: a decoded message's row that lacks columns, said for its
 * producer (see mq_absent_advice in mq.h). */
#include <stdio.h>
#include <string.h>

#include "mq/mq.h"

static const char *const hint[4] = {
    [MQ_AUTO] = "its row data",
    [MQ_CANAL] = "canal-json's data (and old)",
    [MQ_DEBEZIUM] = "Debezium's before/after (a message key alone is not read)",
    [MQ_MAXWELL] = "Maxwell's data",
};

/* names of the columns of t (is_pk ones, or every one) absent from some
 * image the row has, comma-separated; how many */
static unsigned absent_cols(const bl_table *t, const bl_row *r, bool pk, char *out, size_t n) {
    unsigned k = 0;
    size_t len = 0;
    out[0] = '\0';
    for (uint32_t c = 0; c < t->ncols; c++) {
        if (pk && !t->cols[c].is_pk) continue;
        bool gone = (r->before && r->before[c].state == BL_ABSENT) ||
                    (r->after && r->after[c].state == BL_ABSENT);
        if (!gone) continue;
        int w = snprintf(out + len, n - len, "%s%s", k ? ", " : "",
                         t->cols[c].name ? t->cols[c].name : "?");
        if (w > 0 && (size_t)w < n - len) len += (size_t)w;
        k++;
    }
    return k;
}

int mq_absent_advice(const mq_msg *m, uint32_t i, char *out, size_t outlen) {
    if (m->kind != MQ_ROWS || i >= m->nrows) return -1;
    const bl_table *t = &m->table;
    const bl_row *r = &m->rows[i];
    const char *where = hint[m->format >= 0 && m->format < 4 ? m->format : MQ_AUTO];
    char cols[400];
    unsigned k = absent_cols(t, r, true, cols, sizeof cols);
    if (k) {
        snprintf(out, outlen, "%s.%s: row %u of the message has no value for the table's "
                 "primary key column%s %s, so the documents it changes cannot be found: the "
                 "producer must include the primary key column%s %s in every message of the "
                 "table (%s)", t->db, t->name, i + 1, k > 1 ? "s" : "", cols, k > 1 ? "s" : "",
                 cols, where);
        return 0;
    }
    k = absent_cols(t, r, false, cols, sizeof cols);
    if (!k) return -1;
    snprintf(out, outlen, "%s.%s: row %u of the message has no value for column%s %s, which "
             "the mapping reads: the producer must send whole rows, every column in each image "
             "(%s; the binlog it reads needs binlog_row_image=FULL), or give the table mode "
             "re-query", t->db, t->name, i + 1, k > 1 ? "s" : "", cols, where);
    return 0;
}
