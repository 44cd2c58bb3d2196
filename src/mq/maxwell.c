/* maxwell: Maxwell's JSON messages.
 *
 *   {"database":"shop","table":"orders","type":"insert|update|delete",
 *    "ts":<unix s>,"xid":940752,"xoffset":0,"commit":true,
 *    "position":"mysql-bin.000003:1234","gtid":..,"server_id":1,
 *    "data":{"id":1,"price":9.5,..},"old":{"price":9.25}}
 *
 * Values are typed JSON: integers exact (BIGINT UNSIGNED too), DECIMAL and
 * FLOAT/DOUBLE as numbers, DATE/DATETIME/TIME/TIMESTAMP as MySQL's text
 * (TIMESTAMP in UTC), YEAR an integer, BIT an integer (BIT(1) true/false),
 * binary strings base64, JSON columns the JSON value itself, ENUM a label,
 * SET an array of labels. "old" holds the previous values of the changed
 * columns of an UPDATE; the before image is data with those replaced.
 *
 * Types: with the schema lookup every column is exact. Without it the JSON
 * tells only so much, and a column is guessed from its first non-null
 * value: an integer → BIGINT (BIGINT UNSIGNED above 2^63-1), a number with
 * a fraction or exponent → DOUBLE (so a DECIMAL loses its exact scale:
 * 9.50 prints 9.5), a string → text (dates stay their text, binary stays
 * base64 text), true/false → TINYINT 1/0, an array → SET of the labels
 * seen, an object → JSON.
 *
 * What Maxwell reads wrong and the decoder puts back, with the schema
 * lookup (found with Maxwell 1.17.0, tests/fixtures/mq/maxwell/real/):
 *   - YEAR 0000 arrives as 1900 (its binlog client makes a date of it),
 *     which no YEAR column can hold: 1900 is read as 0000 (fix_year).
 *   - MariaDB's JSON column (a LONGTEXT with a json_valid check) is sent as
 *     a string holding its text: that text is the document (the lookup
 *     gives such a column a charset, MySQL's JSON type has none).
 *   - a latin1 column's text is its bytes read as ISO-8859-1, while MySQL's
 *     latin1 is Windows-1252 (0x80 is €, not U+0080): the text is turned
 *     back into the bytes and read as MySQL reads them (latin1_text).
 * What it loses cannot be put back and is documented (docs/kafka.md):
 * fractional seconds of DATETIME/TIMESTAMP/TIME, a TIME outside 0-24 h
 * (wrapped), and a bootstrap's YEAR 0000 (null).
 *
 * DDL (output_ddl: "table-create", "table-alter", "database-*"...) is a
 * statement ("sql"); bootstrap-start/-complete are nothing to apply,
 * bootstrap-insert an insert. Position: "position" "file:offset" and
 * "gtid" when Maxwell was asked to output them (output_binlog_position),
 * "xoffset" the row's order within its transaction. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "json_exact.h"
#include "mq/mq.h"

static bool raw_is_int(const char *s) {
    for (const char *p = s; *p; p++)
        if (*p == '.' || *p == 'e' || *p == 'E') return false;
    return true;
}

/* a column's shape from a value, without the schema */
static int guess(mq_msg *m, bl_column *c, const cJSON *v) {
    if (cJSON_IsRaw(v)) {
        if (raw_is_int(v->valuestring)) {
            bool neg;
            uint64_t mag;
            if (mq_parse_int(v->valuestring, strlen(v->valuestring), &neg, &mag) < 0)
                return mq_fail(m, "column %s: %s is out of BIGINT's range", c->name, v->valuestring);
            mq_col_simple(c, BT_LONGLONG, !neg && mag > INT64_MAX);
        } else {
            mq_col_simple(c, BT_DOUBLE, false);
        }
    } else if (cJSON_IsBool(v)) {
        mq_col_simple(c, BT_TINY, false);
    } else if (cJSON_IsObject(v)) {
        mq_col_json(c);
    } else if (cJSON_IsArray(v)) {
        /* the SET's members as seen in this value */
        const char *labels[64];
        uint32_t lens[64], n = 0;
        const cJSON *e;
        cJSON_ArrayForEach(e, v) {
            if (!cJSON_IsString(e) || n == 64) {
                mq_col_json(c); /* not a SET: a JSON array */
                return 0;
            }
            labels[n] = e->valuestring;
            lens[n++] = (uint32_t)strlen(e->valuestring);
        }
        mq_col_labels(m, c, BT_SET, labels, lens, n);
    } else {
        mq_col_text(c);
    }
    return 0;
}

/* a SET column guessed from one value learns the members other values use */
static void learn_set(mq_msg *m, bl_column *c, const cJSON *v) {
    if (c->type != BT_SET || !cJSON_IsArray(v)) return;
    const cJSON *e;
    cJSON_ArrayForEach(e, v) {
        if (!cJSON_IsString(e)) continue;
        size_t l = strlen(e->valuestring);
        bool have = false;
        for (uint32_t k = 0; k < c->n_labels; k++)
            if (c->label_lens[k] == l && !memcmp(c->labels[k], e->valuestring, l)) have = true;
        if (have || c->n_labels == 64) continue;
        const char *labels[64];
        uint32_t lens[64];
        for (uint32_t k = 0; k < c->n_labels; k++) labels[k] = c->labels[k], lens[k] = c->label_lens[k];
        labels[c->n_labels] = e->valuestring;
        lens[c->n_labels] = (uint32_t)l;
        mq_col_labels(m, c, BT_SET, labels, lens, c->n_labels + 1);
    }
}

/* A latin1 column's text as Maxwell sends it: the column's bytes read as
 * ISO-8859-1 (one character per byte, U+0000-U+00FF). MySQL reads latin1
 * as Windows-1252, so the bytes are taken back and read that way; a
 * character above U+00FF cannot come from such a reading and is kept as it
 * is. */
static void latin1_text(sbuf *out, const char *s, size_t n) {
    sbuf b = SBUF_INIT;
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (ch < 0x80) {
            sbuf_addc(&b, (char)ch);
        } else if ((ch == 0xC2 || ch == 0xC3) && i + 1 < n && ((unsigned char)s[i + 1] & 0xC0) == 0x80) {
            sbuf_addc(&b, (char)((ch & 0x03) << 6 | ((unsigned char)s[i + 1] & 0x3F)));
            i++;
        } else {
            sbuf_free(&b);
            sbuf_add(out, s, n); /* not an ISO-8859-1 reading: as sent */
            return;
        }
    }
    bl_latin1_utf8(out, (const uint8_t *)(b.data ? b.data : ""), b.len);
    sbuf_free(&b);
}

/* Maxwell's YEAR 1900 is YEAR 0000: no YEAR column holds 1900 (1901-2155
 * and 0000), and Maxwell's binlog client turns 0000 into 1900 */
static bool fix_year(const bl_column *c, const cJSON *v) {
    return c->type == BT_YEAR && cJSON_IsRaw(v) && !strcmp(v->valuestring, "1900");
}

/* one value of column c as Maxwell writes it (mq_put_value's encoder) */
static int enc_value(sbuf *out, const bl_column *c, const cJSON *v, const void *ud, char *err,
                     size_t errlen) {
    (void)ud;
    int r = -1;
    if (c->kind == BK_JSON_TEXT && cJSON_IsString(v) && c->cs_name) {
        /* MariaDB's JSON (a LONGTEXT, which has a charset): Maxwell sends its
         * text as a string, and that text is the document */
        r = mq_enc_bytes(out, c, (const uint8_t *)v->valuestring, json_exact_strlen(v), err, errlen);
    } else if (c->kind == BK_JSON_TEXT) {
        char *txt = cJSON_PrintUnformatted(v);
        r = mq_enc_bytes(out, c, (const uint8_t *)txt, strlen(txt), err, errlen);
        cJSON_free(txt);
    } else if (cJSON_IsBool(v)) {
        if (c->type == BT_BIT) r = mq_enc_bit(out, c, cJSON_IsTrue(v), err, errlen);
        else r = mq_enc_text(out, c, cJSON_IsTrue(v) ? "1" : "0", 1, 0, err, errlen);
    } else if (cJSON_IsArray(v)) {
        if (c->type != BT_SET) {
            r = errf(err, errlen, "an array for a column that is not a SET");
        } else {
            sbuf t = SBUF_INIT;
            const cJSON *e;
            bool ok = true;
            cJSON_ArrayForEach(e, v) {
                if (!cJSON_IsString(e)) ok = false;
                else {
                    if (t.len) sbuf_addc(&t, ',');
                    sbuf_adds(&t, e->valuestring);
                }
            }
            r = ok ? mq_enc_text(out, c, t.data ? t.data : "", t.len, 0, err, errlen)
                   : errf(err, errlen, "a SET's members must be strings");
            sbuf_free(&t);
        }
    } else if (fix_year(c, v)) {
        r = mq_enc_year(out, 0, err, errlen);
    } else if (cJSON_IsString(v) || cJSON_IsRaw(v)) {
        const char *s = v->valuestring;
        size_t n = json_exact_strlen(v); /* (NUL characters included) */
        if (cJSON_IsString(v) && mq_col_is_text(c) && c->cs_name && !strcmp(c->cs_name, "latin1")) {
            sbuf t = SBUF_INIT;
            latin1_text(&t, s, n);
            r = mq_enc_bytes(out, c, (const uint8_t *)(t.data ? t.data : ""), t.len, err, errlen);
            sbuf_free(&t);
        } else if (mq_col_is_binary(c)) {
            sbuf b = SBUF_INIT;
            if (!cJSON_IsString(v) || mq_base64_decode(&b, s, n) < 0)
                r = errf(err, errlen, "a binary value that is not base64");
            else
                r = mq_enc_bytes(out, c, (const uint8_t *)(b.data ? b.data : ""), b.len, err, errlen);
            sbuf_free(&b);
        } else if (c->type == BT_GEOMETRY) {
            r = errf(err, errlen, "GEOMETRY values from Maxwell (WKT text) are not supported");
        } else if (mq_col_is_text(c) && cJSON_IsRaw(v)) {
            r = mq_enc_bytes(out, c, (const uint8_t *)s, n, err, errlen); /* a number in a text column */
        } else {
            r = mq_enc_text(out, c, s, n, 0, err, errlen);
        }
    } else {
        r = errf(err, errlen, "an object for a column that is not JSON");
    }
    return r;
}

int mq_maxwell(mq_msg *m, const mq_opts *o, const cJSON *root) {
    const cJSON *db = cJSON_GetObjectItemCaseSensitive(root, "database");
    const cJSON *tb = cJSON_GetObjectItemCaseSensitive(root, "table");
    const cJSON *type = cJSON_GetObjectItemCaseSensitive(root, "type");
    const cJSON *ts = cJSON_GetObjectItemCaseSensitive(root, "ts");
    const cJSON *posj = cJSON_GetObjectItemCaseSensitive(root, "position");
    const cJSON *gtid = cJSON_GetObjectItemCaseSensitive(root, "gtid");
    const cJSON *xoff = cJSON_GetObjectItemCaseSensitive(root, "xoffset");
    bool neg;
    uint64_t u;
    if (cJSON_IsRaw(ts) && mq_parse_int(ts->valuestring, strlen(ts->valuestring), &neg, &u) == 0 && !neg) {
        mq_set_ts(m, u); /* seconds; DDL messages carry millis */
    }
    if (cJSON_IsString(posj)) {
        const char *s = posj->valuestring, *colon = strrchr(s, ':');
        if (!colon || colon == s || mq_parse_int(colon + 1, strlen(colon + 1), &neg, &u) < 0 || neg)
            return mq_fail(m, "Maxwell position \"%.80s\" is not \"file:offset\"", s);
        char file[BL_FILE_MAX];
        snprintf(file, sizeof file, "%.*s", (int)(colon - s), s);
        mq_set_pos(m, file, u, cJSON_IsString(gtid) ? gtid->valuestring : NULL);
        if (cJSON_IsRaw(xoff) && mq_parse_int(xoff->valuestring, strlen(xoff->valuestring), &neg, &u) == 0 &&
            !neg && u <= UINT32_MAX)
            m->pos_row = (uint32_t)u;
    }
    if (!cJSON_IsString(type)) return mq_fail(m, "Maxwell message without a \"type\" string");
    const char *t = type->valuestring;
    if (!strncmp(t, "table-", 6) || !strncmp(t, "database-", 9)) {
        const cJSON *sql = cJSON_GetObjectItemCaseSensitive(root, "sql");
        return mq_set_ddl(m, cJSON_IsString(db) ? db->valuestring : NULL,
                          cJSON_IsString(sql) ? sql->valuestring : NULL);
    }
    if (!strcmp(t, "bootstrap-start") || !strcmp(t, "bootstrap-complete")) return MQ_OK;
    enum bl_change kind;
    if (!strcmp(t, "insert") || !strcmp(t, "bootstrap-insert")) kind = BL_INSERT;
    else if (!strcmp(t, "update")) kind = BL_UPDATE;
    else if (!strcmp(t, "delete")) kind = BL_DELETE;
    else return mq_fail(m, "Maxwell message of type \"%.40s\": expected insert, update, delete or a DDL", t);
    if (mq_set_table_json(m, "Maxwell", t, db, tb) != MQ_OK) return MQ_ERR;
    const cJSON *data = cJSON_GetObjectItemCaseSensitive(root, "data");
    const cJSON *old = cJSON_GetObjectItemCaseSensitive(root, "old");
    if (!cJSON_IsObject(data)) return mq_fail(m, "Maxwell %s message without a \"data\" object", t);
    if (old && !cJSON_IsNull(old) && !cJSON_IsObject(old))
        return mq_fail(m, "Maxwell message whose \"old\" is not an object");
    if (!cJSON_IsObject(old)) old = NULL;

    int looked = mq_lookup_cols(m, o);
    if (looked < 0) return MQ_ERR;
    uint32_t nlook = m->table.ncols; /* columns the schema gave: exact */
    const cJSON *f;
    for (int pass = 0; pass < 2; pass++) {
        cJSON_ArrayForEach(f, (pass ? old : data)) {
            int k = mq_find_col(m, f->string);
            if (k < 0) {
                k = (int)mq_add_col(m, f->string);
                m->table.cols[k].nullable = true;
                mq_col_text(&m->table.cols[k]); /* until a value says more */
                m->table.cols[k].map_type = 0; /* marks "guessed, no value yet" */
            }
            bl_column *c = &m->table.cols[k];
            if (c->map_type == 0 && !cJSON_IsNull(f)) {
                if (guess(m, c, f) < 0) return MQ_ERR;
                if (c->map_type == 0) c->map_type = c->type;
            } else if (c->type == BT_SET && (uint32_t)k >= nlook) {
                learn_set(m, c, f);
            }
        }
        if (!old) break;
    }
    for (uint32_t k = 0; k < m->table.ncols; k++)
        if (m->table.cols[k].map_type == 0) m->table.cols[k].map_type = m->table.cols[k].type;
    const cJSON *pk = cJSON_GetObjectItemCaseSensitive(root, "primary_key_columns");
    if (cJSON_IsArray(pk)) {
        cJSON_ArrayForEach(f, pk) {
            int k = cJSON_IsString(f) ? mq_find_col(m, f->valuestring) : -1;
            if (k >= 0) m->table.cols[k].is_pk = true;
        }
    }
    mq_cols_done(m);

    uint32_t r = mq_add_row(m, kind);
    cJSON_ArrayForEach(f, data) {
        uint32_t k = (uint32_t)mq_find_col(m, f->string);
        if (mq_put_value(m, r, kind != BL_DELETE, k, f, enc_value, NULL) < 0) return MQ_ERR;
        if (kind == BL_UPDATE) {
            const cJSON *ov = old ? cJSON_GetObjectItemCaseSensitive(old, f->string) : NULL;
            if (mq_put_value(m, r, false, k, ov ? ov : f, enc_value, NULL) < 0) return MQ_ERR;
        }
    }
    return MQ_OK;
}
