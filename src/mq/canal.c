/* canal: canal's flat JSON messages (canal.mq.flatMessage = true).
 *
 *   {"id":3,"database":"shop","table":"orders","pkNames":["id"],"isDdl":false,
 *    "type":"INSERT|UPDATE|DELETE","es":<binlog ms>,"ts":<sent ms>,"sql":"",
 *    "sqlType":{"id":-5,..},"mysqlType":{"id":"bigint(20) unsigned",..},
 *    "data":[{"id":"1",..},..],"old":[{"price":"9.50"},..]}
 *
 * Every value is a string (or null), in MySQL's text form; binary columns
 * (BINARY, VARBINARY, BLOB, GEOMETRY) are their bytes read as ISO-8859-1,
 * so each character is one byte (0x00 is \u0000, which the message parser
 * keeps: json_exact_parse_nul). mysqlType is the column's full type
 * (information_schema COLUMN_TYPE), which gives the exact binlog type,
 * precision, scale, fsp, signedness and ENUM/SET members; sqlType (a
 * java.sql.Types code) is used only for a column mysqlType lacks. "data"
 * holds the full rows (after images; for DELETE the deleted rows), "old"
 * the previous values of the changed columns of each UPDATE row: the before
 * image is the row with those replaced. One message may carry many rows of
 * one table. ENUM/SET values are labels; a number that is not a label is
 * taken as the index / bit mask (canal 1.1.4 writes those).
 * TIMESTAMP text is in canal's JVM time zone (mq_opts.canal_tz_offset).
 *
 * DDL (isDdl true, or type QUERY/CREATE/ALTER/ERASE/...) is reported as a
 * statement. Positions: canal's flat message carries none itself; when a
 * producer adds "logfileName"/"logfileOffset" (and "gtid") they are used. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <cjson/cJSON.h>

#include "json_exact.h"
#include "mq/mq.h"

/* a JSON number (raw exact text) or numeric string → u64 */
static bool num_u64(const cJSON *j, uint64_t *v) {
    const char *s = NULL;
    if (cJSON_IsRaw(j)) s = j->valuestring;
    else if (cJSON_IsString(j)) s = j->valuestring;
    else if (cJSON_IsNumber(j) && j->valuedouble >= 0) {
        *v = (uint64_t)j->valuedouble;
        return true;
    }
    bool neg;
    return s && mq_parse_int(s, strlen(s), &neg, v) == 0 && !neg;
}

/* java.sql.Types code → a column shape, for a column without mysqlType */
static void from_sqltype(bl_column *c, long code) {
    switch (code) {
    case -6: case 5: case 4: case -5: mq_col_simple(c, BT_LONGLONG, false); break;
    case 6: case 7: case 8: mq_col_simple(c, BT_DOUBLE, false); break;
    case -2: case -3: case -4: case 2004: mq_col_bytes(c); break;
    default: mq_col_text(c); break; /* DECIMAL without its scale, dates, text: as text */
    }
}

/* canal's ISO-8859-1 reading of bytes, back to the bytes */
static int latin1_bytes(sbuf *out, const char *s, size_t n) {
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (ch < 0x80) {
            sbuf_addc(out, (char)ch);
        } else if ((ch == 0xC2 || ch == 0xC3) && i + 1 < n && ((unsigned char)s[i + 1] & 0xC0) == 0x80) {
            sbuf_addc(out, (char)((ch & 0x03) << 6 | ((unsigned char)s[i + 1] & 0x3F)));
            i++;
        } else {
            return -1;
        }
    }
    return 0;
}

/* one value of column c: canal writes every one as text, bytes as
 * ISO-8859-1 (mq_put_value's encoder; ud: the mq_opts) */
static int enc_value(sbuf *out, const bl_column *c, const cJSON *v, const void *ud, char *err,
                     size_t errlen) {
    const mq_opts *o = ud;
    const char *s = cJSON_IsBool(v) ? (cJSON_IsTrue(v) ? "1" : "0") : v->valuestring;
    /* (a binary value's 0x00 bytes are \u0000 characters: the whole text) */
    size_t n = cJSON_IsBool(v) ? 1 : json_exact_strlen(v);
    if (!mq_col_is_binary(c) && c->type != BT_GEOMETRY)
        return mq_enc_text(out, c, s, n, o->canal_tz_offset, err, errlen);
    sbuf b = SBUF_INIT;
    int r = latin1_bytes(&b, s, n);
    if (r < 0)
        r = errf(err, errlen, "a binary value with a character above U+00FF (canal writes "
                              "bytes as ISO-8859-1 text)");
    else
        r = mq_enc_bytes(out, c, (const uint8_t *)(b.data ? b.data : ""), b.len, err, errlen);
    sbuf_free(&b);
    return r;
}

static int put_value(mq_msg *m, const mq_opts *o, uint32_t row, bool after, uint32_t col,
                     const cJSON *v) {
    if (!cJSON_IsNull(v) && !cJSON_IsString(v) && !cJSON_IsRaw(v) && !cJSON_IsBool(v))
        return mq_fail(m, "column %s: canal values are strings, found a JSON %s",
                       m->table.cols[col].name,
                       cJSON_IsObject(v) ? "object" : cJSON_IsArray(v) ? "array" : "value");
    return mq_put_value(m, row, after, col, v, enc_value, o);
}

/* one image from a data object, with old's fields over it when given */
static int put_image(mq_msg *m, const mq_opts *o, uint32_t row, bool after, const cJSON *data,
                     const cJSON *old) {
    const cJSON *f;
    cJSON_ArrayForEach(f, data) {
        int col = mq_find_col(m, f->string);
        if (col < 0) return mq_fail(m, "column %s of %s.%s is not in the table", f->string, m->table.db, m->table.name);
        const cJSON *v = f;
        if (old) {
            const cJSON *ov = cJSON_GetObjectItemCaseSensitive(old, f->string);
            if (ov) v = ov;
        }
        if (put_value(m, o, row, after, (uint32_t)col, v) < 0) return -1;
    }
    return 0;
}

static bool is_ddl_type(const char *t) {
    static const char *const ddl[] = {"QUERY", "CREATE", "ALTER", "ERASE", "TRUNCATE", "RENAME",
                                      "CINDEX", "DINDEX", "GTID"};
    for (size_t i = 0; i < sizeof ddl / sizeof ddl[0]; i++)
        if (!strcmp(t, ddl[i])) return true;
    return false;
}

int mq_canal(mq_msg *m, const mq_opts *o, const cJSON *root) {
    const cJSON *db = cJSON_GetObjectItemCaseSensitive(root, "database");
    const cJSON *tb = cJSON_GetObjectItemCaseSensitive(root, "table");
    const cJSON *type = cJSON_GetObjectItemCaseSensitive(root, "type");
    const cJSON *isddl = cJSON_GetObjectItemCaseSensitive(root, "isDdl");
    const cJSON *es = cJSON_GetObjectItemCaseSensitive(root, "es");
    uint64_t u;
    if (es && num_u64(es, &u)) mq_set_ts(m, u); /* es is milliseconds; some producers write seconds */
    const cJSON *lf = cJSON_GetObjectItemCaseSensitive(root, "logfileName");
    const cJSON *lo = cJSON_GetObjectItemCaseSensitive(root, "logfileOffset");
    const cJSON *gt = cJSON_GetObjectItemCaseSensitive(root, "gtid");
    if (cJSON_IsString(lf) && lf->valuestring[0] && lo && num_u64(lo, &u))
        mq_set_pos(m, lf->valuestring, u, cJSON_IsString(gt) ? gt->valuestring : NULL);
    if (!cJSON_IsString(type)) return mq_fail(m, "canal message without a \"type\" string");
    if (cJSON_IsTrue(isddl) || is_ddl_type(type->valuestring)) {
        const cJSON *sql = cJSON_GetObjectItemCaseSensitive(root, "sql");
        return mq_set_ddl(m, cJSON_IsString(db) ? db->valuestring : NULL,
                          cJSON_IsString(sql) ? sql->valuestring : NULL);
    }
    enum bl_change kind;
    const char *t = type->valuestring;
    if (!strcmp(t, "INSERT")) kind = BL_INSERT;
    else if (!strcmp(t, "UPDATE")) kind = BL_UPDATE;
    else if (!strcmp(t, "DELETE")) kind = BL_DELETE;
    else return mq_fail(m, "canal message of type \"%.40s\": expected INSERT, UPDATE, DELETE or a DDL", t);
    if (mq_set_table_json(m, "canal", t, db, tb) != MQ_OK) return MQ_ERR;

    const cJSON *data = cJSON_GetObjectItemCaseSensitive(root, "data");
    const cJSON *old = cJSON_GetObjectItemCaseSensitive(root, "old");
    const cJSON *mt = cJSON_GetObjectItemCaseSensitive(root, "mysqlType");
    const cJSON *st = cJSON_GetObjectItemCaseSensitive(root, "sqlType");
    const cJSON *pks = cJSON_GetObjectItemCaseSensitive(root, "pkNames");
    if (!cJSON_IsArray(data)) return mq_fail(m, "canal %s message without a \"data\" array", t);
    if (old && !cJSON_IsNull(old) && !cJSON_IsArray(old))
        return mq_fail(m, "canal message whose \"old\" is not an array");

    /* columns: the schema's, then mysqlType's, then any other a row names */
    if (mq_lookup_cols(m, o) < 0) return MQ_ERR;
    char err[256];
    const cJSON *f;
    if (cJSON_IsObject(mt)) {
        cJSON_ArrayForEach(f, mt) {
            if (mq_find_col(m, f->string) >= 0) continue;
            if (!cJSON_IsString(f)) return mq_fail(m, "mysqlType of column %s is not a string", f->string);
            uint32_t k = mq_add_col(m, f->string);
            if (mq_col_type(m, &m->table.cols[k], f->valuestring, err, sizeof err) < 0)
                return mq_fail(m, "column %s of %s.%s: %s", f->string, m->table.db, m->table.name, err);
        }
    }
    const cJSON *row;
    cJSON_ArrayForEach(row, data) {
        if (!cJSON_IsObject(row)) return mq_fail(m, "canal \"data\" holds something other than row objects");
        cJSON_ArrayForEach(f, row) {
            if (mq_find_col(m, f->string) >= 0) continue;
            uint32_t k = mq_add_col(m, f->string);
            const cJSON *code = cJSON_IsObject(st) ? cJSON_GetObjectItemCaseSensitive(st, f->string) : NULL;
            from_sqltype(&m->table.cols[k], code && (cJSON_IsRaw(code) || cJSON_IsNumber(code))
                                                ? (cJSON_IsRaw(code) ? strtol(code->valuestring, NULL, 10)
                                                                     : (long)code->valuedouble)
                                                : 12);
        }
    }
    if (cJSON_IsArray(pks)) {
        cJSON_ArrayForEach(f, pks) {
            int k = cJSON_IsString(f) ? mq_find_col(m, f->valuestring) : -1;
            if (k >= 0) m->table.cols[k].is_pk = true;
        }
    }
    mq_cols_done(m);

    int ndata = cJSON_GetArraySize(data);
    int nold = cJSON_IsArray(old) ? cJSON_GetArraySize(old) : 0;
    if (kind == BL_UPDATE && nold != ndata)
        return mq_fail(m, "canal UPDATE message with %d rows in \"data\" but %d in \"old\"", ndata, nold);
    const cJSON *orow = cJSON_IsArray(old) ? old->child : NULL;
    cJSON_ArrayForEach(row, data) {
        uint32_t r = mq_add_row(m, kind);
        if (kind == BL_DELETE) {
            if (put_image(m, o, r, false, row, NULL) < 0) return MQ_ERR;
        } else {
            if (put_image(m, o, r, true, row, NULL) < 0) return MQ_ERR;
            if (kind == BL_UPDATE) {
                if (!cJSON_IsObject(orow)) return mq_fail(m, "canal \"old\" holds something other than row objects");
                if (put_image(m, o, r, false, row, orow) < 0) return MQ_ERR;
                orow = orow->next;
            }
        }
    }
    return MQ_OK;
}
