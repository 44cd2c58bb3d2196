/* mapping: the model in memory — freed, copied, its types taken from a
 * validated copy — and the source schema it is checked against (see
 * mapping.h). The MySQL -> engine type rules are mapping_types.c, the
 * validation mapping_validate.c, the JSON file mapping_file.c, the metadata
 * tables mapping_db.c, the source's information_schema mapping_schema.c. */
#include "sync/mapping/mapping.h"
#include "sync/mapping/mapping_int.h"
#include "sync/mapping/row_filter.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ free */

static void column_free(struct mp_column *c) {
    free(c->name);
    free(c->mysql_type);
    free(c->type);
    free(c->analyzer);
    free(c->search_analyzer);
    free(c->copy_to);
    free(c->extend_name);
    free(c->format);
    free(c->widened_from);
}

static void relation_free(struct mp_relation *r) {
    free(r->column);
    free(r->extend_name);
    free(r->db);
    free(r->table);
    free(r->join_column);
    free(r->where);
    for (size_t i = 0; i < r->ncolumns; i++) column_free(&r->columns[i]);
    free(r->columns);
    for (size_t i = 0; i < r->nrelations; i++) relation_free(&r->relations[i]);
    free(r->relations);
}

static void table_free(struct mp_table *t) {
    free(t->db);
    free(t->table);
    free(t->join_name);
    free(t->parent_db);
    free(t->parent_table);
    free(t->parent_column);
    free(t->bucket_column);
    free(t->daily_check_column);
    free(t->copy_to);
    free(t->expiry_column);
    free(t->where);
    row_filter_free(t->filter);
    for (size_t i = 0; i < t->ntop; i++) {
        free(t->top[i].db);
        free(t->top[i].sql);
        free(t->top[i].output);
    }
    free(t->top);
    for (size_t i = 0; i < t->ncolumns; i++) column_free(&t->columns[i]);
    free(t->columns);
    for (size_t i = 0; i < t->nrelations; i++) relation_free(&t->relations[i]);
    free(t->relations);
}

const struct mp_index *mp_index_named(const struct mapping *m, const char *alias) {
    for (size_t i = 0; i < m->nindices; i++)
        if (!strcmp(m->indices[i].alias, alias)) return &m->indices[i];
    return NULL;
}

void mp_index_free(struct mp_index *ix) {
    free(ix->alias);
    free(ix->join_field);
    free(ix->analysis);
    free(ix->state);
    free(ix->stopped);
    free(ix->id_template);
    for (size_t i = 0; i < ix->nsources; i++) free(ix->sources[i]);
    free(ix->sources);
    free(ix->source);
    free(ix->unit);
    free(ix->pattern_db);
    free(ix->pattern_table);
    for (size_t i = 0; i < 2 * ix->npatterns; i++) free(ix->patterns[i]);
    free(ix->patterns);
    free(ix->id_pre);
    free(ix->id_post);
    for (size_t j = 0; j < ix->ntables; j++) table_free(&ix->tables[j]);
    free(ix->tables);
    memset(ix, 0, sizeof *ix);
}

void mapping_free(struct mapping *m) {
    if (!m) return;
    for (size_t i = 0; i < m->nindices; i++) mp_index_free(&m->indices[i]);
    free(m->indices);
    m->indices = NULL;
    m->nindices = 0;
}

/* ------------------------------------------------------------------ copy */

static char *dup0(const char *s) { return s ? xstrdup(s) : NULL; }

static void column_copy(struct mp_column *o, const struct mp_column *c) {
    *o = *c;
    o->name = dup0(c->name);
    o->mysql_type = dup0(c->mysql_type);
    o->type = dup0(c->type);
    o->analyzer = dup0(c->analyzer);
    o->search_analyzer = dup0(c->search_analyzer);
    o->copy_to = dup0(c->copy_to);
    o->extend_name = dup0(c->extend_name);
    o->format = dup0(c->format);
    o->widened_from = dup0(c->widened_from);
}

static struct mp_column *columns_copy(const struct mp_column *c, size_t n) {
    struct mp_column *o = xcalloc(n ? n : 1, sizeof *o);
    for (size_t i = 0; i < n; i++) column_copy(&o[i], &c[i]);
    return o;
}

static void relation_copy(struct mp_relation *o, const struct mp_relation *r) {
    *o = *r;
    o->column = dup0(r->column);
    o->extend_name = dup0(r->extend_name);
    o->db = dup0(r->db);
    o->table = dup0(r->table);
    o->join_column = dup0(r->join_column);
    o->where = dup0(r->where);
    o->columns = r->columns ? columns_copy(r->columns, r->ncolumns) : NULL;
    o->relations = r->relations ? xcalloc(r->nrelations ? r->nrelations : 1, sizeof *o->relations)
                                : NULL;
    for (size_t i = 0; i < r->nrelations; i++) relation_copy(&o->relations[i], &r->relations[i]);
}

static void table_copy(struct mp_table *o, const struct mp_table *t) {
    *o = *t;
    o->db = dup0(t->db);
    o->table = dup0(t->table);
    o->join_name = dup0(t->join_name);
    o->parent_db = dup0(t->parent_db);
    o->parent_table = dup0(t->parent_table);
    o->parent_column = dup0(t->parent_column);
    o->bucket_column = dup0(t->bucket_column);
    o->daily_check_column = dup0(t->daily_check_column);
    o->copy_to = dup0(t->copy_to);
    o->expiry_column = dup0(t->expiry_column);
    o->where = dup0(t->where);
    o->filter = row_filter_copy(t->filter);
    o->top = t->top ? xcalloc(t->ntop ? t->ntop : 1, sizeof *o->top) : NULL;
    for (size_t i = 0; i < t->ntop; i++) {
        o->top[i].db = dup0(t->top[i].db);
        o->top[i].sql = dup0(t->top[i].sql);
        o->top[i].output = dup0(t->top[i].output);
    }
    o->columns = t->columns ? columns_copy(t->columns, t->ncolumns) : NULL;
    o->relations = t->relations ? xcalloc(t->nrelations ? t->nrelations : 1, sizeof *o->relations)
                                : NULL;
    for (size_t i = 0; i < t->nrelations; i++) relation_copy(&o->relations[i], &t->relations[i]);
}

void mp_index_copy(struct mp_index *o, const struct mp_index *ix) {
    *o = *ix;
    o->alias = dup0(ix->alias);
    o->join_field = dup0(ix->join_field);
    o->analysis = dup0(ix->analysis);
    o->state = dup0(ix->state);
    o->stopped = dup0(ix->stopped);
    o->id_template = dup0(ix->id_template);
    o->sources = ix->nsources ? xcalloc(ix->nsources, sizeof *o->sources) : NULL;
    for (size_t i = 0; i < ix->nsources; i++) o->sources[i] = xstrdup(ix->sources[i]);
    o->nsources = ix->nsources;
    o->source = dup0(ix->source);
    o->unit = dup0(ix->unit);
    o->pattern_db = dup0(ix->pattern_db);
    o->pattern_table = dup0(ix->pattern_table);
    o->patterns = ix->npatterns ? xcalloc(2 * ix->npatterns, sizeof *o->patterns) : NULL;
    for (size_t i = 0; i < 2 * ix->npatterns; i++) o->patterns[i] = xstrdup(ix->patterns[i]);
    o->npatterns = ix->npatterns;
    o->id_pre = dup0(ix->id_pre);
    o->id_post = dup0(ix->id_post);
    o->tables = xcalloc(ix->ntables ? ix->ntables : 1, sizeof *o->tables);
    for (size_t i = 0; i < ix->ntables; i++) table_copy(&o->tables[i], &ix->tables[i]);
}

void mapping_copy(struct mapping *out, const struct mapping *m) {
    out->nindices = m->nindices;
    out->indices = xcalloc(m->nindices ? m->nindices : 1, sizeof *out->indices);
    for (size_t i = 0; i < m->nindices; i++) mp_index_copy(&out->indices[i], &m->indices[i]);
}

/* c[0..n) made the validated columns (normalised types, the key taken
 * from the primary key, columns filled in): the same config, so the same
 * columns, in the same order */
static void columns_from(struct mp_column **c, size_t *n, const struct mp_column *v, size_t nv) {
    if (!v) return;
    for (size_t i = 0; i < *n; i++) column_free(&(*c)[i]);
    free(*c);
    *c = columns_copy(v, nv);
    *n = nv;
}

static void relation_types_from(struct mp_relation *r, size_t n, const struct mp_relation *v,
                                size_t nv) {
    if (!r || !v || n != nv) return;
    for (size_t i = 0; i < n; i++) {
        columns_from(&r[i].columns, &r[i].ncolumns, v[i].columns, v[i].ncolumns);
        r[i].nprimary = v[i].nprimary;
        r[i].join_primary = v[i].join_primary;
        r[i].join_indexed = v[i].join_indexed;
        r[i].join_kind = v[i].join_kind;
        relation_types_from(r[i].relations, r[i].nrelations, v[i].relations, v[i].nrelations);
    }
}

int mapping_types_from(struct mapping *m, const struct mapping *validated, const bool *only,
                       sbuf *errs) {
    int problems = 0;
    for (size_t i = 0; i < m->nindices; i++) {
        struct mp_index *ix = &m->indices[i];
        if (only && !only[i]) continue;
        const struct mp_index *u = NULL;
        for (size_t j = 0; j < validated->nindices && !u; j++)
            if (!strcmp(validated->indices[j].alias, ix->alias)) u = &validated->indices[j];
        if (!u) {
            sbuf_printf(errs, "$.indices[%zu] (index %s): no table of the source matches the "
                        "root table's pattern %s.%s: a sharded index config takes its columns' "
                        "types from its shards; create one first\n", i, ix->alias,
                        ix->ntables ? ix->tables[0].db : "?",
                        ix->ntables ? ix->tables[0].table : "?");
            problems++;
            continue;
        }
        if (u->ntables != ix->ntables) continue;
        for (size_t t = 0; t < ix->ntables; t++) {
            struct mp_table *tb = &ix->tables[t];
            const struct mp_table *vt = &u->tables[t];
            columns_from(&tb->columns, &tb->ncolumns, vt->columns, vt->ncolumns);
            relation_types_from(tb->relations, tb->nrelations, vt->relations, vt->nrelations);
        }
    }
    return problems;
}

/* ------------------------------------------------------------------ types */

/* What a MySQL column type is, parsed from COLUMN_TYPE. */
void mp_schema_add(struct mp_schema *s, const char *db, const char *table, const char *column,
                   const char *type, bool primary) {
    if (s->n == s->cap) {
        s->cap = s->cap ? s->cap * 2 : 64;
        s->cols = xrealloc(s->cols, s->cap * sizeof *s->cols);
    }
    struct mp_schema_col *c = &s->cols[s->n++];
    c->db = xstrdup(db);
    c->table = xstrdup(table);
    c->column = column ? xstrdup(column) : NULL;
    c->type = xstrdup(type ? type : "");
    c->primary = primary;
    c->unique = false;     /* set by the caller that knows (mapping_schema.c) */
    c->leads_index = false; /* likewise */
    c->clustered = false;
    c->collation = NULL;
}

void mp_schema_free(struct mp_schema *s) {
    if (!s) return;
    for (size_t i = 0; i < s->n; i++) {
        free(s->cols[i].db);
        free(s->cols[i].table);
        free(s->cols[i].column);
        free(s->cols[i].type);
        free(s->cols[i].collation);
    }
    free(s->cols);
    memset(s, 0, sizeof *s);
}

/* column NULL: any row of the table (does it exist?) */
const struct mp_schema_col *mp_schema_find(const struct mp_schema *s, const char *db,
                                           const char *table, const char *column) {
    for (size_t i = 0; i < s->n; i++) {
        const struct mp_schema_col *c = &s->cols[i];
        if (strcmp(c->db, db) || strcmp(c->table, table)) continue;
        if (!column || (c->column && !strcmp(c->column, column))) return c;
    }
    return NULL;
}

/* ------------------------------------------------------------------ validate */

const struct mp_column *mp_find_col(const struct mp_column *cols, size_t n, const char *name) {
    for (size_t i = 0; i < n; i++)
        if (!strcmp(cols[i].name, name)) return &cols[i];
    return NULL;
}

const char *mp_relation_name(const struct mp_relation *r, const struct mp_column *cols,
                             size_t n) {
    if (r->extend_name) return r->extend_name;
    const struct mp_column *c = mp_find_col(cols, n, r->column);
    return c ? c->extend_name : NULL;
}

bool mp_relation_nested(const struct mp_relation *r, const struct mp_column *cols, size_t n) {
    if (r->nested >= 0) return r->nested == 1;
    const struct mp_column *c = mp_find_col(cols, n, r->column);
    return c && c->nested;
}

static bool rewritten_type(const struct mp_column *c) {
    const char *t = c->mysql_type;
    if (t && *t)
        return !strncmp(t, "json", 4) || !strncmp(t, "float", 5) || !strncmp(t, "double", 6) ||
               !strncmp(t, "real", 4);
    /* type unknown: judge by the engine type of a JSON column */
    return c->type && (!strcmp(c->type, "object") || !strcmp(c->type, "flattened") ||
                       !strcmp(c->type, "flat_object"));
}

static const struct mp_column *rewritten_in(const struct mp_column *cols, size_t ncols,
                                            const struct mp_relation *rels, size_t nrels) {
    for (size_t i = 0; i < ncols; i++)
        if (rewritten_type(&cols[i])) return &cols[i];
    for (size_t i = 0; i < nrels; i++) {
        const struct mp_column *c = rewritten_in(rels[i].columns, rels[i].ncolumns,
                                                 rels[i].relations, rels[i].nrelations);
        if (c) return c;
    }
    return NULL;
}

const char *mp_index_rewritten_column(const struct mp_index *ix, const char **mysql_type) {
    if (!ix->ntables) return NULL;
    const struct mp_table *t = &ix->tables[0];
    const struct mp_column *c = rewritten_in(t->columns, t->ncolumns, t->relations, t->nrelations);
    if (c && mysql_type) *mysql_type = c->mysql_type && *c->mysql_type ? c->mysql_type : c->type;
    return c ? c->name : NULL;
}

const struct mp_column *mp_key_column(const struct mp_column *cols, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (cols[i].is_key) return &cols[i];
    return NULL;
}
