/* db_tls: TLS of the connections to MySQL/MariaDB — the replica stream
 * (src/binlog/reader.c) and the query connections (src/db.c) — from the
 * [source] / [metadata] ssl_mode, ssl_ca, ssl_cert and ssl_key keys.
 *
 * libmariadb's own switches do not map one to one on the modes: it verifies
 * the chain whenever a CA is given, checks the host name only with
 * MYSQL_OPT_SSL_VERIFY_SERVER_CERT, and with MYSQL_OPT_SSL_ENFORCE alone
 * still connects in the clear to a server without TLS. So `required` (and
 * up) is checked after the connect too (db_tls_check). */
#ifndef SS_DB_TLS_H
#define SS_DB_TLS_H
#include <stddef.h>

#include <mysql.h>

struct ss_config;

struct db_tls {
    const char *section; /* "source" or "metadata": named in messages */
    const char *mode;    /* disabled|preferred|required|verify_ca|verify_identity; NULL = preferred */
    const char *ca, *cert, *key;
};

struct db_tls db_tls_source(const struct ss_config *c);
/* [metadata]'s own when its ssl_mode is set, else [source]'s */
struct db_tls db_tls_metadata(const struct ss_config *c);
/* Set m's TLS options (before mysql_real_connect). */
void db_tls_apply(MYSQL *m, const struct db_tls *t);
/* After a successful connect: 0, or -1 with err when the mode requires TLS
 * and the server did not offer it (the caller closes m). host: for the message. */
int db_tls_check(MYSQL *m, const struct db_tls *t, const char *role, const char *host,
                 char *err, size_t errlen);
/* What to do after a failed connect with error code e and message msg, in
 * buf; NULL when it is not TLS's (CR_SSL_CONNECTION_ERROR: the certificate
 * not trusted, expired, not naming the host; TLS required and not offered). */
const char *db_tls_hint(const struct db_tls *t, unsigned e, const char *msg, char *buf, size_t n);

#endif
