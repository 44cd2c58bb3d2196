/* value_text: one binlog column value → the text MySQL gives for it
 * (bl_value_text, binlog.h says which text each type has): the key and join
 * values the router and the snapshots compare with the document builder's
 * reads of the same columns. JSON, GEOMETRY and VECTOR (and TIME2) are the
 * text of their JSON form (value.c). */
#include <arpa/inet.h>
#include <math.h>
#include <stdio.h>

#include "binlog/value_int.h"

/* text of column c's character data (converted to UTF-8 as for JSON, but
 * raw bytes kept: no escaping, no U+FFFD for bytes that are not UTF-8 in a
 * UTF-8 column) */
static void text_conv(bl_valctx *v, sbuf *out, const bl_column *c, const uint8_t *p, size_t n) {
    if (c->cs == CS_LATIN1) {
        bl_latin1_utf8(out, p, n);
        return;
    }
    if (c->cs == CS_OTHER && bl_iconv_utf8(v, out, c->cs_name, p, n)) return;
    sbuf_add(out, p, n);
}

static void text_frac(sbuf *out, uint32_t usec, unsigned fsp) {
    char b[8];
    char *e = put_frac(b, usec, fsp);
    sbuf_add(out, b, (size_t)(e - b));
}

static void text_datetime(sbuf *out, unsigned y, unsigned mo, unsigned d, unsigned h, unsigned mi,
                          unsigned s, uint32_t usec, unsigned fsp) {
    sbuf_printf(out, "%04u-%02u-%02u %02u:%02u:%02u", y % 10000, mo % 100, d % 100, h % 100,
                mi % 100, s % 100);
    text_frac(out, usec, fsp);
}

/* hours as the JSON form writes them (value.c, put_time): at least two
 * digits, a third below 1000 */
static void text_time(sbuf *out, bool neg, unsigned h, unsigned m, unsigned s, uint32_t usec,
                      unsigned fsp) {
    if (neg) sbuf_addc(out, '-');
    if (h >= 100) {
        sbuf_addc(out, (char)('0' + h / 100 % 10));
        h %= 100;
    }
    sbuf_printf(out, "%02u:%02u:%02u", h, m % 100, s % 100);
    text_frac(out, usec, fsp);
}

static void text_u64(sbuf *out, uint64_t x) {
    char b[24];
    sbuf_add(out, b, (size_t)u64_dec(b, x));
}
static void text_i64(sbuf *out, int64_t x) {
    if (x < 0) {
        sbuf_addc(out, '-');
        text_u64(out, (uint64_t)(-(x + 1)) + 1);
    } else {
        text_u64(out, (uint64_t)x);
    }
}

/* DATE, TIME, DATETIME, TIMESTAMP and their fsp forms (zero dates as
 * zeros) */
static void text_temporal(sbuf *out, const bl_column *c, const uint8_t *p) {
    datetime_parts t;
    bool neg;
    enum temporal_form f = temporal_parts(c, p, &t, &neg);
    if (f == TF_TIME)
        text_time(out, neg, t.h, t.mi, t.s, t.usec, t.fsp);
    else if (f == TF_DATE)
        sbuf_printf(out, "%04u-%02u-%02u", t.y, t.mo, t.d);
    else
        text_datetime(out, t.y, t.mo, t.d, t.h, t.mi, t.s, t.usec, t.fsp);
}

/* ENUM and SET: their labels (SET's comma separated), or the number when the
 * table map gave no labels */
static void text_labels(bl_valctx *v, sbuf *out, const bl_column *c, const uint8_t *p, size_t n) {
    if (c->type == BT_ENUM) {
        uint32_t idx = n == 1 ? p[0] : bl_u16(p);
        if (!c->labels) text_u64(out, idx);
        else if (idx > 0 && idx <= c->n_labels)
            text_conv(v, out, c, (const uint8_t *)c->labels[idx - 1], c->label_lens[idx - 1]);
        return;
    }
    uint64_t mask = 0;
    for (size_t i = 0; i < n && i < 8; i++) mask |= (uint64_t)p[i] << (8 * i);
    if (!c->labels) {
        text_u64(out, mask);
        return;
    }
    bool first = true;
    for (uint32_t i = 0; i < c->n_labels && i < 64; i++)
        if (mask >> i & 1) {
            if (!first) sbuf_addc(out, ',');
            first = false;
            text_conv(v, out, c, (const uint8_t *)c->labels[i], c->label_lens[i]);
        }
}

/* CHAR, VARCHAR, BINARY, VARBINARY (and the UUID / INET types stored in them) */
static void text_string(bl_valctx *v, sbuf *out, const bl_column *c, const uint8_t *p, size_t n) {
    size_t pl = c->max_len < 256 ? 1 : 2;
    const uint8_t *s = p + pl;
    size_t l = n - pl;
    if (c->kind >= BK_UUID && c->type == BT_STRING && l <= c->max_len && c->max_len <= 16) {
        uint8_t raw[16] = {0};
        memcpy(raw, s, l);
        char txt[64];
        if (c->kind == BK_UUID) bl_uuid_format(raw, txt);
        else if (c->kind == BK_INET6) {
            if (!inet_ntop(AF_INET6, raw, txt, sizeof txt)) txt[0] = '\0';
        } else
            snprintf(txt, sizeof txt, "%u.%u.%u.%u", raw[0], raw[1], raw[2], raw[3]);
        sbuf_adds(out, txt);
        return;
    }
    if (c->kind == BK_BINARY || c->kind >= BK_UUID) {
        sbuf_add(out, s, l);
        if (c->type == BT_STRING && l < c->max_len) { /* BINARY(n): zero padded */
            size_t pad = c->max_len - l;
            sbuf_grow(out, pad);
            memset(out->data + out->len, 0, pad);
            out->len += pad;
            out->data[out->len] = '\0';
        }
        return;
    }
    size_t at = out->len;
    text_conv(v, out, c, s, l);
    if (c->type == BT_STRING) /* CHAR(n): MySQL strips the trailing pad */
        while (out->len > at && out->data[out->len - 1] == ' ') out->data[--out->len] = '\0';
}

bool bl_value_text(bl_valctx *v, sbuf *out, const bl_column *c, const bl_cell *cell) {
    if (cell->state != BL_VALUE && cell->state != BL_JSON_DIFF) return false;
    const uint8_t *p = cell->p;
    size_t n = cell->len;
    if (cell->state == BL_JSON_DIFF) goto as_json;
    switch (c->type) {
    case BT_TINY:
        if (c->is_unsigned) text_u64(out, p[0]); else text_i64(out, (int8_t)p[0]);
        return true;
    case BT_SHORT:
        if (c->is_unsigned) text_u64(out, bl_u16(p)); else text_i64(out, (int16_t)bl_u16(p));
        return true;
    case BT_INT24: {
        uint32_t u = bl_u24(p);
        if (c->is_unsigned) text_u64(out, u); else text_i64(out, (int32_t)(u << 8) >> 8);
        return true;
    }
    case BT_LONG:
        if (c->is_unsigned) text_u64(out, bl_u32(p)); else text_i64(out, (int32_t)bl_u32(p));
        return true;
    case BT_LONGLONG:
        if (c->is_unsigned) text_u64(out, bl_u64(p)); else text_i64(out, (int64_t)bl_u64(p));
        return true;
    case BT_FLOAT: case BT_DOUBLE: {
        char b[48];
        int l;
        if (c->type == BT_FLOAT) {
            float f;
            memcpy(&f, p, 4);
            l = isfinite(f) ? fmt_float(b, f) : snprintf(b, sizeof b, "%g", (double)f);
        } else {
            double d;
            memcpy(&d, p, 8);
            l = isfinite(d) ? fmt_double(b, d) : snprintf(b, sizeof b, "%g", d);
        }
        sbuf_add(out, b, (size_t)l);
        return true;
    }
    case BT_YEAR:
        if (p[0]) text_u64(out, 1900u + p[0]); else sbuf_adds(out, "0000");
        return true;
    case BT_NEWDECIMAL: {
        char buf[80];
        int l = bl_decimal_text(p, n, c->precision, c->scale, buf, sizeof buf);
        if (l < 0) return false;
        sbuf_add(out, buf, (size_t)l);
        return true;
    }
    case BT_DATE: case BT_NEWDATE: case BT_TIME: case BT_DATETIME: case BT_TIMESTAMP:
    case BT_TIMESTAMP2: case BT_DATETIME2: case BT_TIME2:
        text_temporal(out, c, p);
        return true;
    case BT_BIT: /* as MySQL returns it: the bytes */
        sbuf_add(out, p, n);
        return true;
    case BT_ENUM: case BT_SET:
        text_labels(v, out, c, p, n);
        return true;
    case BT_VARCHAR: case BT_VAR_STRING: case BT_STRING:
        text_string(v, out, c, p, n);
        return true;
    case BT_BLOB: case BT_TINY_BLOB: case BT_MEDIUM_BLOB: case BT_LONG_BLOB: {
        unsigned lb = c->len_bytes;
        if (c->kind == BK_BINARY || c->kind == BK_JSON_TEXT) sbuf_add(out, p + lb, n - lb);
        else text_conv(v, out, c, p + lb, n - lb);
        return true;
    }
    default:
        break;
    }
as_json: { /* JSON, GEOMETRY, VECTOR: their JSON text */
        jsonw w;
        jw_init(&w, out);
        bl_value_json(v, &w, c, cell, NULL);
        return true;
    }
}
