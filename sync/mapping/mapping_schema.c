/* mapping_schema: what the source has for a mapping (mapping.h): the
 * columns of every table a mapping reads, with their types, keys, leading
 * index columns and whether the table is InnoDB, from information_schema
 * (mapping_schema_load); and each where condition of a mapping tried on the
 * source (mapping_check_where). Every value reaches SQL through db_quote. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mysql.h>

#include "db.h"
#include "sync/mapping/mapping.h"

static void add_pair(MYSQL *m, sbuf *in, int *n, const char *db, const char *t) {
    if (!db || !t) return;
    sbuf_adds(in, *n ? ",(" : "(");
    db_quote(m, in, db, strlen(db));
    sbuf_addc(in, ',');
    db_quote(m, in, t, strlen(t));
    sbuf_addc(in, ')');
    (*n)++;
}

static void add_rel_pairs(MYSQL *m, sbuf *in, int *n, const struct mp_relation *r, size_t nr) {
    for (size_t i = 0; i < nr; i++) {
        add_pair(m, in, n, r[i].db, r[i].table);
        add_rel_pairs(m, in, n, r[i].relations, r[i].nrelations);
    }
}

int mapping_schema_load(MYSQL *src, const struct mapping *mp, struct mp_schema *out, char *err,
                        size_t errlen) {
    memset(out, 0, sizeof *out);
    sbuf sql = SBUF_INIT;
    int n = 0;
    /* MariaDB reports a JSON column as longtext with a json_valid() check */
    const char *ver = mysql_get_server_info(src);
    bool mariadb = ver && strstr(ver, "MariaDB");
    sbuf_adds(&sql, "SELECT TABLE_SCHEMA, TABLE_NAME, COLUMN_NAME, ");
    if (mariadb)
        sbuf_adds(&sql, "CASE WHEN DATA_TYPE = 'longtext' AND EXISTS (SELECT 1 FROM "
                        "information_schema.CHECK_CONSTRAINTS k WHERE k.CONSTRAINT_SCHEMA = "
                        "c.TABLE_SCHEMA AND k.TABLE_NAME = c.TABLE_NAME AND k.CHECK_CLAUSE = "
                        "CONCAT('json_valid(`', c.COLUMN_NAME, '`)')) THEN 'json' "
                        "ELSE COLUMN_TYPE END, ");
    else
        sbuf_adds(&sql, "COLUMN_TYPE, ");
    sbuf_adds(&sql, "COLUMN_KEY = 'PRI', COLUMN_KEY = 'UNI', COLLATION_NAME, "
                    "COLUMN_KEY IN ('UNI', 'MUL') FROM information_schema.COLUMNS c "
                    "WHERE (TABLE_SCHEMA, TABLE_NAME) IN (");
    sbuf pairs = SBUF_INIT;
    for (size_t i = 0; i < mp->nindices; i++)
        for (size_t j = 0; j < mp->indices[i].ntables; j++) {
            const struct mp_table *t = &mp->indices[i].tables[j];
            add_pair(src, &pairs, &n, t->db, t->table);
            add_rel_pairs(src, &pairs, &n, t->relations, t->nrelations);
        }
    if (!n) {
        sbuf_free(&sql);
        sbuf_free(&pairs);
        return 0;
    }
    sbuf_add(&sql, pairs.data, pairs.len);
    sbuf_adds(&sql, ") ORDER BY TABLE_SCHEMA, TABLE_NAME, ORDINAL_POSITION");
    MYSQL_RES *r = db_query(src, sql.data, sql.len, err, errlen);
    if (!r) goto fail;
    MYSQL_ROW row;
    while ((row = mysql_fetch_row(r))) {
        mp_schema_add(out, row[0], row[1], row[2], row[3], row[4] && row[4][0] == '1');
        out->cols[out->n - 1].unique = row[5] && row[5][0] == '1';
        out->cols[out->n - 1].collation = row[6] ? xstrdup(row[6]) : NULL;
        out->cols[out->n - 1].leads_index = row[7] && row[7][0] == '1';
    }
    mysql_free_result(r);
    /* the tables whose secondary index entries hold the primary key */
    sbuf_reset(&sql);
    sbuf_adds(&sql, "SELECT TABLE_SCHEMA, TABLE_NAME FROM information_schema.TABLES "
                    "WHERE ENGINE = 'InnoDB' AND (TABLE_SCHEMA, TABLE_NAME) IN (");
    sbuf_add(&sql, pairs.data, pairs.len);
    sbuf_addc(&sql, ')');
    if (!(r = db_query(src, sql.data, sql.len, err, errlen))) goto fail;
    while ((row = mysql_fetch_row(r)))
        for (size_t i = 0; i < out->n; i++)
            if (!strcmp(out->cols[i].db, row[0]) && !strcmp(out->cols[i].table, row[1]))
                out->cols[i].clustered = true;
    mysql_free_result(r);
    sbuf_free(&sql);
    sbuf_free(&pairs);
    return 0;
fail:
    sbuf_free(&sql);
    sbuf_free(&pairs);
    mp_schema_free(out);
    return -1;
}

/* Condition cond of table db.table on the source: a problem line in errs
 * when the server refuses it; -1 with err when the server fails otherwise. */
static int where_try(MYSQL *src, const char *w, const char *db, const char *table,
                     const char *cond, sbuf *errs, int *nerr, char *err, size_t errlen) {
    sbuf sql = SBUF_INIT;
    sbuf_adds(&sql, "SELECT 1 FROM ");
    db_ident(&sql, db);
    sbuf_addc(&sql, '.');
    db_ident(&sql, table);
    sbuf_printf(&sql, " WHERE (%s) LIMIT 0", cond);
    char qerr[512];
    MYSQL_RES *res = db_query(src, sql.data, sql.len, qerr, sizeof qerr);
    sbuf_free(&sql);
    if (res) {
        mysql_free_result(res);
        return 0;
    }
    unsigned e = mysql_errno(src);
    if (e >= 2000 && e < 3000) { /* client errors: the connection, not the SQL */
        snprintf(err, errlen, "checking a where condition: %s (%u)", mysql_error(src),
                 mysql_errno(src));
        return -1;
    }
    sbuf_printf(errs, "%s: where \"%s\" fails on the source: %s\n", w, cond, mysql_error(src));
    (*nerr)++;
    return 0;
}

static int where_rel(MYSQL *src, const char *where, const struct mp_relation *r, size_t n,
                     sbuf *errs, int *nerr, char *err, size_t errlen) {
    for (size_t i = 0; i < n; i++) {
        char w[1024];
        snprintf(w, sizeof w, "%s.relations[%zu] (relation to %s.%s)", where, i, r[i].db,
                 r[i].table);
        if (r[i].where &&
            where_try(src, w, r[i].db, r[i].table, r[i].where, errs, nerr, err, errlen) < 0)
            return -1;
        if (where_rel(src, w, r[i].relations, r[i].nrelations, errs, nerr, err, errlen) < 0)
            return -1;
    }
    return 0;
}

int mapping_check_where(MYSQL *src, const struct mapping *m, sbuf *errs, char *err,
                        size_t errlen) {
    int nerr = 0;
    for (size_t i = 0; i < m->nindices; i++)
        for (size_t j = 0; j < m->indices[i].ntables; j++) {
            const struct mp_table *t = &m->indices[i].tables[j];
            char w[512];
            snprintf(w, sizeof w, "$.indices[%zu] (index %s).tables[%zu] (table %s.%s)", i,
                     m->indices[i].alias, j, t->db, t->table);
            if (t->where &&
                where_try(src, w, t->db, t->table, t->where, errs, &nerr, err, errlen) < 0)
                return -1;
            if (where_rel(src, w, t->relations, t->nrelations, errs, &nerr, err, errlen) < 0)
                return -1;
        }
    return nerr;
}
