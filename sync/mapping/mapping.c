/* mapping: the model's memory, the MySQL -> engine type rules, the source
 * schema and validation (see mapping.h). The JSON file is mapping_file.c,
 * the metadata tables mapping_db.c. */
#include "sync/mapping/mapping.h"
#include "sync/mapping/row_filter.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

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
enum mclass {
    MC_UNKNOWN, MC_INT, MC_DECIMAL, MC_FLOAT, MC_DOUBLE, MC_DATE, MC_DATETIME, MC_TIME, MC_YEAR,
    MC_CHAR, MC_STRING, MC_TEXT, MC_ENUM, MC_SET, MC_JSON, MC_BIT, MC_BINARY, MC_GEOMETRY,
    MC_POINT
};

struct mtype {
    enum mclass cls;
    int bytes;     /* MC_INT: 1 2 3 4 8 */
    bool is_unsigned;
    int len;       /* display width / length / precision / bit width */
    int scale;     /* DECIMAL scale, DATETIME fsp */
};

static struct mtype mtype_parse(const char *t) {
    struct mtype m = {MC_UNKNOWN, 0, false, -1, 0};
    if (!t) return m;
    char base[32];
    size_t i = 0;
    while (t[i] && (isalpha((unsigned char)t[i]) || t[i] == '_') && i < sizeof base - 1) {
        base[i] = (char)tolower((unsigned char)t[i]);
        i++;
    }
    base[i] = '\0';
    const char *p = t + i;
    if (*p == '(') {
        m.len = atoi(p + 1);
        const char *c = strchr(p, ',');
        const char *close = strchr(p, ')');
        if (c && close && c < close) m.scale = atoi(c + 1);
    }
    m.is_unsigned = strstr(t, "unsigned") != NULL;
    static const struct { const char *n; enum mclass c; int bytes; } tab[] = {
        {"tinyint", MC_INT, 1}, {"bool", MC_INT, 1}, {"boolean", MC_INT, 1},
        {"smallint", MC_INT, 2}, {"mediumint", MC_INT, 3}, {"int", MC_INT, 4},
        {"integer", MC_INT, 4}, {"bigint", MC_INT, 8}, {"decimal", MC_DECIMAL, 0},
        {"numeric", MC_DECIMAL, 0}, {"float", MC_FLOAT, 0}, {"double", MC_DOUBLE, 0},
        {"real", MC_DOUBLE, 0}, {"date", MC_DATE, 0}, {"datetime", MC_DATETIME, 0},
        {"timestamp", MC_DATETIME, 0}, {"time", MC_TIME, 0}, {"year", MC_YEAR, 0},
        {"char", MC_CHAR, 0}, {"varchar", MC_STRING, 0}, {"tinytext", MC_TEXT, 0},
        {"text", MC_TEXT, 0}, {"mediumtext", MC_TEXT, 0}, {"longtext", MC_TEXT, 0},
        {"enum", MC_ENUM, 0}, {"set", MC_SET, 0}, {"json", MC_JSON, 0}, {"bit", MC_BIT, 0},
        {"binary", MC_BINARY, 0}, {"varbinary", MC_BINARY, 0}, {"tinyblob", MC_BINARY, 0},
        {"blob", MC_BINARY, 0}, {"mediumblob", MC_BINARY, 0}, {"longblob", MC_BINARY, 0},
        {"geometry", MC_GEOMETRY, 0}, {"point", MC_POINT, 0}, {"linestring", MC_GEOMETRY, 0},
        {"polygon", MC_GEOMETRY, 0}, {"multipoint", MC_GEOMETRY, 0},
        {"multilinestring", MC_GEOMETRY, 0}, {"multipolygon", MC_GEOMETRY, 0},
        {"geometrycollection", MC_GEOMETRY, 0}, {"geomcollection", MC_GEOMETRY, 0},
    };
    for (size_t k = 0; k < sizeof tab / sizeof tab[0]; k++)
        if (!strcmp(base, tab[k].n)) {
            m.cls = tab[k].c;
            m.bytes = tab[k].bytes;
            break;
        }
    if (m.cls == MC_DECIMAL && m.len < 0) m.len = 10;
    if (m.cls == MC_DATETIME || m.cls == MC_TIME) m.scale = m.len < 0 ? 0 : m.len;
    if (m.cls == MC_BIT && m.len < 0) m.len = 1;
    return m;
}

int mapping_decimal_scale(const char *mysql_type) {
    struct mtype m = mtype_parse(mysql_type);
    return m.cls == MC_DECIMAL ? m.scale : -1;
}

/* Engine types this model knows, and whether they are text-like (analyzers). */
static const char *const engine_types[] = {
    "long", "integer", "short", "byte", "unsigned_long", "double", "float", "half_float",
    "scaled_float", "boolean", "keyword", "text", "search_as_you_type", "wildcard", "date",
    "date_nanos", "binary", "object", "flattened", "flat_object", "geo_point", "geo_shape",
    "ip", NULL};

static bool known_type(const char *t) {
    for (int i = 0; engine_types[i]; i++)
        if (!strcmp(engine_types[i], t)) return true;
    return false;
}

static bool is_text_type(const char *t) {
    return !strcmp(t, "text") || !strcmp(t, "search_as_you_type");
}

bool mapping_is_integer_type(const char *mysql_type) {
    return mysql_type && mtype_parse(mysql_type).cls == MC_INT;
}

bool mapping_is_unsigned_bigint(const char *mysql_type) {
    if (!mysql_type) return false;
    struct mtype m = mtype_parse(mysql_type);
    return m.cls == MC_INT && m.bytes == 8 && m.is_unsigned;
}

const char *mapping_default_type(const char *mysql_type) {
    struct mtype m = mtype_parse(mysql_type);
    switch (m.cls) {
    case MC_INT:
        switch (m.bytes) {
        case 1: return m.is_unsigned ? "short" : "byte";
        case 2: return m.is_unsigned ? "integer" : "short";
        case 3: return "integer";
        case 4: return m.is_unsigned ? "long" : "integer";
        default: return "long"; /* BIGINT UNSIGNED above 2^63-1 is refused, not rounded */
        }
    case MC_DECIMAL: return m.len <= 15 ? "scaled_float" : "keyword";
    case MC_FLOAT: return "float";
    case MC_DOUBLE: return "double";
    case MC_DATE:
    case MC_DATETIME: return "date";
    case MC_TIME: return "keyword";
    case MC_YEAR: return "short";
    case MC_CHAR: return "keyword";
    case MC_STRING:
    case MC_TEXT: return "text";
    case MC_ENUM:
    case MC_SET: return "keyword";
    case MC_JSON: return "object";
    case MC_BIT: return m.len <= 63 ? "long" : "unsigned_long";
    case MC_BINARY: return "binary";
    case MC_GEOMETRY:
    case MC_POINT: return "geo_shape";
    default: return "keyword";
    }
}

/* Largest magnitude an engine integer type holds exactly (bits of value). */
static int int_bits(const char *t) {
    if (!strcmp(t, "byte")) return 7;
    if (!strcmp(t, "short")) return 15;
    if (!strcmp(t, "integer")) return 31;
    if (!strcmp(t, "long")) return 63;
    if (!strcmp(t, "unsigned_long")) return 64;
    return -1;
}

static int fail_why(char *why, size_t n, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, n, fmt, ap);
    va_end(ap);
    return -1;
}

int mapping_type_compatible(const char *mysql_type, const char *t, char *why, size_t whylen) {
    if (!known_type(t)) return fail_why(why, whylen, "unknown engine type '%s'", t);
    struct mtype m = mtype_parse(mysql_type);
    bool numeric_fp = !strcmp(t, "double") || !strcmp(t, "float") || !strcmp(t, "half_float") ||
                      !strcmp(t, "scaled_float");
    if (!strcmp(t, "keyword") && m.cls != MC_JSON && m.cls != MC_GEOMETRY && m.cls != MC_POINT &&
        m.cls != MC_BINARY)
        return 0; /* any scalar kept as its exact text */
    switch (m.cls) {
    case MC_UNKNOWN: return 0; /* type not known: nothing to check */
    case MC_INT:
    case MC_BIT:
    case MC_YEAR: {
        int need; /* value bits the column needs (unsigned: all bits) */
        if (m.cls == MC_YEAR)
            need = 12;
        else if (m.cls == MC_BIT)
            need = m.len;
        else
            need = m.bytes * 8 - (m.is_unsigned ? 0 : 1);
        int have = int_bits(t);
        /* BIGINT UNSIGNED as long: values above 2^63-1 are refused by the
         * engine (a dead letter naming the value), never rounded; the default,
         * because unsigned_long is missing before ES 7.10 / OpenSearch 2.8 */
        if (have == 63 && need == 64 && m.cls == MC_INT) return 0;
        if (have >= 0) {
            if (have >= need) return 0;
            return fail_why(why, whylen, "%s holds %d value bits, %s needs %d", t, have,
                            mysql_type, need);
        }
        if (!strcmp(t, "boolean")) {
            if ((m.cls == MC_INT && m.bytes == 1) || (m.cls == MC_BIT && m.len == 1)) return 0;
            return fail_why(why, whylen, "boolean only for TINYINT or BIT(1), not %s", mysql_type);
        }
        if (!strcmp(t, "double") && need <= 53) return 0;
        if (!strcmp(t, "float") && need <= 24) return 0;
        if (numeric_fp)
            return fail_why(why, whylen, "%s would round %s values (use long or keyword)", t,
                            mysql_type);
        break;
    }
    case MC_DECIMAL:
        if (!strcmp(t, "scaled_float") || !strcmp(t, "double")) {
            if (m.len <= 15) return 0;
            return fail_why(why, whylen,
                            "%s would round %s (more than 15 digits): use keyword", t, mysql_type);
        }
        if (int_bits(t) >= 0 && m.scale == 0 && m.len <= 18) return 0;
        break;
    case MC_FLOAT:
        if (!strcmp(t, "float") || !strcmp(t, "double")) return 0;
        break;
    case MC_DOUBLE:
        if (!strcmp(t, "double")) return 0;
        if (numeric_fp) return fail_why(why, whylen, "%s would round DOUBLE values", t);
        break;
    case MC_DATE:
    case MC_DATETIME:
        if (!strcmp(t, "date") || !strcmp(t, "date_nanos")) return 0;
        break;
    case MC_TIME: break;
    case MC_CHAR:
    case MC_STRING:
    case MC_TEXT:
        if (is_text_type(t) || !strcmp(t, "wildcard") || !strcmp(t, "ip")) return 0;
        break;
    case MC_ENUM:
    case MC_SET:
        if (is_text_type(t)) return 0;
        break;
    case MC_JSON:
        if (!strcmp(t, "object") || !strcmp(t, "flattened") || !strcmp(t, "flat_object") ||
            !strcmp(t, "keyword"))
            return 0;
        break;
    case MC_BINARY:
        if (!strcmp(t, "binary")) return 0;
        break;
    case MC_POINT:
        if (!strcmp(t, "geo_point")) return 0;
        /* fall through */
    case MC_GEOMETRY:
        if (!strcmp(t, "geo_shape")) return 0;
        break;
    }
    return fail_why(why, whylen, "engine type %s cannot hold MySQL %s", t, mysql_type);
}

bool mapping_type_widens(const char *from, const char *to, const char *type) {
    struct mtype a = mtype_parse(from), b = mtype_parse(to);
    char why[256];
    if (a.cls == MC_UNKNOWN || b.cls == MC_UNKNOWN) return false;
    if (mapping_type_compatible(to, type, why, sizeof why) < 0) return false;
    bool strings_a = a.cls == MC_CHAR || a.cls == MC_STRING || a.cls == MC_TEXT;
    bool strings_b = b.cls == MC_CHAR || b.cls == MC_STRING || b.cls == MC_TEXT;
    if (strings_a && strings_b) return true; /* the JSON form is the text either way */
    if (a.cls == MC_FLOAT && b.cls == MC_DOUBLE) return true;
    if (a.cls != b.cls) return false;
    switch (a.cls) {
    case MC_INT: /* every value of `from` fits `to` */
        if (a.is_unsigned == b.is_unsigned) return b.bytes >= a.bytes;
        return !b.is_unsigned && b.bytes > a.bytes;
    case MC_DECIMAL: /* the same decimals, at least as many integer digits */
        return b.scale == a.scale && b.len >= a.len;
    case MC_BIT: return b.len >= a.len;
    case MC_BINARY: return b.len < 0 || a.len < 0 ? true : b.len >= a.len;
    case MC_ENUM:
    case MC_SET:
    case MC_JSON:
    case MC_GEOMETRY:
    case MC_POINT:
    case MC_DOUBLE:
    case MC_FLOAT:
    case MC_DATE:
    case MC_YEAR: return true;
    default: return false; /* DATETIME/TIME precision changes the text of every value */
    }
}

/* ------------------------------------------------------------------ schema */

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
    c->unique = false;     /* set by the caller that knows (mapping_db.c) */
    c->collation = NULL;   /* likewise */
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

static const struct mp_column *find_col(const struct mp_column *cols, size_t n, const char *name) {
    for (size_t i = 0; i < n; i++)
        if (!strcmp(cols[i].name, name)) return &cols[i];
    return NULL;
}

const char *mp_relation_name(const struct mp_relation *r, const struct mp_column *cols,
                             size_t n) {
    if (r->extend_name) return r->extend_name;
    const struct mp_column *c = find_col(cols, n, r->column);
    return c ? c->extend_name : NULL;
}

bool mp_relation_nested(const struct mp_relation *r, const struct mp_column *cols, size_t n) {
    if (r->nested >= 0) return r->nested == 1;
    const struct mp_column *c = find_col(cols, n, r->column);
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

struct vctx {
    const struct mp_schema *schema;
    sbuf *errs;
    int n;
};

/* An operator-written WHERE fragment is spliced into queries as
 * `WHERE (fragment)`: allow one boolean condition and refuse what would turn
 * it into something else (reliability notes). Outside string literals: no
 * ';', no comments, balanced parentheses, and none of the words UNION, INTO,
 * SELECT (no subqueries), SLEEP, BENCHMARK, LOAD_FILE, OUTFILE. */
int mapping_where_check(const char *cond, char *why, size_t whylen) {
    static const char *banned[] = {"union", "into", "select", "sleep", "benchmark",
                                   "load_file", "outfile", "dumpfile"};
    int depth = 0;
    char quote = 0;
    for (const char *p = cond; *p; p++) {
        if (quote) {
            if (*p == '\\' && p[1]) p++;
            else if (*p == quote) quote = 0;
            continue;
        }
        if (*p == '\'' || *p == '"' || *p == '`') {
            quote = *p;
            continue;
        }
        if (*p == ';') return snprintf(why, whylen, "must be one condition, without ';'"), -1;
        if (*p == '#' || (*p == '-' && p[1] == '-') || (*p == '/' && p[1] == '*'))
            return snprintf(why, whylen, "comments are not allowed"), -1;
        if (*p == '(') depth++;
        if (*p == ')' && --depth < 0)
            return snprintf(why, whylen, "unbalanced parentheses"), -1;
        if (isalpha((unsigned char)*p) && (p == cond || !(isalnum((unsigned char)p[-1]) || p[-1] == '_'))) {
            size_t n = 0;
            while (isalnum((unsigned char)p[n]) || p[n] == '_') n++;
            for (size_t k = 0; k < sizeof banned / sizeof banned[0]; k++)
                if (strlen(banned[k]) == n && strncasecmp(p, banned[k], n) == 0)
                    return snprintf(why, whylen, "the word %s is not allowed in a condition",
                                    banned[k]), -1;
            p += n - 1;
        }
    }
    if (quote) return snprintf(why, whylen, "unterminated quoted string"), -1;
    if (depth != 0) return snprintf(why, whylen, "unbalanced parentheses"), -1;
    return 0;
}

static void verr(struct vctx *v, const char *where, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void verr(struct vctx *v, const char *where, const char *fmt, ...) {
    va_list ap;
    sbuf_printf(v->errs, "%s: ", where);
    va_start(ap, fmt);
    sbuf_vprintf(v->errs, fmt, ap);
    va_end(ap);
    sbuf_addc(v->errs, '\n');
    v->n++;
}

static bool table_exists(struct vctx *v, const char *where, const char *db, const char *table) {
    if (!v->schema) return true;
    if (mp_schema_find(v->schema, db, table, NULL)) return true;
    verr(v, where, "table %s.%s does not exist in the source (information_schema)", db, table);
    return false;
}

static void check_col_exists(struct vctx *v, const char *where, const char *what, const char *db,
                             const char *table, const char *col) {
    if (!col || !v->schema) return;
    if (!mp_schema_find(v->schema, db, table, NULL)) return; /* reported already */
    if (!mp_schema_find(v->schema, db, table, col))
        verr(v, where, "%s: column %s.%s.%s does not exist in the source", what, db, table, col);
}

/* Same MySQL type? Integer display widths are ignored (MariaDB writes
 * "int(11)", MySQL 8 "int"), as is the case of the type name. */
static void type_norm(const char *t, sbuf *out) {
    struct mtype m = mtype_parse(t);
    bool drop_width = m.cls == MC_INT || m.cls == MC_YEAR;
    for (const char *p = t; *p; p++) {
        if (drop_width && *p == '(') {
            const char *e = strchr(p, ')');
            if (e) {
                p = e;
                continue;
            }
        }
        sbuf_addc(out, *p);
    }
}

static bool same_mysql_type(const char *a, const char *b) {
    sbuf x = SBUF_INIT, y = SBUF_INIT;
    type_norm(a, &x);
    type_norm(b, &y);
    bool same = x.len == y.len && (x.len == 0 || !strcasecmp(x.data, y.data));
    sbuf_free(&x);
    sbuf_free(&y);
    return same;
}

static void check_columns(struct vctx *v, const char *where, const char *db, const char *table,
                          struct mp_column *cols, size_t n) {
    bool have_table = !v->schema || mp_schema_find(v->schema, db, table, NULL);
    for (size_t i = 0; i < n; i++) {
        struct mp_column *c = &cols[i];
        char w[1024];
        snprintf(w, sizeof w, "%s.columns[%zu] (column %s.%s.%s)", where, i, db, table, c->name);
        for (size_t j = 0; j < i; j++)
            if (!strcmp(cols[j].name, c->name)) verr(v, w, "column listed twice");
        if (!strcmp(c->name, "ss_version") || !strcmp(c->name, "ss_hash") ||
            !strcmp(c->name, "ss_key_hash") || !strcmp(c->name, "ss_shard"))
            verr(v, w, "%s is a field searchsync writes into every document (delivery's version, "
                 "the check's hashes): leave this column out of the mapping", c->name);
        if (v->schema && have_table) {
            const struct mp_schema_col *s = mp_schema_find(v->schema, db, table, c->name);
            if (!s) {
                verr(v, w, "no such column in the source (information_schema)");
                continue;
            }
            c->primary = s->primary;
            if (c->mysql_type && c->mysql_type[0] && !same_mysql_type(c->mysql_type, s->type) &&
                c->type && mapping_type_widens(c->mysql_type, s->type, c->type)) {
                /* the source's column was widened: followed, and recorded by the caller */
                free(c->widened_from);
                c->widened_from = c->mysql_type;
                c->mysql_type = xstrdup(s->type);
            } else if (c->mysql_type && c->mysql_type[0] && !same_mysql_type(c->mysql_type, s->type))
                verr(v, w, "mysql_type \"%s\" does not match the source's \"%s\": the engine "
                     "type %s cannot follow it without a reindex (change the mapping's type, "
                     "import it and reindex)", c->mysql_type, s->type, c->type ? c->type : "");
            else if (!c->mysql_type || !c->mysql_type[0] || strcmp(c->mysql_type, s->type)) {
                /* missing, or the same type spelt another way: the source's spelling */
                free(c->mysql_type);
                c->mysql_type = xstrdup(s->type);
            }
        }
        if (!c->type) {
            c->type = xstrdup(mapping_default_type(c->mysql_type ? c->mysql_type : ""));
            /* JSON has no fixed shape: as a dynamic object, the first row's
             * values would fix the types of all (a later string where a
             * number was, a number above 2^63-1, a bare scalar: refused, a
             * dead letter). By default it is kept in _source only */
            if (!strcmp(c->type, "object") && !c->index_given) c->indexed = false;
        }
        char why[256];
        if (mapping_type_compatible(c->mysql_type ? c->mysql_type : "", c->type, why, sizeof why) <
            0)
            verr(v, w, "type mismatch: %s", why);
        bool text = is_text_type(c->type);
        if ((c->analyzer || c->search_analyzer) && !text)
            verr(v, w, "analyzer/search_analyzer need a text type, not %s", c->type);
        if (c->search_analyzer && !c->analyzer)
            verr(v, w, "search_analyzer without analyzer");
        if (c->keyword && !text) verr(v, w, "keyword subfield needs a text type, not %s", c->type);
        if (c->format && strcmp(c->type, "date") && strcmp(c->type, "date_nanos"))
            verr(v, w, "format needs a date type, not %s", c->type);
    }
}

/* A table or relation listed without "columns" maps every column of the
 * source table (as go-mysql-elasticsearch does): filled here, in the source's
 * order, from the schema. Without a schema there is nothing to fill from. */
static void fill_all_columns(struct vctx *v, const char *where, const char *db, const char *table,
                             struct mp_column **cols, size_t *n) {
    if (*n) return;
    if (!v->schema) {
        verr(v, where, "no \"columns\": every column of %s.%s is meant, but the source's "
                       "schema is not loaded here (list the columns)", db, table);
        return;
    }
    size_t cnt = 0;
    for (size_t i = 0; i < v->schema->n; i++) {
        const struct mp_schema_col *s = &v->schema->cols[i];
        if (s->column && !strcmp(s->db, db) && !strcmp(s->table, table)) cnt++;
    }
    if (!cnt) return; /* the table's absence is reported by its caller */
    free(*cols);
    *cols = xcalloc(cnt, sizeof **cols);
    for (size_t i = 0; i < v->schema->n; i++) {
        const struct mp_schema_col *s = &v->schema->cols[i];
        if (!s->column || strcmp(s->db, db) || strcmp(s->table, table)) continue;
        struct mp_column *c = &(*cols)[(*n)++];
        c->name = xstrdup(s->column);
        c->indexed = true;
    }
}

/* A root or child table without a "key": true column takes the source's
 * primary key: its listed columns are marked, unlisted ones added first.
 * A primary key of several columns cannot be a document's id: a column
 * with a unique index of its own is taken instead when there is one (else
 * the columns are marked, and check_index says what to do). */
static void fill_key(struct vctx *v, const char *db, const char *table, struct mp_column **cols,
                     size_t *n) {
    if (!v->schema || mp_key_column(*cols, *n)) return;
    size_t npk = 0, nuni = 0;
    for (size_t i = 0; i < v->schema->n; i++) {
        const struct mp_schema_col *s = &v->schema->cols[i];
        if (!s->column || strcmp(s->db, db) || strcmp(s->table, table)) continue;
        npk += s->primary;
        nuni += s->unique;
    }
    bool by_unique = npk > 1 && nuni > 0;
    for (size_t i = 0; i < v->schema->n; i++) {
        const struct mp_schema_col *s = &v->schema->cols[i];
        if (!(by_unique ? s->unique : s->primary) || !s->column || strcmp(s->db, db) ||
            strcmp(s->table, table))
            continue;
        struct mp_column *c = (struct mp_column *)find_col(*cols, *n, s->column);
        if (!c) {
            *cols = xrealloc(*cols, (*n + 1) * sizeof **cols);
            memmove(*cols + 1, *cols, *n * sizeof **cols);
            (*n)++;
            c = &(*cols)[0];
            memset(c, 0, sizeof *c);
            c->name = xstrdup(s->column);
            c->indexed = true;
        }
        c->is_key = true;
        if (by_unique) break; /* the first such column */
    }
}

/* The chain of tables from the root to the current row, for cycle checks. */
struct chain {
    const char *db[40], *table[40];
    int n;
    bool root; /* chain[0] is the index's root table */
};

/* r's table's primary key, as far as the document builder needs it: with it,
 * ordering the related rows by the link column and then by columns that
 * complete the key orders them fully (no further column needed); and the
 * type class of r's join column. */
static void primary_key_of(const struct mp_schema *schema, struct mp_relation *r) {
    r->nprimary = 0;
    r->join_primary = false;
    const struct mp_schema_col *jc = mp_schema_find(schema, r->db, r->table, r->join_column);
    r->join_kind = !jc || !jc->type || !*jc->type ? MP_JOIN_UNKNOWN
                   : mapping_is_integer_type(jc->type) ? MP_JOIN_INTEGER
                                                       : MP_JOIN_OTHER;
    for (size_t i = 0; i < schema->n; i++) {
        const struct mp_schema_col *c = &schema->cols[i];
        if (!c->primary || !c->column || strcmp(c->db, r->db) || strcmp(c->table, r->table))
            continue;
        r->nprimary++;
        if (!strcmp(c->column, r->join_column)) r->join_primary = true;
    }
}

/* A flattened relation (many-to-many through a link table) lists the
 * link table's rows, each written as the row of its one relation: that
 * relation must exist, be one-to-one, and give no array to edit by script. */
static void check_flatten(struct vctx *v, const char *w, const struct mp_relation *r,
                          const struct mp_column *owner, size_t nowner) {
    if (!mp_relation_nested(r, owner, nowner))
        verr(v, w, "flatten needs a nested (one-to-many) relation on the link table");
    else if (r->nrelations != 1)
        verr(v, w, "flatten needs exactly one relation inside, from the link table to the "
                   "linked table (this one has %zu)", r->nrelations);
    else if (mp_relation_nested(&r->relations[0], r->columns, r->ncolumns))
        verr(v, w, "flatten needs its inner relation one-to-one (\"nested\": false): each "
                   "link row gives one element");
    if (r->area_update)
        verr(v, w, "flatten and area_update do not go together: the elements are the linked "
                   "rows, rebuilt with their document (use refresh_parent)");
}

/* lifted: rels is the one relation of a flattened relation, whose row is
 * written in place of the link row (its extend name is not used) */
static void check_relations(struct vctx *v, const char *where, const char *db, const char *table,
                            const struct mp_column *owner, size_t nowner,
                            struct mp_relation *rels, size_t n, struct chain *ch, bool lifted) {
    for (size_t i = 0; i < n; i++) {
        struct mp_relation *r = &rels[i];
        char w[1024];
        snprintf(w, sizeof w, "%s.relations[%zu] (relation %s.%s.%s -> %s.%s.%s)", where, i, db,
                 table, r->column, r->db, r->table, r->join_column);
        check_col_exists(v, w, "column", db, table, r->column);
        bool exists = table_exists(v, w, r->db, r->table);
        if (exists) check_col_exists(v, w, "join_column", r->db, r->table, r->join_column);
        if (exists && v->schema) primary_key_of(v->schema, r);
        const char *name = mp_relation_name(r, owner, nowner);
        if (r->flatten) check_flatten(v, w, r, owner, nowner);
        if (lifted)
            ; /* written in place of the link row: its name is not used */
        else if (!name)
            verr(v, w, "no extend name: set the relation's extend_name or column %s's", r->column);
        else {
            if (find_col(owner, nowner, name))
                verr(v, w, "extend name \"%s\" collides with a column of the same name", name);
            for (size_t j = 0; j < i; j++) {
                const char *o = mp_relation_name(&rels[j], owner, nowner);
                if (o && !strcmp(o, name)) verr(v, w, "extend name \"%s\" used twice", name);
            }
        }
        if (r->area_update && !mp_relation_nested(r, owner, nowner))
            verr(v, w, "area_update needs a nested (one-to-many) relation");
        else if (r->area_update) {
            /* the script finds the element by its key in a top-level array
             * of the root document, whose id is the root key */
            const struct mp_column *okey = NULL;
            size_t rkey = 0;
            for (size_t c = 0; c < nowner; c++)
                if (owner[c].is_key) okey = &owner[c];
            for (size_t c = 0; c < r->ncolumns; c++) rkey += r->columns[c].is_key;
            if (!ch->root || ch->n != 1)
                verr(v, w, "area_update works on a relation of the root table itself (one level "
                           "deep); use refresh_parent here");
            else if (!okey || strcmp(okey->name, r->column))
                verr(v, w, "area_update needs the relation joined on the root's key column "
                           "(\"column\": \"%s\")", okey ? okey->name : "?");
            else if (!rkey)
                verr(v, w, "area_update needs a key among the relation's columns (mark the "
                           "related table's primary key \"key\": true): elements are found by it");
            else if (rkey > 1) /* the script matches one field */
                verr(v, w, "area_update needs one key column among the relation's columns, not "
                           "%zu: elements are found by one value (mark a column unique on its "
                           "own \"key\": true, or drop area_update: the documents are then "
                           "rebuilt whole)", rkey);
        }
        char why[160];
        if (r->where && mapping_where_check(r->where, why, sizeof why) < 0)
            verr(v, w, "where: %s", why);
        bool cycle = false;
        for (int k = 0; k < ch->n; k++)
            if (!strcmp(ch->db[k], r->db) && !strcmp(ch->table[k], r->table)) cycle = true;
        if (cycle) {
            sbuf p = SBUF_INIT;
            for (int k = 0; k < ch->n; k++) sbuf_printf(&p, "%s.%s -> ", ch->db[k], ch->table[k]);
            verr(v, w, "relation cycle: %s%s.%s", p.data, r->db, r->table);
            sbuf_free(&p);
            continue;
        }
        if (exists) {
            fill_all_columns(v, w, r->db, r->table, &r->columns, &r->ncolumns);
            check_columns(v, w, r->db, r->table, r->columns, r->ncolumns);
        }
        if (ch->n >= 40) {
            verr(v, w, "relations nest too deep");
            continue;
        }
        ch->db[ch->n] = r->db;
        ch->table[ch->n] = r->table;
        ch->n++;
        check_relations(v, w, r->db, r->table, r->columns, r->ncolumns, r->relations,
                        r->nrelations, ch, r->flatten);
        ch->n--;
    }
}

/* A table's where: on a document table only, one condition
 * (mapping_where_check), parsed for its columns (a change of one can move a
 * row in or out). In row-image mode the daemon decides it from row images
 * without the server: it must be in the subset row_filter reads, and its
 * comparisons ones made here as the server makes them. */
static void check_where(struct vctx *v, const char *tw, struct mp_table *t, bool doc_table,
                        bool exists) {
    row_filter_free(t->filter);
    t->filter = NULL;
    if (!t->where) return;
    if (!doc_table) {
        verr(v, tw, "\"where\" filters the rows of a document table (the root or a parent/child "
                    "child): a related table's rows are filtered by its relation's \"where\"");
        return;
    }
    char why[512];
    if (mapping_where_check(t->where, why, sizeof why) < 0) {
        verr(v, tw, "where: %s", why);
        return;
    }
    bool rowimage = t->mode == MP_ROWIMAGE;
    t->filter = row_filter_parse(t->where, why, sizeof why);
    if (!t->filter) {
        if (rowimage)
            verr(v, tw, "where \"%s\": in mode row-image it is decided from the row image, "
                        "without the server, and %s (docs/mapping.md, \"The where of a document "
                        "table\", lists what it may hold; or use mode re-query)", t->where, why);
        return;
    }
    if (!v->schema || !exists) return;
    int b = row_filter_bind(t->filter, v->schema, t->db, t->table, why, sizeof why);
    if (b == -1) /* a column the table lacks: whatever the mode */
        verr(v, tw, "where \"%s\": %s", t->where, why);
    else if (b < 0 && rowimage)
        verr(v, tw, "where \"%s\": in mode row-image it is decided from the row image, "
                    "without the server, and %s (or use mode re-query)", t->where, why);
}

static bool uses_table(const struct mp_relation *rels, size_t n, const char *db, const char *t) {
    for (size_t i = 0; i < n; i++) {
        if (!strcmp(rels[i].db, db) && !strcmp(rels[i].table, t)) return true;
        if (uses_table(rels[i].relations, rels[i].nrelations, db, t)) return true;
    }
    return false;
}

static int table_index(const struct mp_index *ix, const char *db, const char *t) {
    for (size_t i = 0; i < ix->ntables; i++)
        if (!strcmp(ix->tables[i].db, db) && !strcmp(ix->tables[i].table, t)) return (int)i;
    return -1;
}

static bool valid_alias(const char *a) {
    if (!a[0] || a[0] == '_' || a[0] == '-' || a[0] == '+' || strlen(a) > 200) return false;
    for (const char *p = a; *p; p++)
        if (isupper((unsigned char)*p) || strchr("\\/*?\"<>| ,#:", *p)) return false;
    return strcmp(a, ".") && strcmp(a, "..");
}

static void check_index(struct vctx *v, struct mp_index *ix, size_t ii) {
    char w[512];
    if (ix->unit) /* a shard of a config over shard tables (mapping_shard.h) */
        snprintf(w, sizeof w, "$.indices[%zu] (index %s, shard %.200s)", ii, ix->alias,
                 ix->unit);
    else
        snprintf(w, sizeof w, "$.indices[%zu] (index %s)", ii, ix->alias);
    if (!valid_alias(ix->alias))
        verr(v, w, "\"%s\" is not a valid index name (lower case, no \\/*?\"<>|,#: or space)",
             ix->alias);
    bool parent_child = false;
    for (size_t i = 1; i < ix->ntables; i++)
        if (ix->tables[i].parent_table) parent_child = true;
    for (size_t i = 0; i < ix->ntables; i++) {
        struct mp_table *t = &ix->tables[i];
        char tw[768];
        snprintf(tw, sizeof tw, "%s.tables[%zu] (table %s.%s)", w, i, t->db, t->table);
        for (size_t j = 0; j < i; j++)
            if (!strcmp(ix->tables[j].db, t->db) && !strcmp(ix->tables[j].table, t->table))
                verr(v, tw, "table listed twice in one index");
        bool exists = table_exists(v, tw, t->db, t->table);
        bool doc_table = i == 0 || t->parent_table; /* its rows are documents */
        if (exists && doc_table) {
            fill_all_columns(v, tw, t->db, t->table, &t->columns, &t->ncolumns);
            fill_key(v, t->db, t->table, &t->columns, &t->ncolumns);
        }
        if (exists) check_columns(v, tw, t->db, t->table, t->columns, t->ncolumns);
        if (exists) {
            check_col_exists(v, tw, "bucket_column", t->db, t->table, t->bucket_column);
            check_col_exists(v, tw, "daily_check_column", t->db, t->table, t->daily_check_column);
            check_col_exists(v, tw, "expiry_column", t->db, t->table, t->expiry_column);
            check_col_exists(v, tw, "parent_column", t->db, t->table, t->parent_column);
        }
        check_where(v, tw, t, doc_table, exists);
        if (doc_table) {
            size_t nkeys = 0;
            sbuf keys = SBUF_INIT, quoted = SBUF_INIT;
            for (size_t c = 0; c < t->ncolumns; c++)
                if (t->columns[c].is_key) {
                    sbuf_printf(&keys, "%s%s", nkeys ? ", " : "", t->columns[c].name);
                    sbuf_printf(&quoted, "%s`%s`", nkeys ? ", " : "", t->columns[c].name);
                    nkeys++;
                }
            if (!nkeys)
                verr(v, tw, "%s table without a key%s: mark the column that identifies a row "
                     "\"key\": true", i == 0 ? "root" : "child",
                     v->schema ? " (the source table has no primary key)" : "");
            /* a document's id is one column's value: with two, rows that
             * share the first would be one document */
            else if (nkeys > 1)
                verr(v, tw, "%s table with %zu key columns (%s; marked, or the source's "
                     "primary key): a document is identified by one column. Mark one column "
                     "that is unique on its own \"key\": true; for a composite primary key, "
                     "add one, e.g. ALTER TABLE ... ADD COLUMN doc_id VARCHAR(255) AS "
                     "(CONCAT_WS(':', %s)) STORED, ADD UNIQUE (doc_id)",
                     i == 0 ? "root" : "child", nkeys, keys.data, quoted.data);
            sbuf_free(&keys);
            sbuf_free(&quoted);
        } else {
            if (t->ncolumns || t->nrelations)
                verr(v, tw, "a table that is neither the root nor a parent/child child only "
                            "carries settings (delay_effect, mode, bucket_column) of a related "
                            "table: its columns come from the relations");
            else if (!uses_table(ix->tables[0].relations, ix->tables[0].nrelations, t->db,
                                 t->table))
                verr(v, tw, "not the root, not a child (no \"parent\") and no relation of "
                            "this index reads it");
        }
        if (t->ntop && !t->delay_effect)
            verr(v, tw, "relation_top is for delay-effect tables: set \"delay_effect\": true "
                        "or drop it");
        if (i == 0 && t->parent_table)
            verr(v, tw, "the root table (the first) cannot have a parent");
        if (t->parent_table) {
            if (!t->join_name) verr(v, tw, "parent/child child without \"join_name\"");
            if (!t->parent_column) verr(v, tw, "parent/child child without \"parent_column\"");
            int p = table_index(ix, t->parent_db, t->parent_table);
            if (p < 0)
                verr(v, tw, "parent %s.%s is not a table of this index", t->parent_db,
                     t->parent_table);
            else if (p > 0 && !ix->tables[p].join_name)
                verr(v, tw, "parent %s.%s has no \"join_name\"", t->parent_db, t->parent_table);
            /* walk up: must reach the root without a cycle */
            int hops = 0, cur = (int)i;
            while (cur > 0 && hops <= (int)ix->ntables) {
                const struct mp_table *ct = &ix->tables[cur];
                if (!ct->parent_table) break;
                cur = table_index(ix, ct->parent_db, ct->parent_table);
                hops++;
            }
            if (hops > (int)ix->ntables) verr(v, tw, "parent/child cycle");
        }
        if (i == 0 && parent_child && !t->join_name)
            verr(v, tw, "the root of a parent/child index needs a \"join_name\"");
        if (t->join_name && !parent_child)
            verr(v, tw, "\"join_name\" without any parent/child child in this index");
        for (size_t j = 0; j < i; j++)
            if (t->join_name && ix->tables[j].join_name &&
                !strcmp(t->join_name, ix->tables[j].join_name))
                verr(v, tw, "join_name \"%s\" used twice", t->join_name);
        if (t->mode == MP_ROWIMAGE && (i != 0 || t->nrelations))
            verr(v, tw, "mode row-image builds documents from the binlog row alone: it needs "
                        "the root table of an index without relations (use re-query)");
        if (doc_table) {
            struct chain ch = {.n = 1, .root = i == 0};
            ch.db[0] = t->db;
            ch.table[0] = t->table;
            check_relations(v, tw, t->db, t->table, t->columns, t->ncolumns, t->relations,
                            t->nrelations, &ch, false);
        }
        if (parent_child && doc_table)
            for (size_t c = 0; c < t->ncolumns; c++)
                if (!strcmp(t->columns[c].name, ix->join_field))
                    verr(v, tw, "column %s has the name of the join field", t->columns[c].name);
    }
    /* parent/child tables share one set of fields: same name, same type */
    for (size_t i = 0; i < ix->ntables; i++)
        for (size_t j = i + 1; j < ix->ntables; j++) {
            const struct mp_table *a = &ix->tables[i], *b = &ix->tables[j];
            for (size_t x = 0; x < a->ncolumns; x++) {
                const struct mp_column *cb = find_col(b->columns, b->ncolumns, a->columns[x].name);
                if (cb && a->columns[x].type && cb->type && strcmp(a->columns[x].type, cb->type))
                    verr(v, w, "field %s is %s in %s.%s but %s in %s.%s (one index, one mapping)",
                         cb->name, a->columns[x].type, a->db, a->table, cb->type, b->db, b->table);
            }
        }
}

int mapping_validate(struct mapping *m, const struct mp_schema *schema, sbuf *errs) {
    struct vctx v = {schema, errs, 0};
    for (size_t i = 0; i < m->nindices; i++) {
        for (size_t j = 0; j < i; j++)
            if (!strcmp(m->indices[i].alias, m->indices[j].alias) &&
                !(m->indices[i].unit && m->indices[j].unit)) { /* (a config's shards) */
                char w[64];
                snprintf(w, sizeof w, "$.indices[%zu]", i);
                verr(&v, w, "alias \"%s\" used twice", m->indices[i].alias);
            }
        struct mp_index *ix = &m->indices[i];
        if ((ix->stopped || ix->deferred) && schema) {
            /* its deliveries are stopped because the source changed under
             * it: its problems are known; it is left out of routing until
             * its mapping fits again. Deferred: the source is ahead of the
             * reader, which goes on routing it until the schema change is
             * read and judged */
            sbuf scratch = SBUF_INIT;
            struct vctx sv = {schema, &scratch, 0};
            check_index(&sv, ix, i);
            ix->unusable = ix->stopped && sv.n > 0;
            sbuf_free(&scratch);
            continue;
        }
        check_index(&v, ix, i);
    }
    return v.n;
}

int mapping_validate_index(struct mapping *m, size_t i, const struct mp_schema *schema,
                           sbuf *errs) {
    struct vctx v = {schema, errs, 0};
    check_index(&v, &m->indices[i], i);
    return v.n;
}

const struct mp_column *mp_key_column(const struct mp_column *cols, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (cols[i].is_key) return &cols[i];
    return NULL;
}
