/* daemon_source: the node's side of a source (sync/sources/source.h) — the
 * struct source_env the daemon hands to whichever source it reads, and the
 * callbacks behind it: between change sets the supervisor's commands are
 * applied (a mapping generation adopted, the build table followed), and the
 * reader waits there while its lock cannot be confirmed; what a
 * source reads that the supervisor must act on (a DDL, a table emptied, a
 * query of the mapping refused) goes into the command queue. Reader thread;
 * the command queue under its lock. */
#include <stdio.h>
#include <string.h>

#include "sync/node/daemon.h"
#include "sync/pipeline/ddl_truncate.h"
#include "sync/reindex/reindex.h"
#include "log.h"
#include "monotime.h"

/* While the reader lock cannot be confirmed (sync/node/leadership.h), the
 * reader reads nothing more: it waits here, at a transaction boundary,
 * until the lock is confirmed again, or lost, or a stop is asked. */
static void wait_for_the_lock(struct daemon *dm) {
    while (leadership_holds_reads(&dm->lead) && !daemon_stop_requested &&
           !atomic_load(&dm->sv.lost))
        sleep_ms(100);
}

/* Between transactions (and on idle heartbeats): what the supervisor asked
 * for — a new mapping generation, the build table to follow. true when a
 * generation was adopted. */
bool daemon_between_txns(struct daemon *dm) {
    wait_for_the_lock(dm);
    pthread_mutex_lock(&dm->cmds.mu);
    struct mapping_gen *g = dm->cmds.adopt;
    struct build_table *t = dm->cmds.builds;
    dm->cmds.adopt = NULL;
    dm->cmds.builds = NULL;
    pthread_mutex_unlock(&dm->cmds.mu);
    if (g) {
        struct mapping_gen *old = dm->gen;
        /* the run-time fields the reader keeps (see struct mapping_gen) */
        for (size_t i = 0; i < g->m.nindices; i++)
            for (size_t j = 0; old && j < old->m.nindices; j++)
                if (!strcmp(g->m.indices[i].alias, old->m.indices[j].alias)) {
                    struct mp_index *nx = &g->m.indices[i];
                    if (nx->current_version < old->m.indices[j].current_version)
                        nx->current_version = old->m.indices[j].current_version;
                    if (old->m.indices[j].deliveries_stopped && !nx->deliveries_stopped)
                        log_info("run", "%s: version %u is live: live changes are written "
                                 "through the alias again", nx->alias, nx->current_version);
                }
        dm->gen = g;
        pipeline_adopt(&dm->p, &g->m, router_new(&g->m));
        log_info("run", "mapping reloaded: %zu index config(s) (generation %lu); it applies "
                 "from this transaction on", g->m.nindices, g->id);
        if (builds_mapping_changed(dm, g)) {
            build_table_free(t); /* read before those builds changed: wait for the next */
            t = NULL;
        }
        mapping_gen_unref(old);
        dm->reloads++;
    }
    if (t) builds_apply(dm, t);
    build_table_free(t);
    return g != NULL;
}

static bool env_between(void *ud) { return daemon_between_txns(ud); }

static bool env_asks(void *ud) {
    struct daemon *dm = ud;
    pthread_mutex_lock(&dm->cmds.mu);
    bool asks = dm->cmds.adopt || dm->cmds.builds || dm->cmds.ntruncated;
    pthread_mutex_unlock(&dm->cmds.mu);
    /* a reader that must wait for its lock groups no more transactions */
    return asks || leadership_holds_reads(&dm->lead);
}

static void env_schema_changed(void *ud, const char *note) {
    struct daemon *dm = ud;
    pthread_mutex_lock(&dm->cmds.mu);
    dm->cmds.schema_changed = true;
    snprintf(dm->cmds.ddl_note, sizeof dm->cmds.ddl_note, "%s", note);
    pthread_mutex_unlock(&dm->cmds.mu);
    supervisor_wake(&dm->sv);
}

static size_t env_emptied(void *ud, const char *db, const char *table, bool dropped,
                          const char *at) {
    struct daemon *dm = ud;
    size_t noted = 0;
    pthread_mutex_lock(&dm->cmds.mu);
    for (size_t i = 0; i < dm->gen->m.nindices; i++) {
        if (!ddl_index_reads(&dm->gen->m.indices[i], db, table)) continue;
        sbuf r = SBUF_INIT;
        sbuf_printf(&r, "%s TABLE %s.%s read from %s", dropped ? "DROP" : "TRUNCATE", db, table,
                    at);
        dm->cmds.truncated = xrealloc(dm->cmds.truncated,
                                      (dm->cmds.ntruncated + 1) * sizeof *dm->cmds.truncated);
        dm->cmds.truncated[dm->cmds.ntruncated++] =
            (struct emptied){xstrdup(dm->gen->m.indices[i].alias), sbuf_detach(&r), dropped, 0};
        noted++;
    }
    pthread_mutex_unlock(&dm->cmds.mu);
    return noted;
}

static unsigned long env_verdict_ask(void *ud, const char *note) {
    struct daemon *dm = ud;
    pthread_mutex_lock(&dm->cmds.mu);
    bool schema_was_changed = dm->cmds.schema_changed;
    dm->cmds.schema_changed = true;
    unsigned long asked = ++dm->cmds.verdict_asked;
    /* a DDL read before whose verdict is still owed is what the source
     * refused: its note names the statement and its position */
    if (!(schema_was_changed && !strncmp(dm->cmds.ddl_note, "after `", 7)))
        snprintf(dm->cmds.ddl_note, sizeof dm->cmds.ddl_note, "%s", note);
    pthread_mutex_unlock(&dm->cmds.mu);
    supervisor_wake(&dm->sv);
    return asked;
}

static bool env_verdict_given(void *ud, unsigned long asked) {
    struct daemon *dm = ud;
    pthread_mutex_lock(&dm->cmds.mu);
    bool answered = dm->cmds.verdict_given >= asked;
    pthread_mutex_unlock(&dm->cmds.mu);
    return answered;
}

static int env_save_start(void *ud, const char *token, uint64_t *other, char *err,
                          size_t errlen) {
    struct daemon *dm = ud;
    return offsets_save_fenced(dm->ckpt, dm->cfg->source.name, token, 0, dm->lead.fence, other,
                               err, errlen);
}

/* run --from-current: every index config rebuilt, so the versions built now
 * hold what was skipped (each page is read after the new start, and dual
 * writes cover what comes after) */
static int env_rebuild_all(void *ud) {
    struct daemon *dm = ud;
    const struct ss_config *cfg = dm->cfg;
    struct pipeline *p = &dm->p;
    const struct mapping *m = &dm->gen->m;
    for (size_t i = 0; i < m->nindices; i++) {
        unsigned v = 0;
        char err[1024];
        struct reindex_request req = {m->indices[i].alias, 0, false, "run --from-current"};
        int r = reindex_request(cfg, dm->client, p->k, p->meta, p->src, &req, &v, err, sizeof err);
        if (r == REINDEX_OK)
            log_info("run", "--from-current: %s version %u queued", m->indices[i].alias, v);
        else if (r == REINDEX_REFUSED) /* one is being built already: its pages are read later */
            log_info("run", "--from-current: %s: %s", m->indices[i].alias, err);
        else
            return errf(dm->err, sizeof dm->err, "--from-current: the reindex of %s could not "
                        "be queued: %s; nothing was skipped yet only if you run this again",
                        m->indices[i].alias, err);
    }
    return 0;
}

void daemon_source_env(struct daemon *dm) {
    struct source_env *env = &dm->env;
    env->cfg = dm->cfg;
    env->p = &dm->p;
    env->cs = &dm->cs;
    env->gen = &dm->gen;
    env->dls = dm->dls;
    env->rs = &dm->rs;
    env->stop = &daemon_stop_requested;
    env->err = dm->err;
    env->errlen = sizeof dm->err;
    env->ud = dm;
    env->between = env_between;
    env->asks = env_asks;
    env->schema_changed = env_schema_changed;
    env->emptied = env_emptied;
    env->verdict_ask = env_verdict_ask;
    env->verdict_given = env_verdict_given;
    env->save_start = env_save_start;
    env->rebuild_all = env_rebuild_all;
}
