/* debezium: Debezium MySQL connector change events, JSON converter, with
 * schemas ({"schema":{..},"payload":{..}}) or without (the payload alone):
 *
 *   {"before":{..}|null,"after":{..}|null,"op":"c|r|u|d",
 *    "source":{"db":..,"table":..,"file":"mysql-bin.000003","pos":1234,"row":0,
 *              "gtid":..,"ts_ms":..,"snapshot":..},"ts_ms":..}
 *
 * Values by the field's schema (its semantic "name" and "parameters"):
 *   Decimal (decimal.handling.mode=precise)  base64 big-endian two's complement
 *       unscaled bytes, scale from the parameters; mode=string is the text;
 *       mode=double a number (Debezium already rounded it: not exact)
 *   io.debezium.time.Date        days since 1970-01-01 → DATE
 *   io.debezium.time.Timestamp   epoch millis → DATETIME(0-3)
 *   io.debezium.time.MicroTimestamp / NanoTimestamp → DATETIME(4-6)
 *   io.debezium.time.ZonedTimestamp  ISO-8601 text → TIMESTAMP (UTC)
 *   io.debezium.time.MicroTime / Time / NanoTime → TIME (negative, > 24 h)
 *   org.apache.kafka.connect.data.Date/Timestamp/Time (time.precision.mode=connect)
 *   io.debezium.time.Year        YEAR
 *   io.debezium.data.Json        the JSON text
 *   io.debezium.data.Enum / EnumSet  label / "a,b", members in "allowed"
 *   io.debezium.data.Bits        base64 little-endian bytes, "length" bits (BIT(1) is a boolean)
 *   io.debezium.data.geometry.*  {"wkb":base64,"srid":n}
 *   bytes (no name)              base64 → BINARY/VARBINARY/BLOB
 *   int8..int64, float32/64, string, boolean  as they are
 * With column.propagate.source.type, __debezium.source.column.type/length/
 * scale give the exact MySQL type. The schema lookup (mq_opts.lookup) gives
 * exact types too, and with it a message without schemas decodes exactly:
 * an integer in a DATE column is days, in a DATETIME(0-3) millis, in a
 * DATETIME(4-6) or TIME micros (the connector's default
 * time.precision.mode=adaptive_time_microseconds), a negative BIGINT
 * UNSIGNED is wrapped back (bigint.unsigned.handling.mode=long).
 *
 * Without a schema the connector's settings the message does not carry are
 * mq_opts.dbz_* ([kafka] debezium_*): DECIMAL and binary values
 * (debezium_value.c), and the unit of TIME and DATETIME(4-6) numbers
 * (time.precision.mode: microseconds, or Kafka Connect's milliseconds).
 *
 * Values the connector itself makes uncertain are BL_UNSURE, never a guess:
 *   - YEAR: streaming (op c/u/d) sends YEAR 0000 as 1900 (the binlog's byte 0
 *     as 1900 + 0), which no YEAR holds: read as 0. A snapshot (op "r")
 *     reads the column over JDBC and turns 0 into 2000 by its two-digit
 *     year rule: a snapshot's 2000 may be 0000 or 2000.
 *   - FLOAT in a snapshot: the rows are read over MySQL's text protocol,
 *     which prints a FLOAT with 6 significant digits (1024.125 comes as
 *     1024.12); the binlog's, streamed, are exact.
 *   - time.precision.mode=connect: DATETIME(4-6) and TIME(4-6) come in
 *     milliseconds (the last digits are lost) and a TIME outside 0-24 h as
 *     null.
 *   - a schema-less TIME or DATETIME(4-6) number while time.precision.mode
 *     is not stated: microseconds or milliseconds.
 *
 * Without a schema and without the lookup, types are guessed only where
 * the JSON is unambiguous: an integer → BIGINT, a number with a fraction →
 * DOUBLE, a string → text, true/false → TINYINT 1/0, {"wkb":..} → GEOMETRY,
 * another object → JSON. Dates stay the integers Debezium wrote, binary
 * values their base64 text, and a base64 DECIMAL is refused (it cannot be
 * scaled): enable schemas, give the lookup, or use decimal.handling.mode=string.
 * Where a schema says DATETIME/TIME/TIMESTAMP but not its fsp, the fraction
 * digits are the fewest of 0, 3, 6 that hold the message's values exactly.
 *
 * Nothing to apply: tombstones (null payload), transaction markers
 * ({"status":"BEGIN"|"END",..}), heartbeats ({"ts_ms":..}, schema
 * io.debezium.connector.common.Heartbeat) and notifications
 * ({"id","type","aggregate_type",..}). Schema change events
 * ({"ddl":..,"databaseName":..}) are statements; op "t" (truncate) is
 * refused. Position: source file/pos (the event's), row (the row within
 * the event) and gtid; a snapshot read (op "r") carries the binlog position
 * the snapshot was taken at. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <cjson/cJSON.h>

#include "json_exact.h"
#include "mq/mq.h"

enum rep {
    R_PLAIN = 0, R_DECIMAL, R_DAYS, R_MILLIS_DT, R_MICROS_DT, R_NANOS_DT, R_ZONED, R_MICROS_TIME,
    R_MILLIS_TIME, R_NANOS_TIME, R_YEAR, R_JSON, R_BITS, R_BYTES, R_GEOM,
    R_UNSTATED, /* a number whose unit a setting not stated decides: unsure */
};

struct dcol {
    int rep;
    int scale;       /* R_DECIMAL: from the schema, -1 = the column's */
    int dec;         /* R_DECIMAL: enum mq_dbz_decimal, 0: the value decides */
    bool dec_schema; /* ... and the message's schema said it */
    int bin;         /* R_BYTES: enum mq_dbz_binary, 0: the value decides */
    bool connect;    /* times in Kafka Connect's milliseconds (time.precision.mode=connect) */
    bool snapshot;   /* the message is a snapshot read (op "r") */
    bool infer_fsp;  /* fsp from the values */
};

#define TIME_SETTING "[kafka] debezium_time_precision_mode"

static const cJSON *key(const cJSON *o, const char *k) {
    return cJSON_IsObject(o) ? cJSON_GetObjectItemCaseSensitive(o, k) : NULL;
}
static const char *str(const cJSON *o, const char *k) {
    const cJSON *v = key(o, k);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}
static bool i64_of(const cJSON *v, int64_t *out) {
    const char *s = cJSON_IsRaw(v) || cJSON_IsString(v) ? v->valuestring : NULL;
    bool neg;
    uint64_t mag;
    if (!s || mq_parse_int(s, strlen(s), &neg, &mag) < 0) return false;
    if (neg ? mag > (uint64_t)INT64_MAX + 1 : mag > INT64_MAX) return false;
    *out = neg ? (int64_t)(0 - mag) : (int64_t)mag;
    return true;
}

/* ------------------------------------------------------------- columns */
static int col_from_schema(mq_msg *m, const mq_opts *o, bl_column *c, struct dcol *d,
                           const cJSON *fs, bool typed) {
    const char *type = str(fs, "type"), *name = str(fs, "name");
    const cJSON *params = key(fs, "parameters");
    char err[256];
    d->scale = -1;
    if (!type) type = "";
    if (!name) name = "";
    /* the representation */
    if (!strcmp(name, "org.apache.kafka.connect.data.Decimal")) {
        d->rep = R_DECIMAL;
        const char *sc = str(params, "scale");
        d->scale = sc ? atoi(sc) : 0;
    } else if (!strcmp(name, "io.debezium.time.Date") || !strcmp(name, "org.apache.kafka.connect.data.Date")) d->rep = R_DAYS;
    else if (!strcmp(name, "io.debezium.time.Timestamp") || !strcmp(name, "org.apache.kafka.connect.data.Timestamp")) d->rep = R_MILLIS_DT;
    else if (!strcmp(name, "io.debezium.time.MicroTimestamp")) d->rep = R_MICROS_DT;
    else if (!strcmp(name, "io.debezium.time.NanoTimestamp")) d->rep = R_NANOS_DT;
    else if (!strcmp(name, "io.debezium.time.ZonedTimestamp")) d->rep = R_ZONED;
    else if (!strcmp(name, "io.debezium.time.MicroTime")) d->rep = R_MICROS_TIME;
    else if (!strcmp(name, "io.debezium.time.Time") || !strcmp(name, "org.apache.kafka.connect.data.Time")) d->rep = R_MILLIS_TIME;
    else if (!strcmp(name, "io.debezium.time.NanoTime")) d->rep = R_NANOS_TIME;
    else if (!strcmp(name, "io.debezium.time.Year")) d->rep = R_YEAR;
    else if (!strcmp(name, "io.debezium.data.Json")) d->rep = R_JSON;
    else if (!strcmp(name, "io.debezium.data.Bits")) d->rep = R_BITS;
    else if (!strncmp(name, "io.debezium.data.geometry.", 26)) d->rep = R_GEOM;
    else if (!strcmp(type, "bytes")) d->rep = R_BYTES;
    else d->rep = R_PLAIN;
    d->connect = !strncmp(name, "org.apache.kafka.connect.data.T", 31); /* Time, Timestamp */
    if (d->rep == R_DECIMAL) d->dec = MQ_DBZ_DEC_PRECISE, d->dec_schema = true;
    if (d->rep == R_BYTES) d->bin = MQ_DBZ_BIN_BASE64;
    if (typed) { /* the lookup gave the column's type: what the schema's says of its encoding */
        if (c->type == BT_NEWDECIMAL && d->rep == R_PLAIN &&
            (!strcmp(type, "string") || !strcmp(type, "double") || !strcmp(type, "float64"))) {
            d->rep = R_DECIMAL; /* decimal.handling.mode=string or double */
            d->dec = !strcmp(type, "string") ? MQ_DBZ_DEC_STRING : MQ_DBZ_DEC_DOUBLE;
            d->dec_schema = true;
        } else if (mq_col_is_binary(c) && d->rep == R_PLAIN && !strcmp(type, "string")) {
            d->rep = R_BYTES; /* binary.handling.mode base64, base64-url-safe or hex */
            d->bin = o->dbz_binary;
        } else if (c->type == BT_YEAR && d->rep == R_PLAIN) {
            d->rep = R_YEAR;
        }
        return 0;
    }

    /* the column type the connector propagated, when it did */
    const char *st = str(params, "__debezium.source.column.type");
    if (st && strncasecmp(st, "ENUM", 4) && strncasecmp(st, "SET", 3)) {
        const char *len = str(params, "__debezium.source.column.length");
        const char *scale = str(params, "__debezium.source.column.scale");
        char t[128];
        bool tmp = !strncasecmp(st, "DATETIME", 8) || !strncasecmp(st, "TIMESTAMP", 9) || !strncasecmp(st, "TIME", 4);
        bool sized = !strncasecmp(st, "DECIMAL", 7) || !strncasecmp(st, "NUMERIC", 7) ||
                     !strncasecmp(st, "CHAR", 4) || !strncasecmp(st, "VARCHAR", 7) || !strncasecmp(st, "BINARY", 6) ||
                     !strncasecmp(st, "VARBINARY", 9) || !strncasecmp(st, "BIT", 3);
        if (tmp && scale) snprintf(t, sizeof t, "%.60s(%s)", st, scale);
        else if (sized && len && scale) snprintf(t, sizeof t, "%.60s(%s,%s)", st, len, scale);
        else if (sized && len) snprintf(t, sizeof t, "%.60s(%s)", st, len);
        else snprintf(t, sizeof t, "%.60s", st);
        if (mq_col_type(m, c, t, err, sizeof err) == 0) return 0;
    }
    switch (d->rep) {
    case R_DECIMAL: {
        const char *p = str(params, "connect.decimal.precision");
        int prec = p ? atoi(p) : 65, sc = d->scale;
        if (sc < 0 || sc > 30) return mq_fail(m, "column %s: a DECIMAL scale of %d", c->name, sc);
        if (prec < sc || prec > 65) prec = 65;
        if (prec < 1) prec = 1;
        mq_col_decimal(c, (unsigned)prec, (unsigned)sc);
        return 0;
    }
    case R_DAYS: mq_col_simple(c, BT_DATE, false); return 0;
    case R_MILLIS_DT: case R_MICROS_DT: case R_NANOS_DT:
        mq_col_temporal(c, BT_DATETIME2, 0);
        d->infer_fsp = true;
        return 0;
    case R_ZONED:
        mq_col_temporal(c, BT_TIMESTAMP2, 0);
        d->infer_fsp = true;
        return 0;
    case R_MICROS_TIME: case R_MILLIS_TIME: case R_NANOS_TIME:
        mq_col_temporal(c, BT_TIME2, 0);
        d->infer_fsp = true;
        return 0;
    case R_YEAR: mq_col_simple(c, BT_YEAR, false); return 0;
    case R_JSON: mq_col_json(c); return 0;
    case R_BITS: {
        const char *l = str(params, "length");
        mq_col_bit(c, l ? (unsigned)atoi(l) : 64);
        return 0;
    }
    case R_GEOM:
        c->type = c->map_type = BT_GEOMETRY;
        c->len_bytes = 4;
        return 0;
    case R_BYTES: mq_col_bytes(c); return 0;
    default: break;
    }
    if (!strcmp(name, "io.debezium.data.Enum") || !strcmp(name, "io.debezium.data.EnumSet")) {
        const char *allowed = str(params, "allowed");
        const char *labels[64 * 16];
        uint32_t lens[64 * 16], n = 0;
        if (allowed && *allowed) {
            const char *p = allowed;
            for (;;) {
                const char *e = strchr(p, ',');
                size_t l = e ? (size_t)(e - p) : strlen(p);
                if (n == sizeof lens / sizeof lens[0]) break;
                labels[n] = p;
                lens[n++] = (uint32_t)l;
                if (!e) break;
                p = e + 1;
            }
        }
        if (mq_col_labels(m, c, name[17] == 'E' && name[21] == 'S' ? BT_SET : BT_ENUM, labels, lens, n) < 0)
            return mq_fail(m, "column %s: a SET has at most 64 members", c->name);
        return 0;
    }
    if (!strcmp(type, "int8")) mq_col_simple(c, BT_TINY, false);
    else if (!strcmp(type, "int16")) mq_col_simple(c, BT_SHORT, false);
    else if (!strcmp(type, "int32")) mq_col_simple(c, BT_LONG, false);
    else if (!strcmp(type, "int64")) mq_col_simple(c, BT_LONGLONG, false);
    else if (!strcmp(type, "float") || !strcmp(type, "float32")) mq_col_simple(c, BT_FLOAT, false);
    else if (!strcmp(type, "double") || !strcmp(type, "float64")) mq_col_simple(c, BT_DOUBLE, false);
    else if (!strcmp(type, "boolean")) mq_col_simple(c, BT_TINY, false);
    else if (!strcmp(type, "string")) mq_col_text(c);
    else return mq_fail(m, "column %s: schema type \"%.40s\" (%.60s) is not supported", c->name, type, name);
    return 0;
}

/* without a schema: the representation from the column type (the lookup's),
 * the JSON value and the connector's settings (o), or the column's shape
 * from the value alone */
static void col_from_value(const mq_opts *o, bl_column *c, struct dcol *d, const cJSON *v,
                           bool typed) {
    d->scale = -1;
    if (typed) {
        /* time.precision.mode: DATETIME(0-3) is milliseconds whatever it is;
         * DATETIME(4-6) and TIME are microseconds (adaptive_time_microseconds)
         * or milliseconds (connect) */
        int time = o->dbz_time;
        d->connect = time == MQ_DBZ_TIME_CONNECT;
        switch (c->type) {
        case BT_NEWDECIMAL:
            d->rep = cJSON_IsString(v) || cJSON_IsRaw(v) ? R_DECIMAL : R_PLAIN;
            d->dec = o->dbz_decimal;
            break;
        case BT_DATE: d->rep = cJSON_IsRaw(v) ? R_DAYS : R_PLAIN; break;
        case BT_DATETIME2:
            d->rep = !cJSON_IsRaw(v) ? R_PLAIN
                   : c->fsp <= 3 || time == MQ_DBZ_TIME_CONNECT ? R_MILLIS_DT
                   : time == MQ_DBZ_TIME_MICROS ? R_MICROS_DT : R_UNSTATED;
            break;
        case BT_TIMESTAMP2: d->rep = cJSON_IsString(v) ? R_ZONED : R_PLAIN; break;
        case BT_TIME2:
            d->rep = !cJSON_IsRaw(v) ? R_PLAIN
                   : time == MQ_DBZ_TIME_CONNECT ? R_MILLIS_TIME
                   : time == MQ_DBZ_TIME_MICROS ? R_MICROS_TIME : R_UNSTATED;
            break;
        case BT_YEAR: d->rep = R_YEAR; break;
        case BT_BIT: d->rep = cJSON_IsString(v) ? R_BITS : R_PLAIN; break;
        case BT_GEOMETRY: d->rep = R_GEOM; break;
        case BT_LONGLONG: /* bigint.unsigned.handling.mode=precise: always base64 bytes */
            d->rep = cJSON_IsString(v) ? R_DECIMAL : R_PLAIN;
            d->dec = MQ_DBZ_DEC_PRECISE;
            break;
        default:
            d->rep = mq_col_is_binary(c) ? R_BYTES : c->kind == BK_JSON_TEXT ? R_JSON : R_PLAIN;
            d->bin = o->dbz_binary;
        }
        return;
    }
    d->rep = R_PLAIN;
    if (cJSON_IsRaw(v)) {
        const char *s = v->valuestring;
        bool frac = strpbrk(s, ".eE") != NULL;
        bool neg;
        uint64_t mag;
        bool big = !frac && mq_parse_int(s, strlen(s), &neg, &mag) == 0 && !neg && mag > INT64_MAX;
        mq_col_simple(c, frac ? BT_DOUBLE : BT_LONGLONG, big); /* above 2^63-1: BIGINT UNSIGNED */
    } else if (cJSON_IsBool(v)) {
        mq_col_simple(c, BT_TINY, false);
    } else if (cJSON_IsObject(v) && key(v, "wkb")) {
        c->type = c->map_type = BT_GEOMETRY;
        c->len_bytes = 4;
        d->rep = R_GEOM;
    } else if (cJSON_IsObject(v) || cJSON_IsArray(v)) {
        mq_col_json(c);
        d->rep = R_JSON;
    } else {
        mq_col_text(c);
    }
}

/* -------------------------------------------------------------- values */
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
static void infer_fsp(bl_column *c, const struct dcol *d, const cJSON *v) {
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

/* one value of column c, as its field's schema d says (mq_put_value's
 * encoder) */
static int enc_value(sbuf *out, const bl_column *c, const cJSON *v, const void *ud, char *err,
                     size_t errlen) {
    const struct dcol *d = ud;
    int r = -1;
    int64_t x;
    sbuf b = SBUF_INIT;
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
        if (!i64_of(v, &x)) { r = errf(err, errlen, "a DATETIME that is not an epoch number"); break; }
        if (c->type == BT_TIMESTAMP2) {
            int64_t us = to_us(d->rep, x);
            int64_t s = us >= 0 ? us / 1000000 : -((-us + 999999) / 1000000);
            r = mq_enc_timestamp(out, c, s, (uint32_t)(us - s * 1000000), err, errlen);
        } else {
            r = mq_enc_datetime_us(out, c, to_us(d->rep, x), err, errlen);
        }
        if (r == 0 && d->connect && d->rep == R_MILLIS_DT && c->fsp > 3)
            r = lossy(err, errlen, c);
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
        if (!i64_of(v, &x)) { r = errf(err, errlen, "a YEAR that is not a number"); break; }
        if (x == 1900) {
            x = 0; /* streaming's YEAR 0000 (no YEAR holds 1900) */
        } else if (x == 2000 && d->snapshot) {
            r = 1;
            errf(err, errlen, "a snapshot's YEAR 2000: Debezium's snapshot sends YEAR 0000 as "
                 "2000 (its two-digit year rule), so this is 0000 or 2000");
            break;
        }
        r = mq_enc_year(out, x, err, errlen);
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
    case R_BITS: {
        if (cJSON_IsBool(v)) { r = mq_enc_bit(out, c, cJSON_IsTrue(v), err, errlen); break; }
        if (!cJSON_IsString(v) || mq_base64_decode(&b, v->valuestring, strlen(v->valuestring)) < 0 || b.len > 8) {
            r = errf(err, errlen, "a BIT that is not base64 bytes");
            break;
        }
        uint64_t bits = 0;
        for (size_t i = 0; i < b.len; i++) bits |= (uint64_t)(uint8_t)b.data[i] << (8 * i);
        r = mq_enc_bit(out, c, bits, err, errlen);
        break;
    }
    case R_BYTES:
        if (!cJSON_IsString(v)) { r = errf(err, errlen, "a binary value that is not a string"); break; }
        r = mq_dbz_binary(out, c, v->valuestring, d->bin, err, errlen);
        break;
    case R_GEOM: {
        const char *wkb = str(v, "wkb");
        const cJSON *srid = key(v, "srid");
        int64_t sr = 0;
        if (!wkb) { r = errf(err, errlen, "a geometry without \"wkb\""); break; }
        if (srid && !cJSON_IsNull(srid)) i64_of(srid, &sr);
        uint8_t s4[4] = {(uint8_t)sr, (uint8_t)(sr >> 8), (uint8_t)(sr >> 16), (uint8_t)(sr >> 24)};
        sbuf_add(&b, s4, 4);
        if (mq_base64_decode(&b, wkb, strlen(wkb)) < 0) { r = errf(err, errlen, "a geometry whose wkb is not base64"); break; }
        r = mq_enc_bytes(out, c, (const uint8_t *)b.data, b.len, err, errlen);
        break;
    }
    default: /* R_PLAIN */
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
    }
    sbuf_free(&b);
    return r;
}

/* the fields of the "after" (or "before") struct in the envelope's schema */
static const cJSON *row_fields(const cJSON *schema) {
    const cJSON *f, *fields = key(schema, "fields");
    const cJSON *found = NULL;
    cJSON_ArrayForEach(f, fields) {
        const char *n = str(f, "field");
        const cJSON *fl = key(f, "fields");
        if (n && cJSON_GetArraySize(fl) > 0 && (!strcmp(n, "after") || (!found && !strcmp(n, "before"))))
            found = fl;
    }
    return cJSON_IsArray(found) ? found : NULL;
}

static const cJSON *field_schema(const cJSON *fields, const char *name) {
    const cJSON *f;
    cJSON_ArrayForEach(f, fields) {
        const char *n = str(f, "field");
        if (n && !strcmp(n, name)) return f;
    }
    return NULL;
}

/* a heartbeat ({"ts_ms":..}) or a notification ({"id","type",
 * "aggregate_type",..}): nothing to apply */
static bool control(const cJSON *schema, const cJSON *payload) {
    const char *name = str(schema, "name");
    if (name && (!strcmp(name, "io.debezium.connector.common.Heartbeat") ||
                 !strcmp(name, "io.debezium.connector.common.Notification")))
        return true;
    if (str(payload, "aggregate_type") && str(payload, "type") && str(payload, "id")) return true;
    const cJSON *f;
    cJSON_ArrayForEach(f, payload)
        if (strcmp(f->string, "ts_ms")) return false;
    return cJSON_GetArraySize(payload) == 1;
}

/* A null TIME may be a value the connector dropped: Kafka Connect's
 * milliseconds (time.precision.mode=connect) hold 00:00-24:00 only, and a
 * TIME outside comes as null. With schemas d says whether it is connect's;
 * without, the setting must say it is not. */
static bool null_unsure(const bl_column *c, const struct dcol *d, bool schema,
                        const mq_opts *o, char *why, size_t n) {
    if (c->type != BT_TIME2 || (schema ? !d->connect : o->dbz_time == MQ_DBZ_TIME_MICROS))
        return false;
    if (schema || o->dbz_time == MQ_DBZ_TIME_CONNECT)
        errf(why, n, "a null TIME under time.precision.mode=connect, which sends a TIME outside "
             "00:00-24:00 as null: set the connector's time.precision.mode to "
             "adaptive_time_microseconds");
    else
        errf(why, n, "a null TIME, which time.precision.mode=connect also sends for a TIME "
             "outside 00:00-24:00, and the message has no schema saying the mode: set "
             TIME_SETTING " to the connector's time.precision.mode, or turn the JSON "
             "converter's schemas on");
    return true;
}

int mq_debezium(mq_msg *m, const mq_opts *o, const cJSON *root) {
    const cJSON *schema = key(root, "schema");
    const cJSON *payload = key(root, "payload");
    if (!payload) payload = root, schema = NULL;
    if (cJSON_IsNull(payload)) return MQ_OK; /* tombstone */
    if (!cJSON_IsObject(payload)) return mq_fail(m, "Debezium message whose payload is not an object");
    const cJSON *source = key(payload, "source");
    const char *file = str(source, "file"), *gtid = str(source, "gtid");
    int64_t x;
    if (key(source, "ts_ms") && i64_of(key(source, "ts_ms"), &x) && x >= 0) {
        m->ts_ms = (uint64_t)x;
        m->ts = (uint32_t)(x / 1000);
    }
    if (file && file[0] && i64_of(key(source, "pos"), &x) && x >= 0) {
        mq_set_pos(m, file, (uint64_t)x, gtid);
        if (i64_of(key(source, "row"), &x) && x >= 0 && x <= UINT32_MAX) m->pos_row = (uint32_t)x;
    }
    const char *ddl = str(payload, "ddl");
    if (ddl) {
        const char *dbn = str(payload, "databaseName");
        return mq_set_ddl(m, dbn, ddl);
    }
    const char *op = str(payload, "op");
    if (!op) {
        if (str(payload, "status")) return MQ_OK; /* transaction BEGIN/END */
        if (control(schema, payload)) return MQ_OK;
        return mq_fail(m, "Debezium message without \"op\"");
    }
    enum bl_change kind;
    if (!strcmp(op, "c") || !strcmp(op, "r")) kind = BL_INSERT;
    else if (!strcmp(op, "u")) kind = BL_UPDATE;
    else if (!strcmp(op, "d")) kind = BL_DELETE;
    else if (!strcmp(op, "t"))
        return mq_fail(m, "Debezium truncate event (op \"t\"): a TRUNCATE is not applied from Kafka; "
                          "reindex the table, or set skipped.operations=t on the connector");
    else if (!strcmp(op, "m")) return MQ_OK; /* a logical decoding message */
    else return mq_fail(m, "Debezium op \"%.10s\": expected c, r, u or d", op);
    const char *db = str(source, "db"), *tb = str(source, "table");
    if (!db || !tb || !tb[0]) return mq_fail(m, "Debezium %s event without source.db and source.table", op);
    mq_set_table(m, db, tb);
    const cJSON *before = key(payload, "before"), *after = key(payload, "after");
    if (before && !cJSON_IsNull(before) && !cJSON_IsObject(before)) return mq_fail(m, "Debezium \"before\" is not an object");
    if (after && !cJSON_IsNull(after) && !cJSON_IsObject(after)) return mq_fail(m, "Debezium \"after\" is not an object");
    if (!cJSON_IsObject(before)) before = NULL;
    if (!cJSON_IsObject(after)) after = NULL;
    if (kind != BL_DELETE && !after) return mq_fail(m, "Debezium %s event without \"after\"", op);
    if (kind == BL_DELETE && !before) return mq_fail(m, "Debezium delete event without \"before\"");
    if (kind == BL_UPDATE && !before)
        return mq_fail(m, "Debezium update event without \"before\" (is the binlog_row_image FULL?)");
    if (kind == BL_INSERT) before = NULL;
    if (kind == BL_DELETE) after = NULL;

    int looked = mq_lookup_cols(m, o);
    if (looked < 0) return MQ_ERR;
    uint32_t nlook = m->table.ncols;
    const cJSON *fields = row_fields(schema);
    /* the columns: the lookup's, the schema's, then any the images name */
    const cJSON *f;
    cJSON_ArrayForEach(f, fields) {
        const char *n = str(f, "field");
        if (n && mq_find_col(m, n) < 0) mq_add_col(m, n);
    }
    for (int pass = 0; pass < 2; pass++)
        cJSON_ArrayForEach(f, (pass ? before : after))
            if (mq_find_col(m, f->string) < 0) mq_add_col(m, f->string);
    uint32_t nc = m->table.ncols;
    struct dcol *dc = xcalloc(nc ? nc : 1, sizeof *dc);
    int rc = MQ_OK;
    for (uint32_t k = 0; k < nc && rc == MQ_OK; k++) {
        bl_column *c = &m->table.cols[k];
        const cJSON *v = after ? key(after, c->name) : NULL;
        if (!v || cJSON_IsNull(v)) v = before ? key(before, c->name) : NULL;
        const cJSON *fs = fields ? field_schema(fields, c->name) : NULL;
        if (fs) {
            if (col_from_schema(m, o, c, &dc[k], fs, k < nlook) < 0) rc = MQ_ERR;
        } else if (fields && k >= nlook) {
            rc = mq_fail(m, "column %s of %s.%s is not in the message's schema", c->name, db, tb);
        } else {
            if (k >= nlook && (!v || cJSON_IsNull(v))) {
                mq_col_text(c); /* no value, no type: only nulls to store */
                continue;
            }
            col_from_value(o, c, &dc[k], v, k < nlook);
        }
        dc[k].snapshot = !strcmp(op, "r");
        if (rc == MQ_OK && dc[k].rep == R_DECIMAL && dc[k].scale < 0 && k >= nlook)
            rc = mq_fail(m, "column %s of %s.%s: a base64 DECIMAL without a schema cannot be scaled; enable "
                         "the converter's schemas, give the table's columns, or set the connector's "
                         "decimal.handling.mode=string", c->name, db, tb);
        if (rc == MQ_OK && dc[k].infer_fsp) {
            if (after) infer_fsp(c, &dc[k], key(after, c->name));
            if (before) infer_fsp(c, &dc[k], key(before, c->name));
        }
    }
    if (rc == MQ_OK) {
        mq_cols_done(m);
        uint32_t r = mq_add_row(m, kind);
        for (int img = 0; img < 2 && rc == MQ_OK; img++) {
            const cJSON *o2 = img ? after : before;
            if (!o2) continue;
            cJSON_ArrayForEach(f, o2) {
                int k = mq_find_col(m, f->string);
                char why[400];
                if (cJSON_IsNull(f) &&
                    null_unsure(&m->table.cols[k], &dc[k], fields != NULL, o, why, sizeof why)) {
                    mq_val_unsure(m, r, img == 1, (uint32_t)k, "column %s of %s.%s: %s", f->string,
                                  db, tb, why);
                    continue;
                }
                if (mq_put_value(m, r, img == 1, (uint32_t)k, f, enc_value, &dc[k]) < 0) {
                    rc = MQ_ERR;
                    break;
                }
            }
        }
    }
    free(dc);
    return rc;
}
