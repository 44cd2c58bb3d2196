/* mapping_generate: propose a mapping for one root table from the source's
 * information_schema — its columns and primary key, and the tables linked to
 * it by foreign keys (or, without one, by `<table>_id` naming: a guess, said
 * in the notes) as objects (many-to-one), nested arrays (one-to-many) and
 * many-to-many relations through link tables, down to a given depth. The
 * caller validates the result against the source (which fills the columns
 * and their types) and writes it. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mysql.h>

#include "db.h"
#include "sync/pipeline/docbuild.h"
#include "sync/mapping/index_mapping.h"
#include "sync/authoring/mapping_generate.h"

/* a reference: from.col -> to.col (one column each side) */
struct edge {
    char *from, *from_col, *to, *to_col;
    bool guessed;
};

struct gen {
    const char *db;
    const struct mg_opts *o;
    struct mp_schema schema; /* every column of every base table of db */
    struct edge *e;
    size_t ne;
    sbuf *notes;
};

static void edge_add(struct gen *g, const char *from, const char *fc, const char *to,
                     const char *tc, bool guessed) {
    g->e = xrealloc(g->e, (g->ne + 1) * sizeof *g->e);
    g->e[g->ne++] = (struct edge){xstrdup(from), xstrdup(fc), xstrdup(to), xstrdup(tc), guessed};
}

/* the table's single primary key column, NULL when it has none or several */
static const char *single_pk(const struct gen *g, const char *table) {
    const char *pk = NULL;
    int n = 0;
    for (size_t i = 0; i < g->schema.n; i++) {
        const struct mp_schema_col *c = &g->schema.cols[i];
        if (c->primary && !strcmp(c->table, table)) {
            pk = c->column;
            n++;
        }
    }
    return n == 1 ? pk : NULL;
}

static bool has_table(const struct gen *g, const char *t) {
    return mp_schema_find(&g->schema, g->db, t, NULL) != NULL;
}

static bool has_edge_from(const struct gen *g, const char *table, const char *col) {
    for (size_t i = 0; i < g->ne; i++)
        if (!strcmp(g->e[i].from, table) && !strcmp(g->e[i].from_col, col)) return true;
    return false;
}

static int load(struct gen *g, MYSQL *src, char *err, size_t errlen) {
    sbuf sql = SBUF_INIT;
    sbuf_adds(&sql, "SELECT c.TABLE_NAME, c.COLUMN_NAME, c.COLUMN_TYPE, c.COLUMN_KEY = 'PRI', "
                    "c.COLUMN_KEY = 'UNI' FROM information_schema.COLUMNS c JOIN information_schema.TABLES t "
                    "ON t.TABLE_SCHEMA = c.TABLE_SCHEMA AND t.TABLE_NAME = c.TABLE_NAME "
                    "WHERE t.TABLE_TYPE = 'BASE TABLE' AND c.TABLE_SCHEMA = ");
    db_quote(src, &sql, g->db, strlen(g->db));
    sbuf_adds(&sql, " ORDER BY c.TABLE_NAME, c.ORDINAL_POSITION");
    MYSQL_RES *r = db_query(src, sql.data, sql.len, err, errlen);
    MYSQL_ROW row;
    if (r) {
        while ((row = mysql_fetch_row(r))) {
            mp_schema_add(&g->schema, g->db, row[0], row[1], row[2], row[3] && row[3][0] == '1');
            g->schema.cols[g->schema.n - 1].unique = row[4] && row[4][0] == '1';
        }
        mysql_free_result(r);
    }
    sbuf_reset(&sql);
    /* single-column foreign keys inside the database */
    sbuf_adds(&sql, "SELECT k.TABLE_NAME, k.COLUMN_NAME, k.REFERENCED_TABLE_NAME, "
                    "k.REFERENCED_COLUMN_NAME FROM information_schema.KEY_COLUMN_USAGE k "
                    "WHERE k.REFERENCED_TABLE_NAME IS NOT NULL AND k.TABLE_SCHEMA = ");
    db_quote(src, &sql, g->db, strlen(g->db));
    sbuf_adds(&sql, " AND k.REFERENCED_TABLE_SCHEMA = k.TABLE_SCHEMA AND NOT EXISTS (SELECT 1 "
                    "FROM information_schema.KEY_COLUMN_USAGE o WHERE o.CONSTRAINT_SCHEMA = "
                    "k.CONSTRAINT_SCHEMA AND o.TABLE_NAME = k.TABLE_NAME AND o.CONSTRAINT_NAME = "
                    "k.CONSTRAINT_NAME AND o.ORDINAL_POSITION > 1) "
                    "ORDER BY k.TABLE_NAME, k.COLUMN_NAME");
    MYSQL_RES *f = r ? db_query(src, sql.data, sql.len, err, errlen) : NULL;
    sbuf_free(&sql);
    if (!f) return -1;
    while ((row = mysql_fetch_row(f)))
        if (!has_edge_from(g, row[0], row[1])) edge_add(g, row[0], row[1], row[2], row[3], false);
    mysql_free_result(f);
    /* `<name>_id` without a foreign key: a table <name>, <name>s, <name>es or
     * <nam>ies with a one-column primary key is a guess */
    for (size_t i = 0; i < g->schema.n; i++) {
        const struct mp_schema_col *c = &g->schema.cols[i];
        size_t n = strlen(c->column);
        if (n < 4 || strcmp(c->column + n - 3, "_id") || has_edge_from(g, c->table, c->column))
            continue;
        char base[200], cand[4][220];
        snprintf(base, sizeof base, "%.*s", (int)(n - 3), c->column);
        size_t b = strlen(base);
        snprintf(cand[0], sizeof cand[0], "%s", base);
        snprintf(cand[1], sizeof cand[1], "%ss", base);
        snprintf(cand[2], sizeof cand[2], "%ses", base);
        snprintf(cand[3], sizeof cand[3], "%.*sies", (int)(b - 1), base);
        for (int k = 0; k < 4; k++) {
            if (k == 3 && base[b - 1] != 'y') break;
            const char *pk = has_table(g, cand[k]) ? single_pk(g, cand[k]) : NULL;
            if (!pk || !strcmp(cand[k], c->table)) continue;
            edge_add(g, c->table, c->column, cand[k], pk, true);
            break;
        }
    }
    return 0;
}

/* A link table: two references to two other tables, and nothing else but
 * its own key. The other reference than `via`, or NULL. */
static const struct edge *link_other(const struct gen *g, const char *table,
                                     const struct edge *via) {
    const struct edge *other = NULL;
    int n = 0;
    for (size_t i = 0; i < g->ne; i++)
        if (!strcmp(g->e[i].from, table)) {
            n++;
            if (&g->e[i] != via) other = &g->e[i];
        }
    if (n != 2 || !other || !strcmp(other->to, table)) return NULL;
    int spare = 0; /* columns neither a reference nor in the key */
    for (size_t i = 0; i < g->schema.n; i++) {
        const struct mp_schema_col *c = &g->schema.cols[i];
        if (strcmp(c->table, table)) continue;
        bool ref = !strcmp(c->column, via->from_col) || !strcmp(c->column, other->from_col);
        if (!ref && !c->primary) spare++;
    }
    return spare ? NULL : other;
}

static bool included(const struct gen *g, const char *table) {
    if (!g->o->include) return true;
    for (size_t i = 0; i < g->o->ninclude; i++) {
        const char *s = g->o->include[i], *dot = strchr(s, '.');
        if (dot ? (strlen(g->db) == (size_t)(dot - s) && !strncmp(s, g->db, (size_t)(dot - s)) &&
                   !strcmp(dot + 1, table))
                : !strcmp(s, table))
            return true;
    }
    return false;
}

struct chain {
    const char *t[64];
    int n;
};

static bool in_chain(const struct chain *ch, const char *t) {
    for (int i = 0; i < ch->n; i++)
        if (!strcmp(ch->t[i], t)) return true;
    return false;
}

/* A field name for a relation, unique among the owner's columns and the
 * relations already proposed at its level. */
static char *field_name(const struct gen *g, const char *owner, const char *want,
                        const struct mp_relation *rels, size_t nrels) {
    sbuf s = SBUF_INIT;
    for (int k = 1;; k++) {
        sbuf_reset(&s);
        if (k == 1)
            sbuf_adds(&s, want);
        else
            sbuf_printf(&s, "%s_%d", want, k);
        bool used = mp_schema_find(&g->schema, g->db, owner, s.data) != NULL;
        for (size_t i = 0; i < nrels && !used; i++)
            used = rels[i].extend_name && !strcmp(rels[i].extend_name, s.data);
        if (!used) break;
    }
    return sbuf_detach(&s);
}

static void note(const struct gen *g, const struct edge *e, const char *field) {
    if (e->guessed)
        sbuf_printf(g->notes, "searchsync mapping generate: guessed (no foreign key): %s.%s.%s -> %s.%s.%s (field \"%s\"): "
                    "check it, or remove that relation from the file\n", g->db, e->from,
                    e->from_col, g->db, e->to, e->to_col, field);
}

static struct mp_relation *rel_new(struct mp_relation **rels, size_t *n, const struct gen *g,
                                   const char *column, const char *table, const char *join,
                                   int nested, char *name) {
    *rels = xrealloc(*rels, (*n + 1) * sizeof **rels);
    struct mp_relation *r = &(*rels)[(*n)++];
    memset(r, 0, sizeof *r);
    r->column = xstrdup(column);
    r->db = xstrdup(g->db);
    r->table = xstrdup(table);
    r->join_column = xstrdup(join);
    r->nested = nested;
    r->refresh_parent = true;
    r->extend_name = name;
    return r;
}

/* the relations of `table`'s rows, depth levels deep */
static void relations_of(struct gen *g, const char *table, int depth, struct chain *ch,
                         struct mp_relation **rels, size_t *nrels) {
    if (depth <= 0 || ch->n >= 60) return;
    /* many-to-one: objects */
    for (size_t i = 0; i < g->ne; i++) {
        const struct edge *e = &g->e[i];
        if (strcmp(e->from, table) || in_chain(ch, e->to) || !included(g, e->to)) continue;
        size_t n = strlen(e->from_col);
        char want[256];
        if (n > 3 && !strcmp(e->from_col + n - 3, "_id"))
            snprintf(want, sizeof want, "%.*s", (int)(n - 3), e->from_col);
        else
            snprintf(want, sizeof want, "%s", e->to);
        char *name = field_name(g, table, want, *rels, *nrels);
        note(g, e, name);
        struct mp_relation *r =
            rel_new(rels, nrels, g, e->from_col, e->to, e->to_col, 0, name);
        ch->t[ch->n++] = e->to;
        struct mp_relation *sub = NULL;
        size_t nsub = 0;
        relations_of(g, e->to, depth - 1, ch, &sub, &nsub);
        r = &(*rels)[*nrels - 1];
        r->relations = sub;
        r->nrelations = nsub;
        ch->n--;
    }
    /* one-to-many: nested arrays; through a link table: many-to-many */
    for (size_t i = 0; i < g->ne; i++) {
        const struct edge *e = &g->e[i];
        if (strcmp(e->to, table) || in_chain(ch, e->from) || !included(g, e->from)) continue;
        const struct edge *o = link_other(g, e->from, e);
        if (o && !in_chain(ch, o->to) && included(g, o->to)) {
            char *name = field_name(g, table, o->to, *rels, *nrels);
            note(g, e, name);
            note(g, o, name);
            struct mp_relation *r =
                rel_new(rels, nrels, g, e->to_col, e->from, e->from_col, 1, name);
            /* flattened: the elements are the linked rows themselves
             * ([{"id": 4, "name": "outdoor"}]); the link row gives only the
             * column that reaches them */
            r->flatten = true;
            r->columns = xcalloc(1, sizeof *r->columns);
            r->columns[0].name = xstrdup(o->from_col);
            r->columns[0].indexed = true;
            r->ncolumns = 1;
            struct mp_relation *in = NULL;
            size_t nin = 0;
            rel_new(&in, &nin, g, o->from_col, o->to, o->to_col, 0, NULL);
            ch->t[ch->n++] = e->from;
            ch->t[ch->n++] = o->to;
            struct mp_relation *sub = NULL;
            size_t nsub = 0;
            relations_of(g, o->to, depth - 1, ch, &sub, &nsub);
            in->relations = sub;
            in->nrelations = nsub;
            ch->n -= 2;
            r = &(*rels)[*nrels - 1];
            r->relations = in;
            r->nrelations = 1;
            continue;
        }
        char *name = field_name(g, table, e->from, *rels, *nrels);
        note(g, e, name);
        rel_new(rels, nrels, g, e->to_col, e->from, e->from_col, 1, name);
        ch->t[ch->n++] = e->from;
        struct mp_relation *sub = NULL;
        size_t nsub = 0;
        relations_of(g, e->from, depth - 1, ch, &sub, &nsub);
        struct mp_relation *r = &(*rels)[*nrels - 1];
        r->relations = sub;
        r->nrelations = nsub;
        ch->n--;
    }
}

int mapping_generate(MYSQL *src, const char *db, const char *table, const struct mg_opts *o,
                     struct mapping *out, sbuf *notes, char *err, size_t errlen) {
    memset(out, 0, sizeof *out);
    struct gen g = {.db = db, .o = o, .notes = notes};
    int rc = load(&g, src, err, errlen);
    if (rc == 0 && !has_table(&g, table)) {
        snprintf(err, errlen, "no table %s.%s on the source (information_schema.TABLES, base "
                              "tables only): check the name and the [source] user's grants",
                 db, table);
        rc = 1;
    }
    size_t npk = 0, nuni = 0;
    sbuf pkcols = SBUF_INIT;
    const char *pk0 = NULL;
    for (size_t i = 0; rc == 0 && i < g.schema.n; i++) {
        const struct mp_schema_col *c = &g.schema.cols[i];
        if (strcmp(c->table, table)) continue;
        if (c->primary && !npk) pk0 = c->column;
        if (c->primary) sbuf_printf(&pkcols, "%s`%s`", npk++ ? ", " : "", c->column);
        nuni += c->unique;
    }
    if (rc == 0 && !npk) {
        snprintf(err, errlen, "%s.%s has no primary key: a document needs an id (add a primary "
                              "key to the table, or write the mapping by hand with a unique "
                              "column marked \"key\": true)", db, table);
        rc = 1;
    } else if (rc == 0 && npk > 1 && !nuni && !o->relations_only) { /* the key validation
                                                                       * takes (mapping.c) */
        snprintf(err, errlen, "%s.%s has a primary key of %zu columns (%s) and no column unique "
                              "on its own: a document's id is one column. Add one, e.g. ALTER "
                              "TABLE ... ADD COLUMN doc_id VARCHAR(255) AS (CONCAT_WS(':', %s)) "
                              "STORED, ADD UNIQUE (doc_id), and generate again",
                 db, table, npk, pkcols.data, pkcols.data);
        rc = 1;
    }
    sbuf_free(&pkcols);
    if (rc == 0) {
        out->indices = xcalloc(1, sizeof *out->indices);
        out->nindices = 1;
        struct mp_index *ix = &out->indices[0];
        ix->shards = 1;
        ix->replicas = o->replicas >= 0 ? o->replicas : MP_REPLICAS_DEFAULT;
        ix->history_retention = 2;
        ix->join_field = xstrdup("relation");
        ix->alias = xstrdup(table);
        for (char *p = ix->alias; *p; p++) {
            *p = (char)tolower((unsigned char)*p);
            if (!isalnum((unsigned char)*p) && *p != '_' && *p != '-') *p = '_';
        }
        ix->tables = xcalloc(1, sizeof *ix->tables);
        ix->ntables = 1;
        struct mp_table *t = &ix->tables[0];
        t->db = xstrdup(db);
        t->table = xstrdup(table);
        struct chain ch = {.t = {table}, .n = 1};
        relations_of(&g, table, o->depth, &ch, &t->relations, &t->nrelations);
        if (o->relations_only && npk > 1 && !nuni) { /* validates, for its relations */
            t->columns = xcalloc(1, sizeof *t->columns);
            t->ncolumns = 1;
            t->columns[0].name = xstrdup(pk0);
            t->columns[0].is_key = true;
            t->columns[0].indexed = true;
        }
    }
    for (size_t i = 0; i < g.ne; i++) {
        free(g.e[i].from);
        free(g.e[i].from_col);
        free(g.e[i].to);
        free(g.e[i].to_col);
    }
    free(g.e);
    mp_schema_free(&g.schema);
    return rc;
}

/* generated relation columns carry their table's primary key as "key" (it
 * orders the elements of a nested array) */
static void mark_keys(struct mp_relation *r, size_t n) {
    for (size_t i = 0; i < n; i++) {
        for (size_t c = 0; c < r[i].ncolumns; c++)
            if (r[i].columns[c].primary) r[i].columns[c].is_key = true;
        mark_keys(r[i].relations, r[i].nrelations);
    }
}

/* BIGINT UNSIGNED columns (validation gave them long, which holds values up
 * to 2^63-1 only: the engine refuses a larger one, never rounds it) become
 * unsigned_long where the engine has it; elsewhere a note says what a larger
 * value does */
static void unsigned_bigints(struct mp_column *c, size_t n, const char *db, const char *table,
                             const struct search_dialect *engine, sbuf *notes) {
    for (size_t i = 0; i < n; i++) {
        if (!mapping_is_unsigned_bigint(c[i].mysql_type) || !c[i].type ||
            strcmp(c[i].type, "long"))
            continue;
        if (engine && index_type_supported(engine, "unsigned_long")) {
            free(c[i].type);
            c[i].type = xstrdup("unsigned_long");
        } else {
            sbuf_printf(notes, "%s.%s.%s is BIGINT UNSIGNED, mapped as long: %s; a value above "
                        "2^63-1 would be refused by the engine (a dead letter naming it), so use "
                        "unsigned_long (Elasticsearch 7.10+, OpenSearch 2.8+) or keyword if the "
                        "column holds such values\n", db, table, c[i].name,
                        engine ? "this engine has no unsigned_long"
                               : "the engine at [search] urls could not be asked whether it "
                                 "has unsigned_long");
        }
    }
}

static void unsigned_bigints_rel(struct mp_relation *r, size_t n,
                                 const struct search_dialect *engine, sbuf *notes) {
    for (size_t i = 0; i < n; i++) {
        unsigned_bigints(r[i].columns, r[i].ncolumns, r[i].db, r[i].table, engine, notes);
        unsigned_bigints_rel(r[i].relations, r[i].nrelations, engine, notes);
    }
}

/* the first document of a sample, kept as built */
static int keep_sample(void *ctx, const char *id, const char *routing, const char *body,
                       size_t len) {
    (void)id, (void)routing;
    sbuf *out = ctx;
    if (!out->len) sbuf_add(out, body, len);
    return 0;
}

/* ---------- shard families ----------
 * A root table whose name ends in digits (orders_07) among tables named the
 * same but for those digits (orders_00 .. orders_15), or in a database whose
 * name does the same (shop_3 among shop_0 .. shop_7, each with the table), is
 * one shard of a family: the proposal maps the family with placeholders
 * (mapping_shard.h), pairing each other table that carries the same digits
 * (order_items_07 -> order_items_{n}); the others are shared. */

/* name = prefix + digits: the prefix's length, or 0 when it ends in none */
static size_t digit_split(const char *name) {
    size_t n = strlen(name), k = n;
    while (k > 0 && isdigit((unsigned char)name[k - 1])) k--;
    return k < n && k > 0 ? k : 0;
}

/* how many of the source's names (db or table, by list) are prefix + digits */
static size_t family_size(char **names, size_t n, const char *prefix, size_t plen) {
    size_t c = 0;
    for (size_t i = 0; i < n; i++) {
        if (strncmp(names[i], prefix, plen) || !names[i][plen]) continue;
        const char *p = names[i] + plen;
        while (isdigit((unsigned char)*p)) p++;
        c += *p == '\0';
    }
    return c;
}

/* name with its digits (digits, as in the root) made {ph}; NULL when it does
 * not end in them */
static char *with_placeholder(const char *name, const char *digits, const char *ph) {
    size_t n = strlen(name), d = strlen(digits);
    if (n <= d || strcmp(name + n - d, digits) || isdigit((unsigned char)name[n - d - 1]))
        return NULL;
    sbuf s = SBUF_INIT;
    sbuf_add(&s, name, n - d);
    sbuf_printf(&s, "{%s}", ph);
    return sbuf_detach(&s);
}

static void family_rels(struct mp_relation *r, size_t n, const char *db, const char *dbpat,
                        const char *tdigits) {
    for (size_t i = 0; i < n; i++) {
        char *t = tdigits ? with_placeholder(r[i].table, tdigits, "n") : NULL;
        if (dbpat && !strcmp(r[i].db, db)) {
            free(r[i].db);
            r[i].db = xstrdup(dbpat);
        }
        if (t && (!dbpat || strchr(r[i].db, '{') || !strcmp(r[i].db, db))) {
            free(r[i].table);
            r[i].table = t;
        } else {
            free(t);
        }
        family_rels(r[i].relations, r[i].nrelations, db, dbpat, tdigits);
    }
}

/* the proposal's root (and what pairs with it) as a family's pattern, when
 * the source has such a family; said in notes */
static void propose_family(MYSQL *src, struct mp_index *ix, sbuf *notes) {
    struct mp_table *root = &ix->tables[0];
    MYSQL_RES *r = db_query(src, "SELECT TABLE_SCHEMA, TABLE_NAME FROM information_schema.TABLES "
                                 "WHERE TABLE_TYPE = 'BASE TABLE' AND TABLE_SCHEMA NOT IN "
                                 "('mysql', 'information_schema', 'performance_schema', 'sys')",
                            0, NULL, 0);
    if (!r) return;
    size_t n = (size_t)mysql_num_rows(r), k = 0;
    char **dbs = xcalloc(n ? n : 1, sizeof *dbs), **tabs = xcalloc(n ? n : 1, sizeof *tabs);
    char **same_db = xcalloc(n ? n : 1, sizeof *same_db), **same_name = xcalloc(n ? n : 1,
                                                                                  sizeof *same_name);
    size_t nsd = 0, nsn = 0;
    MYSQL_ROW row;
    while ((row = mysql_fetch_row(r)) && k < n) {
        if (!row[0] || !row[1]) continue;
        dbs[k] = xstrdup(row[0]), tabs[k] = xstrdup(row[1]);
        if (!strcmp(row[0], root->db)) same_db[nsd++] = tabs[k];     /* tables of its db */
        if (!strcmp(row[1], root->table)) same_name[nsn++] = dbs[k]; /* dbs with its name */
        k++;
    }
    mysql_free_result(r);
    size_t tp = digit_split(root->table), dp = digit_split(root->db);
    size_t tfam = tp ? family_size(same_db, nsd, root->table, tp) : 0;
    size_t dfam = dp ? family_size(same_name, nsn, root->db, dp) : 0;
    if (tfam >= 2 || dfam >= 2) {
        char *tdigits = tfam >= 2 ? xstrdup(root->table + tp) : NULL;
        char *ddigits = dfam >= 2 ? xstrdup(root->db + dp) : NULL;
        sbuf dbp = SBUF_INIT, tbp = SBUF_INIT;
        if (ddigits) sbuf_printf(&dbp, "%.*s{s:[0-9]+}", (int)dp, root->db);
        else sbuf_adds(&dbp, root->db);
        if (tdigits) sbuf_printf(&tbp, "%.*s{n:[0-9]+}", (int)tp, root->table);
        else sbuf_adds(&tbp, root->table);
        char *dbuse = ddigits ? with_placeholder(root->db, ddigits, "s") : NULL;
        sbuf_printf(notes, "%s.%s is one shard of %zu table(s) %s.%s: the proposal maps the "
                    "family with placeholders (docs/mapping.md, \"Shard tables\"); tables "
                    "ending in the same digits pair with each shard, the others are shared; "
                    "document ids carry the shard ({db}.{table}:{key}) unless you add "
                    "\"unique_keys\": true\n", root->db, root->table,
                    tfam >= 2 && dfam >= 2 ? tfam * dfam : tfam >= 2 ? tfam : dfam, dbp.data,
                    tbp.data);
        family_rels(root->relations, root->nrelations, root->db, dbuse, tdigits);
        for (size_t t = 1; t < ix->ntables; t++) {
            struct mp_table *tb = &ix->tables[t];
            char *nt = tdigits ? with_placeholder(tb->table, tdigits, "n") : NULL;
            if (nt) free(tb->table), tb->table = nt;
            if (dbuse && !strcmp(tb->db, root->db)) free(tb->db), tb->db = xstrdup(dbuse);
        }
        free(root->db);
        free(root->table);
        root->db = sbuf_detach(&dbp);
        root->table = sbuf_detach(&tbp);
        sbuf_free(&dbp);
        sbuf_free(&tbp);
        free(dbuse);
        free(tdigits);
        free(ddigits);
    }
    for (size_t i = 0; i < k; i++) free(dbs[i]), free(tabs[i]);
    free(dbs), free(tabs), free(same_db), free(same_name);
}

int mapping_propose(MYSQL *src, const char *db, const char *table, const struct mg_opts *o,
                    sbuf *file, sbuf *notes, sbuf *sample, char *err, size_t errlen) {
    struct mapping m = {0};
    struct mp_schema schema = {0};
    sbuf errs = SBUF_INIT;
    int rc = mapping_generate(src, db, table, o, &m, notes, err, errlen);
    if (rc == 0 && mapping_schema_load(src, &m, &schema, err, errlen) < 0) rc = -1;
    if (rc == 0) {
        int nerr = mapping_validate(&m, &schema, &errs);
        if (nerr) {
            snprintf(err, errlen, "the proposed mapping does not validate (%d problem%s), please "
                     "report it: %s", nerr, nerr == 1 ? "" : "s", errs.data);
            rc = -1;
        }
    }
    if (rc == 0) {
        for (size_t t = 0; t < m.indices[0].ntables; t++) {
            struct mp_table *tb = &m.indices[0].tables[t];
            mark_keys(tb->relations, tb->nrelations);
            unsigned_bigints(tb->columns, tb->ncolumns, tb->db, tb->table, o->engine, notes);
            unsigned_bigints_rel(tb->relations, tb->nrelations, o->engine, notes);
        }
        /* a shard of a family: the family's pattern (the sample below is the
         * table asked for) */
        struct mapping fam = {0};
        mapping_copy(&fam, &m);
        propose_family(src, &fam.indices[0], notes);
        mapping_write(&fam, file);
        mapping_free(&fam);
        /* one document from the first row: what the documents will look like */
        const struct mp_index *ix = &m.indices[0];
        struct docbuild b;
        docbuild_init(&b, src, ix);
        struct docbuild_sink sink = {keep_sample, NULL, sample};
        char *last = NULL;
        size_t nrows = 0;
        char why[1024] = "";
        int r = docbuild_page(&b, 0, NULL, NULL, 1, false, &sink, &last, &nrows, why, sizeof why);
        free(last);
        if (r < 0)
            snprintf(err, errlen, "%s", why);
        else if (!sample->len)
            snprintf(err, errlen, "%s.%s has no rows", ix->tables[0].db, ix->tables[0].table);
    }
    sbuf_free(&errs);
    mapping_free(&m);
    mp_schema_free(&schema);
    return rc;
}
