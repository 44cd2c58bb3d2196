/* build_table: the build table read from the metadata (see build_table.h). */
#include "sync/node/build_table.h"

#include <stdlib.h>
#include <string.h>

#include "sbuf.h"

struct build_table *build_table_read(MYSQL **meta, const db_params *p, const char *source,
                                     char *err, size_t errlen) {
    if (db_ensure(meta, p, err, errlen) < 0) return NULL;
    sbuf q = SBUF_INIT;
    sbuf_adds(&q, "SELECT alias, state, current_version, building_version, stopped_reason IS "
                  "NOT NULL FROM index_configs WHERE source = ");
    db_quote(*meta, &q, source, strlen(source));
    MYSQL_RES *res = db_query(*meta, q.data, q.len, err, errlen);
    sbuf_free(&q);
    if (!res) return NULL;
    struct build_table *t = xcalloc(1, sizeof *t);
    t->v = xcalloc((size_t)mysql_num_rows(res) + 1, sizeof *t->v);
    MYSQL_ROW row;
    while ((row = mysql_fetch_row(res))) {
        struct build_want *w = &t->v[t->n++];
        w->alias = xstrdup(row[0]);
        w->state = xstrdup(row[1] ? row[1] : "");
        w->current = (unsigned)strtoul(row[2] ? row[2] : "0", NULL, 10);
        w->building = (unsigned)strtoul(row[3] ? row[3] : "0", NULL, 10);
        w->stopped = row[4] && !strcmp(row[4], "1");
    }
    mysql_free_result(res);
    return t;
}

void build_table_free(struct build_table *t) {
    if (!t) return;
    for (size_t i = 0; i < t->n; i++) free(t->v[i].alias), free(t->v[i].state);
    free(t->v);
    free(t);
}
