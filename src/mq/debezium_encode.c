/* debezium_encode: one value of a Debezium message encoded as the binlog's
 * bytes of its column, as the field's representation says (struct dcol,
 * worked out from the schema or the lookup by src/mq/debezium.c): dates as
 * day numbers, datetimes and times as epoch numbers in the connector's
 * unit, zoned timestamps as ISO-8601, YEAR, JSON, BIT, binary, geometry and
 * plain values; DECIMAL and binary through debezium_value.c. What the
 * connector makes uncertain (see the top of debezium.c) is unsure (1),
 * never a guess. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "json_exact.h"
#include "mq/debezium_int.h"
#include "mq/mq.h"

/* "2024-01-02T03:04:05.123456Z" / "+02:00" → UTC seconds, micros, digits */
static int zoned(const char *s, int64_t *secs, uint32_t *usec, int *digits) {
    unsigned y, mo, d, h, mi, se;
    int n = 0;
    if (sscanf(s, "%4u-%2u-%2uT%2u:%2u:%2u%n", &y, &mo, &d, &h, &mi, &se, &n) != 6 || n != 19) return -1;
    const char *p = s + n;
    *usec = 0;
    *digits = 0;
    if (*p == '.') {
        p++;
        while (*p >= '0' && *p <= '9') {
            if (*digits < 6) *usec = *usec * 10 + (uint32_t)(*p - '0');
            else if (*p != '0') return -1;
            (*digits)++;
            p++;
        }
        for (int k = *digits; k < 6; k++) *usec *= 10;
    }
    int64_t off = 0;
    if (*p == 'Z') p++;
    else if (*p == '+' || *p == '-') {
        unsigned oh, om;
        int k = 0;
        if (sscanf(p + 1, "%2u:%2u%n", &oh, &om, &k) != 2 || k != 5) return -1;
        off = (int64_t)(oh * 3600 + om * 60) * (*p == '-' ? -1 : 1);
        p += 6;
    } else return -1;
    if (*p || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || se > 59) return -1;
    *secs = mq_days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + se - off;
    return 0;
}

/* the fewest of 0, 3, 6 fraction digits that hold usec exactly */
static unsigned fsp_for(uint32_t usec) { return usec == 0 ? 0 : usec % 1000 == 0 ? 3 : 6; }

static int64_t to_us(int rep, int64_t v) {
    switch (rep) {
    case R_MILLIS_DT: case R_MILLIS_TIME: return v * 1000;
    case R_NANOS_DT: case R_NANOS_TIME: return v / 1000;
    default: return v;
    }
}

/* widen a column's fsp to what value v needs */
void dbz_infer_fsp(bl_column *c, const struct dcol *d, const cJSON *v) {
    int64_t x;
    uint32_t usec = 0;
    if (d->rep == R_ZONED) {
        int64_t secs;
        int dg;
        if (!cJSON_IsString(v) || zoned(v->valuestring, &secs, &usec, &dg) < 0) return;
    } else {
        if (!i64_of(v, &x)) return;
        int64_t us = to_us(d->rep, x);
        int64_t r = us % 1000000;
        usec = (uint32_t)(r < 0 ? -r : r);
    }
    unsigned f = fsp_for(usec);
    if (f > c->fsp) c->fsp = (uint8_t)f, c->meta = (uint16_t)f;
}

/* time.precision.mode=connect's milliseconds of a column with more digits:
 * 1, the value is unsure */
static int lossy(char *err, size_t errlen, const bl_column *c) {
    errf(err, errlen, "time.precision.mode=connect sends %s(%u) in milliseconds: its last "
         "digits are lost; set the connector's time.precision.mode to "
         "adaptive_time_microseconds", c->type == BT_TIME2 ? "TIME" : "DATETIME", c->fsp);
    return 1;
}

/* R_MILLIS_DT, R_MICROS_DT, R_NANOS_DT: a DATETIME or TIMESTAMP as an epoch
 * number in the unit d->rep says */
static int enc_epoch(sbuf *out, const bl_column *c, const cJSON *v, const struct dcol *d,
                     char *err, size_t errlen) {
    int64_t x;
    if (!i64_of(v, &x)) return errf(err, errlen, "a DATETIME that is not an epoch number");
    int r;
    if (c->type == BT_TIMESTAMP2) {
        int64_t us = to_us(d->rep, x);
        int64_t s = us >= 0 ? us / 1000000 : -((-us + 999999) / 1000000);
        r = mq_enc_timestamp(out, c, s, (uint32_t)(us - s * 1000000), err, errlen);
    } else {
        r = mq_enc_datetime_us(out, c, to_us(d->rep, x), err, errlen);
    }
    if (r == 0 && d->connect && d->rep == R_MILLIS_DT && c->fsp > 3) r = lossy(err, errlen, c);
    return r;
}

/* R_YEAR: 1900 is streaming's YEAR 0000; a snapshot's 2000 is unsure */
static int enc_year(sbuf *out, const cJSON *v, const struct dcol *d, char *err, size_t errlen) {
    int64_t x;
    if (!i64_of(v, &x)) return errf(err, errlen, "a YEAR that is not a number");
    if (x == 1900) {
        x = 0; /* streaming's YEAR 0000 (no YEAR holds 1900) */
    } else if (x == 2000 && d->snapshot) {
        errf(err, errlen, "a snapshot's YEAR 2000: Debezium's snapshot sends YEAR 0000 as "
             "2000 (its two-digit year rule), so this is 0000 or 2000");
        return 1;
    }
    return mq_enc_year(out, x, err, errlen);
}

/* R_BITS: a BIT(1) as a boolean, a wider one as base64 bytes, least
 * significant first */
static int enc_bits(sbuf *out, const bl_column *c, const cJSON *v, char *err, size_t errlen) {
    if (cJSON_IsBool(v)) return mq_enc_bit(out, c, cJSON_IsTrue(v), err, errlen);
    sbuf b = SBUF_INIT;
    int r;
    if (!cJSON_IsString(v) || mq_base64_decode(&b, v->valuestring, strlen(v->valuestring)) < 0 ||
        b.len > 8) {
        r = errf(err, errlen, "a BIT that is not base64 bytes");
    } else {
        uint64_t bits = 0;
        for (size_t i = 0; i < b.len; i++) bits |= (uint64_t)(uint8_t)b.data[i] << (8 * i);
        r = mq_enc_bit(out, c, bits, err, errlen);
    }
    sbuf_free(&b);
    return r;
}

/* R_GEOM: {"wkb": base64, "srid": n} as the binlog's geometry bytes (the
 * SRID, little-endian, then the WKB) */
static int enc_geom(sbuf *out, const bl_column *c, const cJSON *v, char *err, size_t errlen) {
    const char *wkb = str(v, "wkb");
    const cJSON *srid = key(v, "srid");
    int64_t sr = 0;
    if (!wkb) return errf(err, errlen, "a geometry without \"wkb\"");
    if (srid && !cJSON_IsNull(srid)) i64_of(srid, &sr);
    uint8_t s4[4] = {(uint8_t)sr, (uint8_t)(sr >> 8), (uint8_t)(sr >> 16), (uint8_t)(sr >> 24)};
    sbuf b = SBUF_INIT;
    sbuf_add(&b, s4, 4);
    int r = mq_base64_decode(&b, wkb, strlen(wkb)) < 0
                ? errf(err, errlen, "a geometry whose wkb is not base64")
                : mq_enc_bytes(out, c, (const uint8_t *)b.data, b.len, err, errlen);
    sbuf_free(&b);
    return r;
}

/* R_PLAIN: a value as the JSON holds it (numbers kept as their text) */
static int enc_plain(sbuf *out, const bl_column *c, const cJSON *v, const struct dcol *d,
                     char *err, size_t errlen) {
    int64_t x;
    int r;
    if (c->type == BT_FLOAT && d->snapshot && cJSON_IsRaw(v)) {
        r = 1;
        errf(err, errlen, "a snapshot's FLOAT %.30s: Debezium's snapshot reads rows over "
             "MySQL's text protocol, which prints a FLOAT with 6 significant digits (a "
             "FLOAT holds about 7), so this may be rounded", v->valuestring);
    } else if (cJSON_IsBool(v)) {
        r = c->type == BT_BIT ? mq_enc_bit(out, c, cJSON_IsTrue(v), err, errlen)
                              : mq_enc_text(out, c, cJSON_IsTrue(v) ? "1" : "0", 1, 0, err, errlen);
    } else if (cJSON_IsRaw(v) && c->type == BT_LONGLONG && c->is_unsigned && v->valuestring[0] == '-' &&
               i64_of(v, &x)) {
        /* bigint.unsigned.handling.mode=long: values above 2^63-1 wrapped */
        r = mq_enc_int(out, c, false, (uint64_t)x, err, errlen);
    } else if (cJSON_IsRaw(v) || cJSON_IsString(v)) {
        r = mq_enc_text(out, c, v->valuestring, json_exact_strlen(v), 0, err, errlen);
    } else if (c->kind == BK_JSON_TEXT) {
        char *t = cJSON_PrintUnformatted(v);
        r = mq_enc_bytes(out, c, (const uint8_t *)t, strlen(t), err, errlen);
        cJSON_free(t);
    } else {
        r = errf(err, errlen, "an unexpected JSON %s", cJSON_IsArray(v) ? "array" : "object");
    }
    return r;
}

/* one value of column c, as its field's schema d says (mq_put_value's
 * encoder) */
int dbz_enc_value(sbuf *out, const bl_column *c, const cJSON *v, const void *ud, char *err,
                  size_t errlen) {
    const struct dcol *d = ud;
    int r = -1;
    int64_t x;
    switch (d->rep) {
    case R_DECIMAL:
        r = mq_dbz_decimal(out, c, v, d->dec, d->scale, d->dec_schema, err, errlen);
        break;
    case R_UNSTATED:
        r = 1;
        errf(err, errlen, "a %s number is microseconds (time.precision.mode="
             "adaptive_time_microseconds) or milliseconds (connect), and the message has no "
             "schema saying which: set " TIME_SETTING " to the connector's "
             "time.precision.mode, or turn the JSON converter's schemas on",
             c->type == BT_TIME2 ? "TIME" : "DATETIME(4-6)");
        break;
    case R_DAYS:
        if (!i64_of(v, &x)) { r = errf(err, errlen, "a DATE that is not a day number"); break; }
        r = mq_enc_days(out, x, err, errlen);
        break;
    case R_MILLIS_DT: case R_MICROS_DT: case R_NANOS_DT:
        r = enc_epoch(out, c, v, d, err, errlen);
        break;
    case R_ZONED: {
        int64_t secs;
        uint32_t usec;
        int dg;
        if (!cJSON_IsString(v) || zoned(v->valuestring, &secs, &usec, &dg) < 0) {
            r = errf(err, errlen, "a TIMESTAMP that is not ISO-8601 with a zone");
            break;
        }
        r = mq_enc_timestamp(out, c, secs, usec, err, errlen);
        break;
    }
    case R_MICROS_TIME: case R_MILLIS_TIME: case R_NANOS_TIME:
        if (!i64_of(v, &x)) { r = errf(err, errlen, "a TIME that is not a number"); break; }
        r = mq_enc_time_us(out, c, to_us(d->rep, x), err, errlen);
        if (r == 0 && d->connect && d->rep == R_MILLIS_TIME && c->fsp > 3) r = lossy(err, errlen, c);
        break;
    case R_YEAR:
        r = enc_year(out, v, d, err, errlen);
        break;
    case R_JSON:
        if (cJSON_IsString(v)) {
            r = mq_enc_bytes(out, c, (const uint8_t *)v->valuestring, json_exact_strlen(v), err, errlen);
        } else {
            char *t = cJSON_PrintUnformatted(v);
            r = mq_enc_bytes(out, c, (const uint8_t *)t, strlen(t), err, errlen);
            cJSON_free(t);
        }
        break;
    case R_BITS:
        r = enc_bits(out, c, v, err, errlen);
        break;
    case R_BYTES:
        if (!cJSON_IsString(v)) { r = errf(err, errlen, "a binary value that is not a string"); break; }
        r = mq_dbz_binary(out, c, v->valuestring, d->bin, err, errlen);
        break;
    case R_GEOM:
        r = enc_geom(out, c, v, err, errlen);
        break;
    default: /* R_PLAIN */
        r = enc_plain(out, c, v, d, err, errlen);
    }
    return r;
}
