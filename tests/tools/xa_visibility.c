/* xa_visibility: how often a read that the server's own markers place after
 * an XA COMMIT still misses its rows (the reason sync/sources/binlog_visible.c waits
 * for XA RECOVER before it reads an XA COMMIT's documents).
 *
 * Each round: a session prepares an XA transaction that sets t.v = round and
 * goes away (the transaction stays prepared); another session sends
 * `XA COMMIT` without waiting for its answer; a third reads as the daemon
 * would once the binlog shows the commit:
 *   --reads snapshot  (MariaDB) START TRANSACTION WITH CONSISTENT SNAPSHOT,
 *                     again until Binlog_snapshot_position is past the
 *                     binlog's end before the commit, then SELECT v;
 *   --reads gtid      (MySQL, gtid_mode ON) WAIT_FOR_EXECUTED_GTID_SET of
 *                     the commit's GTID, then SELECT v;
 * with --wait-xa-recover it first waits until XA RECOVER no longer lists the
 * transaction. It prints how many reads saw the value from before.
 *
 *   tests/tools/xa_visibility --port P [--host H] [--user U] [--password W]
 *       [--rounds N] --reads snapshot|gtid [--wait-xa-recover]
 *
 * It creates and drops the database xa_visibility. Exit 0 when no read
 * missed its commit, 3 when some did, 1 on a server error. */
#include <getopt.h>
#include <mysql.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static MYSQL *connect_to(const char *host, unsigned port, const char *user, const char *pw,
                         const char *db) {
    MYSQL *m = mysql_init(NULL);
    if (!mysql_real_connect(m, host, user, pw, db, port, NULL, 0)) {
        fprintf(stderr, "xa_visibility: %s:%u: %s\n", host, port, mysql_error(m));
        exit(1);
    }
    return m;
}

static void run(MYSQL *m, const char *sql) {
    if (mysql_query(m, sql)) {
        fprintf(stderr, "xa_visibility: %s: %s\n", sql, mysql_error(m));
        exit(1);
    }
    MYSQL_RES *r = mysql_store_result(m);
    if (r) mysql_free_result(r);
}

/* the first column of the first row (a copy; "" when none) */
static char *scalar(MYSQL *m, const char *sql) {
    if (mysql_query(m, sql)) {
        fprintf(stderr, "xa_visibility: %s: %s\n", sql, mysql_error(m));
        exit(1);
    }
    MYSQL_RES *r = mysql_store_result(m);
    MYSQL_ROW row = r ? mysql_fetch_row(r) : NULL;
    char *v = strdup(row && row[0] ? row[0] : "");
    if (r) mysql_free_result(r);
    return v;
}

static unsigned long long number(MYSQL *m, const char *sql) {
    char *v = scalar(m, sql);
    unsigned long long n = strtoull(v, NULL, 10);
    free(v);
    return n;
}

/* the value of a SHOW STATUS / SHOW MASTER STATUS row's column col */
static unsigned long long show_col(MYSQL *m, const char *sql, unsigned col) {
    if (mysql_query(m, sql)) {
        fprintf(stderr, "xa_visibility: %s: %s\n", sql, mysql_error(m));
        exit(1);
    }
    MYSQL_RES *r = mysql_store_result(m);
    MYSQL_ROW row = r ? mysql_fetch_row(r) : NULL;
    unsigned long long n = row && mysql_num_fields(r) > col && row[col] ? strtoull(row[col], NULL, 10) : 0;
    if (r) mysql_free_result(r);
    return n;
}

static bool xa_listed(MYSQL *m, const char *xid) {
    if (mysql_query(m, "XA RECOVER")) {
        fprintf(stderr, "xa_visibility: XA RECOVER: %s\n", mysql_error(m));
        exit(1);
    }
    MYSQL_RES *r = mysql_store_result(m);
    bool found = false;
    MYSQL_ROW row;
    while (r && (row = mysql_fetch_row(r)))
        found |= row[3] && !strcmp(row[3], xid);
    if (r) mysql_free_result(r);
    return found;
}

int main(int argc, char **argv) {
    const char *host = "127.0.0.1", *user = "root", *pw = "", *reads = NULL;
    unsigned port = 3306, rounds = 1000;
    bool wait_recover = false;
    static const struct option opts[] = {
        {"host", required_argument, NULL, 'h'},  {"port", required_argument, NULL, 'P'},
        {"user", required_argument, NULL, 'u'},  {"password", required_argument, NULL, 'p'},
        {"rounds", required_argument, NULL, 'n'}, {"reads", required_argument, NULL, 'r'},
        {"wait-xa-recover", no_argument, NULL, 'w'}, {NULL, 0, NULL, 0}};
    for (int o; (o = getopt_long(argc, argv, "", opts, NULL)) != -1;) {
        switch (o) {
        case 'h': host = optarg; break;
        case 'P': port = (unsigned)strtoul(optarg, NULL, 10); break;
        case 'u': user = optarg; break;
        case 'p': pw = optarg; break;
        case 'n': rounds = (unsigned)strtoul(optarg, NULL, 10); break;
        case 'r': reads = optarg; break;
        case 'w': wait_recover = true; break;
        default: return 2;
        }
    }
    bool snapshot = reads && !strcmp(reads, "snapshot");
    if (!reads || (!snapshot && strcmp(reads, "gtid")) || !rounds) {
        fprintf(stderr, "usage: xa_visibility --port P [--host H] [--user U] [--password W] "
                        "[--rounds N] --reads snapshot|gtid [--wait-xa-recover]\n");
        return 2;
    }
    MYSQL *reader = connect_to(host, port, user, pw, NULL);
    run(reader, "DROP DATABASE IF EXISTS xa_visibility");
    run(reader, "CREATE DATABASE xa_visibility");
    run(reader, "CREATE TABLE xa_visibility.t (id INT PRIMARY KEY, v INT) ENGINE=InnoDB");
    run(reader, "INSERT INTO xa_visibility.t VALUES (1, 0)");
    run(reader, "USE xa_visibility");
    char *uuid = snapshot ? NULL : scalar(reader, "SELECT @@server_uuid");
    MYSQL *committer = connect_to(host, port, user, pw, "xa_visibility");
    unsigned missed = 0;
    for (unsigned i = 1; i <= rounds; i++) {
        char xid[32], sql[256];
        snprintf(xid, sizeof xid, "xav%u", i);
        /* prepared by a session that then goes away (gone once the
         * processlist no longer shows it: only then may another commit it) */
        MYSQL *preparer = connect_to(host, port, user, pw, "xa_visibility");
        snprintf(sql, sizeof sql, "XA START '%s'", xid), run(preparer, sql);
        snprintf(sql, sizeof sql, "UPDATE t SET v = %u WHERE id = 1", i), run(preparer, sql);
        snprintf(sql, sizeof sql, "XA END '%s'", xid), run(preparer, sql);
        snprintf(sql, sizeof sql, "XA PREPARE '%s'", xid), run(preparer, sql);
        unsigned long id = mysql_thread_id(preparer);
        mysql_close(preparer);
        snprintf(sql, sizeof sql, "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE ID = %lu",
                 id);
        while (number(reader, sql)) continue;
        unsigned long long end0 = 0, gno = 0;
        if (snapshot) {
            end0 = show_col(reader, "SHOW MASTER STATUS", 1);
        } else { /* the next GTID of this server's uuid */
            char *set = scalar(reader, "SELECT @@GLOBAL.gtid_executed");
            char *mine = strstr(set, uuid), *end = mine ? strpbrk(mine, ",\n") : NULL;
            if (end) *end = '\0';
            char *last = mine ? strrchr(mine, '-') : NULL, *colon = mine ? strrchr(mine, ':') : NULL;
            gno = (last && last > colon ? strtoull(last + 1, NULL, 10)
                   : colon               ? strtoull(colon + 1, NULL, 10)
                                         : 0) + 1;
            free(set);
        }
        char commit[64];
        snprintf(commit, sizeof commit, "XA COMMIT '%s'", xid);
        if (mysql_send_query(committer, commit, (unsigned long)strlen(commit))) {
            fprintf(stderr, "xa_visibility: %s: %s\n", commit, mysql_error(committer));
            return 1;
        }
        if (!snapshot) {
            snprintf(sql, sizeof sql, "SELECT WAIT_FOR_EXECUTED_GTID_SET('%s:%llu', 5)", uuid, gno);
            free(scalar(reader, sql));
        }
        if (wait_recover) {
            if (snapshot) /* the commit in the binlog first (as the daemon reads it) */
                while (show_col(reader, "SHOW MASTER STATUS", 1) <= end0) continue;
            while (xa_listed(reader, xid)) continue;
        }
        unsigned long long v;
        if (snapshot) {
            for (;;) {
                run(reader, "START TRANSACTION WITH CONSISTENT SNAPSHOT");
                unsigned long long at =
                    show_col(reader, "SHOW STATUS LIKE 'Binlog_snapshot_position'", 1);
                if (at > end0) break;
                run(reader, "COMMIT");
            }
            v = number(reader, "SELECT v FROM t WHERE id = 1");
            run(reader, "COMMIT");
        } else {
            v = number(reader, "SELECT v FROM t WHERE id = 1");
        }
        missed += v != i;
        if (mysql_read_query_result(committer)) {
            fprintf(stderr, "xa_visibility: %s: %s\n", commit, mysql_error(committer));
            return 1;
        }
    }
    run(reader, "DROP DATABASE xa_visibility");
    printf("%u XA COMMITs, reads %s%s: %u missed the commit\n", rounds,
           snapshot ? "in a snapshot past it in the binlog" : "after its GTID was executed",
           wait_recover ? ", after XA RECOVER dropped it" : "", missed);
    free(uuid);
    mysql_close(committer);
    mysql_close(reader);
    return missed ? 3 : 0;
}
