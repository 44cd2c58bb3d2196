/* mapping_validate: a mapping checked against the source's schema — tables
 * and columns exist, types fit, relations resolve, where conditions are
 * safe — with the keys and all-columns lists filled in from the schema
 * (see mapping.h). */
#include "sync/mapping/mapping.h"
#include "sync/mapping/mapping_int.h"
#include "sync/mapping/row_filter.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

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
            if (c->mysql_type && c->mysql_type[0] && !mp_same_mysql_type(c->mysql_type, s->type) &&
                c->type && mapping_type_widens(c->mysql_type, s->type, c->type)) {
                /* the source's column was widened: followed, and recorded by the caller */
                free(c->widened_from);
                c->widened_from = c->mysql_type;
                c->mysql_type = xstrdup(s->type);
            } else if (c->mysql_type && c->mysql_type[0] && !mp_same_mysql_type(c->mysql_type, s->type))
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
        bool text = mp_is_text_type(c->type);
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
        struct mp_column *c = (struct mp_column *)mp_find_col(*cols, *n, s->column);
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
 * complete the key orders them fully (no further column needed); the
 * type class of r's join column, and whether an index of it holds the key. */
static void primary_key_of(const struct mp_schema *schema, struct mp_relation *r) {
    r->nprimary = 0;
    r->join_primary = false;
    const struct mp_schema_col *jc = mp_schema_find(schema, r->db, r->table, r->join_column);
    r->join_indexed = jc && jc->leads_index && jc->clustered;
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
            if (mp_find_col(owner, nowner, name))
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

/* A document table's key: exactly one column, since a document's id is one
 * column's value (with two, rows that share the first would be one
 * document). */
static void check_doc_key(struct vctx *v, const char *tw, const struct mp_table *t, bool root) {
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
             "\"key\": true", root ? "root" : "child",
             v->schema ? " (the source table has no primary key)" : "");
    else if (nkeys > 1)
        verr(v, tw, "%s table with %zu key columns (%s; marked, or the source's "
             "primary key): a document is identified by one column. Mark one column "
             "that is unique on its own \"key\": true; for a composite primary key, "
             "add one, e.g. ALTER TABLE ... ADD COLUMN doc_id VARCHAR(255) AS "
             "(CONCAT_WS(':', %s)) STORED, ADD UNIQUE (doc_id)",
             root ? "root" : "child", nkeys, keys.data, quoted.data);
    sbuf_free(&keys);
    sbuf_free(&quoted);
}

/* A parent/child child (table i): its join settings, a parent among the
 * index's tables, and a way up to the root without a cycle. */
static void check_parent(struct vctx *v, const char *tw, const struct mp_index *ix, size_t i) {
    const struct mp_table *t = &ix->tables[i];
    if (!t->join_name) verr(v, tw, "parent/child child without \"join_name\"");
    if (!t->parent_column) verr(v, tw, "parent/child child without \"parent_column\"");
    int p = table_index(ix, t->parent_db, t->parent_table);
    if (p < 0)
        verr(v, tw, "parent %s.%s is not a table of this index", t->parent_db, t->parent_table);
    else if (p > 0 && !ix->tables[p].join_name)
        verr(v, tw, "parent %s.%s has no \"join_name\"", t->parent_db, t->parent_table);
    int hops = 0, cur = (int)i;
    while (cur > 0 && hops <= (int)ix->ntables) {
        const struct mp_table *ct = &ix->tables[cur];
        if (!ct->parent_table) break;
        cur = table_index(ix, ct->parent_db, ct->parent_table);
        hops++;
    }
    if (hops > (int)ix->ntables) verr(v, tw, "parent/child cycle");
}

/* The tables of one index share one set of fields: same name, same type. */
static void check_shared_fields(struct vctx *v, const char *w, const struct mp_index *ix) {
    for (size_t i = 0; i < ix->ntables; i++)
        for (size_t j = i + 1; j < ix->ntables; j++) {
            const struct mp_table *a = &ix->tables[i], *b = &ix->tables[j];
            for (size_t x = 0; x < a->ncolumns; x++) {
                const struct mp_column *cb = mp_find_col(b->columns, b->ncolumns, a->columns[x].name);
                if (cb && a->columns[x].type && cb->type && strcmp(a->columns[x].type, cb->type))
                    verr(v, w, "field %s is %s in %s.%s but %s in %s.%s (one index, one mapping)",
                         cb->name, a->columns[x].type, a->db, a->table, cb->type, b->db, b->table);
            }
        }
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
            check_doc_key(v, tw, t, i == 0);
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
        if (t->parent_table) check_parent(v, tw, ix, i);
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
    check_shared_fields(v, w, ix);
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
