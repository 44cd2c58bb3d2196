/* stmt: one prepared statement with text parameters, its rows as text.
 *
 * For queries whose values come from requests (an alias in an admin API
 * path, a word an operator sends): they reach MySQL only as bound
 * parameters of a prepared statement, never spliced into SQL text
 * (docs/http-api.md, "Security"). Every result cell comes back as the
 * server's text (so BIGINT counters stay exact), NULL for SQL NULL. */
#ifndef SS_STMT_H
#define SS_STMT_H
#include <stdbool.h>
#include <stddef.h>

#include <mysql.h>

#include "jsonw.h"

struct stmt_rows {
    size_t nrows, ncols;
    char **cells; /* nrows * ncols, NULL = SQL NULL */
};
#define STMT_CELL(t, r, c) ((t)->cells[(r) * (t)->ncols + (c)])

/* Run sql with params[0..nparams) bound as strings (NULL = SQL NULL).
 * Returns the number of rows (for statements without a result set, the
 * rows they changed) or -1
 * with err set. out may be NULL when no rows are wanted. */
long stmt_query(MYSQL *m, const char *sql, const char *const *params, size_t nparams,
                struct stmt_rows *out, char *err, size_t errlen);
void stmt_rows_free(struct stmt_rows *t); /* NULL-safe */

/* A column as ISO 8601 UTC text with milliseconds, for a SELECT list. */
#define STMT_ISO(col) "CONCAT(LEFT(DATE_FORMAT(" col ", '%Y-%m-%dT%H:%i:%s.%f'), 23), 'Z')"

/* The rows as a JSON array of objects, column k under names[k]: SQL NULL as
 * null, a column with num[k] as the server's number text (exact: BIGINT
 * UNSIGNED and DECIMAL are never read through a double), the rest as
 * strings. Columns past n are left out. */
void stmt_rows_json(jsonw *w, const struct stmt_rows *t, const char *const *names,
                    const bool *num, size_t n);

#endif
