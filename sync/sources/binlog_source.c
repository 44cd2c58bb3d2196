/* binlog_source: the binlog as a producer of change sets — the reader
 * thread of `searchsync run`.
 *
 *   binlog event ──bl_reader──► decoded row ──on_row──► pipeline_route_row
 *   (into this transaction's change set) ... COMMIT ──on_commit──► read
 *   snapshot at or past the commit ──► pipeline_build ──► pipeline_end
 *   (delivery transaction ended at the commit's position) ──► between
 *   transactions: the supervisor's commands (between: source_env's)
 *
 * Invariants upheld here:
 *   I1 no loss: the reader stops only at a transaction boundary; a
 *      transaction whose reads lost a connection is read again from its
 *      start (replay_transaction), with the same versions; one that cannot
 *      be built stops the daemon before its delivery transaction is ended,
 *      so the checkpoint never passes it and the next start reads it again.
 *   I2 no stale write: a transaction's documents are read in a snapshot
 *      whose binlog position is at or past the transaction
 *      (binlog_read_snapshot_begin, in binlog_visible.c), so they hold at
 *      least its data; an XA COMMIT's, once the engine has committed it too
 *      (binlog_wait_xa_engine_commit).
 *   The mapping changes only between transactions: a transaction is routed
 *      and built with one generation; the decoder's table filter is
 *      re-evaluated when a generation is adopted.
 *
 * One table of the metadata schema is read too when the metadata lives on
 * the source: offsets (checkpoint saves read back: a transaction of nothing
 * else ends quietly). Control requests (reindexes, mapping edits) never come
 * as binlog rows: they reach the reader through the supervisor's commands. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "binlog/reader.h"
#include "sync/sources/binlog_source.h"
#include "log.h"
#include "monotime.h"

/* Every checkpoint save (this daemon's, or another's sharing the schema) is
 * a transaction of the offsets table that the daemon reads back. A
 * transaction of nothing else ends quietly (deliver_txn_end_quiet): saving
 * the position after it would write the next such transaction, every
 * interval, forever. */
static bool is_checkpoint_save(const struct binlog_source *bl, const char *db, const char *table) {
    /* node_states: a daemon's role and health (node_state.c), bookkeeping too */
    return (!strcmp(table, "offsets") || !strcmp(table, "node_states")) &&
           !strcmp(db, bl->env->cfg->metadata.database);
}

static bool want_table(void *ctx, const char *db, const char *table) {
    struct binlog_source *bl = ctx;
    return router_wants(bl->env->p->router, db, table) || is_checkpoint_save(bl, db, table);
}

static int on_row(void *ctx, const bl_row *row) {
    struct binlog_source *bl = ctx;
    struct changeset *cs = bl->env->cs;
    liveness_beat(&bl->env->rs->live); /* a large transaction: every row */
    bl->in_txn = true; /* rows read whose commit is still to come */
    if (is_checkpoint_save(bl, row->table->db, row->table->name) &&
        !router_wants(bl->env->p->router, row->table->db, row->table->name)) {
        cs->saves = bl->txn_saves = true;
        return 0;
    }
    cs->other_rows = true;
    bl->env->counts.rows++;
    return pipeline_route_row(bl->env->p, cs, row);
}

/* b holds text now ("" for NULL) */
static void text_set(sbuf *b, const char *text) {
    sbuf_reset(b);
    sbuf_adds(b, text ? text : "");
}

static int group_flush(struct binlog_source *bl);
static void between(struct binlog_source *bl);

/* A DDL statement read from the binlog: the transactions before it are built
 * first (their reads happen before the schema changes under them, as far as
 * the reader can help it), then the node is told what the statement does to
 * tables, at this position (source_env's ddl). Rows after it decode with
 * their own shape (full row metadata). */
static int on_ddl(void *ctx, const char *db, const char *sql, size_t len, const bl_commit *c) {
    struct binlog_source *bl = ctx;
    if (group_flush(bl) < 0) return -1;
    bl->env->counts.ddls++;
    char at[BL_FILE_MAX + 64];
    snprintf(at, sizeof at, "the binlog at %s:%llu", c && c->end.file[0] ? c->end.file : "?",
             c ? (unsigned long long)c->end.pos : 0ULL);
    bl->env->ddl(bl->env->ud, db, sql, len, at, NULL);
    return 0;
}

/* What the reader has read, for /metrics: at each boundary (at_end: an idle
 * heartbeat, so nothing is waiting in the binlog). */
static void publish_stats(struct binlog_source *bl, const bl_pos *at, const bl_commit *cm,
                          bool at_end) {
    struct reader_figures *f = &bl->env->rs->f;
    liveness_beat(&bl->env->rs->live);
    pthread_mutex_lock(&bl->env->rs->mu);
    f->reading = true;
    f->at_end = at_end;
    if (at && at->file[0]) {
        snprintf(f->file, sizeof f->file, "%s", at->file);
        f->pos = at->pos;
    }
    if (cm) {
        f->commit_ts = cm->ts;
        f->read_ms = reader_stats_now_ms();
    }
    f->txns = bl->env->counts.txns;
    f->rows = bl->env->counts.rows;
    f->ddls = bl->env->counts.ddls;
    f->expired = bl->ttl.expired;
    if (bl->reader) f->reconnects = bl->reconnects_before + bl->reader->reconnects;
    pthread_mutex_unlock(&bl->env->rs->mu);
}

#define REPLAYS_MAX 10 /* a transaction read again after lost connections, in a row */

/* ---------- several transactions in one build ----------
 *
 * When the reader is behind (the next transaction is already waiting on the
 * connection), the documents a transaction touches are not built at its commit:
 * its rows stay routed in the change set and the next transaction's join them,
 * up to [source] group_transactions transactions, GROUP_ROWS_MAX rows routed or
 * GROUP_MS_MAX ms (the documents those rows reach are only known when the group
 * is built: the router keeps them as seeds until then). The group is built
 * once, at the last one's commit, in a read snapshot at or past that commit
 * (binlog_read_snapshot_begin), with that commit's version, and its delivery
 * transaction ends there: the content holds every transaction of the group (and
 * maybe later ones), so the version of the last is never newer than the data,
 * as for one transaction. A snapshot taken before a later transaction of the
 * group would not hold it and must never be reused for it: here there is one
 * snapshot, taken after the last. Nothing of a group is acknowledged before it
 * is built (its transactions end no delivery transaction), so a stop or a crash
 * reads the whole group again. Element scripts wait too: their elements are
 * read in the group's snapshot and carry its version, like whole documents. A
 * transaction that gives row-image documents or change snapshots (made from its
 * own rows, with its own version) ends the group with itself; so do a DDL, an
 * idle heartbeat, and anything the supervisor asks between transactions (none
 * runs while a group is open).
 *
 * Caught up, a stream of small transactions would take a read snapshot each,
 * and on MariaDB a snapshot's position alone (SHOW STATUS) costs the source
 * about 0.4 ms of CPU, its statements about 1 ms in all, whatever the build
 * reads: half a core of the source at 500 single-row transactions a second. So
 * while commits come less than half of [source] group_wait_ms apart (smoothed;
 * at the window's pace a pair would wait all of it), a transaction whose
 * documents are read back waits up to that long, from the group's first commit,
 * for the next one to join it. Its documents reach delivery that much later at
 * most, and delivery spaces a live stream's requests by more than that anyway
 * (linger_refresh_percent); a lone transaction, or a slow stream, is built at
 * its commit as before. */
#define GROUP_ROWS_MAX 20000
#define GROUP_MS_MAX 200

static bool supervisor_asks(struct binlog_source *bl) {
    return bl->env->asks(bl->env->ud);
}

/* May this transaction's documents wait for the next transaction's? */
static bool group_defer(struct binlog_source *bl) {
    const struct changeset *cs = bl->env->cs;
    if (bl->env->cfg->source.group_transactions <= 1 || bl->replay) return false;
    if (bl->group_n + 1 >= (unsigned)bl->env->cfg->source.group_transactions) return false;
    if (cs->nrdocs || cs->snaps.len || pipeline_has_missing(bl->env->p)) return false;
    if (bl->env->counts.rows - bl->group_rows_from >= GROUP_ROWS_MAX) return false;
    if (bl->group_n && mono_ms() - bl->group_start_ms >= GROUP_MS_MAX) return false;
    if (supervisor_asks(bl)) return false;
    if (bl_reader_more_pending(bl->reader)) return true;
    /* caught up: wait for a close next commit, if this group reads back */
    long long wait = bl->env->cfg->source.group_wait_ms;
    if (wait <= 0 || bl->commit_gap_us * 2 >= wait * 1000 || !binlog_build_reads(bl)) return false;
    wait -= mono_ms() - bl->group_start_ms;
    if (wait <= 0 || !bl_reader_wait_pending(bl->reader, (int)wait)) return false;
    bl->env->counts.waited++;
    return true;
}

static int commit_build(struct binlog_source *bl, const bl_commit *cm);

static int on_commit(void *ctx, const bl_commit *cm) {
    struct binlog_source *bl = ctx;
    bl->in_txn = false;
    /* a transaction without checkpoint saves is something else (rows of
     * tables the decoder skips never reach on_row): a group of saves and
     * such transactions is not quiet, its position is saved at the next
     * interval (else the idle interval, a minute, kept it back) */
    if (!bl->txn_saves) bl->env->cs->other_rows = true;
    bl->txn_saves = false;
    long long now = mono_us();
    /* a quarter of the newest gap: a stream's pace within a few commits
     * (the first counts as a second after nothing) */
    bl->commit_gap_us = bl->commit_us ? (3 * bl->commit_gap_us + (now - bl->commit_us)) / 4
                                      : 1000000;
    bl->commit_us = now;
    if (!bl->group_n) bl->group_start_ms = now / 1000; /* mono_ms's clock */
    if (cm->xa == BL_XA_NONE && group_defer(bl)) { /* an XA end is built at once (xa_begin) */
        bl->group_n++;
        bl->group_last = *cm;
        bl->group_last.gtid_executed = NULL;
        bl->group_last.xid = "";
        if (config_gtid_versions(bl->env->cfg)) text_set(&bl->group_gtids, cm->gtid_executed);
        bl->env->counts.txns++;
        publish_stats(bl, &cm->end, cm, false);
        return 0;
    }
    return commit_build(bl, cm);
}

/* The open group built now (a DDL or an idle heartbeat ends it). */
static int group_flush(struct binlog_source *bl) {
    if (!bl->group_n) return 0;
    bl->env->counts.txns--; /* commit_build counts the last one again */
    bl_commit last = bl->group_last;
    if (config_gtid_versions(bl->env->cfg)) last.gtid_executed = bl->group_gtids.data;
    return commit_build(bl, &last);
}

/* ---------- two-phase XA (sync/pipeline/xa_prepared.h) ----------
 *
 * At an XA PREPARE the transaction is built as any other (its rows are not
 * visible yet: the documents keep their content from before it) and kept by
 * xid, with the checkpoint held before it; its row-image documents and change
 * snapshots wait. At its XA COMMIT they are put back into the change set and
 * built there, after the commit, with its version; an XA ROLLBACK drops them.
 * Returns the kept transaction the build at hand ends (NULL: none); *fresh
 * when the PREPARE was not kept before (a failed build forgets it again). */
static struct xa_txn *xa_begin(struct binlog_source *bl, const bl_commit *cm, bool *fresh) {
    *fresh = false;
    if (cm->xa == BL_XA_NONE) return NULL;
    if (!cm->xid[0]) {
        log_warn("run", "an XA %s read from the binlog at %s:%llu names no xid this reader can "
                 "read: its documents may be stale until `searchsync check --repair`",
                 cm->xa == BL_XA_PREPARED ? "PREPARE" : cm->xa == BL_XA_COMMITTED ? "COMMIT"
                                                                                  : "ROLLBACK",
                 cm->end.file, (unsigned long long)cm->end.pos);
        return NULL;
    }
    if (cm->xa == BL_XA_PREPARED) {
        /* the checkpoint stays where a restart reads this PREPARE again */
        const bl_pos *before = bl->have_last ? &bl->last_commit.end
                               : bl->boundary.file[0] ? &bl->boundary : &bl->reader->start;
        sbuf hold = SBUF_INIT;
        pipeline_position(bl->env->p, before, bl->gtids.data, &hold);
        *fresh = xa_find(&bl->xa, cm->xid) == NULL;
        /* with no mapped row in it (nor in the group it ends), nothing of it
         * is read again: kept only to know its commit, holding nothing back */
        struct xa_txn *t = xa_prepare(&bl->xa, cm->xid, bl->env->cs->rows ? hold.data : NULL,
                                      &cm->end, mono_ms(), bl->env->cs, &(*bl->env->gen)->m);
        sbuf_free(&hold);
        log_debug("run", "XA transaction %s prepared at %s:%llu: its documents are rebuilt at "
                  "its commit", cm->xid, cm->end.file, (unsigned long long)cm->end.pos);
        return t;
    }
    struct xa_txn *t = xa_find(&bl->xa, cm->xid);
    if (!t) {
        if (cm->xa == BL_XA_COMMITTED)
            log_warn("run", "XA COMMIT %s read from the binlog at %s:%llu, and its XA PREPARE "
                     "was not (it was prepared before where this reader started, or held the "
                     "checkpoint longer than [source] xa_hold_max_s): if it changed mapped "
                     "tables, their documents may be stale until `searchsync check --repair`",
                     cm->xid, cm->end.file, (unsigned long long)cm->end.pos);
        return NULL;
    }
    if (cm->xa == BL_XA_COMMITTED) {
        size_t dropped = xa_restore(t, bl->env->cs, &(*bl->env->gen)->m);
        if (dropped)
            log_info("run", "XA COMMIT %s: %zu of its documents belong to index configs no "
                     "longer in the mapping", cm->xid, dropped);
    }
    return t;
}

/* The build of cm went through (ok) or failed: the XA transaction it ended
 * is kept or forgotten, and the checkpoint held by what stays open. */
static void xa_end(struct binlog_source *bl, const bl_commit *cm, struct xa_txn *t, bool fresh,
                   bool ok) {
    if (!t) return;
    if (cm->xa == BL_XA_PREPARED) {
        if (ok)
            xa_note_docs(t, bl->env->cs, &(*bl->env->gen)->m);
        else if (fresh)
            xa_forget(&bl->xa, t); /* read again, kept again */
    } else if (ok) {
        xa_forget(&bl->xa, t);
    }
    pthread_mutex_lock(&bl->env->rs->mu);
    bl->env->rs->f.xa_prepared = bl->xa.n;
    pthread_mutex_unlock(&bl->env->rs->mu);
}

/* what the checkpoint of the transaction ending now records besides its
 * position: the GTID set after it, and the position of the oldest XA
 * transaction prepared and not ended yet, which the checkpoint holds at */
static const struct pipeline_resume *binlog_resume(struct binlog_source *bl) {
    bl->resume = (struct pipeline_resume){.gtids = bl->gtids.data, .hold = xa_hold(&bl->xa)};
    return &bl->resume;
}

/* prepared XA transactions held past [source] xa_hold_max_s let go */
static void xa_tick(struct binlog_source *bl) {
    if (bl->xa.n)
        xa_expire(&bl->xa, mono_ms(), (long long)bl->env->cfg->source.xa_hold_max_s * 1000);
}

/* A transaction whose build lost a connection (a restart, a KILL) or met a
 * table changed under its snapshot: read again by the run loop
 * (replay_transaction), up to REPLAYS_MAX times in a row; past that the
 * connection is not the cause, and the error says so. */
static void replay_after_loss(struct binlog_source *bl) {
    if (++bl->replays <= REPLAYS_MAX)
        bl->replay = true;
    else
        errf(bl->env->err + strlen(bl->env->err), bl->env->errlen - strlen(bl->env->err),
             " (the connection was lost at this transaction %d times in a row, the server "
             "answering in between: not an outage. A statement running longer than [source] "
             "read_timeout_ms? Nothing is lost: the transaction is read again at the next "
             "start)", REPLAYS_MAX + 1);
}

/* A transaction whose build found a mapped table or column missing from the
 * source (ER_NO_SUCH_TABLE, ER_BAD_FIELD_ERROR; see commit_build): read
 * again, backing off, for up to [source] schema_settle_ms, then once more
 * after the supervisor judged the mapping against the source. */
static void replay_while_missing(struct binlog_source *bl, const bl_commit *cm,
                                 unsigned srcerr) {
    struct pipeline *p = bl->env->p;
    /* a column goes only with an ALTER, or a swap to a table without it:
     * a change for good, waited for a moment only; a table is away for a
     * moment in a two-step cut-over */
    long long now = mono_ms(), settle = bl->env->cfg->source.schema_settle_ms;
    if (srcerr == 1054 && settle > 1000) settle = 1000;
    if (!bl->refused_ms) {
        bl->refused_ms = now;
        log_warn("run", "%s at the transaction ending at %s:%llu: a table or column of the "
                 "mapping is missing from the source now (a schema change the reader has "
                 "not read yet, or an online schema change's swap under way); the "
                 "transaction is read again until the source has it again, for up to "
                 "%lld ms ([source] schema_settle_ms) before the mapping is judged",
                 p->err, cm->end.file, (unsigned long long)cm->end.pos, settle);
    }
    bl->replay = true;
    if (now - bl->refused_ms < settle) {
        long waited = (long)(now - bl->refused_ms);
        bl->replay_nap_ms = waited < 1000 ? 50 : waited < 10000 ? 250 : 1000;
    } else if (++bl->replays <= REPLAYS_MAX) {
        bl->replay_nap_ms = 0;
        bl->replay_after_gen = (*bl->env->gen)->id;
        char note[SOURCE_NOTE_MAX];
        snprintf(note, sizeof note,
                 "after " SOURCE_QUERY_REFUSED " (%.250s) for %lld ms at the transaction "
                 "ending at %.100s:%llu, before the binlog reader reached the schema change "
                 "that caused it", p->err, now - bl->refused_ms, cm->end.file,
                 (unsigned long long)cm->end.pos);
        bl->replay_verdict = bl->env->verdict_ask(bl->env->ud, note);
    } else {
        bl->replay = false;
    }
}

/* the last position handed to delivery as a transaction's end (or where
 * the reader started) */
static const bl_pos *last_ended(const struct binlog_source *bl) {
    return bl->ended.file[0] ? &bl->ended : bl->have_last ? &bl->last_commit.end
                                                          : &bl->reader->start;
}

/* A transaction built: its delivery transaction ended at its commit (the
 * checkpoint may pass it now), its counts and position published, the
 * supervisor's commands run (between). */
static void commit_done(struct binlog_source *bl, const bl_commit *cm) {
    struct pipeline *p = bl->env->p;
    if (bl->refused_ms)
        log_info("run", "the transaction ending at %s:%llu is built after %lld ms: the source "
                 "answers the mapping's queries again", cm->end.file,
                 (unsigned long long)cm->end.pos, mono_ms() - bl->refused_ms);
    bl->refused_ms = 0;
    bl->replays = 0;
    /* (a save read back in a newer binlog file than the last one ended is
     * saved at once: else the checkpoint would wait in the old file for the
     * idle interval, with no heartbeat to move it, idle_rotate) */
    bool quiet = bl->env->cs->saves && !bl->env->cs->other_rows &&
                 !strcmp(cm->end.file, last_ended(bl)->file);
    log_debug("run", "transaction ending at %s:%llu%s%s: %zu documents rebuilt, %zu element "
              "scripts, %zu row-image documents, %llu change snapshots", cm->end.file,
              (unsigned long long)cm->end.pos, cm->end.gtid[0] ? ", GTID " : "", cm->end.gtid,
              bl->env->cs->npend, bl->env->cs->nelems, bl->env->cs->nrdocs, bl->env->cs->nsnaps);
    /* [source] versions = gtid: the checkpoint holds the set after it */
    if (config_gtid_versions(bl->env->cfg) && cm->gtid_executed)
        text_set(&bl->gtids, cm->gtid_executed);
    pipeline_end(p, bl->env->cs, &cm->end, binlog_resume(bl), quiet);
    bl->env->counts.txns++;
    bl->last_commit = *cm;
    bl->last_commit.gtid_executed = NULL;
    bl->last_commit.xa = BL_XA_NONE, bl->last_commit.xid = "";
    bl->have_last = true;
    xa_tick(bl);
    bl->at = bl->boundary = bl->ended = cm->end;
    between(bl);
    publish_stats(bl, &cm->end, cm, false);
}

static int commit_build(struct binlog_source *bl, const bl_commit *cm) {
    struct pipeline *p = bl->env->p;
    if (bl->group_n) {
        bl->env->counts.groups++;
        bl->env->counts.grouped_txns += bl->group_n + 1;
    }
    bl->group_n = 0;
    bl->group_rows_from = bl->env->counts.rows; /* the next group counts its rows from here */
    if (binlog_src_ensure(bl) < 0) return -1;
    bool xa_fresh;
    struct xa_txn *xa = xa_begin(bl, cm, &xa_fresh);
    bool uses_meta = bl->env->cs->snaps.len > 0; /* the only metadata write of a build */
    int rc = xa && cm->xa == BL_XA_COMMITTED ? binlog_wait_xa_engine_commit(bl, cm) : 0;
    if (rc == 0) rc = binlog_read_snapshot_begin(bl, cm);
    /* behind: the child copy lookup may wait for the next builds' (child_copies.c) */
    p->copies_may_wait = bl->env->cfg->source.group_transactions > 1 && cm->xa == BL_XA_NONE &&
                         !bl->replay && bl_reader_more_pending(bl->reader);
    if (rc == 0) rc = pipeline_build(p, bl->env->cs, &cm->end);
    xa_end(bl, cm, xa, xa_fresh, rc == 0);
    /* a connection lost midway (a restart, a KILL) is no reason to stop:
     * the run loop reads the transaction again (replay_transaction). A
     * statement that drops its connection every time (one running past
     * read_timeout_ms, a packet over max_allowed_packet) is not an outage:
     * after REPLAYS_MAX attempts in a row the daemon stops with its error. */
    if (rc != 0) snprintf(bl->env->err, bl->env->errlen, "%s", p->err);
    /* the server's code for a failed query: the builder's prepared statements
     * carry their own (p->src_errno), the connection's may not say it */
    unsigned srcerr = rc == 0 ? 0 : p->src_errno ? p->src_errno : mysql_errno(p->src);
    /* ER_TABLE_DEF_CHANGED (1412): a TRUNCATE, ALTER or DROP + CREATE of a
     * table after the read snapshot began; a new snapshot reads it */
    if (rc != 0 && !*bl->env->stop &&
        (db_conn_lost(p->src) || srcerr == 1412 ||
         (uses_meta && db_conn_lost(p->meta))))
        replay_after_loss(bl);
    /* ER_BAD_FIELD_ERROR, ER_NO_SUCH_TABLE: a mapped column or table is
     * missing from the source now. Not a verdict on the mapping: the server
     * is ahead of the reader, and a schema change the reader has not read
     * yet may be a moment of an online schema change (gh-ost's two-step
     * cut-over renames the table away, then the rebuilt one in; a RENAME
     * swap is under way). So the transaction is read again, backing off,
     * until the source has the table or column again; only when it stays
     * missing for [source] schema_settle_ms does the supervisor judge the
     * mapping against the source as it is (sync/node/schema_watch.c) and
     * stop the index configs it no longer fits, the transaction then read
     * again with the generation that leaves them out. */
    if (rc != 0 && !*bl->env->stop && !bl->replay && (srcerr == 1054 || srcerr == 1146))
        replay_while_missing(bl, cm, srcerr);
    if (bl->in_snap) db_snapshot_end(p->src);
    bl->in_snap = false;
    if (rc != 0) return -1;
    commit_done(bl, cm);
    return 0;
}

/* An idle heartbeat in a binlog file after the one the last transaction
 * ended in: the server rotated (a restart, FLUSH LOGS, max_binlog_size) and
 * nothing to sync came since. The position moves on as an empty
 * transaction, so the checkpoint follows once every earlier one is
 * delivered; else it would stay in the old file until the next write, and
 * `status` would call the reader behind. Once a file. A heartbeat is sent
 * only when everything before its position was sent, and read (the
 * reader's sink handled each event before it). */
static void idle_rotate(struct binlog_source *bl, const bl_pos *at) {
    const bl_pos *ended = last_ended(bl);
    if (!at || !at->file[0] || !strcmp(at->file, ended->file)) return;
    if (bl->group_n || bl->in_txn || bl->env->cs->rows) return;
    log_info("run", "the source's binlog moved on to %s with nothing to sync since %s:%llu: "
             "the checkpoint follows it", at->file, ended->file, (unsigned long long)ended->pos);
    pipeline_end(bl->env->p, bl->env->cs, at, binlog_resume(bl), false);
    bl->ended = bl->boundary = *at;
}

static int on_heartbeat(void *ctx, const bl_pos *at) {
    struct binlog_source *bl = ctx;
    struct pipeline *p = bl->env->p;
    if (bl->group_n && !bl->in_txn && group_flush(bl) < 0) return -1; /* idle: build it */
    if (bl->env->cs->rows) return 0; /* inside a transaction */
    if (at && at->file[0]) bl->at = *at;
    if (p->copies_hold && bl->have_last) /* idle: the lookups put off are done now */
        pipeline_end(p, bl->env->cs, &bl->last_commit.end, binlog_resume(bl), false);
    idle_rotate(bl, at);
    xa_tick(bl);
    if (bl->have_last && pipeline_has_missing(p)) { /* idle: rebuild them on their own */
        if (binlog_src_ensure(bl) < 0) return -1;
        if (pipeline_rebuild_missing(p, &bl->last_commit.end) < 0) {
            snprintf(bl->env->err, bl->env->errlen, "%s", p->err);
            if (*bl->env->stop || !db_conn_lost(p->src)) return -1;
            log_warn("run", "%s; tried again at the next heartbeat", p->err); /* kept */
            bl->env->err[0] = p->err[0] = '\0';
            between(bl);
            return 0;
        }
        pipeline_end(p, bl->env->cs, &bl->last_commit.end, binlog_resume(bl), false);
    }
    between(bl);
    publish_stats(bl, at, NULL, true);
    return 0;
}

/* Between transactions (and on idle heartbeats): what the supervisor asked
 * for (the node's between: a new mapping generation, the build table to
 * follow), then the documents whose rows expired. */
static void between(struct binlog_source *bl) {
    if (bl->env->between(bl->env->ud)) {
        /* the decoder keeps which tables it skips: re-asked (want_table) */
        bl_reader_refilter(bl->reader);
        ttl_reset(&bl->ttl); /* index configs may have changed */
    }
    /* documents whose rows expired (a producer of its own, between
     * transactions like everything here) */
    const struct pipeline_resume *rs = binlog_resume(bl);
    if (ttl_tick(&bl->ttl, bl->env->p, bl->env->cs, &bl->at, rs, &bl->boundary) < 0) {
        if (!bl->ttl_warned)
            log_warn("run", "removing expired documents: %s (tried again every round)",
                     bl->env->p->err);
        bl->ttl_warned = true;
        bl->env->p->err[0] = '\0';
    } else {
        bl->ttl_warned = false;
    }
}

/* A transaction whose reads lost the source or the metadata server midway
 * (a restart, a killed connection), or met a table redefined under its read
 * snapshot (TRUNCATE, ALTER), is read again from its start, as a
 * restart of the daemon would read it, without one: once the source answers
 * again the reader reopens at the end of the last transaction handed to
 * delivery (the metadata connection is re-made where a transaction uses
 * it). Documents the failed attempt had already submitted are submitted
 * again with the same versions (a version is its commit's position), so
 * nothing is lost and nothing older wins. 0, or -1 (a stop request, or the
 * reader cannot start again: its error in bl->env->err). */
static int replay_transaction(struct binlog_source *bl, bl_reader *r, bl_reader_opts *ro,
                              const bl_sink *sink, char file[BL_FILE_MAX]) {
    bl_pos from = bl->have_last ? bl->last_commit.end : r->start;
    pthread_mutex_lock(&bl->env->rs->mu);
    bl->env->rs->f.replays++;
    pthread_mutex_unlock(&bl->env->rs->mu);
    if (!bl->refused_ms) /* (a refused query said its own, once) */
        log_warn("run", "%s; the transaction's reads failed midway (a lost connection, a table "
                 "redefined under the read snapshot, or a mapped column or table gone): it is "
                 "read again from %s:%llu once the source answers (nothing is lost)",
                 bl->env->err, from.file, (unsigned long long)from.pos);
    if (bl->replay_nap_ms > 0) {
        struct timespec ts = {bl->replay_nap_ms / 1000, (bl->replay_nap_ms % 1000) * 1000000L};
        nanosleep(&ts, NULL);
        bl->replay_nap_ms = 0;
        if (*bl->env->stop) return -1;
    }
    bl->replay = false;
    bl->env->err[0] = '\0';
    changeset_reset(bl->env->cs);
    bl->txn_saves = false;
    if (bl->replay_after_gen) { /* the supervisor's verdict on the mapping first */
        unsigned long was = bl->replay_after_gen;
        bl->replay_after_gen = 0;
        for (int i = 0; (*bl->env->gen)->id == was; i++) {
            if (*bl->env->stop) return -1;
            liveness_beat(&bl->env->rs->live); /* bounded below: 60 s */
            /* answered without a new generation: the mapping fits the source
             * (the table or column is back, a DROP + CREATE faster than the
             * check): read again as it is. A generation it published first
             * is adopted first. */
            bool answered = bl->env->verdict_given(bl->env->ud, bl->replay_verdict);
            if (answered) {
                between(bl);
                if ((*bl->env->gen)->id == was)
                    log_info("run", "the mapping fits the source again (looked at after the "
                             "refused query): the transaction is read again as it is");
                break;
            }
            if (i == 600) { /* 60 s */
                snprintf(bl->env->err, bl->env->errlen, "the source refused a query of the "
                         "mapping, and no verdict on the mapping came within 60 s (the metadata or "
                         "source server away? see the supervisor's messages above): the "
                         "transaction is read again at the next start");
                return -1;
            }
            struct timespec ts = {0, 100000000L};
            nanosleep(&ts, NULL);
            between(bl); /* adopts a published generation */
        }
    }
    bl->reconnects_before += r->reconnects; /* bl_reader_open starts it at 0 */
    bl_reader_close(r);
    snprintf(file, BL_FILE_MAX, "%s", from.file);
    if (config_gtid_versions(bl->env->cfg)) {
        /* after the last transaction's GTID set (or the start's): the
         * decoder's set, the versions' ordinals, goes on from it */
        const char *set = bl->gtids.data;
        if (bl->have_last) text_set(&bl->start_gtids, set ? set : "");
        ro->start = BL_START_GTID, ro->gtid = bl->start_gtids.data ? bl->start_gtids.data : "";
    } else {
        ro->start = BL_START_FILEPOS, ro->file = file, ro->pos = from.pos;
    }
    long delay_ms = 100;
    for (int attempt = 0, refused = 0;; attempt++) {
        if (binlog_src_ensure(bl) < 0) return -1; /* the metadata: where a transaction needs it */
        if (bl_reader_open(r, ro, sink) == BL_OK) break;
        reader_stats_link(bl->env->rs, false, r->err);
        snprintf(bl->env->err, bl->env->errlen, "%s", r->err);
        bl_reader_close(r);
        /* a server that answers queries but refuses the replica for a minute
         * (purged binlog, privileges) will not change its mind; for a moment
         * after a restart it may (too many connections) */
        if (mysql_ping(bl->env->p->src) == 0 && ++refused > 30) return -1;
        if (*bl->env->stop) return -1;
        if (attempt % 30 == 0) log_warn("run", "%s; trying again", bl->env->err);
        struct timespec ts = {delay_ms / 1000, (delay_ms % 1000) * 1000000L};
        nanosleep(&ts, NULL);
        delay_ms = delay_ms * 2 > 2000 ? 2000 : delay_ms * 2;
    }
    r->stop_flag = bl->env->stop;
    bl->env->err[0] = '\0';
    reader_stats_link(bl->env->rs, true, NULL);
    return 0;
}

static int binlog_source_run(struct binlog_source *bl) {
    bl_reader_opts *ro = &bl->ro;
    ro->link = reader_stats_link, ro->link_ud = bl->env->rs; /* the source lost or back: status */
    bl_sink sink = {.ctx = bl, .want_table = want_table, .row = on_row, .commit = on_commit,
                    .ddl = on_ddl, .heartbeat = on_heartbeat};
    bl_reader r;
    if (bl_reader_open(&r, ro, &sink) != BL_OK) {
        snprintf(bl->env->err, bl->env->errlen, "%s", r.err);
        bl_reader_close(&r);
        return BL_ERR;
    }
    bl->reader = &r;
    r.stop_flag = bl->env->stop;
    publish_stats(bl, &r.start, NULL, false);
    log_info("run", "syncing %zu index config(s) of source %s", (*bl->env->gen)->m.nindices,
             bl->env->cfg->source.name);
    int rc;
    char replay_file[BL_FILE_MAX];
    while ((rc = bl_reader_run(&r)) == BL_ERR) {
        int again = bl->replay ? replay_transaction(bl, &r, ro, &sink, replay_file)
                    : r.err_code == 1236 ? binlog_purged_midway(bl, &r, &sink) : -1;
        if (again == 0) continue;
        if (*bl->env->stop) rc = BL_STOP; /* the transaction is read on the next start */
        break;
    }
    /* a stop requested while a transaction waited for the source
     * (binlog_src_ensure) is a stop: the transaction was not built, and is read at the next start */
    if (rc == BL_ERR && !bl->env->err[0] && *bl->env->stop) rc = BL_STOP;
    if (rc == BL_ERR && !bl->env->err[0]) snprintf(bl->env->err, bl->env->errlen, "%s", r.err);
    bl->reader = NULL;
    bl_reader_close(&r);
    pthread_mutex_lock(&bl->env->rs->mu);
    bl->env->rs->f.reading = false;
    pthread_mutex_unlock(&bl->env->rs->mu);
    return rc;
}

void binlog_source_init(struct binlog_source *bl, struct source_env *env) {
    memset(bl, 0, sizeof *bl);
    bl->env = env;
    bl->snap = -1;
    bl->gtid_wait = -1;
}

static bool last_end(void *state, bl_pos *end) {
    struct binlog_source *bl = state;
    if (bl && bl->have_last) *end = bl->last_commit.end;
    return bl && bl->have_last;
}

static void binlog_close(void *state) {
    struct binlog_source *bl = state;
    if (!bl) return;
    xa_set_free(&bl->xa);
    ttl_reset(&bl->ttl);
    sbuf_free(&bl->group_gtids);
    sbuf_free(&bl->start_gtids);
    sbuf_free(&bl->gtids);
    free(bl);
}

static int binlog_check(MYSQL *src, char *err, size_t errlen) {
    return db_check_row_binlog(src, err, errlen);
}

static int binlog_run(void *state) { return binlog_source_run(state); }

const struct source_kind binlog_source_kind = {
    .name = "binlog",
    .ordered_versions = true, /* the binlog gives one document's changes in version order */
    .check = binlog_check,
    .open = binlog_source_open,
    .run = binlog_run,
    .last_end = last_end,
    .saved = NULL,
    .close = binlog_close,
};
