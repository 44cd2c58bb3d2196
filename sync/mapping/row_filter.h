/* row_filter: a document table's `where` (mp_table.where) as searchsync
 * itself reads it, without the server.
 *
 * Owns: the subset of SQL boolean expressions that row-image mode decides
 * from a row image (docs/mapping.md, "The where of a document table"):
 * comparisons (= <> != < <= > >= <=>), IS [NOT] NULL / TRUE / FALSE /
 * UNKNOWN, [NOT] IN (...), [NOT] BETWEEN, [NOT] LIKE with % and _, AND OR
 * XOR NOT, parentheses, columns of the table, numeric and string literals,
 * NULL, TRUE and FALSE; the columns a condition reads (a change of one of
 * them can move a row in or out); their types and collations, taken from
 * the source's schema (row_filter_bind), which also refuses comparisons the
 * evaluator cannot make as the server makes them; and the evaluation of the
 * condition over one row's values.
 *
 * Evaluation follows MySQL: three-valued logic (a row is in when the
 * condition is TRUE; FALSE and NULL are out); integers compared exactly,
 * DECIMAL exactly with integers and decimals, anything with a FLOAT/DOUBLE
 * or a string against a number as double precision (a string read for its
 * leading number, 'abc' as 0); DATE/DATETIME/TIMESTAMP columns against
 * date literals as dates and times; strings by their column's collation.
 * A collation is known here only in part: binary strings and `_bin`
 * collations compare their bytes, case-insensitive collations fold ASCII
 * letters, PAD SPACE ignores trailing spaces. Where that is not enough to
 * answer as the server would (a non-ASCII character under a case-insensitive
 * collation, an ordering of punctuation, a collation not known), the result
 * is RF_UNDECIDED and the caller asks the server instead.
 *
 * The parse also serves conditions outside the subset: the caller then
 * knows only that it cannot list their columns (row_filter_parse fails,
 * naming the first thing not supported). */
#ifndef SS_ROW_FILTER_H
#define SS_ROW_FILTER_H
#include <stdbool.h>
#include <stddef.h>

struct mp_schema;
struct row_filter;

enum rf_truth {
    RF_FALSE = 0,
    RF_TRUE = 1,
    RF_NULL = 2,      /* SQL's UNKNOWN: the row is out */
    RF_UNDECIDED = 3, /* not decidable here: ask the server */
    RF_ABSENT = 4     /* a column the condition reads is not in the row */
};

/* The condition cond parsed; NULL with the reason in why (the first thing
 * outside the subset, e.g. "the function NOW() is not supported"). */
struct row_filter *row_filter_parse(const char *cond, char *why, size_t whylen);
void row_filter_free(struct row_filter *f); /* NULL-safe */
struct row_filter *row_filter_copy(const struct row_filter *f); /* NULL for NULL */

/* The columns the condition reads, each once (as the schema spells them
 * once bound, else as written). */
size_t row_filter_ncols(const struct row_filter *f);
const char *row_filter_col(const struct row_filter *f, size_t i);

/* Give each column its type and collation from the source's schema, table
 * db.table. 0; -1 with why: a column the table lacks; -2 with why: a
 * comparison the evaluator does not make as the server does (an ENUM
 * against a number, a JSON column, a date literal it cannot read, ...). An
 * unbound filter evaluates every comparison of a column as RF_UNDECIDED. */
int row_filter_bind(struct row_filter *f, const struct mp_schema *s, const char *db,
                    const char *table, char *why, size_t whylen);
bool row_filter_bound(const struct row_filter *f);

/* A column's value in the row, as the text MySQL gives for it (the binlog
 * decoder's bl_value_text: CAST(col AS CHAR) through a utf8mb4 connection
 * in UTC); NULL for SQL NULL; *absent when the row lacks the column. The
 * text may be overwritten by the next call. image_value has this shape. */
typedef const char *(*rf_value_fn)(void *ctx, const char *column, size_t *len, bool *absent);

/* Can an update from image before to image after move the row in or out
 * of the filter: does a column it reads differ (or is one absent)? f NULL
 * (a where whose columns are not known): true. */
bool row_filter_moved(const struct row_filter *f, rf_value_fn get, void *before, void *after);

/* The condition over one row. RF_ABSENT sets *absent_col (may be NULL) to
 * the column the row lacks. */
enum rf_truth row_filter_eval(const struct row_filter *f, rf_value_fn get, void *ctx,
                              const char **absent_col);

#endif
