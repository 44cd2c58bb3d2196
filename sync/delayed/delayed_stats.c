/* delayed_stats: what a delayed run reports (sync/delayed/delayed.h) — its figures
 * printed for the command and as the JSON of delayed_runs.stats and
 * sync_log — and the index config ids its rows are counted by. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db.h"
#include "sync/delayed/delayed.h"

void delayed_stats_json(const struct delayed_stats *st, sbuf *out) {
    size_t top = DELAYED_MAX_LEVELS;
    while (top > 0 && !st->level_ids[top]) top--;
    sbuf_printf(out, "{\"snapshots\":%llu,\"ids_per_level\":[", st->snapshots);
    for (size_t l = 0; l <= top; l++) sbuf_printf(out, "%s%llu", l ? "," : "", st->level_ids[l]);
    sbuf_printf(out,
                "],\"documents_rebuilt\":%llu,\"documents_deleted\":%llu,\"stale\":%llu,"
                "\"dead_letters\":%llu,\"errors\":%llu,\"pages\":%llu,\"left_in_error\":%llu,"
                "\"retried\":%llu,\"ms\":{\"claim\":%.0f,\"resolve\":%.0f,\"build\":%.0f,"
                "\"finish\":%.0f}}",
                st->docs, st->deletes, st->stale, st->dead_letters, st->errors, st->pages,
                st->left_error, st->retried, st->ms_claim, st->ms_resolve, st->ms_build,
                st->ms_finish);
}

void delayed_stats_print(const struct delayed_stats *st, FILE *out) {
    fprintf(out, "delayed run: %llu run(s), %llu snapshot(s) taken; ids per level:", st->runs,
            st->snapshots);
    size_t top = DELAYED_MAX_LEVELS;
    while (top > 0 && !st->level_ids[top]) top--;
    for (size_t l = 0; l <= top; l++) fprintf(out, " %zu:%llu", l, st->level_ids[l]);
    fprintf(out,
            "\n  %llu document(s) rebuilt, %llu deleted, %llu stale (a newer live change "
            "already there), %llu dead letter(s), %llu error(s); %llu snapshot(s) left in "
            "error, %llu to retry\n"
            "  time: claim %.0f ms, resolve %.0f ms, build %.0f ms, finish %.0f ms\n",
            st->docs, st->deletes, st->stale, st->dead_letters, st->errors, st->left_error,
            st->retried, st->ms_claim, st->ms_resolve, st->ms_build, st->ms_finish);
}

/* index_configs.id of every index config of m, in m's order */
unsigned long long *delayed_index_ids(MYSQL *meta, const char *mapping, const struct mapping *m,
                                     char *err, size_t errlen) {
    unsigned long long *ids = xcalloc(m->nindices ? m->nindices : 1, sizeof *ids);
    sbuf q = SBUF_INIT;
    sbuf_adds(&q, "SELECT id, alias FROM index_configs WHERE source = ");
    db_quote(meta, &q, mapping, strlen(mapping));
    MYSQL_RES *res = db_query(meta, q.data, q.len, err, errlen);
    sbuf_free(&q);
    if (!res) return free(ids), NULL;
    MYSQL_ROW row;
    while ((row = mysql_fetch_row(res)))
        for (size_t i = 0; i < m->nindices; i++)
            if (!strcmp(m->indices[i].alias, row[1])) ids[i] = strtoull(row[0], NULL, 10);
    mysql_free_result(res);
    return ids;
}
