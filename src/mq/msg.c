/* msg: one decoded message's storage and the steps of building it (table,
 * columns, rows, cells), shared by the format decoders; mq_decode, which
 * picks the decoder. Everything a message holds is freed or reused by the
 * next mq_decode on it, or by mq_msg_free. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "json_exact.h"
#include "mq/mq.h"

const char *const mq_format_name[4] = {"auto", "canal-json", "debezium", "maxwell"};

void *mq_alloc(mq_msg *m, size_t n) { return arena_alloc(&m->arena, n); }

char *mq_strdup(mq_msg *m, const char *s, size_t n) { return arena_strndup(&m->arena, s, n); }

void mq_msg_init(mq_msg *m) {
    memset(m, 0, sizeof *m);
    sbuf_init(&m->vals);
}

static void msg_reset(mq_msg *m) {
    arena_free(&m->arena);
    free(m->table.cols);
    memset(&m->table, 0, sizeof m->table);
    m->nrows = 0;
    m->format = MQ_AUTO;
    m->kind = MQ_NONE;
    m->have_pos = false;
    memset(&m->pos, 0, sizeof m->pos);
    m->pos_row = 0;
    m->ts = 0;
    m->ts_ms = 0;
    m->ddl_db = m->ddl = NULL;
    m->ddl_replayed = false;
    m->nunsure = 0; /* (their texts were in the arena) */
    sbuf_reset(&m->vals);
    m->err[0] = '\0';
}

void mq_msg_free(mq_msg *m) {
    if (!m) return;
    msg_reset(m);
    free(m->rows);
    free(m->unsure);
    free(m->cells);
    free(m->cell_off);
    sbuf_free(&m->vals);
    memset(m, 0, sizeof *m);
}

int mq_fail(mq_msg *m, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(m->err, sizeof m->err, fmt, ap);
    va_end(ap);
    return MQ_ERR;
}

void mq_set_table(mq_msg *m, const char *db, const char *table) {
    m->table.db = mq_strdup(m, db, strlen(db));
    m->table.name = mq_strdup(m, table, strlen(table));
}

int mq_set_table_json(mq_msg *m, const char *fmt, const char *type, const cJSON *db,
                      const cJSON *table) {
    if (!cJSON_IsString(db) || !cJSON_IsString(table) || !table->valuestring[0])
        return mq_fail(m, "%s %s message without \"database\" and \"table\"", fmt, type);
    mq_set_table(m, db->valuestring, table->valuestring);
    return MQ_OK;
}

int mq_set_ddl(mq_msg *m, const char *db, const char *sql) {
    m->kind = MQ_DDL;
    m->ddl_db = mq_strdup(m, db ? db : "", db ? strlen(db) : 0);
    m->ddl = mq_strdup(m, sql ? sql : "", sql ? strlen(sql) : 0);
    return MQ_OK;
}

uint32_t mq_add_col(mq_msg *m, const char *name) {
    bl_table *t = &m->table;
    if ((t->ncols & (t->ncols - 1)) == 0) /* grow at powers of two */
        t->cols = xrealloc(t->cols, sizeof *t->cols * (t->ncols ? 2 * t->ncols : 1));
    bl_column *c = &t->cols[t->ncols];
    memset(c, 0, sizeof *c);
    c->name = mq_strdup(m, name, strlen(name));
    c->nullable = true;
    return t->ncols++;
}

int mq_find_col(const mq_msg *m, const char *name) {
    for (uint32_t i = 0; i < m->table.ncols; i++)
        if (!strcmp(m->table.cols[i].name, name)) return (int)i;
    return -1;
}

int mq_lookup_cols(mq_msg *m, const mq_opts *o) {
    if (!o || !o->lookup) return 0;
    const mq_coldef *defs = NULL;
    uint32_t n = 0;
    char err[256] = "";
    int r = o->lookup(o->lookup_ctx, m->table.db, m->table.name, &defs, &n, err, sizeof err);
    if (r < 0) return mq_fail(m, "columns of %s.%s: %s", m->table.db, m->table.name, err), -1;
    if (r == 0 || n == 0) return 0;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t k = mq_add_col(m, defs[i].name ? defs[i].name : "");
        bl_column *c = &m->table.cols[k];
        c->is_pk = defs[i].is_pk;
        if (mq_col_type(m, c, defs[i].column_type ? defs[i].column_type : "", err, sizeof err) < 0)
            return mq_fail(m, "column %s of %s.%s: %s", c->name, m->table.db, m->table.name, err), -1;
    }
    return 1;
}

void mq_cols_done(mq_msg *m) {
    bl_table *t = &m->table;
    sbuf tmp = SBUF_INIT;
    for (uint32_t i = 0; i < t->ncols; i++) {
        bl_column *c = &t->cols[i];
        sbuf_reset(&tmp);
        json_escape(&tmp, c->name, strlen(c->name));
        sbuf_addc(&tmp, ':');
        c->key_json = mq_strdup(m, tmp.data, tmp.len);
        c->key_json_len = (uint32_t)tmp.len;
    }
    sbuf_reset(&tmp);
    sbuf_adds(&tmp, "\"db\":");
    json_escape(&tmp, t->db, strlen(t->db));
    sbuf_adds(&tmp, ",\"table\":");
    json_escape(&tmp, t->name, strlen(t->name));
    t->dbt_json = mq_strdup(m, tmp.data, tmp.len);
    t->dbt_json_len = (uint32_t)tmp.len;
    t->have_names = t->have_signedness = t->have_charsets = true;
    t->checked = true;
    sbuf_free(&tmp);
}

uint32_t mq_add_row(mq_msg *m, enum bl_change kind) {
    uint32_t nc = m->table.ncols;
    if (m->nrows == m->rows_cap) {
        m->rows_cap = m->rows_cap ? 2 * m->rows_cap : 4;
        m->rows = xrealloc(m->rows, sizeof *m->rows * m->rows_cap);
    }
    size_t need = (size_t)(m->nrows + 1) * 2 * nc;
    if (need > m->cells_cap) {
        size_t cap = m->cells_cap ? 2 * m->cells_cap : 64;
        while (cap < need) cap *= 2;
        m->cells = xrealloc(m->cells, sizeof *m->cells * cap);
        m->cell_off = xrealloc(m->cell_off, sizeof *m->cell_off * cap);
        m->cells_cap = cap;
    }
    size_t base = (size_t)m->nrows * 2 * nc;
    memset(m->cells + base, 0, sizeof *m->cells * 2 * nc);
    memset(m->cell_off + base, 0, sizeof *m->cell_off * 2 * nc);
    bl_row *r = &m->rows[m->nrows];
    memset(r, 0, sizeof *r);
    r->kind = kind;
    return m->nrows++;
}

static size_t cell_index(const mq_msg *m, uint32_t row, bool after, uint32_t col) {
    return ((size_t)row * 2 + (after ? 1 : 0)) * m->table.ncols + col;
}

bl_cell *mq_row_cells(mq_msg *m, uint32_t row, bool after) {
    return m->cells + cell_index(m, row, after, 0);
}

void mq_val_end(mq_msg *m, uint32_t row, bool after, uint32_t col, size_t start) {
    size_t i = cell_index(m, row, after, col);
    m->cells[i].state = BL_VALUE;
    m->cells[i].len = (uint32_t)(m->vals.len - start);
    m->cell_off[i] = (uint32_t)start;
}

void mq_val_null(mq_msg *m, uint32_t row, bool after, uint32_t col) {
    size_t i = cell_index(m, row, after, col);
    m->cells[i].state = BL_NULL;
    m->cells[i].len = 0;
}

void mq_val_unsure(mq_msg *m, uint32_t row, bool after, uint32_t col, const char *fmt, ...) {
    size_t i = cell_index(m, row, after, col);
    m->cells[i].state = BL_UNSURE;
    m->cells[i].len = 0;
    if (m->nunsure == m->unsure_cap) {
        m->unsure_cap = m->unsure_cap ? 2 * m->unsure_cap : 4;
        m->unsure = xrealloc(m->unsure, sizeof *m->unsure * m->unsure_cap);
    }
    char why[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    m->unsure[m->nunsure++] = (mq_unsure){row, col, after, mq_strdup(m, why, strlen(why))};
}

int mq_put_value(mq_msg *m, uint32_t row, bool after, uint32_t col, const cJSON *v,
                 mq_enc_fn enc, const void *ud) {
    if (!v || cJSON_IsNull(v)) {
        mq_val_null(m, row, after, col);
        return 0;
    }
    const bl_column *c = &m->table.cols[col];
    char err[400] = "";
    size_t st = mq_val_start(m);
    int r = enc(&m->vals, c, v, ud, err, sizeof err);
    if (r == 0) {
        mq_val_end(m, row, after, col, st);
        return 0;
    }
    m->vals.len = st; /* (whatever the encoder appended before it gave up) */
    if (m->vals.data) m->vals.data[st] = '\0';
    /* a key must decode: the row's documents are found by it */
    if (c->is_pk)
        return mq_fail(m, "column %s of %s.%s, a primary key column: %s", c->name, m->table.db,
                       m->table.name, err);
    mq_val_unsure(m, row, after, col, "column %s of %s.%s: %s", c->name, m->table.db,
                  m->table.name, err);
    return 0;
}

void mq_finish(mq_msg *m) {
    size_t n = (size_t)m->nrows * 2 * m->table.ncols;
    for (size_t i = 0; i < n; i++)
        m->cells[i].p = m->cells[i].state == BL_VALUE ? (const uint8_t *)m->vals.data + m->cell_off[i]
                                                      : NULL;
    for (uint32_t r = 0; r < m->nrows; r++) {
        bl_row *row = &m->rows[r];
        row->table = &m->table;
        row->ts = m->ts;
        row->txn = m->have_pos ? &m->pos : NULL;
        row->before = row->kind == BL_INSERT ? NULL : m->cells + cell_index(m, r, false, 0);
        row->after = row->kind == BL_DELETE ? NULL : m->cells + cell_index(m, r, true, 0);
    }
    if (m->nrows) m->kind = MQ_ROWS;
}

void mq_set_ts(mq_msg *m, uint64_t t) {
    m->ts_ms = t < 100000000000ULL ? t * 1000 : t;
    m->ts = (uint32_t)(m->ts_ms / 1000);
}

void mq_set_pos(mq_msg *m, const char *file, uint64_t pos, const char *gtid) {
    snprintf(m->pos.file, sizeof m->pos.file, "%s", file ? file : "");
    m->pos.pos = pos;
    snprintf(m->pos.gtid, sizeof m->pos.gtid, "%s", gtid ? gtid : "");
    m->have_pos = true;
}

/* ------------------------------------------------------------ dispatch */
int mq_canal(mq_msg *m, const mq_opts *o, const cJSON *root);
int mq_debezium(mq_msg *m, const mq_opts *o, const cJSON *root);
int mq_maxwell(mq_msg *m, const mq_opts *o, const cJSON *root);

int mq_decode(mq_msg *m, const mq_opts *o, const char *data, size_t len) {
    msg_reset(m);
    static const mq_opts dflt = {0};
    if (!o) o = &dflt;
    /* a Kafka tombstone (null value) or an empty message: nothing to apply */
    size_t i = 0;
    while (i < len && (data[i] == ' ' || data[i] == '\n' || data[i] == '\r' || data[i] == '\t')) i++;
    if (i == len) return MQ_OK;
    size_t at = 0;
    cJSON *root = json_exact_parse_nul(data, len, &at);
    if (!root)
        return mq_fail(m, "the message is not JSON (%zu bytes; parsing stopped at byte %zu)", len, at);
    int r;
    if (cJSON_IsNull(root)) {
        cJSON_Delete(root);
        return MQ_OK;
    }
    if (!cJSON_IsObject(root)) {
        cJSON_Delete(root);
        return mq_fail(m, "the message is JSON but not an object; expected a canal-json, Debezium or Maxwell change");
    }
    int f = o->format;
    if (f == MQ_AUTO) {
        f = mq_detect(root, m->err, sizeof m->err);
        if (f == MQ_AUTO) {
            cJSON_Delete(root);
            return MQ_ERR;
        }
    }
    m->format = f;
    switch (f) {
    case MQ_CANAL: r = mq_canal(m, o, root); break;
    case MQ_DEBEZIUM: r = mq_debezium(m, o, root); break;
    case MQ_MAXWELL: r = mq_maxwell(m, o, root); break;
    default: r = mq_fail(m, "unknown message format %d", f); break;
    }
    cJSON_Delete(root);
    if (r != MQ_OK) {
        m->nrows = 0;
        m->kind = MQ_NONE;
        if (!m->err[0]) mq_fail(m, "the %s message could not be decoded", mq_format_name[f]);
        return MQ_ERR;
    }
    mq_finish(m);
    return MQ_OK;
}
