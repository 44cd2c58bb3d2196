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
 * ({"ddl":..,"databaseName":..}) are statements, and so is op "t" (a
 * TRUNCATE TABLE of its table); those of a snapshot (DROP TABLE IF EXISTS,
 * CREATE TABLE for each table) describe the schema, and are marked
 * replayed. Position: source file/pos (the event's),
 * row (the row within the event) and gtid; a snapshot read (op "r")
 * carries the binlog position the snapshot was taken at. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <cjson/cJSON.h>

#include "db.h"
#include "json_exact.h"
#include "mq/mq.h"

#include "mq/debezium_int.h"

/* ------------------------------------------------------------- columns */
/* A field's representation, from its schema's logical name and type. */
static int rep_of(const char *name, const char *type) {
    if (!strcmp(name, "org.apache.kafka.connect.data.Decimal")) return R_DECIMAL;
    if (!strcmp(name, "io.debezium.time.Date") || !strcmp(name, "org.apache.kafka.connect.data.Date")) return R_DAYS;
    if (!strcmp(name, "io.debezium.time.Timestamp") || !strcmp(name, "org.apache.kafka.connect.data.Timestamp")) return R_MILLIS_DT;
    if (!strcmp(name, "io.debezium.time.MicroTimestamp")) return R_MICROS_DT;
    if (!strcmp(name, "io.debezium.time.NanoTimestamp")) return R_NANOS_DT;
    if (!strcmp(name, "io.debezium.time.ZonedTimestamp")) return R_ZONED;
    if (!strcmp(name, "io.debezium.time.MicroTime")) return R_MICROS_TIME;
    if (!strcmp(name, "io.debezium.time.Time") || !strcmp(name, "org.apache.kafka.connect.data.Time")) return R_MILLIS_TIME;
    if (!strcmp(name, "io.debezium.time.NanoTime")) return R_NANOS_TIME;
    if (!strcmp(name, "io.debezium.time.Year")) return R_YEAR;
    if (!strcmp(name, "io.debezium.data.Json")) return R_JSON;
    if (!strcmp(name, "io.debezium.data.Bits")) return R_BITS;
    if (!strncmp(name, "io.debezium.data.geometry.", 26)) return R_GEOM;
    if (!strcmp(type, "bytes")) return R_BYTES;
    return R_PLAIN;
}

/* The column typed from __debezium.source.column.type (with its length and
 * scale), when the connector propagated it (column.propagate.source.type)
 * and it is no ENUM or SET; true when that gave the type. */
static bool col_from_source_type(mq_msg *m, bl_column *c, const cJSON *params) {
    char err[256];
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
        return mq_col_type(m, c, t, err, sizeof err) == 0;
    }
    return false;
}

static int col_from_schema(mq_msg *m, const mq_opts *o, bl_column *c, struct dcol *d,
                           const cJSON *fs, bool typed) {
    const char *type = str(fs, "type"), *name = str(fs, "name");
    const cJSON *params = key(fs, "parameters");
    d->scale = -1;
    if (!type) type = "";
    if (!name) name = "";
    d->rep = rep_of(name, type);
    if (d->rep == R_DECIMAL) {
        const char *sc = str(params, "scale");
        d->scale = sc ? atoi(sc) : 0;
    }
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
    if (col_from_source_type(m, c, params)) return 0;
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
        /* the schema's "allowed" labels */
        if (mq_col_labels_list(m, c, name[17] == 'E' && name[21] == 'S' ? BT_SET : BT_ENUM,
                               str(params, "allowed")) < 0)
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

/* A truncate event (op "t", sent when skipped.operations leaves truncates
 * in; the connector's default skips them and then sends nothing at all for
 * a TRUNCATE) carries no rows: it is the statement it stands for, which
 * the daemon takes as it takes one read from the binlog (its index configs
 * rebuilt from MySQL). */
static int truncated(mq_msg *m, const cJSON *source) {
    const char *db = str(source, "db"), *tb = str(source, "table");
    if (!db || !db[0] || !tb || !tb[0])
        return mq_fail(m, "Debezium truncate event (op \"t\") without source.db and source.table");
    sbuf b = SBUF_INIT;
    sbuf_adds(&b, "TRUNCATE TABLE ");
    db_ident(&b, db);
    sbuf_addc(&b, '.');
    db_ident(&b, tb);
    int rc = mq_set_ddl(m, db, b.data);
    sbuf_free(&b);
    return rc;
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

/* Each column typed from its field's schema, else its value, with what its
 * values need (dc[k]; snapshot: op "r"). MQ_OK or MQ_ERR, the problem said. */
static int type_columns(mq_msg *m, const mq_opts *o, struct dcol *dc, const cJSON *fields,
                        const cJSON *before, const cJSON *after, uint32_t nlook, bool snapshot) {
    int rc = MQ_OK;
    const char *db = m->table.db, *tb = m->table.name;
    uint32_t nc = m->table.ncols;
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
        dc[k].snapshot = snapshot;
        if (rc == MQ_OK && dc[k].rep == R_DECIMAL && dc[k].scale < 0 && k >= nlook)
            rc = mq_fail(m, "column %s of %s.%s: a base64 DECIMAL without a schema cannot be scaled; enable "
                         "the converter's schemas, give the table's columns, or set the connector's "
                         "decimal.handling.mode=string", c->name, db, tb);
        if (rc == MQ_OK && dc[k].infer_fsp) {
            if (after) dbz_infer_fsp(c, &dc[k], key(after, c->name));
            if (before) dbz_infer_fsp(c, &dc[k], key(before, c->name));
        }
    }
    return rc;
}

/* Is the message part of a snapshot? source.snapshot is "true", "first",
 * "last" ... while the connector snapshots ("incremental" for an
 * incremental snapshot's reads) and "false" or absent after; releases
 * before 1.0 sent a boolean. */
static bool in_snapshot(const cJSON *source) {
    const cJSON *s = key(source, "snapshot");
    if (cJSON_IsBool(s)) return cJSON_IsTrue(s);
    return cJSON_IsString(s) && s->valuestring[0] && strcmp(s->valuestring, "false") != 0;
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
        int rc = mq_set_ddl(m, dbn, ddl);
        m->ddl_replayed = in_snapshot(source);
        return rc;
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
    else if (!strcmp(op, "t")) return truncated(m, source);
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
    int rc = type_columns(m, o, dc, fields, before, after, nlook, !strcmp(op, "r"));
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
                if (mq_put_value(m, r, img == 1, (uint32_t)k, f, dbz_enc_value, &dc[k]) < 0) {
                    rc = MQ_ERR;
                    break;
                }
            }
        }
    }
    free(dc);
    return rc;
}
