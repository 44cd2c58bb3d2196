/* binlog_start: where the binlog source starts reading — the open of
 * `searchsync run` with [source] kind = mysql (binlog_source.h). The saved
 * checkpoint (file:pos, or file:pos;gtid=SET with [source] versions = gtid),
 * else [source] start: "beginning" (the oldest binlog), or "now" made a
 * position and saved at once (a restart before the first transaction must
 * not skip what happened meanwhile); `run --from-current` starts at the
 * binlog's end whatever the checkpoint says, and has every index rebuilt;
 * so does a checkpoint whose binlog was purged with [source] on_purged =
 * rebuild, and a reconnect that finds it purged (binlog_purged_midway).
 * The checkpoint is saved through the node (env->save_start: fenced), the
 * rebuilds queued by it (env->rebuild_all). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "deliver/store.h"
#include "log.h"
#include "sync/pipeline/gtid_version.h"
#include "sync/sources/binlog_source.h"


/* the last transaction boundary is where reading starts */
static void start_at(struct binlog_source *bl, const char *file, unsigned long long at) {
    snprintf(bl->boundary.file, sizeof bl->boundary.file, "%s", file);
    bl->boundary.pos = at;
}

/* [source] versions = gtid: the reader starts after GTID set `set` (the
 * decoder's set, the live versions' ordinals, goes on from it) and the
 * checkpoint carries it from now on. */
static void start_after_gtids(struct binlog_source *bl, bl_reader_opts *ro, const char *set) {
    sbuf_reset(&bl->start_gtids);
    sbuf_adds(&bl->start_gtids, set);
    const char *gtids = bl->start_gtids.data;
    sbuf_reset(&bl->gtids);
    sbuf_adds(&bl->gtids, set);
    ro->start = BL_START_GTID, ro->gtid = gtids;
}

/* The resume token of the binlog's end file:pos (just read), with the GTID
 * set there in gtid mode (the reader starts after it; on MySQL file:pos may
 * move to a later end, gtid_server_start). 0 or -1 (env->err). */
static int start_token(struct binlog_source *bl, bl_reader_opts *ro, char *file, size_t filelen,
                       unsigned long long *pos, sbuf *token) {
    struct source_env *env = bl->env;
    sbuf set = SBUF_INIT;
    int rc = 0;
    if (config_gtid_versions(env->cfg)) {
        rc = gtid_server_start(env->p->src, file, filelen, pos, &set, env->err, env->errlen);
        if (rc == 0) start_after_gtids(bl, ro, set.data);
    }
    sbuf_printf(token, "%s:%llu", file, *pos);
    if (rc == 0 && config_gtid_versions(env->cfg))
        sbuf_printf(token, "%s%s", GTID_TOKEN_MARK, set.data);
    sbuf_free(&set);
    return rc;
}

/* Start reading at file:at (the binlog's end now), saved as the checkpoint
 * at once through the node (fenced by this reader's token): 0; 1 when
 * another reader's token is larger (*other); -1 (env->err). */
static int start_at_saved(struct binlog_source *bl, bl_reader_opts *ro, char *file,
                          size_t filelen, unsigned long long at, uint64_t *other) {
    struct source_env *env = bl->env;
    ro->start = BL_START_FILEPOS, ro->file = file, ro->pos = at;
    sbuf token = SBUF_INIT;
    int rc = start_token(bl, ro, file, filelen, &at, &token);
    ro->pos = at;
    snprintf(env->start_pos, sizeof env->start_pos, "%s:%llu", file, at);
    start_at(bl, file, at);
    if (rc == 0) rc = env->save_start(env->ud, token.data, other, env->err, env->errlen);
    sbuf_free(&token);
    return rc;
}

int binlog_skip_to_end(struct binlog_source *bl, const char *why, const char *was) {
    struct source_env *env = bl->env;
    const struct ss_config *cfg = env->cfg;
    struct pipeline *p = env->p;
    unsigned long long at = 0;
    int have = db_binlog_status(p->src, bl->file, sizeof bl->file, &at, env->err, env->errlen);
    if (have <= 0) {
        if (have == 0)
            snprintf(env->err, env->errlen, "%s: the source reports no binlog position (is "
                     "log_bin on?)", why);
        return -1;
    }
    char skipped[1200];
    snprintf(skipped, sizeof skipped, "from %.500s to %s:%llu", was ? was : "(no checkpoint)",
             bl->file, at);
    /* the rebuilds first: a crash before the position is saved starts here
     * again (their requests are refused then: one is queued already) */
    if (env->rebuild_all(env->ud, why, skipped) < 0) return -1;
    uint64_t other = 0;
    int rc = start_at_saved(bl, &bl->ro, bl->file, sizeof bl->file, at, &other);
    if (rc != 0) {
        if (rc == 1)
            snprintf(env->err, env->errlen, "%s: source %s is read by another node now (token "
                     "%llu)", why, cfg->source.name, (unsigned long long)other);
        return -1;
    }
    log_warn("run", "%s: the binlog %s is skipped; every index is rebuilt from MySQL now, which "
             "covers what was skipped", why, skipped);
    return 0;
}

int binlog_purged(struct binlog_source *bl, const char *file, const char *gtids) {
    struct source_env *env = bl->env;
    if (gtids) {
        char e[1200];
        int ok = gtid_resume_check(env->p->src, env->cfg->source.name, gtids, e, sizeof e);
        if (ok < 0) snprintf(env->err, env->errlen, "%s", e);
        return ok < 0 ? -1 : ok == 2;
    }
    int kept = db_binlog_file_kept(env->p->src, file, strlen(file), env->err, env->errlen);
    return kept < 0 ? -1 : !kept;
}

/* The checkpoint's binlog is no longer on the source: with [source]
 * on_purged = rebuild, reading starts at the end and every index is rebuilt;
 * else the error says how to recover. 0 or -1 (env->err). */
static int checkpoint_purged(struct binlog_source *bl, const char *was) {
    struct source_env *env = bl->env;
    if (!strcmp(env->cfg->source.on_purged, "rebuild")) {
        if (binlog_skip_to_end(bl, "[source] on_purged = rebuild", was) < 0) return -1;
        pthread_mutex_lock(&env->rs->mu);
        env->rs->f.purge_rebuilds++;
        pthread_mutex_unlock(&env->rs->mu);
        return 0;
    }
    return errf(env->err, env->errlen, "the binlog after the checkpoint of source %s (%s) is no "
                "longer on the source (purged): the changes since cannot be read. Recover with "
                "`searchsync run --from-current` (it starts at the binlog's end and rebuilds every "
                "index), or set [source] on_purged = rebuild to have the daemon do that by itself",
                env->cfg->source.name, was);
}

/* The checkpoint, else [source] start ("now" becomes a position, saved at
 * once: a restart before the first transaction must not skip what happened
 * meanwhile). 0 or -1 (env->err). */
static int start_position(struct binlog_source *bl, bl_reader_opts *ro, char *file, size_t filelen,
                          bool from_current) {
    struct source_env *env = bl->env;
    const struct ss_config *cfg = env->cfg;
    char pos[4200];
    int found = offsets_load(env->p->meta, cfg->source.name, pos, sizeof pos, env->err,
                             env->errlen);
    if (found < 0) return -1;
    if (from_current)
        return binlog_skip_to_end(bl, "run --from-current", found == 0 ? pos : NULL);
    unsigned long long at = 0;
    if (found == 0) {
        /* file:pos, or in gtid mode file:pos;gtid=SET; a checkpoint of the
         * other mode is refused: the two kinds of versions do not compare */
        char *mark = strstr(pos, GTID_TOKEN_MARK);
        bool gtid = config_gtid_versions(cfg);
        if (!gtid != !mark) {
            env->usage = true;
            return errf(env->err, env->errlen,
                        "the checkpoint of source %s (\"%.200s\") was saved with [source] "
                        "versions = %s, and the configuration now says %s: the two kinds of "
                        "versions do not compare, and the documents written since would lose "
                        "to the old ones. Stop, run `searchsync epoch bump --config FILE "
                        "--reset-checkpoint` once (new versions outrank the old; the reader "
                        "starts at [source] start), then a reindex brings the indices up to date",
                        cfg->source.name, pos, mark ? "gtid" : "position",
                        gtid ? "gtid" : "position (or auto)");
        }
        char was[sizeof pos];
        snprintf(was, sizeof was, "%s", pos);
        if (mark) {
            *mark = '\0';
            const char *set = mark + strlen(GTID_TOKEN_MARK);
            int ok = gtid_resume_check(env->p->src, cfg->source.name, set, env->err,
                                       env->errlen);
            if (ok == 2 && !strcmp(cfg->source.on_purged, "rebuild"))
                return checkpoint_purged(bl, was);
            if (ok == 2) { /* as a start on another server is refused (exit 2), naming more */
                size_t n = strlen(env->err);
                snprintf(env->err + n, env->errlen - n, ". On this server, go on without the "
                         "purged changes with `searchsync run --from-current` (it starts at the "
                         "binlog's end and rebuilds every index), or set [source] on_purged = "
                         "rebuild to have the daemon do that by itself");
                env->usage = true;
                return -1;
            }
            if (ok != 0) {
                env->usage = ok == 1;
                return -1;
            }
            start_after_gtids(bl, ro, set);
            log_info("run", "resuming source %s after GTID set %s (saved at %s)",
                     cfg->source.name, set, pos);
        }
        char *colon = strrchr(pos, ':');
        if (!colon || (size_t)(colon - pos) >= filelen)
            return errf(env->err, env->errlen,
                        "the saved checkpoint of source %s (\"%.100s\") is not a binlog position",
                        cfg->source.name, pos);
        memcpy(file, pos, (size_t)(colon - pos));
        file[colon - pos] = '\0';
        at = strtoull(colon + 1, NULL, 10);
        if (!mark) {
            int purged = binlog_purged(bl, file, NULL);
            if (purged < 0) return -1;
            if (purged) return checkpoint_purged(bl, was);
        }
        if (!mark) ro->start = BL_START_FILEPOS, ro->file = file, ro->pos = at;
        start_at(bl, file, at);
        if (!mark) log_info("run", "resuming source %s at %s:%llu", cfg->source.name, file, at);
        snprintf(env->start_pos, sizeof env->start_pos, "%s:%llu", file, at);
        return 0;
    }
    if (strcmp(cfg->source.start, "beginning") == 0) {
        ro->start = BL_START_BEGINNING;
        snprintf(env->start_pos, sizeof env->start_pos, "%s", cfg->source.start);
        log_info("run", "source %s has no checkpoint: starting at the oldest binlog",
                 cfg->source.name);
        return 0;
    }
    ro->start = BL_START_NOW;
    /* not known (binlog off, no privilege): the reader says why when it starts */
    if (db_binlog_status(env->p->src, file, filelen, &at, env->err, env->errlen) > 0) {
        uint64_t other = 0;
        int rc = start_at_saved(bl, ro, file, filelen, at, &other);
        if (rc < 0) return -1;
        if (rc == 1)
            return errf(env->err, env->errlen, "source %s was taken over by another reader "
                        "(token %llu) while this one started", cfg->source.name,
                        (unsigned long long)other);
    } else {
        env->err[0] = '\0';
        snprintf(env->start_pos, sizeof env->start_pos, "now");
    }
    log_info("run", "source %s has no checkpoint: starting now, at %s", cfg->source.name,
             env->start_pos);
    return 0;
}

static void reader_opts(const struct ss_config *cfg, bl_reader_opts *ro) {
    memset(ro, 0, sizeof *ro);
    ro->host = cfg->source.host, ro->port = cfg->source.port, ro->socket = cfg->source.socket;
    ro->user = cfg->source.user, ro->password = cfg->source.password;
    ro->tls = db_tls_source(cfg); /* [source] ssl_mode, ssl_ca, ... (src/db_tls.c) */
    ro->server_id = (uint32_t)cfg->source.server_id;
    /* idle, the heartbeats are when the supervisor's commands (mapping
     * generations, queued reindexes) are applied */
    ro->heartbeat_ms = cfg->source.heartbeat_ms < cfg->metadata.reload_interval_ms
                           ? cfg->source.heartbeat_ms
                           : cfg->metadata.reload_interval_ms;
    if (ro->heartbeat_ms > cfg->reindex.poll_interval_ms)
        ro->heartbeat_ms = cfg->reindex.poll_interval_ms;
    ro->connect_timeout_ms = cfg->source.connect_timeout_ms;
    ro->read_timeout_ms = cfg->source.read_timeout_ms;
    ro->max_reconnects = -1;
}


int binlog_source_open(struct source_env *env, bool from_current, void **state) {
    struct binlog_source *bl = xcalloc(1, sizeof *bl);
    binlog_source_init(bl, env);
    *state = bl;
    reader_opts(env->cfg, &bl->ro);
    return start_position(bl, &bl->ro, bl->file, sizeof bl->file, from_current);
}

/* (binlog_source.h) The reader lost the connection and, reconnecting, found
 * the binlog after its position purged (it was behind, or away, while the server rotated
 * and purged): with [source] on_purged = rebuild, what it held is dropped
 * (every index is rebuilt: the pages are read after the new start), reading
 * goes on at the binlog's end; otherwise (or when it is something else the
 * server refused) the daemon stops with the reader's error. 0 to read on. */
int binlog_purged_midway(struct binlog_source *bl, bl_reader *r, const bl_sink *sink) {
    struct source_env *env = bl->env;
    bl_pos at = bl->have_last ? bl->last_commit.end : r->start;
    if (strcmp(env->cfg->source.on_purged, "rebuild") || binlog_src_ensure(bl) < 0) return -1;
    const char *gtids = config_gtid_versions(env->cfg) ? (bl->gtids.data ? bl->gtids.data : "")
                                                       : NULL;
    char why[BL_ERR_LEN];
    snprintf(why, sizeof why, "%s", r->err);
    int purged = binlog_purged(bl, at.file, gtids);
    if (purged <= 0) {
        snprintf(env->err, env->errlen, "%s", why); /* not a purge: the reader's error stands */
        return -1;
    }
    char was[BL_FILE_MAX + 32];
    snprintf(was, sizeof was, "%s:%llu", at.file, (unsigned long long)at.pos);
    log_warn("run", "reconnecting to the source: %s", why);
    changeset_reset(env->cs);
    bl->txn_saves = false;
    bl->group_n = 0;
    xa_set_free(&bl->xa); /* their commits are in the stretch skipped: rebuilt with the rest */
    bl->reconnects_before += r->reconnects;
    bl_reader_close(r);
    if (binlog_skip_to_end(bl, "[source] on_purged = rebuild", was) < 0) return -1;
    bl->have_last = false;
    bl->ended.file[0] = '\0';
    pthread_mutex_lock(&env->rs->mu);
    env->rs->f.purge_rebuilds++;
    env->rs->f.xa_prepared = 0;
    pthread_mutex_unlock(&env->rs->mu);
    if (bl_reader_open(r, &bl->ro, sink) != BL_OK) {
        snprintf(env->err, env->errlen, "%s", r->err);
        return -1;
    }
    r->stop_flag = env->stop;
    return 0;
}
