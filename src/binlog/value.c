/* value: one binlog column value → JSON, exactly as docs/binlog.md "Values" says.
 *
 * Integers exact with the signedness from the metadata, DECIMAL as a string
 * with exactly `scale` decimals, temporal types as ISO-8601 text with exactly
 * fsp fraction digits (TIMESTAMP in UTC with Z, zero dates null), TIME with at
 * least two hour digits, YEAR as an integer, ENUM/SET labels, bytes as base64
 * (BINARY(n) padded back to n), BIT as an integer, JSON as the value itself,
 * GEOMETRY as GeoJSON, text converted from its column charset to UTF-8.
 * Writes straight into the jsonw's buffer; nothing is allocated per value
 * once the scratch buffer has grown. Row images and `tail` lines too.
 *
 * Beside it: value_text.c (the text form of a value), value_charset.c
 * (charsets → UTF-8), value_decimal.c (DECIMAL), value_geometry.c (WKB →
 * GeoJSON); value_int.h what they share. */
#include <arpa/inet.h>
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>

#include "binlog/value_int.h"

/* ------------------------------------------------------------ helpers */

static const char b64tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

void bl_base64(sbuf *out, const uint8_t *p, size_t n) {
    char *o = reserve(out, 4 * ((n + 2) / 3) + 2);
    char *s = o;
    *o++ = '"';
    size_t i = 0;
    for (; i + 3 <= n; i += 3) {
        uint32_t v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8 | p[i + 2];
        o[0] = b64tab[v >> 18];
        o[1] = b64tab[(v >> 12) & 63];
        o[2] = b64tab[(v >> 6) & 63];
        o[3] = b64tab[v & 63];
        o += 4;
    }
    if (n - i == 1) {
        uint32_t v = (uint32_t)p[i] << 16;
        o[0] = b64tab[v >> 18];
        o[1] = b64tab[(v >> 12) & 63];
        o[2] = o[3] = '=';
        o += 4;
    } else if (n - i == 2) {
        uint32_t v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8;
        o[0] = b64tab[v >> 18];
        o[1] = b64tab[(v >> 12) & 63];
        o[2] = b64tab[(v >> 6) & 63];
        o[3] = '=';
        o += 4;
    }
    *o++ = '"';
    commit_len(out, (size_t)(o - s));
}


static void put_datetime(jsonw *w, unsigned y, unsigned mo, unsigned d, unsigned h, unsigned mi,
                         unsigned s, uint32_t usec, unsigned fsp, bool zulu) {
    jw_before_value(w);
    char *o = reserve(w->out, 40), *st = o;
    *o++ = '"';
    o = put4(o, y);
    *o++ = '-';
    o = put2(o, mo);
    *o++ = '-';
    o = put2(o, d);
    *o++ = 'T';
    o = put2(o, h);
    *o++ = ':';
    o = put2(o, mi);
    *o++ = ':';
    o = put2(o, s);
    o = put_frac(o, usec, fsp);
    if (zulu) *o++ = 'Z';
    *o++ = '"';
    commit_len(w->out, (size_t)(o - st));
}

static void put_date(jsonw *w, unsigned y, unsigned mo, unsigned d) {
    jw_before_value(w);
    char *o = reserve(w->out, 16), *st = o;
    *o++ = '"';
    o = put4(o, y);
    *o++ = '-';
    o = put2(o, mo);
    *o++ = '-';
    o = put2(o, d);
    *o++ = '"';
    commit_len(w->out, (size_t)(o - st));
}

static void put_time(jsonw *w, bool neg, unsigned h, unsigned m, unsigned s, uint32_t usec, unsigned fsp) {
    jw_before_value(w);
    char *o = reserve(w->out, 32), *st = o;
    *o++ = '"';
    if (neg) *o++ = '-';
    if (h >= 100) {
        *o++ = (char)('0' + h / 100 % 10);
        h %= 100;
    }
    o = put2(o, h);
    *o++ = ':';
    o = put2(o, m);
    *o++ = ':';
    o = put2(o, s);
    o = put_frac(o, usec, fsp);
    *o++ = '"';
    commit_len(w->out, (size_t)(o - st));
}

static inline void put_i64(jsonw *w, int64_t v) {
    jw_before_value(w);
    char *o = reserve(w->out, 24);
    int n = 0;
    uint64_t u = (uint64_t)v;
    if (v < 0) {
        o[n++] = '-';
        u = (uint64_t)(-(v + 1)) + 1;
    }
    commit_len(w->out, (size_t)(n + u64_dec(o + n, u)));
}
static inline void put_u64(jsonw *w, uint64_t v) {
    jw_before_value(w);
    char *o = reserve(w->out, 24);
    commit_len(w->out, (size_t)u64_dec(o, v));
}


static inline void put_double(jsonw *w, double d) { jw_double(w, d); }
static inline void put_float(jsonw *w, float f) { jw_float(w, f); }

/* a string that needs no escaping goes straight in */
static const uint8_t plain_byte[256] = {
#define P16 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, P16, P16, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    0, 1, 1, 1, P16, P16, /* 96..127; bytes >= 0x80 go through UTF-8 validation */
#undef P16
};

static inline void put_strn(jsonw *w, const uint8_t *s, size_t n) {
    size_t i = 0;
    while (i < n && plain_byte[s[i]]) i++;
    if (i < n) {
        jw_strn(w, (const char *)s, n);
        return;
    }
    jw_before_value(w);
    char *o = reserve(w->out, n + 2);
    o[0] = '"';
    memcpy(o + 1, s, n);
    o[n + 1] = '"';
    commit_len(w->out, n + 2);
}

/* ----------------------------------------------------------- charsets */
static void put_text(bl_valctx *v, jsonw *w, const bl_column *c, const uint8_t *p, size_t n) {
    switch (c->cs) {
    case CS_LATIN1: {
        size_t i = 0;
        while (i < n && p[i] < 0x80) i++;
        if (i == n) break;
        sbuf_reset(&v->tmp);
        bl_latin1_utf8(&v->tmp, p, n);
        jw_strn(w, v->tmp.data, v->tmp.len);
        return;
    }
    case CS_OTHER:
        sbuf_reset(&v->tmp);
        if (!bl_iconv_utf8(v, &v->tmp, c->cs_name, p, n)) break;
        jw_strn(w, v->tmp.data, v->tmp.len);
        return;
    default: break;
    }
    put_strn(w, p, n);
}

/* ------------------------------------------------------------- values */
static void put_null(jsonw *w) { jw_null(w); }

static uint64_t blob_len(const uint8_t *p, unsigned lb) {
    uint64_t l = 0;
    for (unsigned i = 0; i < lb; i++) l |= (uint64_t)p[i] << (8 * i);
    return l;
}

static void put_json_binary(bl_valctx *v, jsonw *w, const uint8_t *p, size_t n) {
    if (n == 0) {
        jw_null(w);
        return;
    }
    sbuf_reset(&v->tmp);
    if (bl_json_binary(&v->tmp, p, n) != BL_OK) {
        jw_null(w);
        return;
    }
    jw_raw(w, v->tmp.data, v->tmp.len);
}

static void put_json_diff(bl_valctx *v, jsonw *w, const bl_column *c, const bl_cell *cell,
                          const bl_cell *before) {
    unsigned lb = c->len_bytes;
    const uint8_t *diffs = cell->p + lb;
    size_t dn = cell->len - lb;
    sbuf doc = SBUF_INIT;
    if (before && before->state == BL_VALUE) {
        uint64_t bl = blob_len(before->p, lb);
        if (bl == 0)
            sbuf_adds(&doc, "null");
        else if (bl_json_binary(&doc, before->p + lb, (size_t)bl) != BL_OK)
            sbuf_reset(&doc);
    }
    sbuf_reset(&v->tmp);
    if (doc.len && bl_json_apply_diffs(&v->tmp, doc.data, doc.len, diffs, dn) == BL_OK)
        jw_raw(w, v->tmp.data, v->tmp.len);
    else
        jw_null(w); /* no full before image to apply the diffs to */
    sbuf_free(&doc);
}

/* integers, FLOAT/DOUBLE, YEAR, DECIMAL, BIT */
static void put_number(jsonw *w, const bl_column *c, const uint8_t *p, size_t n) {
    switch (c->type) {
    case BT_TINY:
        if (c->is_unsigned) put_u64(w, p[0]); else put_i64(w, (int8_t)p[0]);
        return;
    case BT_SHORT:
        if (c->is_unsigned) put_u64(w, bl_u16(p)); else put_i64(w, (int16_t)bl_u16(p));
        return;
    case BT_INT24: {
        uint32_t u = bl_u24(p);
        if (c->is_unsigned) put_u64(w, u);
        else put_i64(w, (int32_t)(u << 8) >> 8);
        return;
    }
    case BT_LONG:
        if (c->is_unsigned) put_u64(w, bl_u32(p)); else put_i64(w, (int32_t)bl_u32(p));
        return;
    case BT_LONGLONG:
        if (c->is_unsigned) put_u64(w, bl_u64(p)); else put_i64(w, (int64_t)bl_u64(p));
        return;
    case BT_FLOAT: {
        float f;
        memcpy(&f, p, 4);
        put_float(w, f);
        return;
    }
    case BT_DOUBLE: {
        double d;
        memcpy(&d, p, 8);
        put_double(w, d);
        return;
    }
    case BT_YEAR:
        put_i64(w, p[0] ? 1900 + p[0] : 0);
        return;
    case BT_NEWDECIMAL: {
        char buf[80];
        int l = bl_decimal_text(p, n, c->precision, c->scale, buf, sizeof buf);
        if (l < 0) jw_null(w); else put_strn(w, (const uint8_t *)buf, (size_t)l);
        return;
    }
    default: { /* BT_BIT */
        uint64_t x = 0;
        for (size_t i = 0; i < n && i < 8; i++) x = x << 8 | p[i];
        put_u64(w, x);
        return;
    }
    }
}

/* DATE, TIME, DATETIME, TIMESTAMP and their fsp forms; zero dates null */
static void put_temporal(jsonw *w, const bl_column *c, const uint8_t *p) {
    datetime_parts t;
    bool neg;
    enum temporal_form f = temporal_parts(c, p, &t, &neg);
    if (f == TF_TIME)
        put_time(w, neg, t.h, t.mi, t.s, t.usec, t.fsp);
    else if (!t.y || !t.mo || !t.d)
        jw_null(w);
    else if (f == TF_DATE)
        put_date(w, t.y, t.mo, t.d);
    else
        put_datetime(w, t.y, t.mo, t.d, t.h, t.mi, t.s, t.usec, t.fsp, f == TF_TIMESTAMP);
}

/* ENUM and SET: their labels (SET an array), or the number when the table
 * map gave no labels */
static void put_labels(bl_valctx *v, jsonw *w, const bl_column *c, const uint8_t *p, size_t n) {
    if (c->type == BT_ENUM) {
        uint32_t idx = n == 1 ? p[0] : bl_u16(p);
        if (!c->labels) put_u64(w, idx);
        else if (idx == 0 || idx > c->n_labels) jw_strn(w, "", 0);
        else put_text(v, w, c, (const uint8_t *)c->labels[idx - 1], c->label_lens[idx - 1]);
        return;
    }
    uint64_t mask = 0;
    for (size_t i = 0; i < n && i < 8; i++) mask |= (uint64_t)p[i] << (8 * i);
    if (!c->labels) { put_u64(w, mask); return; }
    jw_arr_open(w);
    for (uint32_t i = 0; i < c->n_labels && i < 64; i++)
        if (mask >> i & 1) put_text(v, w, c, (const uint8_t *)c->labels[i], c->label_lens[i]);
    jw_arr_close(w);
}

/* CHAR, VARCHAR, BINARY, VARBINARY (and the UUID / INET types stored in them) */
static void put_string(bl_valctx *v, jsonw *w, const bl_column *c, const uint8_t *p, size_t n) {
    size_t pl = c->max_len < 256 ? 1 : 2;
    const uint8_t *s = p + pl;
    size_t l = n - pl;
    if (c->kind >= BK_UUID && c->type == BT_STRING && l <= c->max_len && c->max_len <= 16) {
        uint8_t raw[16] = {0};
        memcpy(raw, s, l); /* trailing zero bytes were stripped */
        char txt[64];
        if (c->kind == BK_UUID) {
            bl_uuid_format(raw, txt);
        } else if (c->kind == BK_INET6) {
            if (!inet_ntop(AF_INET6, raw, txt, sizeof txt)) txt[0] = '\0';
        } else {
            snprintf(txt, sizeof txt, "%u.%u.%u.%u", raw[0], raw[1], raw[2], raw[3]);
        }
        jw_str(w, txt);
        return;
    }
    if (c->kind == BK_BINARY || c->kind >= BK_UUID) {
        if (c->type == BT_STRING && l < c->max_len) {
            /* BINARY(n): the server strips trailing zero bytes; put them back */
            sbuf_reset(&v->tmp);
            sbuf_add(&v->tmp, s, l);
            sbuf_grow(&v->tmp, c->max_len - l);
            memset(v->tmp.data + l, 0, c->max_len - l);
            v->tmp.len = c->max_len;
            jw_before_value(w);
            bl_base64(w->out, (const uint8_t *)v->tmp.data, v->tmp.len);
        } else {
            jw_before_value(w);
            bl_base64(w->out, s, l);
        }
        return;
    }
    if (c->type == BT_STRING && c->cs != CS_OTHER)
        while (l > 0 && s[l - 1] == ' ') l--;
    put_text(v, w, c, s, l);
}

/* the BLOB and TEXT types (JSON kept as text when it parses) */
static void put_blob(bl_valctx *v, jsonw *w, const bl_column *c, const uint8_t *p, size_t n) {
    unsigned lb = c->len_bytes;
    const uint8_t *s = p + lb;
    size_t l = n - lb;
    if (c->kind == BK_JSON_TEXT) {
        cJSON *j = cJSON_ParseWithLength((const char *)s, l);
        if (j) {
            cJSON_Delete(j);
            jw_raw(w, (const char *)s, l);
            return;
        }
    }
    if (c->kind == BK_BINARY) {
        jw_before_value(w);
        bl_base64(w->out, s, l);
        return;
    }
    put_text(v, w, c, s, l);
}

static void put_geometry(bl_valctx *v, jsonw *w, const bl_column *c, const uint8_t *p, size_t n) {
    unsigned lb = c->len_bytes;
    const uint8_t *s = p + lb;
    size_t l = n - lb;
    if (l < 4) { jw_null(w); return; }
    /* render into tmp first so a malformed WKB leaves no half object */
    sbuf_reset(&v->tmp);
    jsonw g;
    jw_init(&g, &v->tmp);
    size_t off = 4;
    if (bl_wkb_geojson(&g, s, l, &off) != 0) { jw_null(w); return; }
    jw_raw(w, v->tmp.data, v->tmp.len);
}

void bl_value_json(bl_valctx *v, jsonw *w, const bl_column *c, const bl_cell *cell,
                   const bl_cell *before) {
    if (cell->state == BL_NULL || cell->state == BL_ABSENT || cell->state == BL_UNSURE) {
        put_null(w);
        return;
    }
    if (cell->state == BL_JSON_DIFF) {
        put_json_diff(v, w, c, cell, before);
        return;
    }
    const uint8_t *p = cell->p;
    size_t n = cell->len;
    switch (c->type) {
    case BT_TINY: case BT_SHORT: case BT_INT24: case BT_LONG: case BT_LONGLONG:
    case BT_FLOAT: case BT_DOUBLE: case BT_YEAR: case BT_NEWDECIMAL: case BT_BIT:
        put_number(w, c, p, n);
        return;
    case BT_DATE: case BT_NEWDATE: case BT_TIME: case BT_DATETIME: case BT_TIMESTAMP:
    case BT_TIMESTAMP2: case BT_DATETIME2: case BT_TIME2:
        put_temporal(w, c, p);
        return;
    case BT_ENUM: case BT_SET:
        put_labels(v, w, c, p, n);
        return;
    case BT_VARCHAR: case BT_VAR_STRING: case BT_STRING:
        put_string(v, w, c, p, n);
        return;
    case BT_BLOB: case BT_TINY_BLOB: case BT_MEDIUM_BLOB: case BT_LONG_BLOB:
        put_blob(v, w, c, p, n);
        return;
    case BT_JSON: {
        unsigned lb = c->len_bytes;
        put_json_binary(v, w, p + lb, n - lb);
        return;
    }
    case BT_GEOMETRY:
        put_geometry(v, w, c, p, n);
        return;
    case BT_VECTOR: { /* MySQL 9: float32 array */
        unsigned lb = c->len_bytes;
        jw_arr_open(w);
        for (size_t i = lb; i + 4 <= n; i += 4) {
            float f;
            memcpy(&f, p + i, 4);
            jw_float(w, f);
        }
        jw_arr_close(w);
        return;
    }
    case BT_NULL:
    default:
        jw_null(w);
        return;
    }
}

void bl_image_json(bl_valctx *v, jsonw *w, const bl_table *t, const bl_cell *cells,
                   const bl_cell *before) {
    jw_obj_open(w);
    for (uint32_t i = 0; i < t->ncols; i++) {
        const bl_cell *c = &cells[i];
        /* an unsure value is left out like an absent one: its decoder says why */
        if (c->state == BL_ABSENT || c->state == BL_UNSURE) continue;
        const bl_column *col = &t->cols[i];
        /* the key, pre-escaped at TABLE_MAP time */
        if (w->need_comma[w->depth]) sbuf_addc(w->out, ',');
        w->need_comma[w->depth] = true;
        sbuf_add(w->out, col->key_json, col->key_json_len);
        w->after_key = true;
        bl_value_json(v, w, col, c, before ? &before[i] : NULL);
    }
    jw_obj_close(w);
}

void bl_row_json(bl_valctx *v, sbuf *out, const bl_row *r, const char *pos_json, size_t pos_len) {
    static const char *const pre[3] = {"{\"type\":\"insert\",", "{\"type\":\"update\",", "{\"type\":\"delete\","};
    static const uint8_t pre_len[3] = {17, 17, 17};
    const bl_table *t = r->table;
    char *o = reserve(out, 64 + t->dbt_json_len + pos_len);
    char *st = o;
    memcpy(o, pre[r->kind], pre_len[r->kind]);
    o += pre_len[r->kind];
    memcpy(o, t->dbt_json, t->dbt_json_len);
    o += t->dbt_json_len;
    memcpy(o, ",\"ts\":", 6);
    o += 6;
    o += u64_dec(o, r->ts);
    memcpy(o, ",\"pos\":", 7);
    o += 7;
    if (pos_json) {
        memcpy(o, pos_json, pos_len);
        o += pos_len;
    } else {
        memcpy(o, "null", 4);
        o += 4;
    }
    memcpy(o, ",\"before\":", 10);
    o += 10;
    commit_len(out, (size_t)(o - st));
    jsonw w;
    jw_init(&w, out);
    if (r->before) bl_image_json(v, &w, t, r->before, NULL);
    else sbuf_add(out, "null", 4);
    sbuf_add(out, ",\"after\":", 9);
    jw_init(&w, out);
    if (r->after) bl_image_json(v, &w, t, r->after, r->before);
    else sbuf_add(out, "null", 4);
    sbuf_add(out, "}\n", 2);
}

void bl_pos_json(sbuf *out, const bl_pos *at) {
    jsonw w;
    jw_init(&w, out);
    jw_obj_open(&w);
    jw_key(&w, "file");
    jw_str(&w, at->file);
    jw_key(&w, "pos");
    jw_uint(&w, at->pos);
    jw_key(&w, "gtid");
    if (at->gtid[0]) jw_str(&w, at->gtid);
    else jw_null(&w);
    jw_obj_close(&w);
}
