/* row_filter: the parse of a document table's `where` into a tree and the
 * columns it reads (see row_filter.h; the binding to the schema is
 * row_filter_bind.c, the evaluation row_filter_eval.c).
 *
 * Grammar (MySQL's precedence, lowest first; a comparison of a comparison
 * needs parentheses, as it rarely means what it says):
 *
 *   or      := xor { OR xor }
 *   xor     := and { XOR and }
 *   and     := not { AND not }
 *   not     := NOT not | pred
 *   pred    := operand [ cmp operand | IS [NOT] (NULL|TRUE|FALSE|UNKNOWN)
 *                      | [NOT] IN ( operand {, operand} )
 *                      | [NOT] BETWEEN operand AND operand | [NOT] LIKE operand ]
 *   operand := column | `column` | number | 'string' | NULL | TRUE | FALSE
 *              | [+|-] number | ( or )
 *
 * Strings are single-quoted without backslashes (under sql_mode
 * NO_BACKSLASH_ESCAPES a backslash means itself, elsewhere an escape: the
 * server's mode decides, so none is read here); "double quotes" are a string
 * or an identifier depending on ANSI_QUOTES, and are refused likewise. */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sync/mapping/row_filter_int.h"

/* ------------------------------------------------------------------ lexer */

enum tk { TK_END, TK_WORD, TK_QWORD, TK_STR, TK_NUM, TK_OP, TK_LP, TK_RP, TK_COMMA, TK_BAD };

struct tok {
    enum tk t;
    const char *s; /* raw span in the condition */
    size_t n;
};

struct lex {
    const char *p;
    struct tok prev; /* the last token read */
    struct row_filter *f;
    char *why;
    size_t whylen;
    bool failed;
    int depth;
};

static int fail(struct lex *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(struct lex *l, const char *fmt, ...) {
    if (!l->failed) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(l->why, l->whylen, fmt, ap);
        va_end(ap);
        l->failed = true;
    }
    return -1;
}

static bool word_char(unsigned char c) { return isalnum(c) || c == '_' || c == '$' || c >= 0x80; }

/* the next token from *pp (advanced past it) */
static struct tok scan(const char **pp) {
    const char *p = *pp;
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r' || *p == '\f' || *p == '\v') p++;
    struct tok t = {TK_END, p, 0};
    unsigned char c = (unsigned char)*p;
    if (!c) {
        *pp = p;
        return t;
    }
    if (c == '(' || c == ')' || c == ',') {
        t.t = c == '(' ? TK_LP : c == ')' ? TK_RP : TK_COMMA;
        t.n = 1;
    } else if (c == '\'' || c == '`') { /* up to the closing quote; a doubled one is in it */
        const char *q = p + 1;
        for (;;) {
            if (!*q) {
                t.t = TK_BAD;
                break;
            }
            if (*q == (char)c) {
                if (q[1] == (char)c) {
                    q += 2;
                    continue;
                }
                t.t = c == '\'' ? TK_STR : TK_QWORD;
                q++;
                break;
            }
            q++;
        }
        t.n = (size_t)(q - p);
        if (t.t == TK_BAD) t.n = strlen(p);
    } else if (isdigit(c) || (c == '.' && isdigit((unsigned char)p[1]))) {
        const char *q = p;
        while (isdigit((unsigned char)*q)) q++;
        if (*q == '.') {
            q++;
            while (isdigit((unsigned char)*q)) q++;
        }
        if ((*q == 'e' || *q == 'E') &&
            (isdigit((unsigned char)q[1]) ||
             ((q[1] == '+' || q[1] == '-') && isdigit((unsigned char)q[2])))) {
            q += 2;
            while (isdigit((unsigned char)*q)) q++;
        }
        t.t = TK_NUM;
        while (word_char((unsigned char)*q)) { /* 1abc, 0x1F: no number of ours */
            t.t = TK_BAD;
            q++;
        }
        t.n = (size_t)(q - p);
    } else if (word_char(c)) {
        const char *q = p;
        while (word_char((unsigned char)*q)) q++;
        t.t = TK_WORD;
        t.n = (size_t)(q - p);
    } else if (strchr("<>=!|&+-*/%^~:", (char)c)) {
        static const char *const two[] = {"<=>", "<=", ">=", "<>", "!=", "||", "&&", "<<", ">>",
                                          ":="};
        t.t = TK_OP;
        t.n = 1;
        for (size_t i = 0; i < sizeof two / sizeof two[0]; i++)
            if (!strncmp(p, two[i], strlen(two[i]))) {
                t.n = strlen(two[i]);
                break;
            }
    } else {
        t.t = TK_BAD;
        t.n = 1;
        if (c == '"') { /* to the end: named as a whole */
            const char *q = strchr(p + 1, '"');
            t.n = q ? (size_t)(q - p) + 1 : strlen(p);
        }
    }
    *pp = p + t.n;
    return t;
}

static struct tok peek(const struct lex *l) {
    const char *p = l->p;
    return scan(&p);
}
static struct tok next(struct lex *l) { return l->prev = scan(&l->p); }

static bool is_word(struct tok t, const char *w) {
    return t.t == TK_WORD && t.n == strlen(w) && !strncasecmp(t.s, w, t.n);
}
static bool is_op(struct tok t, const char *o) {
    return t.t == TK_OP && t.n == strlen(o) && !strncmp(t.s, o, t.n);
}

/* the token as a message names it */
static const char *tok_text(struct tok t, char *buf, size_t n) {
    if (t.t == TK_END) return "the end of the condition";
    snprintf(buf, n, "%.*s", (int)(t.n > 60 ? 60 : t.n), t.s);
    return buf;
}

/* a token where the grammar has no place for it, named with the one before
 * (CASE WHEN, qty REGEXP, qty DIV) */
static int unexpected(struct lex *l, struct tok t) {
    char b[72], a[72];
    if (t.t == TK_RP) return fail(l, "a ) has no ( before it");
    if (t.t == TK_END) return fail(l, "the condition ends too early");
    if (t.t == TK_OP) return fail(l, "the operator %s is not supported", tok_text(t, b, sizeof b));
    if (l->prev.t == TK_WORD || l->prev.t == TK_QWORD)
        return fail(l, "%s %s ... is not supported", tok_text(l->prev, a, sizeof a),
                    tok_text(t, b, sizeof b));
    return fail(l, "%s is not supported here", tok_text(t, b, sizeof b));
}

/* ------------------------------------------------------------------ nodes */

static int add_node(struct row_filter *f, enum rf_op op) {
    if (f->nnodes == f->capnodes) {
        f->capnodes = f->capnodes ? f->capnodes * 2 : 16;
        f->nodes = xrealloc(f->nodes, f->capnodes * sizeof *f->nodes);
    }
    struct rf_node *x = &f->nodes[f->nnodes];
    memset(x, 0, sizeof *x);
    x->op = (unsigned char)op;
    x->a = x->b = x->c = -1;
    x->col = -1;
    return (int)f->nnodes++;
}

static int node2(struct row_filter *f, enum rf_op op, int a, int b) {
    int i = add_node(f, op);
    f->nodes[i].a = a;
    f->nodes[i].b = b;
    return i;
}

static int add_column(struct lex *l, const char *name, size_t n) {
    struct row_filter *f = l->f;
    for (size_t i = 0; i < f->ncols; i++)
        if (strlen(f->cols[i].name) == n && !strncasecmp(f->cols[i].name, name, n)) return (int)i;
    if (f->ncols == RF_MAX_COLS)
        return fail(l, "more than %d columns in one condition", RF_MAX_COLS);
    struct rf_col *c = &f->cols[f->ncols];
    memset(c, 0, sizeof *c);
    c->name = xstrndup(name, n);
    c->kind = K_UNKNOWN;
    c->coll = rf_coll_named(K_UNKNOWN, NULL);
    return (int)f->ncols++;
}

/* a number literal: n bytes at s, negated when neg */
static int number(struct lex *l, const char *s, size_t n, bool neg) {
    struct row_filter *f = l->f;
    int i = add_node(f, N_LIT);
    struct rf_node *x = &f->nodes[i];
    x->off = f->text.len;
    if (neg) sbuf_addc(&f->text, '-');
    sbuf_add(&f->text, s, n);
    sbuf_addc(&f->text, '\0');
    x->len = n + neg;
    if (memchr(s, 'e', n) || memchr(s, 'E', n)) {
        x->lit = L_DBL;
    } else if (memchr(s, '.', n)) {
        x->lit = L_DEC;
    } else { /* beyond 64 bits unsigned: a DECIMAL, as the server reads it */
        unsigned __int128 v = 0;
        bool big = false;
        for (size_t k = 0; k < n && !big; k++) {
            v = v * 10 + (unsigned)(s[k] - '0');
            big = v > (unsigned __int128)UINT64_MAX;
        }
        x->lit = big ? L_DEC : L_INT;
        x->iv = neg ? -(__int128)v : (__int128)v;
    }
    return i;
}

/* a string literal: the quoted span of t, unescaped */
static int string_lit(struct lex *l, struct tok t) {
    struct row_filter *f = l->f;
    if (memchr(t.s, '\\', t.n))
        return fail(l, "a backslash in the string %s (its meaning depends on the server's sql_mode "
                       "NO_BACKSLASH_ESCAPES)", tok_text(t, (char[72]){0}, 72));
    int i = add_node(f, N_LIT);
    struct rf_node *x = &f->nodes[i];
    x->lit = L_STR;
    x->off = f->text.len;
    for (size_t k = 1; k + 1 < t.n; k++) {
        sbuf_addc(&f->text, t.s[k]);
        if (t.s[k] == '\'') k++; /* '' is one quote */
    }
    x->len = f->text.len - x->off;
    sbuf_addc(&f->text, '\0');
    x->dt_ok = rf_parse_dt(f->text.data + x->off, x->len, &x->dt);
    return i;
}

/* ------------------------------------------------------------------ parser */

static int parse_or(struct lex *l);

static const char *const reserved[] = {"and", "or", "xor", "not", "is", "in", "between", "like",
                                       "escape", "null", "true", "false", "unknown"};

static bool is_reserved(struct tok t) {
    for (size_t i = 0; i < sizeof reserved / sizeof reserved[0]; i++)
        if (is_word(t, reserved[i])) return true;
    return false;
}

static int parse_operand(struct lex *l) {
    char b[72];
    if (++l->depth > RF_MAX_DEPTH) return fail(l, "the condition nests too deep");
    struct tok t = next(l);
    int r = -1;
    switch (t.t) {
    case TK_LP:
        r = parse_or(l);
        if (r >= 0) {
            struct tok c = peek(l);
            if (c.t == TK_RP) next(l);
            else r = c.t == TK_END ? fail(l, "a parenthesis is not closed") : unexpected(l, c);
        }
        break;
    case TK_NUM: r = number(l, t.s, t.n, false); break;
    case TK_STR: r = string_lit(l, t); break;
    case TK_QWORD: {
        sbuf name = SBUF_INIT;
        for (size_t k = 1; k + 1 < t.n; k++) {
            sbuf_addc(&name, t.s[k]);
            if (t.s[k] == '`') k++;
        }
        int c = add_column(l, name.data ? name.data : "", name.len);
        sbuf_free(&name);
        if (c < 0) break;
        r = add_node(l->f, N_COL);
        l->f->nodes[r].col = c;
        break;
    }
    case TK_OP:
        if ((is_op(t, "-") || is_op(t, "+")) && peek(l).t == TK_NUM &&
            peek(l).s == l->p) { /* a signed number: -1 */
            struct tok n = next(l);
            r = number(l, n.s, n.n, is_op(t, "-"));
        } else {
            r = fail(l, "the operator %s is not supported (only a sign right before a number)",
                     tok_text(t, b, sizeof b));
        }
        break;
    case TK_WORD: {
        if (is_word(t, "null")) {
            r = add_node(l->f, N_LIT);
            l->f->nodes[r].lit = L_NULL;
            break;
        }
        if (is_word(t, "true") || is_word(t, "false")) { /* the integers 1 and 0 */
            r = add_node(l->f, N_LIT);
            l->f->nodes[r].lit = L_INT;
            l->f->nodes[r].iv = is_word(t, "true");
            break;
        }
        if (is_reserved(t)) {
            r = fail(l, "a column or a value is missing before %s", tok_text(t, b, sizeof b));
            break;
        }
        struct tok after = peek(l);
        if (after.t == TK_LP) {
            r = fail(l, "the function %s() is not supported", tok_text(t, b, sizeof b));
            break;
        }
        if (after.t == TK_STR || after.t == TK_QWORD) {
            r = fail(l, "%s %.*s is not supported (a typed literal, an introducer or a "
                        "COLLATE)", tok_text(t, b, sizeof b), (int)(after.n > 40 ? 40 : after.n),
                     after.s);
            break;
        }
        if (*l->p == '.') {
            r = fail(l, "the qualified name %s.... is not supported: name the table's columns "
                        "alone", tok_text(t, b, sizeof b));
            break;
        }
        int c = add_column(l, t.s, t.n);
        if (c < 0) break;
        r = add_node(l->f, N_COL);
        l->f->nodes[r].col = c;
        break;
    }
    case TK_END: r = fail(l, "a column or a value is missing at the end"); break;
    case TK_RP: r = fail(l, "a column or a value is missing before )"); break;
    case TK_COMMA: r = fail(l, "a column or a value is missing before ,"); break;
    case TK_BAD:
        if (t.s[0] == '"')
            r = fail(l, "the double-quoted %s is not supported (a string or an identifier, as the "
                        "server's ANSI_QUOTES says): write strings in single quotes",
                     tok_text(t, b, sizeof b));
        else if (t.s[0] == '\'' || t.s[0] == '`')
            r = fail(l, "a quote is not closed: %s", tok_text(t, b, sizeof b));
        else if (isdigit((unsigned char)t.s[0]))
            r = fail(l, "%s is not a number of the subset (decimal digits, a point, an exponent)",
                     tok_text(t, b, sizeof b));
        else
            r = fail(l, "%s is not supported", tok_text(t, b, sizeof b));
        break;
    }
    l->depth--;
    return r;
}

static int cmp_of(struct tok t) {
    static const struct { const char *op; enum rf_cmp c; } ops[] = {
        {"=", C_EQ}, {"<>", C_NE}, {"!=", C_NE}, {"<", C_LT},
        {"<=", C_LE}, {">", C_GT}, {">=", C_GE}, {"<=>", C_NSEQ}};
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        if (is_op(t, ops[i].op)) return (int)ops[i].c;
    return -1;
}

static bool starts_pred(struct tok t) {
    return cmp_of(t) >= 0 || is_word(t, "is") || is_word(t, "in") || is_word(t, "between") ||
           is_word(t, "like") || is_word(t, "not");
}

static int parse_pred(struct lex *l) {
    char b[72];
    int a = parse_operand(l);
    if (a < 0) return -1;
    struct tok t = peek(l);
    if (!starts_pred(t)) return a;
    struct row_filter *f = l->f;
    int x = -1;
    int c = cmp_of(t);
    if (c >= 0) {
        next(l);
        int rhs = parse_operand(l);
        if (rhs < 0) return -1;
        x = node2(f, N_CMP, a, rhs);
        f->nodes[x].cmp = (unsigned char)c;
    } else if (is_word(t, "is")) {
        next(l);
        bool neg = is_word(peek(l), "not");
        if (neg) next(l);
        struct tok w = next(l);
        if (is_word(w, "null")) {
            x = node2(f, N_ISNULL, a, -1);
        } else if (is_word(w, "true") || is_word(w, "false") || is_word(w, "unknown")) {
            x = node2(f, N_ISBOOL, a, -1);
            f->nodes[x].isv = (signed char)(is_word(w, "true") ? 1 : is_word(w, "false") ? 0 : 2);
        } else {
            return fail(l, "IS%s must be followed by NULL, TRUE, FALSE or UNKNOWN, not %s",
                        neg ? " NOT" : "", tok_text(w, b, sizeof b));
        }
        f->nodes[x].neg = neg;
    } else {
        bool neg = is_word(t, "not");
        if (neg) {
            next(l);
            t = peek(l);
            if (!is_word(t, "in") && !is_word(t, "between") && !is_word(t, "like"))
                return fail(l, "NOT after a value must be followed by IN, BETWEEN or LIKE, not %s",
                            tok_text(t, b, sizeof b));
        }
        next(l);
        if (is_word(t, "in")) {
            if (next(l).t != TK_LP) return fail(l, "IN must be followed by a list in parentheses");
            int *items = NULL;
            size_t n = 0;
            for (;;) {
                int e = parse_operand(l);
                if (e < 0) {
                    free(items);
                    return -1;
                }
                items = xrealloc(items, (n + 1) * sizeof *items);
                items[n++] = e;
                struct tok s = next(l);
                if (s.t == TK_RP) break;
                if (s.t != TK_COMMA) {
                    free(items);
                    return fail(l, "in the list of IN: %s where a comma or ) belongs",
                                tok_text(s, b, sizeof b));
                }
            }
            x = node2(f, N_IN, a, -1);
            if (f->nargs + n > f->capargs) {
                f->capargs = (f->nargs + n) * 2;
                f->args = xrealloc(f->args, f->capargs * sizeof *f->args);
            }
            f->nodes[x].first = (int)f->nargs;
            f->nodes[x].n = (int)n;
            memcpy(f->args + f->nargs, items, n * sizeof *items);
            f->nargs += n;
            free(items);
        } else if (is_word(t, "between")) {
            int lo = parse_operand(l);
            if (lo < 0) return -1;
            if (!is_word(next(l), "and")) return fail(l, "BETWEEN needs its AND");
            int hi = parse_operand(l);
            if (hi < 0) return -1;
            x = node2(f, N_BETWEEN, a, lo);
            f->nodes[x].c = hi;
        } else { /* LIKE */
            int pat = parse_operand(l);
            if (pat < 0) return -1;
            if (is_word(peek(l), "escape"))
                return fail(l, "LIKE ... ESCAPE is not supported (%% and _ are always wildcards)");
            x = node2(f, N_LIKE, a, pat);
        }
        f->nodes[x].neg = neg;
    }
    if (starts_pred(peek(l)) && !is_word(peek(l), "not"))
        return fail(l, "a comparison of a comparison (such as a = b = c) is not supported: put "
                       "the inner one in parentheses");
    return x;
}

static int parse_not(struct lex *l) {
    struct tok t = peek(l);
    if (is_op(t, "!")) return fail(l, "the operator ! is not supported: write NOT");
    if (!is_word(t, "not")) return parse_pred(l);
    next(l);
    if (++l->depth > RF_MAX_DEPTH) return fail(l, "the condition nests too deep");
    int a = parse_not(l);
    l->depth--;
    return a < 0 ? -1 : node2(l->f, N_NOT, a, -1);
}

/* one level of left-associative binary operators: word (AND, XOR, OR),
 * with what the server also reads as it and is refused (&&, ||) */
static int parse_level(struct lex *l, int (*sub)(struct lex *), const char *word,
                       const char *alias, enum rf_op op) {
    int a = sub(l);
    while (a >= 0) {
        struct tok t = peek(l);
        if (alias && is_op(t, alias))
            return fail(l, "the operator %s is not supported: write %s", alias, word);
        if (!is_word(t, word)) break;
        next(l);
        int b = sub(l);
        if (b < 0) return -1;
        a = node2(l->f, op, a, b);
    }
    return a;
}

static int parse_and(struct lex *l) { return parse_level(l, parse_not, "AND", "&&", N_AND); }
static int parse_xor(struct lex *l) { return parse_level(l, parse_and, "XOR", NULL, N_XOR); }
static int parse_or(struct lex *l) {
    if (++l->depth > RF_MAX_DEPTH) return fail(l, "the condition nests too deep");
    int r = parse_level(l, parse_xor, "OR", "||", N_OR);
    l->depth--;
    return r;
}

struct row_filter *row_filter_parse(const char *cond, char *why, size_t whylen) {
    struct row_filter *f = xcalloc(1, sizeof *f);
    struct lex l = {.p = cond ? cond : "", .f = f, .why = why, .whylen = whylen};
    f->root = parse_or(&l);
    if (f->root >= 0 && peek(&l).t != TK_END) unexpected(&l, peek(&l));
    if (l.failed || f->root < 0) {
        if (!l.failed) snprintf(why, whylen, "not a condition");
        row_filter_free(f);
        return NULL;
    }
    return f;
}

void row_filter_free(struct row_filter *f) {
    if (!f) return;
    for (size_t i = 0; i < f->ncols; i++) {
        free(f->cols[i].name);
        free(f->cols[i].collation);
    }
    free(f->nodes);
    free(f->args);
    sbuf_free(&f->text);
    free(f);
}

struct row_filter *row_filter_copy(const struct row_filter *f) {
    if (!f) return NULL;
    struct row_filter *o = xcalloc(1, sizeof *o);
    *o = *f;
    o->nodes = xmalloc((f->nnodes ? f->nnodes : 1) * sizeof *o->nodes);
    if (f->nnodes) memcpy(o->nodes, f->nodes, f->nnodes * sizeof *o->nodes);
    o->capnodes = f->nnodes;
    o->args = xmalloc((f->nargs ? f->nargs : 1) * sizeof *o->args);
    if (f->nargs) memcpy(o->args, f->args, f->nargs * sizeof *o->args);
    o->capargs = f->nargs;
    sbuf_init(&o->text);
    sbuf_add(&o->text, f->text.data, f->text.len);
    for (size_t i = 0; i < f->ncols; i++) {
        o->cols[i].name = xstrdup(f->cols[i].name);
        o->cols[i].collation = f->cols[i].collation ? xstrdup(f->cols[i].collation) : NULL;
    }
    return o;
}

size_t row_filter_ncols(const struct row_filter *f) { return f ? f->ncols : 0; }
const char *row_filter_col(const struct row_filter *f, size_t i) { return f->cols[i].name; }
bool row_filter_bound(const struct row_filter *f) { return f && f->bound; }

bool row_filter_moved(const struct row_filter *f, rf_value_fn get, void *before, void *after) {
    if (!f) return true;
    for (size_t i = 0; i < f->ncols; i++) {
        size_t l1 = 0, l2 = 0;
        bool a1 = false, a2 = false;
        const char *v1 = get(before, f->cols[i].name, &l1, &a1);
        char *c1 = v1 ? xstrndup(v1, l1) : NULL; /* get may reuse its buffer */
        const char *v2 = get(after, f->cols[i].name, &l2, &a2);
        bool same = !a1 && !a2 && ((!c1 && !v2) || (c1 && v2 && l1 == l2 && !memcmp(c1, v2, l1)));
        free(c1);
        if (!same) return true;
    }
    return false;
}
