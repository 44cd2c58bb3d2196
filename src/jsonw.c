/* jsonw: streaming JSON writer (see jsonw.h for the design). */
#include "jsonw.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

void jw_init(jsonw *w, sbuf *out) {
    w->out = out;
    w->depth = 0;
    w->after_key = false;
    w->need_comma[0] = false;
}

static void open_(jsonw *w, char c) {
    jw_before_value(w);
    sbuf_addc(w->out, c);
    if (w->depth < JSONW_MAX_DEPTH) w->depth++;
    w->need_comma[w->depth] = false;
}

static void close_(jsonw *w, char c) {
    sbuf_addc(w->out, c);
    if (w->depth > 0) w->depth--;
}

void jw_obj_open(jsonw *w) { open_(w, '{'); }
void jw_obj_close(jsonw *w) { close_(w, '}'); }
void jw_arr_open(jsonw *w) { open_(w, '['); }
void jw_arr_close(jsonw *w) { close_(w, ']'); }

void jw_keyn(jsonw *w, const char *k, size_t n) {
    jw_before_value(w);
    json_escape(w->out, k, n);
    sbuf_addc(w->out, ':');
    w->after_key = true;
}
void jw_key(jsonw *w, const char *k) { jw_keyn(w, k, strlen(k)); }
void jw_key_json(jsonw *w, const char *quoted, size_t n) {
    jw_before_value(w);
    sbuf_add(w->out, quoted, n);
    sbuf_addc(w->out, ':');
    w->after_key = true;
}

void jw_strn(jsonw *w, const char *s, size_t n) {
    jw_before_value(w);
    json_escape(w->out, s, n);
}
void jw_str(jsonw *w, const char *s) { jw_strn(w, s, strlen(s)); }

void jw_int(jsonw *w, int64_t v) {
    char buf[24];
    jw_before_value(w);
    sbuf_add(w->out, buf, (size_t)fmt_i64(buf, v));
}

void jw_uint(jsonw *w, uint64_t v) {
    char buf[24];
    jw_before_value(w);
    sbuf_add(w->out, buf, (size_t)fmt_u64(buf, v));
}

void jw_double(jsonw *w, double v) {
    char buf[40];
    jw_before_value(w);
    if (!isfinite(v)) {
        sbuf_add(w->out, "null", 4);
        return;
    }
    sbuf_add(w->out, buf, (size_t)fmt_double(buf, v));
}

void jw_float(jsonw *w, float v) {
    char buf[40];
    jw_before_value(w);
    if (!isfinite(v)) {
        sbuf_add(w->out, "null", 4);
        return;
    }
    sbuf_add(w->out, buf, (size_t)fmt_float(buf, v));
}

void jw_bool(jsonw *w, bool v) {
    jw_before_value(w);
    if (v)
        sbuf_add(w->out, "true", 4);
    else
        sbuf_add(w->out, "false", 5);
}

void jw_null(jsonw *w) {
    jw_before_value(w);
    sbuf_add(w->out, "null", 4);
}

void jw_raw(jsonw *w, const char *json, size_t n) {
    jw_before_value(w);
    sbuf_add(w->out, json, n);
}

void jw_str0(jsonw *w, const char *s) {
    if (s) jw_str(w, s);
    else jw_null(w);
}

/* digits, after a '-' when sign */
static bool is_int_text(const char *s, bool sign) {
    if (!s) return false;
    if (sign && *s == '-') s++;
    if (!*s) return false;
    for (; *s; s++)
        if (*s < '0' || *s > '9') return false;
    return true;
}

void jw_uint_text(jsonw *w, const char *s) {
    if (is_int_text(s, false)) jw_raw(w, s, strlen(s));
    else jw_null(w);
}

void jw_int_text(jsonw *w, const char *s) {
    if (is_int_text(s, true)) jw_raw(w, s, strlen(s));
    else jw_null(w);
}

/* Two digits a division from a 200-byte table, written backwards into place:
 * a version or a hash has 10 to 20 digits, and the digit-a-division loop
 * showed in profiles of bulk building. */
static const char digits2[201] = "0001020304050607080910111213141516171819"
                                 "2021222324252627282930313233343536373839"
                                 "4041424344454647484950515253545556575859"
                                 "6061626364656667686970717273747576777879"
                                 "8081828384858687888990919293949596979899";

int fmt_u64(char *buf, uint64_t v) {
    char tmp[24];
    char *p = tmp + sizeof tmp;
    while (v >= 100) {
        unsigned r = (unsigned)(v % 100);
        v /= 100;
        p -= 2;
        memcpy(p, digits2 + 2 * r, 2);
    }
    if (v >= 10) {
        p -= 2;
        memcpy(p, digits2 + 2 * v, 2);
    } else {
        *--p = (char)('0' + v);
    }
    int n = (int)(tmp + sizeof tmp - p);
    memcpy(buf, p, (size_t)n);
    return n;
}

int fmt_i64(char *buf, int64_t v) {
    if (v < 0) {
        buf[0] = '-';
        /* -(v+1)+1 avoids overflow for INT64_MIN */
        return 1 + fmt_u64(buf + 1, (uint64_t)(-(v + 1)) + 1);
    }
    return fmt_u64(buf, (uint64_t)v);
}

/* ------------------------------------------------- fast shortest numbers */
/* The shortest decimal that reads back to the same double/float, for the
 * common magnitudes, without printf/strtod (which dominate a profile of
 * decode + JSON). Returns 0 when the value is outside the fast path; the
 * caller then uses the printf/strtod loop below. Both checks are exact:
 *  double: m / 10^k is one correctly rounded IEEE division of two exactly
 *          representable numbers, i.e. what strtod returns for "m e-k";
 *  float:  |m - f·10^k| against half an ulp of f scaled by 10^k, all exact
 *          in double because f has 24 significant bits and 10^k (k <= 12)
 *          at most 28. */
static const double pow10tab[23] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
                                    1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

static int put_scaled(char *o, bool neg, uint64_t m, int k) {
    char d[24];
    int n = fmt_u64(d, m);
    char *s = o;
    if (neg) *o++ = '-';
    if (k == 0) {
        memcpy(o, d, (size_t)n);
        return (int)(o - s) + n;
    }
    if (n <= k) {
        *o++ = '0';
        *o++ = '.';
        for (int i = 0; i < k - n; i++) *o++ = '0';
        memcpy(o, d, (size_t)n);
        o += n;
    } else {
        memcpy(o, d, (size_t)(n - k));
        o += n - k;
        *o++ = '.';
        memcpy(o, d + n - k, (size_t)k);
        o += k;
    }
    return (int)(o - s);
}

static int fast_double(char *o, double v) {
    if (v == 0) {
        if (signbit(v)) { memcpy(o, "-0", 2); return 2; }
        *o = '0';
        return 1;
    }
    bool neg = v < 0;
    double a = neg ? -v : v;
    if (!(a >= 1e-5 && a < 1e15)) return 0;
    for (int k = 0; k <= 17; k++) {
        double sc = a * pow10tab[k];
        if (sc >= 9007199254740992.0) return 0;
        double r = nearbyint(sc);
        for (int dlt = -1; dlt <= 1; dlt++) {
            double m = r + dlt;
            if (m <= 0) continue;
            if (m / pow10tab[k] == a) return put_scaled(o, neg, (uint64_t)m, k);
        }
    }
    return 0;
}

static int fast_float(char *o, float f) {
    if (f == 0) {
        if (signbit(f)) { memcpy(o, "-0", 2); return 2; }
        *o = '0';
        return 1;
    }
    bool neg = f < 0;
    double a = neg ? -(double)f : (double)f;
    if (!(a >= 1e-3 && a < 1e7)) return 0;
    int e;
    frexp(a, &e);                        /* a = x · 2^e, x in [0.5, 1) */
    double half_ulp = ldexp(1.0, e - 25); /* ulp = 2^(e-24) for a normal float */
    uint32_t bits;
    memcpy(&bits, &f, 4);
    bool even = (bits & 1) == 0;
    for (int k = 0; k <= 12; k++) {
        double p = a * pow10tab[k];      /* exact */
        double h = half_ulp * pow10tab[k]; /* exact */
        if (p >= 4503599627370496.0) return 0;
        double r = nearbyint(p);
        for (int dlt = -1; dlt <= 1; dlt++) {
            double m = r + dlt;
            if (m <= 0) continue;
            double diff = fabs(m - p);    /* exact: nearby doubles */
            if (diff < h || (diff == h && even)) return put_scaled(o, neg, (uint64_t)m, k);
        }
    }
    return 0;
}

/* General path: the shortest %.Ng that reads back to the same value. JSON
 * wants a leading digit; %g never writes a leading '.', and "inf"/"nan" are
 * excluded by the callers. */
int fmt_double(char *buf, double v) {
    int n = fast_double(buf, v);
    if (n) return n;
    for (int prec = 15; prec <= 17; prec++) {
        n = snprintf(buf, 40, "%.*g", prec, v);
        if (prec == 17 || strtod(buf, NULL) == v) return n;
    }
    return 0; /* not reached */
}

int fmt_float(char *buf, float v) {
    int n = fast_float(buf, v);
    if (n) return n;
    for (int prec = 6; prec <= 9; prec++) {
        n = snprintf(buf, 40, "%.*g", prec, (double)v);
        if (prec == 9 || strtof(buf, NULL) == v) return n;
    }
    return 0;
}

/* Length of a valid UTF-8 sequence starting at s (n bytes available), or 0. */
static size_t utf8_seq(const unsigned char *s, size_t n) {
    unsigned char c = s[0];
    if (c < 0xC2) return 0;
    if (c < 0xE0) return (n >= 2 && (s[1] & 0xC0) == 0x80) ? 2 : 0;
    if (c < 0xF0) {
        if (n < 3 || (s[1] & 0xC0) != 0x80 || (s[2] & 0xC0) != 0x80) return 0;
        if (c == 0xE0 && s[1] < 0xA0) return 0;  /* overlong */
        if (c == 0xED && s[1] >= 0xA0) return 0; /* surrogates */
        return 3;
    }
    if (c < 0xF5) {
        if (n < 4 || (s[1] & 0xC0) != 0x80 || (s[2] & 0xC0) != 0x80 || (s[3] & 0xC0) != 0x80)
            return 0;
        if (c == 0xF0 && s[1] < 0x90) return 0;
        if (c == 0xF4 && s[1] >= 0x90) return 0;
        return 4;
    }
    return 0;
}

/* Whether any of the 8 bytes is below 0x20, at or above 0x80, '"' or '\\':
 * the bytes json_escape cannot copy as they are. Each test is the exact
 * "some byte is below k" form (no false negatives, and an all-plain word
 * never tests true), so a plain word is skipped whole; the common value is
 * short ASCII text, and the byte loop showed in profiles of a load. */
static inline bool word_needs_care(uint64_t w) {
    const uint64_t ones = 0x0101010101010101ULL, high = 0x8080808080808080ULL;
    uint64_t ctl = (w - ones * 0x20) & ~w;     /* a byte below 0x20 */
    uint64_t quo = w ^ (ones * '"'), bsl = w ^ (ones * '\\');
    quo = (quo - ones) & ~quo;                 /* a byte equal to '"' */
    bsl = (bsl - ones) & ~bsl;                 /* a byte equal to '\\' */
    return ((ctl | quo | bsl | w) & high) != 0; /* w & high: a byte >= 0x80 */
}

void json_escape(sbuf *out, const char *str, size_t n) {
    static const char hex[] = "0123456789abcdef";
    const unsigned char *s = (const unsigned char *)str;
    sbuf_grow(out, n + 2);
    sbuf_addc(out, '"');
    size_t run = 0; /* start of the pending run of bytes copied verbatim */
    size_t i = 0;
    while (i < n) {
        while (n - i >= 8) { /* eight plain ASCII bytes at a time */
            uint64_t w;
            memcpy(&w, s + i, 8);
            if (word_needs_care(w)) break;
            i += 8;
        }
        if (i == n) break;
        unsigned char c = s[i];
        if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') {
            i++;
            continue;
        }
        if (c >= 0x80) {
            size_t len = utf8_seq(s + i, n - i);
            if (len) {
                i += len;
                continue;
            }
        }
        sbuf_add(out, s + run, i - run);
        switch (c) {
        case '"': sbuf_add(out, "\\\"", 2); break;
        case '\\': sbuf_add(out, "\\\\", 2); break;
        case '\n': sbuf_add(out, "\\n", 2); break;
        case '\r': sbuf_add(out, "\\r", 2); break;
        case '\t': sbuf_add(out, "\\t", 2); break;
        case '\b': sbuf_add(out, "\\b", 2); break;
        case '\f': sbuf_add(out, "\\f", 2); break;
        default:
            if (c < 0x20) {
                char e[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
                sbuf_add(out, e, 6);
            } else {
                sbuf_add(out, "\xEF\xBF\xBD", 3); /* invalid UTF-8 byte */
            }
        }
        i++;
        run = i;
    }
    sbuf_add(out, s + run, n - run);
    sbuf_addc(out, '"');
}
