/* gtid_version: what the server says about GTIDs for [source] versions =
 * gtid — its executed set now or at a binlog position (the version of a read
 * snapshot: a reindex's pages, resync, a delayed run, a check's repair), as
 * an ordinal (bl_gtid_ordinal: the transaction number that is the same on
 * every server of one replication topology), and the start-up checks: the
 * server has GTIDs, and a checkpoint's set is one it can resume after (a
 * promoted replica can; an unrelated server or a purged binlog cannot).
 * Live transactions take their ordinal from the reader's own set (the
 * decoder's, seeded from the checkpoint), never from here. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "binlog/binlog.h"
#include "sync/pipeline/gtid_version.h"

static bool is_mariadb(MYSQL *m) {
    const char *info = mysql_get_server_info(m);
    return info && strstr(info, "MariaDB");
}

int gtid_server_set(MYSQL *src, const char *file, unsigned long long pos, sbuf *out, char *err,
                    size_t errlen) {
    sbuf q = SBUF_INIT;
    if (!is_mariadb(src)) {
        sbuf_adds(&q, "SELECT @@GLOBAL.gtid_executed");
    } else if (file && file[0]) {
        sbuf_adds(&q, "SELECT BINLOG_GTID_POS(");
        db_quote(src, &q, file, strlen(file));
        sbuf_printf(&q, ", %llu)", pos);
    } else {
        sbuf_adds(&q, "SELECT @@GLOBAL.gtid_binlog_pos");
    }
    char *v = NULL;
    int rc = db_row1(src, q.data, q.len, &v, 1, err, errlen);
    if (rc == 1 && !v)
        rc = errf(err, errlen, "%s: the server reports no GTID set at binlog %s:%llu ([source] "
                  "versions = gtid)", q.data, file ? file : "", pos);
    else if (rc == 0)
        rc = errf(err, errlen, "%s: no row", q.data);
    sbuf_free(&q);
    if (rc < 0) {
        free(v);
        return -1;
    }
    sbuf_reset(out);
    for (const char *c = v; *c; c++) /* MySQL breaks long sets over lines */
        if (*c != '\n' && *c != '\r' && *c != ' ') sbuf_addc(out, *c);
    if (!out->data) sbuf_adds(out, "");
    free(v);
    return 0;
}

int gtid_server_start(MYSQL *src, char *file, size_t filelen, unsigned long long *pos,
                      sbuf *out, char *err, size_t errlen) {
    if (is_mariadb(src)) return gtid_server_set(src, file, *pos, out, err, errlen);
    /* MySQL adds a transaction to gtid_executed after it is in the binlog:
     * a set read between two equal reads of the binlog's end holds nothing
     * past that end (it may lack a transaction before it: the dump by GTID
     * sends that one again, no harm). A set read after the end moved could
     * hold a transaction past it, which the reader would then skip. */
    for (int attempt = 0; attempt < 20; attempt++) {
        if (gtid_server_set(src, NULL, 0, out, err, errlen) < 0) return -1;
        char f2[512];
        unsigned long long p2 = 0;
        int have = db_binlog_status(src, f2, sizeof f2, &p2, err, errlen);
        if (have < 0) return -1;
        if (have == 0)
            return errf(err, errlen, "the source reports no binlog position (is log_bin on?)");
        if (!strcmp(f2, file) && p2 == *pos) return 0;
        snprintf(file, filelen, "%s", f2); /* it moved: try again from its new end */
        *pos = p2;
    }
    return errf(err, errlen, "the source's binlog kept moving while its GTID set was read "
                "(20 tries): start again ([source] versions = gtid)");
}

int gtid_server_ordinal(MYSQL *src, const char *file, unsigned long long pos, uint64_t *ord,
                        char *err, size_t errlen) {
    sbuf set = SBUF_INIT;
    int rc = gtid_server_set(src, file, pos, &set, err, errlen);
    bl_gtid_set *s = bl_gtid_new();
    if (rc == 0 && bl_gtid_parse(s, set.data, err, errlen) != BL_OK) rc = -1;
    if (rc == 0) *ord = bl_gtid_ordinal(s);
    bl_gtid_free(s);
    sbuf_free(&set);
    return rc;
}

int gtid_server_check(MYSQL *src, char *err, size_t errlen) {
    if (is_mariadb(src)) return 0; /* every MariaDB transaction has a GTID */
    char *v = NULL;
    int rc = db_row1(src, "SELECT @@GLOBAL.gtid_mode", 0, &v, 1, err, errlen);
    if (rc < 0) return -1;
    if (rc == 1 && v && !strcmp(v, "ON")) {
        free(v);
        return 0;
    }
    errf(err, errlen, "[source] versions = gtid, but the source's gtid_mode is %s: its "
         "transactions have no GTIDs to number the versions. Turn GTIDs on (gtid_mode=ON, "
         "enforce_gtid_consistency=ON) or set [source] versions = position",
         v ? v : "unknown");
    free(v);
    return 1;
}

int gtid_resume_check(MYSQL *src, const char *source, const char *set, char *err,
                      size_t errlen) {
    bl_gtid_set *want = bl_gtid_new(), *have = bl_gtid_new(), *gone = bl_gtid_new();
    sbuf now = SBUF_INIT, purged = SBUF_INIT;
    int rc = bl_gtid_parse(want, set, err, errlen) == BL_OK ? 0 : -1;
    if (rc == 0) rc = gtid_server_set(src, NULL, 0, &now, err, errlen);
    if (rc == 0 && bl_gtid_parse(have, now.data, err, errlen) != BL_OK) rc = -1;
    if (rc == 0 && !bl_gtid_empty(want) &&
        (bl_gtid_flavor(want) != bl_gtid_flavor(have) || !bl_gtid_contains(have, want)))
        rc = 1;
    /* what the server purged must be at or before the checkpoint: MariaDB,
     * the state at the start of its oldest binlog; MySQL, gtid_purged */
    if (rc == 0 && !bl_gtid_empty(want)) {
        char *first = NULL;
        if (is_mariadb(src)) {
            MYSQL_RES *r = db_query(src, "SHOW BINARY LOGS", 0, err, errlen);
            MYSQL_ROW row = r ? mysql_fetch_row(r) : NULL;
            if (row && row[0]) first = xstrdup(row[0]);
            if (r) mysql_free_result(r);
            if (!r) rc = -1;
            if (rc == 0 && first) rc = gtid_server_set(src, first, 4, &purged, err, errlen);
        } else {
            char *v = NULL;
            if (db_row1(src, "SELECT @@GLOBAL.gtid_purged", 0, &v, 1, err, errlen) < 0) rc = -1;
            sbuf_adds(&purged, v ? v : "");
            free(v);
        }
        free(first);
        if (rc == 0 && bl_gtid_parse(gone, purged.data ? purged.data : "", err, errlen) != BL_OK)
            rc = -1;
        if (rc == 0 && !bl_gtid_empty(gone) && !bl_gtid_contains(want, gone)) rc = 2;
    }
    if (rc > 0)
        errf(err, errlen, "the checkpoint of source %s is after GTID set %.1000s, which the "
             "source (%s, executed %.1000s) %s: it is not a server of the same replication "
             "topology, or is behind. If [source] points at the right server, stop and run "
             "`searchsync epoch bump --config FILE --reset-checkpoint` (then a reindex brings "
             "the indices up to date)", source, set, mysql_get_host_info(src),
             now.data ? now.data : "", rc == 1 ? "has not all executed"
                                               : "no longer has the binlog after (purged)");
    sbuf_free(&now);
    sbuf_free(&purged);
    bl_gtid_free(want);
    bl_gtid_free(have);
    bl_gtid_free(gone);
    return rc;
}
