/* rows: WRITE/UPDATE/DELETE rows events, v1 and v2, MySQL and MariaDB
 * numbering, MariaDB compressed rows, MySQL PARTIAL_UPDATE_ROWS.
 *
 * Each row image becomes an array of cells (absent / NULL / value bytes /
 * JSON diff bytes) pointing into the event; the cell array is the decoder's
 * and is reused for every row, so decoding allocates nothing per row. */
#include <stdio.h>
#include <stdlib.h>

#include "binlog/binlog.h"
#include "binlog/internal.h"

static const uint8_t dig2bytes[10] = {0, 1, 1, 2, 2, 3, 3, 4, 4, 4};

int bl_decimal_size(int precision, int scale) {
    int intg = precision - scale;
    if (intg < 0 || scale < 0) return -1;
    return (intg / 9) * 4 + dig2bytes[intg % 9] + (scale / 9) * 4 + dig2bytes[scale % 9];
}

int64_t bl_value_len(const bl_column *c, const uint8_t *p, size_t avail) {
    int64_t n;
    switch (c->type) {
    case BT_TINY: case BT_YEAR: n = 1; break;
    case BT_SHORT: n = 2; break;
    case BT_INT24: case BT_DATE: case BT_NEWDATE: case BT_TIME: n = 3; break;
    case BT_LONG: case BT_FLOAT: case BT_TIMESTAMP: n = 4; break;
    case BT_LONGLONG: case BT_DOUBLE: case BT_DATETIME: n = 8; break;
    case BT_NULL: n = 0; break;
    case BT_TIMESTAMP2: n = 4 + (c->fsp + 1) / 2; break;
    case BT_DATETIME2: n = 5 + (c->fsp + 1) / 2; break;
    case BT_TIME2: n = 3 + (c->fsp + 1) / 2; break;
    case BT_NEWDECIMAL: n = bl_decimal_size(c->precision, c->scale); break;
    case BT_BIT: n = (c->meta >> 8) + ((c->meta & 0xff) ? 1 : 0); break;
    case BT_ENUM: case BT_SET: n = c->max_len; break;
    case BT_VARCHAR: case BT_VAR_STRING: case BT_STRING:
        if (c->max_len < 256) {
            if (avail < 1) return -1;
            n = 1 + (int64_t)p[0];
        } else {
            if (avail < 2) return -1;
            n = 2 + (int64_t)bl_u16(p);
        }
        break;
    case BT_BLOB: case BT_TINY_BLOB: case BT_MEDIUM_BLOB: case BT_LONG_BLOB: case BT_GEOMETRY:
    case BT_JSON: case BT_VECTOR: {
        unsigned lb = c->len_bytes;
        if (lb < 1 || lb > 4 || avail < lb) return -1;
        uint64_t l = 0;
        for (unsigned i = 0; i < lb; i++) l |= (uint64_t)p[i] << (8 * i);
        n = (int64_t)(lb + l);
        break;
    }
    default:
        return -1;
    }
    if (n < 0 || (uint64_t)n > avail) return -1;
    return n;
}

static inline bool bit(const uint8_t *bm, uint32_t i) { return (bm[i >> 3] >> (i & 7)) & 1; }

/* One image: [value options + partial bits (partial after-image)] null bitmap, values.
 * Returns bytes consumed or -1. */
static int64_t read_image(bl_decoder *d, const bl_table *t, uint32_t ncols, const uint8_t *present,
                          uint32_t npresent, const uint8_t *p, size_t n, bl_cell *cells,
                          bool partial_ai) {
    size_t off = 0;
    const uint8_t *pbits = NULL;
    if (partial_ai) {
        uint64_t opts;
        size_t u = bl_lenenc(p, n, &opts);
        if (!u) return -1;
        off += u;
        if (opts & 1) {
            uint32_t njson = 0;
            for (uint32_t i = 0; i < ncols; i++) njson += t->cols[i].type == BT_JSON;
            size_t pb = (njson + 7) / 8;
            if (off + pb > n) return -1;
            pbits = p + off;
            off += pb;
        }
    }
    size_t nb = (npresent + 7) / 8;
    if (off + nb > n) return -1;
    const uint8_t *nulls = p + off;
    off += nb;
    uint32_t k = 0, jk = 0;
    for (uint32_t i = 0; i < ncols; i++) {
        const bl_column *c = &t->cols[i];
        bool is_partial = false;
        if (pbits && c->type == BT_JSON) is_partial = bit(pbits, jk++);
        if (!bit(present, i)) {
            cells[i].state = BL_ABSENT;
            continue;
        }
        if (bit(nulls, k++)) {
            cells[i].state = BL_NULL;
            continue;
        }
        int64_t l = bl_value_len(c, p + off, n - off);
        if (l < 0) {
            bl_error(d, "row of %s.%s: cannot decode column %u (%s, type %u, meta 0x%04x) at offset %zu",
                     t->db, t->name, i + 1, c->name, c->type, c->meta, off);
            return -2;
        }
        cells[i].p = p + off;
        cells[i].len = (uint32_t)l;
        cells[i].state = is_partial ? BL_JSON_DIFF : BL_VALUE;
        off += (size_t)l;
    }
    return (int64_t)off;
}

static uint32_t popcount_bits(const uint8_t *bm, uint32_t n) {
    uint32_t c = 0;
    for (uint32_t i = 0; i < n; i++) c += bit(bm, i);
    return c;
}

/* The change a rows event type carries, and whether it is a version 2
 * event (extra data after the header) and compressed (MariaDB). false when
 * type is no rows event. */
static bool rows_kind(int type, enum bl_change *kind, bool *v2, bool *compressed) {
    switch (type) {
    case BL_WRITE_ROWS_V1: *kind = BL_INSERT; break;
    case BL_UPDATE_ROWS_V1: *kind = BL_UPDATE; break;
    case BL_DELETE_ROWS_V1: *kind = BL_DELETE; break;
    case BL_WRITE_ROWS_V2: *kind = BL_INSERT, *v2 = true; break;
    case BL_UPDATE_ROWS_V2: case BL_PARTIAL_UPDATE_ROWS: *kind = BL_UPDATE, *v2 = true; break;
    case BL_DELETE_ROWS_V2: *kind = BL_DELETE, *v2 = true; break;
    case BL_WRITE_ROWS_COMPRESSED_V1: *kind = BL_INSERT, *compressed = true; break;
    case BL_UPDATE_ROWS_COMPRESSED_V1: *kind = BL_UPDATE, *compressed = true; break;
    case BL_DELETE_ROWS_COMPRESSED_V1: *kind = BL_DELETE, *compressed = true; break;
    case BL_WRITE_ROWS_COMPRESSED: *kind = BL_INSERT, *v2 = *compressed = true; break;
    case BL_UPDATE_ROWS_COMPRESSED: *kind = BL_UPDATE, *v2 = *compressed = true; break;
    case BL_DELETE_ROWS_COMPRESSED: *kind = BL_DELETE, *v2 = *compressed = true; break;
    default: return false;
    }
    return true;
}

/* Room for a row's before and after images of ncols cells each (the
 * decoder's, reused from event to event). */
static bl_cell *cells_for(bl_decoder *d, uint64_t ncols) {
    size_t need = 2 * (size_t)ncols;
    if (d->cells_cap < need || !d->cells) {
        free(d->cells);
        d->cells_cap = need < 64 ? 64 : need;
        d->cells = xmalloc(d->cells_cap * sizeof *d->cells);
    }
    return d->cells;
}

int bl_rows_event(bl_decoder *d, int type, const uint8_t *b, size_t n, uint32_t ts) {
    enum bl_change kind;
    bool v2 = false, compressed = false;
    if (!rows_kind(type, &kind, &v2, &compressed)) return bl_error(d, "not a rows event");
    size_t idlen = d->post_header_len[type - 1] == 6 ? 4 : 6;
    if (n < idlen + 2) return bl_error(d, "too short");
    uint64_t id = idlen == 4 ? bl_u32(b) : bl_u48(b);
    size_t off = idlen + 2;
    if (v2) {
        if (off + 2 > n) return bl_error(d, "too short");
        uint16_t extra = bl_u16(b + off);
        if (extra < 2 || off + extra > n) return bl_error(d, "bad extra data length %u", extra);
        off += extra;
    }
    bl_table *t = bl_table_find(d, id);
    if (!t) {
        if (id == 0xffffff || id == 0xffffffffffffULL) return BL_OK; /* dummy end-of-statement */
        return bl_error(d, "rows for table id %llu without a TABLE_MAP", (unsigned long long)id);
    }
    if (t->skip) return BL_OK;
    uint64_t ncols;
    size_t u = bl_lenenc(b + off, n - off, &ncols);
    if (!u) return bl_error(d, "truncated column count");
    off += u;
    if (ncols != t->ncols)
        return bl_error(d, "%s.%s: rows event has %llu columns, TABLE_MAP %u", t->db, t->name,
                        (unsigned long long)ncols, t->ncols);
    size_t nb = (ncols + 7) / 8;
    bool upd = kind == BL_UPDATE;
    if (off + nb * (upd ? 2 : 1) > n) return bl_error(d, "truncated column bitmaps");
    const uint8_t *present1 = b + off;
    off += nb;
    const uint8_t *present2 = present1;
    if (upd) {
        present2 = b + off;
        off += nb;
    }
    uint32_t np1 = popcount_bits(present1, (uint32_t)ncols);
    uint32_t np2 = upd ? popcount_bits(present2, (uint32_t)ncols) : np1;

    const uint8_t *rows = b + off;
    size_t rlen = n - off;
    if (compressed) {
        size_t used;
        sbuf_reset(&d->scratch);
        if (bl_mariadb_uncompress(&d->scratch, rows, rlen, &used) != BL_OK)
            return bl_error(d, "cannot uncompress the rows");
        rows = (const uint8_t *)d->scratch.data;
        rlen = d->scratch.len;
    }
    bl_cell *c1 = cells_for(d, ncols), *c2 = c1 + ncols;
    bl_row row;
    row.kind = kind;
    row.table = t;
    row.ts = ts;
    row.txn = &d->txn;
    if (d->txn_state == TXN_NONE) {
        /* rows without a visible transaction start (stream began mid-transaction) */
        d->txn.pos = d->ev_start;
        memcpy(d->txn.file, d->cur.file, sizeof d->txn.file);
        d->txn_state = TXN_IN;
    }
    if (!d->quiet) {
        int rc = bl_sink_begin(d);
        if (rc != BL_OK) return rc;
    }
    size_t ro = 0;
    while (ro < rlen) {
        int64_t l = read_image(d, t, (uint32_t)ncols, present1, np1, rows + ro, rlen - ro, c1, false);
        if (l < 0) return l == -1 ? bl_error(d, "%s.%s: truncated row image", t->db, t->name) : BL_ERR;
        if (l == 0) return bl_error(d, "%s.%s: empty row image", t->db, t->name);
        ro += (size_t)l;
        if (upd) {
            l = read_image(d, t, (uint32_t)ncols, present2, np2, rows + ro, rlen - ro, c2,
                           type == BL_PARTIAL_UPDATE_ROWS);
            if (l < 0)
                return l == -1 ? bl_error(d, "%s.%s: truncated after image", t->db, t->name) : BL_ERR;
            ro += (size_t)l;
            row.before = c1;
            row.after = c2;
        } else if (kind == BL_INSERT) {
            row.before = NULL;
            row.after = c1;
        } else {
            row.before = c1;
            row.after = NULL;
        }
        d->n_rows++;
        if (!d->quiet && d->sink && d->sink->row) {
            int rc = d->sink->row(d->sink->ctx, &row);
            if (rc < 0) return bl_error(d, "sink failed on a row of %s.%s", t->db, t->name);
            if (rc > 0) return BL_STOP;
        }
    }
    return BL_OK;
}
