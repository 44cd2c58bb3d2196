/* ops_source_check: whether a server can be a source before it is recorded
 * (`searchsync source add` and edit, POST and PUT /api/v1/sources): asked of
 * the server itself, each refusal naming the thing and what to do, so that a
 * source that is added starts and reads rather than failing at its first
 * event. Owns the checks; sync/ops/ops_sources.c decides what follows. */
#include "sync/ops/ops_sources.h"

#include <mysqld_error.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db.h"
#include "source_grants.h"
#include "sync/mapping/mapping.h"
#include "sync/mapping/mapping_source.h"

static db_params candidate_params(const struct ops_env *env, const struct source_spec *s) {
    db_params p = {0};
    p.role = "source";
    p.host = s->host;
    p.port = s->port;
    p.user = s->user;
    p.password = s->password;
    p.connect_timeout_ms = 5000;
    p.read_timeout_ms = env->cfg->source.read_timeout_ms > 0 ? env->cfg->source.read_timeout_ms
                                                              : 30000;
    p.tls.section = "source";
    p.tls.mode = s->ssl_mode;
    p.tls.ca = s->ssl_ca;
    p.candidate = true;
    return p;
}

/* one row, its first cell; NULL when none */
static char *scalar(MYSQL *m, const char *sql) {
    char err[512];
    return db_scalar(m, sql, err, sizeof err);
}

/* the binlog: on, ROW, a full row image, and a server id of the server's
 * own unlike the one this source will read with */
static enum ops_status check_binlog(MYSQL *m, const struct source_spec *s, unsigned *sid,
                                    struct ops_err *e) {
    char err[1024];
    int rc = db_check_row_binlog(m, err, sizeof err);
    if (rc != 0)
        return ops_fail(e, rc > 0 ? OPS_INVALID : OPS_FAILED, OPS_AT_SOURCE, "source %s: %s",
                        s->name, err);
    char *img = scalar(m, "SELECT @@global.binlog_row_image");
    /* the reader builds documents from the whole row (before and after
     * images): MINIMAL leaves out the columns an update did not change */
    if (img && strcasecmp(img, "FULL") != 0) {
        ops_fail(e, OPS_INVALID, OPS_AT_SOURCE,
                 "source %s: the server's binlog_row_image is %s; searchsync needs whole rows: "
                 "SET GLOBAL binlog_row_image = FULL, and binlog-row-image = FULL in the server's "
                 "configuration (docs/operations.md, \"Preparing the source server\")",
                 s->name, img);
        free(img);
        return e->st;
    }
    free(img);
    char *own = scalar(m, "SELECT @@global.server_id");
    unsigned long srv = own ? strtoul(own, NULL, 10) : 0;
    free(own);
    if (!srv)
        return ops_fail(e, OPS_INVALID, OPS_AT_SOURCE,
                        "source %s: the server's server_id is 0, so it serves no replica: set "
                        "server_id (any number unused among its replicas) in its configuration "
                        "and restart it", s->name);
    if (s->server_id) {
        if ((unsigned long)s->server_id == srv)
            return ops_fail(e, OPS_INVALID, OPS_AT_NONE,
                            "source %s: server id %d is the server's own server_id: give "
                            "another (--server-id), unused among its replicas", s->name,
                            s->server_id);
        *sid = (unsigned)s->server_id;
    } else {
        /* a number of its own, from the name, away from the server's */
        unsigned h = 5381;
        for (const char *c = s->name; *c; c++) h = h * 33 + (unsigned char)*c;
        *sid = 100000 + h % 900000;
        if (*sid == srv) (*sid)++;
    }
    /* a replica connected with the same id would be cut off by ours, and ours
     * by it: MariaDB and MySQL list their connected replicas here */
    char q[128];
    snprintf(q, sizeof q, "SHOW SLAVE HOSTS");
    MYSQL_RES *r = s->own_replica ? NULL : db_query(m, q, 0, err, sizeof err);
    if (r) {
        MYSQL_ROW row;
        bool taken = false;
        while ((row = mysql_fetch_row(r)))
            if (row[0] && strtoul(row[0], NULL, 10) == *sid) taken = true;
        mysql_free_result(r);
        if (taken)
            return ops_fail(e, OPS_INVALID, OPS_AT_SOURCE,
                            "source %s: server id %u is taken by a replica connected to the "
                            "server (SHOW SLAVE HOSTS): give another with --server-id", s->name,
                            *sid);
    }
    return OPS_OK;
}

/* MariaDB asks REPLICATION SLAVE only when the binlog dump starts, which a
 * check cannot try; its grants say it (directly, or ALL PRIVILEGES) */
static bool mariadb_has_repl_slave(MYSQL *m) {
    char err[512];
    MYSQL_RES *r = db_query(m, "SHOW GRANTS", 0, err, sizeof err);
    if (!r) return true; /* not known: the reader names it if refused */
    bool has = false;
    MYSQL_ROW row;
    while ((row = mysql_fetch_row(r)))
        if (row[0] && strstr(row[0], " ON *.* ") &&
            (strstr(row[0], "ALL PRIVILEGES") || strstr(row[0], "REPLICATION SLAVE") ||
             strstr(row[0], "REPLICATION REPLICA")))
            has = true;
    mysql_free_result(r);
    return has;
}

/* the grants the daemon needs, asked as `config check` asks them */
static enum ops_status check_grants(const struct ops_env *env, MYSQL *m,
                                    const struct source_spec *s, struct ops_err *e) {
    struct ss_config c = *env->cfg; /* a shallow copy: only [source]'s address changes */
    c.source.host = (char *)s->host;
    c.source.port = s->port;
    c.source.socket = NULL;
    c.source.user = (char *)s->user;
    c.source.password = (char *)s->password;
    c.source.ssl_mode = (char *)s->ssl_mode;
    c.source.ssl_ca = (char *)s->ssl_ca;
    c.source.ssl_cert = c.source.ssl_key = NULL;
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    if (!out) return ops_fail(e, OPS_FAILED, OPS_AT_NONE, "out of memory");
    int rc = source_grants_check(&c, out);
    fclose(out);
    const char *info = mysql_get_server_info(m);
    bool missing_slave = info && strstr(info, "MariaDB") && !mariadb_has_repl_slave(m);
    if (rc == 0 && !missing_slave) {
        free(text);
        return OPS_OK;
    }
    sbuf msg = SBUF_INIT;
    sbuf_printf(&msg, "source %s: the user %s lacks what the daemon needs:", s->name, s->user);
    /* config check's lines, without its name */
    for (char *line = text, *nl; line && *line; line = nl ? nl + 1 : NULL) {
        nl = strchr(line, '\n');
        if (nl) *nl = '\0';
        const char *pfx = "searchsync config check: ";
        if (!strncmp(line, pfx, strlen(pfx))) line += strlen(pfx);
        sbuf_printf(&msg, " %s", line);
    }
    if (missing_slave)
        sbuf_printf(&msg, " it lacks REPLICATION SLAVE on MariaDB: `run` reads the binlog as a "
                          "replica. Grant it (as an administrator): GRANT REPLICATION SLAVE ON "
                          "*.* TO '%s'@'<its host>';", s->user);
    ops_fail(e, rc < 0 ? OPS_DOWN : OPS_INVALID, OPS_AT_SOURCE, "%s", msg.data);
    sbuf_free(&msg);
    free(text);
    return e->st;
}

/* each table the mapping's index configs read: there, and readable (SELECT) */
static enum ops_status check_tables(MYSQL *m, const struct mapping *mp,
                                    const struct source_spec *s, struct ops_err *e) {
    sbuf q = SBUF_INIT, bad = SBUF_INIT;
    char err[1024];
    for (size_t i = 0; i < mp->nindices; i++) {
        const struct mp_index *ix = &mp->indices[i];
        for (size_t t = 0; t < ix->ntables; t++) {
            const struct mp_table *tb = &ix->tables[t];
            /* a table pattern ({n:[0-9]+}) is matched by mapping_check_source */
            if (!tb->db || strchr(tb->db, '{') || strchr(tb->table, '{')) continue;
            sbuf_reset(&q);
            sbuf_adds(&q, "SELECT 1 FROM ");
            db_ident(&q, tb->db);
            sbuf_addc(&q, '.');
            db_ident(&q, tb->table);
            sbuf_adds(&q, " LIMIT 0");
            MYSQL_RES *r = db_query(m, q.data, q.len, err, sizeof err);
            if (r) {
                mysql_free_result(r);
                continue;
            }
            unsigned code = mysql_errno(m);
            if (code == ER_NO_SUCH_TABLE || code == ER_BAD_DB_ERROR)
                sbuf_printf(&bad, " table %s.%s (of index config %s) is not on the server: "
                                  "create it there, or leave this source out of that index "
                                  "config's \"sources\";", tb->db, tb->table, ix->alias);
            else if (code == ER_TABLEACCESS_DENIED_ERROR || code == ER_DBACCESS_DENIED_ERROR)
                sbuf_printf(&bad, " the user %s may not read %s.%s (of index config %s): "
                                  "GRANT SELECT ON `%s`.* TO '%s'@'<its host>';", s->user,
                            tb->db, tb->table, ix->alias, tb->db, s->user);
            else
                sbuf_printf(&bad, " reading %s.%s failed: %s;", tb->db, tb->table, err);
        }
    }
    enum ops_status st = OPS_OK;
    if (bad.len) st = ops_fail(e, OPS_INVALID, OPS_AT_SOURCE, "source %s:%s", s->name, bad.data);
    sbuf_free(&q);
    sbuf_free(&bad);
    return st;
}

/* the index configs of the mapping the source will feed: those that list it;
 * none yet, every one of the mapping (what it can be listed in) */
static enum ops_status load_mapping(MYSQL *meta, const char *mapping, const char *name,
                                    struct mapping *mp, sbuf *notes, struct ops_err *e) {
    char err[1024];
    if (mapping_db_load(meta, mapping, mp, err, sizeof err) < 0)
        return ops_fail(e, OPS_FAILED, OPS_AT_METADATA, "reading mapping %s: %s", mapping, err);
    size_t fed = 0;
    for (size_t i = 0; i < mp->nindices; i++)
        if (mp_index_fed_by(&mp->indices[i], mapping, name)) fed++;
    if (!mp->nindices)
        return ops_fail(e, OPS_INVALID, OPS_AT_METADATA,
                        "mapping %s has no index config yet: import the mapping first "
                        "(searchsync mapping import), so a source's tables can be checked",
                        mapping);
    if (!fed) {
        sbuf_printf(notes, "no index config of mapping %s lists source %s yet: its tables were "
                           "checked against every index config of the mapping; add \"%s\" to "
                           "the \"sources\" of those it feeds (searchsync mapping import)\n",
                    mapping, name, name);
        return OPS_OK;
    }
    /* only the index configs it feeds are its business */
    size_t k = 0;
    for (size_t i = 0; i < mp->nindices; i++) {
        if (mp_index_fed_by(&mp->indices[i], mapping, name)) {
            if (k != i) mp->indices[k] = mp->indices[i];
            k++;
        } else {
            mp_index_free(&mp->indices[i]);
        }
    }
    mp->nindices = k;
    return OPS_OK;
}

enum ops_status ops_source_check(const struct ops_env *env, MYSQL *meta, const char *mapping,
                                 const struct source_spec *s, unsigned *server_id,
                                 struct source_done *d, struct ops_err *e) {
    struct mapping mp = {0};
    if (load_mapping(meta, mapping, s->name, &mp, &d->notes, e) != OPS_OK) return e->st;
    db_params p = candidate_params(env, s);
    char err[2048];
    MYSQL *m = db_connect(&p, err, sizeof err);
    if (!m) {
        mapping_free(&mp);
        /* a refused login is the values given: the user's to fix */
        bool refused = strstr(err, "(1045)") || strstr(err, "(1698)");
        snprintf(d->field, sizeof d->field, "%s", refused ? "password"
                 : strstr(err, "TLS") || strstr(err, "SSL") ? "ssl_mode" : "host");
        return ops_fail(e, refused ? OPS_INVALID : OPS_DOWN, OPS_AT_SOURCE, "source %s: %s",
                        s->name, err);
    }
    enum ops_status st = check_binlog(m, s, server_id, e);
    if (st != OPS_OK && e->at == OPS_AT_NONE) snprintf(d->field, sizeof d->field, "server_id");
    if (st == OPS_OK) st = check_grants(env, m, s, e);
    if (st == OPS_OK) st = check_tables(m, &mp, s, e);
    if (st == OPS_OK) {
        int rc = mapping_check_source(m, &mp, err, sizeof err);
        if (rc != 0)
            st = ops_fail(e, rc > 0 ? OPS_INVALID : OPS_FAILED, OPS_AT_SOURCE, "source %s: %s",
                          s->name, err);
    }
    db_close(m);
    mapping_free(&mp);
    return st;
}
