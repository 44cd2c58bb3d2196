/* value: one binlog column value → JSON, exactly as DESIGN.md §4.2 says.
 *
 * Integers exact with the signedness from the metadata, DECIMAL as a string
 * with exactly `scale` decimals, temporal types as ISO-8601 text with exactly
 * fsp fraction digits (TIMESTAMP in UTC with Z, zero dates null), TIME with at
 * least two hour digits, YEAR as an integer, ENUM/SET labels, bytes as base64
 * (BINARY(n) padded back to n), BIT as an integer, JSON as the value itself,
 * GEOMETRY as GeoJSON, text converted from its column charset to UTF-8.
 * Writes straight into the jsonw's buffer; nothing is allocated per value
 * once the scratch buffer has grown. */
#include <arpa/inet.h>
#include <cjson/cJSON.h>
#include <errno.h>
#include <iconv.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "binlog/binlog.h"

/* ------------------------------------------------------------ helpers */

/* the comma / after-key bookkeeping of jsonw, for values we write raw */
static inline void value_start(jsonw *w) {
    if (w->after_key) {
        w->after_key = false;
        return;
    }
    if (w->need_comma[w->depth]) sbuf_addc(w->out, ',');
    w->need_comma[w->depth] = true;
}

static inline char *reserve(sbuf *b, size_t n) {
    if (b->cap - b->len <= n) sbuf_grow(b, n);
    return b->data + b->len;
}
static inline void commit_len(sbuf *b, size_t n) {
    b->len += n;
    b->data[b->len] = '\0';
}

static inline char *put2(char *o, unsigned v) {
    o[0] = (char)('0' + v / 10 % 10);
    o[1] = (char)('0' + v % 10);
    return o + 2;
}
static inline char *put4(char *o, unsigned v) {
    o[0] = (char)('0' + v / 1000 % 10);
    o[1] = (char)('0' + v / 100 % 10);
    o[2] = (char)('0' + v / 10 % 10);
    o[3] = (char)('0' + v % 10);
    return o + 4;
}
/* exactly fsp digits of a microsecond value */
static inline char *put_frac(char *o, uint32_t usec, unsigned fsp) {
    if (fsp == 0) return o;
    if (fsp > 6) fsp = 6;
    *o++ = '.';
    char d[6];
    for (int i = 5; i >= 0; i--) {
        d[i] = (char)('0' + usec % 10);
        usec /= 10;
    }
    memcpy(o, d, fsp);
    return o + fsp;
}

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

/* days since 1970-01-01 → civil date (H. Hinnant's algorithm) */
static void civil_from_days(int64_t z, int *y, unsigned *m, unsigned *d) {
    z += 719468;
    int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    unsigned doe = (unsigned)(z - era * 146097);
    unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t yy = (int64_t)yoe + era * 400;
    unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    unsigned mp = (5 * doy + 2) / 153;
    *d = doy - (153 * mp + 2) / 5 + 1;
    *m = mp < 10 ? mp + 3 : mp - 9;
    *y = (int)(yy + (*m <= 2));
}

static void put_datetime(jsonw *w, unsigned y, unsigned mo, unsigned d, unsigned h, unsigned mi,
                         unsigned s, uint32_t usec, unsigned fsp, bool zulu) {
    value_start(w);
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
    value_start(w);
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
    value_start(w);
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

static const char digits2[201] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

/* decimal digits of v, two at a time; returns the length */
static inline int u64_dec(char *o, uint64_t v) {
    char t[24];
    int i = 24;
    while (v >= 100) {
        unsigned r = (unsigned)(v % 100);
        v /= 100;
        i -= 2;
        memcpy(t + i, digits2 + 2 * r, 2);
    }
    if (v >= 10) {
        i -= 2;
        memcpy(t + i, digits2 + 2 * v, 2);
    } else {
        t[--i] = (char)('0' + v);
    }
    memcpy(o, t + i, (size_t)(24 - i));
    return 24 - i;
}

static inline void put_i64(jsonw *w, int64_t v) {
    value_start(w);
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
    value_start(w);
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
    value_start(w);
    char *o = reserve(w->out, n + 2);
    o[0] = '"';
    memcpy(o + 1, s, n);
    o[n + 1] = '"';
    commit_len(w->out, n + 2);
}

/* ------------------------------------------------------------- decimal */
static const uint8_t dig2bytes[10] = {0, 1, 1, 2, 2, 3, 3, 4, 4, 4};

static uint32_t be_n(const uint8_t *p, int n) {
    uint32_t v = 0;
    for (int i = 0; i < n; i++) v = v << 8 | p[i];
    return v;
}

/* n decimal digits of v, zero padded */
static inline char *put_digits(char *o, uint32_t v, int n) {
    for (int i = n - 1; i >= 0; i--) {
        o[i] = (char)('0' + v % 10);
        v /= 10;
    }
    return o + n;
}

int bl_decimal_text(const uint8_t *src, size_t avail, int precision, int scale, char *out, size_t outsz) {
    if (precision < 1 || precision > 65 || scale < 0 || scale > 30 || scale > precision) return -1;
    int size = bl_decimal_size(precision, scale);
    if (size < 0 || (size_t)size > avail || size > 40 || outsz < 70) return -1;
    uint8_t b[40];
    memcpy(b, src, (size_t)size);
    bool neg = !(b[0] & 0x80);
    b[0] ^= 0x80;
    if (neg)
        for (int i = 0; i < size; i++) b[i] ^= 0xff;
    int intg = precision - scale, intg0 = intg / 9, intg0x = intg % 9;
    int frac0 = scale / 9, frac0x = scale % 9;
    char digits[80], fr[40];
    char *dp = digits, *fp = fr;
    int off = 0;
    if (intg0x) {
        int nb = dig2bytes[intg0x];
        dp = put_digits(dp, be_n(b + off, nb) % 1000000000u, intg0x);
        off += nb;
    }
    for (int i = 0; i < intg0; i++, off += 4) dp = put_digits(dp, be_n(b + off, 4) % 1000000000u, 9);
    for (int i = 0; i < frac0; i++, off += 4) fp = put_digits(fp, be_n(b + off, 4) % 1000000000u, 9);
    if (frac0x) fp = put_digits(fp, be_n(b + off, dig2bytes[frac0x]) % 1000000000u, frac0x);
    const char *ip = digits;
    while (ip < dp && *ip == '0') ip++;
    bool nonzero = ip < dp;
    for (const char *q = fr; q < fp; q++)
        if (*q != '0') nonzero = true;
    char *o = out;
    if (neg && nonzero) *o++ = '-';
    if (ip < dp) {
        memcpy(o, ip, (size_t)(dp - ip));
        o += dp - ip;
    } else {
        *o++ = '0';
    }
    if (scale > 0) {
        *o++ = '.';
        memcpy(o, fr, (size_t)scale);
        o += scale;
    }
    *o = '\0';
    return (int)(o - out);
}

/* ----------------------------------------------------------- charsets */
/* MySQL's latin1 is Windows-1252 (0x81, 0x8D, 0x8F, 0x90, 0x9D map to C1 controls) */
static const uint16_t cp1252_80[32] = {
    0x20AC, 0x0081, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021, 0x02C6, 0x2030, 0x0160,
    0x2039, 0x0152, 0x008D, 0x017D, 0x008F, 0x0090, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022,
    0x2013, 0x2014, 0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0x009D, 0x017E, 0x0178};

static void latin1_to_utf8(sbuf *out, const uint8_t *p, size_t n) {
    char *o = reserve(out, 3 * n), *st = o;
    for (size_t i = 0; i < n; i++) {
        unsigned c = p[i];
        if (c < 0x80) {
            *o++ = (char)c;
            continue;
        }
        if (c < 0xA0) c = cp1252_80[c - 0x80];
        if (c < 0x800) {
            *o++ = (char)(0xC0 | c >> 6);
            *o++ = (char)(0x80 | (c & 63));
        } else {
            *o++ = (char)(0xE0 | c >> 12);
            *o++ = (char)(0x80 | ((c >> 6) & 63));
            *o++ = (char)(0x80 | (c & 63));
        }
    }
    commit_len(out, (size_t)(o - st));
}

struct iconv_entry {
    const char *name;
    iconv_t cd;
};
struct iconv_cache {
    struct iconv_entry e[16];
    int n;
};

static iconv_t get_iconv(bl_valctx *v, const char *name) {
    struct iconv_cache *c = v->iconv_cache;
    if (!c) v->iconv_cache = c = xcalloc(1, sizeof *c);
    for (int i = 0; i < c->n; i++)
        if (c->e[i].name == name || !strcmp(c->e[i].name, name)) return c->e[i].cd;
    iconv_t cd = iconv_open("UTF-8", name);
    if (c->n < 16) {
        c->e[c->n].name = name;
        c->e[c->n].cd = cd;
        c->n++;
    }
    return cd;
}

void bl_valctx_init(bl_valctx *v) {
    sbuf_init(&v->tmp);
    v->iconv_cache = NULL;
}

void bl_valctx_free(bl_valctx *v) {
    if (!v) return;
    sbuf_free(&v->tmp);
    struct iconv_cache *c = v->iconv_cache;
    if (c) {
        for (int i = 0; i < c->n; i++)
            if (c->e[i].cd != (iconv_t)-1) iconv_close(c->e[i].cd);
        free(c);
    }
    v->iconv_cache = NULL;
}

static void put_text(bl_valctx *v, jsonw *w, const bl_column *c, const uint8_t *p, size_t n) {
    switch (c->cs) {
    case CS_LATIN1: {
        size_t i = 0;
        while (i < n && p[i] < 0x80) i++;
        if (i == n) break;
        sbuf_reset(&v->tmp);
        latin1_to_utf8(&v->tmp, p, n);
        jw_strn(w, v->tmp.data, v->tmp.len);
        return;
    }
    case CS_OTHER: {
        iconv_t cd = c->cs_name ? get_iconv(v, c->cs_name) : (iconv_t)-1;
        if (cd == (iconv_t)-1 || n == 0) break;
        sbuf_reset(&v->tmp);
        iconv(cd, NULL, NULL, NULL, NULL);
        char *in = (char *)p;
        size_t inleft = n;
        while (inleft > 0) {
            sbuf_grow(&v->tmp, inleft * 4 + 16);
            char *o = v->tmp.data + v->tmp.len;
            size_t oleft = v->tmp.cap - v->tmp.len - 1;
            size_t r = iconv(cd, &in, &inleft, &o, &oleft);
            v->tmp.len = (size_t)(o - v->tmp.data);
            if (r == (size_t)-1 && errno != E2BIG) {
                /* an invalid byte: U+FFFD and go on */
                sbuf_add(&v->tmp, "\xEF\xBF\xBD", 3);
                in++;
                inleft--;
            }
        }
        v->tmp.data[v->tmp.len] = '\0';
        jw_strn(w, v->tmp.data, v->tmp.len);
        return;
    }
    default: break;
    }
    put_strn(w, p, n);
}

/* ------------------------------------------------------------ geometry */
static int wkb_coords(jsonw *w, const uint8_t *p, size_t n, size_t *off, bool le, uint32_t npts) {
    jw_arr_open(w);
    for (uint32_t i = 0; i < npts; i++) {
        if (*off + 16 > n) return -1;
        double x, y;
        uint8_t b[16];
        memcpy(b, p + *off, 16);
        if (!le)
            for (int k = 0; k < 8; k++) {
                uint8_t t = b[k]; b[k] = b[7 - k]; b[7 - k] = t;
                t = b[8 + k]; b[8 + k] = b[15 - k]; b[15 - k] = t;
            }
        memcpy(&x, b, 8);
        memcpy(&y, b + 8, 8);
        *off += 16;
        jw_arr_open(w);
        jw_double(w, x);
        jw_double(w, y);
        jw_arr_close(w);
    }
    jw_arr_close(w);
    return 0;
}

static inline uint32_t rd32(const uint8_t *p, bool le) {
    return le ? bl_u32(p) : (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static int wkb_geom(jsonw *w, const uint8_t *p, size_t n, size_t *off, int depth);

static int wkb_body(jsonw *w, const uint8_t *p, size_t n, size_t *off, bool le, uint32_t type, int depth) {
    uint32_t cnt, rings;
    switch (type) {
    case 1: { /* point: one pair, not an array of pairs */
        if (*off + 16 > n) return -1;
        size_t o = *off;
        jw_arr_open(w);
        for (int k = 0; k < 2; k++) {
            uint8_t b[8];
            memcpy(b, p + o + 8 * k, 8);
            if (!le)
                for (int j = 0; j < 4; j++) { uint8_t t = b[j]; b[j] = b[7 - j]; b[7 - j] = t; }
            double d;
            memcpy(&d, b, 8);
            jw_double(w, d);
        }
        jw_arr_close(w);
        *off += 16;
        return 0;
    }
    case 2:
        if (*off + 4 > n) return -1;
        cnt = rd32(p + *off, le);
        *off += 4;
        return wkb_coords(w, p, n, off, le, cnt);
    case 3:
        if (*off + 4 > n) return -1;
        rings = rd32(p + *off, le);
        *off += 4;
        jw_arr_open(w);
        for (uint32_t r = 0; r < rings; r++) {
            if (*off + 4 > n) return -1;
            cnt = rd32(p + *off, le);
            *off += 4;
            if (wkb_coords(w, p, n, off, le, cnt)) return -1;
        }
        jw_arr_close(w);
        return 0;
    case 4: case 5: case 6:
        if (*off + 4 > n) return -1;
        cnt = rd32(p + *off, le);
        *off += 4;
        jw_arr_open(w);
        for (uint32_t i = 0; i < cnt; i++) {
            if (*off + 5 > n) return -1;
            bool le2 = p[*off] == 1;
            uint32_t t2 = rd32(p + *off + 1, le2);
            *off += 5;
            if (t2 != type - 3 || wkb_body(w, p, n, off, le2, t2, depth + 1)) return -1;
        }
        jw_arr_close(w);
        return 0;
    default:
        return -1;
    }
}

static const char *const geo_names[] = {"", "Point", "LineString", "Polygon", "MultiPoint",
                                        "MultiLineString", "MultiPolygon", "GeometryCollection"};

static int wkb_geom(jsonw *w, const uint8_t *p, size_t n, size_t *off, int depth) {
    if (depth > 32 || *off + 5 > n) return -1;
    bool le = p[*off] == 1;
    uint32_t type = rd32(p + *off + 1, le);
    *off += 5;
    if (type < 1 || type > 7) return -1;
    jw_obj_open(w);
    jw_key(w, "type");
    jw_str(w, geo_names[type]);
    if (type == 7) {
        if (*off + 4 > n) return -1;
        uint32_t cnt = rd32(p + *off, le);
        *off += 4;
        jw_key(w, "geometries");
        jw_arr_open(w);
        for (uint32_t i = 0; i < cnt; i++)
            if (wkb_geom(w, p, n, off, depth + 1)) return -1;
        jw_arr_close(w);
    } else {
        jw_key(w, "coordinates");
        if (wkb_body(w, p, n, off, le, type, depth)) return -1;
    }
    jw_obj_close(w);
    return 0;
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

void bl_value_json(bl_valctx *v, jsonw *w, const bl_column *c, const bl_cell *cell,
                   const bl_cell *before) {
    if (cell->state == BL_NULL || cell->state == BL_ABSENT) {
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
    case BT_DATE: case BT_NEWDATE: {
        uint32_t x = bl_u24(p);
        unsigned d = x & 31, m = (x >> 5) & 15, y = x >> 9;
        if (!y || !m || !d) jw_null(w); else put_date(w, y, m, d);
        return;
    }
    case BT_TIME: {
        int32_t x = (int32_t)(bl_u24(p) << 8) >> 8;
        bool neg = x < 0;
        uint32_t a = neg ? (uint32_t)-x : (uint32_t)x;
        put_time(w, neg, a / 10000, a / 100 % 100, a % 100, 0, 0);
        return;
    }
    case BT_DATETIME: {
        uint64_t x = bl_u64(p);
        unsigned d = (unsigned)(x / 1000000 % 100), mo = (unsigned)(x / 100000000 % 100);
        unsigned y = (unsigned)(x / 10000000000ULL);
        if (!y || !mo || !d) { jw_null(w); return; }
        put_datetime(w, y, mo, d, (unsigned)(x / 10000 % 100), (unsigned)(x / 100 % 100),
                     (unsigned)(x % 100), 0, 0, false);
        return;
    }
    case BT_TIMESTAMP: case BT_TIMESTAMP2: {
        uint32_t secs, usec = 0;
        unsigned fsp = 0;
        if (c->type == BT_TIMESTAMP) {
            secs = bl_u32(p);
        } else {
            secs = (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
            fsp = c->fsp;
            uint32_t f = be_n(p + 4, (int)(fsp + 1) / 2);
            usec = fsp <= 2 ? f * 10000 : fsp <= 4 ? f * 100 : f;
        }
        if (secs == 0) { jw_null(w); return; }
        int y;
        unsigned mo, d;
        civil_from_days(secs / 86400, &y, &mo, &d);
        uint32_t r = secs % 86400;
        put_datetime(w, (unsigned)y, mo, d, r / 3600, r / 60 % 60, r % 60, usec, fsp, true);
        return;
    }
    case BT_DATETIME2: {
        uint64_t x = (uint64_t)p[0] << 32 | (uint64_t)p[1] << 24 | (uint64_t)p[2] << 16 |
                     (uint64_t)p[3] << 8 | p[4];
        int64_t ip = (int64_t)x - 0x8000000000LL;
        if (ip < 0) ip = -ip;
        uint64_t ymd = (uint64_t)ip >> 17, ym = ymd >> 5, hms = (uint64_t)ip & 0x1ffff;
        unsigned d = (unsigned)(ymd & 31), mo = (unsigned)(ym % 13), y = (unsigned)(ym / 13);
        unsigned fsp = c->fsp;
        uint32_t f = be_n(p + 5, (int)(fsp + 1) / 2);
        uint32_t usec = fsp <= 2 ? f * 10000 : fsp <= 4 ? f * 100 : f;
        if (!y || !mo || !d) { jw_null(w); return; }
        put_datetime(w, y, mo, d, (unsigned)(hms >> 12), (unsigned)((hms >> 6) & 63),
                     (unsigned)(hms & 63), usec, fsp, false);
        return;
    }
    case BT_TIME2: {
        unsigned fsp = c->fsp;
        int64_t packed;
        int64_t ip = (int64_t)((uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2]) - 0x800000;
        if (fsp == 0) {
            packed = ip * (1LL << 24);
        } else if (fsp <= 2) {
            int64_t frac = p[3];
            if (ip < 0 && frac) { ip++; frac -= 0x100; }
            packed = ip * (1LL << 24) + frac * 10000;
        } else if (fsp <= 4) {
            int64_t frac = (int64_t)p[3] << 8 | p[4];
            if (ip < 0 && frac) { ip++; frac -= 0x10000; }
            packed = ip * (1LL << 24) + frac * 100;
        } else {
            uint64_t x = (uint64_t)p[0] << 40 | (uint64_t)p[1] << 32 | (uint64_t)p[2] << 24 |
                         (uint64_t)p[3] << 16 | (uint64_t)p[4] << 8 | p[5];
            packed = (int64_t)x - 0x800000000000LL;
        }
        bool neg = packed < 0;
        uint64_t a = neg ? (uint64_t)-packed : (uint64_t)packed;
        uint64_t hms = a >> 24;
        uint32_t usec = (uint32_t)(a & 0xffffff);
        put_time(w, neg, (unsigned)((hms >> 12) & 0x3ff), (unsigned)((hms >> 6) & 63),
                 (unsigned)(hms & 63), usec, fsp);
        return;
    }
    case BT_BIT: {
        uint64_t x = 0;
        for (size_t i = 0; i < n && i < 8; i++) x = x << 8 | p[i];
        put_u64(w, x);
        return;
    }
    case BT_ENUM: {
        uint32_t idx = n == 1 ? p[0] : bl_u16(p);
        if (!c->labels) put_u64(w, idx);
        else if (idx == 0 || idx > c->n_labels) jw_strn(w, "", 0);
        else put_text(v, w, c, (const uint8_t *)c->labels[idx - 1], c->label_lens[idx - 1]);
        return;
    }
    case BT_SET: {
        uint64_t mask = 0;
        for (size_t i = 0; i < n && i < 8; i++) mask |= (uint64_t)p[i] << (8 * i);
        if (!c->labels) { put_u64(w, mask); return; }
        jw_arr_open(w);
        for (uint32_t i = 0; i < c->n_labels && i < 64; i++)
            if (mask >> i & 1) put_text(v, w, c, (const uint8_t *)c->labels[i], c->label_lens[i]);
        jw_arr_close(w);
        return;
    }
    case BT_VARCHAR: case BT_VAR_STRING: case BT_STRING: {
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
                value_start(w);
                bl_base64(w->out, (const uint8_t *)v->tmp.data, v->tmp.len);
            } else {
                value_start(w);
                bl_base64(w->out, s, l);
            }
            return;
        }
        if (c->type == BT_STRING && c->cs != CS_OTHER)
            while (l > 0 && s[l - 1] == ' ') l--;
        put_text(v, w, c, s, l);
        return;
    }
    case BT_BLOB: case BT_TINY_BLOB: case BT_MEDIUM_BLOB: case BT_LONG_BLOB: {
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
            value_start(w);
            bl_base64(w->out, s, l);
            return;
        }
        put_text(v, w, c, s, l);
        return;
    }
    case BT_JSON: {
        unsigned lb = c->len_bytes;
        put_json_binary(v, w, p + lb, n - lb);
        return;
    }
    case BT_GEOMETRY: {
        unsigned lb = c->len_bytes;
        const uint8_t *s = p + lb;
        size_t l = n - lb;
        if (l < 4) { jw_null(w); return; }
        /* render into tmp first so a malformed WKB leaves no half object */
        sbuf_reset(&v->tmp);
        jsonw g;
        jw_init(&g, &v->tmp);
        size_t off = 4;
        if (wkb_geom(&g, s, l, &off, 0) != 0) { jw_null(w); return; }
        jw_raw(w, v->tmp.data, v->tmp.len);
        return;
    }
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

/* ------------------------------------------------------------- as text */
/* text of column c's character data (converted to UTF-8 as for JSON, but
 * raw bytes kept: no escaping, no U+FFFD for bytes that are not UTF-8 in a
 * UTF-8 column) */
static void text_conv(bl_valctx *v, sbuf *out, const bl_column *c, const uint8_t *p, size_t n) {
    if (c->cs == CS_LATIN1) {
        latin1_to_utf8(out, p, n);
        return;
    }
    if (c->cs == CS_OTHER && n) {
        iconv_t cd = c->cs_name ? get_iconv(v, c->cs_name) : (iconv_t)-1;
        if (cd != (iconv_t)-1) {
            iconv(cd, NULL, NULL, NULL, NULL);
            char *in = (char *)p;
            size_t inleft = n;
            while (inleft > 0) {
                sbuf_grow(out, inleft * 4 + 16);
                char *o = out->data + out->len;
                size_t oleft = out->cap - out->len - 1;
                size_t r = iconv(cd, &in, &inleft, &o, &oleft);
                out->len = (size_t)(o - out->data);
                if (r == (size_t)-1 && errno != E2BIG) {
                    sbuf_add(out, "\xEF\xBF\xBD", 3);
                    in++;
                    inleft--;
                }
            }
            out->data[out->len] = '\0';
            return;
        }
    }
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

static void text_time(sbuf *out, bool neg, unsigned h, unsigned m, unsigned s, uint32_t usec,
                      unsigned fsp) {
    sbuf_printf(out, "%s%02u:%02u:%02u", neg ? "-" : "", h % 1000, m % 100, s % 100);
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
    case BT_DATE: case BT_NEWDATE: {
        uint32_t x = bl_u24(p);
        sbuf_printf(out, "%04u-%02u-%02u", x >> 9, (x >> 5) & 15, x & 31);
        return true;
    }
    case BT_TIME: {
        int32_t x = (int32_t)(bl_u24(p) << 8) >> 8;
        bool neg = x < 0;
        uint32_t a = neg ? (uint32_t)-x : (uint32_t)x;
        text_time(out, neg, a / 10000, a / 100 % 100, a % 100, 0, 0);
        return true;
    }
    case BT_DATETIME: {
        uint64_t x = bl_u64(p);
        text_datetime(out, (unsigned)(x / 10000000000ULL), (unsigned)(x / 100000000 % 100),
                      (unsigned)(x / 1000000 % 100), (unsigned)(x / 10000 % 100),
                      (unsigned)(x / 100 % 100), (unsigned)(x % 100), 0, 0);
        return true;
    }
    case BT_TIMESTAMP: case BT_TIMESTAMP2: {
        uint32_t secs, usec = 0;
        unsigned fsp = 0;
        if (c->type == BT_TIMESTAMP) {
            secs = bl_u32(p);
        } else {
            secs = (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
            fsp = c->fsp;
            uint32_t f = be_n(p + 4, (int)(fsp + 1) / 2);
            usec = fsp <= 2 ? f * 10000 : fsp <= 4 ? f * 100 : f;
        }
        if (secs == 0) { /* the zero timestamp */
            text_datetime(out, 0, 0, 0, 0, 0, 0, 0, fsp);
            return true;
        }
        int y;
        unsigned mo, d;
        civil_from_days(secs / 86400, &y, &mo, &d);
        uint32_t r = secs % 86400; /* UTC: the connections' time_zone is +00:00 (db.c) */
        text_datetime(out, (unsigned)y, mo, d, r / 3600, r / 60 % 60, r % 60, usec, fsp);
        return true;
    }
    case BT_DATETIME2: {
        uint64_t x = (uint64_t)p[0] << 32 | (uint64_t)p[1] << 24 | (uint64_t)p[2] << 16 |
                     (uint64_t)p[3] << 8 | p[4];
        int64_t ip = (int64_t)x - 0x8000000000LL;
        if (ip < 0) ip = -ip;
        uint64_t ymd = (uint64_t)ip >> 17, ym = ymd >> 5, hms = (uint64_t)ip & 0x1ffff;
        unsigned fsp = c->fsp;
        uint32_t f = be_n(p + 5, (int)(fsp + 1) / 2);
        uint32_t usec = fsp <= 2 ? f * 10000 : fsp <= 4 ? f * 100 : f;
        text_datetime(out, (unsigned)(ym / 13), (unsigned)(ym % 13), (unsigned)(ymd & 31),
                      (unsigned)(hms >> 12), (unsigned)((hms >> 6) & 63), (unsigned)(hms & 63),
                      usec, fsp);
        return true;
    }
    case BT_TIME2: {
        /* the JSON form is "[-]HH:MM:SS[.f]" already: its text unquoted */
        sbuf t = SBUF_INIT;
        jsonw w;
        jw_init(&w, &t);
        bl_value_json(v, &w, c, cell, NULL);
        if (t.len >= 2 && t.data[0] == '"') sbuf_add(out, t.data + 1, t.len - 2);
        sbuf_free(&t);
        return true;
    }
    case BT_BIT: /* as MySQL returns it: the bytes */
        sbuf_add(out, p, n);
        return true;
    case BT_ENUM: {
        uint32_t idx = n == 1 ? p[0] : bl_u16(p);
        if (!c->labels) text_u64(out, idx);
        else if (idx > 0 && idx <= c->n_labels)
            text_conv(v, out, c, (const uint8_t *)c->labels[idx - 1], c->label_lens[idx - 1]);
        return true;
    }
    case BT_SET: {
        uint64_t mask = 0;
        for (size_t i = 0; i < n && i < 8; i++) mask |= (uint64_t)p[i] << (8 * i);
        if (!c->labels) {
            text_u64(out, mask);
            return true;
        }
        bool first = true;
        for (uint32_t i = 0; i < c->n_labels && i < 64; i++)
            if (mask >> i & 1) {
                if (!first) sbuf_addc(out, ',');
                first = false;
                text_conv(v, out, c, (const uint8_t *)c->labels[i], c->label_lens[i]);
            }
        return true;
    }
    case BT_VARCHAR: case BT_VAR_STRING: case BT_STRING: {
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
            return true;
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
            return true;
        }
        size_t at = out->len;
        text_conv(v, out, c, s, l);
        if (c->type == BT_STRING) /* CHAR(n): MySQL strips the trailing pad */
            while (out->len > at && out->data[out->len - 1] == ' ') out->data[--out->len] = '\0';
        return true;
    }
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

void bl_image_json(bl_valctx *v, jsonw *w, const bl_table *t, const bl_cell *cells,
                   const bl_cell *before) {
    jw_obj_open(w);
    for (uint32_t i = 0; i < t->ncols; i++) {
        const bl_cell *c = &cells[i];
        if (c->state == BL_ABSENT) continue;
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
