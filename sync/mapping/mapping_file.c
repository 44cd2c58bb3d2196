/* mapping_file: the declarative JSON mapping file (docs/mapping.md) in and
 * out — parsing with errors that name the file and the JSON path, numbers
 * read exactly (json_exact), and the canonical writer (stable order, defaults
 * left out, containers without containers on one line). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "json_exact.h"
#include "jsonw.h"
#include "sync/mapping/mapping.h"
#include "sync/mapping/mapping_shard.h"
#include "sync/mapping/mapping_source.h"

/* ------------------------------------------------------------------ parse */

struct pctx {
    const char *name;
    char *err;
    size_t errlen;
};

static int perr(struct pctx *c, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int perr(struct pctx *c, const char *path, const char *fmt, ...) {
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    snprintf(c->err, c->errlen, "%s: %s: %s", c->name, path, msg);
    return -1;
}

/* Check that obj has only the given keys. */
static int only_keys(struct pctx *c, const char *path, const cJSON *obj, const char *const *keys) {
    for (const cJSON *it = obj->child; it; it = it->next) {
        bool ok = false;
        for (int i = 0; keys[i]; i++)
            if (!strcmp(keys[i], it->string)) ok = true;
        if (!ok) return perr(c, path, "unknown key \"%s\"", it->string);
    }
    return 0;
}

static int get_str(struct pctx *c, const char *path, const cJSON *obj, const char *key,
                   bool required, char **out) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!v || cJSON_IsNull(v)) {
        if (required) return perr(c, path, "\"%s\" is required", key);
        return 0;
    }
    if (!cJSON_IsString(v)) return perr(c, path, "\"%s\" must be a string", key);
    if (!v->valuestring[0]) {
        if (required) return perr(c, path, "\"%s\" must not be empty", key);
        return 0;
    }
    *out = xstrdup(v->valuestring);
    return 0;
}

static int get_bool(struct pctx *c, const char *path, const cJSON *obj, const char *key,
                    bool *out) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!v || cJSON_IsNull(v)) return 0;
    if (!cJSON_IsBool(v)) return perr(c, path, "\"%s\" must be true or false", key);
    *out = cJSON_IsTrue(v);
    return 0;
}

/* Integers are cJSON_Raw items (json_exact): read their exact text. */
static int get_int(struct pctx *c, const char *path, const cJSON *obj, const char *key, long min,
                   long max, int *out) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!v || cJSON_IsNull(v)) return 0;
    const char *s = cJSON_IsRaw(v) ? v->valuestring : NULL;
    char *end = NULL;
    errno = 0;
    long n = s ? strtol(s, &end, 10) : 0;
    if (!s || errno || !end || *end || n < min || n > max)
        return perr(c, path, "\"%s\" must be an integer from %ld to %ld", key, min, max);
    *out = (int)n;
    return 0;
}

/* the first '.' outside a placeholder's braces (a regex may hold dots) */
static const char *name_dot(const char *s) {
    int depth = 0;
    for (const char *p = s; *p; p++) {
        if (*p == '\\' && depth && p[1]) p++;
        else if (*p == '{') depth++;
        else if (*p == '}' && depth) depth--;
        else if (*p == '.' && !depth) return p;
    }
    return NULL;
}

/* "db.table" -> db, table; with placeholders (table patterns,
 * mapping_shard.h), checked: `defines` for the root table's */
static int split_name(struct pctx *c, const char *path, const char *key, const char *s, char **db,
                      char **table, bool defines) {
    const char *dot = name_dot(s);
    if (!dot || dot == s || !dot[1] || name_dot(dot + 1))
        return perr(c, path, "\"%s\" must be \"database.table\", not \"%s\"", key, s);
    *db = xstrndup(s, (size_t)(dot - s));
    *table = xstrdup(dot + 1);
    char why[512];
    if ((mp_is_pattern(*db) && mp_pattern_check(*db, defines, why, sizeof why) < 0) ||
        (mp_is_pattern(*table) && mp_pattern_check(*table, defines, why, sizeof why) < 0))
        return perr(c, path, "\"%s\": %s", key, why);
    return 0;
}

static int split_table(struct pctx *c, const char *path, const char *key, const char *s, char **db,
                       char **table) {
    return split_name(c, path, key, s, db, table, false);
}

static int parse_column(struct pctx *c, const char *path, const cJSON *v, struct mp_column *col) {
    memset(col, 0, sizeof *col);
    col->indexed = true;
    if (cJSON_IsString(v)) {
        if (!v->valuestring[0]) return perr(c, path, "column name must not be empty");
        col->name = xstrdup(v->valuestring);
        return 0;
    }
    if (!cJSON_IsObject(v)) return perr(c, path, "a column is a name or an object");
    static const char *const keys[] = {"name", "mysql_type", "type", "analyzer",
                                       "search_analyzer", "copy_to", "keyword", "extend_name",
                                       "key", "nested", "index", "format", NULL};
    if (only_keys(c, path, v, keys) < 0 || get_str(c, path, v, "name", true, &col->name) < 0 ||
        get_str(c, path, v, "mysql_type", false, &col->mysql_type) < 0 ||
        get_str(c, path, v, "type", false, &col->type) < 0 ||
        get_str(c, path, v, "analyzer", false, &col->analyzer) < 0 ||
        get_str(c, path, v, "search_analyzer", false, &col->search_analyzer) < 0 ||
        get_str(c, path, v, "copy_to", false, &col->copy_to) < 0 ||
        get_str(c, path, v, "extend_name", false, &col->extend_name) < 0 ||
        get_str(c, path, v, "format", false, &col->format) < 0 ||
        get_bool(c, path, v, "keyword", &col->keyword) < 0 ||
        get_bool(c, path, v, "key", &col->is_key) < 0 ||
        get_bool(c, path, v, "nested", &col->nested) < 0 ||
        get_bool(c, path, v, "index", &col->indexed) < 0)
        return -1;
    col->index_given = cJSON_GetObjectItemCaseSensitive(v, "index") != NULL;
    return 0;
}

static int parse_columns(struct pctx *c, const char *path, const cJSON *obj,
                         struct mp_column **out, size_t *n) {
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(obj, "columns");
    if (!a) return 0;
    if (!cJSON_IsArray(a)) return perr(c, path, "\"columns\" must be an array");
    size_t cnt = (size_t)cJSON_GetArraySize(a);
    *out = xcalloc(cnt ? cnt : 1, sizeof **out);
    size_t i = 0;
    for (const cJSON *it = a->child; it; it = it->next, i++) {
        char p[1024];
        snprintf(p, sizeof p, "%s.columns[%zu]", path, i);
        (*n)++;
        if (parse_column(c, p, it, &(*out)[i]) < 0) return -1;
    }
    return 0;
}

static int parse_relations(struct pctx *c, const char *path, const cJSON *obj,
                           struct mp_relation **out, size_t *n, int depth);

static int parse_relation(struct pctx *c, const char *path, const cJSON *v, struct mp_relation *r,
                          int depth) {
    memset(r, 0, sizeof *r);
    r->nested = -1;
    r->refresh_parent = true;
    if (!cJSON_IsObject(v)) return perr(c, path, "a relation is an object");
    static const char *const keys[] = {"column", "extend_name", "table", "join_column", "nested",
                                       "where", "distinct", "refresh_parent", "area_update",
                                       "flatten", "columns", "relations", NULL};
    char *tbl = NULL;
    if (only_keys(c, path, v, keys) < 0 || get_str(c, path, v, "column", true, &r->column) < 0 ||
        get_str(c, path, v, "extend_name", false, &r->extend_name) < 0 ||
        get_str(c, path, v, "table", true, &tbl) < 0)
        return -1;
    int rc = split_table(c, path, "table", tbl, &r->db, &r->table);
    free(tbl);
    if (rc < 0) return -1;
    const cJSON *nv = cJSON_GetObjectItemCaseSensitive(v, "nested");
    if (nv && !cJSON_IsNull(nv)) {
        if (!cJSON_IsBool(nv)) return perr(c, path, "\"nested\" must be true or false");
        r->nested = cJSON_IsTrue(nv) ? 1 : 0;
    }
    if (get_str(c, path, v, "join_column", true, &r->join_column) < 0 ||
        get_str(c, path, v, "where", false, &r->where) < 0 ||
        get_bool(c, path, v, "distinct", &r->distinct) < 0 ||
        get_bool(c, path, v, "refresh_parent", &r->refresh_parent) < 0 ||
        get_bool(c, path, v, "area_update", &r->area_update) < 0 ||
        get_bool(c, path, v, "flatten", &r->flatten) < 0 ||
        parse_columns(c, path, v, &r->columns, &r->ncolumns) < 0)
        return -1;
    if (cJSON_GetObjectItemCaseSensitive(v, "columns") && !r->ncolumns)
        return perr(c, path, "\"columns\": a relation loads at least one column (leave "
                             "\"columns\" out for every column)");
    return parse_relations(c, path, v, &r->relations, &r->nrelations, depth + 1);
}

static int parse_relations(struct pctx *c, const char *path, const cJSON *obj,
                           struct mp_relation **out, size_t *n, int depth) {
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(obj, "relations");
    if (!a) return 0;
    if (!cJSON_IsArray(a)) return perr(c, path, "\"relations\" must be an array");
    if (depth > 16) return perr(c, path, "relations nest deeper than 16 levels");
    size_t cnt = (size_t)cJSON_GetArraySize(a);
    *out = xcalloc(cnt ? cnt : 1, sizeof **out);
    size_t i = 0;
    for (const cJSON *it = a->child; it; it = it->next, i++) {
        char p[1024];
        snprintf(p, sizeof p, "%s.relations[%zu]", path, i);
        (*n)++;
        if (parse_relation(c, p, it, &(*out)[i], depth) < 0) return -1;
    }
    return 0;
}

/* "relation_top": [{"db": .., "sql": "SELECT .. WHERE x IN (?)", "output": ..}, ..]:
 * a delay-effect table's hand-written chain up to the root's keys */
static int parse_top(struct pctx *c, const char *path, const cJSON *v, struct mp_table *t) {
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(v, "relation_top");
    if (!a) return 0;
    if (!cJSON_IsArray(a) || !cJSON_GetArraySize(a))
        return perr(c, path, "\"relation_top\" must be a non-empty array of levels");
    size_t cnt = (size_t)cJSON_GetArraySize(a);
    t->top = xcalloc(cnt, sizeof *t->top);
    size_t i = 0;
    for (const cJSON *it = a->child; it; it = it->next, i++) {
        char p[1024];
        snprintf(p, sizeof p, "%s.relation_top[%zu]", path, i);
        static const char *const keys[] = {"db", "sql", "output", NULL};
        t->ntop++;
        if (!cJSON_IsObject(it)) return perr(c, p, "a level is an object {db, sql, output}");
        if (only_keys(c, p, it, keys) < 0 || get_str(c, p, it, "db", true, &t->top[i].db) < 0 ||
            get_str(c, p, it, "sql", true, &t->top[i].sql) < 0 ||
            get_str(c, p, it, "output", true, &t->top[i].output) < 0)
            return -1;
    }
    return 0;
}

static int parse_table(struct pctx *c, const char *path, const cJSON *v, struct mp_table *t,
                       bool root) {
    memset(t, 0, sizeof *t);
    if (!cJSON_IsObject(v)) return perr(c, path, "a table is an object");
    static const char *const keys[] = {"table", "join_name", "parent", "parent_column",
                                       "bucket_column", "daily_check_column", "copy_to",
                                       "delay_effect", "mode", "expiry_column", "where", "columns",
                                       "relations", "relation_top", NULL};
    char *tbl = NULL, *parent = NULL, *mode = NULL;
    if (only_keys(c, path, v, keys) < 0 || get_str(c, path, v, "table", true, &tbl) < 0) return -1;
    int rc = split_name(c, path, "table", tbl, &t->db, &t->table, root);
    free(tbl);
    if (rc < 0 || get_str(c, path, v, "parent", false, &parent) < 0) return -1;
    if (parent) {
        rc = split_table(c, path, "parent", parent, &t->parent_db, &t->parent_table);
        free(parent);
        if (rc < 0) return -1;
    }
    if (get_str(c, path, v, "join_name", false, &t->join_name) < 0 ||
        get_str(c, path, v, "parent_column", false, &t->parent_column) < 0 ||
        get_str(c, path, v, "bucket_column", false, &t->bucket_column) < 0 ||
        get_str(c, path, v, "daily_check_column", false, &t->daily_check_column) < 0 ||
        get_str(c, path, v, "copy_to", false, &t->copy_to) < 0 ||
        get_str(c, path, v, "expiry_column", false, &t->expiry_column) < 0 ||
        get_str(c, path, v, "where", false, &t->where) < 0 ||
        get_bool(c, path, v, "delay_effect", &t->delay_effect) < 0 ||
        get_str(c, path, v, "mode", false, &mode) < 0)
        return -1;
    if (mode) {
        rc = 0;
        if (!strcmp(mode, "re-query"))
            t->mode = MP_REQUERY;
        else if (!strcmp(mode, "row-image"))
            t->mode = MP_ROWIMAGE;
        else
            rc = perr(c, path, "\"mode\" must be \"re-query\" or \"row-image\", not \"%s\"", mode);
        free(mode);
        if (rc < 0) return -1;
    }
    if (parse_top(c, path, v, t) < 0) return -1;
    if (parse_columns(c, path, v, &t->columns, &t->ncolumns) < 0) return -1;
    return parse_relations(c, path, v, &t->relations, &t->nrelations, 0);
}

/* "sources": the names of the sources that feed the index config, each once
 * (sync/mapping/mapping_source.h) */
static int parse_sources(struct pctx *c, const char *path, const cJSON *v, struct mp_index *ix) {
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(v, "sources");
    if (!a || cJSON_IsNull(a)) return 0;
    if (!cJSON_IsArray(a) || !cJSON_GetArraySize(a))
        return perr(c, path, "\"sources\" must be a non-empty array of source names "
                    "([source] name of each source that feeds the index)");
    size_t cnt = (size_t)cJSON_GetArraySize(a), i = 0;
    ix->sources = xcalloc(cnt, sizeof *ix->sources);
    for (const cJSON *it = a->child; it; it = it->next, i++) {
        char p[600], why[256];
        snprintf(p, sizeof p, "%s.sources[%zu]", path, i);
        if (!cJSON_IsString(it)) return perr(c, p, "a source is named by a string");
        if (mp_source_name_check(it->valuestring, why, sizeof why) < 0)
            return perr(c, p, "%s", why);
        for (size_t k = 0; k < ix->nsources; k++)
            if (!strcmp(ix->sources[k], it->valuestring))
                return perr(c, p, "source \"%s\" is listed twice", it->valuestring);
        ix->sources[ix->nsources++] = xstrdup(it->valuestring);
    }
    return 0;
}

static int parse_index(struct pctx *c, const char *path, const cJSON *v, struct mp_index *ix) {
    memset(ix, 0, sizeof *ix);
    ix->shards = 1;
    ix->replicas = MP_REPLICAS_DEFAULT;
    ix->history_retention = 2;
    if (!cJSON_IsObject(v)) return perr(c, path, "an index config is an object");
    static const char *const keys[] = {"alias", "shards", "replicas", "history_retention",
                                       "join_field", "analysis", "id", "unique_keys",
                                       "sources", "tables", NULL};
    if (only_keys(c, path, v, keys) < 0 || get_str(c, path, v, "alias", true, &ix->alias) < 0 ||
        get_str(c, path, v, "id", false, &ix->id_template) < 0 ||
        get_bool(c, path, v, "unique_keys", &ix->unique_keys) < 0 ||
        get_int(c, path, v, "shards", 1, 1024, &ix->shards) < 0 ||
        get_int(c, path, v, "replicas", 0, 64, &ix->replicas) < 0 ||
        get_int(c, path, v, "history_retention", 0, 1000, &ix->history_retention) < 0 ||
        get_str(c, path, v, "join_field", false, &ix->join_field) < 0)
        return -1;
    if (!ix->join_field) ix->join_field = xstrdup("relation");
    if (parse_sources(c, path, v, ix) < 0) return -1;
    const cJSON *an = cJSON_GetObjectItemCaseSensitive(v, "analysis");
    if (an && !cJSON_IsNull(an)) {
        if (!cJSON_IsObject(an)) return perr(c, path, "\"analysis\" must be an object");
        ix->analysis = cJSON_PrintUnformatted(an);
    }
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(v, "tables");
    if (!a || !cJSON_IsArray(a) || !cJSON_GetArraySize(a))
        return perr(c, path, "\"tables\" must be a non-empty array (the root table first)");
    size_t cnt = (size_t)cJSON_GetArraySize(a);
    ix->tables = xcalloc(cnt, sizeof *ix->tables);
    size_t i = 0;
    for (const cJSON *it = a->child; it; it = it->next, i++) {
        char p[512];
        snprintf(p, sizeof p, "%s.tables[%zu]", path, i);
        ix->ntables++;
        if (parse_table(c, p, it, &ix->tables[i], i == 0) < 0) return -1;
    }
    char why[512];
    if (mp_id_template_check(ix, why, sizeof why) < 0) return perr(c, path, "%s", why);
    return 0;
}

int mapping_parse(const char *name, const char *text, size_t len, struct mapping *out, char *err,
                  size_t errlen) {
    struct pctx c = {name, err, errlen};
    memset(out, 0, sizeof *out);
    size_t at = 0;
    cJSON *root = json_exact_parse_at(text, len, &at);
    if (!root) {
        size_t line = 1, col = 1;
        for (size_t i = 0; i < at && i < len; i++) {
            if (text[i] == '\n') {
                line++;
                col = 1;
            } else if (((unsigned char)text[i] & 0xC0) != 0x80) /* characters, not bytes */
                col++;
        }
        if (at >= len)
            return perr(&c, "$", "not valid JSON: the text ends early (line %zu, column %zu): "
                        "an unclosed [ or { or string?", line, col);
        return perr(&c, "$", "not valid JSON at line %zu, column %zu (near \"%.20s\")", line, col,
                    text + at);
    }
    int rc = -1;
    static const char *const keys[] = {"version", "indices", NULL};
    if (!cJSON_IsObject(root)) {
        perr(&c, "$", "the file must hold a JSON object");
        goto done;
    }
    if (only_keys(&c, "$", root, keys) < 0) goto done;
    int version = 1;
    if (get_int(&c, "$", root, "version", 1, 1, &version) < 0) goto done;
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(root, "indices");
    if (!a || !cJSON_IsArray(a)) {
        perr(&c, "$", "\"indices\" must be an array");
        goto done;
    }
    size_t cnt = (size_t)cJSON_GetArraySize(a);
    out->indices = xcalloc(cnt ? cnt : 1, sizeof *out->indices);
    size_t i = 0;
    for (const cJSON *it = a->child; it; it = it->next, i++) {
        char p[64];
        snprintf(p, sizeof p, "$.indices[%zu]", i);
        out->nindices++;
        if (parse_index(&c, p, it, &out->indices[i]) < 0) goto done;
    }
    rc = 0;
done:
    cJSON_Delete(root);
    if (rc < 0) mapping_free(out);
    return rc;
}

/* ------------------------------------------------------------------ write */

static void w_opt(jsonw *w, const char *k, const char *v) {
    if (v) {
        jw_key(w, k);
        jw_str(w, v);
    }
}

static void w_column(jsonw *w, const struct mp_column *c) {
    jw_obj_open(w);
    w_opt(w, "name", c->name);
    if (c->mysql_type && c->mysql_type[0]) w_opt(w, "mysql_type", c->mysql_type);
    w_opt(w, "type", c->type);
    if (c->is_key) {
        jw_key(w, "key");
        jw_bool(w, true);
    }
    w_opt(w, "analyzer", c->analyzer);
    w_opt(w, "search_analyzer", c->search_analyzer);
    if (c->keyword) {
        jw_key(w, "keyword");
        jw_bool(w, true);
    }
    w_opt(w, "copy_to", c->copy_to);
    w_opt(w, "format", c->format);
    w_opt(w, "extend_name", c->extend_name);
    if (c->nested) {
        jw_key(w, "nested");
        jw_bool(w, true);
    }
    if (!c->indexed) {
        jw_key(w, "index");
        jw_bool(w, false);
    }
    jw_obj_close(w);
}

static void w_table_name(jsonw *w, const char *k, const char *db, const char *t) {
    if (!db || !t) return;
    sbuf s = SBUF_INIT;
    sbuf_printf(&s, "%s.%s", db, t);
    jw_key(w, k);
    jw_str(w, s.data);
    sbuf_free(&s);
}

static void w_relation(jsonw *w, const struct mp_relation *r);

/* the "columns" and "relations" arrays of a table or a relation, those it has */
static void w_columns_relations(jsonw *w, const struct mp_column *cols, size_t ncols,
                                const struct mp_relation *rels, size_t nrels) {
    if (ncols) {
        jw_key(w, "columns");
        jw_arr_open(w);
        for (size_t i = 0; i < ncols; i++) w_column(w, &cols[i]);
        jw_arr_close(w);
    }
    if (nrels) {
        jw_key(w, "relations");
        jw_arr_open(w);
        for (size_t i = 0; i < nrels; i++) w_relation(w, &rels[i]);
        jw_arr_close(w);
    }
}

static void w_relation(jsonw *w, const struct mp_relation *r) {
    jw_obj_open(w);
    w_opt(w, "column", r->column);
    w_table_name(w, "table", r->db, r->table);
    w_opt(w, "join_column", r->join_column);
    w_opt(w, "extend_name", r->extend_name);
    if (r->nested >= 0) {
        jw_key(w, "nested");
        jw_bool(w, r->nested == 1);
    }
    w_opt(w, "where", r->where);
    if (r->distinct) {
        jw_key(w, "distinct");
        jw_bool(w, true);
    }
    if (!r->refresh_parent) {
        jw_key(w, "refresh_parent");
        jw_bool(w, false);
    }
    if (r->area_update) {
        jw_key(w, "area_update");
        jw_bool(w, true);
    }
    if (r->flatten) {
        jw_key(w, "flatten");
        jw_bool(w, true);
    }
    /* no columns: every column (not yet filled from the source) */
    w_columns_relations(w, r->columns, r->ncolumns, r->relations, r->nrelations);
    jw_obj_close(w);
}

static void w_table(jsonw *w, const struct mp_table *t) {
    jw_obj_open(w);
    w_table_name(w, "table", t->db, t->table);
    w_opt(w, "join_name", t->join_name);
    w_table_name(w, "parent", t->parent_db, t->parent_table);
    w_opt(w, "parent_column", t->parent_column);
    w_opt(w, "bucket_column", t->bucket_column);
    w_opt(w, "daily_check_column", t->daily_check_column);
    w_opt(w, "copy_to", t->copy_to);
    w_opt(w, "expiry_column", t->expiry_column);
    w_opt(w, "where", t->where);
    if (t->delay_effect) {
        jw_key(w, "delay_effect");
        jw_bool(w, true);
    }
    if (t->ntop) {
        jw_key(w, "relation_top");
        jw_arr_open(w);
        for (size_t i = 0; i < t->ntop; i++) {
            jw_obj_open(w);
            w_opt(w, "db", t->top[i].db);
            w_opt(w, "sql", t->top[i].sql);
            w_opt(w, "output", t->top[i].output);
            jw_obj_close(w);
        }
        jw_arr_close(w);
    }
    if (t->mode == MP_ROWIMAGE) {
        jw_key(w, "mode");
        jw_str(w, "row-image");
    }
    w_columns_relations(w, t->columns, t->ncolumns, t->relations, t->nrelations);
    jw_obj_close(w);
}

static void w_index(jsonw *w, const struct mp_index *ix) {
    jw_obj_open(w);
    w_opt(w, "alias", ix->alias);
    jw_key(w, "shards");
    jw_int(w, ix->shards);
    if (ix->replicas >= 0) {
        jw_key(w, "replicas");
        jw_int(w, ix->replicas);
    }
    jw_key(w, "history_retention");
    jw_int(w, ix->history_retention);
    if (ix->join_field && strcmp(ix->join_field, "relation") != 0)
        w_opt(w, "join_field", ix->join_field);
    if (ix->analysis) {
        jw_key(w, "analysis");
        jw_raw(w, ix->analysis, strlen(ix->analysis));
    }
    if (ix->nsources) {
        jw_key(w, "sources");
        jw_arr_open(w);
        for (size_t i = 0; i < ix->nsources; i++) jw_str(w, ix->sources[i]);
        jw_arr_close(w);
    }
    w_opt(w, "id", ix->id_template);
    if (ix->unique_keys) {
        jw_key(w, "unique_keys");
        jw_bool(w, true);
    }
    jw_key(w, "tables");
    jw_arr_open(w);
    for (size_t i = 0; i < ix->ntables; i++) w_table(w, &ix->tables[i]);
    jw_arr_close(w);
    jw_obj_close(w);
}

void mapping_write_index(const struct mp_index *ix, sbuf *out) {
    jsonw w;
    jw_init(&w, out);
    w_index(&w, ix);
}

/* Pretty-print compact JSON: containers holding no container stay on one
 * line, others open one line per member with two-space indents. */
void mapping_pretty(const char *s, size_t n, sbuf *out) {
    int depth = 0;
    bool in_str = false;
    for (size_t i = 0; i < n; i++) {
        char ch = s[i];
        if (in_str) {
            sbuf_addc(out, ch);
            if (ch == '\\' && i + 1 < n)
                sbuf_addc(out, s[++i]);
            else if (ch == '"')
                in_str = false;
            continue;
        }
        if (ch == '"') {
            in_str = true;
            sbuf_addc(out, ch);
        } else if (ch == '{' || ch == '[') {
            /* find the matching close; flat if no container inside */
            int d = 0;
            bool q = false, flat = true;
            size_t j = i;
            for (; j < n; j++) {
                char cj = s[j];
                if (q) {
                    if (cj == '\\') j++;
                    else if (cj == '"') q = false;
                    continue;
                }
                if (cj == '"') q = true;
                else if (cj == '{' || cj == '[') {
                    if (d > 0) flat = false;
                    d++;
                } else if (cj == '}' || cj == ']') {
                    if (--d == 0) break;
                }
            }
            if (flat) {
                bool q2 = false;
                for (size_t k = i; k <= j && k < n; k++) {
                    char ck = s[k];
                    sbuf_addc(out, ck);
                    if (q2) {
                        if (ck == '\\') sbuf_addc(out, s[++k]);
                        else if (ck == '"') q2 = false;
                    } else if (ck == '"')
                        q2 = true;
                    else if (ck == ':' || ck == ',')
                        sbuf_addc(out, ' ');
                }
                i = j;
                continue;
            }
            sbuf_addc(out, ch);
            depth++;
            sbuf_printf(out, "\n%*s", depth * 2, "");
        } else if (ch == '}' || ch == ']') {
            depth--;
            sbuf_printf(out, "\n%*s", depth * 2, "");
            sbuf_addc(out, ch);
        } else if (ch == ',') {
            sbuf_printf(out, ",\n%*s", depth * 2, "");
        } else if (ch == ':') {
            sbuf_adds(out, ": ");
        } else {
            sbuf_addc(out, ch);
        }
    }
}

void mapping_write(const struct mapping *m, sbuf *out) {
    sbuf tmp = SBUF_INIT;
    jsonw w;
    jw_init(&w, &tmp);
    jw_obj_open(&w);
    jw_key(&w, "version");
    jw_int(&w, 1);
    jw_key(&w, "indices");
    jw_arr_open(&w);
    for (size_t i = 0; i < m->nindices; i++) w_index(&w, &m->indices[i]);
    jw_arr_close(&w);
    jw_obj_close(&w);
    mapping_pretty(tmp.data, tmp.len, out);
    sbuf_addc(out, '\n');
    sbuf_free(&tmp);
}

