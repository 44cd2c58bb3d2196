/* relation_tops: the chains of level SQL from a changed row of a
 * delay-effect table to the root documents it is part of (a "relation
 * top"), their checks and their rows in relation_tops.
 *
 * A chain is generated from the router's paths (router_paths): one level
 * per join step that changes column (tags.id = product_tags.tag_id ->
 * product_tags.product_id = products.id gives one level, `SELECT DISTINCT
 * product_id FROM shop.product_tags WHERE tag_id IN (?)`). A table entry of
 * the mapping file may replace them for its index with a hand-written chain
 * ("relation_top": levels of {db, sql, output}, the last one giving the
 * root's keys). With no path at all the chain is the whole index (scheme 1:
 * every root key), and the plan says why. */
#include <ctype.h>
#include <mysql.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db.h"
#include "sync/delayed/delayed.h"

/* ---------- the `?` list ---------- */

/* Offset of the one `?` outside quotes and comments; -1 none, -2 several. */
static long placeholder(const char *s) {
    long at = -1;
    for (size_t i = 0; s[i]; i++) {
        char c = s[i];
        if (c == '\'' || c == '"' || c == '`') {
            for (i++; s[i] && s[i] != c; i++)
                if (s[i] == '\\' && c != '`' && s[i + 1]) i++;
            if (!s[i]) break;
        } else if (c == '-' && s[i + 1] == '-') {
            while (s[i] && s[i] != '\n') i++;
            if (!s[i]) break;
        } else if (c == '#') {
            while (s[i] && s[i] != '\n') i++;
            if (!s[i]) break;
        } else if (c == '/' && s[i + 1] == '*') {
            const char *e = strstr(s + i + 2, "*/");
            if (!e) break;
            i = (size_t)(e - s) + 1;
        } else if (c == '?') {
            if (at >= 0) return -2;
            at = (long)i;
        }
    }
    return at;
}

/* the `?` stands alone in an IN list: `IN ( ? )` */
static bool in_list(const char *s, long at) {
    long i = at - 1;
    while (i >= 0 && isspace((unsigned char)s[i])) i--;
    if (i < 0 || s[i] != '(') return false;
    i--;
    while (i >= 0 && isspace((unsigned char)s[i])) i--;
    if (i < 1 || toupper((unsigned char)s[i]) != 'N' || toupper((unsigned char)s[i - 1]) != 'I')
        return false;
    if (i >= 2 && (isalnum((unsigned char)s[i - 2]) || s[i - 2] == '_')) return false;
    const char *p = s + at + 1;
    while (isspace((unsigned char)*p)) p++;
    return *p == ')';
}

int rt_expand(MYSQL *m, const char *sql, char *const *vals, size_t n, sbuf *out, char *why,
              size_t whylen) {
    long at = placeholder(sql);
    if (at == -1)
        return errf(why, whylen, "it has no `?`: a level takes the ids below it only as a bound "
                                 "list, written `IN (?)`");
    if (at == -2)
        return errf(why, whylen, "it has more than one `?`: a level takes one bound list, "
                                 "written `IN (?)`, once");
    if (!in_list(sql, at))
        return errf(why, whylen, "its `?` is not a list of its own: write it as `IN (?)`");
    sbuf_add(out, sql, (size_t)at);
    if (!n) sbuf_adds(out, "NULL");
    for (size_t i = 0; i < n; i++) {
        if (i) sbuf_addc(out, ',');
        db_quote(m, out, vals[i], strlen(vals[i]));
    }
    sbuf_adds(out, sql + at + 1);
    return 0;
}

/* ---------- one page of a level ---------- */

static void in_values(MYSQL *m, sbuf *q, char *const *vals, size_t n) {
    if (!n) sbuf_adds(q, "NULL");
    for (size_t i = 0; i < n; i++) {
        if (i) sbuf_addc(q, ',');
        db_quote(m, q, vals[i], strlen(vals[i]));
    }
}

void rt_level_query(MYSQL *src, const struct rt_level *l, char *const *vals, size_t n,
                    const char *after, size_t limit, sbuf *q) {
    if (l->table) { /* generated: the keyset condition goes into the query itself */
        sbuf_adds(q, "SELECT DISTINCT ");
        db_ident(q, l->output);
        sbuf_adds(q, " FROM ");
        db_ident(q, l->db);
        sbuf_addc(q, '.');
        db_ident(q, l->table);
        sbuf_adds(q, " WHERE ");
        if (l->match) { /* NULL: the whole table (scheme 1) */
            db_ident(q, l->match);
            sbuf_adds(q, " IN (");
            in_values(src, q, vals, n);
            sbuf_adds(q, ") AND ");
        }
        db_ident(q, l->output);
        sbuf_adds(q, " IS NOT NULL");
        if (after) {
            sbuf_adds(q, " AND ");
            db_ident(q, l->output);
            sbuf_adds(q, " > ");
            db_quote(src, q, after, strlen(after));
        }
        sbuf_adds(q, " ORDER BY ");
        db_ident(q, l->output);
        sbuf_printf(q, " LIMIT %zu", limit);
        return;
    }
    /* hand-written: wrapped, so that any query pages the same way */
    sbuf_adds(q, "SELECT DISTINCT lv.");
    db_ident(q, l->output);
    sbuf_adds(q, " FROM (");
    char why[256];
    if (rt_expand(src, l->sql, vals, n, q, why, sizeof why) < 0) sbuf_adds(q, l->sql);
    sbuf_adds(q, ") AS lv WHERE lv.");
    db_ident(q, l->output);
    sbuf_adds(q, " IS NOT NULL");
    if (after) {
        sbuf_adds(q, " AND lv.");
        db_ident(q, l->output);
        sbuf_adds(q, " > ");
        db_quote(src, q, after, strlen(after));
    }
    sbuf_printf(q, " ORDER BY 1 LIMIT %zu", limit);
}

/* ---------- checks at import ---------- */

int rt_level_check(MYSQL *src, const char *db, const char *sql, const char *output, char *why,
                   size_t whylen) {
    sbuf q = SBUF_INIT;
    sbuf_adds(&q, "SELECT lv.");
    db_ident(&q, output);
    sbuf_adds(&q, " FROM (");
    if (rt_expand(src, sql, NULL, 0, &q, why, whylen) < 0) {
        sbuf_free(&q);
        return 1;
    }
    sbuf_adds(&q, ") AS lv LIMIT 0");
    int rc = 0;
    MYSQL_RES *res = NULL;
    if (mysql_select_db(src, db) != 0) {
        unsigned e = mysql_errno(src);
        rc = e >= 2000 && e < 3000 ? -1 : 1;
        errf(why, whylen, "database %s: %s", db, mysql_error(src));
    } else if (!(res = db_query(src, q.data, q.len, why, whylen))) {
        unsigned e = mysql_errno(src); /* the server's words, not db_query's */
        rc = e >= 2000 && e < 3000 ? -1 : 1;
        if (e == 1054 && strstr(mysql_error(src), output))
            errf(why, whylen, "it does not return the declared output column %s (%s)", output,
                 mysql_error(src));
        else
            errf(why, whylen, "it fails on the source: %s", mysql_error(src));
    } else {
        mysql_free_result(res);
    }
    sbuf_free(&q);
    return rc;
}

int rt_check_mapping(MYSQL *src, const struct mapping *m, sbuf *errs, char *err, size_t errlen) {
    int nerr = 0;
    for (size_t i = 0; i < m->nindices; i++)
        for (size_t j = 0; j < m->indices[i].ntables; j++) {
            const struct mp_table *t = &m->indices[i].tables[j];
            for (size_t l = 0; l < t->ntop; l++) {
                char why[1024];
                int rc = rt_level_check(src, t->top[l].db, t->top[l].sql, t->top[l].output, why,
                                        sizeof why);
                if (rc < 0) return errf(err, errlen, "checking a relation_top: %s", why);
                if (rc > 0) {
                    sbuf_printf(errs,
                                "$.indices[%zu] (index %s).tables[%zu] (table %s.%s)."
                                "relation_top[%zu].sql: %s\n",
                                i, m->indices[i].alias, j, t->db, t->table, l, why);
                    nerr++;
                }
            }
        }
    return nerr;
}

/* ---------- the plan ---------- */

static struct rt_chain *add_chain(struct rt_plan *p, size_t index, size_t doctable) {
    p->chains = xrealloc(p->chains, (p->nchains + 1) * sizeof *p->chains);
    struct rt_chain *c = &p->chains[p->nchains++];
    memset(c, 0, sizeof *c);
    c->index = index, c->doctable = doctable;
    return c;
}

static void add_level(struct rt_chain *c, const char *db, const char *sql, const char *output,
                      const char *table, const char *match) {
    c->levels = xrealloc(c->levels, (c->nlevels + 1) * sizeof *c->levels);
    struct rt_level *l = &c->levels[c->nlevels++];
    l->db = xstrdup(db);
    l->output = xstrdup(output);
    l->table = table ? xstrdup(table) : NULL;
    l->match = match ? xstrdup(match) : NULL;
    if (sql) {
        l->sql = xstrdup(sql);
    } else { /* the generated level's text, as relation_tops shows it */
        sbuf s = SBUF_INIT;
        sbuf_adds(&s, "SELECT DISTINCT ");
        db_ident(&s, output);
        sbuf_adds(&s, " FROM ");
        db_ident(&s, db);
        sbuf_addc(&s, '.');
        db_ident(&s, table);
        if (match) {
            sbuf_adds(&s, " WHERE ");
            db_ident(&s, match);
            sbuf_adds(&s, " IN (?)");
        }
        l->sql = sbuf_detach(&s);
    }
}

static void chain_free(struct rt_chain *c) {
    for (size_t i = 0; i < c->nlevels; i++) {
        free(c->levels[i].db);
        free(c->levels[i].sql);
        free(c->levels[i].output);
        free(c->levels[i].table);
        free(c->levels[i].match);
    }
    free(c->levels);
    free(c->start_column);
}

void rt_plan_free(struct rt_plan *p) {
    if (!p) return;
    for (size_t i = 0; i < p->nchains; i++) chain_free(&p->chains[i]);
    free(p->chains);
    free(p->db);
    free(p->table);
    free(p->note);
    memset(p, 0, sizeof *p);
}

struct path_ctx {
    struct rt_plan *p;
    const struct mapping *m;
    const char *pk; /* the table's one primary key column, NULL if it has not exactly one */
    bool whole;     /* a path that cannot start from the snapshots' keys */
};

static int on_path(void *ctx, size_t index, size_t doctable, const char *seed,
                   const struct router_step *steps, size_t nsteps) {
    struct path_ctx *x = ctx;
    struct rt_chain *c = add_chain(x->p, index, doctable);
    if (!x->pk) {
        x->whole = true;
        return 0;
    }
    if (strcmp(seed, x->pk)) { /* joined on another column: level 0 finds it from the key */
        c->start = true;
        c->start_column = xstrdup(seed);
        add_level(c, x->p->db, NULL, seed, x->p->table, x->pk);
    }
    for (size_t s = 0; s < nsteps; s++) {
        const struct router_step *st = &steps[s];
        if (!strcmp(st->match, st->out)) continue; /* the values pass through */
        add_level(c, st->db, NULL, st->out, st->table, st->match);
    }
    if (c->nlevels > DELAYED_MAX_LEVELS) x->whole = true;
    return 0;
}

static void note(struct rt_plan *p, const char *fmt, const char *a, const char *b) {
    sbuf s = SBUF_INIT;
    if (p->note) sbuf_printf(&s, "%s; ", p->note);
    sbuf_printf(&s, fmt, a, b);
    free(p->note);
    p->note = sbuf_detach(&s);
}

int rt_plan_build(MYSQL *src, const struct mapping *m, const struct router *r, const char *db,
                  const char *table, long only, struct rt_plan *out, char *err, size_t errlen) {
    memset(out, 0, sizeof *out);
    out->db = xstrdup(db);
    out->table = xstrdup(table);
    /* the table's primary key: what a snapshot's business id holds */
    sbuf q = SBUF_INIT;
    sbuf_adds(&q, "SELECT COLUMN_NAME FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = ");
    db_quote(src, &q, db, strlen(db));
    sbuf_adds(&q, " AND TABLE_NAME = ");
    db_quote(src, &q, table, strlen(table));
    sbuf_adds(&q, " AND COLUMN_KEY = 'PRI' ORDER BY ORDINAL_POSITION");
    MYSQL_RES *res = db_query(src, q.data, q.len, err, errlen);
    sbuf_free(&q);
    if (!res) return -1;
    char *pk = NULL;
    if (mysql_num_rows(res) == 1) pk = xstrdup(mysql_fetch_row(res)[0]);
    mysql_free_result(res);
    for (size_t i = 0; i < m->nindices; i++) {
        if (only >= 0 && (size_t)only != i) continue;
        const struct mp_index *ix = &m->indices[i];
        const struct mp_table *entry = NULL;
        for (size_t t = 0; t < ix->ntables; t++)
            if (!strcmp(ix->tables[t].db, db) && !strcmp(ix->tables[t].table, table) &&
                ix->tables[t].delay_effect)
                entry = &ix->tables[t];
        if (entry && entry->ntop) { /* hand-written: it replaces the generated chains */
            struct rt_chain *c = add_chain(out, i, 0);
            c->from_mapping = true;
            for (size_t l = 0; l < entry->ntop; l++)
                add_level(c, entry->top[l].db, entry->top[l].sql, entry->top[l].output, NULL,
                          NULL);
            continue;
        }
        size_t first = out->nchains;
        struct path_ctx x = {out, m, pk, false};
        int n = router_paths(r, i, db, table, on_path, &x);
        if (n < 0) {
            free(pk);
            return errf(err, errlen, "listing the paths of %s.%s", db, table);
        }
        if (!x.whole && n > 0) continue;
        if (!x.whole && !entry) continue; /* this index does not read the table */
        /* scheme 1: the whole index */
        while (out->nchains > first) chain_free(&out->chains[--out->nchains]);
        const struct mp_column *key = mp_table_key(&ix->tables[0]);
        if (!key) continue;
        if (x.whole)
            note(out,
                 "index %s is refreshed whole (scheme 1): %s has no single-column primary key "
                 "to start a relation top from; write one by hand (relation_top)",
                 ix->alias, table);
        else
            note(out, "index %s is refreshed whole (scheme 1): no relation of it reads %s",
                 ix->alias, table);
        struct rt_chain *c = add_chain(out, i, 0);
        c->whole = true;
        add_level(c, ix->tables[0].db, NULL, key->name, ix->tables[0].table, NULL);
    }
    free(pk);
    return 0;
}

void rt_plan_describe(const struct rt_plan *p, const struct mapping *m, sbuf *out) {
    for (size_t i = 0; i < p->nchains; i++) {
        const struct rt_chain *c = &p->chains[i];
        const struct mp_index *ix = &m->indices[c->index];
        const struct mp_table *dt = &ix->tables[c->doctable];
        sbuf_printf(out, "  %s.%s -> index %s, documents of %s.%s (%s)%s\n", p->db, p->table,
                    ix->alias, dt->db, dt->table,
                    c->whole ? "scheme 1: every document"
                    : c->from_mapping ? "relation_top of the mapping file"
                                      : "generated from the mapping's relations",
                    c->start ? "; a deleted row's value is read from its snapshot" : "");
        for (size_t l = 0; l < c->nlevels; l++)
            sbuf_printf(out, "    level %zu in %s: %s -> %s\n", l + 1, c->levels[l].db,
                        c->levels[l].sql, c->levels[l].output);
    }
    if (p->note) sbuf_printf(out, "  note: %s\n", p->note);
}

int rt_plan_save(MYSQL *meta, const char *source, const struct rt_plan *p,
                 const struct mapping *m, const unsigned long long *index_ids, char *err,
                 size_t errlen) {
    sbuf q = SBUF_INIT;
    sbuf_adds(&q, "DELETE FROM relation_tops WHERE origin = 'generated' AND source = ");
    db_quote(meta, &q, source, strlen(source));
    sbuf_adds(&q, " AND db_name = ");
    db_quote(meta, &q, p->db, strlen(p->db));
    sbuf_adds(&q, " AND table_name = ");
    db_quote(meta, &q, p->table, strlen(p->table));
    int rc = db_exec(meta, q.data, err, errlen);
    unsigned path[64] = {0};
    for (size_t i = 0; i < p->nchains && rc == 0; i++) {
        const struct rt_chain *c = &p->chains[i];
        if (c->from_mapping) continue;
        const struct mp_table *dt = &m->indices[c->index].tables[c->doctable];
        unsigned pn = c->index < 64 ? path[c->index]++ : (unsigned)i;
        for (size_t l = 0; l < c->nlevels && rc == 0; l++) {
            sbuf_reset(&q);
            sbuf_adds(&q, "INSERT INTO relation_tops (source, db_name, table_name, top_index_id, "
                          "path, level, level_db, level_sql, output_column, doc_table, origin) "
                          "VALUES (");
            db_quote(meta, &q, source, strlen(source));
            sbuf_addc(&q, ',');
            db_quote(meta, &q, p->db, strlen(p->db));
            sbuf_addc(&q, ',');
            db_quote(meta, &q, p->table, strlen(p->table));
            sbuf_printf(&q, ", %llu, %u, %zu, ", index_ids[c->index], pn, l + 1);
            db_quote(meta, &q, c->levels[l].db, strlen(c->levels[l].db));
            sbuf_addc(&q, ',');
            db_quote(meta, &q, c->levels[l].sql, strlen(c->levels[l].sql));
            sbuf_addc(&q, ',');
            db_quote(meta, &q, c->levels[l].output, strlen(c->levels[l].output));
            sbuf_adds(&q, ", CONCAT(");
            db_quote(meta, &q, dt->db, strlen(dt->db));
            sbuf_adds(&q, ", '.', ");
            db_quote(meta, &q, dt->table, strlen(dt->table));
            sbuf_adds(&q, "), 'generated') ON DUPLICATE KEY UPDATE level_sql = VALUES(level_sql)");
            rc = db_exec(meta, q.data, err, errlen);
        }
    }
    sbuf_free(&q);
    return rc;
}

/* ---------- the walker ---------- */

/* one page of a level: its query, run; the values, NULL on error */
static char **walk_page(struct rt_walk *w, const struct rt_level *l, size_t level,
                        char *const *in, size_t k, const char *after, size_t *nrows, size_t *nv) {
    sbuf q = SBUF_INIT;
    rt_level_query(w->src, l, in, k, after, w->page, &q);
    if (!l->table && mysql_select_db(w->src, l->db) != 0) {
        sbuf_free(&q);
        w->sql_failed = !db_conn_lost(w->src);
        snprintf(w->err, w->errlen, "level %zu of %s: database %s: %s", level + 1, w->what, l->db,
                 mysql_error(w->src));
        return NULL;
    }
    char e[1024];
    MYSQL_RES *res = db_query(w->src, q.data, q.len, e, sizeof e);
    sbuf_free(&q);
    if (!res) {
        w->sql_failed = !db_conn_lost(w->src);
        snprintf(w->err, w->errlen, "level %zu of %s (%s): %s", level + 1, w->what,
                 l->sql ? l->sql : "generated", e);
        return NULL;
    }
    *nrows = (size_t)mysql_num_rows(res);
    size_t i = 0;
    char **vals = xcalloc(*nrows ? *nrows : 1, sizeof *vals);
    MYSQL_ROW row;
    while ((row = mysql_fetch_row(res)))
        if (row[0]) vals[i++] = xstrdup(row[0]);
    mysql_free_result(res);
    *nv = i;
    return vals;
}

int rt_walk(struct rt_walk *w, const struct rt_chain *ch, size_t level, char *const *in,
            size_t nin) {
    if (level == ch->nlevels) return w->sink(w->ud, ch, in, nin);
    const struct rt_level *l = &ch->levels[level];
    bool no_input = l->table && !l->match; /* scheme 1: every key of the root */
    if (!nin && !no_input) return 0;
    for (size_t off = 0; off < nin || (no_input && off == 0); off += w->chunk) {
        size_t k = no_input ? 0 : nin - off < w->chunk ? nin - off : w->chunk;
        char *after = NULL;
        for (;;) {
            size_t nr = 0, nv = 0;
            char **vals = walk_page(w, l, level, in + off, k, after, &nr, &nv);
            if (!vals) {
                free(after);
                return -1;
            }
            if (w->level_rows) w->level_rows(w->ud, level + 1, nv);
            int rc = rt_walk(w, ch, level + 1, vals, nv);
            free(after);
            after = nv ? xstrdup(vals[nv - 1]) : NULL;
            for (size_t j = 0; j < nv; j++) free(vals[j]);
            free(vals);
            if (rc < 0) {
                free(after);
                return -1;
            }
            if (nr < w->page) break;
        }
        free(after);
    }
    return 0;
}
