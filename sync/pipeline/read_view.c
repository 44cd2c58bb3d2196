/* read_view: a read snapshot whose tables are the ones their names held when
 * it began (the why is in read_view.h). */
#include "sync/pipeline/read_view.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "db.h"
#include "log.h"
#include "sync/pipeline/ddl_tables.h"

void rv_tables_clear(struct rv_tables *t) {
    strset_clear(&t->seen);
    for (size_t i = 0; i < t->n; i++) {
        free(t->db[i]);
        free(t->table[i]);
    }
    free(t->db);
    free(t->table);
    memset(t, 0, sizeof *t);
}

void rv_tables_add(struct rv_tables *t, const char *db, const char *table) {
    if (!db || !table || !*db || !*table) return;
    sbuf k = SBUF_INIT;
    sbuf_printf(&k, "%s\x1f%s", db, table);
    bool fresh = strset_add(&t->seen, k.data, k.len);
    sbuf_free(&k);
    if (!fresh) return;
    if (t->n == t->cap) {
        t->cap = t->cap ? 2 * t->cap : 8;
        t->db = xrealloc(t->db, t->cap * sizeof *t->db);
        t->table = xrealloc(t->table, t->cap * sizeof *t->table);
    }
    t->db[t->n] = xstrdup(db);
    t->table[t->n] = xstrdup(table);
    t->n++;
}

static void add_relations(struct rv_tables *t, const struct mp_relation *r, size_t n) {
    for (size_t i = 0; i < n; i++) {
        rv_tables_add(t, r[i].db, r[i].table);
        add_relations(t, r[i].relations, r[i].nrelations);
    }
}

void rv_tables_add_index(struct rv_tables *t, const struct mp_index *ix) {
    for (size_t i = 0; i < ix->ntables; i++) {
        const struct mp_table *tb = &ix->tables[i];
        if (i == 0 || tb->parent_table) rv_tables_add(t, tb->db, tb->table);
        add_relations(t, tb->relations, tb->nrelations);
    }
}

void rv_touch_sql(const struct rv_tables *t, sbuf *out) {
    /* a UNION of one-table SELECTs, not a join: no join order to plan, no
     * limit on the tables of one join */
    for (size_t i = 0; i < t->n; i++) {
        bool first = i % RV_TOUCH_CHUNK == 0;
        if (first && i) sbuf_addc(out, '\n');
        if (!first) sbuf_adds(out, " UNION ALL ");
        sbuf_adds(out, "(SELECT 1 FROM ");
        db_ident(out, t->db[i]);
        sbuf_addc(out, '.');
        db_ident(out, t->table[i]);
        sbuf_adds(out, " LIMIT 0)");
    }
}

static bool has_table(const struct rv_tables *t, const char *db, const char *table) {
    sbuf k = SBUF_INIT;
    sbuf_printf(&k, "%s\x1f%s", db, table);
    bool has = strset_has(&t->seen, k.data, k.len);
    sbuf_free(&k);
    return has;
}

static bool has_db(const struct rv_tables *t, const char *db, const char *text) {
    for (size_t i = 0; i < t->n; i++)
        if ((db && !strcmp(t->db[i], db)) || (text && strstr(text, t->db[i]))) return true;
    return false;
}

bool rv_event_touches(const struct rv_tables *t, const char *event_type, const char *info) {
    if (!event_type || strcmp(event_type, "Query") != 0 || !info) return false;
    /* "use `db`; statement" when the statement ran with a default database */
    char db[65] = "";
    const char *sql = info;
    if (!strncmp(sql, "use `", 5)) {
        const char *p = sql + 5;
        size_t n = 0;
        for (; *p; p++) {
            if (*p == '`') {
                if (p[1] != '`') break;
                p++;
            }
            if (n + 1 < sizeof db) db[n++] = *p;
        }
        db[n] = 0;
        if (*p == '`' && p[1] == ';') sql = p + 2;
    }
    struct ddl_stmt s;
    enum ddl_kind k = ddl_parse(sql, strlen(sql), db[0] ? db : NULL, &s);
    bool hit = false;
    if (k == DDL_UNKNOWN) {
        hit = has_db(t, db[0] ? db : NULL, sql);
    } else if (k == DDL_TABLES) {
        for (size_t i = 0; i < s.n && !hit; i++)
            hit = s.t[i].effect == DDL_DB_DROPPED ? has_db(t, s.t[i].db, NULL)
                                                  : has_table(t, s.t[i].db, s.t[i].table);
    }
    ddl_stmt_free(&s);
    return hit;
}

/* tests only: a pause between a snapshot's start and the locks on its
 * tables while file SEARCHSYNC_TEST_READ_VIEW_PAUSE_IF exists, for a test to
 * swap a table in there (SEARCHSYNC_TEST_READ_VIEW_PAUSE_MS, said on stderr) */
static void test_pause(void) {
    static int pause_ms = -1;
    static const char *when;
    if (pause_ms < 0) {
        const char *e = getenv("SEARCHSYNC_TEST_READ_VIEW_PAUSE_MS");
        when = getenv("SEARCHSYNC_TEST_READ_VIEW_PAUSE_IF");
        pause_ms = e && when ? atoi(e) : 0;
    }
    if (pause_ms <= 0 || access(when, F_OK) != 0) return;
    log_info("read", "test pause of %d ms between a read snapshot's start and its tables' locks",
             pause_ms);
    struct timespec ts = {pause_ms / 1000, (long)(pause_ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* Open every table of t (their metadata locks, held to the transaction's
 * end). 0, or -1 with err and *srcerr. */
static int touch(MYSQL *m, const struct rv_tables *t, unsigned *srcerr, char *err,
                 size_t errlen) {
    if (!t || !t->n) return 0;
    sbuf q = SBUF_INIT;
    rv_touch_sql(t, &q);
    int rc = 0;
    for (char *line = q.data, *nl; line && *line && rc == 0; line = nl ? nl + 1 : NULL) {
        nl = strchr(line, '\n');
        if (nl) *nl = 0;
        if (mysql_query(m, line) != 0) {
            *srcerr = mysql_errno(m);
            errf(err, errlen, "opening the tables a read snapshot reads: %s (%u)", mysql_error(m),
                 *srcerr);
            rc = -1;
        } else {
            db_drain(m);
        }
    }
    sbuf_free(&q);
    return rc;
}

#define EVENTS_PAGE 500

/* Does the binlog of file between from and to hold a schema change of a
 * table of t? 1 yes, 0 no, -1 error (err, *srcerr). */
static int window_changes(MYSQL *m, const struct rv_tables *t, const char *file,
                          unsigned long long from, unsigned long long to, unsigned *srcerr,
                          char *err, size_t errlen) {
    while (from < to) {
        sbuf q = SBUF_INIT;
        sbuf_adds(&q, "SHOW BINLOG EVENTS IN ");
        db_quote(m, &q, file, strlen(file));
        sbuf_printf(&q, " FROM %llu LIMIT %d", from, EVENTS_PAGE);
        MYSQL_RES *r = NULL;
        if (mysql_real_query(m, q.data, (unsigned long)q.len) != 0 ||
            !(r = mysql_store_result(m))) {
            *srcerr = mysql_errno(m);
            errf(err, errlen, "reading the binlog a read snapshot spans (%s): %s (%u)%s", q.data,
                 mysql_error(m), *srcerr,
                 *srcerr == 1227 || *srcerr == 1044 || *srcerr == 1045
                     ? "; the source user needs REPLICATION SLAVE and REPLICATION CLIENT "
                       "(MariaDB 10.5+: BINLOG MONITOR), as the binlog reader does"
                     : "");
            sbuf_free(&q);
            return -1;
        }
        sbuf_free(&q);
        MYSQL_ROW row;
        size_t rows = 0;
        int hit = 0;
        unsigned long long next = from;
        while ((row = mysql_fetch_row(r))) {
            rows++;
            if (!row[1] || !row[4]) continue;
            unsigned long long at = strtoull(row[1], NULL, 10);
            if (at >= to) {
                next = to;
                break;
            }
            if (rv_event_touches(t, row[2], row[5])) {
                hit = 1;
                break;
            }
            unsigned long long end = strtoull(row[4], NULL, 10);
            if (end > next) next = end;
        }
        mysql_free_result(r);
        if (hit) return 1;
        if (rows < EVENTS_PAGE || next <= from) return 0; /* the file ends */
        from = next;
    }
    return 0;
}

int read_view_begin(MYSQL *m, const struct rv_tables *t, enum rv_kind *kind, char *file,
                    size_t filelen, unsigned long long *pos, unsigned *srcerr, char *err,
                    size_t errlen) {
    *srcerr = 0;
    for (int tries = 0;; tries++) {
        if (*kind != RV_NO_POSITION) {
            int s = db_snapshot_begin(m, file, filelen, pos, err, errlen);
            if (s < 0) {
                *srcerr = mysql_errno(m);
                db_snapshot_end(m);
                return -1;
            }
            if (s == 0) { /* the read view is taken already: begin without one */
                db_snapshot_end(m);
                *kind = RV_NO_POSITION;
            } else {
                *kind = RV_POSITION;
            }
        }
        if (*kind == RV_NO_POSITION) {
            /* no row read yet, so no read view yet: the locks come first */
            if (db_exec(m, "START TRANSACTION", err, errlen) < 0) {
                *srcerr = mysql_errno(m);
                return -1;
            }
            test_pause();
            if (touch(m, t, srcerr, err, errlen) < 0) {
                db_snapshot_end(m);
                return -1;
            }
            return 0;
        }
        test_pause();
        if (touch(m, t, srcerr, err, errlen) < 0) {
            db_snapshot_end(m);
            return -1;
        }
        if (!t || !t->n) return 1;
        char end[512];
        unsigned long long endpos = 0;
        int b = db_binlog_status(m, end, sizeof end, &endpos, err, errlen);
        if (b != 1) {
            *srcerr = b < 0 ? mysql_errno(m) : 0;
            db_snapshot_end(m);
            return -1;
        }
        int c = 1; /* a new binlog file since: taken again (files rotate rarely) */
        if (!strcmp(end, file))
            c = endpos <= *pos ? 0 : window_changes(m, t, file, *pos, endpos, srcerr, err, errlen);
        if (c == 0) return 1;
        db_snapshot_end(m);
        if (c < 0) return -1;
        if (tries == 200) {
            errf(err, errlen, "a read snapshot was taken 200 times, and each time a schema "
                 "change of a table it reads (or the binlog's next file) came between its "
                 "start and the locks on its tables; the last at %s:%llu-%s:%llu", file, *pos,
                 end, endpos);
            return -1;
        }
        log_debug("read", "a schema change of a table read (or a new binlog file) between "
                  "%s:%llu and %s:%llu, as the read snapshot began: taken again", file, *pos,
                  end, endpos);
        struct timespec ts = {0, (tries < 10 ? 1 : 20) * 1000000L};
        nanosleep(&ts, NULL);
    }
}
