/* source_grants: what the [source] user may do, asked of the server the way
 * the daemon will ask it, for `searchsync config check` (see
 * source_grants.h). Owns the list of statements the daemon runs on the
 * source that a privilege guards, and, for each, the grant that lifts a
 * refusal on MySQL and on MariaDB. */
#include <errmsg.h>
#include <mysqld_error.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db.h"
#include "sbuf.h"
#include "source_grants.h"

/* a statement the daemon runs on the source, and the grant it needs */
struct probe {
    const char *sql;      /* NULL: the binlog status statement (db_binlog_status) */
    bool mysql_only;      /* MariaDB lets it run without the grant named here */
    const char *mysql;    /* the privilege MySQL wants */
    const char *mariadb;  /* the privilege MariaDB (10.5+) wants */
    const char *why;      /* what the daemon does with it */
};

static const struct probe probes[] = {
    {NULL, false, "REPLICATION CLIENT", "BINLOG MONITOR",
     "every command reads the binlog's position (SHOW MASTER STATUS / SHOW BINARY LOG STATUS); "
     "`run` fails without it"},
    /* MySQL guards SHOW BINLOG EVENTS with the privilege of the binlog dump
     * itself; MariaDB 10.5+ with BINLOG MONITOR (its dump's REPLICATION
     * SLAVE is then not asked: the reader names it when refused) */
    {"SHOW BINLOG EVENTS LIMIT 1", true, "REPLICATION SLAVE", NULL,
     "`run` reads the binlog as a replica, and the binlog a read snapshot spans to see that no "
     "table it reads was swapped in as it began (MariaDB); it fails without it"},
    {"XA RECOVER", true, "XA_RECOVER_ADMIN", NULL,
     "MySQL 8 answers XA RECOVER only with it, and without it `run` reads the documents of a "
     "two-phase (XA) transaction without waiting for its XA COMMIT, so they may miss it"},
};

static bool refused(const struct probe *pr, unsigned e) {
    /* MySQL 8 refuses XA RECOVER to a user without XA_RECOVER_ADMIN with
     * XAER_RMERR, not an access error */
    if (pr->sql && !strcmp(pr->sql, "XA RECOVER") && e == 1401 /* ER_XAER_RMERR */) return true;
    return e == ER_SPECIFIC_ACCESS_DENIED_ERROR || e == ER_TABLEACCESS_DENIED_ERROR ||
           e == ER_DBACCESS_DENIED_ERROR || e == ER_PROCACCESS_DENIED_ERROR ||
           e == 1227 /* (ER_SPECIFIC_ACCESS_DENIED_ERROR, should a header lack it) */;
}

/* 'user'@'host' of CURRENT_USER() ("user@host"), for the GRANT line */
static void account(MYSQL *m, const char *fallback_user, sbuf *out) {
    char e[256];
    char *cu = db_scalar(m, "SELECT CURRENT_USER()", e, sizeof e);
    const char *at = cu ? strrchr(cu, '@') : NULL;
    if (at) {
        sbuf_printf(out, "'%.*s'@'%s'", (int)(at - cu), cu, at + 1);
    } else {
        sbuf_printf(out, "'%s'@'%%'", fallback_user ? fallback_user : "");
    }
    free(cu);
}

int source_grants_check(const struct ss_config *cfg, FILE *out) {
    db_params p = db_params_source(cfg);
    if (p.connect_timeout_ms <= 0 || p.connect_timeout_ms > 5000) p.connect_timeout_ms = 5000;
    char err[1024];
    MYSQL *m = db_connect(&p, err, sizeof err);
    if (!m) {
        fprintf(out, "searchsync config check: note: the source was not reached, so the [source] "
                     "user's privileges were not checked: %s\n", err);
        return -1;
    }
    const char *info = mysql_get_server_info(m);
    bool mariadb = info && strstr(info, "MariaDB");
    sbuf who = SBUF_INIT;
    account(m, cfg->source.user, &who);
    int missing = 0;
    for (size_t i = 0; i < sizeof probes / sizeof probes[0]; i++) {
        const struct probe *pr = &probes[i];
        if (pr->mysql_only && mariadb) continue;
        unsigned e = 0;
        const char *msg = "";
        if (!pr->sql) {
            char file[512];
            unsigned long long pos;
            if (db_binlog_status(m, file, sizeof file, &pos, err, sizeof err) < 0)
                e = mysql_errno(m), msg = err;
        } else if (mysql_query(m, pr->sql) != 0) {
            e = mysql_errno(m);
            snprintf(err, sizeof err, "%s", mysql_error(m));
            msg = err;
        } else {
            MYSQL_RES *r = mysql_store_result(m);
            if (r) mysql_free_result(r);
        }
        if (!e) continue;
        const char *grant = mariadb ? pr->mariadb : pr->mysql;
        if (!refused(pr, e) || !grant) {
            fprintf(out, "searchsync config check: %s on the source failed: %s (%u)\n",
                    pr->sql ? pr->sql : "reading the binlog position", msg, e);
        } else {
            fprintf(out, "searchsync config check: the [source] user %s lacks %s on %s: %s. "
                         "Grant it (as an administrator): GRANT %s ON *.* TO %s;\n",
                    who.data, grant, mariadb ? "MariaDB" : "MySQL", pr->why, grant, who.data);
        }
        missing++;
    }
    sbuf_free(&who);
    db_close(m);
    return missing ? 1 : 0;
}
