/* shard_join: a joining shard's rows read into the live version (see
 * shard_join.h). */
#include "sync/node/shard_join.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "exit_codes.h"
#include "db.h"
#include "log.h"
#include "monotime.h"
#include "deliver/deliver.h"
#include "sync/mapping/mapping_shard.h"
#include "sync/pipeline/producer.h"

#define JOIN_PAGE 500
/* how long the live version keeps deletes while a shard is read into it:
 * longer than a page can take from its read snapshot to the engine */
#define JOIN_GC_DELETES "600s"

/* ---------------------------------------------------- index_configs.shards_read */

int shards_read_add(MYSQL *meta, const char *source, const char *alias, const char *label,
                    bool add, char *err, size_t errlen) {
    sbuf q = SBUF_INIT, l = SBUF_INIT;
    sbuf_printf(&l, "%s\n", label);
    if (add) {
        sbuf_adds(&q, "UPDATE index_configs SET shards_read = CONCAT(COALESCE(shards_read, ''), ");
        db_quote(meta, &q, l.data, l.len);
        sbuf_adds(&q, ") WHERE LOCATE(CONCAT('\\n', ");
        db_quote(meta, &q, l.data, l.len);
        sbuf_adds(&q, "), CONCAT('\\n', COALESCE(shards_read, ''))) = 0");
    } else {
        sbuf_adds(&q, "UPDATE index_configs SET shards_read = SUBSTRING(REPLACE(CONCAT('\\n', "
                      "shards_read), CONCAT('\\n', ");
        db_quote(meta, &q, l.data, l.len);
        sbuf_adds(&q, "), '\\n'), 2) WHERE shards_read IS NOT NULL");
    }
    sbuf_adds(&q, " AND source = ");
    db_quote(meta, &q, source, strlen(source));
    sbuf_adds(&q, " AND alias = ");
    db_quote(meta, &q, alias, strlen(alias));
    int rc = db_exec(meta, q.data, err, errlen);
    sbuf_free(&q);
    sbuf_free(&l);
    return rc;
}

void shard_label(const struct mp_index *u, sbuf *out) {
    if (u->source) sbuf_printf(out, "%s/", u->source);
    sbuf_adds(out, u->unit);
}

int shards_read_set(MYSQL *meta, const char *source, const char *alias, const struct mapping *m,
                    char *err, size_t errlen) {
    sbuf v = SBUF_INIT, q = SBUF_INIT;
    bool any = false;
    const char *own = NULL; /* several sources: the lines of this one ("east/") */
    for (size_t i = 0; i < m->nindices; i++)
        if (m->indices[i].unit && !strcmp(m->indices[i].alias, alias)) {
            shard_label(&m->indices[i], &v);
            sbuf_addc(&v, '\n');
            own = m->indices[i].source;
            any = true;
        }
    if (!any) return 0;
    int rc = 0;
    if (own) { /* the other sources' lines kept: each source records what it read */
        rc = db_exec(meta, "START TRANSACTION", err, errlen);
        sbuf_adds(&q, "SELECT shards_read FROM index_configs WHERE source = ");
        db_quote(meta, &q, source, strlen(source));
        sbuf_adds(&q, " AND alias = ");
        db_quote(meta, &q, alias, strlen(alias));
        sbuf_adds(&q, " FOR UPDATE");
        char *cur[1] = {NULL};
        if (rc == 0 && db_row1(meta, q.data, q.len, cur, 1, err, errlen) < 0) rc = -1;
        size_t pl = strlen(own);
        for (const char *p = cur[0]; rc == 0 && p && *p;) {
            const char *e = strchr(p, '\n');
            size_t n = e ? (size_t)(e - p) + 1 : strlen(p);
            if (!(n > pl && !strncmp(p, own, pl) && p[pl] == '/')) {
                sbuf_add(&v, p, n);
                if (!e) sbuf_addc(&v, '\n');
            }
            p += n;
        }
        free(cur[0]);
        sbuf_reset(&q);
    }
    sbuf_adds(&q, "UPDATE index_configs SET shards_read = ");
    db_quote(meta, &q, v.data, v.len);
    sbuf_adds(&q, " WHERE source = ");
    db_quote(meta, &q, source, strlen(source));
    sbuf_adds(&q, " AND alias = ");
    db_quote(meta, &q, alias, strlen(alias));
    if (rc == 0) rc = db_exec(meta, q.data, err, errlen);
    if (own) {
        char e2[256];
        if (db_exec(meta, rc == 0 ? "COMMIT" : "ROLLBACK", rc == 0 ? err : e2,
                    rc == 0 ? errlen : sizeof e2) < 0)
            rc = -1;
    }
    sbuf_free(&q);
    sbuf_free(&v);
    return rc;
}

/* ---------------------------------------------------------------- the queue */

void shard_joins_post(struct shard_joins *j, const char *alias, const char *unit) {
    sbuf k = SBUF_INIT;
    sbuf_printf(&k, "%s\x1f%s", alias, unit);
    pthread_mutex_lock(&j->mu);
    bool queued = false;
    for (size_t i = 0; i < j->nq && !queued; i++) queued = !strcmp(j->q[i], k.data);
    if (!queued) {
        j->q = xrealloc(j->q, (j->nq + 1) * sizeof *j->q);
        j->q[j->nq++] = sbuf_detach(&k);
        pthread_cond_signal(&j->cv);
    }
    pthread_mutex_unlock(&j->mu);
    sbuf_free(&k);
}

int shard_joins_at_start(struct shard_joins *j, MYSQL *meta, const char *source,
                         const struct mapping *m, char *err, size_t errlen) {
    bool any = false;
    for (size_t i = 0; i < m->nindices && !any; i++) any = m->indices[i].unit != NULL;
    if (!any) return 0;
    sbuf q = SBUF_INIT;
    sbuf_adds(&q, "SELECT alias, current_version, shards_read FROM index_configs WHERE source = ");
    db_quote(meta, &q, source, strlen(source)); /* (the mapping's name) */
    MYSQL_RES *r = db_query(meta, q.data, q.len, err, errlen);
    sbuf_free(&q);
    if (!r) return -1;
    MYSQL_ROW row;
    int rc = 0;
    while ((row = mysql_fetch_row(r)) && rc == 0) {
        if (!row[0] || !row[1] || !strtoul(row[1], NULL, 10)) continue; /* no live version */
        if (!row[2]) { /* none recorded: the live version was built from these */
            rc = shards_read_set(meta, source, row[0], m, err, errlen);
            continue;
        }
        for (size_t i = 0; i < m->nindices; i++) {
            const struct mp_index *u = &m->indices[i];
            if (!u->unit || strcmp(u->alias, row[0])) continue;
            sbuf l = SBUF_INIT, all = SBUF_INIT;
            sbuf_addc(&l, '\n');
            shard_label(u, &l);
            sbuf_addc(&l, '\n');
            sbuf_printf(&all, "\n%s", row[2]);
            if (!strstr(all.data, l.data)) shard_joins_post(j, u->alias, u->unit);
            sbuf_free(&l);
            sbuf_free(&all);
        }
    }
    mysql_free_result(r);
    return rc;
}

/* ---------------------------------------------------------------- a join */

/* index.gc_deletes of the live version behind alias, set to v (NULL: the
 * engine's default); *was its value before (malloc'd; NULL: the default) */
static int gc_deletes(struct search_conn *k, const char *alias, const char *v, char **was,
                      char *err, size_t errlen) {
    struct search_resp r;
    search_resp_init(&r);
    char path[700];
    int rc = 0;
    if (was) {
        *was = NULL;
        snprintf(path, sizeof path, "/%s/_settings/index.gc_deletes", alias);
        if (search_request(k, "GET", path, NULL, NULL, 0, &r) == 0 && r.status == 200) {
            cJSON *j = cJSON_ParseWithLength(r.body.data, r.body.len);
            for (cJSON *ix = j ? j->child : NULL; ix; ix = ix->next) {
                cJSON *s = cJSON_GetObjectItem(cJSON_GetObjectItem(ix, "settings"), "index");
                const char *g = cJSON_GetStringValue(cJSON_GetObjectItem(s, "gc_deletes"));
                if (g) *was = xstrdup(g);
            }
            cJSON_Delete(j);
        }
        search_resp_free(&r);
        search_resp_init(&r);
    }
    sbuf body = SBUF_INIT;
    if (v) sbuf_printf(&body, "{\"index\":{\"gc_deletes\":\"%s\"}}", v);
    else sbuf_adds(&body, "{\"index\":{\"gc_deletes\":null}}");
    snprintf(path, sizeof path, "/%s/_settings", alias);
    if (search_request(k, "PUT", path, "application/json", body.data, body.len, &r) != 0 ||
        r.status != 200)
        rc = errf(err, errlen, "setting index.gc_deletes of %s: %s", alias,
                  r.err[0] ? r.err : r.body.data ? r.body.data : "");
    search_resp_free(&r);
    sbuf_free(&body);
    return rc;
}

/* every row of document table t of unit x (position at), a page of keys at a
 * time, each page built in a read snapshot with its position's version */
static int join_table(struct shard_joins *j, struct producer *pr, size_t at, size_t t,
                      unsigned long long *docs) {
    struct pipeline *p = &pr->p;
    const struct mp_index *x = &p->m->indices[at];
    const struct mp_table *tb = &x->tables[t];
    const struct mp_column *key = mp_table_key(tb);
    if (!key) return 0;
    bool num = mapping_is_integer_type(key->mysql_type ? key->mysql_type : "");
    char *after = NULL;
    int rc = 0;
    while (rc == 0 && !atomic_load(&j->stop)) {
        bl_pos end;
        if (pipeline_snapshot_begin(p, x->alias, x->unit, &end) < 0) {
            rc = errf(pr->err, sizeof pr->err, "%s", p->err);
            break;
        }
        sbuf q = SBUF_INIT;
        db_select_from(&q, key->name, tb->db, tb->table);
        if (after) {
            sbuf_adds(&q, " WHERE ");
            db_ident(&q, key->name);
            sbuf_adds(&q, " > ");
            if (num) sbuf_adds(&q, after);
            else db_quote(p->src, &q, after, strlen(after));
        }
        sbuf_adds(&q, " ORDER BY ");
        db_ident(&q, key->name);
        sbuf_printf(&q, " LIMIT %d", JOIN_PAGE);
        MYSQL_RES *res = db_query(p->src, q.data, q.len, pr->err, sizeof pr->err);
        sbuf_free(&q);
        if (!res) {
            pipeline_snapshot_end(p);
            rc = -1;
            break;
        }
        struct changeset cs = {0};
        size_t n = 0;
        MYSQL_ROW row;
        while ((row = mysql_fetch_row(res))) {
            if (!row[0]) continue;
            changeset_add_doc(&cs, at, t, row[0], strlen(row[0]));
            free(after);
            after = xstrdup(row[0]);
            n++;
        }
        mysql_free_result(res);
        unsigned long long d0 = p->docs;
        if (n && pipeline_build(p, &cs, &end) != 0) {
            rc = errf(pr->err, sizeof pr->err, "%s", p->err);
        }
        pipeline_snapshot_end(p);
        if (n) pipeline_end(p, &cs, &end, NULL, false);
        changeset_free(&cs);
        *docs += p->docs - d0;
        if (rc == 0 && n && deliver_drain(p->d, p->cfg->delivery.drain_timeout_ms) != DELIVER_OK)
            rc = errf(pr->err, sizeof pr->err, "the engine did not take a page within "
                      "[delivery] drain_timeout_ms");
        liveness_beat(&j->live); /* a page read and delivered: progress */
        if (n < JOIN_PAGE) break;
    }
    free(after);
    return rc;
}

/* the join's producer closed, its stream no longer asked about first */
static void join_close(struct shard_joins *j, struct producer *pr) {
    pthread_mutex_lock(&j->cur_mu);
    j->d = NULL;
    j->cur[0] = '\0';
    pthread_mutex_unlock(&j->cur_mu);
    producer_close(pr);
}

static void join_one(struct shard_joins *j, const char *alias, const char *unit) {
    struct producer pr;
    struct producer_opts po = {.engine = true, .flush_interval_ms = 5, .stream = "join",
                               .hub = j->hub};
    if (producer_open(&pr, j->cfg, &po) != EXIT_OK) {
        log_warn("run", "index %s: shard %s is not read into the live version yet (%s): it is "
                 "tried again at the next start (or run `searchsync check --config FILE %s "
                 "--repair`)", alias, unit, pr.err, alias);
        producer_close(&pr);
        return;
    }
    liveness_beat(&j->live);
    pthread_mutex_lock(&j->cur_mu);
    j->d = pr.p.d;
    snprintf(j->cur, sizeof j->cur, "shard %s of index %s", unit, alias);
    pthread_mutex_unlock(&j->cur_mu);
    size_t at = 0;
    while (at < pr.m.nindices && !(pr.m.indices[at].unit && !strcmp(pr.m.indices[at].alias, alias) &&
                                   !strcmp(pr.m.indices[at].unit, unit)))
        at++;
    if (at == pr.m.nindices || !pr.m.indices[at].current_version) { /* gone, or nothing live */
        join_close(j, &pr);
        return;
    }
    char *was = NULL, err[512];
    bool raised = gc_deletes(pr.p.k, alias, JOIN_GC_DELETES, &was, err, sizeof err) == 0;
    if (!raised) log_warn("run", "index %s: %s (a page of shard %s landing after a newer delete "
                          "of its row could bring it back: `searchsync check` finds it)",
                          alias, err, unit);
    liveness_beat(&j->live);
    unsigned long long docs = 0;
    int rc = 0;
    for (size_t t = 0; t < pr.m.indices[at].ntables && rc == 0; t++)
        if (t == 0 || pr.m.indices[at].tables[t].parent_table)
            rc = join_table(j, &pr, at, t, &docs);
    if (raised && gc_deletes(pr.p.k, alias, was, NULL, err, sizeof err) < 0)
        log_warn("run", "index %s: %s: set it back by hand", alias, err);
    free(was);
    if (rc == 0 && !atomic_load(&j->stop)) {
        sbuf l = SBUF_INIT;
        shard_label(&pr.m.indices[at], &l);
        int arc = shards_read_add(pr.p.meta, config_mapping_name(j->cfg), alias, l.data, true,
                                  err, sizeof err);
        sbuf_free(&l);
        if (arc < 0)
            log_warn("run", "index %s: shard %s was read, but not recorded (%s): it is read "
                     "again at the next start", alias, unit, err);
        log_info("run", "index %s: shard %s joined: %llu document(s) built into version %u",
                 alias, unit, docs, pr.m.indices[at].current_version);
        j->joined++;
    } else if (rc != 0) {
        log_error("run", "index %s: shard %s was not read whole into the live version (%s): it "
                  "is read again at the next start (or `searchsync check --config FILE %s "
                  "--repair`)", alias, unit, pr.err, alias);
    }
    join_close(j, &pr);
}

static void *joins_main(void *arg) {
    struct shard_joins *j = arg;
    pthread_mutex_lock(&j->mu);
    while (!atomic_load(&j->stop)) {
        if (!j->nq) {
            liveness_wait(&j->live, JOINS_WAIT_IDLE); /* idle: well however long */
            pthread_cond_wait(&j->cv, &j->mu);
            continue;
        }
        liveness_wait(&j->live, NULL);
        char *k = j->q[0];
        memmove(j->q, j->q + 1, (j->nq - 1) * sizeof *j->q);
        j->nq--;
        pthread_mutex_unlock(&j->mu);
        char *sep = strchr(k, '\x1f');
        if (sep) {
            *sep = '\0';
            join_one(j, k, sep + 1);
        }
        free(k);
        pthread_mutex_lock(&j->mu);
    }
    pthread_mutex_unlock(&j->mu);
    liveness_end(&j->live, atomic_load(&j->stop) != 0);
    return NULL;
}

int shard_joins_start(struct shard_joins *j, const struct ss_config *cfg,
                      struct deliver_hub *hub) {
    memset(j, 0, sizeof *j);
    j->cfg = cfg;
    j->hub = hub;
    pthread_mutex_init(&j->mu, NULL);
    pthread_cond_init(&j->cv, NULL);
    pthread_mutex_init(&j->cur_mu, NULL);
    liveness_start(&j->live);
    if (pthread_create(&j->th, NULL, joins_main, j) != 0) {
        liveness_end(&j->live, true);
        return -1;
    }
    j->running = true;
    return 0;
}

bool shard_joins_healthy(struct shard_joins *j, int64_t bound_ms, char *why, size_t whylen) {
    if (!j->running) return true;
    char cur[sizeof j->cur];
    pthread_mutex_lock(&j->cur_mu); /* held only to set, clear and read these */
    bool room = j->d && deliver_waiting_for_space(j->d);
    snprintf(cur, sizeof cur, "%s", j->cur);
    pthread_mutex_unlock(&j->cur_mu);
    if (room) return true; /* a page's submit waits for room (the engine slow or away) */
    char w2[256];
    if (liveness_check(&j->live, "shard joins", mono_ms(), bound_ms, w2, sizeof w2)) return true;
    if (atomic_load(&j->live.ended) || !cur[0]) {
        snprintf(why, whylen, "%s", w2);
    } else {
        /* the bound, not the time: the node's state is written when it changes */
        snprintf(why, whylen, "reading %s into its live version: no page read and delivered "
                 "for more than %lld ms (stalled: a page read or its delivery that does not "
                 "end)", cur, (long long)bound_ms);
    }
    return false;
}

void shard_joins_stop(struct shard_joins *j) {
    if (!j->running) return;
    pthread_mutex_lock(&j->mu);
    atomic_store(&j->stop, 1);
    pthread_cond_signal(&j->cv);
    pthread_mutex_unlock(&j->mu);
    pthread_join(j->th, NULL);
    j->running = false;
    for (size_t i = 0; i < j->nq; i++) free(j->q[i]);
    free(j->q);
    j->q = NULL, j->nq = 0;
    pthread_mutex_destroy(&j->mu);
    pthread_cond_destroy(&j->cv);
    pthread_mutex_destroy(&j->cur_mu);
}
