/* child_copies: parent/child documents left under a routing no longer
 * written.
 *
 * Children live on their root's shard. When a row of a parent/child index's
 * document table goes, or changes its key or parent column, a copy of a
 * child (or of one below it) can remain under its old routing. Such rows are
 * noticed as they are read (copies_watch_row); the children built at the
 * commit are noted (copies_note), and copies_fix deletes every copy the
 * engine has of those ids that is not the one last written. Transactions
 * that only update in place pay nothing.
 *
 * A lookup waits for every earlier write and refreshes the index: far
 * dearer than the transaction's own writes (a refresh of a busy index takes
 * around a tenth of a second). So while the reader is behind (the producer
 * says the next transaction is already there: copies_may_wait), the ids of
 * several builds are looked up together, once a COPIES_WAIT_MS or
 * COPIES_WAIT_IDS ids, or when the reader catches up. Meanwhile the
 * checkpoint stays where the first build put off began (copies_hold), so a
 * stop or a crash reads those builds again and their lookups are not lost;
 * each list keeps the last note of an id (a later build's write or delete
 * of it wins), and the deletes carry the version of the last build noted.
 *
 * Invariant upheld here:
 *   No extra document: a child whose row went, or that moved to another
 *      root, leaves no copy under its old routing. The delete of an old copy
 *      carries the transaction's version and goes by the same index name and
 *      target as the child's new write, so delivery queues it behind that
 *      write (one queue per physical target): where
 *      old and new routing land on one shard (one document there), the
 *      delete arrives second and loses to the write (not newer), instead of
 *      leaving a tombstone that refuses it (the lost reply-478/review-443).
 *   Nothing lost to a put-off lookup: no delivery transaction ends past
 *      the position before the first build whose lookup waits.
 *   An engine outage while the copies are looked for is waited out (said
 *   once when it starts and once when it ends), never a reason to exit. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "monotime.h"
#include "sync/pipeline/pipeline.h"
#include "json_exact.h"
#include "jsonw.h"
#include "log.h"
#include "sync/mapping/row_filter.h"
#include "strset.h"

/* a lookup put off waits at most this long, for at most this many ids */
#define COPIES_WAIT_MS 1000
#define COPIES_WAIT_IDS 2000

/* Can this row leave a child document copy under a routing we no longer
 * write (see copies_fix)? Only when a row of a parent/child index's document
 * table goes, or changes its key or parent column, or a column its `where`
 * reads: a child (or one below it) then moves, loses its id or its parent
 * chain. Other updates in place keep every routing, so such transactions
 * skip the copy lookup. */
void copies_watch_row(struct pipeline *p, struct changeset *cs, const bl_row *row) {
    for (size_t i = 0; i < p->m->nindices && !cs->copies_may_move; i++) {
        const struct mp_index *ix = &p->m->indices[i];
        if (!mp_index_has_children(ix)) continue;
        for (size_t t = 0; t < ix->ntables; t++) {
            const struct mp_table *tb = &ix->tables[t];
            if ((t > 0 && !tb->parent_table) || strcmp(tb->db, row->table->db) ||
                strcmp(tb->table, row->table->name))
                continue;
            if (!row->after || !row->before) { /* a delete (an insert moves nothing) */
                cs->copies_may_move = !row->after;
                continue;
            }
            const char *watch[2] = {mp_table_key(tb) ? mp_table_key(tb)->name : NULL,
                                    tb->parent_column};
            /* moved out of its where: the children below it go. A root's
             * are deleted where its id routes them (docbuild_gone_fn); a
             * child's own, or a parent's below the root, leave them absent
             * with no routing known: their copies are looked for */
            if (tb->where && t > 0) {
                struct image b = {p, row->table, row->before}, a = {p, row->table, row->after};
                if (row_filter_moved(tb->filter, image_value, &b, &a)) {
                    cs->copies_may_move = true;
                    continue;
                }
            }
            for (int w = 0; w < 2 && !cs->copies_may_move; w++) {
                if (!watch[w]) continue;
                struct image b = {p, row->table, row->before}, a = {p, row->table, row->after};
                size_t l1 = 0, l2 = 0;
                bool x1 = false, x2 = false;
                const char *v1 = image_value(&b, watch[w], &l1, &x1);
                char *c1 = v1 ? xstrndup(v1, l1) : NULL; /* image_value reuses its buffer */
                const char *v2 = image_value(&a, watch[w], &l2, &x2);
                cs->copies_may_move = x1 || x2 || (!c1) != (!v2) ||
                                      (c1 && (l1 != l2 || memcmp(c1, v2, l1)));
                free(c1);
            }
        }
    }
}

void copies_note(struct copy_list *l, const char *id, const char *routing, bool absent) {
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 64;
        l->v = xrealloc(l->v, l->cap * sizeof *l->v);
    }
    l->v[l->n++] = (struct child_copy){xstrdup(id), routing ? xstrdup(routing) : NULL, absent};
}

void copies_free(struct copy_list *l) {
    for (size_t i = 0; i < l->n; i++) free(l->v[i].id), free(l->v[i].routing);
    l->n = 0;
    l->moved = false;
    l->since_ms = 0;
}

struct copy_list *copies_list(struct pipeline *p, size_t index) {
    const char *alias = p->m->indices[index].alias;
    for (size_t i = 0; i < p->ncopies; i++)
        if (p->copies[i].index == index && !strcmp(p->copies[i].alias, alias))
            return &p->copies[i];
    p->copies = xrealloc(p->copies, (p->ncopies + 1) * sizeof *p->copies);
    struct copy_list *l = &p->copies[p->ncopies++];
    *l = (struct copy_list){.alias = xstrdup(alias), .index = index};
    return l;
}

void copies_clear(struct pipeline *p) {
    for (size_t i = 0; i < p->ncopies; i++) {
        copies_free(&p->copies[i]);
        free(p->copies[i].v);
        free(p->copies[i].alias);
    }
    free(p->copies);
    p->copies = NULL, p->ncopies = 0;
    free(p->copies_hold);
    p->copies_hold = NULL;
    p->copies_put_off = false;
}

/* The last note of each id kept, in l (a later build's write or delete of
 * an id is what the engine must be left with). */
static void keep_last_notes(struct copy_list *l) {
    struct strset seen = {0};
    size_t k = l->n;
    for (size_t i = l->n; i-- > 0;) {
        struct child_copy c = l->v[i];
        if (strset_add(&seen, c.id, strlen(c.id))) {
            l->v[--k] = c;
        } else {
            free(c.id);
            free(c.routing);
        }
    }
    memmove(l->v, l->v + k, (l->n - k) * sizeof *l->v);
    l->n -= k;
    strset_clear(&seen);
}

/* Parent/child documents live on their root's shard (routing). A child whose
 * row is gone, or whose parent changed, may have a copy under a routing we no
 * longer know: ask the engine where copies of these ids are and delete every
 * copy that is not the one just written. Earlier transactions are delivered
 * and the index refreshed first, so no copy is missed because it was still
 * queued. Only transactions touching parent/child tables pay for this. */
/* Earlier transactions delivered, waited out like every engine outage:
 * said once when it starts and once when it ends; only a stop ends it. */
static int wait_delivered(struct pipeline *p, const char *alias) {
    if (!p->last_txn) return 0;
    int waits = 0;
    while (deliver_wait_txn(p->d, p->last_txn, 5000) != DELIVER_OK) {
        pipeline_waits(p, "delivery catching up before a child copy check (the engine slow "
                          "or down)");
        if (p->stop && *p->stop) {
            pipeline_waits(p, NULL);
            return errf(p->err, sizeof p->err, "stopping before the child document copies of "
                        "%s were checked (the transaction is read again at the next start)",
                        alias);
        }
        if (waits++ == 0)
            log_warn("run", "%s: waiting for delivery to catch up before looking for child "
                     "document copies (the engine is slow or down; nothing is lost)", alias);
    }
    if (waits) log_info("run", "%s: delivery caught up; looking for child document copies",
                        alias);
    pipeline_waits(p, NULL);
    return 0;
}

/* One engine call of the copy check. Transport errors, 429 and 5xx are
 * tried again with backoff until they pass or the daemon stops (said once
 * when it starts and once when it ends). 0 an answer is in r, -1 p->err. */
static int engine_call(struct pipeline *p, const char *what, const char *path,
                       const char *body, size_t len, struct search_resp *r) {
    long delay = 200;
    for (int tries = 0;; tries++) {
        int rc = search_request(p->k, "POST", path, NULL, body, len, r);
        if (rc == SEARCH_OK && r->status != 429 && r->status < 500) {
            if (tries) log_info("run", "the engine answers again: %s goes on", what);
            pipeline_waits(p, NULL);
            return 0;
        }
        pipeline_waits(p, "the engine, for a child copy check (it does not answer)");
        if (p->stop && *p->stop) {
            pipeline_waits(p, NULL);
            return errf(p->err, sizeof p->err, "stopping while %s waited for the engine "
                        "(the transaction is read again at the next start)", what);
        }
        if (tries == 0) {
            if (rc != SEARCH_OK)
                log_warn("run", "%s: the engine does not answer (%s); waiting for it (nothing "
                         "is lost)", what, r->err);
            else
                log_warn("run", "%s: the engine answers HTTP %ld; waiting for it (nothing is "
                         "lost)", what, r->status);
        }
        sleep_ms(delay);
        delay = delay * 2 > 5000 ? 5000 : delay * 2;
    }
}

static int copies_fix(struct pipeline *p, const struct mp_index *ix, struct copy_list *l) {
    if (!l->n) {
        copies_free(l);
        return 0;
    }
    if (wait_delivered(p, ix->alias) < 0) return -1;
    keep_last_notes(l);
    p->copy_lookups++;
    struct search_resp r;
    search_resp_init(&r);
    sbuf path = SBUF_INIT, body = SBUF_INIT;
    int rc = 0;
    /* where copies can be: the live version and a version being built */
    sbuf where = SBUF_INIT;
    const struct build *bld = targets_build_of(p, ix->alias);
    if (ix->current_version > 0) sbuf_adds(&where, ix->alias);
    if (bld) sbuf_printf(&where, "%s%s", where.len ? "," : "", bld->phys);
    if (!where.len) {
        sbuf_free(&where);
        copies_free(l);
        return 0;
    }
    sbuf_printf(&path, "/%s/_refresh", where.data);
    rc = engine_call(p, "refreshing before the child copy check", path.data, NULL, 0, &r);
    for (size_t at = 0; rc == 0 && at < l->n; at += 500) {
        size_t n = l->n - at < 500 ? l->n - at : 500;
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
        for (size_t i = at; i < at + n; i++) jw_str(&w, l->v[i].id);
        jw_arr_close(&w);
        jw_obj_close(&w);
        jw_obj_close(&w);
        jw_obj_close(&w);
        sbuf_reset(&path);
        sbuf_printf(&path, "/%s/_search", where.data);
        if (engine_call(p, "looking up child document copies", path.data, body.data, body.len,
                        &r) != 0) {
            rc = -1;
            break;
        }
        if (r.status != 200) {
            rc = errf(p->err, sizeof p->err,
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
                struct child_copy *c = &l->v[i];
                if (strcmp(c->id, id) != 0) continue;
                bool same = routing && c->routing && !strcmp(routing, c->routing);
                if (!c->absent && same) break; /* the copy just written */
                /* Sent by the name its writes go by (the alias, a build's
                 * index), in the index config's queue (targets_queue), so
                 * that delivery queues it behind this transaction's write of
                 * the id: an old routing can hash to the new copy's shard,
                 * where both are one document, and a delete reaching it
                 * first leaves a tombstone of this version that refuses
                 * the write (409, taken as stale): the document is lost. */
                bool to_build = bld && !strcmp(in, bld->phys);
                if (!to_build && ix->deliveries_stopped) break; /* stopped: nothing through the alias */
                struct change del = {.index = to_build ? bld->phys : ix->alias, .doc_id = id,
                                     .routing = routing, .version = l->version,
                                     .op = CHANGE_DELETE, .require_alias = !to_build,
                                     .target = targets_queue(ix->alias)};
                p->deletes++;
                if (deliver_submit(p->d, &del) != DELIVER_OK) rc = -1;
                break;
            }
        }
        cJSON_Delete(j);
    }
    sbuf_free(&path);
    sbuf_free(&body);
    sbuf_free(&where);
    search_resp_free(&r);
    if (rc == 0) copies_free(l);
    return rc;
}

/* The index config a list was noted for, in the mapping in force now (a
 * new generation may have come between its builds and its lookup); NULL:
 * it left the mapping, its copies are no longer this pipeline's. */
static const struct mp_index *list_index(const struct pipeline *p, const struct copy_list *l) {
    if (l->index < p->m->nindices && !strcmp(p->m->indices[l->index].alias, l->alias))
        return &p->m->indices[l->index];
    for (size_t i = 0; i < p->m->nindices; i++)
        if (!strcmp(p->m->indices[i].alias, l->alias)) return &p->m->indices[i];
    return NULL;
}

static int look_up(struct pipeline *p, struct copy_list *l) {
    const struct mp_index *ix = list_index(p, l);
    if (!ix) {
        copies_free(l);
        return 0;
    }
    return copies_fix(p, ix, l);
}

int copies_settle(struct pipeline *p) {
    bool may_wait = p->copies_may_wait && p->last_pos;
    p->copies_may_wait = false;
    bool kept = false;
    int rc = 0;
    int64_t now = mono_ms();
    for (size_t i = 0; i < p->ncopies && rc == 0; i++) {
        struct copy_list *l = &p->copies[i];
        if (!l->moved) {
            copies_free(l); /* rows only updated in place: every routing kept */
            continue;
        }
        if (!l->since_ms) l->since_ms = now;
        if (may_wait && l->n < COPIES_WAIT_IDS && now - l->since_ms < COPIES_WAIT_MS)
            kept = true;
        else
            rc = look_up(p, l);
    }
    if (rc == 0 && kept) {
        p->copy_waits++;
        if (!p->copies_hold) p->copies_hold = xstrdup(p->last_pos);
        p->copies_put_off = true;
    } else if (rc == 0) {
        free(p->copies_hold);
        p->copies_hold = NULL;
    }
    return rc;
}

int copies_release(struct pipeline *p) {
    for (size_t i = 0; i < p->ncopies; i++)
        if (p->copies[i].moved && look_up(p, &p->copies[i]) < 0) return -1;
    free(p->copies_hold);
    p->copies_hold = NULL;
    return 0;
}
