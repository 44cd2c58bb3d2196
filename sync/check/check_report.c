/* check_report: a consistency check's result told — as one JSON object (the
 * --json output, the API's report) and as a row of check_runs with a line of
 * the sync_log (see check.h). */
#include <stdio.h>
#include <string.h>

#include "sync/check/check.h"
#include "exit_codes.h"
#include "jsonw.h"

void check_result_json(const char *alias, const struct check_opts *o,
                       const struct check_result *r, size_t max_ids, sbuf *out) {
    jsonw w;
    jw_init(&w, out);
    jw_obj_open(&w);
    jw_key(&w, "index"), jw_str(&w, alias);
    jw_key(&w, "window_s"), jw_int(&w, o->since_s);
    jw_key(&w, "deep"), jw_bool(&w, o->deep);
    jw_key(&w, "clean"), jw_bool(&w, r->nitems == 0);
    jw_key(&w, "rows"), jw_int(&w, (long long)r->rows);
    jw_key(&w, "engine_documents"), jw_int(&w, (long long)r->engine_docs);
    jw_key(&w, "buckets"), jw_int(&w, (long long)r->buckets);
    jw_key(&w, "buckets_differed"), jw_int(&w, (long long)r->buckets_differed);
    jw_key(&w, "ids_listed"), jw_int(&w, (long long)r->ids_listed);
    jw_key(&w, "documents_fetched"), jw_int(&w, (long long)r->docs_fetched);
    jw_key(&w, "versions_listed"), jw_int(&w, (long long)r->versions_listed);
    jw_key(&w, "rewritten"), jw_int(&w, (long long)r->rewritten);
    jw_key(&w, "unhashed"), jw_int(&w, (long long)r->unhashed);
    jw_key(&w, "rounds"), jw_int(&w, (long long)r->rounds);
    jw_key(&w, "unsettled"), jw_int(&w, (long long)r->unsettled);
    jw_key(&w, "settled"), jw_bool(&w, r->settled);
    if (r->settle_note[0]) jw_key(&w, "settle_note"), jw_str(&w, r->settle_note);
    if (r->window_note[0]) jw_key(&w, "window_note"), jw_str(&w, r->window_note);
    jw_key(&w, "seconds"), jw_double(&w, r->seconds);
    static const char *const kinds[] = {"missing", "extra", "different", "duplicate"};
    static const enum check_kind kv[] = {CK_MISSING, CK_EXTRA, CK_DIFFERENT, CK_DUPLICATE};
    for (size_t k = 0; k < 4; k++) {
        jw_key(&w, kinds[k]);
        jw_arr_open(&w);
        size_t listed = 0;
        for (size_t i = 0; i < r->nitems; i++) {
            if (r->items[i].kind != kv[k] || listed++ >= max_ids) continue;
            if (kv[k] == CK_DIFFERENT) {
                jw_obj_open(&w);
                jw_key(&w, "id"), jw_str(&w, r->items[i].id);
                jw_key(&w, "path"), jw_str(&w, r->items[i].path ? r->items[i].path : "");
                jw_obj_close(&w);
            } else {
                jw_str(&w, r->items[i].id);
            }
        }
        jw_arr_close(&w);
    }
    jw_key(&w, "repair");
    if (o->repair) {
        jw_obj_open(&w);
        jw_key(&w, "done"), jw_bool(&w, r->repaired);
        jw_key(&w, "rebuilt"), jw_int(&w, (long long)r->repaired_docs);
        jw_key(&w, "deleted"), jw_int(&w, (long long)r->repaired_deletes);
        jw_key(&w, "dead_letters"), jw_int(&w, (long long)r->dead_letters);
        jw_key(&w, "forced"), jw_int(&w, (long long)r->repair_forced);
        jw_key(&w, "left");
        jw_arr_open(&w);
        for (size_t i = 0; i < r->nrepair_left && i < max_ids; i++) jw_str(&w, r->repair_left[i]);
        jw_arr_close(&w);
        jw_obj_close(&w);
    } else {
        jw_null(&w);
    }
    jw_obj_close(&w);
}


int check_record(MYSQL *meta, const char *source, const char *mapping,
                 const struct check_opts *o,
                 const struct check_result *r, int rc, const char *error, char *err,
                 size_t errlen) {
    size_t n[5] = {0};
    for (size_t i = 0; i < r->nitems; i++) n[r->items[i].kind]++;
    const char *status = rc == EXIT_OK ? (r->nitems ? "repaired" : "clean")
                         : rc == EXIT_FOUND ? "differences" : "failed";
    sbuf details = SBUF_INIT, q = SBUF_INIT;
    if (rc == EXIT_OK || rc == EXIT_FOUND) check_result_json(o->alias, o, r, 1000, &details);
    sbuf_adds(&q, "INSERT INTO check_runs (source, index_alias, window_s, trigger_kind, node, "
                  "status, started_at, finished_at, rows_built, documents, missing, extra, "
                  "different, duplicate, documents_fetched, repaired_documents, repaired_deletes, "
                  "details, error) VALUES (");
    db_quote(meta, &q, source, strlen(source));
    sbuf_addc(&q, ',');
    db_quote(meta, &q, o->alias, strlen(o->alias));
    sbuf_printf(&q, ",%ld,", o->since_s > 0 ? o->since_s : 0);
    const char *trig = o->trigger ? o->trigger : "command";
    db_quote(meta, &q, trig, strlen(trig));
    sbuf_addc(&q, ',');
    if (o->node) db_quote(meta, &q, o->node, strlen(o->node));
    else sbuf_adds(&q, "NULL");
    sbuf_printf(&q, ",'%s', NOW(3) - INTERVAL %.3f SECOND, NOW(3), %llu, %llu, %zu, %zu, %zu, %zu, "
                    "%llu, %llu, %llu, ",
                status, r->seconds, r->rows, r->engine_docs, n[CK_MISSING], n[CK_EXTRA],
                n[CK_DIFFERENT], n[CK_DUPLICATE], r->docs_fetched, r->repaired_docs,
                r->repaired_deletes);
    if (details.len) db_quote(meta, &q, details.data, details.len);
    else sbuf_adds(&q, "NULL");
    sbuf_addc(&q, ',');
    if (error && *error) db_quote(meta, &q, error, strlen(error));
    else sbuf_adds(&q, "NULL");
    sbuf_addc(&q, ')');
    int x = db_exec(meta, q.data, err, errlen);
    if (x == 0) { /* and a line of the sync log, as other runs leave */
        sbuf_reset(&q);
        sbuf d = SBUF_INIT;
        sbuf_printf(&d, "%s %s: %s; %zu missing, %zu extra, %zu different, %zu duplicate; "
                        "%llu rebuilt, %llu deleted", trig, o->alias, status, n[CK_MISSING],
                    n[CK_EXTRA], n[CK_DIFFERENT], n[CK_DUPLICATE], r->repaired_docs,
                    r->repaired_deletes);
        sbuf_adds(&q, "INSERT INTO sync_log (source, index_id, event, detail, node) SELECT ");
        db_quote(meta, &q, source, strlen(source));
        sbuf_adds(&q, ", (SELECT id FROM index_configs WHERE source = ");
        db_quote(meta, &q, mapping, strlen(mapping));
        sbuf_adds(&q, " AND alias = ");
        db_quote(meta, &q, o->alias, strlen(o->alias));
        sbuf_adds(&q, "), 'check', ");
        db_quote(meta, &q, d.data, d.len);
        sbuf_addc(&q, ',');
        if (o->node) db_quote(meta, &q, o->node, strlen(o->node));
        else sbuf_adds(&q, "NULL");
        x = db_exec(meta, q.data, err, errlen);
        sbuf_free(&d);
    }
    sbuf_free(&q);
    sbuf_free(&details);
    return x;
}
