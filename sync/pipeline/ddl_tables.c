/* ddl_tables: the tables a DDL statement names and what it does to each, and
 * the index configs that read them (see ddl_tables.h).
 *
 * A tokenizer, not a SQL grammar: it reads the statement's leading keywords
 * and its table names, skips comments, strings and parenthesised parts, and
 * says DDL_UNKNOWN for a statement it does not recognise, so that the caller
 * stays as careful as before for anything it cannot read. */
#include "sync/pipeline/ddl_tables.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sbuf.h"

/* skip blanks and comments (slash-star, "-- " and # to the end of the line) */
static const char *skip(const char *p, const char *e) {
    for (;;) {
        while (p < e && isspace((unsigned char)*p)) p++;
        if (p + 1 < e && p[0] == '/' && p[1] == '*') {
            const char *q = p + 2;
            while (q + 1 < e && !(q[0] == '*' && q[1] == '/')) q++;
            p = q + 1 < e ? q + 2 : e;
        } else if (p < e && (*p == '#' || (p + 2 < e && p[0] == '-' && p[1] == '-' &&
                                          isspace((unsigned char)p[2])))) {
            while (p < e && *p != '\n') p++;
        } else {
            return p;
        }
    }
}

static bool ident_char(char c) {
    return isalnum((unsigned char)c) || c == '_' || c == '$' || (unsigned char)c >= 0x80;
}

/* a keyword, case-insensitive, followed by a non-identifier character: the
 * position after it and the blanks that follow, or NULL */
static const char *keyword(const char *p, const char *e, const char *kw) {
    size_t n = strlen(kw);
    if ((size_t)(e - p) < n || strncasecmp(p, kw, n)) return NULL;
    if (p + n < e && ident_char(p[n])) return NULL;
    return skip(p + n, e);
}

/* the first of several keywords that matches (NULL: none) */
static const char *keyword_any(const char *p, const char *e, const char *const *kws) {
    for (; *kws; kws++) {
        const char *q = keyword(p, e, *kws);
        if (q) return q;
    }
    return NULL;
}

/* one identifier, bare or `quoted` (`` inside for a backquote), into out */
static const char *ident(const char *p, const char *e, char *out, size_t outlen) {
    size_t n = 0;
    if (p < e && *p == '`') {
        for (p++; p < e; p++) {
            if (*p == '`') {
                if (p + 1 < e && p[1] == '`') p++;
                else break;
            }
            if (n + 1 >= outlen) return NULL;
            out[n++] = *p;
        }
        if (p >= e) return NULL;
        p++;
    } else {
        while (p < e && ident_char(*p)) {
            if (n + 1 >= outlen) return NULL;
            out[n++] = *p++;
        }
    }
    if (!n) return NULL;
    out[n] = '\0';
    return skip(p, e);
}

static void add(struct ddl_stmt *s, const char *db, const char *table, enum ddl_effect effect) {
    s->t = xrealloc(s->t, (s->n + 1) * sizeof *s->t);
    struct ddl_target *t = &s->t[s->n++];
    snprintf(t->db, sizeof t->db, "%s", db);
    snprintf(t->table, sizeof t->table, "%s", table);
    t->effect = effect;
}

/* [db.]table into db/table (default_db when not written): the position after
 * it, or NULL. *known: a database is known (written, or a default). */
static const char *table_name(const char *p, const char *e, const char *default_db,
                              char db[65], char table[65], bool *known) {
    char first[65];
    if (!(p = ident(p, e, first, sizeof first))) return NULL;
    if (p < e && *p == '.') {
        p = skip(p + 1, e);
        if (!(p = ident(p, e, table, 65))) return NULL;
        snprintf(db, 65, "%s", first);
        *known = true;
        return p;
    }
    snprintf(table, 65, "%s", first);
    *known = default_db && *default_db && strlen(default_db) < 65;
    snprintf(db, 65, "%s", *known ? default_db : "");
    return p;
}

/* a table name followed by this effect (left out when no database is known) */
static const char *target(struct ddl_stmt *s, const char *p, const char *e, const char *default_db,
                          enum ddl_effect effect) {
    char db[65], table[65];
    bool known;
    if (!(p = table_name(p, e, default_db, db, table, &known))) return NULL;
    if (known) add(s, db, table, effect);
    return p;
}

/* the next token at parenthesis depth 0, skipping strings and `names`:
 * p on its first character, or e */
static const char *next_token(const char *p, const char *e) {
    p = skip(p, e);
    if (p >= e) return e;
    if (*p == '\'' || *p == '"' || *p == '`') {
        char q = *p++;
        while (p < e) {
            if (*p == '\\' && q != '`' && p + 1 < e) p += 2;
            else if (*p == q && p + 1 < e && p[1] == q) p += 2;
            else if (*p++ == q) break;
        }
        return skip(p, e);
    }
    if (*p == '(') {
        int depth = 0;
        while (p < e) {
            if (*p == '\'' || *p == '"' || *p == '`') {
                p = next_token(p, e);
                continue;
            }
            if (*p == '(') depth++;
            else if (*p == ')' && --depth == 0) {
                p++;
                break;
            }
            p++;
        }
        return skip(p, e);
    }
    if (ident_char(*p)) {
        while (p < e && ident_char(*p)) p++;
        return skip(p, e);
    }
    return skip(p + 1, e);
}

/* the clauses of ALTER TABLE t after its name: a RENAME [TO|AS] of the
 * table itself (not RENAME COLUMN / INDEX / KEY), partitions whose rows go
 * without row events (TRUNCATE, DROP, EXCHANGE PARTITION) */
static void alter_clauses(struct ddl_stmt *s, const char *p, const char *e, const char *default_db,
                          const char *db, const char *table) {
    static const char *const not_table[] = {"COLUMN", "INDEX", "KEY", NULL};
    static const char *const partition_gone[] = {"TRUNCATE", "DROP", "EXCHANGE", NULL};
    while (p < e) {
        const char *q;
        if ((q = keyword(p, e, "RENAME"))) {
            if (keyword_any(q, e, not_table)) {
                p = q;
                continue;
            }
            const char *r = keyword(q, e, "TO");
            if (!r) r = keyword(q, e, "AS");
            if (!r) r = q;
            char ndb[65], ntable[65];
            bool known;
            const char *after = table_name(r, e, default_db, ndb, ntable, &known);
            if (after && known) {
                add(s, db, table, DDL_RENAMED_FROM);
                add(s, ndb, ntable, DDL_RENAMED_TO);
                p = after;
                continue;
            }
            p = q;
            continue;
        }
        if ((q = keyword_any(p, e, partition_gone)) && keyword(q, e, "PARTITION")) {
            add(s, db, table, DDL_TRUNCATED);
            if (keyword(p, e, "EXCHANGE")) { /* ... PARTITION p WITH TABLE t2 */
                const char *w = next_token(keyword(q, e, "PARTITION"), e);
                if ((w = keyword(w, e, "WITH")) && (w = keyword(w, e, "TABLE")))
                    (void)target(s, w, e, default_db, DDL_TRUNCATED);
            }
            p = next_token(q, e);
            continue;
        }
        p = next_token(p, e);
    }
}

static enum ddl_kind parse_alter(struct ddl_stmt *s, const char *p, const char *e,
                                 const char *default_db) {
    const char *q;
    if ((q = keyword(p, e, "ONLINE"))) p = q;
    if ((q = keyword(p, e, "IGNORE"))) p = q;
    if (!(p = keyword(p, e, "TABLE"))) return DDL_NONE; /* DATABASE, VIEW, USER, ... */
    if ((q = keyword(p, e, "IF")) && (q = keyword(q, e, "EXISTS"))) p = q;
    char db[65], table[65];
    bool known;
    if (!(p = table_name(p, e, default_db, db, table, &known))) return DDL_UNKNOWN;
    if (!known) return DDL_UNKNOWN;
    add(s, db, table, DDL_ALTERED);
    alter_clauses(s, p, e, default_db, db, table);
    return DDL_TABLES;
}

static enum ddl_kind parse_rename(struct ddl_stmt *s, const char *p, const char *e,
                                  const char *default_db) {
    const char *q;
    if (!(q = keyword(p, e, "TABLE")) && !(q = keyword(p, e, "TABLES")))
        return DDL_NONE; /* RENAME USER */
    p = q;
    if ((q = keyword(p, e, "IF")) && (q = keyword(q, e, "EXISTS"))) p = q;
    for (;;) {
        char db[65], table[65], ndb[65], ntable[65];
        bool known, nknown;
        if (!(p = table_name(p, e, default_db, db, table, &known))) return DDL_UNKNOWN;
        if ((q = keyword(p, e, "WAIT"))) p = next_token(q, e); /* WAIT n */
        else if ((q = keyword(p, e, "NOWAIT"))) p = q;
        if (!(p = keyword(p, e, "TO"))) return DDL_UNKNOWN;
        if (!(p = table_name(p, e, default_db, ndb, ntable, &nknown))) return DDL_UNKNOWN;
        if (!known || !nknown) return DDL_UNKNOWN;
        add(s, db, table, DDL_RENAMED_FROM);
        add(s, ndb, ntable, DDL_RENAMED_TO);
        if (p < e && *p == ',') {
            p = skip(p + 1, e);
            continue;
        }
        return DDL_TABLES;
    }
}

static enum ddl_kind parse_drop(struct ddl_stmt *s, const char *p, const char *e,
                                const char *default_db) {
    static const char *const db_words[] = {"DATABASE", "SCHEMA", NULL};
    const char *q;
    if (keyword(p, e, "TEMPORARY")) return DDL_NONE; /* never in a mapping */
    if ((q = keyword_any(p, e, db_words))) {
        p = q;
        if ((q = keyword(p, e, "IF")) && (q = keyword(q, e, "EXISTS"))) p = q;
        char db[65];
        if (!ident(p, e, db, sizeof db)) return DDL_UNKNOWN;
        add(s, db, "", DDL_DB_DROPPED);
        return DDL_TABLES;
    }
    if ((q = keyword(p, e, "INDEX"))) { /* DROP INDEX [IF EXISTS] i ON t */
        p = q;
        while (p < e && !keyword(p, e, "ON")) p = next_token(p, e);
        if (p >= e) return DDL_UNKNOWN;
        return target(s, keyword(p, e, "ON"), e, default_db, DDL_ALTERED) ? DDL_TABLES
                                                                          : DDL_UNKNOWN;
    }
    if (!(q = keyword(p, e, "TABLE")) && !(q = keyword(p, e, "TABLES")))
        return DDL_NONE; /* VIEW, TRIGGER, USER, FUNCTION, PROCEDURE, EVENT, SEQUENCE, ... */
    p = q;
    if ((q = keyword(p, e, "IF")) && (q = keyword(q, e, "EXISTS"))) p = q;
    for (;;) {
        if (!(p = target(s, p, e, default_db, DDL_DROPPED))) return DDL_UNKNOWN;
        if (p < e && *p == ',') {
            p = skip(p + 1, e);
            continue;
        }
        return DDL_TABLES; /* RESTRICT, CASCADE, the server's comment: no table */
    }
}

static enum ddl_kind parse_create(struct ddl_stmt *s, const char *p, const char *e,
                                  const char *default_db) {
    static const char *const index_words[] = {"UNIQUE", "FULLTEXT", "SPATIAL", NULL};
    const char *q;
    bool replace = false;
    if ((q = keyword(p, e, "OR")) && (q = keyword(q, e, "REPLACE"))) p = q, replace = true;
    if (keyword(p, e, "TEMPORARY")) return DDL_NONE;
    if ((q = keyword(p, e, "TABLE"))) {
        p = q;
        if ((q = keyword(p, e, "IF")) && (q = keyword(q, e, "NOT")) &&
            (q = keyword(q, e, "EXISTS")))
            p = q;
        char db[65], table[65];
        bool known;
        if (!table_name(p, e, default_db, db, table, &known) || !known) return DDL_UNKNOWN;
        if (replace) add(s, db, table, DDL_DROPPED); /* the old one and its rows go */
        add(s, db, table, DDL_CREATED);
        return DDL_TABLES;
    }
    if ((q = keyword_any(p, e, index_words))) p = q;
    if ((q = keyword(p, e, "INDEX"))) { /* ... INDEX i [USING t] ON table (...) */
        p = q;
        while (p < e && !keyword(p, e, "ON")) p = next_token(p, e);
        if (p >= e) return DDL_UNKNOWN;
        return target(s, keyword(p, e, "ON"), e, default_db, DDL_ALTERED) ? DDL_TABLES
                                                                          : DDL_UNKNOWN;
    }
    return DDL_NONE; /* DATABASE, VIEW, TRIGGER, FUNCTION, EVENT, USER, SEQUENCE, ... */
}

static enum ddl_kind parse_truncate(struct ddl_stmt *s, const char *p, const char *e,
                                    const char *default_db) {
    const char *q;
    if ((q = keyword(p, e, "TABLE"))) p = q;
    size_t before = s->n;
    if (!(p = target(s, p, e, default_db, DDL_TRUNCATED))) return DDL_UNKNOWN;
    if ((q = keyword(p, e, "WAIT"))) p = next_token(q, e); /* a lock timeout only */
    else if ((q = keyword(p, e, "NOWAIT"))) p = q;
    if (p < e && *p == ';') p = skip(p + 1, e);
    if (p != e || s->n == before) return DDL_UNKNOWN;
    return DDL_TABLES;
}

enum ddl_kind ddl_parse(const char *sql, size_t len, const char *default_db,
                        struct ddl_stmt *out) {
    static const char *const no_shape[] = {
        "ANALYZE", "OPTIMIZE", "REPAIR", "CHECK", "CHECKSUM", "GRANT", "REVOKE", "SET",
        "FLUSH", "INSTALL", "UNINSTALL", "XA", "BEGIN", "COMMIT", "ROLLBACK", "SAVEPOINT",
        "RELEASE", "LOCK", "UNLOCK", "DO", "CALL", "USE", "PURGE", "RESET", NULL};
    memset(out, 0, sizeof *out);
    const char *e = sql + len, *p = skip(sql, e), *q;
    enum ddl_kind k;
    if ((q = keyword(p, e, "ALTER"))) k = parse_alter(out, q, e, default_db);
    else if ((q = keyword(p, e, "RENAME"))) k = parse_rename(out, q, e, default_db);
    else if ((q = keyword(p, e, "DROP"))) k = parse_drop(out, q, e, default_db);
    else if ((q = keyword(p, e, "CREATE"))) k = parse_create(out, q, e, default_db);
    else if ((q = keyword(p, e, "TRUNCATE"))) k = parse_truncate(out, q, e, default_db);
    else if (keyword_any(p, e, no_shape)) k = DDL_NONE;
    else k = DDL_UNKNOWN;
    if (k != DDL_TABLES) {
        free(out->t);
        out->t = NULL;
        out->n = 0;
    }
    return out->kind = k;
}

void ddl_stmt_free(struct ddl_stmt *s) {
    if (!s) return;
    free(s->t);
    memset(s, 0, sizeof *s);
}

static bool names(const struct ddl_target *t, const char *db, const char *table) {
    return !strcmp(t->db, db) && (t->effect == DDL_DB_DROPPED || !strcmp(t->table, table));
}

/* after the statement: 1 the name was taken away, 2 put back, 0 neither */
static int last_presence(const struct ddl_stmt *s, const char *db, const char *table) {
    int state = 0;
    for (size_t i = 0; i < s->n; i++) {
        if (!names(&s->t[i], db, table)) continue;
        switch (s->t[i].effect) {
        case DDL_DROPPED: case DDL_RENAMED_FROM: case DDL_DB_DROPPED: state = 1; break;
        case DDL_CREATED: case DDL_RENAMED_TO: state = 2; break;
        default: break;
        }
    }
    return state;
}

bool ddl_takes_away(const struct ddl_stmt *s, const char *db, const char *table) {
    return last_presence(s, db, table) == 1;
}

bool ddl_puts_back(const struct ddl_stmt *s, const char *db, const char *table) {
    return last_presence(s, db, table) == 2;
}

static bool relations_read(const struct mp_relation *r, size_t n, const char *db,
                           const char *table) {
    for (size_t i = 0; i < n; i++) {
        if (!strcmp(r[i].db, db) && !strcmp(r[i].table, table)) return true;
        if (relations_read(r[i].relations, r[i].nrelations, db, table)) return true;
    }
    return false;
}

bool ddl_index_reads(const struct mp_index *ix, const char *db, const char *table) {
    for (size_t t = 0; t < ix->ntables; t++) {
        const struct mp_table *tb = &ix->tables[t];
        /* a related table's settings entry (delay_effect, ...) counts only
         * through a relation that reads it */
        if ((t == 0 || tb->parent_table) && !strcmp(tb->db, db) && !strcmp(tb->table, table))
            return true;
        if (relations_read(tb->relations, tb->nrelations, db, table)) return true;
    }
    return false;
}

static bool relations_in_db(const struct mp_relation *r, size_t n, const char *db,
                            const char *text) {
    for (size_t i = 0; i < n; i++) {
        if (!strcmp(r[i].db, db) || (text && strstr(text, r[i].db))) return true;
        if (relations_in_db(r[i].relations, r[i].nrelations, db, text)) return true;
    }
    return false;
}

bool ddl_index_reads_database(const struct mp_index *ix, const char *db, const char *text) {
    for (size_t t = 0; t < ix->ntables; t++) {
        const struct mp_table *tb = &ix->tables[t];
        if (!strcmp(tb->db, db) || (text && strstr(text, tb->db))) return true;
        if (relations_in_db(tb->relations, tb->nrelations, db, text)) return true;
    }
    return false;
}

bool ddl_names_index_table(const struct ddl_stmt *s, const struct mp_index *ix) {
    for (size_t i = 0; i < s->n; i++) {
        const struct ddl_target *t = &s->t[i];
        if (t->effect == DDL_DB_DROPPED ? ddl_index_reads_database(ix, t->db, NULL)
                                        : ddl_index_reads(ix, t->db, t->table))
            return true;
    }
    return false;
}
