/* mapping_db: the mapping model in the metadata tables of
 * sql/migrations/0003_mapping.sql (what is configured); the source's side
 * (what exists) is mapping_schema.c. Every value reaches SQL through
 * db_quote. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mysql.h>

#include "db.h"
#include "sync/mapping/mapping.h"
#include "sync/mapping/mapping_shard.h"
#include "sync/mapping/mapping_source.h"
#include "log.h"

static void seterr(char *err, size_t n, const char *what, MYSQL *m) {
    snprintf(err, n, "%s: %s (%u)", what, mysql_error(m), mysql_errno(m));
}

static void q(MYSQL *m, sbuf *s, const char *v) {
    if (!v)
        sbuf_adds(s, "NULL");
    else
        db_quote(m, s, v, strlen(v));
}

/* ------------------------------------------------------------------ load */

static char *dup_or_null(const char *s) { return s ? xstrdup(s) : NULL; }
static bool b(const char *s) { return s && s[0] == '1'; }

static int load_columns(MYSQL *m, unsigned long long table_id, unsigned long long rel_id,
                        struct mp_column **out, size_t *n, char *err, size_t errlen) {
    sbuf sql = SBUF_INIT;
    sbuf_printf(&sql,
                "SELECT name, mysql_type, engine_type, analyzer, search_analyzer, copy_to, "
                "keyword, extend_name, is_key, nested, indexed, format FROM mapping_columns "
                "WHERE table_id = %llu AND relation_id = %llu ORDER BY position, id",
                table_id, rel_id);
    MYSQL_RES *r = db_query(m, sql.data, sql.len, err, errlen);
    sbuf_free(&sql);
    if (!r) return -1;
    size_t cnt = (size_t)mysql_num_rows(r);
    *out = xcalloc(cnt ? cnt : 1, sizeof **out);
    *n = 0;
    MYSQL_ROW row;
    while ((row = mysql_fetch_row(r))) {
        struct mp_column *c = &(*out)[(*n)++];
        c->name = xstrdup(row[0]);
        c->mysql_type = xstrdup(row[1] ? row[1] : "");
        c->type = xstrdup(row[2]);
        c->analyzer = dup_or_null(row[3]);
        c->search_analyzer = dup_or_null(row[4]);
        c->copy_to = dup_or_null(row[5]);
        c->keyword = b(row[6]);
        c->extend_name = dup_or_null(row[7]);
        c->is_key = b(row[8]);
        c->nested = b(row[9]);
        c->indexed = b(row[10]);
        c->format = dup_or_null(row[11]);
    }
    mysql_free_result(r);
    return 0;
}

static int load_relations(MYSQL *m, unsigned long long table_id, unsigned long long parent,
                          struct mp_relation **out, size_t *n, char *err, size_t errlen) {
    sbuf sql = SBUF_INIT;
    sbuf_printf(&sql,
                "SELECT id, search_column, extend_name, related_db, related_table, join_column, "
                "nested, where_sql, distinct_rows, refresh_parent, area_update, flatten "
                "FROM mapping_relations WHERE table_id = %llu AND parent_relation_id = %llu "
                "ORDER BY position, id",
                table_id, parent);
    MYSQL_RES *r = db_query(m, sql.data, sql.len, err, errlen);
    sbuf_free(&sql);
    if (!r) return -1;
    size_t cnt = (size_t)mysql_num_rows(r);
    *out = xcalloc(cnt ? cnt : 1, sizeof **out);
    *n = 0;
    unsigned long long *ids = xcalloc(cnt ? cnt : 1, sizeof *ids);
    MYSQL_ROW row;
    while ((row = mysql_fetch_row(r))) {
        ids[*n] = strtoull(row[0], NULL, 10);
        struct mp_relation *x = &(*out)[(*n)++];
        x->column = xstrdup(row[1]);
        x->extend_name = dup_or_null(row[2]);
        x->db = xstrdup(row[3]);
        x->table = xstrdup(row[4]);
        x->join_column = xstrdup(row[5]);
        x->nested = row[6] ? (row[6][0] == '1') : -1;
        x->where = dup_or_null(row[7]);
        x->distinct = b(row[8]);
        x->refresh_parent = b(row[9]);
        x->area_update = b(row[10]);
        x->flatten = b(row[11]);
    }
    mysql_free_result(r);
    int rc = 0;
    for (size_t i = 0; i < *n && rc == 0; i++) {
        struct mp_relation *x = &(*out)[i];
        rc = load_columns(m, table_id, ids[i], &x->columns, &x->ncolumns, err, errlen);
        if (rc == 0)
            rc = load_relations(m, table_id, ids[i], &x->relations, &x->nrelations, err, errlen);
    }
    free(ids);
    return rc;
}

int mapping_db_checksum(MYSQL *m, char *out, size_t outlen, char *err, size_t errlen) {
    static const char sql[] =
        "CHECKSUM TABLE index_configs, table_configs, mapping_columns, mapping_relations";
    MYSQL_RES *res = db_query(m, sql, sizeof sql - 1, err, errlen);
    if (!res) return -1;
    sbuf s = SBUF_INIT;
    MYSQL_ROW row;
    int rc = 0;
    while ((row = mysql_fetch_row(res))) {
        if (!row[1]) rc = -1; /* a table the server could not checksum */
        sbuf_printf(&s, "%s=%s;", row[0] ? row[0] : "", row[1] ? row[1] : "");
    }
    mysql_free_result(res);
    if (rc < 0 || s.len == 0 || s.len >= outlen) {
        snprintf(err, errlen, "%s: no checksum for every table", sql);
        rc = -1;
    } else {
        memcpy(out, s.data, s.len + 1);
    }
    sbuf_free(&s);
    return rc;
}

/* a delay-effect table's hand-written relation top (origin 'mapping') */
static int load_top(MYSQL *m, const char *source, unsigned long long index_id, struct mp_table *t,
                    char *err, size_t errlen) {
    sbuf sql = SBUF_INIT;
    sbuf_adds(&sql, "SELECT level_db, level_sql, output_column FROM relation_tops WHERE source = ");
    q(m, &sql, source);
    sbuf_printf(&sql, " AND top_index_id = %llu AND origin = 'mapping' AND db_name = ", index_id);
    q(m, &sql, t->db);
    sbuf_adds(&sql, " AND table_name = ");
    q(m, &sql, t->table);
    sbuf_adds(&sql, " ORDER BY path, level");
    MYSQL_RES *r = db_query(m, sql.data, sql.len, err, errlen);
    sbuf_free(&sql);
    if (!r) return -1;
    size_t cnt = (size_t)mysql_num_rows(r);
    t->top = cnt ? xcalloc(cnt, sizeof *t->top) : NULL;
    MYSQL_ROW row;
    while ((row = mysql_fetch_row(r))) {
        struct mp_top_level *l = &t->top[t->ntop++];
        l->db = xstrdup(row[0]);
        l->sql = xstrdup(row[1]);
        l->output = xstrdup(row[2]);
    }
    mysql_free_result(r);
    return 0;
}

int mapping_db_load(MYSQL *m, const char *source, struct mapping *out, char *err, size_t errlen) {
    memset(out, 0, sizeof *out);
    sbuf sql = SBUF_INIT;
    sbuf_adds(&sql, "SELECT id, alias, state, current_version, epoch, history_retention, shards, "
                    "replicas, join_field, analysis, stopped_reason, id_template, unique_keys, "
                    "sources FROM index_configs WHERE source = ");
    q(m, &sql, source);
    sbuf_adds(&sql, " ORDER BY position, id");
    MYSQL_RES *r = db_query(m, sql.data, sql.len, err, errlen);
    if (!r) {
        sbuf_free(&sql);
        return -1;
    }
    size_t cnt = (size_t)mysql_num_rows(r);
    out->indices = xcalloc(cnt ? cnt : 1, sizeof *out->indices);
    unsigned long long *ids = xcalloc(cnt ? cnt : 1, sizeof *ids);
    MYSQL_ROW row;
    while ((row = mysql_fetch_row(r))) {
        ids[out->nindices] = strtoull(row[0], NULL, 10);
        struct mp_index *ix = &out->indices[out->nindices++];
        ix->alias = xstrdup(row[1]);
        ix->state = xstrdup(row[2]);
        ix->current_version = (unsigned)strtoul(row[3], NULL, 10);
        ix->epoch = (unsigned)strtoul(row[4], NULL, 10);
        ix->history_retention = atoi(row[5]);
        ix->shards = atoi(row[6]);
        ix->replicas = atoi(row[7]);
        ix->join_field = xstrdup(row[8]);
        ix->analysis = dup_or_null(row[9]);
        ix->stopped = dup_or_null(row[10]);
        ix->deliveries_stopped = ix->stopped != NULL;
        ix->id_template = dup_or_null(row[11]);
        ix->unique_keys = row[12] && atoi(row[12]);
        mp_sources_split(ix, row[13]);
    }
    mysql_free_result(r);
    int rc = 0;
    for (size_t i = 0; i < out->nindices && rc == 0; i++) {
        struct mp_index *ix = &out->indices[i];
        sbuf_reset(&sql);
        sbuf_printf(&sql,
                    "SELECT id, db_name, table_name, join_name, parent_db, parent_table, "
                    "parent_column, bucket_column, daily_check_column, copy_to, delay_effect, "
                    "mode, expiry_column, where_sql FROM table_configs WHERE index_id = %llu "
                    "ORDER BY position, id",
                    ids[i]);
        r = db_query(m, sql.data, sql.len, err, errlen);
        if (!r) {
            rc = -1;
            break;
        }
        size_t nt = (size_t)mysql_num_rows(r);
        ix->tables = xcalloc(nt ? nt : 1, sizeof *ix->tables);
        unsigned long long *tids = xcalloc(nt ? nt : 1, sizeof *tids);
        while ((row = mysql_fetch_row(r))) {
            tids[ix->ntables] = strtoull(row[0], NULL, 10);
            struct mp_table *t = &ix->tables[ix->ntables++];
            t->db = xstrdup(row[1]);
            t->table = xstrdup(row[2]);
            t->join_name = dup_or_null(row[3]);
            t->parent_db = dup_or_null(row[4]);
            t->parent_table = dup_or_null(row[5]);
            t->parent_column = dup_or_null(row[6]);
            t->bucket_column = dup_or_null(row[7]);
            t->daily_check_column = dup_or_null(row[8]);
            t->copy_to = dup_or_null(row[9]);
            t->delay_effect = b(row[10]);
            t->mode = !strcmp(row[11], "row-image") ? MP_ROWIMAGE : MP_REQUERY;
            t->expiry_column = dup_or_null(row[12]);
            t->where = dup_or_null(row[13]);
        }
        mysql_free_result(r);
        for (size_t j = 0; j < ix->ntables && rc == 0; j++) {
            struct mp_table *t = &ix->tables[j];
            if (t->delay_effect) rc = load_top(m, source, ids[i], t, err, errlen);
            if (rc == 0) rc = load_columns(m, tids[j], 0, &t->columns, &t->ncolumns, err, errlen);
            if (rc == 0)
                rc = load_relations(m, tids[j], 0, &t->relations, &t->nrelations, err, errlen);
        }
        free(tids);
    }
    free(ids);
    sbuf_free(&sql);
    if (rc < 0) mapping_free(out);
    return rc;
}

int mapping_db_load_for(MYSQL *m, const char *mapping, const char *source, struct mapping *out,
                        char *err, size_t errlen) {
    if (mapping_db_load(m, mapping, out, err, errlen) < 0) return -1;
    mapping_for_source(out, mapping, source);
    return 0;
}

int mapping_db_load_config(MYSQL *m, const struct ss_config *cfg, struct mapping *out, char *err,
                           size_t errlen) {
    return mapping_db_load_for(m, config_mapping_name(cfg), cfg->source.name, out, err, errlen);
}

/* ------------------------------------------------------------------ save */

static int exec(MYSQL *m, const sbuf *sql, char *err, size_t errlen) {
    if (mysql_real_query(m, sql->data, sql->len) != 0) {
        snprintf(err, errlen, "query failed: %s (%u): %.300s", mysql_error(m), mysql_errno(m),
                 sql->data);
        return -1;
    }
    return 0;
}

static void qb(sbuf *s, bool v) { sbuf_adds(s, v ? "1" : "0"); }

static int save_columns(MYSQL *m, unsigned long long tid, unsigned long long rid,
                        const struct mp_column *cols, size_t n, char *err, size_t errlen) {
    if (!n) return 0;
    sbuf s = SBUF_INIT;
    sbuf_adds(&s, "INSERT INTO mapping_columns (table_id, relation_id, name, mysql_type, "
                  "engine_type, analyzer, search_analyzer, copy_to, keyword, extend_name, "
                  "is_key, nested, indexed, format, position) VALUES ");
    for (size_t i = 0; i < n; i++) {
        const struct mp_column *c = &cols[i];
        sbuf_printf(&s, "%s(%llu, %llu, ", i ? "," : "", tid, rid);
        q(m, &s, c->name);
        sbuf_addc(&s, ',');
        q(m, &s, c->mysql_type ? c->mysql_type : "");
        sbuf_addc(&s, ',');
        q(m, &s, c->type ? c->type : "keyword");
        sbuf_addc(&s, ',');
        q(m, &s, c->analyzer);
        sbuf_addc(&s, ',');
        q(m, &s, c->search_analyzer);
        sbuf_addc(&s, ',');
        q(m, &s, c->copy_to);
        sbuf_addc(&s, ',');
        qb(&s, c->keyword);
        sbuf_addc(&s, ',');
        q(m, &s, c->extend_name);
        sbuf_addc(&s, ',');
        qb(&s, c->is_key);
        sbuf_addc(&s, ',');
        qb(&s, c->nested);
        sbuf_addc(&s, ',');
        qb(&s, c->indexed);
        sbuf_addc(&s, ',');
        q(m, &s, c->format);
        sbuf_printf(&s, ", %zu)", i);
    }
    int rc = exec(m, &s, err, errlen);
    sbuf_free(&s);
    return rc;
}

static int save_relations(MYSQL *m, unsigned long long tid, unsigned long long parent,
                          const struct mp_relation *rels, size_t n, char *err, size_t errlen) {
    for (size_t i = 0; i < n; i++) {
        const struct mp_relation *r = &rels[i];
        sbuf s = SBUF_INIT;
        sbuf_printf(&s,
                    "INSERT INTO mapping_relations (table_id, parent_relation_id, search_column, "
                    "extend_name, related_db, related_table, join_column, nested, where_sql, "
                    "distinct_rows, refresh_parent, area_update, flatten, position) VALUES "
                    "(%llu, %llu, ",
                    tid, parent);
        q(m, &s, r->column);
        sbuf_addc(&s, ',');
        q(m, &s, r->extend_name);
        sbuf_addc(&s, ',');
        q(m, &s, r->db);
        sbuf_addc(&s, ',');
        q(m, &s, r->table);
        sbuf_addc(&s, ',');
        q(m, &s, r->join_column);
        sbuf_addc(&s, ',');
        sbuf_adds(&s, r->nested < 0 ? "NULL" : r->nested ? "1" : "0");
        sbuf_addc(&s, ',');
        q(m, &s, r->where);
        sbuf_addc(&s, ',');
        qb(&s, r->distinct);
        sbuf_addc(&s, ',');
        qb(&s, r->refresh_parent);
        sbuf_addc(&s, ',');
        qb(&s, r->area_update);
        sbuf_addc(&s, ',');
        qb(&s, r->flatten);
        sbuf_printf(&s, ", %zu)", i);
        int rc = exec(m, &s, err, errlen);
        sbuf_free(&s);
        if (rc < 0) return -1;
        unsigned long long rid = mysql_insert_id(m);
        if (save_columns(m, tid, rid, r->columns, r->ncolumns, err, errlen) < 0 ||
            save_relations(m, tid, rid, r->relations, r->nrelations, err, errlen) < 0)
            return -1;
    }
    return 0;
}

static int delete_index_children(MYSQL *m, unsigned long long id, char *err, size_t errlen) {
    sbuf s = SBUF_INIT;
    int rc = 0;
    static const char *const del[] = {
        "DELETE c FROM mapping_columns c JOIN table_configs t ON t.id = c.table_id "
        "WHERE t.index_id = %llu",
        "DELETE r FROM mapping_relations r JOIN table_configs t ON t.id = r.table_id "
        "WHERE t.index_id = %llu",
        "DELETE FROM table_configs WHERE index_id = %llu",
        /* hand-written relation tops are saved again below; generated ones
         * are rewritten by the next delayed run */
        "DELETE FROM relation_tops WHERE top_index_id = %llu"};
    for (size_t i = 0; i < sizeof del / sizeof del[0] && rc == 0; i++) {
        sbuf_reset(&s);
        sbuf_printf(&s, del[i], id);
        rc = exec(m, &s, err, errlen);
    }
    sbuf_free(&s);
    return rc;
}

/* The index configs of source no longer in mp: gone with their tables. 0,
 * or -1 with err. */
static int delete_gone(MYSQL *m, const char *source, const struct mapping *mp, char *err,
                       size_t errlen) {
    sbuf s = SBUF_INIT;
    int rc = 0;
    sbuf_adds(&s, "SELECT id, alias FROM index_configs WHERE source = ");
    q(m, &s, source);
    sbuf_adds(&s, " FOR UPDATE");
    MYSQL_RES *r = db_query(m, s.data, s.len, err, errlen);
    if (!r) {
        sbuf_free(&s);
        return -1;
    }
    MYSQL_ROW row;
    size_t cnt = (size_t)mysql_num_rows(r);
    unsigned long long *gone = xcalloc(cnt ? cnt : 1, sizeof *gone);
    size_t ngone = 0;
    while ((row = mysql_fetch_row(r))) {
        bool keep = false;
        for (size_t i = 0; i < mp->nindices; i++)
            if (!strcmp(mp->indices[i].alias, row[1])) keep = true;
        if (!keep) gone[ngone++] = strtoull(row[0], NULL, 10);
    }
    mysql_free_result(r);
    for (size_t i = 0; i < ngone && rc == 0; i++) {
        rc = delete_index_children(m, gone[i], err, errlen);
        sbuf_reset(&s);
        sbuf_printf(&s, "DELETE FROM index_configs WHERE id = %llu", gone[i]);
        if (rc == 0) rc = exec(m, &s, err, errlen);
    }
    free(gone);
    sbuf_free(&s);
    return rc;
}

static int save_all(MYSQL *m, const char *source, const struct mapping *mp, char *err,
                    size_t errlen) {
    sbuf s = SBUF_INIT;
    int rc = delete_gone(m, source, mp, err, errlen);
    for (size_t i = 0; i < mp->nindices && rc == 0; i++) {
        const struct mp_index *ix = &mp->indices[i];
        sbuf_reset(&s);
        sbuf_adds(&s, "INSERT INTO index_configs (source, alias, history_retention, shards, "
                      "replicas, join_field, analysis, id_template, unique_keys, sources, "
                      "position) VALUES (");
        q(m, &s, source);
        sbuf_addc(&s, ',');
        q(m, &s, ix->alias);
        sbuf_printf(&s, ", %d, %d, %d, ", ix->history_retention, ix->shards, ix->replicas);
        q(m, &s, ix->join_field ? ix->join_field : "relation");
        sbuf_addc(&s, ',');
        q(m, &s, ix->analysis);
        sbuf_addc(&s, ',');
        q(m, &s, ix->id_template);
        sbuf_addc(&s, ',');
        qb(&s, ix->unique_keys);
        sbuf_addc(&s, ',');
        sbuf srcs = SBUF_INIT;
        mp_sources_join(ix, &srcs);
        q(m, &s, srcs.len ? srcs.data : NULL);
        sbuf_free(&srcs);
        sbuf_printf(&s,
                    ", %zu) ON DUPLICATE KEY UPDATE id = LAST_INSERT_ID(id), "
                    "history_retention = VALUES(history_retention), shards = VALUES(shards), "
                    "replicas = VALUES(replicas), join_field = VALUES(join_field), "
                    "analysis = VALUES(analysis), id_template = VALUES(id_template), "
                    "unique_keys = VALUES(unique_keys), sources = VALUES(sources), "
                    "position = VALUES(position)",
                    i);
        if ((rc = exec(m, &s, err, errlen)) < 0) break;
        unsigned long long iid = mysql_insert_id(m);
        if ((rc = delete_index_children(m, iid, err, errlen)) < 0) break;
        for (size_t j = 0; j < ix->ntables && rc == 0; j++) {
            const struct mp_table *t = &ix->tables[j];
            sbuf_reset(&s);
            sbuf_printf(&s, "INSERT INTO table_configs (index_id, db_name, table_name, join_name, "
                            "parent_db, parent_table, parent_column, bucket_column, "
                            "daily_check_column, copy_to, delay_effect, mode, expiry_column, "
                            "where_sql, position) VALUES (%llu, ", iid);
            const char *vals[] = {t->db, t->table, t->join_name, t->parent_db, t->parent_table,
                                  t->parent_column, t->bucket_column, t->daily_check_column,
                                  t->copy_to};
            for (size_t k = 0; k < sizeof vals / sizeof vals[0]; k++) {
                q(m, &s, vals[k]);
                sbuf_addc(&s, ',');
            }
            qb(&s, t->delay_effect);
            sbuf_printf(&s, ", '%s', ", t->mode == MP_ROWIMAGE ? "row-image" : "re-query");
            q(m, &s, t->expiry_column);
            sbuf_addc(&s, ',');
            q(m, &s, t->where);
            sbuf_printf(&s, ", %zu)", j);
            if ((rc = exec(m, &s, err, errlen)) < 0) break;
            unsigned long long tid = mysql_insert_id(m);
            for (size_t l = 0; l < t->ntop && rc == 0; l++) {
                sbuf_reset(&s);
                sbuf_adds(&s, "INSERT INTO relation_tops (source, db_name, table_name, "
                              "top_index_id, path, level, level_db, level_sql, output_column, "
                              "doc_table, origin) VALUES (");
                q(m, &s, source);
                sbuf_addc(&s, ',');
                q(m, &s, t->db);
                sbuf_addc(&s, ',');
                q(m, &s, t->table);
                sbuf_printf(&s, ", %llu, 0, %zu, ", iid, l + 1);
                q(m, &s, t->top[l].db);
                sbuf_addc(&s, ',');
                q(m, &s, t->top[l].sql);
                sbuf_addc(&s, ',');
                q(m, &s, t->top[l].output);
                sbuf_adds(&s, ", CONCAT(");
                q(m, &s, ix->tables[0].db);
                sbuf_adds(&s, ", '.', ");
                q(m, &s, ix->tables[0].table);
                sbuf_adds(&s, "), 'mapping')");
                rc = exec(m, &s, err, errlen);
            }
            if (rc < 0) break;
            rc = save_columns(m, tid, 0, t->columns, t->ncolumns, err, errlen);
            if (rc == 0) rc = save_relations(m, tid, 0, t->relations, t->nrelations, err, errlen);
        }
    }
    sbuf_free(&s);
    return rc;
}

int mapping_db_save(MYSQL *m, const char *source, const struct mapping *mp, char *err,
                    size_t errlen) {
    if (mysql_query(m, "START TRANSACTION") != 0) {
        seterr(err, errlen, "START TRANSACTION", m);
        return -1;
    }
    if (save_all(m, source, mp, err, errlen) < 0) {
        mysql_query(m, "ROLLBACK");
        return -1;
    }
    if (mysql_query(m, "COMMIT") != 0) {
        seterr(err, errlen, "COMMIT", m);
        return -1;
    }
    return 0;
}

int mapping_check_source(MYSQL *src, struct mapping *m, char *err, size_t errlen) {
    return mapping_check_source_keep(src, m, NULL, 0, err, errlen);
}

int mapping_check_source_keep(MYSQL *src, struct mapping *m, char *const *keep, size_t nkeep,
                              char *err, size_t errlen) {
    struct mp_schema schema = {0};
    sbuf verrs = SBUF_INIT, skipped = SBUF_INIT;
    /* table patterns: one unit per shard the source has (mapping_shard.h) */
    int bad = mapping_expand(src, m, keep, nkeep, &skipped, err, errlen) < 0 ||
                      mapping_schema_load(src, m, &schema, err, errlen) < 0
                  ? -1
                  : mapping_validate(m, &schema, &verrs);
    if (skipped.len) log_debug("mapping", "%.*s", (int)skipped.len - 1, skipped.data);
    sbuf_free(&skipped);
    mp_schema_free(&schema);
    if (bad > 0) errf(err, errlen, "the mapping does not match the source:\n%s", verrs.data);
    sbuf_free(&verrs);
    return bad < 0 ? -1 : bad > 0 ? 1 : 0;
}

long long mapping_db_record_type(MYSQL *m, const char *source, const char *db, const char *table,
                                 const char *column, const char *from, const char *to, char *err,
                                 size_t errlen) {
    sbuf s = SBUF_INIT;
    sbuf_adds(&s, "UPDATE mapping_columns SET mysql_type = ");
    q(m, &s, to);
    sbuf_adds(&s, " WHERE name = ");
    q(m, &s, column);
    sbuf_adds(&s, " AND mysql_type = ");
    q(m, &s, from);
    sbuf_adds(&s, " AND ((relation_id = 0 AND table_id IN (SELECT t.id FROM table_configs t JOIN "
                  "index_configs i ON i.id = t.index_id WHERE i.source = ");
    q(m, &s, source);
    sbuf_adds(&s, " AND t.db_name = ");
    q(m, &s, db);
    sbuf_adds(&s, " AND t.table_name = ");
    q(m, &s, table);
    sbuf_adds(&s, ")) OR relation_id IN (SELECT r.id FROM mapping_relations r JOIN table_configs t "
                  "ON t.id = r.table_id JOIN index_configs i ON i.id = t.index_id WHERE "
                  "i.source = ");
    q(m, &s, source);
    sbuf_adds(&s, " AND r.related_db = ");
    q(m, &s, db);
    sbuf_adds(&s, " AND r.related_table = ");
    q(m, &s, table);
    sbuf_adds(&s, "))");
    long long n = db_exec_rows(m, s.data, err, errlen);
    sbuf_free(&s);
    return n;
}
