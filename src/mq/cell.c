/* cell: values → the bytes a binlog row image holds for them, per column
 * type, so that value.c renders a decoded message's cells exactly as it
 * renders the binlog's: integers little endian in the column's width,
 * DECIMAL in MySQL's packed form, DATE in 3 bytes, DATETIME2 / TIMESTAMP2 /
 * TIME2 packed big endian with the column's fsp, YEAR as year-1900, BIT big
 * endian, ENUM index and SET mask little endian, strings and blobs behind
 * the length prefix the row decoder expects, JSON as text (BK_JSON_TEXT).
 *
 * mq_enc_text reads MySQL's own text form of a value (canal and Maxwell
 * write values that way); the other encoders take numbers the formats
 * carry (epoch days, micros, bytes). Every encoder checks the value fits
 * the column and says so when it does not: it never stores a rounded or
 * truncated value. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mq/mq.h"

static void put_le(sbuf *out, uint64_t v, int n) {
    uint8_t b[8];
    for (int i = 0; i < n; i++) b[i] = (uint8_t)(v >> (8 * i));
    sbuf_add(out, b, (size_t)n);
}
static void put_be(sbuf *out, uint64_t v, int n) {
    uint8_t b[8];
    for (int i = 0; i < n; i++) b[i] = (uint8_t)(v >> (8 * (n - 1 - i)));
    sbuf_add(out, b, (size_t)n);
}

int mq_parse_int(const char *s, size_t n, bool *neg, uint64_t *mag) {
    size_t i = 0;
    *neg = false;
    if (i < n && (s[i] == '-' || s[i] == '+')) *neg = s[i++] == '-';
    if (i == n) return -1;
    uint64_t v = 0;
    for (; i < n; i++) {
        if (s[i] < '0' || s[i] > '9') return -1;
        unsigned d = (unsigned)(s[i] - '0');
        if (v > (UINT64_MAX - d) / 10) return -1;
        v = v * 10 + d;
    }
    *mag = v;
    if (v == 0) *neg = false;
    return 0;
}

int mq_enc_int(sbuf *out, const bl_column *c, bool neg, uint64_t mag, char *err, size_t errlen) {
    int width;
    switch (c->type) {
    case BT_TINY: width = 1; break;
    case BT_SHORT: width = 2; break;
    case BT_INT24: width = 3; break;
    case BT_LONG: width = 4; break;
    case BT_LONGLONG: width = 8; break;
    default: return errf(err, errlen, "not an integer column");
    }
    int bits = 8 * width;
    uint64_t umax = bits == 64 ? UINT64_MAX : (1ULL << bits) - 1;
    uint64_t smax = umax >> 1;
    if (c->is_unsigned) {
        if (neg || mag > umax) goto range;
        put_le(out, mag, width);
    } else {
        if ((!neg && mag > smax) || (neg && mag > smax + 1)) goto range;
        uint64_t v = neg ? (uint64_t)0 - mag : mag;
        put_le(out, v, width);
    }
    return 0;
range:
    return errf(err, errlen, "%s%llu is out of the range of a %d-bit %s integer", neg ? "-" : "",
                (unsigned long long)mag, bits, c->is_unsigned ? "unsigned" : "signed");
}

/* ------------------------------------------------------------- decimal */
static const uint8_t dig2bytes[10] = {0, 1, 1, 2, 2, 3, 3, 4, 4, 4};

/* The digits as MySQL's binary DECIMAL(prec,scale): groups of nine digits
 * in four big-endian bytes (a shorter leading or trailing group in fewer),
 * every byte inverted for a negative number, the sign bit flipped. ip holds
 * the integer part without leading zeros (ni digits), fp exactly scale
 * fraction digits. */
static void pack_decimal(sbuf *out, const char *ip, int ni, const char *fp, int prec, int scale,
                         bool neg) {
    /* the integer digits right-aligned to intg */
    int intg = prec - scale;
    char id[80];
    memset(id, '0', (size_t)intg);
    memcpy(id + intg - ni, ip, (size_t)ni);
    uint8_t b[40];
    int off = 0;
    int intg0 = intg / 9, intg0x = intg % 9, frac0 = scale / 9, frac0x = scale % 9;
    const char *d = id;
    uint32_t v;
    if (intg0x) {
        v = 0;
        for (int k = 0; k < intg0x; k++) v = v * 10 + (uint32_t)(*d++ - '0');
        for (int k = dig2bytes[intg0x] - 1; k >= 0; k--) b[off + k] = (uint8_t)v, v >>= 8;
        off += dig2bytes[intg0x];
    }
    for (int g = 0; g < intg0; g++) {
        v = 0;
        for (int k = 0; k < 9; k++) v = v * 10 + (uint32_t)(*d++ - '0');
        for (int k = 3; k >= 0; k--) b[off + k] = (uint8_t)v, v >>= 8;
        off += 4;
    }
    d = fp;
    for (int g = 0; g < frac0; g++) {
        v = 0;
        for (int k = 0; k < 9; k++) v = v * 10 + (uint32_t)(*d++ - '0');
        for (int k = 3; k >= 0; k--) b[off + k] = (uint8_t)v, v >>= 8;
        off += 4;
    }
    if (frac0x) {
        v = 0;
        for (int k = 0; k < frac0x; k++) v = v * 10 + (uint32_t)(*d++ - '0');
        for (int k = dig2bytes[frac0x] - 1; k >= 0; k--) b[off + k] = (uint8_t)v, v >>= 8;
        off += dig2bytes[frac0x];
    }
    if (neg)
        for (int k = 0; k < off; k++) b[k] = (uint8_t)~b[k];
    b[0] ^= 0x80;
    sbuf_add(out, b, (size_t)off);
}

int mq_enc_decimal(sbuf *out, const bl_column *c, const char *s, size_t n, char *err, size_t errlen) {
    int prec = c->precision, scale = c->scale;
    if (c->type != BT_NEWDECIMAL || prec < 1 || prec > 65 || scale > 30 || scale > prec)
        return errf(err, errlen, "not a DECIMAL column");
    /* digits before / after the point, with an optional exponent */
    size_t i = 0;
    bool neg = false;
    if (i < n && (s[i] == '-' || s[i] == '+')) neg = s[i++] == '-';
    char ip[160], fp[160];
    int ni = 0, nf = 0;
    bool any = false;
    while (i < n && isdigit((unsigned char)s[i])) {
        if (ni == 100) goto bad;
        ip[ni++] = s[i++];
        any = true;
    }
    if (i < n && s[i] == '.') {
        i++;
        while (i < n && isdigit((unsigned char)s[i])) {
            if (nf == 100) goto bad;
            fp[nf++] = s[i++];
            any = true;
        }
    }
    if (!any) goto bad;
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        bool eneg = false;
        uint64_t e;
        size_t st = ++i;
        if (i < n && (s[i] == '-' || s[i] == '+')) eneg = s[i++] == '-';
        (void)st;
        if (mq_parse_int(s + i, n - i, &(bool){false}, &e) < 0 || e > 100) goto bad;
        i = n;
        /* move the point e places */
        char all[320];
        int na = 0, point = ni;
        memcpy(all, ip, (size_t)ni);
        memcpy(all + ni, fp, (size_t)nf);
        na = ni + nf;
        point += eneg ? -(int)e : (int)e;
        ni = nf = 0;
        for (int k = point; k < 0; k++) fp[nf++] = '0';
        for (int k = 0; k < na; k++) {
            if (k < point) {
                if (ni == 150) goto bad;
                ip[ni++] = all[k];
            } else {
                if (nf == 150) goto bad;
                fp[nf++] = all[k];
            }
        }
        for (int k = na; k < point; k++) {
            if (ni == 150) goto bad;
            ip[ni++] = '0';
        }
    }
    if (i != n) goto bad;
    /* strip leading zeros of the integer part, trailing zeros beyond scale */
    int lead = 0;
    while (lead < ni && ip[lead] == '0') lead++;
    while (nf > scale && fp[nf - 1] == '0') nf--;
    if (nf > scale)
        return errf(err, errlen, "%.*s has more than the column's %d decimals", (int)n, s, scale);
    if (ni - lead > prec - scale)
        return errf(err, errlen, "%.*s does not fit DECIMAL(%d,%d)", (int)n, s, prec, scale);
    while (nf < scale) fp[nf++] = '0';
    pack_decimal(out, ip + lead, ni - lead, fp, prec, scale, neg);
    return 0;
bad:
    return errf(err, errlen, "\"%.*s\" is not a decimal number", (int)(n > 80 ? 80 : n), s);
}

/* ------------------------------------------------------------- strings */
int mq_enc_bytes(sbuf *out, const bl_column *c, const uint8_t *p, size_t n, char *err, size_t errlen) {
    switch (c->type) {
    case BT_VARCHAR: case BT_VAR_STRING: case BT_STRING:
        if (c->max_len < 256) {
            if (n > 255) goto toolong;
            put_le(out, n, 1);
        } else {
            if (n > 65535) goto toolong;
            put_le(out, n, 2);
        }
        break;
    case BT_BLOB: case BT_TINY_BLOB: case BT_MEDIUM_BLOB: case BT_LONG_BLOB: case BT_GEOMETRY:
    case BT_JSON: {
        unsigned lb = c->len_bytes;
        if (lb < 1 || lb > 4) return errf(err, errlen, "bad length size");
        if (lb < 4 && n >= (1ULL << (8 * lb))) goto toolong;
        if ((uint64_t)n > UINT32_MAX) goto toolong;
        put_le(out, n, (int)lb);
        break;
    }
    default:
        return errf(err, errlen, "not a string column");
    }
    sbuf_add(out, p, n);
    return 0;
toolong:
    return errf(err, errlen, "a value of %zu bytes is longer than the column holds", n);
}

/* ---------------------------------------------------------- temporals */
int64_t mq_days_from_civil(int64_t y, unsigned m, unsigned d) {
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    unsigned yoe = (unsigned)(y - era * 400);
    unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
    unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + (int64_t)doe - 719468;
}

int mq_enc_date(sbuf *out, int y, unsigned mo, unsigned d) {
    put_le(out, (uint32_t)y << 9 | mo << 5 | d, 3);
    return 0;
}

int mq_enc_days(sbuf *out, int64_t days, char *err, size_t errlen) {
    int y;
    unsigned m, d;
    if (days < -719528 || days > 2932896) return errf(err, errlen, "day %lld is out of DATE's range", (long long)days);
    bl_civil_from_days(days, &y, &m, &d);
    return mq_enc_date(out, y, m, d);
}

/* the fraction stored for fsp digits: (usec truncated to fsp digits) in the
 * unit the bytes use */
static void put_frac(sbuf *out, uint32_t usec, unsigned fsp) {
    if (fsp == 0) return;
    static const uint32_t cut[7] = {1000000, 100000, 10000, 1000, 100, 10, 1};
    usec -= usec % cut[fsp];
    if (fsp <= 2) put_be(out, usec / 10000, 1);
    else if (fsp <= 4) put_be(out, usec / 100, 2);
    else put_be(out, usec, 3);
}

static int datetime2(sbuf *out, const bl_column *c, unsigned y, unsigned mo, unsigned d, unsigned h,
                     unsigned mi, unsigned s, uint32_t usec) {
    uint64_t ym = (uint64_t)y * 13 + mo;
    uint64_t ymd = ym << 5 | d, hms = (uint64_t)h << 12 | mi << 6 | s;
    put_be(out, (ymd << 17 | hms) + 0x8000000000ULL, 5);
    put_frac(out, usec, c->fsp);
    return 0;
}

static int timestamp2(sbuf *out, const bl_column *c, uint32_t secs, uint32_t usec) {
    put_be(out, secs, 4);
    put_frac(out, usec, c->fsp);
    return 0;
}

int mq_enc_datetime_us(sbuf *out, const bl_column *c, int64_t us, char *err, size_t errlen) {
    int64_t days = us >= 0 ? us / 86400000000LL : -((-us + 86400000000LL - 1) / 86400000000LL);
    int64_t rest = us - days * 86400000000LL;
    int y;
    unsigned m, d;
    if (days < -719528 || days > 2932896) return errf(err, errlen, "%lld µs is out of DATETIME's range", (long long)us);
    bl_civil_from_days(days, &y, &m, &d);
    uint32_t secs = (uint32_t)(rest / 1000000);
    return datetime2(out, c, (unsigned)y, m, d, secs / 3600, secs / 60 % 60, secs % 60,
                     (uint32_t)(rest % 1000000));
}

int mq_enc_timestamp(sbuf *out, const bl_column *c, int64_t secs, uint32_t usec, char *err, size_t errlen) {
    if (secs < 0 || secs > UINT32_MAX || usec > 999999)
        return errf(err, errlen, "%lld s is out of TIMESTAMP's range", (long long)secs);
    return timestamp2(out, c, (uint32_t)secs, usec);
}

int mq_enc_time_us(sbuf *out, const bl_column *c, int64_t us, char *err, size_t errlen) {
    bool neg = us < 0;
    uint64_t a = neg ? (uint64_t)0 - (uint64_t)us : (uint64_t)us;
    static const uint32_t cut[7] = {1000000, 100000, 10000, 1000, 100, 10, 1};
    uint32_t usec = (uint32_t)(a % 1000000);
    usec -= usec % cut[c->fsp > 6 ? 6 : c->fsp];
    uint64_t secs = a / 1000000;
    if (secs > 838 * 3600 + 59 * 60 + 59) return errf(err, errlen, "%lld µs is out of TIME's range", (long long)us);
    uint64_t hms = (secs / 3600) << 12 | (secs / 60 % 60) << 6 | secs % 60;
    int64_t packed = (int64_t)((hms << 24) + usec);
    if (neg) packed = -packed;
    unsigned fsp = c->fsp;
    /* MySQL's my_time_packed_to_binary: the int part floored (an arithmetic
     * shift), the fraction the remainder of a truncating division */
    int64_t ipart = packed / (1LL << 24), frac = packed % (1LL << 24);
    if (frac < 0) ipart--;
    if (fsp == 0) {
        put_be(out, (uint64_t)(ipart + 0x800000), 3);
    } else if (fsp <= 2) {
        put_be(out, (uint64_t)(ipart + 0x800000), 3);
        put_be(out, (uint8_t)(int8_t)(frac / 10000), 1);
    } else if (fsp <= 4) {
        put_be(out, (uint64_t)(ipart + 0x800000), 3);
        put_be(out, (uint16_t)(int16_t)(frac / 100), 2);
    } else {
        put_be(out, (uint64_t)(packed + 0x800000000000LL), 6);
    }
    return 0;
}

int mq_enc_year(sbuf *out, int64_t y, char *err, size_t errlen) {
    if (y == 0) {
        put_le(out, 0, 1);
        return 0;
    }
    if (y < 1901 || y > 2155) return errf(err, errlen, "%lld is out of YEAR's range", (long long)y);
    put_le(out, (uint64_t)(y - 1900), 1);
    return 0;
}

int mq_enc_double(sbuf *out, const bl_column *c, double d) {
    if (c->type == BT_FLOAT) {
        float f = (float)d;
        sbuf_add(out, &f, 4);
    } else {
        sbuf_add(out, &d, 8);
    }
    return 0;
}

int mq_enc_bit(sbuf *out, const bl_column *c, uint64_t v, char *err, size_t errlen) {
    int nbytes = (c->meta >> 8) + ((c->meta & 0xff) ? 1 : 0);
    int bits = (c->meta >> 8) * 8 + (c->meta & 0xff);
    if (nbytes < 1 || nbytes > 8) return errf(err, errlen, "bad BIT length");
    if (bits < 64 && v >> bits) return errf(err, errlen, "%llu does not fit BIT(%d)", (unsigned long long)v, bits);
    put_be(out, v, nbytes);
    return 0;
}

/* -------------------------------------------------------------- base64 */
int mq_base64_decode(sbuf *out, const char *s, size_t n) {
    uint32_t acc = 0;
    int bits = 0;
    size_t pad = 0;
    for (size_t i = 0; i < n; i++) {
        char ch = s[i];
        int v;
        if (ch >= 'A' && ch <= 'Z') v = ch - 'A';
        else if (ch >= 'a' && ch <= 'z') v = ch - 'a' + 26;
        else if (ch >= '0' && ch <= '9') v = ch - '0' + 52;
        else if (ch == '+' || ch == '-') v = 62;
        else if (ch == '/' || ch == '_') v = 63;
        else if (ch == '=') { pad++; continue; }
        else if (ch == '\n' || ch == '\r') continue;
        else return -1;
        if (pad) return -1;
        acc = acc << 6 | (uint32_t)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            sbuf_addc(out, (char)(acc >> bits & 0xff));
        }
    }
    if (bits >= 6 || pad > 2) return -1;
    return 0;
}

/* --------------------------------------------------------- text forms */
/* up to max digits as a number; *i advanced */
static int digits(const char *s, size_t n, size_t *i, int max, unsigned *v) {
    size_t st = *i;
    *v = 0;
    while (*i < n && isdigit((unsigned char)s[*i]) && (int)(*i - st) < max) *v = *v * 10 + (unsigned)(s[(*i)++] - '0');
    return *i > st ? 0 : -1;
}

/* ".ffffff": microseconds (more than 6 digits must be zeros) */
static int fraction(const char *s, size_t n, size_t *i, uint32_t *usec) {
    *usec = 0;
    if (*i >= n || s[*i] != '.') return 0;
    (*i)++;
    int k = 0;
    while (*i < n && isdigit((unsigned char)s[*i])) {
        if (k < 6) *usec = *usec * 10 + (uint32_t)(s[*i] - '0');
        else if (s[*i] != '0') return -1;
        k++;
        (*i)++;
    }
    if (k == 0) return -1;
    for (; k < 6; k++) *usec *= 10;
    return 0;
}

static int datetime_text(const char *s, size_t n, unsigned v[6], uint32_t *usec, bool *have_time) {
    size_t i = 0;
    if (digits(s, n, &i, 4, &v[0]) || i >= n || s[i++] != '-' || digits(s, n, &i, 2, &v[1]) ||
        i >= n || s[i++] != '-' || digits(s, n, &i, 2, &v[2]))
        return -1;
    v[3] = v[4] = v[5] = 0;
    *usec = 0;
    *have_time = false;
    if (i < n && (s[i] == ' ' || s[i] == 'T')) {
        i++;
        if (digits(s, n, &i, 2, &v[3]) || i >= n || s[i++] != ':' || digits(s, n, &i, 2, &v[4]) ||
            i >= n || s[i++] != ':' || digits(s, n, &i, 2, &v[5]) || fraction(s, n, &i, usec))
            return -1;
        *have_time = true;
    }
    if (i < n && s[i] == 'Z') i++;
    if (i != n || v[1] > 12 || v[2] > 31 || v[3] > 23 || v[4] > 59 || v[5] > 59) return -1;
    return 0;
}

/* "[-]HHH:MM:SS[.f]" → signed microseconds */
static int time_text(const char *s, size_t n, int64_t *us) {
    size_t i = 0;
    bool neg = false;
    if (i < n && s[i] == '-') neg = true, i++;
    unsigned h, m, sec;
    uint32_t usec;
    if (digits(s, n, &i, 3, &h) || i >= n || s[i++] != ':' || digits(s, n, &i, 2, &m) || i >= n ||
        s[i++] != ':' || digits(s, n, &i, 2, &sec) || fraction(s, n, &i, &usec) || i != n || m > 59 ||
        sec > 59)
        return -1;
    int64_t v = ((int64_t)h * 3600 + m * 60 + sec) * 1000000 + usec;
    *us = neg ? -v : v;
    return 0;
}

/* SET "a,b" → mask, or a decimal mask */
static int set_text(const bl_column *c, const char *s, size_t n, uint64_t *mask) {
    *mask = 0;
    if (n == 0) return 0;
    size_t st = 0;
    for (size_t i = 0; i <= n; i++) {
        if (i < n && s[i] != ',') continue;
        size_t l = i - st;
        uint32_t k;
        for (k = 0; k < c->n_labels; k++)
            if (c->label_lens[k] == l && !memcmp(c->labels[k], s + st, l)) break;
        if (k == c->n_labels) goto number;
        *mask |= 1ULL << k;
        st = i + 1;
    }
    return 0;
number: {
        bool neg;
        if (mq_parse_int(s, n, &neg, mask) < 0 || neg) return -1;
        if (c->n_labels < 64 && *mask >> c->n_labels) return -1;
        return 0;
    }
}

int mq_enc_text(sbuf *out, const bl_column *c, const char *s, size_t n, int32_t tz_offset, char *err,
                size_t errlen) {
    bool neg;
    uint64_t mag;
    switch (c->type) {
    case BT_TINY: case BT_SHORT: case BT_INT24: case BT_LONG: case BT_LONGLONG:
        if (mq_parse_int(s, n, &neg, &mag) < 0) break;
        return mq_enc_int(out, c, neg, mag, err, errlen);
    case BT_NEWDECIMAL:
        return mq_enc_decimal(out, c, s, n, err, errlen);
    case BT_FLOAT: case BT_DOUBLE: {
        char b[64];
        if (n == 0 || n >= sizeof b) break;
        memcpy(b, s, n);
        b[n] = '\0';
        char *e;
        errno = 0;
        double d = strtod(b, &e);
        if (*e || !isfinite(d)) break;
        if (c->type == BT_FLOAT) {
            float f = strtof(b, NULL); /* straight to float: no double rounding */
            sbuf_add(out, &f, 4);
            return 0;
        }
        return mq_enc_double(out, c, d);
    }
    case BT_DATE: case BT_NEWDATE: {
        unsigned v[6];
        uint32_t usec;
        bool ht;
        if (datetime_text(s, n, v, &usec, &ht) < 0) break;
        return mq_enc_date(out, (int)v[0], v[1], v[2]);
    }
    case BT_DATETIME2: {
        unsigned v[6];
        uint32_t usec;
        bool ht;
        if (datetime_text(s, n, v, &usec, &ht) < 0) break;
        return datetime2(out, c, v[0], v[1], v[2], v[3], v[4], v[5], usec);
    }
    case BT_TIMESTAMP2: {
        unsigned v[6];
        uint32_t usec;
        bool ht;
        if (datetime_text(s, n, v, &usec, &ht) < 0) break;
        if (!v[0] && !v[1] && !v[2]) return timestamp2(out, c, 0, 0); /* the zero timestamp */
        if (!v[1] || !v[2]) break;
        int64_t secs = mq_days_from_civil(v[0], v[1], v[2]) * 86400 + v[3] * 3600 + v[4] * 60 + v[5];
        if (!(n > 0 && s[n - 1] == 'Z')) secs -= tz_offset;
        return mq_enc_timestamp(out, c, secs, usec, err, errlen);
    }
    case BT_TIME2: {
        int64_t us;
        if (time_text(s, n, &us) < 0) break;
        return mq_enc_time_us(out, c, us, err, errlen);
    }
    case BT_YEAR:
        if (mq_parse_int(s, n, &neg, &mag) < 0 || neg || mag > 9999) break;
        return mq_enc_year(out, (int64_t)mag, err, errlen);
    case BT_BIT:
        if (mq_parse_int(s, n, &neg, &mag) < 0 || neg) break;
        return mq_enc_bit(out, c, mag, err, errlen);
    case BT_ENUM: {
        for (uint32_t k = 0; k < c->n_labels; k++)
            if (c->label_lens[k] == n && !memcmp(c->labels[k], s, n)) {
                put_le(out, k + 1, (int)c->max_len);
                return 0;
            }
        if (n == 0) { /* the '' of an invalid value inserted in non-strict mode */
            put_le(out, 0, (int)c->max_len);
            return 0;
        }
        if (mq_parse_int(s, n, &neg, &mag) < 0 || neg || mag > c->n_labels)
            return errf(err, errlen, "\"%.*s\" is not a member of the ENUM", (int)(n > 80 ? 80 : n), s);
        put_le(out, mag, (int)c->max_len);
        return 0;
    }
    case BT_SET: {
        uint64_t mask;
        if (set_text(c, s, n, &mask) < 0)
            return errf(err, errlen, "\"%.*s\" is not a list of the SET's members", (int)(n > 80 ? 80 : n), s);
        put_le(out, mask, (int)c->max_len);
        return 0;
    }
    case BT_VARCHAR: case BT_VAR_STRING: case BT_STRING: case BT_BLOB: case BT_TINY_BLOB:
    case BT_MEDIUM_BLOB: case BT_LONG_BLOB: case BT_GEOMETRY:
        return mq_enc_bytes(out, c, (const uint8_t *)s, n, err, errlen);
    default:
        return errf(err, errlen, "column type %d is not supported", c->type);
    }
    return errf(err, errlen, "\"%.*s\" is not a valid %s value", (int)(n > 80 ? 80 : n), s,
                c->type == BT_DATE ? "DATE" : c->type == BT_DATETIME2 ? "DATETIME"
                : c->type == BT_TIMESTAMP2 ? "TIMESTAMP" : c->type == BT_TIME2 ? "TIME"
                : c->type == BT_YEAR ? "YEAR" : c->type == BT_BIT ? "BIT"
                : c->type == BT_FLOAT || c->type == BT_DOUBLE ? "floating point" : "integer");
}
