/* child_copies: parent/child documents left under a routing no longer
 * written.
 *
 * Children live on their root's shard. When a row of a parent/child index's
 * document table goes, or changes its key or parent column, a copy of a
 * child (or of one below it) can remain under its old routing. Such rows are
 * noticed as they are read (copies_watch_row); the children built at the
 * commit are noted (copies_note), and copies_fix deletes every copy the
 * engine has of those ids that is not the one just written. Transactions
 * that only update in place pay nothing. */
#include <stdio.h>
#include <stdlib.h>

#include "daemon.h"
#include "json_exact.h"
#include "jsonw.h"

/* Can this row leave a child document copy under a routing we no longer
 * write (see copies_fix)? Only when a row of a parent/child index's document
 * table goes, or changes its key or parent column: a child (or one below it)
 * then moves, loses its id or its parent chain. Updates in place keep every
 * routing, so such transactions skip the copy lookup. */
void copies_watch_row(struct daemon *dm, const bl_row *row) {
    for (size_t i = 0; i < dm->m.nindices && !dm->copies_may_move; i++) {
        const struct mp_index *ix = &dm->m.indices[i];
        if (!has_children(ix)) continue;
        for (size_t t = 0; t < ix->ntables; t++) {
            const struct mp_table *tb = &ix->tables[t];
            if ((t > 0 && !tb->parent_table) || strcmp(tb->db, row->table->db) ||
                strcmp(tb->table, row->table->name))
                continue;
            if (!row->after || !row->before) { /* a delete (an insert moves nothing) */
                dm->copies_may_move = !row->after;
                continue;
            }
            const char *watch[2] = {key_of(tb) ? key_of(tb)->name : NULL, tb->parent_column};
            for (int w = 0; w < 2 && !dm->copies_may_move; w++) {
                if (!watch[w]) continue;
                struct image b = {dm, row->table, row->before}, a = {dm, row->table, row->after};
                size_t l1 = 0, l2 = 0;
                bool x1 = false, x2 = false;
                const char *v1 = daemon_image_value(&b, watch[w], &l1, &x1);
                char *c1 = v1 ? xstrndup(v1, l1) : NULL; /* daemon_image_value reuses its buffer */
                const char *v2 = daemon_image_value(&a, watch[w], &l2, &x2);
                dm->copies_may_move = x1 || x2 || (!c1) != (!v2) ||
                                      (c1 && (l1 != l2 || memcmp(c1, v2, l1)));
                free(c1);
            }
        }
    }
}

void copies_note(struct daemon *dm, const char *id, const char *routing, bool absent) {
    if (dm->ncopies == dm->capcopies) {
        dm->capcopies = dm->capcopies ? dm->capcopies * 2 : 64;
        dm->copies = xrealloc(dm->copies, dm->capcopies * sizeof *dm->copies);
    }
    dm->copies[dm->ncopies++] =
        (struct copy){xstrdup(id), routing ? xstrdup(routing) : NULL, absent};
}

void copies_free(struct daemon *dm) {
    for (size_t i = 0; i < dm->ncopies; i++) free(dm->copies[i].id), free(dm->copies[i].routing);
    dm->ncopies = 0;
}

/* Parent/child documents live on their root's shard (routing). A child whose
 * row is gone, or whose parent changed, may have a copy under a routing we no
 * longer know: ask the engine where copies of these ids are and delete every
 * copy that is not the one just written. Earlier transactions are delivered
 * and the index refreshed first, so no copy is missed because it was still
 * queued. Only transactions touching parent/child tables pay for this. */
int copies_fix(struct daemon *dm, const struct mp_index *ix) {
    if (!dm->ncopies) return 0;
    if (dm->last_txn && deliver_wait_txn(dm->d, dm->last_txn, dm->cfg->delivery.drain_timeout_ms) !=
                            DELIVER_OK)
        return errf(dm->err, sizeof dm->err,
                    "delivery did not catch up within drain_timeout_ms before checking "
                    "child document copies of %s", ix->alias);
    struct search_resp r;
    search_resp_init(&r);
    sbuf path = SBUF_INIT, body = SBUF_INIT;
    int rc = 0;
    /* where copies can be: the live version and a version being built */
    sbuf where = SBUF_INIT;
    const struct build *bld = builds_find(dm, ix->alias);
    if (ix->current_version > 0) sbuf_adds(&where, ix->alias);
    if (bld) sbuf_printf(&where, "%s%s", where.len ? "," : "", bld->phys);
    if (!where.len) {
        sbuf_free(&where);
        copies_free(dm);
        return 0;
    }
    sbuf_printf(&path, "/%s/_refresh", where.data);
    if (search_request(dm->k, "POST", path.data, NULL, NULL, 0, &r) != 0)
        rc = errf(dm->err, sizeof dm->err, "engine: %s", r.err);
    for (size_t at = 0; rc == 0 && at < dm->ncopies; at += 500) {
        size_t n = dm->ncopies - at < 500 ? dm->ncopies - at : 500;
        sbuf_reset(&body);
        jsonw w;
        jw_init(&w, &body);
        jw_obj_open(&w);
        jw_key(&w, "size");
        jw_int(&w, (int64_t)(4 * n + 16));
        jw_key(&w, "_source");
        jw_bool(&w, false);
        jw_key(&w, "query");
        jw_obj_open(&w);
        jw_key(&w, "ids");
        jw_obj_open(&w);
        jw_key(&w, "values");
        jw_arr_open(&w);
        for (size_t i = at; i < at + n; i++) jw_str(&w, dm->copies[i].id);
        jw_arr_close(&w);
        jw_obj_close(&w);
        jw_obj_close(&w);
        jw_obj_close(&w);
        sbuf_reset(&path);
        sbuf_printf(&path, "/%s/_search", where.data);
        if (search_request(dm->k, "POST", path.data, NULL, body.data, body.len, &r) != 0 ||
            r.status != 200) {
            rc = errf(dm->err, sizeof dm->err,
                      "looking up child document copies in %s: HTTP %ld %.200s",
                      ix->alias, r.status, r.body.data ? r.body.data : r.err);
            break;
        }
        cJSON *j = json_exact_parse(r.body.data, r.body.len);
        cJSON *hits = cJSON_GetObjectItem(cJSON_GetObjectItem(j, "hits"), "hits");
        cJSON *h;
        cJSON_ArrayForEach(h, hits) {
            const char *id = cJSON_GetStringValue(cJSON_GetObjectItem(h, "_id"));
            const char *routing = cJSON_GetStringValue(cJSON_GetObjectItem(h, "_routing"));
            const char *in = cJSON_GetStringValue(cJSON_GetObjectItem(h, "_index"));
            if (!id || !in) continue;
            for (size_t i = at; i < at + n; i++) {
                struct copy *c = &dm->copies[i];
                if (strcmp(c->id, id) != 0) continue;
                bool same = routing && c->routing && !strcmp(routing, c->routing);
                if (!c->absent && same) break; /* the copy just written */
                /* Sent by the name its writes go by (the alias, a build's
                 * index), so that delivery queues it behind this
                 * transaction's write of the id (one queue per index name
                 * and id): an old routing can hash to the new copy's shard,
                 * where both are one document, and a delete reaching it
                 * first leaves a tombstone of this version that refuses
                 * the write (409, taken as stale): the document is lost. */
                bool to_build = bld && !strcmp(in, bld->phys);
                struct change del = {.index = to_build ? bld->phys : ix->alias, .doc_id = id,
                                     .routing = routing, .version = dm->version,
                                     .op = CHANGE_DELETE, .require_alias = !to_build};
                dm->deletes++;
                if (deliver_submit(dm->d, &del) != DELIVER_OK) rc = -1;
                break;
            }
        }
        cJSON_Delete(j);
    }
    sbuf_free(&path);
    sbuf_free(&body);
    sbuf_free(&where);
    search_resp_free(&r);
    copies_free(dm);
    return rc;
}
