/* db: connections to MySQL/MariaDB for queries (not the binlog stream).
 *
 * One place sets what every query connection needs: utf8mb4, UTC session
 * time zone (TIMESTAMP values then read back as UTC), timeouts, and error
 * messages that name the server, the account and what to do. Connections are
 * not auto-reconnected by the library (a silent reconnect loses session
 * state); callers reconnect with db_ensure(). */
#ifndef SS_DB_H
#define SS_DB_H
#include <stdbool.h>
#include <stddef.h>

#include <mysql.h>

#include "config.h"
#include "db_tls.h"

typedef struct db_params {
    const char *role; /* "source" or "metadata": named in messages */
    const char *host;
    int port;
    const char *socket;
    const char *user;
    const char *password;
    const char *database; /* may be NULL */
    int connect_timeout_ms;
    int read_timeout_ms;
    /* the sections the user/password and the host/port/socket come from,
     * when not role's own ([metadata] without a user uses [source]'s); NULL: role */
    const char *cred_section, *addr_section;
    struct db_tls tls; /* ssl_mode, ssl_ca, ... of [source] or [metadata] */
    /* a server tried before it is configured (`searchsync source add`): a
     * refused login is the values given, not this process's configuration
     * (cred_refused.h is not told), and the hint names them, not a section */
    bool candidate;
} db_params;

db_params db_params_source(const struct ss_config *c);
db_params db_params_metadata(const struct ss_config *c); /* database not selected */

MYSQL *db_connect(const db_params *p, char *err, size_t errlen);
void db_close(MYSQL *m); /* NULL-safe */
/* Reconnect *m if its connection is gone (server restart, idle timeout). */
int db_ensure(MYSQL **m, const db_params *p, char *err, size_t errlen);
/* After a failed call on m: did it fail because the connection is gone
 * (server restarting or shut down, connection killed, network), rather than
 * because of the statement? A NULL m counts as gone. Pings m when its error
 * does not tell. */
bool db_conn_lost(MYSQL *m);
int db_exec(MYSQL *m, const char *sql, char *err, size_t errlen);
/* The same, returning the rows the statement changed (-1 on error). */
long long db_exec_rows(MYSQL *m, const char *sql, char *err, size_t errlen);
/* Read and free every result set a statement just answered left on m, so the
 * connection takes the next one (after mysql_query, or after
 * mysql_read_query_result of a statement sent with mysql_send_query). */
void db_drain(MYSQL *m);
/* Run a statement that returns rows and fetch them all: the result (free
 * with mysql_free_result), or NULL with err naming the statement. len 0:
 * strlen(sql). */
MYSQL_RES *db_query(MYSQL *m, const char *sql, size_t len, char *err, size_t errlen);
/* db_query for one row: its first n cells copied into out[0..n) (malloc'd,
 * NULL for SQL NULL and for cells the result lacks). 1 a row, 0 none, -1
 * error (err as db_query's). Free the cells with db_row_free. */
int db_row1(MYSQL *m, const char *sql, size_t len, char **out, int n, char *err, size_t errlen);
void db_row_free(char **out, int n);
/* Reads whose rows must not all be held at once (a table's every key, pages
 * of rows, dead-letter bodies) stream them with mysql_use_result instead,
 * and say so where they do. */
/* First column of the first row as text, or NULL (caller frees). */
char *db_scalar(MYSQL *m, const char *sql, char *err, size_t errlen);
/* A read snapshot and the binlog position it matches: until db_snapshot_end()
 * every query on m sees exactly the transactions committed up to (file, pos)
 * and none after. MariaDB (and Percona Server) report that position for
 * START TRANSACTION WITH CONSISTENT SNAPSHOT (Binlog_snapshot_file/_position);
 * SHOW MASTER STATUS cannot stand in for it, because a transaction is in the
 * binlog a moment before its rows are visible. m must be a source connection
 * (db_connect makes those REPEATABLE READ). 1 the position is in file/pos,
 * 0 the server does not report one (the snapshot is still open), -1 error. */
int db_snapshot_begin(MYSQL *m, char *file, size_t filelen, unsigned long long *pos, char *err,
                      size_t errlen);
void db_snapshot_end(MYSQL *m); /* COMMIT; a broken connection shows at the next query */
struct sbuf;
/* How long server m may hold a commit after writing it to the binlog,
 * before its rows are visible: lossless semi-sync replication (wait point
 * AFTER_SYNC, MariaDB's rpl_semi_sync_master_*, MySQL's
 * rpl_semi_sync_source_* or _master_*) waits up to its timeout for a
 * replica's acknowledgement there. Milliseconds, 0 none (off, AFTER_COMMIT,
 * no such variables), -1 the query failed. */
long long db_commit_hold_ms(MYSQL *m);
/* MySQL, where db_snapshot_begin has no position to report: wait until every
 * transaction already in the binlog is committed, so that a snapshot taken
 * next sees them all. MySQL writes a transaction to the binlog (its end then
 * shows in SHOW MASTER STATUS) a moment before the commit makes its rows
 * visible; meanwhile the transaction's GTID is owned (@@GLOBAL.gtid_owned),
 * and it is in gtid_executed once committed (WAIT_FOR_EXECUTED_GTID_SET, up
 * to timeout_s). Without GTIDs (gtid_mode OFF) nothing is owned: nothing to
 * wait for, nothing known. 1 done (nothing left uncommitted), 0 timed out
 * (*owned: the GTIDs still not executed, e.g. a session holding gtid_next),
 * -1 error (err). */
int db_wait_binlogged_committed(MYSQL *m, int timeout_s, struct sbuf *owned, char *err,
                                size_t errlen);
/* Is server m's binary log on and in ROW format (what searchsync reads)?
 * 0 yes, 1 no (err says what to set), -1 the question failed (err). */
int db_check_row_binlog(MYSQL *m, char *err, size_t errlen);
/* The binlog's current end (file, position) on server m. The statement has
 * three names: SHOW MASTER STATUS (MySQL before 8.4, MariaDB), SHOW BINARY
 * LOG STATUS (MySQL 8.2+; 8.4 dropped the old name) and SHOW BINLOG STATUS
 * (MariaDB 10.5.2+). The server's own is tried first, the other one when it
 * does not know that statement. 1 found, 0 the binlog is off (no row), -1
 * error (err names the statement and what to do). */
int db_binlog_status(MYSQL *m, char *file, size_t filelen, unsigned long long *pos, char *err,
                     size_t errlen);
/* Is binlog file `file` (n bytes of it) still on the server (SHOW BINARY
 * LOGS)? 1 yes, 0 no (purged), -1 error (err). */
int db_binlog_file_kept(MYSQL *m, const char *file, size_t n, char *err, size_t errlen);
/* db_binlog_status's choice: the statement to try at attempt 0, 1, ... on a
 * server of this kind and version (mysql_get_server_version: 80400 for
 * 8.4.0; 0 unknown), NULL when none is left. */
const char *db_binlog_status_sql(bool mariadb, unsigned long version, int attempt);
/* ... and whether a failure with this error code means "try the next one"
 * (the server does not know the statement), not a reason to stop. */
bool db_binlog_status_retry(unsigned errcode);
/* Append a quoted, escaped string literal to sql (for identifiers use db_ident).
 * m may be NULL (a connection lost and not back yet): the text is escaped as
 * for utf8mb4, and the statement fails later at db_ensure, not here. */
struct sbuf;
void db_quote(MYSQL *m, struct sbuf *sql, const char *s, size_t n);
void db_ident(struct sbuf *sql, const char *name); /* `name` with ` doubled */
/* Append SELECT `column` FROM `db`.`table` (the rest of the query is the caller's) */
void db_select_from(struct sbuf *sql, const char *column, const char *db, const char *table);

/* Create (if missing) and migrate the metadata schema to the newest version
 * this binary knows (sql/migrations, embedded at build time), then select it.
 * Safe to run from several nodes at once (GET_LOCK). */
int metadb_migrate(MYSQL *m, const char *database, char *err, size_t errlen);
int metadb_version(MYSQL *m, const char *database); /* -1 if none */
/* A connection to the [metadata] server with the schema created or migrated
 * (metadb_migrate) and selected: what every command and the daemon start
 * with. NULL with err on failure. */
MYSQL *metadb_open(const struct ss_config *cfg, char *err, size_t errlen);

struct migration {
    int version;
    const char *name;
    const char *sql; /* statements separated by ';' at line ends */
};
extern const struct migration migrations[];
extern const int nmigrations;

#endif
