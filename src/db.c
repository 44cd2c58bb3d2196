/* db: query connections and the metadata schema migrations (see db.h). */
#include "db.h"

#include <errmsg.h>
#include <mysqld_error.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cred_refused.h"
#include "log.h"
#include "sbuf.h"

db_params db_params_source(const struct ss_config *c) {
    db_params p = {"source", c->source.host, c->source.port, c->source.socket, c->source.user,
                   c->source.password, NULL, c->source.connect_timeout_ms,
                   c->source.read_timeout_ms, NULL, NULL, db_tls_source(c), false};
    return p;
}

db_params db_params_metadata(const struct ss_config *c) {
    db_params p = db_params_source(c);
    p.role = "metadata";
    p.cred_section = p.addr_section = "source";
    if (c->metadata.host) p.host = c->metadata.host, p.socket = c->metadata.socket;
    if (c->metadata.port) p.port = c->metadata.port;
    if (c->metadata.socket) p.socket = c->metadata.socket;
    if (c->metadata.host || c->metadata.port || c->metadata.socket) p.addr_section = "metadata";
    if (c->metadata.user) p.user = c->metadata.user, p.password = c->metadata.password;
    if (c->metadata.password) p.password = c->metadata.password;
    if (c->metadata.user || c->metadata.password) p.cred_section = "metadata";
    p.tls = db_tls_metadata(c);
    return p;
}

static const char *where(const db_params *p, char *buf, size_t n) {
    if (p->socket && *p->socket)
        snprintf(buf, n, "%s", p->socket);
    else
        snprintf(buf, n, "%s:%d", p->host ? p->host : "127.0.0.1", p->port);
    return buf;
}

MYSQL *db_connect(const db_params *p, char *err, size_t errlen) {
    MYSQL *m = mysql_init(NULL);
    if (!m) {
        errf(err, errlen, "mysql_init failed (out of memory)");
        return NULL;
    }
    unsigned int ct = (unsigned)(p->connect_timeout_ms + 999) / 1000;
    unsigned int rt = (unsigned)(p->read_timeout_ms + 999) / 1000;
    my_bool off = 0;
    mysql_options(m, MYSQL_OPT_CONNECT_TIMEOUT, &ct);
    mysql_options(m, MYSQL_OPT_READ_TIMEOUT, &rt);
    mysql_options(m, MYSQL_OPT_WRITE_TIMEOUT, &rt);
    mysql_options(m, MYSQL_OPT_RECONNECT, &off);
    mysql_options(m, MYSQL_SET_CHARSET_NAME, "utf8mb4");
    mysql_options(m, MYSQL_INIT_COMMAND, "SET time_zone = '+00:00'");
    if (p->role && !strcmp(p->role, "source")) /* db_snapshot_begin() needs it */
        mysql_options(m, MYSQL_INIT_COMMAND,
                      "SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ");
    const char *host = p->socket && *p->socket ? "localhost" : (p->host ? p->host : "127.0.0.1");
    db_tls_apply(m, &p->tls);
    if (!mysql_real_connect(m, host, p->user, p->password ? p->password : "", p->database,
                            (unsigned)p->port, p->socket && *p->socket ? p->socket : NULL,
                            CLIENT_MULTI_RESULTS)) {
        char w[300];
        unsigned e = mysql_errno(m);
        const char *cred = p->cred_section ? p->cred_section : p->role;
        const char *addr = p->addr_section ? p->addr_section : p->role;
        char h[640];
        if (p->tls.section && db_tls_hint(&p->tls, e, mysql_error(m), h, sizeof h))
            ;
        else if (p->candidate)
            snprintf(h, sizeof h, "%s",
                     e == 1045 || e == 1698 ? "check the user and password given"
                     : e == 2002 || e == 2003 || e == 2005
                         ? "is the server running and reachable at the host and port given?"
                         : "see the server's error");
        else if (e == 1045 || e == 1044 || e == 1698) {
            if (e != 1044) cred_refused_note(); /* 1044: a database not granted */
            int k = snprintf(h, sizeof h, "check the user and password in the [%s] section%s%s%s",
                             cred, strcmp(cred, p->role) ? " (the " : "",
                             strcmp(cred, p->role) ? p->role : "",
                             strcmp(cred, p->role)
                                 ? " connection uses them: it sets no user of its own)"
                                 : "");
            /* a fresh install's anonymous ''@'localhost' (or ''@'<hostname>')
             * is more specific than 'USER'@'%', so the server picks it and
             * refuses a right password */
            if (e == 1045 && k > 0 && (size_t)k < sizeof h)
                snprintf(h + k, sizeof h - (size_t)k,
                         "; if they are right, an anonymous account (user '') for this host "
                         "may be taken before '%s'@'%%': list them with SELECT user, host FROM "
                         "mysql.user WHERE user = '' and drop them (DROP USER ''@'localhost')",
                         p->user ? p->user : "");
        }
        else if (e == 1049)
            snprintf(h, sizeof h, "create the database or fix [%s] database", p->role);
        else if (e == 2002 || e == 2003 || e == 2005)
            snprintf(h, sizeof h, "is the server running and reachable? check [%s] "
                     "host/port/socket", addr);
        else
            snprintf(h, sizeof h, "see the server's error above; settings are in [%s]", p->role);
        errf(err, errlen, "cannot connect to the %s server %s as %s: %s (%u); %s", p->role,
               where(p, w, sizeof w), p->user ? p->user : "(no user)", mysql_error(m), e, h);
        mysql_close(m);
        return NULL;
    }
    char w[300];
    if (p->tls.section && db_tls_check(m, &p->tls, p->role, where(p, w, sizeof w), err, errlen) < 0) {
        mysql_close(m);
        return NULL;
    }
    return m;
}

void db_close(MYSQL *m) {
    if (m) mysql_close(m);
}

int db_ensure(MYSQL **m, const db_params *p, char *err, size_t errlen) {
    if (*m && mysql_ping(*m) == 0) return 0;
    if (*m) {
        log_warn("db", "%s connection lost (%s); reconnecting", p->role, mysql_error(*m));
        mysql_close(*m);
    }
    *m = db_connect(p, err, errlen);
    return *m ? 0 : -1;
}

bool db_conn_lost(MYSQL *m) {
    if (!m) return true;
    switch (mysql_errno(m)) {
    case CR_SERVER_GONE_ERROR:
    case CR_SERVER_LOST:
    case CR_SERVER_LOST_EXTENDED:
    case CR_CONNECTION_ERROR:
    case CR_CONN_HOST_ERROR:
    case ER_SERVER_SHUTDOWN:
    case ER_CONNECTION_KILLED:
        return true;
    default: /* a prepared statement's error stays on the statement: ask the server */
        return mysql_ping(m) != 0;
    }
}

int db_exec(MYSQL *m, const char *sql, char *err, size_t errlen) {
    if (mysql_query(m, sql) != 0) {
        errf(err, errlen, "query failed: %s (%u): %.300s", mysql_error(m), mysql_errno(m), sql);
        return -1;
    }
    db_drain(m);
    return 0;
}

long long db_exec_rows(MYSQL *m, const char *sql, char *err, size_t errlen) {
    if (mysql_query(m, sql) != 0) {
        errf(err, errlen, "query failed: %s (%u): %.300s", mysql_error(m), mysql_errno(m), sql);
        return -1;
    }
    long long n = (long long)mysql_affected_rows(m); /* before anything resets it */
    db_drain(m);
    return n;
}

void db_drain(MYSQL *m) {
    do {
        MYSQL_RES *r = mysql_store_result(m);
        if (r) mysql_free_result(r);
    } while (mysql_next_result(m) == 0);
}

MYSQL_RES *db_query(MYSQL *m, const char *sql, size_t len, char *err, size_t errlen) {
    if (!len) len = strlen(sql);
    if (!m || mysql_real_query(m, sql, len) != 0) {
        errf(err, errlen, "query failed: %s (%u): %.300s", m ? mysql_error(m) : "no connection",
             m ? mysql_errno(m) : 0, sql);
        return NULL;
    }
    MYSQL_RES *r = mysql_store_result(m);
    if (!r)
        errf(err, errlen, "reading the result failed: %s (%u): %.300s",
             mysql_errno(m) ? mysql_error(m) : "the statement returns no rows", mysql_errno(m),
             sql);
    return r;
}

int db_row1(MYSQL *m, const char *sql, size_t len, char **out, int n, char *err, size_t errlen) {
    for (int i = 0; i < n; i++) out[i] = NULL;
    MYSQL_RES *r = db_query(m, sql, len, err, errlen);
    if (!r) return -1;
    MYSQL_ROW row = mysql_fetch_row(r);
    if (row) {
        unsigned long *lens = mysql_fetch_lengths(r);
        for (int i = 0; i < n && i < (int)mysql_num_fields(r); i++)
            out[i] = row[i] ? xstrndup(row[i], lens[i]) : NULL;
    }
    mysql_free_result(r);
    return row ? 1 : 0;
}

void db_row_free(char **out, int n) {
    for (int i = 0; i < n; i++) free(out[i]), out[i] = NULL;
}

int db_binlog_file_kept(MYSQL *m, const char *file, size_t n, char *err, size_t errlen) {
    MYSQL_RES *res = db_query(m, "SHOW BINARY LOGS", 0, err, errlen);
    if (!res) return -1;
    int kept = 0;
    MYSQL_ROW row;
    while (!kept && (row = mysql_fetch_row(res)))
        kept = row[0] && strlen(row[0]) == n && !strncmp(row[0], file, n);
    mysql_free_result(res);
    return kept;
}

const char *db_binlog_status_sql(bool mariadb, unsigned long version, int attempt) {
    const char *newer = mariadb ? "SHOW BINLOG STATUS" : "SHOW BINARY LOG STATUS";
    bool has_newer = mariadb ? version >= 100502 : version >= 80200;
    if (attempt == 0) return has_newer ? newer : "SHOW MASTER STATUS";
    if (attempt == 1) return has_newer ? "SHOW MASTER STATUS" : newer;
    return NULL;
}

bool db_binlog_status_retry(unsigned errcode) {
    return errcode == ER_PARSE_ERROR || errcode == ER_NOT_SUPPORTED_YET;
}

int db_binlog_status(MYSQL *m, char *file, size_t filelen, unsigned long long *pos, char *err,
                     size_t errlen) {
    const char *info = mysql_get_server_info(m);
    bool mariadb = info && strstr(info, "MariaDB");
    unsigned long version = mysql_get_server_version(m);
    const char *q = NULL;
    for (int attempt = 0; (q = db_binlog_status_sql(mariadb, version, attempt)); attempt++) {
        if (mysql_query(m, q) == 0) break;
        unsigned e = mysql_errno(m);
        if (!db_binlog_status_retry(e) || !db_binlog_status_sql(mariadb, version, attempt + 1)) {
            errf(err, errlen, "reading the source's binlog position (%s): %s (%u)%s", q,
                 mysql_error(m), e,
                 e == ER_SPECIFIC_ACCESS_DENIED_ERROR || e == ER_DBACCESS_DENIED_ERROR
                     ? "; the user needs the REPLICATION CLIENT privilege (MariaDB 10.5+: "
                       "BINLOG MONITOR)"
                     : "");
            return -1;
        }
    }
    MYSQL_RES *r = mysql_store_result(m);
    if (!r && mysql_errno(m)) {
        errf(err, errlen, "reading the source's binlog position (%s): %s (%u)", q,
             mysql_error(m), mysql_errno(m));
        return -1;
    }
    MYSQL_ROW row = r ? mysql_fetch_row(r) : NULL;
    int found = 0;
    if (row && row[0] && row[0][0] && row[1] && strlen(row[0]) < filelen) {
        snprintf(file, filelen, "%s", row[0]);
        *pos = strtoull(row[1], NULL, 10);
        found = 1;
    }
    if (r) mysql_free_result(r);
    if (!found)
        errf(err, errlen, "the source reports no binlog position (%s returned no row): its "
             "binary log is off; start it with --log-bin --binlog-format=ROW", q);
    return found;
}

int db_snapshot_begin(MYSQL *m, char *file, size_t filelen, unsigned long long *pos, char *err,
                      size_t errlen) {
    /* source connections are REPEATABLE READ (db_connect), so the snapshot
     * holds for every query until db_snapshot_end() */
    if (db_exec(m, "START TRANSACTION WITH CONSISTENT SNAPSHOT", err, errlen) < 0) return -1;
    MYSQL_RES *r = db_query(m, "SHOW STATUS LIKE 'binlog_snapshot_%'", 0, err, errlen);
    if (!r) return -1;
    bool have_file = false, have_pos = false;
    MYSQL_ROW row;
    while ((row = mysql_fetch_row(r))) {
        if (!row[0] || !row[1]) continue;
        if (!strcasecmp(row[0], "Binlog_snapshot_file") && row[1][0]) {
            snprintf(file, filelen, "%s", row[1]);
            have_file = true;
        } else if (!strcasecmp(row[0], "Binlog_snapshot_position")) {
            *pos = strtoull(row[1], NULL, 10);
            have_pos = true;
        }
    }
    mysql_free_result(r);
    return have_file && have_pos ? 1 : 0;
}

long long db_commit_hold_ms(MYSQL *m) {
    char err[256];
    MYSQL_RES *r = db_query(m, "SHOW GLOBAL VARIABLES LIKE 'rpl\\_semi\\_sync\\_%'", 0, err,
                            sizeof err);
    if (!r) return -1;
    bool on = false, after_sync = false;
    long long timeout = 0;
    MYSQL_ROW row;
    while ((row = mysql_fetch_row(r))) {
        if (!row[0] || !row[1]) continue;
        const char *n = row[0];
        /* the master's (source's) variables, not the replica's */
        if (strncmp(n, "rpl_semi_sync_master_", 21) && strncmp(n, "rpl_semi_sync_source_", 21))
            continue;
        n += 21;
        if (!strcmp(n, "enabled"))
            on = on || !strcasecmp(row[1], "ON") || !strcmp(row[1], "1");
        else if (!strcmp(n, "wait_point"))
            after_sync = after_sync || !strcasecmp(row[1], "AFTER_SYNC");
        else if (!strcmp(n, "timeout") && strtoll(row[1], NULL, 10) > timeout)
            timeout = strtoll(row[1], NULL, 10);
    }
    mysql_free_result(r);
    return on && after_sync ? timeout : 0;
}

int db_wait_binlogged_committed(MYSQL *m, int timeout_s, sbuf *owned, char *err, size_t errlen) {
    /* a GTID is owned from its assignment (before the transaction's binlog
     * write) until the commit adds it to gtid_executed ("uuid:gno#thread,
     * ..."): what is owned now holds every transaction of the binlog so far
     * that a snapshot could not see yet */
    sbuf_reset(owned);
    const char *info = mysql_get_server_info(m);
    if (info && strstr(info, "MariaDB")) return 1; /* its snapshots report their position */
    char *v = NULL;
    if (db_row1(m, "SELECT @@GLOBAL.gtid_owned", 0, &v, 1, err, errlen) < 0) return -1;
    for (const char *c = v ? v : ""; *c; c++) {
        if (*c == '#') {
            while (c[1] >= '0' && c[1] <= '9') c++;
        } else if (*c != ' ' && *c != '\n' && *c != '\r') {
            sbuf_addc(owned, *c);
        }
    }
    free(v);
    if (!owned->len) return 1;
    sbuf q = SBUF_INIT;
    sbuf_adds(&q, "SELECT WAIT_FOR_EXECUTED_GTID_SET(");
    db_quote(m, &q, owned->data, owned->len);
    sbuf_printf(&q, ", %d)", timeout_s);
    char *got = db_scalar(m, q.data, err, errlen);
    sbuf_free(&q);
    int rc = !got ? -1 : strcmp(got, "0") == 0 ? 1 : 0;
    free(got);
    return rc;
}

void db_snapshot_end(MYSQL *m) {
    if (mysql_query(m, "COMMIT") == 0) {
        MYSQL_RES *r = mysql_store_result(m);
        if (r) mysql_free_result(r);
    }
}

char *db_scalar(MYSQL *m, const char *sql, char *err, size_t errlen) {
    MYSQL_RES *r = db_query(m, sql, 0, err, errlen);
    char *out = NULL;
    if (!r) return NULL;
    {
        MYSQL_ROW row = mysql_fetch_row(r);
        unsigned long *len = mysql_fetch_lengths(r);
        if (row && row[0]) out = xstrndup(row[0], len[0]);
        mysql_free_result(r);
    }
    if (!out) errf(err, errlen, "no value");
    return out;
}

void db_quote(MYSQL *m, sbuf *sql, const char *s, size_t n) {
    sbuf_grow(sql, 2 * n + 3);
    sql->data[sql->len++] = '\'';
    if (m) {
        sql->len += mysql_real_escape_string(m, sql->data + sql->len, s, (unsigned long)n);
    } else {
        /* no connection (it was lost and is not back yet): escape as the
         * server would for utf8mb4, which every connection here uses (UTF-8
         * continuation bytes never equal these ASCII ones). libmariadb's
         * mysql_escape_string() is no substitute: it dereferences a default
         * charset that is unset before the first connection (segfault). */
        for (size_t i = 0; i < n; i++) {
            char c = s[i], e = 0;
            switch (c) {
            case '\0': e = '0'; break;
            case '\n': e = 'n'; break;
            case '\r': e = 'r'; break;
            case '\\': e = '\\'; break;
            case '\'': e = '\''; break;
            case '"': e = '"'; break;
            case '\032': e = 'Z'; break;
            }
            if (e) {
                sql->data[sql->len++] = '\\';
                sql->data[sql->len++] = e;
            } else {
                sql->data[sql->len++] = c;
            }
        }
    }
    sql->data[sql->len++] = '\'';
    sql->data[sql->len] = '\0';
}

void db_ident(sbuf *sql, const char *name) {
    sbuf_addc(sql, '`');
    for (const char *p = name; *p; p++) {
        if (*p == '`') sbuf_addc(sql, '`');
        sbuf_addc(sql, *p);
    }
    sbuf_addc(sql, '`');
}

void db_select_from(sbuf *sql, const char *column, const char *db, const char *table) {
    sbuf_adds(sql, "SELECT ");
    db_ident(sql, column);
    sbuf_adds(sql, " FROM ");
    db_ident(sql, db);
    sbuf_addc(sql, '.');
    db_ident(sql, table);
}

MYSQL *metadb_open(const struct ss_config *cfg, char *err, size_t errlen) {
    db_params p = db_params_metadata(cfg);
    MYSQL *m = db_connect(&p, err, errlen);
    if (m && metadb_migrate(m, cfg->metadata.database, err, errlen) < 0) {
        db_close(m);
        m = NULL;
    }
    return m;
}

int metadb_version(MYSQL *m, const char *database) {
    sbuf q = SBUF_INIT;
    sbuf_adds(&q, "SELECT COALESCE(MAX(version), 0) FROM ");
    db_ident(&q, database);
    sbuf_adds(&q, ".schema_migrations");
    char err[256];
    char *v = db_scalar(m, q.data, err, sizeof err);
    sbuf_free(&q);
    int n = v ? atoi(v) : -1;
    free(v);
    return n;
}

/* Run one migration's statements: split at ';' that ends a line. */
static int run_script(MYSQL *m, const struct migration *mg, char *err, size_t errlen) {
    const char *p = mg->sql;
    sbuf stmt = SBUF_INIT;
    int rc = 0;
    while (*p && rc == 0) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        const char *line = p;
        p += len + (nl ? 1 : 0);
        size_t l = len;
        while (l && (line[l - 1] == ' ' || line[l - 1] == '\t' || line[l - 1] == '\r')) l--;
        const char *t = line;
        while (t < line + l && (*t == ' ' || *t == '\t')) t++;
        if (t + 2 <= line + l && t[0] == '-' && t[1] == '-' && stmt.len == 0) continue;
        sbuf_add(&stmt, line, l);
        sbuf_addc(&stmt, '\n');
        if (l && line[l - 1] == ';') {
            stmt.data[stmt.len - 2] = '\0';
            stmt.len -= 2;
            bool failed = db_exec(m, stmt.data, err, errlen) < 0;
            unsigned e = failed ? mysql_errno(m) : 0;
            if (failed && (e == 1060 /* ER_DUP_FIELDNAME */ || e == 1061 /* ER_DUP_KEYNAME */)) {
                /* a migration cut off after this statement (DDL commits
                 * at once) and applied again: the column or index is
                 * there. (Not ADD COLUMN IF NOT EXISTS: MySQL has none.) */
                log_debug("metadata", "migration %04d_%s: %s (already there)", mg->version,
                          mg->name, err);
            } else if (failed) {
                char e2[512];
                snprintf(e2, sizeof e2, "%s", err);
                errf(err, errlen, "metadata migration %04d_%s: %s", mg->version, mg->name, e2);
                rc = -1;
            }
            sbuf_reset(&stmt);
        }
    }
    sbuf_free(&stmt);
    return rc;
}

int metadb_migrate(MYSQL *m, const char *database, char *err, size_t errlen) {
    sbuf q = SBUF_INIT;
    int rc = -1;
    char *got = NULL;
    /* created only when missing: CREATE ... IF NOT EXISTS of what exists is
     * still a binlog event, and with the metadata on the source every
     * command (status too) would add one to the binlog the daemon reads */
    if (mysql_select_db(m, database) != 0) {
        if (mysql_errno(m) != 1049 /* ER_BAD_DB_ERROR */) {
            errf(err, errlen, "cannot use metadata database %s: %s", database, mysql_error(m));
            goto out;
        }
        sbuf_adds(&q, "CREATE DATABASE IF NOT EXISTS ");
        db_ident(&q, database);
        sbuf_adds(&q, " CHARACTER SET utf8mb4 COLLATE utf8mb4_bin");
        if (db_exec(m, q.data, err, errlen) < 0) goto out;
        if (mysql_select_db(m, database) != 0) {
            errf(err, errlen, "cannot use metadata database %s: %s", database, mysql_error(m));
            goto out;
        }
    }
    got = db_scalar(m, "SELECT GET_LOCK('searchsync.migrate', 60)", err, errlen);
    if (!got || strcmp(got, "1") != 0) {
        errf(err, errlen, "another node holds the migration lock of %s for over 60 s; retry",
               database);
        goto out;
    }
    free(got);
    got = db_scalar(m, "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = "
                       "DATABASE() AND TABLE_NAME = 'schema_migrations'",
                    err, errlen);
    if (!got) goto unlock;
    if (strcmp(got, "0") == 0 &&
        db_exec(m,
                "CREATE TABLE IF NOT EXISTS schema_migrations ("
                " version INT NOT NULL PRIMARY KEY,"
                " name VARCHAR(200) NOT NULL,"
                " applied_at TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3)"
                ") ENGINE=InnoDB",
                err, errlen) < 0)
        goto unlock;
    /* which versions are applied: any missing one is applied, in order */
    if (mysql_query(m, "SELECT version FROM schema_migrations ORDER BY version") != 0) {
        errf(err, errlen, "cannot read %s.schema_migrations: %s", database, mysql_error(m));
        goto unlock;
    }
    MYSQL_RES *res = mysql_store_result(m);
    int applied[1024], napplied = 0;
    MYSQL_ROW row;
    while (res && (row = mysql_fetch_row(res)) && napplied < 1024) applied[napplied++] = atoi(row[0]);
    if (res) mysql_free_result(res);
    int newest = nmigrations ? migrations[nmigrations - 1].version : 0;
    if (napplied && applied[napplied - 1] > newest) {
        errf(err, errlen,
               "metadata schema %s is at version %d, newer than this binary knows (%d): a "
               "newer searchsync migrated it. Run that version on this node too (nothing was "
               "changed; a schema is never migrated down), or, to go back to this one, restore "
               "the backup of %s taken before the upgrade (docs/operations.md, Upgrades)",
               database, applied[napplied - 1], newest, database);
        goto unlock;
    }
    for (int i = 0; i < nmigrations; i++) {
        const struct migration *mg = &migrations[i];
        bool done = false;
        for (int j = 0; j < napplied && !done; j++) done = applied[j] == mg->version;
        if (done) continue;
        log_info("metadata", "applying migration %04d_%s to %s", mg->version, mg->name, database);
        if (run_script(m, mg, err, errlen) < 0) goto unlock;
        sbuf_reset(&q);
        sbuf_printf(&q, "INSERT INTO schema_migrations (version, name) VALUES (%d, ", mg->version);
        db_quote(m, &q, mg->name, strlen(mg->name));
        sbuf_addc(&q, ')');
        if (db_exec(m, q.data, err, errlen) < 0) goto unlock;
    }
    rc = 0;
unlock:
    free(db_scalar(m, "SELECT RELEASE_LOCK('searchsync.migrate')", (char[64]){0}, 64));
out:
    free(got);
    sbuf_free(&q);
    return rc;
}

int db_check_row_binlog(MYSQL *m, char *err, size_t errlen) {
    MYSQL_RES *r = db_query(m, "SELECT @@global.log_bin, @@global.binlog_format", 0, err, errlen);
    if (!r) return -1;
    MYSQL_ROW row = mysql_fetch_row(r);
    int rc = 0;
    if (!row || !row[0] || !row[1]) {
        rc = errf(err, errlen, "the source did not say whether its binary log is on");
    } else if (strcmp(row[0], "1") != 0) {
        errf(err, errlen, "the source's binary log is off (log_bin = 0): start it with "
             "--log-bin --binlog-format=ROW --binlog-row-metadata=FULL (docs/operations.md, "
             "\"Preparing the source server\")");
        rc = 1;
    } else if (strcasecmp(row[1], "ROW") != 0) {
        errf(err, errlen, "the source's binlog_format is %s; searchsync reads ROW events only: "
             "SET GLOBAL binlog_format = ROW, and binlog-format = ROW in the server's "
             "configuration (docs/operations.md, \"Preparing the source server\")", row[1]);
        rc = 1;
    }
    mysql_free_result(r);
    return rc;
}
