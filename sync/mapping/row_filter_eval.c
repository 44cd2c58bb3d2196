/* row_filter_eval: a parsed and bound condition over one row's values, as
 * MySQL evaluates it (see row_filter.h): three-valued logic, the comparison
 * each pair of operands gets (rf_plan_of), strings under what is known of
 * their collation, and RF_UNDECIDED wherever that is not enough. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sync/mapping/row_filter_int.h"

enum vt { VT_NULL, VT_INT, VT_DEC, VT_DBL, VT_STR, VT_DT, VT_UND };

struct val {
    enum vt t;
    __int128 i;
    double d;
    const char *s; /* VT_STR, VT_DEC (NUL-terminated), and a column's text */
    size_t n;
    bool dt_ok;    /* dt holds the value as a date and time */
    struct rf_dt dt;
};

struct ev {
    const struct row_filter *f;
    const char *text[RF_MAX_COLS];
    size_t len[RF_MAX_COLS];
};

/* ------------------------------------------------------------------ numbers */

static bool parse_int(const char *s, size_t n, __int128 *out) {
    size_t i = n && s[0] == '-' ? 1 : 0;
    if (i == n || n - i > 20) return false;
    __int128 v = 0;
    for (; i < n; i++) {
        if (s[i] < '0' || s[i] > '9') return false;
        v = v * 10 + (s[i] - '0');
    }
    *out = s[0] == '-' ? -v : v;
    return true;
}

/* a string in a numeric context, as the server reads it: leading spaces,
 * then the longest number there is ('12abc' 12, 'abc' 0, ' 1e3' 1000) */
static double str_number(const char *s, size_t n) {
    size_t i = 0;
    while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r' ||
                     s[i] == '\f' || s[i] == '\v'))
        i++;
    size_t start = i;
    if (i < n && (s[i] == '+' || s[i] == '-')) i++;
    size_t dg = 0;
    while (i < n && s[i] >= '0' && s[i] <= '9') i++, dg++;
    if (i < n && s[i] == '.') {
        i++;
        while (i < n && s[i] >= '0' && s[i] <= '9') i++, dg++;
    }
    if (!dg) return 0;
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        size_t e = i + 1;
        if (e < n && (s[e] == '+' || s[e] == '-')) e++;
        if (e < n && s[e] >= '0' && s[e] <= '9') {
            while (e < n && s[e] >= '0' && s[e] <= '9') e++;
            i = e;
        }
    }
    char buf[400];
    size_t len = i - start < sizeof buf - 1 ? i - start : sizeof buf - 1;
    memcpy(buf, s + start, len);
    buf[len] = '\0';
    return strtod(buf, NULL);
}

/* a string's leading number ('12abc', ' 1e3', 'abc' 0) as decimal text,
 * exactly (MariaDB compares a string with an integer or a DECIMAL so);
 * false when it has more digits than a DECIMAL holds, or an exponent far
 * out */
static bool str_decimal(const char *s, size_t n, char *out, size_t outlen) {
    size_t i = 0;
    while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r' ||
                     s[i] == '\f' || s[i] == '\v'))
        i++;
    bool neg = false;
    if (i < n && (s[i] == '+' || s[i] == '-')) neg = s[i++] == '-';
    char dg[80];
    size_t nd = 0, nint = 0;
    while (i < n && s[i] >= '0' && s[i] <= '9') {
        if (nd == sizeof dg) return false;
        dg[nd++] = s[i++];
        nint++;
    }
    if (i < n && s[i] == '.') {
        i++;
        while (i < n && s[i] >= '0' && s[i] <= '9') {
            if (nd == sizeof dg) return false;
            dg[nd++] = s[i++];
        }
    }
    long ex = 0;
    if (nd && i < n && (s[i] == 'e' || s[i] == 'E')) {
        size_t e = i + 1;
        bool eneg = false;
        if (e < n && (s[e] == '+' || s[e] == '-')) eneg = s[e++] == '-';
        if (e < n && s[e] >= '0' && s[e] <= '9') {
            while (e < n && s[e] >= '0' && s[e] <= '9' && ex < 1000) ex = ex * 10 + (s[e++] - '0');
            if (eneg) ex = -ex;
        }
    }
    /* at most 60 zeros, a point and 38 digits: what out holds */
    if (nd > 38 || ex > 60 || ex < -60 || outlen < 128) return false;
    long point = (long)nint + ex; /* digits before the point */
    size_t k = 0;
    if (neg) out[k++] = '-';
    if (point <= 0) {
        out[k++] = '0';
        out[k++] = '.';
        for (long z = 0; z < -point; z++) out[k++] = '0';
        memcpy(out + k, dg, nd);
        k += nd;
    } else {
        for (long z = 0; z < point; z++) out[k++] = (size_t)z < nd ? dg[z] : '0';
        if ((size_t)point < nd) {
            out[k++] = '.';
            memcpy(out + k, dg + point, nd - (size_t)point);
            k += nd - (size_t)point;
        }
    }
    if (!nd) out[k++] = '0';
    out[k] = '\0';
    return true;
}

static void int_text(__int128 v, char *buf) { /* buf: 48 bytes */
    char t[48];
    size_t n = 0;
    bool neg = v < 0;
    unsigned __int128 u = neg ? (unsigned __int128)(-(v + 1)) + 1 : (unsigned __int128)v;
    do {
        t[n++] = (char)('0' + (int)(u % 10));
        u /= 10;
    } while (u);
    size_t k = 0;
    if (neg) buf[k++] = '-';
    while (n) buf[k++] = t[--n];
    buf[k] = '\0';
}

/* a decimal's text in parts: sign, integer digits without leading zeros,
 * fraction digits without trailing zeros */
struct dec {
    bool neg;
    const char *ip, *fp;
    size_t in, fn;
};

static struct dec dec_parts(const char *s) {
    struct dec d = {false, NULL, NULL, 0, 0};
    if (*s == '-' || *s == '+') d.neg = *s++ == '-';
    while (*s == '0') s++;
    d.ip = s;
    while (*s >= '0' && *s <= '9') s++;
    d.in = (size_t)(s - d.ip);
    if (*s == '.') s++;
    d.fp = s;
    while (*s >= '0' && *s <= '9') s++;
    d.fn = (size_t)(s - d.fp);
    while (d.fn && d.fp[d.fn - 1] == '0') d.fn--;
    if (!d.in && !d.fn) d.neg = false; /* -0 is 0 */
    return d;
}

static int dec_cmp(const char *a, const char *b) {
    struct dec x = dec_parts(a), y = dec_parts(b);
    if (x.neg != y.neg) return x.neg ? -1 : 1;
    int c = 0;
    if (x.in != y.in)
        c = x.in < y.in ? -1 : 1;
    else if ((c = memcmp(x.ip, y.ip, x.in)) != 0)
        c = c < 0 ? -1 : 1;
    else {
        size_t n = x.fn > y.fn ? x.fn : y.fn;
        for (size_t i = 0; i < n && !c; i++) {
            char p = i < x.fn ? x.fp[i] : '0', q = i < y.fn ? y.fp[i] : '0';
            c = (p > q) - (p < q);
        }
    }
    return x.neg ? -c : c;
}

/* ------------------------------------------------------------------ strings */

static unsigned char up(unsigned char c) { return c >= 'a' && c <= 'z' ? c - 32 : c; }

/* printable ASCII only: what a collation known in part compares here */
static bool plain(const char *s, size_t n) {
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)s[i] < 0x20 || (unsigned char)s[i] > 0x7e) return false;
    return true;
}

/* letters, digits and spaces: ordered alike by every collation of plain_ci */
static bool alnum_space(const char *s, size_t n) {
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (!(c == ' ' || (c >= '0' && c <= '9') || (up(c) >= 'A' && up(c) <= 'Z'))) return false;
    }
    return true;
}

/* -1 0 1; pad: the shorter string is read with spaces after it (PAD SPACE) */
static int str_cmp(const char *a, size_t na, const char *b, size_t nb, bool fold, bool pad) {
    size_t n = na < nb ? na : nb;
    for (size_t i = 0; i < n; i++) {
        unsigned char x = (unsigned char)a[i], y = (unsigned char)b[i];
        if (fold) x = up(x), y = up(y);
        if (x != y) return x < y ? -1 : 1;
    }
    if (na == nb) return 0;
    if (!pad) return na < nb ? -1 : 1;
    const char *rest = na > nb ? a + n : b + n;
    size_t nr = (na > nb ? na : nb) - n;
    int sign = na > nb ? 1 : -1;
    for (size_t i = 0; i < nr; i++) {
        unsigned char c = (unsigned char)rest[i];
        if (c != ' ') return c < ' ' ? -sign : sign;
    }
    return 0;
}

/* the results under every reading a collation may have (case folded or
 * not, padded or not): one answer when they agree, RF_UNDECIDED if not.
 * kind: 0 equality (RF_TRUE / RF_FALSE), 1 order (-1 0 1 as 10 + c) */
static int under_readings(const char *a, size_t na, const char *b, size_t nb, struct rf_coll co,
                          int kind) {
    bool folds[2], pads[2];
    int nf = 0, np = 0;
    if (co.mode != CM_CS && co.mode != CM_BYTES) folds[nf++] = true;
    if (co.mode != CM_CI) folds[nf++] = false;
    if (co.pad != PAD_NO) pads[np++] = true;
    if (co.pad != PAD_SPACE) pads[np++] = false;
    int r = -100;
    for (int i = 0; i < nf; i++)
        for (int j = 0; j < np; j++) {
            int c = str_cmp(a, na, b, nb, folds[i], pads[j]);
            int v = kind == 0 ? (c == 0 ? RF_TRUE : RF_FALSE) : 10 + c;
            if (r != -100 && v != r) return RF_UNDECIDED;
            r = v;
        }
    return r;
}

static int str_eq(const struct val *a, const struct val *b, struct rf_coll co) {
    if (co.mode != CM_BYTES) {
        if (a->n == b->n && !memcmp(a->s, b->s, a->n)) return RF_TRUE;
        if (!plain(a->s, a->n) || !plain(b->s, b->n)) return RF_UNDECIDED;
    }
    return under_readings(a->s, a->n, b->s, b->n, co, 0);
}

/* 10 + (-1 0 1), or RF_UNDECIDED */
static int str_order(const struct val *a, const struct val *b, struct rf_coll co) {
    if (co.mode == CM_BYTES) return under_readings(a->s, a->n, b->s, b->n, co, 1);
    if (a->n == b->n && !memcmp(a->s, b->s, a->n)) return 10;
    if (co.mode != CM_CI || !alnum_space(a->s, a->n) || !alnum_space(b->s, b->n))
        return RF_UNDECIDED;
    return under_readings(a->s, a->n, b->s, b->n, co, 1);
}

/* bytes of one character at s (chars: UTF-8; else a byte) */
static size_t char_len(const unsigned char *s, size_t n, bool chars) {
    if (!chars || n == 0) return n ? 1 : 0;
    size_t l = s[0] < 0x80 ? 1 : s[0] >= 0xf0 ? 4 : s[0] >= 0xe0 ? 3 : s[0] >= 0xc0 ? 2 : 1;
    return l > n ? n : l;
}

/* LIKE: % any run of characters, _ one character, the rest itself */
static bool like_match(const char *vs, size_t ns, const char *vp, size_t np, bool fold,
                       bool chars) {
    const unsigned char *s = (const unsigned char *)vs, *p = (const unsigned char *)vp;
    size_t si = 0, pi = 0, star_p = (size_t)-1, star_s = 0;
    while (si < ns) {
        if (pi < np && p[pi] == '%') {
            star_p = pi++;
            star_s = si;
            continue;
        }
        if (pi < np && p[pi] == '_') {
            si += char_len(s + si, ns - si, chars);
            pi++;
            continue;
        }
        if (pi < np && (fold ? up(p[pi]) == up(s[si]) : p[pi] == s[si])) {
            si++;
            pi++;
            continue;
        }
        if (star_p == (size_t)-1) return false;
        pi = star_p + 1;
        star_s += char_len(s + star_s, ns - star_s, chars);
        si = star_s;
    }
    while (pi < np && p[pi] == '%') pi++;
    return pi == np;
}

static int like(const char *s, size_t ns, const char *p, size_t np, struct rf_coll co) {
    if (co.mode == CM_BYTES) return like_match(s, ns, p, np, false, co.chars) ? RF_TRUE : RF_FALSE;
    if (!plain(s, ns) || !plain(p, np)) return RF_UNDECIDED;
    bool ci = like_match(s, ns, p, np, true, false), cs = like_match(s, ns, p, np, false, false);
    if (co.mode == CM_CI) return ci ? RF_TRUE : RF_FALSE;
    if (co.mode == CM_CS) return cs ? RF_TRUE : RF_FALSE;
    return ci == cs ? (ci ? RF_TRUE : RF_FALSE) : RF_UNDECIDED;
}

/* ------------------------------------------------------------------ values */

static int truth(const struct ev *e, int i);

static struct val value(const struct ev *e, int i) {
    const struct row_filter *f = e->f;
    const struct rf_node *x = &f->nodes[i];
    struct val v;
    memset(&v, 0, sizeof v);
    if (rf_is_bool(x)) {
        int t = truth(e, i);
        v.t = t == RF_NULL ? VT_NULL : t == RF_UNDECIDED ? VT_UND : VT_INT;
        v.i = t == RF_TRUE;
        return v;
    }
    if (x->op == N_LIT) {
        v.s = f->text.data ? f->text.data + x->off : "";
        v.n = x->len;
        switch (x->lit) {
        case L_NULL: v.t = VT_NULL; break;
        case L_INT: v.t = VT_INT, v.i = x->iv; break;
        case L_DEC: v.t = VT_DEC; break;
        case L_DBL: v.t = VT_DBL, v.d = strtod(v.s, NULL); break;
        default: v.t = VT_STR, v.dt_ok = x->dt_ok, v.dt = x->dt; break;
        }
        return v;
    }
    const struct rf_col *c = &f->cols[x->col];
    v.s = e->text[x->col];
    v.n = e->len[x->col];
    if (!v.s) {
        v.t = VT_NULL;
        return v;
    }
    switch ((enum rf_kind)c->kind) {
    case K_INT:
    case K_YEAR: v.t = parse_int(v.s, v.n, &v.i) ? VT_INT : VT_UND; break;
    case K_BIT: /* its bytes, most significant first */
        v.t = v.n <= 8 ? VT_INT : VT_UND;
        for (size_t k = 0; k < v.n && k < 8; k++) v.i = v.i * 256 + (unsigned char)v.s[k];
        break;
    case K_DECIMAL: v.t = VT_DEC; break;
    case K_FLOAT: v.t = VT_DBL, v.d = (double)strtof(v.s, NULL); break; /* single precision */
    case K_DOUBLE: v.t = VT_DBL, v.d = strtod(v.s, NULL); break;
    case K_STRING: case K_BINARY: case K_ENUM: case K_SET: v.t = VT_STR; break;
    case K_DATE:
    case K_DATETIME:
        v.dt_ok = rf_parse_dt(v.s, v.n, &v.dt);
        v.t = v.dt_ok ? VT_DT : VT_UND;
        break;
    default: v.t = VT_UND; break; /* not bound, or compared with nothing */
    }
    return v;
}

static double as_double(const struct val *v) {
    switch (v->t) {
    case VT_INT: return (double)v->i;
    case VT_DBL: return v->d;
    case VT_DEC: return strtod(v->s, NULL);
    default: return str_number(v->s, v->n);
    }
}

/* a value as a condition: a number is true when not zero (a string is read
 * as a number) */
static int truth_of(const struct val *v) {
    switch (v->t) {
    case VT_NULL: return RF_NULL;
    case VT_INT: return v->i != 0 ? RF_TRUE : RF_FALSE;
    case VT_DEC: {
        struct dec d = dec_parts(v->s);
        return d.in || d.fn ? RF_TRUE : RF_FALSE;
    }
    case VT_DBL:
    case VT_STR: return as_double(v) != 0 ? RF_TRUE : RF_FALSE;
    default: return RF_UNDECIDED;
    }
}

static int dt_cmp(const struct rf_dt *a, const struct rf_dt *b) {
    const int x[] = {a->y, a->mo, a->d, a->h, a->mi, a->s, a->us};
    const int y[] = {b->y, b->mo, b->d, b->h, b->mi, b->s, b->us};
    for (int i = 0; i < 7; i++)
        if (x[i] != y[i]) return x[i] < y[i] ? -1 : 1;
    return 0;
}

static int from_order(int c, enum rf_cmp op) {
    switch (op) {
    case C_EQ:
    case C_NSEQ: return c == 0;
    case C_NE: return c != 0;
    case C_LT: return c < 0;
    case C_LE: return c <= 0;
    case C_GT: return c > 0;
    default: return c >= 0;
    }
}

/* node a op node b */
static int compare(const struct ev *e, int a, int b, enum rf_cmp op) {
    const struct row_filter *f = e->f;
    struct val x = value(e, a), y = value(e, b);
    if (op == C_NSEQ && (x.t == VT_NULL || y.t == VT_NULL))
        return x.t == VT_NULL && y.t == VT_NULL ? RF_TRUE : RF_FALSE;
    if (x.t == VT_NULL || y.t == VT_NULL) return RF_NULL;
    if (x.t == VT_UND || y.t == VT_UND) return RF_UNDECIDED;
    int c;
    switch (rf_plan_of(f, a, b, NULL, 0)) {
    case P_NULL: return RF_NULL;
    case P_INT: c = (x.i > y.i) - (x.i < y.i); break;
    case P_DEC: {
        char bx[48], by[48];
        if (x.t == VT_INT) int_text(x.i, bx);
        if (y.t == VT_INT) int_text(y.i, by);
        c = dec_cmp(x.t == VT_INT ? bx : x.s, y.t == VT_INT ? by : y.s);
        break;
    }
    case P_DBL: {
        double p = as_double(&x), q = as_double(&y);
        c = (p > q) - (p < q);
        /* a string against an integer or a DECIMAL: MySQL compares them as
         * doubles, MariaDB as decimals; one answer when both agree (they
         * part only past a double's 15-17 digits) */
        bool xs = x.t == VT_STR, ys = y.t == VT_STR;
        if ((xs && (y.t == VT_INT || y.t == VT_DEC)) || (ys && (x.t == VT_INT || x.t == VT_DEC))) {
            char bx[256], by[256];
            const char *dx = x.t == VT_DEC ? x.s : bx, *dy = y.t == VT_DEC ? y.s : by;
            if (x.t == VT_INT) int_text(x.i, bx);
            if (y.t == VT_INT) int_text(y.i, by);
            if ((xs && !str_decimal(x.s, x.n, bx, sizeof bx)) ||
                (ys && !str_decimal(y.s, y.n, by, sizeof by)))
                return RF_UNDECIDED;
            if (from_order(dec_cmp(dx, dy), op) != from_order(c, op)) return RF_UNDECIDED;
        }
        break;
    }
    case P_STR: {
        struct rf_coll co = rf_coll_of(f, a, b);
        if (op == C_EQ || op == C_NE || op == C_NSEQ) {
            int r = str_eq(&x, &y, co);
            if (r == RF_UNDECIDED) return r;
            return (op == C_NE) == (r == RF_FALSE) ? RF_TRUE : RF_FALSE;
        }
        int r = str_order(&x, &y, co);
        if (r == RF_UNDECIDED) return r;
        c = r - 10;
        break;
    }
    case P_TEMP:
        if (!x.dt_ok || !y.dt_ok) return RF_UNDECIDED;
        c = dt_cmp(&x.dt, &y.dt);
        break;
    default: return RF_UNDECIDED; /* not bound, or refused by the binding */
    }
    return from_order(c, op) ? RF_TRUE : RF_FALSE;
}

static int not3(int t) { return t == RF_TRUE ? RF_FALSE : t == RF_FALSE ? RF_TRUE : t; }

static int and3(int a, int b) {
    if (a == RF_FALSE || b == RF_FALSE) return RF_FALSE;
    if (a == RF_UNDECIDED || b == RF_UNDECIDED) return RF_UNDECIDED;
    if (a == RF_NULL || b == RF_NULL) return RF_NULL;
    return RF_TRUE;
}

static int or3(int a, int b) { return not3(and3(not3(a), not3(b))); }

/* the text LIKE reads of a value */
static const char *like_text(const struct val *v, char *buf, size_t *n) {
    if (v->t == VT_INT) {
        int_text(v->i, buf);
        *n = strlen(buf);
        return buf;
    }
    *n = v->n;
    return v->s;
}

static int truth(const struct ev *e, int i) {
    const struct row_filter *f = e->f;
    const struct rf_node *x = &f->nodes[i];
    switch (x->op) {
    case N_AND: {
        int a = truth(e, x->a);
        return a == RF_FALSE ? RF_FALSE : and3(a, truth(e, x->b));
    }
    case N_OR: {
        int a = truth(e, x->a);
        return a == RF_TRUE ? RF_TRUE : or3(a, truth(e, x->b));
    }
    case N_XOR: {
        int a = truth(e, x->a), b = truth(e, x->b);
        if (a == RF_NULL || b == RF_NULL) return RF_NULL;
        if (a == RF_UNDECIDED || b == RF_UNDECIDED) return RF_UNDECIDED;
        return (a == RF_TRUE) != (b == RF_TRUE) ? RF_TRUE : RF_FALSE;
    }
    case N_NOT: return not3(truth(e, x->a));
    case N_ISNULL: {
        struct val v = value(e, x->a);
        if (v.t == VT_UND && rf_is_bool(&f->nodes[x->a])) return RF_UNDECIDED;
        return (v.t == VT_NULL) != x->neg ? RF_TRUE : RF_FALSE;
    }
    case N_ISBOOL: {
        int t = truth(e, x->a);
        if (t == RF_UNDECIDED) return t;
        bool is = x->isv == 1 ? t == RF_TRUE : x->isv == 0 ? t == RF_FALSE : t == RF_NULL;
        return is != x->neg ? RF_TRUE : RF_FALSE;
    }
    case N_CMP: return compare(e, x->a, x->b, (enum rf_cmp)x->cmp);
    case N_IN: {
        int r = RF_FALSE;
        for (int k = 0; k < x->n && r != RF_TRUE; k++) {
            int t = compare(e, x->a, f->args[x->first + k], C_EQ);
            if (t == RF_TRUE || t == RF_UNDECIDED || (t == RF_NULL && r == RF_FALSE)) r = t;
        }
        return x->neg ? not3(r) : r;
    }
    case N_BETWEEN: {
        int r = and3(compare(e, x->a, x->b, C_GE), compare(e, x->a, x->c, C_LE));
        return x->neg ? not3(r) : r;
    }
    case N_LIKE: {
        struct val v = value(e, x->a), p = value(e, x->b);
        if (v.t == VT_NULL || p.t == VT_NULL) return RF_NULL;
        if (v.t == VT_UND || v.t == VT_DBL || p.t != VT_STR) return RF_UNDECIDED;
        char buf[48];
        size_t n;
        const char *s = like_text(&v, buf, &n);
        int r = like(s, n, p.s, p.n, rf_coll_of(f, x->a, x->b));
        return x->neg ? not3(r) : r;
    }
    default: { /* a column or a literal as a condition */
        struct val v = value(e, i);
        return truth_of(&v);
    }
    }
}

enum rf_truth row_filter_eval(const struct row_filter *f, rf_value_fn get, void *ctx,
                              const char **absent_col) {
    struct ev e;
    memset(&e, 0, sizeof e);
    e.f = f;
    /* every column once, copied (get reuses its buffer), NUL-terminated for
     * the number parsers */
    sbuf buf = SBUF_INIT;
    size_t off[RF_MAX_COLS];
    bool null[RF_MAX_COLS];
    for (size_t i = 0; i < f->ncols; i++) {
        size_t n = 0;
        bool absent = false;
        const char *v = get(ctx, f->cols[i].name, &n, &absent);
        if (absent) {
            if (absent_col) *absent_col = f->cols[i].name;
            sbuf_free(&buf);
            return RF_ABSENT;
        }
        null[i] = !v;
        off[i] = buf.len;
        e.len[i] = v ? n : 0;
        if (v) sbuf_add(&buf, v, n);
        sbuf_addc(&buf, '\0');
    }
    for (size_t i = 0; i < f->ncols; i++) e.text[i] = null[i] ? NULL : buf.data + off[i];
    enum rf_truth r = (enum rf_truth)truth(&e, f->root);
    sbuf_free(&buf);
    return r;
}
