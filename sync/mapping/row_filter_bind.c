/* row_filter_bind: a parsed condition's columns given their kinds and
 * collations from the source's schema, the comparison each pair of operands
 * gets (rf_plan_of, rf_coll_of: the evaluator follows the same decisions),
 * and the refusal of what the evaluator cannot decide as the server does
 * (see row_filter.h). */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sync/mapping/mapping.h"
#include "sync/mapping/row_filter_int.h"

/* ------------------------------------------------------------------ types */

enum rf_kind rf_kind_of(const char *type) {
    char base[24];
    size_t i = 0;
    while (type && isalpha((unsigned char)type[i]) && i < sizeof base - 1) {
        base[i] = (char)tolower((unsigned char)type[i]);
        i++;
    }
    base[i] = '\0';
    static const struct { const char *n; enum rf_kind k; } tab[] = {
        {"tinyint", K_INT}, {"smallint", K_INT}, {"mediumint", K_INT}, {"int", K_INT},
        {"integer", K_INT}, {"bigint", K_INT}, {"bool", K_INT}, {"boolean", K_INT},
        {"decimal", K_DECIMAL}, {"numeric", K_DECIMAL}, {"float", K_FLOAT},
        {"double", K_DOUBLE}, {"real", K_DOUBLE}, {"year", K_YEAR}, {"bit", K_BIT},
        {"char", K_STRING}, {"varchar", K_STRING}, {"tinytext", K_STRING}, {"text", K_STRING},
        {"mediumtext", K_STRING}, {"longtext", K_STRING}, {"binary", K_BINARY},
        {"varbinary", K_BINARY}, {"tinyblob", K_BINARY}, {"blob", K_BINARY},
        {"mediumblob", K_BINARY}, {"longblob", K_BINARY}, {"enum", K_ENUM}, {"set", K_SET},
        {"date", K_DATE}, {"datetime", K_DATETIME}, {"timestamp", K_DATETIME},
        {"time", K_TIME}, {"json", K_JSON}};
    for (size_t k = 0; k < sizeof tab / sizeof tab[0]; k++)
        if (!strcmp(base, tab[k].n)) return tab[k].k;
    return K_OTHER;
}

/* Collations whose order of letters, digits and spaces is the alphabet's,
 * case folded, with no language's tailoring (which can make two ASCII
 * strings equal, or order them otherwise: Danish "aa" after "z", Turkish
 * dotless i). What follows the character set's name. */
static const char *const plain_ci[] = {"general_ci", "general_nopad_ci", "general_mysql500_ci",
                                       "unicode_ci", "unicode_nopad_ci", "unicode_520_ci",
                                       "unicode_520_nopad_ci", "0900_ai_ci", "uca1400_ai_ci",
                                       "uca1400_nopad_ai_ci"};
/* ... and whole names: latin1's Swedish order (MariaDB's default for
 * latin1) is the alphabet's for ASCII; other Swedish collations are not
 * known here */
static const char *const plain_ci_named[] = {"latin1_swedish_ci", "latin1_swedish_nopad_ci"};

struct rf_coll rf_coll_named(enum rf_kind kind, const char *name) {
    struct rf_coll c = {CM_UNKNOWN, PAD_UNKNOWN, true};
    if (kind == K_BINARY) return (struct rf_coll){CM_BYTES, PAD_NO, false};
    if (!name || !*name) return c;
    if (!strcasecmp(name, "binary")) return (struct rf_coll){CM_BYTES, PAD_NO, false};
    /* NO PAD: MySQL's UCA 9.0.0 collations, MariaDB's _nopad_ ones */
    c.pad = strstr(name, "_0900_") || strstr(name, "nopad") ? PAD_NO : PAD_SPACE;
    size_t n = strlen(name);
    const char *rest = strchr(name, '_');
    rest = rest ? rest + 1 : name;
    if (n > 4 && !strcasecmp(name + n - 4, "_bin")) {
        c.mode = CM_BYTES; /* code point order: the order of UTF-8's bytes */
    } else if (n > 3 && !strcasecmp(name + n - 3, "_cs")) {
        c.mode = CM_CS;
    } else {
        for (size_t i = 0; i < sizeof plain_ci / sizeof plain_ci[0]; i++)
            if (!strcasecmp(rest, plain_ci[i])) c.mode = CM_CI;
        for (size_t i = 0; i < sizeof plain_ci_named / sizeof plain_ci_named[0]; i++)
            if (!strcasecmp(name, plain_ci_named[i])) c.mode = CM_CI;
    }
    return c;
}

static bool digits(const char *s, size_t n, int *v) {
    *v = 0;
    if (!n) return false;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9') return false;
        *v = *v * 10 + (s[i] - '0');
    }
    return true;
}

static int days_in(int y, int mo) {
    static const int d[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    return mo == 2 && leap ? 29 : d[mo - 1];
}

bool rf_parse_dt(const char *s, size_t n, struct rf_dt *o) {
    memset(o, 0, sizeof *o);
    if (n < 10 || s[4] != '-' || s[7] != '-' || !digits(s, 4, &o->y) ||
        !digits(s + 5, 2, &o->mo) || !digits(s + 8, 2, &o->d))
        return false;
    bool zero = o->y == 0 && o->mo == 0 && o->d == 0; /* a zero date, as a row can hold */
    if (!zero && (o->mo < 1 || o->mo > 12 || o->d < 1 || o->d > days_in(o->y, o->mo)))
        return false;
    if (n == 10) return true;
    if (n < 19 || s[10] != ' ' || s[13] != ':' || s[16] != ':' || !digits(s + 11, 2, &o->h) ||
        !digits(s + 14, 2, &o->mi) || !digits(s + 17, 2, &o->s) || o->h > 23 || o->mi > 59 ||
        o->s > 59)
        return false;
    if (n == 19) return true;
    if (s[19] != '.' || n < 21 || n > 26) return false;
    int f;
    if (!digits(s + 20, n - 20, &f)) return false;
    for (size_t k = n - 20; k < 6; k++) f *= 10;
    o->us = f;
    return true;
}

/* ------------------------------------------------------------------ plans */

enum cat { CAT_NULL, CAT_UNK, CAT_INT, CAT_DEC, CAT_DBL, CAT_STR, CAT_TEMP, CAT_BAD };

static const char *kind_name(enum rf_kind k) {
    static const char *const n[] = {"unknown", "integer", "YEAR", "BIT", "DECIMAL", "FLOAT",
                                    "DOUBLE", "string", "binary string", "ENUM", "SET", "DATE",
                                    "DATETIME/TIMESTAMP", "TIME", "JSON", "geometry or other"};
    return n[k];
}

static enum cat cat_of(const struct row_filter *f, int i, enum rf_kind *kind) {
    const struct rf_node *x = &f->nodes[i];
    *kind = K_UNKNOWN;
    if (rf_is_bool(x)) return CAT_INT;
    if (x->op == N_LIT) {
        static const enum cat lc[] = {CAT_NULL, CAT_INT, CAT_DEC, CAT_DBL, CAT_STR};
        return lc[x->lit];
    }
    *kind = (enum rf_kind)f->cols[x->col].kind;
    switch (*kind) {
    case K_UNKNOWN: return CAT_UNK;
    case K_INT: case K_YEAR: case K_BIT: return CAT_INT;
    case K_DECIMAL: return CAT_DEC;
    case K_FLOAT: case K_DOUBLE: return CAT_DBL;
    case K_STRING: case K_BINARY: case K_ENUM: case K_SET: return CAT_STR;
    case K_DATE: case K_DATETIME: return CAT_TEMP;
    default: return CAT_BAD;
    }
}

static const char *operand_name(const struct row_filter *f, int i, char *b, size_t n) {
    const struct rf_node *x = &f->nodes[i];
    if (x->op == N_COL)
        snprintf(b, n, "column %s (%s)", f->cols[x->col].name, kind_name(f->cols[x->col].kind));
    else if (x->op == N_LIT && x->lit == L_STR)
        snprintf(b, n, "'%.*s'", (int)(x->len > 40 ? 40 : x->len), f->text.data + x->off);
    else if (x->op == N_LIT && x->lit != L_NULL)
        snprintf(b, n, "the number %.*s", (int)(x->len > 40 ? 40 : x->len),
                 x->len ? f->text.data + x->off : (x->iv ? "1" : "0"));
    else
        snprintf(b, n, "a condition");
    return b;
}

#define REFUSE(...) (why ? (void)snprintf(why, whylen, __VA_ARGS__) : (void)0, P_REFUSED)

enum rf_plan rf_plan_of(const struct row_filter *f, int a, int b, char *why, size_t whylen) {
    enum rf_kind ka, kb;
    enum cat ca = cat_of(f, a, &ka), cb = cat_of(f, b, &kb);
    char n1[128], n2[128];
    if (ca == CAT_NULL || cb == CAT_NULL) return P_NULL;
    if (ca == CAT_BAD || cb == CAT_BAD)
        return REFUSE("%s is compared with nothing in row-image mode",
                      operand_name(f, ca == CAT_BAD ? a : b, n1, sizeof n1));
    if (ca == CAT_UNK || cb == CAT_UNK) return P_UNKNOWN;
    if (ca == CAT_STR && cb == CAT_STR) {
        const struct rf_node *x = &f->nodes[a], *y = &f->nodes[b];
        if (x->op == N_COL && y->op == N_COL && ka != K_BINARY && kb != K_BINARY) {
            const char *c1 = f->cols[x->col].collation, *c2 = f->cols[y->col].collation;
            if (c1 && c2 && strcasecmp(c1, c2))
                return REFUSE("%s and %s have two collations (%s, %s): the server refuses to "
                              "compare them", operand_name(f, a, n1, sizeof n1),
                              operand_name(f, b, n2, sizeof n2), c1, c2);
        }
        return P_STR;
    }
    if (ca == CAT_TEMP || cb == CAT_TEMP) {
        if (ca == CAT_TEMP && cb == CAT_TEMP) return P_TEMP;
        int o = ca == CAT_TEMP ? b : a;
        const struct rf_node *x = &f->nodes[o];
        if (x->op == N_LIT && x->lit == L_STR) {
            if (x->dt_ok) return P_TEMP;
            return REFUSE("%s is not a date of the subset: write 'YYYY-MM-DD', 'YYYY-MM-DD "
                          "HH:MM:SS' or with .ffffff", operand_name(f, o, n1, sizeof n1));
        }
        return REFUSE("%s is compared with %s: a date or time compares here with a date literal "
                      "or another date column only",
                      operand_name(f, ca == CAT_TEMP ? a : b, n1, sizeof n1),
                      operand_name(f, o, n2, sizeof n2));
    }
    if (ca == CAT_STR || cb == CAT_STR) { /* a string against a number */
        enum rf_kind ks = ca == CAT_STR ? ka : kb, kn = ca == CAT_STR ? kb : ka;
        int s = ca == CAT_STR ? a : b, nn = ca == CAT_STR ? b : a;
        if (ks == K_ENUM || ks == K_SET)
            return REFUSE("%s is compared with %s: the server compares an ENUM or SET with a "
                          "number by its index or bits; compare it with its labels",
                          operand_name(f, s, n1, sizeof n1), operand_name(f, nn, n2, sizeof n2));
        if (kn == K_YEAR || kn == K_BIT)
            return REFUSE("%s is compared with %s: compare a YEAR or BIT column with a number",
                          operand_name(f, nn, n1, sizeof n1), operand_name(f, s, n2, sizeof n2));
        return P_DBL;
    }
    if (ca == CAT_INT && cb == CAT_INT) return P_INT;
    if (ca == CAT_DBL || cb == CAT_DBL) return P_DBL;
    return P_DEC;
}

struct rf_coll rf_coll_of(const struct row_filter *f, int a, int b) {
    const struct rf_node *x = &f->nodes[a], *y = b >= 0 ? &f->nodes[b] : NULL;
    const struct rf_col *ca = x->op == N_COL ? &f->cols[x->col] : NULL;
    const struct rf_col *cb = y && y->op == N_COL ? &f->cols[y->col] : NULL;
    /* only a string column's collation counts (another's value is converted) */
    if (ca && ca->kind != K_STRING && ca->kind != K_BINARY && ca->kind != K_ENUM &&
        ca->kind != K_SET)
        ca = NULL;
    if (cb && cb->kind != K_STRING && cb->kind != K_BINARY && cb->kind != K_ENUM &&
        cb->kind != K_SET)
        cb = NULL;
    /* a binary string makes the comparison binary */
    if ((ca && ca->kind == K_BINARY) || (cb && cb->kind == K_BINARY))
        return rf_coll_named(K_BINARY, NULL);
    if (ca && cb) {
        if (ca->collation && cb->collation && !strcasecmp(ca->collation, cb->collation))
            return ca->coll;
        return rf_coll_named(K_UNKNOWN, NULL);
    }
    if (ca) return ca->coll;
    if (cb) return cb->coll;
    return rf_coll_named(K_UNKNOWN, NULL); /* the connection's: not known here */
}

/* ------------------------------------------------------------------ binding */

/* a value used as a truth (an operand of AND, OR, XOR, NOT, IS TRUE, or the
 * whole condition): a number, or a string read as one */
static int check_truth(const struct row_filter *f, int i, char *why, size_t whylen) {
    enum rf_kind k;
    enum cat c = cat_of(f, i, &k);
    char n[128];
    if (c == CAT_BAD || c == CAT_TEMP || k == K_ENUM || k == K_SET)
        return snprintf(why, whylen, "%s is used as a truth value: compare it with something",
                        operand_name(f, i, n, sizeof n)), -1;
    return 0;
}

static int check_node(const struct row_filter *f, int i, bool truth, char *why, size_t whylen) {
    const struct rf_node *x = &f->nodes[i];
    char n[128];
    if (truth && check_truth(f, i, why, whylen) < 0) return -1;
    switch (x->op) {
    case N_AND: case N_OR: case N_XOR:
        return check_node(f, x->a, true, why, whylen) < 0 ||
                       check_node(f, x->b, true, why, whylen) < 0
                   ? -1
                   : 0;
    case N_NOT: return check_node(f, x->a, true, why, whylen);
    case N_ISBOOL: return check_node(f, x->a, true, why, whylen);
    case N_ISNULL: return check_node(f, x->a, false, why, whylen);
    case N_CMP:
        if (check_node(f, x->a, false, why, whylen) < 0 ||
            check_node(f, x->b, false, why, whylen) < 0)
            return -1;
        return rf_plan_of(f, x->a, x->b, why, whylen) == P_REFUSED ? -1 : 0;
    case N_BETWEEN: {
        if (check_node(f, x->a, false, why, whylen) < 0 ||
            check_node(f, x->b, false, why, whylen) < 0 ||
            check_node(f, x->c, false, why, whylen) < 0)
            return -1;
        enum rf_plan p1 = rf_plan_of(f, x->a, x->b, why, whylen);
        if (p1 == P_REFUSED) return -1;
        enum rf_plan p2 = rf_plan_of(f, x->a, x->c, why, whylen);
        if (p2 == P_REFUSED) return -1;
        /* the server compares all three as one type: the same for both bounds
         * is what the two comparisons here give */
        if (p1 != p2 && p1 != P_NULL && p2 != P_NULL)
            return snprintf(why, whylen, "BETWEEN %s AND %s: bounds of two kinds (write two "
                                         "comparisons)",
                            operand_name(f, x->b, n, sizeof n),
                            operand_name(f, x->c, (char[128]){0}, 128)), -1;
        return 0;
    }
    case N_IN: {
        if (check_node(f, x->a, false, why, whylen) < 0) return -1;
        enum rf_plan first = P_NULL;
        for (int k = 0; k < x->n; k++) {
            int e = f->args[x->first + k];
            if (check_node(f, e, false, why, whylen) < 0) return -1;
            enum rf_plan p = rf_plan_of(f, x->a, e, why, whylen);
            if (p == P_REFUSED) return -1;
            if (p == P_NULL) continue;
            /* IN reads a date literal against a DATETIME column otherwise
             * than a comparison does (MariaDB: not as a date) */
            if (p == P_TEMP)
                return snprintf(why, whylen, "IN (...) with dates: write comparisons joined "
                                             "by OR"), -1;
            /* the server compares a mixed list as one type (strings and
             * numbers: all as numbers, 'b' IN ('a', 1) true): one kind only */
            if (first != P_NULL && p != first)
                return snprintf(why, whylen, "IN (...) with values of two kinds (%s among "
                                             "others): write one IN per kind",
                                operand_name(f, e, n, sizeof n)), -1;
            first = p;
        }
        return 0;
    }
    case N_LIKE: {
        if (check_node(f, x->a, false, why, whylen) < 0) return -1;
        const struct rf_node *p = &f->nodes[x->b];
        if (p->op != N_LIT || (p->lit != L_STR && p->lit != L_NULL))
            return snprintf(why, whylen, "LIKE %s: the pattern must be a string literal",
                            operand_name(f, x->b, n, sizeof n)), -1;
        enum rf_kind k;
        enum cat c = cat_of(f, x->a, &k);
        if (c == CAT_BAD || c == CAT_DBL || k == K_BIT)
            return snprintf(why, whylen, "%s LIKE ...: its text is the server's own; LIKE reads "
                                         "strings, integers, decimals and dates here",
                            operand_name(f, x->a, n, sizeof n)), -1;
        return 0;
    }
    default: return 0;
    }
}

int row_filter_bind(struct row_filter *f, const struct mp_schema *s, const char *db,
                    const char *table, char *why, size_t whylen) {
    f->bound = false;
    for (size_t i = 0; i < f->ncols; i++) {
        const struct mp_schema_col *sc = NULL;
        for (size_t k = 0; k < s->n && !sc; k++) /* column names ignore case */
            if (s->cols[k].column && !strcmp(s->cols[k].db, db) &&
                !strcmp(s->cols[k].table, table) && !strcasecmp(s->cols[k].column, f->cols[i].name))
                sc = &s->cols[k];
        if (!sc)
            return snprintf(why, whylen, "%s is not a column of %s.%s", f->cols[i].name, db,
                            table), -1;
        struct rf_col *c = &f->cols[i];
        free(c->name);
        c->name = xstrdup(sc->column);
        free(c->collation);
        c->collation = sc->collation ? xstrdup(sc->collation) : NULL;
        c->kind = (unsigned char)rf_kind_of(sc->type);
        c->coll = rf_coll_named((enum rf_kind)c->kind, c->collation);
    }
    if (check_node(f, f->root, true, why, whylen) < 0) return -2;
    f->bound = true;
    return 0;
}
