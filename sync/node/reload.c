/* reload: what SIGHUP and SIGUSR1 do to `searchsync run`
 * (docs/operations.md, "Reload and state dump").
 *
 * The signal thread (src/signals.c) only raises a flag in the supervisor
 * and wakes it (supervisor_signals_attach); the supervisor thread
 * (sync/node/supervisor.c) then runs reload_config or reload_dump, here, on
 * its own connections. So the signal thread never waits on a server or a
 * lock of the pipeline, and the reader never stops for either. Nothing
 * here calls back into the supervisor.
 *
 *   SIGHUP   the configuration file is read again. Applied live: [log]
 *            level and format, [log] file (reopened even when unchanged, for
 *            logrotate's postrotate), [admin] token (when the admin server
 *            runs). Every other key whose value differs is named in one
 *            warning: it keeps its running value until a restart. [delivery]
 *            tuning is among those: a running delivery (src/deliver/
 *            deliver.h) takes its options once, at deliver_new. A file that
 *            does not load (syntax, bounds) changes nothing; the error is
 *            logged and the daemon runs on.
 *   SIGUSR1  a state dump in the log, whatever [log] level says: the
 *            mapping generation and its index configs, the builds of the
 *            build table, the saved checkpoint and delivery's low-water
 *            mark, delivery's queues, counters and fuses. */
#include "sync/node/reload.h"

#include <stdio.h>
#include <string.h>

#include "deliver/store.h"
#include "log.h"
#include "sync/node/node.h"
#include "sync/node/supervisor.h"
#include "sync/pipeline/pipeline.h"
#include "search/index_version.h"

/* ---------- SIGHUP ---------- */

static bool key_is(const struct config_key *k, const char *section, const char *name) {
    return !strcmp(k->section, section) && !strcmp(k->name, name);
}

/* Keys a reload applies; the others need a restart. */
static bool key_live(const struct supervisor *sv, const struct config_key *k) {
    if (key_is(k, "log", "level") || key_is(k, "log", "file") || key_is(k, "log", "format"))
        return true;
    /* a new token is applied to a running admin server; starting one (no
     * token before) or stopping it takes a restart */
    if (key_is(k, "admin", "token")) return sv->admin != NULL;
    return false;
}

void reload_config(struct supervisor *sv) {
    const struct ss_config *run = sv->cfg;
    struct ss_config nc;
    char err[CONFIG_ERR_LEN];
    if (config_load(&nc, run->path, err, sizeof err) < 0) {
        log_error("reload", "SIGHUP: %s; nothing changed, the running configuration stays "
                  "(fix the file and send SIGHUP again)", err);
        config_free(&nc);
        return;
    }
    /* what cannot change live: named once, with its running value kept */
    sbuf later = SBUF_INIT;
    for (size_t i = 0; i < config_nkeys; i++) {
        const struct config_key *k = &config_keys[i];
        if (key_live(sv, k) || config_key_equal(run, &nc, k)) continue;
        sbuf_printf(&later, "%s[%s] %s", later.len ? ", " : "", k->section, k->name);
    }
    if (sv->admin && !nc.admin.token) {
        sbuf_printf(&later, "%s[admin] token (removed)", later.len ? ", " : "");
    }

    /* the file first: a line another thread logs at the new level goes to
     * the reopened file, never to the one logrotate moved away */
    char lerr[512] = "";
    int lrc = log_set_target(nc.log.file, lerr, sizeof lerr);
    log_set_format(!strcmp(nc.log.format, "json"));
    log_set_level(log_parse_level(nc.log.level));
    if (lrc < 0)
        log_error("reload", "SIGHUP: %s; logging stays where it was (fix [log] file or the "
                  "directory's permissions and send SIGHUP again)", lerr);
    if (sv->admin && nc.admin.token && node_admin()) node_admin()->set_token(sv->admin, nc.admin.token);

    bool to_file = nc.log.file && *nc.log.file && strcmp(nc.log.file, LOG_TARGET_SYSLOG);
    log_info("reload", "SIGHUP: %s read again: [log] level = %s, format = %s, log %s %s%s",
             run->path, nc.log.level, nc.log.format, to_file ? "file" : "to",
             to_file ? nc.log.file : log_is_syslog() ? "syslog" : "standard error",
             lrc < 0 ? " (not reopened)" : to_file ? " (reopened)" : "");
    if (sv->admin && nc.admin.token) log_info("reload", "SIGHUP: [admin] token applied");
    if (later.len)
        log_warn("reload", "SIGHUP: changed in %s but applied only by a restart (their running "
                 "values stay): %s", run->path, later.data);
    sbuf_free(&later);
    config_free(&nc);
}

/* ---------- SIGUSR1 ---------- */

#define DUMP(...) log_write(LOG_INFO, "dump", __VA_ARGS__)

static const char *fuse_text(struct deliver *d, const char *index) {
    int f = d ? deliver_fuse_blown(d, index) : -1;
    return f < 0 ? "no writes yet" : f ? "BLOWN" : "ok";
}

void reload_dump(struct supervisor *sv) {
    const struct ss_config *cfg = sv->cfg;
    DUMP("state dump (SIGUSR1) of source %s begins", cfg->source.name);
    const struct mapping_gen *g = sv->published;
    if (g) {
        DUMP("mapping generation %lu (the newest handed to the reader; %llu edits applied "
             "since start): %zu index configs", g->id, sv->reloads, g->m.nindices);
        for (size_t i = 0; i < g->m.nindices; i++) {
            const struct mp_index *ix = &g->m.indices[i];
            /* fuses are per queue: one for every write of the index config,
             * to its live version and a build (sync/pipeline/targets.c) */
            DUMP("index config %s: state %s, live version %u, epoch %u, %zu tables (root "
                 "%s.%s), fuse %s", ix->alias, ix->state ? ix->state : "-",
                 ix->current_version, ix->epoch, ix->ntables,
                 ix->ntables ? ix->tables[0].db : "-", ix->ntables ? ix->tables[0].table : "-",
                 fuse_text(sv->d, targets_queue(ix->alias)));
        }
    }
    struct build_table *bt =
        build_table_read(&sv->meta, &sv->metap, config_mapping_name(cfg), sv->err, sizeof sv->err);
    if (!bt) {
        DUMP("builds: not readable now: %s", sv->err);
    } else {
        size_t n = 0;
        for (size_t i = 0; i < bt->n; i++) {
            const struct build_want *w = &bt->v[i];
            if (!w->building) continue;
            char phys[600];
            index_version_name(phys, sizeof phys, w->alias, w->building);
            DUMP("build in progress: %s (state %s, live version %u), fuse %s (its index "
                 "config's)", phys, w->state ? w->state : "-", w->current,
                 fuse_text(sv->d, targets_queue(w->alias)));
            n++;
        }
        DUMP("builds in progress: %zu", n);
        build_table_free(bt);
    }
    char pos[4200] = "", err[512] = "";
    int found = db_ensure(&sv->meta, &sv->metap, err, sizeof err) < 0
                    ? -1
                    : offsets_load(sv->meta, cfg->source.name, pos, sizeof pos, err, sizeof err);
    if (found == 0) DUMP("checkpoint saved: %s", pos);
    else if (found > 0) DUMP("checkpoint saved: none yet");
    else DUMP("checkpoint saved: not readable now: %s", err);
    if (sv->d) {
        char low[4200];
        uint64_t seq = deliver_low_water(sv->d, low, sizeof low);
        DUMP("delivery low-water mark: transaction %llu at %s", (unsigned long long)seq,
             low[0] ? low : "-");
        struct deliver_stats s;
        deliver_get_stats(sv->d, &s);
        DUMP("delivery: queued %ld, in flight %ld, submitted %llu, delivered %llu, stale %llu, "
             "retries %llu, failures %llu, dead letters %llu, purged %llu, blocked %llu, "
             "fuses blown now %d (blows %llu), checkpoints saved %llu (failed %llu)",
             s.queued, s.inflight, (unsigned long long)s.submitted,
             (unsigned long long)s.docs_ok, (unsigned long long)s.stale,
             (unsigned long long)s.retries, (unsigned long long)s.failures,
             (unsigned long long)s.dead_letters, (unsigned long long)s.purged,
             (unsigned long long)s.blocked, s.fuses_blown, (unsigned long long)s.fuse_blows,
             (unsigned long long)s.checkpoints_saved, (unsigned long long)s.checkpoint_failures);
    } else {
        DUMP("delivery: not started yet");
    }
    DUMP("log level now: %s", (const char *[]){"debug", "info", "warn", "error", "off"}
                                  [log_min_level < 0 ? 0 : log_min_level > 4 ? 4 : log_min_level]);
    DUMP("state dump ends");
}
