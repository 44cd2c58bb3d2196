/* db_tls: ssl_mode and friends onto libmariadb (see db_tls.h). */
#include "db_tls.h"

#include <errmsg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "config.h"
#include "sbuf.h"

#define SYSTEM_CA_PATH "/etc/ssl/certs" /* Debian's; the system's CAs when ssl_ca is empty */

struct db_tls db_tls_source(const struct ss_config *c) {
    struct db_tls t = {"source", c->source.ssl_mode, c->source.ssl_ca, c->source.ssl_cert,
                       c->source.ssl_key};
    return t;
}

struct db_tls db_tls_metadata(const struct ss_config *c) {
    if (!c->metadata.ssl_mode) return db_tls_source(c);
    struct db_tls t = {"metadata", c->metadata.ssl_mode, c->metadata.ssl_ca,
                       c->metadata.ssl_cert, c->metadata.ssl_key};
    return t;
}

static bool is(const struct db_tls *t, const char *mode) {
    return !strcmp(t->mode ? t->mode : "preferred", mode);
}
static bool requires_tls(const struct db_tls *t) {
    return is(t, "required") || is(t, "verify_ca") || is(t, "verify_identity");
}

void db_tls_apply(MYSQL *m, const struct db_tls *t) {
    my_bool on = 1, off = 0;
    if (is(t, "disabled")) {
        mysql_optionsv(m, MYSQL_OPT_SSL_ENFORCE, &off);
        return;
    }
    /* preferred and up: TLS when the server offers it */
    mysql_ssl_set(m, t->key, t->cert, t->ca, NULL, NULL);
    if (!t->ca && (is(t, "verify_ca") || is(t, "verify_identity")))
        mysql_optionsv(m, MYSQL_OPT_SSL_CAPATH, SYSTEM_CA_PATH);
    if (requires_tls(t)) mysql_optionsv(m, MYSQL_OPT_SSL_ENFORCE, &on);
    mysql_optionsv(m, MYSQL_OPT_SSL_VERIFY_SERVER_CERT, is(t, "verify_identity") ? &on : &off);
}

int db_tls_check(MYSQL *m, const struct db_tls *t, const char *role, const char *host,
                 char *err, size_t errlen) {
    if (!requires_tls(t) || mysql_get_ssl_cipher(m)) return 0;
    return errf(err, errlen, "the %s server %s does not offer TLS, and [%s] ssl_mode = %s "
                "requires it: enable TLS on the server (ssl_cert and ssl_key in its my.cnf) or "
                "set [%s] ssl_mode = preferred", role, host, t->section,
                t->mode ? t->mode : "preferred", t->section);
}

const char *db_tls_hint(const struct db_tls *t, unsigned e, const char *msg, char *buf, size_t n) {
    if (e != CR_SSL_CONNECTION_ERROR) return NULL;
    if (msg && strstr(msg, "does not support"))
        snprintf(buf, n, "the server does not offer TLS, and [%s] ssl_mode = %s requires it: "
                 "enable TLS on the server or set [%s] ssl_mode = preferred", t->section,
                 t->mode ? t->mode : "preferred", t->section);
    else
        snprintf(buf, n, "the TLS connection failed: check [%s] ssl_ca (the CA that signed the "
                 "server's certificate%s) and ssl_cert/ssl_key, or [%s] ssl_mode", t->section,
                 is(t, "verify_identity") ? ", which must name the host connected to" : "",
                 t->section);
    return buf;
}
