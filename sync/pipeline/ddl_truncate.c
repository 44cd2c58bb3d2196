/* ddl_truncate: TRUNCATE TABLE statements and the index configs they empty
 * (see ddl_truncate.h). */
#include "sync/pipeline/ddl_truncate.h"

#include <ctype.h>
#include <string.h>
#include <strings.h>

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

/* a keyword, case-insensitive, followed by a non-identifier character */
static const char *keyword(const char *p, const char *e, const char *kw) {
    size_t n = strlen(kw);
    if ((size_t)(e - p) < n || strncasecmp(p, kw, n)) return NULL;
    if (p + n < e && (isalnum((unsigned char)p[n]) || p[n] == '_' || p[n] == '$')) return NULL;
    return p + n;
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
        while (p < e && (isalnum((unsigned char)*p) || *p == '_' || *p == '$' ||
                         (unsigned char)*p >= 0x80)) {
            if (n + 1 >= outlen) return NULL;
            out[n++] = *p++;
        }
    }
    if (!n) return NULL;
    out[n] = '\0';
    return p;
}

bool ddl_truncated_table(const char *sql, size_t len, const char *default_db, char *db,
                         size_t dblen, char *table, size_t tablelen) {
    const char *p = sql, *e = sql + len, *q;
    p = skip(p, e);
    if (!(p = keyword(p, e, "TRUNCATE"))) return false;
    p = skip(p, e);
    if ((q = keyword(p, e, "TABLE"))) p = skip(q, e);
    char first[256], second[256];
    if (!(p = ident(p, e, first, sizeof first))) return false;
    p = skip(p, e);
    if (p < e && *p == '.') {
        p = skip(p + 1, e);
        if (!(p = ident(p, e, second, sizeof second))) return false;
        if (strlen(first) >= dblen || strlen(second) >= tablelen) return false;
        strcpy(db, first);
        strcpy(table, second);
    } else {
        if (!default_db || !*default_db || strlen(default_db) >= dblen ||
            strlen(first) >= tablelen)
            return false;
        strcpy(db, default_db);
        strcpy(table, first);
    }
    p = skip(p, e);
    if (p < e && *p == ';') p = skip(p + 1, e);
    return p == e; /* nothing else: WAIT/NOWAIT options are not worth guessing at */
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

int ddl_dropped_tables(const char *sql, size_t len, const char *default_db,
                       void (*fn)(void *ctx, const char *db, const char *table), void *ctx) {
    const char *p = sql, *e = sql + len, *q;
    p = skip(p, e);
    if (!(p = keyword(p, e, "DROP"))) return -1;
    p = skip(p, e);
    if ((q = keyword(p, e, "TEMPORARY"))) return -1; /* never in a mapping */
    if (!(p = keyword(p, e, "TABLE"))) return -1;
    p = skip(p, e);
    if ((q = keyword(p, e, "IF"))) {
        p = skip(q, e);
        if (!(p = keyword(p, e, "EXISTS"))) return -1;
        p = skip(p, e);
    }
    int n = 0;
    for (;;) {
        char first[256], second[256];
        if (!(p = ident(p, e, first, sizeof first))) return -1;
        p = skip(p, e);
        const char *db = default_db, *table = first;
        if (p < e && *p == '.') {
            p = skip(p + 1, e);
            if (!(p = ident(p, e, second, sizeof second))) return -1;
            db = first, table = second;
            p = skip(p, e);
        }
        if (db && *db) {
            fn(ctx, db, table);
            n++;
        }
        if (p < e && *p == ',') {
            p = skip(p + 1, e);
            continue;
        }
        break;
    }
    return n; /* RESTRICT, CASCADE, the server's comment: whatever follows is no table */
}

static bool relations_in_db(const struct mp_relation *r, size_t n, const char *db,
                            const char *text) {
    for (size_t i = 0; i < n; i++) {
        if (!strcmp(r[i].db, db) || strstr(text, r[i].db)) return true;
        if (relations_in_db(r[i].relations, r[i].nrelations, db, text)) return true;
    }
    return false;
}

bool ddl_index_reads_database(const struct mp_index *ix, const char *db, const char *text) {
    for (size_t t = 0; t < ix->ntables; t++) {
        const struct mp_table *tb = &ix->tables[t];
        if (!strcmp(tb->db, db) || strstr(text, tb->db)) return true;
        if (relations_in_db(tb->relations, tb->nrelations, db, text)) return true;
    }
    return false;
}
