/* reindex_read_from: where in each source's binlog a version's pages were
 * read from (index_versions.read_from, one "source=file:pos" entry per
 * source), recorded when a source's dual writes to a version begin, before
 * any page of its part is read; and whether an index's newest version was
 * read after a given binlog position.
 *
 * What asks: a schema statement a producer replays to describe the schema
 * rather than one the server ran (Debezium's snapshot writes DROP TABLE IF
 * EXISTS and DROP DATABASE IF EXISTS before its CREATEs). Taken as a real
 * DROP, it would rebuild every index the snapshot covers, a second full
 * build of each one whenever the connector snapshots. It is still a reason
 * to rebuild one whose pages were read before the snapshot: the changes
 * between them reached no topic (the connector was not reading), and the
 * deletes among them are in no snapshot row. An index read after it holds
 * none of those rows already. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "binlog/binlog.h"
#include "db.h"
#include "log.h"
#include "sbuf.h"
#include "sync/reindex/reindex.h"
#include "sync/reindex/reindex_int.h"

int reindex_record_read_from(const struct ss_config *cfg, MYSQL *meta, MYSQL *src,
                             const char *alias, unsigned version, char *where, size_t wherelen,
                             char *err, size_t errlen) {
    char file[BL_FILE_MAX];
    unsigned long long pos = 0;
    int rc = db_binlog_status(src, file, sizeof file, &pos, err, errlen);
    if (rc < 0) return -1;
    if (rc == 0) {
        snprintf(err, errlen, "the binlog of [source] is off");
        return -1;
    }
    snprintf(where, wherelen, "%s:%llu", file, pos);
    char entry[BL_FILE_MAX + 128];
    snprintf(entry, sizeof entry, "%s=%s", cfg->source.name, where);
    sbuf q = SBUF_INIT;
    sbuf_adds(&q, "UPDATE index_versions SET read_from = CONCAT_WS(' ', read_from, ");
    rx_sq(meta, &q, entry);
    sbuf_printf(&q, ") WHERE version = %u AND index_id = (SELECT id FROM index_configs WHERE "
                    "source = ", version);
    rx_sq(meta, &q, config_mapping_name(cfg));
    sbuf_adds(&q, " AND alias = ");
    rx_sq(meta, &q, alias);
    sbuf_addc(&q, ')');
    rc = db_exec(meta, q.data, err, errlen) < 0 ? -1 : 0;
    sbuf_free(&q);
    return rc;
}

/* this source's entry of a read_from list ("a=f:p b=f:p"): its file and
 * position; false when there is none */
bool reindex_read_from_entry(const char *list, const char *source, char *file, size_t filelen,
                             unsigned long long *pos) {
    size_t sl = strlen(source);
    for (const char *p = list; p && *p;) {
        while (*p == ' ') p++;
        const char *end = strchr(p, ' ');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        const char *colon = NULL;
        for (const char *c = p + n; c > p; c--)
            if (c[-1] == ':') {
                colon = c - 1;
                break;
            }
        if (n > sl + 1 && !memcmp(p, source, sl) && p[sl] == '=' && colon && colon > p + sl + 1 &&
            (size_t)(colon - (p + sl + 1)) < filelen) {
            char *e;
            unsigned long long v = strtoull(colon + 1, &e, 10);
            if (e == p + n && e > colon + 1) {
                memcpy(file, p + sl + 1, (size_t)(colon - (p + sl + 1)));
                file[colon - (p + sl + 1)] = '\0';
                *pos = v;
                return true;
            }
        }
        p += n;
    }
    return false;
}

/* the name of a binlog file without its sequence number: "mysql-bin" */
static size_t series_len(const char *file) {
    const char *dot = strrchr(file, '.');
    return dot ? (size_t)(dot - file) : strlen(file);
}

int reindex_binlog_cmp(const char *fa, unsigned long long pa, const char *fb,
                       unsigned long long pb, int *order) {
    size_t la = series_len(fa), lb = series_len(fb);
    if (la != lb || memcmp(fa, fb, la) != 0) return -1; /* two servers' binlogs, or renamed */
    uint32_t sa = bl_file_seq(fa), sb = bl_file_seq(fb);
    *order = sa != sb ? (sa < sb ? -1 : 1) : pa != pb ? (pa < pb ? -1 : 1) : 0;
    return 0;
}

/* Was version v's part of this source read at or after file:pos? list: its
 * read_from; begun: while it is built, whether this source's part has a
 * start position ("1"; "0" none yet; NULL no such part, or the version is
 * live). The reader records read_from before the start position, and reads
 * no page of the part before both: a part not begun has no page read. */
static bool version_after(const char *list, const char *source, const char *begun,
                          bool building, const char *file, unsigned long long pos, char *why,
                          size_t whylen, unsigned v) {
    char rf[BL_FILE_MAX];
    unsigned long long rp = 0;
    int order = 0;
    if (!reindex_read_from_entry(list, source, rf, sizeof rf, &rp)) {
        /* its part not begun: no page read yet, each will be read from now,
         * past the statement (its message exists, so the snapshot is over) */
        if (building && begun && !strcmp(begun, "0")) {
            snprintf(why, whylen, "version %u is being built and no page of it is read yet", v);
            return true;
        }
        snprintf(why, whylen, "where version %u was read from is not recorded", v);
        return false;
    }
    if (reindex_binlog_cmp(rf, rp, file, pos, &order) < 0) {
        snprintf(why, whylen, "version %u was read from %s:%llu, another binlog than %s's", v,
                 rf, rp, file);
        return false;
    }
    snprintf(why, whylen, "version %u was read from %s:%llu", v, rf, rp);
    return order >= 0;
}

int reindex_read_after(const struct ss_config *cfg, MYSQL *meta, const char *alias,
                       const char *file, unsigned long long pos, char *why, size_t whylen,
                       char *err, size_t errlen) {
    const char *me = cfg->source.name;
    sbuf q = SBUF_INIT;
    sbuf_adds(&q, "SELECT c.current_version, c.building_version, c.state, (SELECT read_from "
                  "FROM index_versions WHERE index_id = c.id AND version = c.current_version), "
                  "(SELECT read_from FROM index_versions WHERE index_id = c.id AND version = "
                  "c.building_version), (SELECT start_position IS NOT NULL FROM reindex_parts WHERE "
                  "index_id = c.id AND version = c.building_version AND source = ");
    rx_sq(meta, &q, me);
    sbuf_adds(&q, ") FROM index_configs c WHERE c.source = ");
    rx_sq(meta, &q, config_mapping_name(cfg));
    sbuf_adds(&q, " AND c.alias = ");
    rx_sq(meta, &q, alias);
    char *row[6] = {0};
    int got = db_row1(meta, q.data, q.len, row, 6, err, errlen);
    sbuf_free(&q);
    if (got < 0) return -1;
    int rc = 0;
    if (got == 0) {
        snprintf(why, whylen, "the index config is not in the metadata");
    } else {
        unsigned live = row[0] ? (unsigned)strtoul(row[0], NULL, 10) : 0;
        unsigned bv = row[1] ? (unsigned)strtoul(row[1], NULL, 10) : 0;
        bool building = bv && row[2] && (!strcmp(row[2], "changing") || !strcmp(row[2], "switching"));
        /* the newest version decides: one being built replaces the live
         * one, whatever it was read from */
        if (building)
            rc = version_after(row[4], me, row[5], true, file, pos, why, whylen, bv);
        else if (live)
            rc = version_after(row[3], me, NULL, false, file, pos, why, whylen, live);
        else
            snprintf(why, whylen, "it has no version");
    }
    db_row_free(row, 6);
    return rc;
}
