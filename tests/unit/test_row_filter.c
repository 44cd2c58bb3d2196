/* Unit tests of the row filter (sync/mapping/row_filter.c, row_filter_eval.c):
 * the where of a document table parsed, bound to a schema and evaluated over
 * rows as MySQL would — the cases of tests/fixtures/row_filter/cases.tsv:
 * three-valued logic, numbers against strings, exact decimals, FLOAT's
 * single precision, dates, strings under binary, `_bin`, case-insensitive
 * PAD SPACE and NO PAD collations, LIKE — and RF_UNDECIDED where only the
 * server knows (non-ASCII text under a case-insensitive collation, a
 * tailored collation, punctuation's order, a string against a huge number).
 * tests/integration/t_row_filter_server.sh runs the same cases on the
 * servers. Then what the subset refuses, each with the reason named; the
 * columns a condition reads, row_filter_moved, a copy, a column absent from
 * the row. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sbuf.h"
#include "sync/mapping/mapping.h"
#include "sync/mapping/row_filter.h"

static const char *srcdir(void) {
    const char *s = getenv("SEARCHSYNC_SRCDIR");
    return s && *s ? s : ".";
}

/* the fixture: its columns, its base row and its cases */
#define MAXC 40
struct fixture {
    char col[MAXC][3][64]; /* name, type, collation ("" none) */
    int ncol;
    char base[1024];
    struct fcase {
        char want;
        char cond[256], spec[512];
    } *cases;
    size_t ncases;
};

/* \t, \\ and \xHH read */
static void unescape(const char *in, char *out, size_t outlen) {
    size_t k = 0;
    for (const char *p = in; *p && k + 1 < outlen; p++) {
        if (*p == '\\' && p[1] == 't') out[k++] = '\t', p++;
        else if (*p == '\\' && p[1] == '\\') out[k++] = '\\', p++;
        else if (*p == '\\' && p[1] == 'x' && p[2] && p[3]) {
            char h[3] = {p[2], p[3], 0};
            out[k++] = (char)strtol(h, NULL, 16);
            p += 3;
        } else out[k++] = *p;
    }
    out[k] = '\0';
}

static void fixture_load(struct fixture *fx) {
    memset(fx, 0, sizeof *fx);
    char path[4096];
    snprintf(path, sizeof path, "%s/tests/fixtures/row_filter/cases.tsv", srcdir());
    FILE *f = fopen(path, "r");
    if (!f) fail_msg("cannot read %s", path);
    char line[2048];
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = '\0';
        if (!line[0] || line[0] == '#') continue;
        char *field[4] = {line, NULL, NULL, NULL};
        for (int i = 1; i < 4; i++) {
            char *tab = field[i - 1] ? strchr(field[i - 1], '\t') : NULL;
            if (tab) *tab = '\0', field[i] = tab + 1;
        }
        if (!strcmp(field[0], "col")) {
            assert_true(fx->ncol < MAXC && field[3]);
            snprintf(fx->col[fx->ncol][0], 64, "%s", field[1]);
            snprintf(fx->col[fx->ncol][1], 64, "%s", field[2]);
            snprintf(fx->col[fx->ncol][2], 64, "%s", strcmp(field[3], "-") ? field[3] : "");
            fx->ncol++;
        } else if (!strcmp(field[0], "base")) {
            unescape(field[1], fx->base, sizeof fx->base);
        } else {
            assert_true(strlen(field[0]) == 1 && strchr("TFNU", field[0][0]) && field[1]);
            fx->cases = xrealloc(fx->cases, (fx->ncases + 1) * sizeof *fx->cases);
            struct fcase *c = &fx->cases[fx->ncases++];
            c->want = field[0][0];
            unescape(field[1], c->cond, sizeof c->cond);
            unescape(field[2] ? field[2] : "", c->spec, sizeof c->spec);
        }
    }
    fclose(f);
    assert_true(fx->ncol > 10 && fx->ncases > 100);
}

static struct fixture FX;

static void schema_of(struct mp_schema *s) {
    memset(s, 0, sizeof *s);
    for (int i = 0; i < FX.ncol; i++) {
        mp_schema_add(s, "d", "t", FX.col[i][0], FX.col[i][1], i == 0);
        s->cols[s->n - 1].collation = FX.col[i][2][0] ? xstrdup(FX.col[i][2]) : NULL;
    }
}

/* a row: "col=value" pairs separated by '|', "col" alone for NULL */
struct row {
    char name[MAXC][24];
    char val[MAXC][64];
    bool null[MAXC];
    int n;
    int calls;
};

static void row_set(struct row *r, const char *spec) {
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", spec);
    char *p = buf;
    while (p && *p) {
        char *bar = strchr(p, '|');
        if (bar) *bar = '\0';
        char *eq = strchr(p, '=');
        if (eq) *eq = '\0';
        int i = 0;
        while (i < r->n && strcmp(r->name[i], p)) i++;
        if (i == r->n) snprintf(r->name[r->n++], sizeof r->name[0], "%.23s", p);
        r->null[i] = !eq;
        snprintf(r->val[i], sizeof r->val[0], "%.63s", eq ? eq + 1 : "");
        p = bar ? bar + 1 : NULL;
    }
}

static const char *row_get(void *ctx, const char *column, size_t *len, bool *absent) {
    struct row *r = ctx;
    r->calls++;
    for (int i = 0; i < r->n; i++)
        if (!strcmp(r->name[i], column)) {
            *absent = false;
            if (r->null[i]) return NULL;
            *len = strlen(r->val[i]);
            return r->val[i];
        }
    *absent = true;
    return NULL;
}

static const char *const names[] = {"FALSE", "TRUE", "NULL", "UNDECIDED", "ABSENT"};

static int eval_one(const char *cond, const char *rowspec, bool bind) {
    char why[256];
    struct row_filter *f = row_filter_parse(cond, why, sizeof why);
    if (!f) fail_msg("%s: refused: %s", cond, why);
    if (bind) {
        struct mp_schema s;
        schema_of(&s);
        if (row_filter_bind(f, &s, "d", "t", why, sizeof why) != 0)
            fail_msg("%s: not bound: %s", cond, why);
        mp_schema_free(&s);
    }
    struct row r = {0};
    row_set(&r, FX.base);
    row_set(&r, rowspec);
    const char *absent = NULL;
    int got = (int)row_filter_eval(f, row_get, &r, &absent);
    row_filter_free(f);
    return got;
}

/* every case of the fixture gives its result */
static void test_cases(void **state) {
    (void)state;
    size_t bad = 0, by[4] = {0};
    for (size_t i = 0; i < FX.ncases; i++) {
        const struct fcase *c = &FX.cases[i];
        int want = c->want == 'T' ? RF_TRUE : c->want == 'F' ? RF_FALSE
                   : c->want == 'N' ? RF_NULL : RF_UNDECIDED;
        int got = eval_one(c->cond, c->spec, true);
        by[want]++;
        if (got != want) {
            print_error("%s with {%s}: %s, not %s\n", c->cond, c->spec, names[got], names[want]);
            bad++;
        }
    }
    print_message("%zu cases: %zu TRUE, %zu FALSE, %zu NULL, %zu UNDECIDED\n", FX.ncases,
                  by[RF_TRUE], by[RF_FALSE], by[RF_NULL], by[RF_UNDECIDED]);
    if (bad) fail_msg("%zu of %zu cases differ", bad, FX.ncases);
}

/* what the subset refuses, and why (the message names it) */
static void test_refused(void **state) {
    (void)state;
    static const char *const parse[][2] = {
        {"NOW() > dt", "the function NOW()"},
        {"qty + 1 > 2", "the operator +"},
        {"qty * 2 = 4", "the operator *"},
        {"name = \"x\"", "double-quoted"},
        {"name = 'a\\'b'", "backslash"},
        {"t.qty = 1", "qualified name t."},
        {"qty = 1 = 1", "comparison of a comparison"},
        {"qty = 1 && name = 'x'", "write AND"},
        {"qty = 1 || name = 'x'", "write OR"},
        {"!qty", "write NOT"},
        {"qty IS 5", "IS must be followed by NULL, TRUE, FALSE or UNKNOWN"},
        {"name LIKE 'a' ESCAPE '!'", "ESCAPE"},
        {"@v = 1", "@"},
        {"qty = 0x10", "0x10"},
        {"(qty = 1", "not closed"},
        {"qty = 1)", "has no ("},
        {"", "missing"},
        {"qty =", "missing at the end"},
        {"qty NOT 5", "NOT after a value"},
        {"qty IN 1", "a list in parentheses"},
        {"qty BETWEEN 1 OR 2", "BETWEEN needs its AND"},
        {"name = 'open", "not closed"},
        {"qty REGEXP 'a'", "REGEXP"},
        {"DATE '2024-01-01' < d", "typed literal"},
        {"name = _utf8mb4'x'", "typed literal"},
        {"qty DIV 2 = 1", "DIV"},
        {"- qty = 1", "only a sign right before a number"},
        {"CASE WHEN qty THEN 1 END", "CASE"},
    };
    for (size_t i = 0; i < sizeof parse / sizeof parse[0]; i++) {
        char why[256] = "";
        struct row_filter *f = row_filter_parse(parse[i][0], why, sizeof why);
        if (f) fail_msg("parsed: %s", parse[i][0]);
        if (!strstr(why, parse[i][1]))
            fail_msg("%s: the reason \"%s\" does not say \"%s\"", parse[i][0], why, parse[i][1]);
    }
    static const char *const bind[][2] = {
        {"st = 1", "ENUM or SET"},
        {"st", "truth value"},
        {"js = 'x'", "column js (JSON)"},
        {"tm > '10:00:00'", "column tm (TIME)"},
        {"d > 20240101", "a date literal or another date column"},
        {"d > 'yesterday'", "'yesterday' is not a date"},
        {"d > '2024-02-30'", "is not a date"},
        {"d = name", "another date column"},
        {"qty IN (1, 'a')", "two kinds"},
        {"qty BETWEEN 1 AND 'z'", "bounds of two kinds"},
        {"name LIKE qty", "string literal"},
        {"w LIKE '1%'", "LIKE reads"},
        {"yr = '2024'", "YEAR or BIT"},
        {"flag = '1'", "YEAR or BIT"},
        {"d", "truth value"},
        {"missing = 1", "missing is not a column of d.t"},
        {"name = code", "two collations (utf8mb4_general_ci, utf8mb4_bin)"},
        {"d IN ('2024-01-31')", "IN (...) with dates"},
    };
    struct mp_schema s;
    schema_of(&s);
    for (size_t i = 0; i < sizeof bind / sizeof bind[0]; i++) {
        char why[256] = "";
        struct row_filter *f = row_filter_parse(bind[i][0], why, sizeof why);
        if (!f) fail_msg("%s: not parsed: %s", bind[i][0], why);
        int rc = row_filter_bind(f, &s, "d", "t", why, sizeof why);
        if (rc == 0) fail_msg("bound: %s", bind[i][0]);
        if (rc != (strstr(bind[i][0], "missing") ? -1 : -2))
            fail_msg("%s: bind returned %d", bind[i][0], rc);
        if (!strstr(why, bind[i][1]))
            fail_msg("%s: the reason \"%s\" does not say \"%s\"", bind[i][0], why, bind[i][1]);
        assert_false(row_filter_bound(f));
        row_filter_free(f);
    }
    mp_schema_free(&s);
}

/* the columns read, each once; a column NULL-checked stays known; an
 * unbound filter cannot compare a column; column names ignore case */
static void test_columns(void **state) {
    (void)state;
    char why[256];
    struct row_filter *f =
        row_filter_parse("`Deleted_At` IS NULL AND (QTY > 1 OR qty IS NULL) AND st <> 'x'", why,
                         sizeof why);
    assert_non_null(f);
    assert_int_equal(3, row_filter_ncols(f));
    assert_string_equal("Deleted_At", row_filter_col(f, 0));
    assert_string_equal("QTY", row_filter_col(f, 1));
    assert_string_equal("st", row_filter_col(f, 2));
    assert_false(row_filter_bound(f));
    struct row r = {0};
    row_set(&r, FX.base);
    assert_int_equal(RF_ABSENT, row_filter_eval(f, row_get, &r, NULL)); /* Deleted_At */
    struct mp_schema s;
    schema_of(&s);
    assert_int_equal(0, row_filter_bind(f, &s, "d", "t", why, sizeof why));
    assert_string_equal("deleted_at", row_filter_col(f, 0)); /* the schema's spelling */
    assert_string_equal("qty", row_filter_col(f, 1));
    struct row_filter *g = row_filter_copy(f);
    row_filter_free(f);
    assert_true(row_filter_bound(g));
    r.calls = 0;
    assert_int_equal(RF_TRUE, row_filter_eval(g, row_get, &r, NULL));
    assert_int_equal(3, r.calls); /* each column read once */
    struct row before = {0}, after = {0};
    row_set(&before, FX.base);
    row_set(&after, FX.base);
    row_set(&after, "name=other|price=1.00");
    assert_false(row_filter_moved(g, row_get, &before, &after));
    row_set(&after, "qty");
    assert_true(row_filter_moved(g, row_get, &before, &after));
    assert_true(row_filter_moved(NULL, row_get, &before, &after));
    struct row less = {0};
    row_set(&less, "id=1|qty=1");
    const char *absent = NULL;
    assert_int_equal(RF_ABSENT, row_filter_eval(g, row_get, &less, &absent));
    assert_string_equal("deleted_at", absent);
    assert_true(row_filter_moved(g, row_get, &before, &less));
    row_filter_free(g);
    mp_schema_free(&s);
    /* not bound: a column's comparison is not known, NULL and literals are */
    assert_int_equal(RF_UNDECIDED, eval_one("qty = 5", "", false));
    assert_int_equal(RF_TRUE, eval_one("deleted_at IS NULL", "", false));
    assert_int_equal(RF_NULL, eval_one("qty = 5", "qty", false));
    assert_int_equal(RF_TRUE, eval_one("1 < 2 OR qty = 5", "", false));
    assert_int_equal(RF_UNDECIDED, eval_one("'a' = 'A'", "", false)); /* the connection's */
    assert_int_equal(RF_TRUE, eval_one("'a' = 'a'", "", false));
    assert_int_equal(RF_UNDECIDED, eval_one("'a' < 'b'", "", true)); /* its order too */
    row_filter_free(NULL);
    assert_null(row_filter_copy(NULL));
}

/* a deep condition is refused, not a stack overflow */
static void test_depth(void **state) {
    (void)state;
    sbuf s = SBUF_INIT;
    for (int i = 0; i < 5000; i++) sbuf_addc(&s, '(');
    sbuf_adds(&s, "qty");
    for (int i = 0; i < 5000; i++) sbuf_addc(&s, ')');
    char why[256];
    assert_null(row_filter_parse(s.data, why, sizeof why));
    assert_non_null(strstr(why, "nests too deep"));
    sbuf_reset(&s);
    for (int i = 0; i < 5000; i++) sbuf_adds(&s, "NOT ");
    sbuf_adds(&s, "qty");
    assert_null(row_filter_parse(s.data, why, sizeof why));
    sbuf_reset(&s);
    for (int i = 0; i < 70; i++) sbuf_printf(&s, "%sc%d = 1", i ? " AND " : "", i);
    assert_null(row_filter_parse(s.data, why, sizeof why));
    assert_non_null(strstr(why, "more than 64 columns"));
    sbuf_free(&s);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cases),   cmocka_unit_test(test_refused),
        cmocka_unit_test(test_columns), cmocka_unit_test(test_depth),
    };
    fixture_load(&FX);
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    free(FX.cases);
    return rc;
}
