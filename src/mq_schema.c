/* mq_schema: the source's column types for the message decoders (see
 * mq_schema.h). */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "mq_schema.h"
#include "sbuf.h"

/* one table's columns from information_schema, kept until a DDL message */
struct mq_tabcols {
    char *db, *table;
    mq_coldef *cols;
    uint32_t ncols;
    char *strs; /* the names and types, one allocation */
    struct mq_tabcols *next;
};

void mq_schema_forget(struct mq_schema *s) {
    while (s->tables) {
        struct mq_tabcols *t = s->tables;
        s->tables = t->next;
        free(t->db);
        free(t->table);
        free(t->cols);
        free(t->strs);
        free(t);
    }
}

int mq_schema_lookup(void *ctx, const char *db, const char *table, const mq_coldef **cols,
                         uint32_t *ncols, char *err, size_t errlen) {
    struct mq_schema *s = ctx;
    for (struct mq_tabcols *t = s->tables; t; t = t->next)
        if (!strcmp(t->db, db) && !strcmp(t->table, table)) {
            *cols = t->cols;
            *ncols = t->ncols;
            return t->ncols ? 1 : 0;
        }
    db_params p = db_params_source(s->cfg);
    char derr[512];
    if (db_ensure(&s->conn, &p, derr, sizeof derr) < 0)
        return errf(err, errlen, "the column types of %s.%s: %s", db, table, derr);
    size_t dl = strlen(db), tl = strlen(table);
    char *edb = xmalloc(dl * 2 + 1), *etab = xmalloc(tl * 2 + 1);
    mysql_real_escape_string(s->conn, edb, db, (unsigned long)dl);
    mysql_real_escape_string(s->conn, etab, table, (unsigned long)tl);
    sbuf q = SBUF_INIT;
    sbuf_printf(&q, "SELECT COLUMN_NAME, COLUMN_TYPE, COLUMN_KEY = 'PRI', CHARACTER_SET_NAME FROM "
                "information_schema.COLUMNS WHERE TABLE_SCHEMA = '%s' AND TABLE_NAME = '%s' "
                "ORDER BY ORDINAL_POSITION", edb, etab);
    free(edb);
    free(etab);
    MYSQL_RES *res = db_query(s->conn, q.data, q.len, derr, sizeof derr);
    sbuf_free(&q);
    if (!res) return errf(err, errlen, "the column types of %s.%s: %s", db, table, derr);
    struct mq_tabcols *t = xcalloc(1, sizeof *t);
    t->db = xstrdup(db);
    t->table = xstrdup(table);
    uint32_t n = (uint32_t)mysql_num_rows(res);
    sbuf strs = SBUF_INIT;
    size_t *off = xcalloc(n ? n * 2 : 1, sizeof *off);
    t->cols = xcalloc(n ? n : 1, sizeof *t->cols);
    MYSQL_ROW row;
    uint32_t i = 0;
    while ((row = mysql_fetch_row(res)) && i < n) {
        off[2 * i] = strs.len;
        sbuf_add(&strs, row[0] ? row[0] : "", (row[0] ? strlen(row[0]) : 0) + 1);
        off[2 * i + 1] = strs.len;
        sbuf_add(&strs, row[1] ? row[1] : "", (row[1] ? strlen(row[1]) : 0) + 1);
        /* a character column's charset, as a column definition says it */
        if (row[1] && row[3]) {
            strs.len--;
            sbuf_printf(&strs, " character set %s", row[3]);
            sbuf_addc(&strs, '\0');
        }
        t->cols[i].is_pk = row[2] && !strcmp(row[2], "1");
        i++;
    }
    mysql_free_result(res);
    t->ncols = i;
    t->strs = strs.data ? strs.data : xstrdup("");
    bool longtext = false;
    for (uint32_t k = 0; k < i; k++) {
        t->cols[k].name = t->strs + off[2 * k];
        t->cols[k].column_type = t->strs + off[2 * k + 1];
        longtext |= !strncmp(t->cols[k].column_type, "longtext", 8);
    }
    free(off);
    /* MariaDB's JSON is a LONGTEXT with CHECK (json_valid(`col`)), as the
     * binlog reader finds it (src/binlog/schema.c); MySQL has no such table
     * column and a JSON type of its own: the query's failure is ignored */
    q = (sbuf)SBUF_INIT;
    edb = xmalloc(dl * 2 + 1), etab = xmalloc(tl * 2 + 1);
    mysql_real_escape_string(s->conn, edb, db, (unsigned long)dl);
    mysql_real_escape_string(s->conn, etab, table, (unsigned long)tl);
    sbuf_printf(&q, "SELECT CHECK_CLAUSE FROM information_schema.CHECK_CONSTRAINTS WHERE "
                "CONSTRAINT_SCHEMA = '%s' AND TABLE_NAME = '%s'", edb, etab);
    free(edb);
    free(etab);
    if (longtext && (res = db_query(s->conn, q.data, q.len, derr, sizeof derr))) {
        while ((row = mysql_fetch_row(res))) {
            const char *cl = row[0], *b, *e;
            if (!cl || strncasecmp(cl, "json_valid(`", 12)) continue;
            b = cl + 12;
            if (!(e = strchr(b, '`')) || strcmp(e, "`)")) continue;
            for (uint32_t k = 0; k < t->ncols; k++)
                if (!strncmp(t->cols[k].column_type, "longtext", 8) &&
                    strlen(t->cols[k].name) == (size_t)(e - b) &&
                    !strncmp(t->cols[k].name, b, (size_t)(e - b)))
                    /* a character set, as MariaDB's JSON has and MySQL's has not:
                     * the decoders tell the value's text by it (maxwell.c) */
                    t->cols[k].column_type = "json character set utf8mb4";
        }
        mysql_free_result(res);
    }
    sbuf_free(&q);
    t->next = s->tables;
    s->tables = t;
    *cols = t->cols;
    *ncols = t->ncols;
    return t->ncols ? 1 : 0; /* 0: not a table there; the message's own types */
}

void mq_schema_free(struct mq_schema *s) {
    mq_schema_forget(s);
    db_close(s->conn);
    s->conn = NULL;
}
