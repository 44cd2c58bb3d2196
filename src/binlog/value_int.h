/* value_int: what the value renderers share (value.c the JSON form,
 * value_text.c the text form, value_charset.c, value_decimal.c,
 * value_geometry.c) and nothing else includes: raw writes into an sbuf,
 * fixed-width digits, the packed temporal layouts decoded once. */
#ifndef SS_BINLOG_VALUE_INT_H
#define SS_BINLOG_VALUE_INT_H
#include <string.h>

#include "binlog/binlog.h"

/* room for n more bytes at the end of b; commit_len then takes them */
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

/* decimal digits of v, two at a time; returns the length */
static inline int u64_dec(char *o, uint64_t v) {
    static const char digits2[201] =
        "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
        "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
        "8081828384858687888990919293949596979899";
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

/* an n-byte big-endian unsigned */
static inline uint32_t be_n(const uint8_t *p, int n) {
    uint32_t v = 0;
    for (int i = 0; i < n; i++) v = v << 8 | p[i];
    return v;
}

/* the fraction of a TIMESTAMP2/DATETIME2/TIME2 with fsp digits, stored big
 * endian in (fsp + 1) / 2 bytes at p, as microseconds */
static inline uint32_t frac_usec(const uint8_t *p, unsigned fsp) {
    uint32_t f = be_n(p, (int)(fsp + 1) / 2);
    return fsp <= 2 ? f * 10000 : fsp <= 4 ? f * 100 : f;
}

/* a DATETIME2's fields (a zero date has y, mo or d 0) */
typedef struct {
    unsigned y, mo, d, h, mi, s, fsp;
    uint32_t usec;
} datetime_parts;
static inline void datetime2_parts(const bl_column *c, const uint8_t *p, datetime_parts *t) {
    uint64_t x = (uint64_t)p[0] << 32 | (uint64_t)p[1] << 24 | (uint64_t)p[2] << 16 |
                 (uint64_t)p[3] << 8 | p[4];
    int64_t ip = (int64_t)x - 0x8000000000LL;
    if (ip < 0) ip = -ip;
    uint64_t ymd = (uint64_t)ip >> 17, ym = ymd >> 5, hms = (uint64_t)ip & 0x1ffff;
    t->d = (unsigned)(ymd & 31);
    t->mo = (unsigned)(ym % 13);
    t->y = (unsigned)(ym / 13);
    t->h = (unsigned)(hms >> 12);
    t->mi = (unsigned)((hms >> 6) & 63);
    t->s = (unsigned)(hms & 63);
    t->fsp = c->fsp;
    t->usec = frac_usec(p + 5, c->fsp);
}

/* a TIMESTAMP / TIMESTAMP2 as UTC date and time fields (the connections'
 * time_zone is +00:00, db.c): its seconds since the epoch, 0 for the zero
 * timestamp (then only t->fsp is set) */
static inline uint32_t timestamp_parts(const bl_column *c, const uint8_t *p, datetime_parts *t) {
    uint32_t secs;
    t->usec = 0;
    t->fsp = 0;
    if (c->type == BT_TIMESTAMP) {
        secs = bl_u32(p);
    } else {
        t->fsp = c->fsp;
        t->usec = frac_usec(p + 4, c->fsp);
        secs = (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
    }
    if (secs == 0) return 0;
    int y;
    bl_civil_from_days(secs / 86400, &y, &t->mo, &t->d);
    t->y = (unsigned)y;
    uint32_t r = secs % 86400;
    t->h = r / 3600, t->mi = r / 60 % 60, t->s = r % 60;
    return secs;
}

/* an old TIME (3 bytes, [-]HHMMSS): its sign and fields */
static inline void time_parts(const uint8_t *p, bool *neg, datetime_parts *t) {
    int32_t x = (int32_t)(bl_u24(p) << 8) >> 8;
    *neg = x < 0;
    uint32_t a = *neg ? (uint32_t)-x : (uint32_t)x;
    t->h = a / 10000, t->mi = a / 100 % 100, t->s = a % 100;
}

/* a TIME2 (3 bytes [-]HH:MM:SS, then (fsp + 1) / 2 of fraction, the whole
 * signed): its sign and fields */
static inline void time2_parts(const bl_column *c, const uint8_t *p, bool *neg,
                               datetime_parts *t) {
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
    *neg = packed < 0;
    uint64_t a = *neg ? (uint64_t)-packed : (uint64_t)packed;
    uint64_t hms = a >> 24;
    t->h = (unsigned)((hms >> 12) & 0x3ff);
    t->mi = (unsigned)((hms >> 6) & 63);
    t->s = (unsigned)(hms & 63);
    t->usec = (uint32_t)(a & 0xffffff);
    t->fsp = fsp;
}

/* What a temporal value is written as. */
enum temporal_form { TF_DATE, TF_TIME, TF_DATETIME, TF_TIMESTAMP };

/* Any temporal column's value (DATE, TIME, DATETIME, TIMESTAMP and their
 * fsp forms) decoded into t, whichever form its text or JSON takes: the
 * one place each packed layout is read (value.c writes the JSON of t,
 * value_text.c its text). A zero date has y, mo or d 0 (the zero
 * TIMESTAMP: every field 0 but fsp); *neg is a TIME's sign. */
static inline enum temporal_form temporal_parts(const bl_column *c, const uint8_t *p,
                                                datetime_parts *t, bool *neg) {
    memset(t, 0, sizeof *t);
    *neg = false;
    switch (c->type) {
    case BT_DATE: case BT_NEWDATE: {
        uint32_t x = bl_u24(p);
        t->d = x & 31, t->mo = (x >> 5) & 15, t->y = x >> 9;
        return TF_DATE;
    }
    case BT_TIME:
        time_parts(p, neg, t);
        return TF_TIME;
    case BT_DATETIME: {
        uint64_t x = bl_u64(p);
        t->y = (unsigned)(x / 10000000000ULL);
        t->mo = (unsigned)(x / 100000000 % 100);
        t->d = (unsigned)(x / 1000000 % 100);
        t->h = (unsigned)(x / 10000 % 100);
        t->mi = (unsigned)(x / 100 % 100);
        t->s = (unsigned)(x % 100);
        return TF_DATETIME;
    }
    case BT_TIMESTAMP: case BT_TIMESTAMP2:
        if (!timestamp_parts(c, p, t)) { /* the zero timestamp */
            unsigned fsp = t->fsp;
            memset(t, 0, sizeof *t);
            t->fsp = fsp;
        }
        return TF_TIMESTAMP;
    case BT_DATETIME2:
        datetime2_parts(c, p, t);
        return TF_DATETIME;
    default: /* BT_TIME2 */
        time2_parts(c, p, neg, t);
        return TF_TIME;
    }
}

/* value_charset.c: text of a column's charset → UTF-8, appended to out
 * (latin1: bl_latin1_utf8, binlog.h); through iconv from cs_name (cached in v); false, nothing appended, when
 * there is no converter for it (or no bytes) */
bool bl_iconv_utf8(bl_valctx *v, sbuf *out, const char *cs_name, const uint8_t *p, size_t n);

/* value_geometry.c: the WKB at p[*off..n) as a GeoJSON object; -1 (w holds
 * part of an object) when it is malformed */
int bl_wkb_geojson(jsonw *w, const uint8_t *p, size_t n, size_t *off);

#endif
