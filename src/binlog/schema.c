/* schema: column names and types from the server's information_schema, for
 * TABLE_MAPs without full row metadata, and for what even full metadata
 * does not say (MariaDB's JSON is a LONGTEXT with a json_valid() check).
 *
 * Each TABLE_MAP shape is checked once (again after any DDL): the column count
 * and every column's type must match the schema, or decoding stops with an
 * error naming the column, rather than decoding bytes with the wrong layout.
 * Uses its own connection: the replication one is busy streaming. */
#include <ctype.h>
#include <mysql.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "binlog/schema.h"
#include "db.h"

void bl_schema_init(bl_schema *s, MYSQL *(*connect)(void *ctx, char *err, size_t errlen), void *ctx,
                    bool mariadb, bool full_metadata) {
    memset(s, 0, sizeof *s);
    s->connect = connect;
    s->connect_ctx = ctx;
    s->mariadb = mariadb;
    s->full_metadata = full_metadata;
}

void bl_schema_free(bl_schema *s) {
    if (!s) return;
    if (s->conn) mysql_close(s->conn);
    s->conn = NULL;
}

static bool type_ok(uint8_t bt, const char *dt, bool mariadb) {
    struct { const char *name; uint8_t t[3]; } map[] = {
        {"tinyint", {BT_TINY}}, {"smallint", {BT_SHORT}}, {"mediumint", {BT_INT24}},
        {"int", {BT_LONG}}, {"integer", {BT_LONG}}, {"bigint", {BT_LONGLONG}},
        {"float", {BT_FLOAT}}, {"double", {BT_DOUBLE}}, {"decimal", {BT_NEWDECIMAL}},
        {"date", {BT_DATE, BT_NEWDATE}}, {"time", {BT_TIME, BT_TIME2}},
        {"datetime", {BT_DATETIME, BT_DATETIME2}}, {"timestamp", {BT_TIMESTAMP, BT_TIMESTAMP2}},
        {"year", {BT_YEAR}}, {"char", {BT_STRING}}, {"binary", {BT_STRING}},
        {"varchar", {BT_VARCHAR, BT_VAR_STRING}}, {"varbinary", {BT_VARCHAR, BT_VAR_STRING}},
        {"enum", {BT_ENUM}}, {"set", {BT_SET}}, {"bit", {BT_BIT}},
        {"json", {BT_JSON, BT_BLOB}}, {"vector", {BT_VECTOR}},
        {"uuid", {BT_STRING}}, {"inet6", {BT_STRING}}, {"inet4", {BT_STRING, BT_LONG}},
    };
    static const char *blobs[] = {"tinyblob", "blob", "mediumblob", "longblob", "tinytext",
                                  "text", "mediumtext", "longtext"};
    static const char *geoms[] = {"geometry", "point", "linestring", "polygon", "multipoint",
                                  "multilinestring", "multipolygon", "geometrycollection", "geomcollection"};
    (void)mariadb;
    for (size_t i = 0; i < sizeof blobs / sizeof *blobs; i++)
        if (!strcasecmp(dt, blobs[i])) return bt == BT_BLOB;
    for (size_t i = 0; i < sizeof geoms / sizeof *geoms; i++)
        if (!strcasecmp(dt, geoms[i])) return bt == BT_GEOMETRY;
    for (size_t i = 0; i < sizeof map / sizeof *map; i++)
        if (!strcasecmp(dt, map[i].name)) {
            for (int k = 0; k < 3 && map[i].t[k]; k++)
                if (map[i].t[k] == bt) return true;
            return false;
        }
    return true; /* a type we do not know: trust the binlog */
}

/* enum('a','b''c') / set(...) → labels */
static uint32_t parse_labels(const char *ct, char **buf, const char **labels, uint32_t *lens, uint32_t max) {
    const char *p = strchr(ct, '(');
    uint32_t n = 0;
    if (!p) return 0;
    p++;
    size_t cap = strlen(ct) + 1;
    char *o = *buf = xmalloc(cap);
    while (*p && n < max) {
        while (*p == ',' || *p == ' ') p++;
        if (*p != '\'') break;
        p++;
        labels[n] = o;
        const char *st = o;
        while (*p) {
            if (*p == '\'' && p[1] == '\'') { *o++ = '\''; p += 2; continue; }
            if (*p == '\\' && p[1]) { *o++ = p[1]; p += 2; continue; }
            if (*p == '\'') { p++; break; }
            *o++ = *p++;
        }
        lens[n] = (uint32_t)(o - st);
        *o++ = '\0';
        n++;
    }
    return n;
}

/* "'<t's database>' AND TABLE_NAME='<t's name>'", escaped by db_quote */
static void where_table(const bl_schema *s, sbuf *sql, const bl_table *t) {
    db_quote(s->conn, sql, t->db, strlen(t->db));
    sbuf_adds(sql, " AND TABLE_NAME=");
    db_quote(s->conn, sql, t->name, strlen(t->name));
}

static int query(bl_schema *s, const char *sql, MYSQL_RES **res, char *err, size_t errlen) {
    for (int attempt = 0; attempt < 2; attempt++) {
        if (!s->conn) {
            s->conn = s->connect(s->connect_ctx, err, errlen);
            if (!s->conn) return BL_ERR;
        }
        if (mysql_query(s->conn, sql) == 0) {
            *res = mysql_store_result(s->conn);
            if (*res) return BL_OK;
        }
        unsigned e = mysql_errno(s->conn);
        snprintf(err, errlen, "schema query failed: %s", mysql_error(s->conn));
        if (e != 2006 && e != 2013) return BL_ERR;
        mysql_close(s->conn);
        s->conn = NULL;
    }
    return BL_ERR;
}

/* MariaDB's JSON columns are LONGTEXT with CHECK (json_valid(`col`)): the
 * check constraints of the table mark them JSON text. A query that fails
 * leaves them text. */
static void mariadb_json_columns(bl_schema *s, bl_table *t, char *err, size_t errlen) {
    sbuf sql = SBUF_INIT;
    MYSQL_RES *res;
    MYSQL_ROW r;
    sbuf_adds(&sql, "SELECT CHECK_CLAUSE FROM information_schema.CHECK_CONSTRAINTS WHERE "
                    "CONSTRAINT_SCHEMA=");
    where_table(s, &sql, t);
    int qrc = query(s, sql.data, &res, err, errlen);
    sbuf_free(&sql);
    if (qrc == BL_OK) {
        while ((r = mysql_fetch_row(res))) {
            const char *cl = r[0];
            if (!cl || strncasecmp(cl, "json_valid(`", 12) != 0) continue;
            const char *b = cl + 12, *e = strchr(b, '`');
            if (!e || strcmp(e, "`)") != 0) continue;
            for (uint32_t k = 0; k < t->ncols; k++)
                if (t->cols[k].type == BT_BLOB && strlen(t->cols[k].name) == (size_t)(e - b) &&
                    !strncmp(t->cols[k].name, b, (size_t)(e - b)))
                    t->cols[k].kind = BK_JSON_TEXT;
        }
        mysql_free_result(res);
    }
}

int bl_schema_check(bl_schema *s, bl_table *t, char *err, size_t errlen) {
    bool has_blob = false;
    for (uint32_t i = 0; i < t->ncols; i++) {
        const bl_column *c = &t->cols[i];
        has_blob |= c->type == BT_BLOB;
        /* MariaDB's UUID / INET6 / INET4 look like BINARY(16) / BINARY(4) */
        has_blob |= c->type == BT_STRING && c->kind == BK_BINARY && (c->max_len == 16 || c->max_len == 4);
    }
    bool complete = t->have_names && t->have_signedness && t->have_charsets;
    if (complete && !(s->mariadb && has_blob)) return BL_OK;
    if (!s->connect) {
        if (!t->have_names) {
            snprintf(err, errlen, "%s.%s: the binlog has no column metadata (binlog_row_metadata=FULL "
                     "is not set) and no schema connection was given", t->db, t->name);
            return BL_ERR;
        }
        return BL_OK;
    }
    if (!s->conn) {
        s->conn = s->connect(s->connect_ctx, err, errlen);
        if (!s->conn) return BL_ERR;
    }
    sbuf sql = SBUF_INIT;
    sbuf_adds(&sql, "SELECT COLUMN_NAME, DATA_TYPE, COLUMN_TYPE, CHARACTER_SET_NAME FROM "
                    "information_schema.COLUMNS WHERE TABLE_SCHEMA=");
    where_table(s, &sql, t);
    sbuf_adds(&sql, " ORDER BY ORDINAL_POSITION");
    MYSQL_RES *res;
    int qrc = query(s, sql.data, &res, err, errlen);
    sbuf_free(&sql);
    if (qrc != BL_OK) return BL_ERR;
    uint64_t nrows = mysql_num_rows(res);
    if (nrows == 0 && !complete) {
        mysql_free_result(res);
        snprintf(err, errlen, "%s.%s: no column metadata in the binlog (set binlog_row_metadata=FULL) "
                 "and the table no longer exists on the server", t->db, t->name);
        return BL_ERR;
    }
    if (nrows && nrows != t->ncols) {
        mysql_free_result(res);
        if (complete) return BL_OK; /* the binlog describes itself; the schema has moved on */
        snprintf(err, errlen, "%s.%s: the binlog has %u columns but the server's schema has %llu; the "
                 "table was altered after these events were written. Without binlog_row_metadata=FULL "
                 "they cannot be decoded safely: start from a position after the ALTER",
                 t->db, t->name, t->ncols, (unsigned long long)nrows);
        return BL_ERR;
    }
    MYSQL_ROW r;
    uint32_t i = 0;
    int rc = BL_OK;
    while ((r = mysql_fetch_row(res)) && i < t->ncols) {
        bl_column *c = &t->cols[i];
        const char *name = r[0] ? r[0] : "", *dt = r[1] ? r[1] : "", *ct = r[2] ? r[2] : "";
        if (!type_ok(c->type, dt, s->mariadb)) {
            if (complete) { i++; continue; }
            snprintf(err, errlen, "%s.%s: column %u (%s) is type %u in the binlog but %s in the server's "
                     "schema; the table was altered after these events were written. Set "
                     "binlog_row_metadata=FULL or start after the ALTER", t->db, t->name, i + 1, name,
                     c->type, ct);
            rc = BL_ERR;
            break;
        }
        if (!t->have_names) bl_table_set_name(t, i, name, strlen(name));
        if (!t->have_signedness) c->is_unsigned = strstr(ct, "unsigned") != NULL;
        if (!t->have_charsets && (c->kind == BK_TEXT || c->kind == BK_BINARY)) {
            if (!r[3] || !strcmp(r[3], "binary")) {
                c->kind = BK_BINARY;
                c->cs = CS_BINARY;
            } else {
                const char *iconv_name = NULL;
                /* charset name → encoding via a registered collation-less lookup */
                c->kind = BK_TEXT;
                c->cs = (uint8_t)bl_charset_cs(r[3], &iconv_name);
                c->cs_name = iconv_name;
            }
        }
        if ((c->type == BT_ENUM || c->type == BT_SET) && !c->labels) {
            const char *labels[1024];
            uint32_t lens[1024];
            char *buf = NULL;
            uint32_t n = parse_labels(ct, &buf, labels, lens, 1024);
            bl_table_set_labels(t, i, labels, lens, n);
            free(buf);
        }
        if (!strcasecmp(dt, "json") && c->type == BT_BLOB) c->kind = BK_JSON_TEXT;
        if (c->type == BT_STRING) {
            if (!strcasecmp(dt, "uuid") && c->max_len == 16) c->kind = BK_UUID;
            else if (!strcasecmp(dt, "inet6") && c->max_len == 16) c->kind = BK_INET6;
            else if (!strcasecmp(dt, "inet4") && c->max_len == 4) c->kind = BK_INET4;
        }
        i++;
    }
    mysql_free_result(res);
    if (rc != BL_OK) return rc;

    if (s->mariadb && has_blob) mariadb_json_columns(s, t, err, errlen);
    bl_table_finish_keys(t);
    return BL_OK;
}
