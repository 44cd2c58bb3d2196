/* kafka_visible: a Kafka change set's messages made visible to the reads
 * that build its documents (invariant I2, as binlog_visible.c for the
 * binlog reader). Owns the read snapshot of a change set and how far it
 * must reach.
 *
 * A producer (Maxwell, Debezium, canal) reads a transaction from the
 * binlog, where it is a moment before its rows are visible to other
 * sessions; its message can reach the daemon within that moment on a busy
 * machine, and for as long as a semi-sync replica takes to acknowledge
 * with lossless semi-sync (AFTER_SYNC). A document re-read then holds the
 * rows from before the transaction under a version from after it, and
 * stays so until the row's next change. So a change set that reads back is
 * read in a snapshot (pipeline_snapshot_at, taken again for up to 5 s)
 * whose binlog position is at or past the binlog's end read as the set is
 * built: every message read so far was in that binlog before it, when the
 * producer reads [source] or a replica of it (docs/kafka.md says so). Not
 * the messages' own coordinates: what a producer's position points at (the
 * transaction's first event, one of its rows, its end) differs, and a
 * snapshot exactly at a transaction's first event does not hold it; nor
 * are they [source]'s binlog when the producer reads another server. Where
 * the server reports no snapshot position (MySQL), everything binlogged is
 * waited for to be committed (its owned GTIDs executed:
 * db_wait_binlogged_committed) and the reads go on outside a snapshot; a
 * server without a binlog has nothing to wait for (said once). */
#include <mysql.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db.h"
#include "log.h"
#include "sync/sources/kafka_source_int.h"

/* MySQL: what was binlogged before now committed, so reads see it. 0, or -1
 * with p->err. */
static int wait_committed(struct kafka_source *ks) {
    struct pipeline *p = ks->env->p;
    sbuf owned = SBUF_INIT;
    int c = db_wait_binlogged_committed(p->src, 5, &owned, p->err, sizeof p->err);
    if (c == 0)
        log_warn("run", "GTID(s) %.300s owned for over 5 s and not executed (a session holding "
                 "gtid_next?): a Kafka change set's documents are read anyway",
                 owned.data ? owned.data : "");
    sbuf_free(&owned);
    return c < 0 ? -1 : 0;
}

/* The binlog's end now: 1 in *at, 0 no binlog (said once), -1 with p->err. */
static int binlog_end(struct kafka_source *ks, bl_pos *at) {
    struct pipeline *p = ks->env->p;
    unsigned long long pos = 0;
    memset(at, 0, sizeof *at);
    int r = db_binlog_status(p->src, at->file, sizeof at->file, &pos, p->err, sizeof p->err);
    if (r < 0) return -1;
    at->pos = pos;
    if (r == 0) {
        ks->snap = KS_SNAP_OFF;
        log_warn("run", "[source] has no binlog (log_bin off): the documents of Kafka messages "
                 "are re-read without waiting for their transactions to be visible there. "
                 "Point [source] at the server the producer reads (or its primary) for reads "
                 "that never miss a change just committed");
        return 0;
    }
    return 1;
}

int ks_read_snapshot_begin(struct kafka_source *ks) {
    struct pipeline *p = ks->env->p;
    const struct changeset *cs = ks->env->cs;
    ks->in_snap = false;
    if (ks->snap == KS_SNAP_OFF || !pipeline_build_reads(p, cs)) return 0;
    if (ks->snap == KS_SNAP_NONE) return wait_committed(ks);
    bl_pos at;
    int r = binlog_end(ks, &at);
    if (r <= 0) return r;
    bl_pos snap;
    int s = pipeline_snapshot_at(p, cs, NULL, NULL, &at, 5000, true, &snap);
    if (s < 0) return -1;
    if (s == 0) { /* no snapshot position (MySQL): every later set waits so */
        db_snapshot_end(p->src);
        ks->snap = KS_SNAP_NONE;
        log_info("run", "the source reports no snapshot position: each Kafka change set's reads "
                 "wait for the transactions in its binlog to be committed (their GTIDs; "
                 "nothing to wait for with gtid_mode OFF)");
        return wait_committed(ks);
    }
    ks->snap = KS_SNAP_POS;
    ks->in_snap = true;
    if (s == 2)
        log_warn("run", "the source's snapshot is at %s:%llu, behind its binlog's end read "
                 "before it (%s:%llu) after 5 s; a Kafka change set is read anyway", snap.file,
                 (unsigned long long)snap.pos, at.file, (unsigned long long)at.pos);
    return 0;
}

void ks_read_snapshot_end(struct kafka_source *ks) {
    if (ks->in_snap) db_snapshot_end(ks->env->p->src);
    ks->in_snap = false;
}
