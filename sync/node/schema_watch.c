/* schema_watch: does each index config's mapping still fit the source?
 *
 * The binlog reader is behind the server by at least a moment, often by
 * more. information_schema says what the server holds now, which may be
 * several schema changes past the position the reader is at. Online schema
 * change tools make that gap visible: pt-online-schema-change swaps its
 * rebuilt table in with `RENAME TABLE t TO _t_old, _t_new TO t` (one
 * statement, but information_schema can be read between its two renames);
 * gh-ost's two-step cut-over runs `RENAME TABLE t TO _t_del`, then `RENAME
 * TABLE _t_gho TO t`; both run statements that name only their shadow tables
 * (ANALYZE, triggers, the DROP of the old copy). A verdict taken from
 * whatever the server holds when a check runs stops an index for a table
 * that is away for a moment, and blames whichever statement was read last.
 *
 * So the verdict is taken at binlog positions:
 *   - which mapped tables exist is what the binlog read so far says
 *     (sw_absent: taken away by a DROP, a RENAME from it, a DROP DATABASE; put
 *     back by a CREATE, a RENAME to it). A table information_schema lacks
 *     while the binlog still has it is the server being ahead: the index
 *     config goes on (deferred) and is judged when the statement that took
 *     the table away is read. A table renamed away is waited for [source]
 *     schema_settle_ms before its index configs are stopped (a swap renames
 *     one back in); a dropped one is not;
 *   - a column that no longer fits stops the index config only after a DDL
 *     read that names one of its tables (the reason names that statement);
 *     otherwise the change is ahead of the reader: deferred;
 *   - a RENAME that puts a table under a mapped name whose columns the
 *     mapping fits is followed like an ALTER: nothing stops, nothing is
 *     rebuilt (the tools' swapped-in table holds the same rows), and rows of
 *     the renamed-in table flow as before;
 *   - a stopped index config the source fits again is rebuilt at once
 *     (index_stop_refit): its stop is lifted when that version goes live.
 * The reader never waits for any of this, except when the source refuses a
 * query of the mapping for schema_settle_ms (sync/sources/binlog_source.c):
 * then the source as it is decides (forced), since the transaction cannot be
 * built otherwise.
 *
 * A deferred index config stays in routing (mp_index.deferred: its problems
 * are not counted when a generation is validated), and is looked at again,
 * backing off from 1 s to 30 s, until it fits or is judged. */
#include "sync/node/schema_watch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "monotime.h"
#include "sbuf.h"
#include "sync/node/index_stop.h"
#include "sync/node/supervisor.h"
#include "sync/mapping/mapping_shard.h"

struct sw_absent {
    char db[65], table[65];
    char *note;        /* the statement that took it away */
    long long since_ms;
    bool renamed;      /* renamed away (or missing at start): waited for schema_settle_ms */
};
struct sw_named {
    char *alias, *note; /* the last DDL read that names its tables */
};
struct sw_deferred {
    char *alias, *why;
};

void ddl_read_free(struct ddl_read *d) {
    if (!d) return;
    ddl_stmt_free(&d->stmt);
    for (size_t i = 0; i < d->naliases; i++) free(d->aliases[i]);
    free(d->aliases);
    d->aliases = NULL;
    d->naliases = 0;
}

static struct sw_absent *absent_find(struct schema_watch *w, const char *db, const char *table) {
    for (size_t i = 0; i < w->nabsent; i++)
        if (!strcmp(w->absent[i].db, db) && !strcmp(w->absent[i].table, table))
            return &w->absent[i];
    return NULL;
}

static struct sw_absent *absent_add(struct schema_watch *w, const char *db, const char *table,
                                    const char *note, long long now, bool renamed) {
    struct sw_absent *a = absent_find(w, db, table);
    if (a) return a; /* away since the first statement that took it */
    w->absent = xrealloc(w->absent, (w->nabsent + 1) * sizeof *w->absent);
    a = &w->absent[w->nabsent++];
    snprintf(a->db, sizeof a->db, "%s", db);
    snprintf(a->table, sizeof a->table, "%s", table);
    a->note = xstrdup(note);
    a->since_ms = now;
    a->renamed = renamed;
    return a;
}

static void absent_remove(struct schema_watch *w, size_t i) {
    free(w->absent[i].note);
    w->absent[i] = w->absent[--w->nabsent];
}

static void absent_clear(struct schema_watch *w, const char *db, const char *table) {
    for (size_t i = 0; i < w->nabsent; i++)
        if (!strcmp(w->absent[i].db, db) && !strcmp(w->absent[i].table, table)) {
            absent_remove(w, i);
            return;
        }
}

static bool mapping_reads(const struct mapping *m, const char *db, const char *table) {
    for (size_t i = 0; i < m->nindices; i++)
        if (ddl_index_reads(&m->indices[i], db, table)) return true;
    return false;
}

/* every table (db, name) an index config reads, at any depth */
typedef void (*table_fn)(void *ctx, const char *db, const char *table);
static void rel_tables(const struct mp_relation *r, size_t n, table_fn fn, void *ctx) {
    for (size_t i = 0; i < n; i++) {
        fn(ctx, r[i].db, r[i].table);
        rel_tables(r[i].relations, r[i].nrelations, fn, ctx);
    }
}
static void index_tables(const struct mp_index *ix, table_fn fn, void *ctx) {
    for (size_t t = 0; t < ix->ntables; t++) {
        const struct mp_table *tb = &ix->tables[t];
        if (t == 0 || tb->parent_table) fn(ctx, tb->db, tb->table);
        rel_tables(tb->relations, tb->nrelations, fn, ctx);
    }
}

struct db_drop {
    struct schema_watch *w;
    const char *db, *note;
    long long now;
};
static void drop_in_db(void *ctx, const char *db, const char *table) {
    struct db_drop *d = ctx;
    if (!strcmp(db, d->db)) absent_add(d->w, db, table, d->note, d->now, false);
}

static void named_set(struct schema_watch *w, const char *alias, const char *note) {
    for (size_t i = 0; i < w->nnamed; i++)
        if (!strcmp(w->named[i].alias, alias)) {
            free(w->named[i].note);
            w->named[i].note = xstrdup(note);
            return;
        }
    w->named = xrealloc(w->named, (w->nnamed + 1) * sizeof *w->named);
    w->named[w->nnamed++] = (struct sw_named){xstrdup(alias), xstrdup(note)};
}

static const char *named_note(const struct schema_watch *w, const char *alias) {
    for (size_t i = 0; i < w->nnamed; i++)
        if (!strcmp(w->named[i].alias, alias)) return w->named[i].note;
    return NULL;
}

/* db.table, dropped, is the root table of a shard's unit of m: that shard is
 * gone (its documents were deleted by the reader at the DROP) */
static void gone_root(struct schema_watch *w, const struct mapping *m, const char *db,
                      const char *table) {
    for (size_t i = 0; i < m->nindices; i++) {
        const struct mp_index *u = &m->indices[i];
        if (!u->unit || strcmp(u->tables[0].db, db) || strcmp(u->tables[0].table, table)) continue;
        bool known = false;
        for (size_t g = 0; g < w->ngone && !known; g++) known = !strcmp(w->gone[g], u->unit);
        if (known) return;
        w->gone = xrealloc(w->gone, (w->ngone + 1) * sizeof *w->gone);
        w->gone[w->ngone++] = xstrdup(u->unit);
        return;
    }
}

/* was the statement's last taking away of db.table a RENAME from it (not a
 * DROP)? */
static bool renamed_away(const struct ddl_stmt *s, const char *db, const char *table) {
    bool renamed = false;
    for (size_t i = 0; i < s->n; i++)
        if (!strcmp(s->t[i].db, db) && !strcmp(s->t[i].table, table) &&
            (s->t[i].effect == DDL_RENAMED_FROM || s->t[i].effect == DDL_DROPPED))
            renamed = s->t[i].effect == DDL_RENAMED_FROM;
    return renamed;
}

void schema_watch_ddl(struct schema_watch *w, const struct mapping *m, const struct ddl_read *d) {
    long long now = mono_ms();
    for (size_t i = 0; i < d->stmt.n; i++) {
        const struct ddl_target *t = &d->stmt.t[i];
        if (t->effect == DDL_DB_DROPPED) {
            struct db_drop dd = {w, t->db, d->note, now};
            for (size_t x = 0; x < m->nindices; x++) {
                index_tables(&m->indices[x], drop_in_db, &dd);
                if (m->indices[x].unit && !strcmp(m->indices[x].tables[0].db, t->db))
                    gone_root(w, m, t->db, m->indices[x].tables[0].table);
            }
        } else if (ddl_takes_away(&d->stmt, t->db, t->table)) {
            bool renamed = renamed_away(&d->stmt, t->db, t->table);
            if (mapping_reads(m, t->db, t->table))
                absent_add(w, t->db, t->table, d->note, now, renamed);
            if (!renamed) gone_root(w, m, t->db, t->table); /* a shard dropped: gone */
        } else if (ddl_puts_back(&d->stmt, t->db, t->table)) {
            absent_clear(w, t->db, t->table);
            sbuf label = SBUF_INIT; /* a shard of that name is a new one */
            sbuf_printf(&label, "%s.%s", t->db, t->table);
            for (size_t g = 0; g < w->ngone; g++)
                if (!strcmp(w->gone[g], label.data)) {
                    free(w->gone[g]);
                    w->gone[g] = w->gone[--w->ngone];
                    break;
                }
            sbuf_free(&label);
        }
    }
    for (size_t i = 0; i < d->naliases; i++) named_set(w, d->aliases[i], d->note);
}

bool schema_watch_due(const struct schema_watch *w, long long now_ms) {
    return w->nnamed > 0 || (w->due_ms && now_ms >= w->due_ms);
}

bool schema_watch_deferred(const struct schema_watch *w, const char *alias) {
    for (size_t i = 0; i < w->ndeferred; i++)
        if (!strcmp(w->deferred[i].alias, alias)) return true;
    return false;
}

static const char *deferred_why(const struct schema_watch *w, const char *alias) {
    for (size_t i = 0; i < w->ndeferred; i++)
        if (!strcmp(w->deferred[i].alias, alias)) return w->deferred[i].why;
    return NULL;
}

/* ---------- refits: stopped, fitting again, rebuilt once per stop ---------- */

static bool refit_asked(const struct schema_watch *w, const char *key) {
    for (size_t i = 0; i < w->nrefit; i++)
        if (!strcmp(w->refit[i], key)) return true;
    return false;
}

/* ix's mapping against the source: true when it does not fit, errs saying
 * why on one line */
static bool unfit(struct mapping *m, size_t i, const struct mp_schema *schema, sbuf *errs) {
    if (mapping_validate_index(m, i, schema, errs) == 0) return false;
    while (errs->len && errs->data[errs->len - 1] == '\n') errs->data[--errs->len] = '\0';
    for (char *nl = strchr(errs->data, '\n'); nl; nl = strchr(nl, '\n')) *nl = ';';
    return true;
}

/* the tables of ix the schema lacks, each against what the binlog says */
struct missing {
    struct schema_watch *w;
    const struct mp_schema *schema;
    bool at_start, ahead;
    long long now, until; /* a renamed-away table is waited for until then */
    struct sw_absent *first;
};
static void look_missing(void *ctx, const char *db, const char *table) {
    struct missing *ms = ctx;
    if (mp_schema_find(ms->schema, db, table, NULL)) return;
    struct sw_absent *a = absent_find(ms->w, db, table);
    if (!a && ms->at_start) a = absent_add(ms->w, db, table, "at start", ms->now, true);
    if (!a) {
        ms->ahead = true;
        return;
    }
    if (!ms->first) ms->first = a;
    if (a->renamed && a->since_ms > ms->until) ms->until = a->since_ms;
}

static void defer(struct sw_deferred **v, size_t *n, const char *alias, const char *why) {
    *v = xrealloc(*v, (*n + 1) * sizeof **v);
    (*v)[(*n)++] = (struct sw_deferred){xstrdup(alias), xstrdup(why)};
}

static bool in_list(char *const *v, size_t n, const char *s) {
    for (size_t i = 0; i < n; i++)
        if (!strcmp(v[i], s)) return true;
    return false;
}

/* shard ix->unit is gone: no longer kept; its documents deleted by the
 * reader (at once when a DROP read did it: deleted there already) */
static void shard_is_gone(struct supervisor *sv, const struct mp_index *ix, bool dropped) {
    struct schema_watch *w = &sv->watch;
    if (in_list(w->gone, w->ngone, ix->unit)) return;
    w->gone = xrealloc(w->gone, (w->ngone + 1) * sizeof *w->gone);
    w->gone[w->ngone++] = xstrdup(ix->unit);
    log_warn("run", "index %s: shard %s is gone (its root table %s): it is no longer read%s",
             ix->alias, ix->unit, dropped ? "dropped" : "away for longer than [source] "
             "schema_settle_ms", dropped ? "" : ", and its documents are deleted");
    if (dropped) return;
    sbuf k = SBUF_INIT;
    sbuf_printf(&k, "%s\x1f%s", ix->alias, ix->unit);
    pthread_mutex_lock(&sv->cmds->mu);
    sv->cmds->shards_gone = xrealloc(sv->cmds->shards_gone,
                                     (sv->cmds->nshards_gone + 1) * sizeof(char *));
    sv->cmds->shards_gone[sv->cmds->nshards_gone++] = sbuf_detach(&k);
    pthread_mutex_unlock(&sv->cmds->mu);
}

void schema_watch_keep(const struct schema_watch *w, const struct mapping *m, char ***keep,
                       size_t *nkeep) {
    for (size_t i = 0; i < m->nindices; i++) {
        const struct mp_index *u = &m->indices[i];
        if (!u->unit || in_list(w->gone, w->ngone, u->unit) || in_list(*keep, *nkeep, u->unit))
            continue;
        bool dropped = false; /* a DROP read: gone, whatever else */
        for (size_t a = 0; a < w->nabsent && !dropped; a++)
            dropped = !w->absent[a].renamed && !strcmp(w->absent[a].db, u->tables[0].db) &&
                      !strcmp(w->absent[a].table, u->tables[0].table);
        if (dropped) continue;
        *keep = xrealloc(*keep, (*nkeep + 1) * sizeof **keep);
        (*keep)[(*nkeep)++] = xstrdup(u->unit);
    }
}

/* A shard's root table missing: the shard goes (not the index) once the
 * binlog took it away for good; meanwhile a moment's absence. true when it
 * went. */
static bool shard_gone(struct supervisor *sv, const struct mp_index *ix,
                       const struct mp_schema *schema, long long now, long long settle,
                       const char *forced) {
    if (mp_schema_find(schema, ix->tables[0].db, ix->tables[0].table, NULL)) return false;
    struct sw_absent *a = absent_find(&sv->watch, ix->tables[0].db, ix->tables[0].table);
    if ((a && (!a->renamed || now >= a->since_ms + settle)) || forced) {
        shard_is_gone(sv, ix, a && !a->renamed);
        return true;
    }
    return false;
}

/* An index config stopped earlier: its rebuild queued once the source fits
 * its mapping again (true when that could not be queued yet: tried again),
 * or, when a schema change named its tables after a refused query stopped
 * it, that statement recorded as the cause. */
static bool judge_stopped(struct supervisor *sv, const struct mp_index *ix,
                          const struct mp_schema *schema, bool bad, const char *named,
                          const char *forced, bool at_start, const sbuf *errs) {
    struct schema_watch *w = &sv->watch;
    bool owed = false;
    sbuf reason = SBUF_INIT;
    sbuf key = SBUF_INIT;
    sbuf_printf(&key, "%s\x1f%s", ix->alias, ix->stopped);
    if (!bad && !refit_asked(w, key.data)) {
        if (index_stop_refit(sv, ix, named ? named : forced ? forced
                                             : "looked at again")) {
            w->refit = xrealloc(w->refit, (w->nrefit + 1) * sizeof *w->refit);
            w->refit[w->nrefit++] = sbuf_detach(&key);
        } else {
            owed = true;
            log_warn("run", "index %s: the source fits its mapping again, but its "
                     "rebuild cannot be queued yet (%s): tried again in a moment",
                     ix->alias, sv->err);
            sv->err[0] = '\0';
        }
    } else if (bad && named && !at_start && strstr(ix->stopped, INDEX_STOP_REFUSED)) {
        /* stopped at a refused query before the DDL that caused it
         * was read: that statement is the cause */
        index_stop_reason(ix, schema, named, errs->data, &reason);
        index_stop_name_cause(sv, ix, reason.data);
    }
    sbuf_free(&key);
    sbuf_free(&reason);
    return owed;
}

/* What this judgement leaves for the next: the deferred index configs
 * (said when one starts or its reason changes; def is taken over), the
 * absent tables and refits still of interest, and when to look again (a
 * backoff while anything is deferred or owed, at the latest when a table's
 * settle time ends). */
static void remember(struct schema_watch *w, const struct mapping *m, struct sw_deferred *def,
                     size_t ndef, bool refit_owed, long long now, long long next_due) {
    /* what is deferred now, said when it starts or its reason changes */
    for (size_t i = 0; i < ndef; i++) {
        const char *was = deferred_why(w, def[i].alias);
        if (!was || strcmp(was, def[i].why))
            log_info("run", "index %s: %s", def[i].alias, def[i].why);
    }
    for (size_t i = 0; i < w->ndeferred; i++) free(w->deferred[i].alias), free(w->deferred[i].why);
    free(w->deferred);
    w->deferred = def, w->ndeferred = ndef;
    for (size_t i = 0; i < w->nnamed; i++) free(w->named[i].alias), free(w->named[i].note);
    free(w->named);
    w->named = NULL, w->nnamed = 0;
    /* names no index config reads any more, and refits of stops since lifted */
    for (size_t i = 0; i < w->nabsent;)
        if (!mapping_reads(m, w->absent[i].db, w->absent[i].table)) absent_remove(w, i);
        else i++;
    for (size_t i = 0; i < w->nrefit;) {
        bool still = false;
        for (size_t x = 0; x < m->nindices && !still; x++) {
            const struct mp_index *ix = &m->indices[x];
            size_t n = strlen(ix->alias);
            still = ix->stopped && !strncmp(w->refit[i], ix->alias, n) && w->refit[i][n] == '\x1f';
        }
        if (still) {
            i++;
        } else {
            free(w->refit[i]);
            w->refit[i] = w->refit[--w->nrefit];
        }
    }
    if (w->ndeferred || refit_owed) {
        long long backoff = 1000LL << (w->relooks < 5 ? w->relooks : 5);
        if (backoff > 30000) backoff = 30000;
        long long due = now + backoff;
        if (next_due && next_due < due) due = next_due;
        w->due_ms = due;
        w->relooks++;
    } else {
        w->due_ms = 0;
        w->relooks = 0;
    }
}

int schema_watch_judge(struct supervisor *sv, const char *forced, bool at_start, size_t *stopped) {
    struct schema_watch *w = &sv->watch;
    *stopped = 0;
    struct mapping m = {0};
    struct mp_schema schema = {0};
    struct sw_deferred *def = NULL;
    size_t ndef = 0;
    bool refit_owed = false;
    int rc = -1;
    char **keep = NULL;
    size_t nkeep = 0;
    if (sv->published) schema_watch_keep(w, &sv->published->m, &keep, &nkeep);
    if (db_ensure(&sv->meta, &sv->metap, sv->err, sizeof sv->err) < 0 ||
        db_ensure(&sv->src, &sv->srcp, sv->err, sizeof sv->err) < 0 ||
        mapping_db_load_config(sv->meta, sv->cfg, &m, sv->err, sizeof sv->err) < 0 ||
        mapping_expand(sv->src, &m, keep, nkeep, NULL, sv->err, sizeof sv->err) < 0 ||
        mapping_schema_load(sv->src, &m, &schema, sv->err, sizeof sv->err) < 0)
        goto out;
    long long now = mono_ms(), settle = sv->cfg->source.schema_settle_ms;
    long long next_due = 0;
    for (size_t i = 0; i < m.nindices; i++) {
        const struct mp_index *ix = &m.indices[i];
        const char *named = at_start ? "at start" : named_note(w, ix->alias);
        sbuf errs = SBUF_INIT, reason = SBUF_INIT, why = SBUF_INIT;
        bool bad = unfit(&m, i, &schema, &errs);
        if (ix->stopped) {
            refit_owed |= judge_stopped(sv, ix, &schema, bad, named, forced, at_start, &errs);
            goto next;
        }
        if (!bad) {
            if (deferred_why(w, ix->alias))
                log_info("run", "index %s goes on: the source fits its mapping again", ix->alias);
            goto next;
        }
        if (ix->unit && shard_gone(sv, ix, &schema, now, settle, forced)) goto next;
        struct missing ms = {w, &schema, at_start, false, now, 0, NULL};
        index_tables(ix, look_missing, &ms);
        if (ms.first || ms.ahead) { /* a table it reads is missing */
            if (forced) {
                sbuf_adds(&why, ms.first ? ms.first->note : forced);
            } else if (ms.ahead) {
                sbuf_printf(&why, "a table index %s reads is missing from the source (%s), but "
                            "the binlog read so far still has it: a schema change the reader has "
                            "not read yet, or an online schema change's swap under way. The "
                            "index goes on, and is judged when the change that took the table "
                            "away is read", ix->alias, errs.data);
                defer(&def, &ndef, ix->alias, why.data);
                goto next;
            } else if (ms.until && now < ms.until + settle) {
                sbuf_printf(&why, "table %s.%s, which index %s reads, is gone %s. The index "
                            "goes on, and is stopped unless a table of that name is back within "
                            "%lld ms ([source] schema_settle_ms: an online schema change renames "
                            "its rebuilt table in a moment later)", ms.first->db,
                            ms.first->table, ix->alias, ms.first->note, settle);
                defer(&def, &ndef, ix->alias, why.data);
                long long due = ms.until + settle;
                if (!next_due || due < next_due) next_due = due;
                goto next;
            } else {
                sbuf_adds(&why, ms.first->note);
            }
        } else if (named || forced) {
            sbuf_adds(&why, named ? named : forced);
        } else {
            sbuf_printf(&why, "the source does not fit the mapping of index %s now (%s), but no "
                        "schema change naming its tables has been read yet: the index goes on, "
                        "and is judged when one is", ix->alias, errs.data);
            defer(&def, &ndef, ix->alias, why.data);
            goto next;
        }
        index_stop_reason(ix, &schema, why.data, errs.data, &reason);
        int s = index_stop(sv, ix, reason.data);
        if (s > 0) (*stopped)++;
        sbuf_free(&errs);
        sbuf_free(&reason);
        sbuf_free(&why);
        if (s < 0) goto out;
        continue;
    next:
        sbuf_free(&errs);
        sbuf_free(&reason);
        sbuf_free(&why);
    }
    remember(w, &m, def, ndef, refit_owed, now, next_due);
    def = NULL, ndef = 0;
    rc = 0;
out:
    for (size_t i = 0; i < ndef; i++) free(def[i].alias), free(def[i].why);
    free(def);
    for (size_t i = 0; i < nkeep; i++) free(keep[i]);
    free(keep);
    mp_schema_free(&schema);
    mapping_free(&m);
    return rc;
}

void schema_watch_free(struct schema_watch *w) {
    for (size_t i = 0; i < w->nabsent; i++) free(w->absent[i].note);
    free(w->absent);
    for (size_t i = 0; i < w->nnamed; i++) free(w->named[i].alias), free(w->named[i].note);
    free(w->named);
    for (size_t i = 0; i < w->ndeferred; i++) free(w->deferred[i].alias), free(w->deferred[i].why);
    free(w->deferred);
    for (size_t i = 0; i < w->nrefit; i++) free(w->refit[i]);
    free(w->refit);
    for (size_t i = 0; i < w->ngone; i++) free(w->gone[i]);
    free(w->gone);
    memset(w, 0, sizeof *w);
}
