/* binlog_visible: a transaction read from the binlog made visible to the
 * reads that build its documents (invariant I2 of binlog_source.c: no stale
 * write). Owns the read snapshot at or past the commit (through the
 * pipeline's snapshot wait), the GTID wait where the server says no
 * snapshot position (MySQL), the wait for an XA COMMIT to be committed in
 * the engine, and the source connection waited for when a restarting
 * server refuses it. The transaction itself is built by binlog_source.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "binlog/reader.h"
#include "sync/sources/binlog_source.h"
#include "log.h"

/* Without snapshot positions (MySQL), wait until the transaction's GTID is
 * in the server's gtid_executed (WAIT_FOR_EXECUTED_GTID_SET): MySQL adds it
 * there once the transaction is committed in the engine, so the reads that
 * follow see its rows. A grouped build waits for the group's last
 * transaction (commits follow the binlog's order). Nothing to wait for
 * without a GTID (gtid_mode OFF) or on MariaDB (its GTIDs have no ':').
 * 0, or -1 with p->err when the connection failed. */
static int wait_gtid_visible(struct binlog_source *bl, const bl_commit *cm) {
    struct pipeline *p = bl->env->p;
    if (bl->gtid_wait == 0 || !cm->end.gtid[0] || !strchr(cm->end.gtid, ':')) return 0;
    sbuf q = SBUF_INIT;
    sbuf_adds(&q, "SELECT WAIT_FOR_EXECUTED_GTID_SET(");
    db_quote(p->src, &q, cm->end.gtid, strlen(cm->end.gtid));
    sbuf_adds(&q, ", 5)");
    char *v = NULL;
    int rc = db_row1(p->src, q.data, q.len, &v, 1, p->err, sizeof p->err);
    sbuf_free(&q);
    if (rc < 0) {
        unsigned e = mysql_errno(p->src);
        if (e >= 2000 && e < 3000) return -1; /* the connection: read again (the caller) */
        log_warn("run", "%s: documents are re-read without waiting for their transaction "
                 "to be visible", p->err);
        bl->gtid_wait = 0;
        return 0;
    }
    if (bl->gtid_wait < 0) log_info("run", "the source has no snapshot positions: each "
                                    "transaction's reads wait for its GTID to be executed");
    bl->gtid_wait = 1;
    if (v && !strcmp(v, "1"))
        log_warn("run", "transaction %s read from the binlog (ending at %s:%llu) is not "
                 "executed on the source after 5 s; reading it anyway (is [source] the server "
                 "whose binlog is read?)", cm->end.gtid, cm->end.file,
                 (unsigned long long)cm->end.pos);
    free(v);
    return 0;
}

/* Is the XA transaction xid (canonical text, src/binlog/xa.c) still listed
 * as prepared by XA RECOVER? 1 yes, 0 no, -1 the query failed (p->err). */
static int xa_listed(struct pipeline *p, const char *xid) {
    MYSQL_RES *r = db_query(p->src, "XA RECOVER", 0, p->err, sizeof p->err);
    if (!r) return -1;
    int found = 0;
    MYSQL_ROW row;
    while (!found && (row = mysql_fetch_row(r))) {
        unsigned long *len = mysql_fetch_lengths(r);
        if (!row[0] || !row[1] || !row[2] || !row[3]) continue;
        unsigned long gl = strtoul(row[1], NULL, 10), bl = strtoul(row[2], NULL, 10);
        if (gl + bl > len[3]) continue;
        char text[BL_XID_MAX];
        bl_xid_format(text, sizeof text, (uint32_t)strtol(row[0], NULL, 10),
                      (const uint8_t *)row[3], gl, (const uint8_t *)row[3] + gl, bl);
        found = !strcmp(text, xid);
    }
    mysql_free_result(r);
    return found;
}

/* An XA COMMIT of a prepared transaction reaches the binlog before the
 * engine commits it: both MariaDB and MySQL write the statement first, then
 * commit the transaction by its xid, outside the ordered commit that keeps
 * snapshot positions and executed GTIDs in step with visibility. A snapshot
 * past it in the binlog, or its GTID executed, can still miss its rows
 * (tests/tools/xa_visibility, reading at once: 3-14% of reads on MariaDB
 * 10.11, 8-11% on MySQL 8.0.15; none after the wait below). So
 * before the documents it reached are read, wait until XA RECOVER no longer
 * lists it: it is then committed in the engine, and so in any snapshot taken
 * after. Later transactions are read after this wait, so they see it too.
 * MySQL 8 lets only XA_RECOVER_ADMIN run XA RECOVER: without it, said once,
 * reads go on at once. 0, or -1 with p->err when the connection failed. */
int binlog_wait_xa_engine_commit(struct binlog_source *bl, const bl_commit *cm) {
    struct pipeline *p = bl->env->p;
    if (bl->xa_recover_denied) return 0;
    for (int tries = 0;; tries++) {
        int listed = xa_listed(p, cm->xid);
        if (listed == 0) {
            if (tries)
                log_debug("run", "XA COMMIT %s: the source committed it in the engine after %d "
                          "look(s) at XA RECOVER", cm->xid, tries + 1);
            return 0;
        }
        if (listed < 0) {
            unsigned e = mysql_errno(p->src);
            if (e >= 2000 && e < 3000) return -1; /* the connection: read again (the caller) */
            log_warn("run", "%s: the source refuses XA RECOVER, so the documents of an XA "
                     "COMMIT are read without waiting for the engine to commit it and may miss "
                     "its rows until they change again or `searchsync check --repair` (MySQL "
                     "8: GRANT XA_RECOVER_ADMIN ON *.* TO the [source] user)", p->err);
            bl->xa_recover_denied = true;
            return 0;
        }
        if (tries == 5000) { /* about 5 s: not a commit in progress */
            log_warn("run", "XA COMMIT %s read from the binlog at %s:%llu is still listed as "
                     "prepared by the source's XA RECOVER after 5 s; reading its documents "
                     "anyway (is [source] the server whose binlog is read?)", cm->xid,
                     cm->end.file, (unsigned long long)cm->end.pos);
            return 0;
        }
        struct timespec ts = {0, tries < 20 ? 100000 : 1000000};
        nanosleep(&ts, NULL);
    }
}

bool binlog_build_reads(struct binlog_source *bl) {
    return pipeline_build_reads(bl->env->p, bl->env->cs);
}

/* Open a read snapshot of the source that holds this transaction. A
 * transaction reaches the binlog (and so this reader) a moment before its
 * rows are visible to other sessions; a document re-read in that moment
 * would carry the transaction's version with the rows from before it, and
 * win over nothing later. So the documents are read in a snapshot whose
 * binlog position (MariaDB's Binlog_snapshot_position) is at or past the
 * transaction's end, taken again until it is, and that opens every table
 * its documents are read from before any row is read (a table an online
 * schema change swaps in as it begins is otherwise read as it was then:
 * sync/pipeline/read_view.h). Without such a server (MySQL), reads go on
 * outside a snapshot, each statement opening its tables before its read
 * view. 0 ok, -1 error (bl->env->p->err, p->src_errno). */
int binlog_read_snapshot_begin(struct binlog_source *bl, const bl_commit *cm) {
    struct pipeline *p = bl->env->p;
    struct changeset *cs = bl->env->cs;
    if (!binlog_build_reads(bl)) {
        bl->in_snap = false; /* nothing to read (row images only, or nothing) */
        return 0;
    }
    if (bl->snap == 0) return wait_gtid_visible(bl, cm);
    /* the pipeline's snapshot wait (the one of every producer, asserting
     * I2): at or past the commit, taken again for up to 5 s */
    bl_pos snap;
    int s = pipeline_snapshot_at(p, cs, NULL, NULL, &cm->end, 5000, true, &snap);
    if (s < 0) return -1;
    if (s == 0) {
        db_snapshot_end(p->src);
        bl->snap = 0;
        bl->in_snap = false;
        if (cm->end.gtid[0] && strchr(cm->end.gtid, ':')) return wait_gtid_visible(bl, cm);
        log_warn("run", "the source does not report the binlog position of a consistent "
                 "snapshot (Binlog_snapshot_position: MariaDB and Percona Server do) and "
                 "has no GTIDs (gtid_mode OFF): documents are re-read without waiting "
                 "for their transaction to be visible");
        return 0;
    }
    bl->snap = 1;
    bl->in_snap = true;
    if (s == 2) /* 5 s: not a commit in progress */
        log_warn("run", "the source's snapshot is at %s:%llu, behind the transaction read "
                 "from its binlog (%s:%llu) after 5 s; reading it anyway (is [source] the "
                 "server whose binlog is read?)", snap.file, (unsigned long long)snap.pos,
                 cm->end.file, (unsigned long long)cm->end.pos);
    return 0;
}

/* The source connection for a transaction's reads. A restarting server
 * refuses connections for a moment after the binlog reader may already have
 * read a transaction from it: that is waited out (backing off to 2 s, said
 * once a minute) rather than a reason to stop; nothing moves on meanwhile.
 * Only a stop request ends the wait. */
int binlog_src_ensure(struct binlog_source *bl) {
    struct pipeline *p = bl->env->p;
    long delay_ms = 100;
    int attempts = 0;
    while (db_ensure(&p->src, &p->srcp, p->err, sizeof p->err) < 0) {
        liveness_wait(&bl->env->rs->live, READER_WAIT_SOURCE_DOWN);
        if (*bl->env->stop) return -1;
        if (attempts++ % 30 == 0)
            log_warn("run", "%s; waiting for the source (the transaction read from its binlog "
                     "is not lost)", p->err);
        struct timespec ts = {delay_ms / 1000, (delay_ms % 1000) * 1000000L};
        nanosleep(&ts, NULL);
        delay_ms = delay_ms * 2 > 2000 ? 2000 : delay_ms * 2;
    }
    if (attempts) {
        log_info("run", "the source is reachable again after %d attempt(s)", attempts);
        liveness_wait(&bl->env->rs->live, NULL);
    }
    return 0;
}
