/* ops_sources: a source added, edited or removed at run time (see
 * ops_sources.h): the order of the steps and the registry rows. The checks
 * are ops_source_check.c's, the files ops_source_ini.c's, the listing
 * ops_source_list.c's.
 *
 * Order: the server is checked first (nothing is written when it does not
 * fit); then the registry row is written in a transaction left open while
 * the files are written, so that a failure to write them leaves no row, and
 * a registry that refuses (a name taken meanwhile) leaves no files. */
#include "sync/ops/ops_sources.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "db.h"
#include "log.h"
#include "sync/mapping/mapping_source.h"

void source_done_free(struct source_done *d) {
    if (d) sbuf_free(&d->notes);
}

#define BAD(f) (snprintf(d->field, sizeof d->field, "%s", f), OPS_INVALID)

static enum ops_status check_values(const struct source_spec *s, struct source_done *d,
                                    struct ops_err *e) {
    char why[256];
    if (!s->name || mp_source_name_check(s->name, why, sizeof why) < 0)
        return ops_fail(e, BAD("name"), OPS_AT_NONE, "the source's name: %s",
                        s->name ? why : "missing");
    if (!s->host || !*s->host || strlen(s->host) > 255 || strpbrk(s->host, " \t\r\n\"'"))
        return ops_fail(e, BAD("host"), OPS_AT_NONE,
                        "source %s: the host must be a host name or address (1-255 "
                        "characters, no spaces or quotes)", s->name);
    if (s->port < 1 || s->port > 65535)
        return ops_fail(e, BAD("port"), OPS_AT_NONE, "source %s: the port must be 1-65535",
                        s->name);
    if (!s->user || !*s->user || strlen(s->user) > 255 || strpbrk(s->user, "\r\n"))
        return ops_fail(e, BAD("user"), OPS_AT_NONE,
                        "source %s: the user must be given (1-255 characters)", s->name);
    if (!s->password || !*s->password || strpbrk(s->password, "\r\n"))
        return ops_fail(e, BAD("password"), OPS_AT_NONE,
                        "source %s: the password must be given (one line, not empty)", s->name);
    static const char *const modes[] = {"disabled", "preferred", "required", "verify_ca",
                                        "verify_identity"};
    bool ok = !s->ssl_mode;
    for (size_t i = 0; !ok && i < sizeof modes / sizeof *modes; i++)
        ok = !strcmp(s->ssl_mode, modes[i]);
    if (!ok)
        return ops_fail(e, BAD("ssl_mode"), OPS_AT_NONE, "source %s: ssl_mode must be one of "
                        "disabled, preferred, required, verify_ca, verify_identity", s->name);
    if (s->ssl_ca && (!*s->ssl_ca || s->ssl_ca[0] != '/' || strpbrk(s->ssl_ca, "\r\n") ||
                      access(s->ssl_ca, R_OK) != 0))
        return ops_fail(e, BAD("ssl_ca"), OPS_AT_NONE, "source %s: ssl_ca must be the absolute "
                        "path of a readable CA file on this machine", s->name);
    if (s->server_id < 0)
        return ops_fail(e, BAD("server_id"), OPS_AT_NONE, "source %s: server_id must be 1-4294967295",
                        s->name);
    if (s->admin_listen && strcmp(s->admin_listen, "none") &&
        (!strchr(s->admin_listen, ':') || strpbrk(s->admin_listen, " \t\r\n\"'")))
        return ops_fail(e, BAD("admin_listen"), OPS_AT_NONE,
                        "source %s: the admin listen address must be host:port, or none", s->name);
    return OPS_OK;
}

/* is `name` in the registry (added with source add)? 1 yes, 0 no, -1 error */
static int registered(MYSQL *meta, const char *name, struct ops_err *e) {
    sbuf q = SBUF_INIT;
    sbuf_adds(&q, "SELECT host IS NOT NULL FROM sources WHERE name = ");
    db_quote(meta, &q, name, strlen(name));
    char *row[1] = {NULL};
    char err[512];
    int rc = db_row1(meta, q.data, q.len, row, 1, err, sizeof err);
    sbuf_free(&q);
    if (rc < 0) {
        ops_fail(e, OPS_FAILED, OPS_AT_METADATA, "reading the sources: %s", err);
        return -1;
    }
    int yes = rc == 1 && row[0] && !strcmp(row[0], "1");
    db_row_free(row, 1);
    return yes;
}

/* a name some daemon already reads (a checkpoint or a node state): adding it
 * would make two processes the readers of one source name */
static bool in_use(MYSQL *meta, const char *name) {
    sbuf q = SBUF_INIT;
    sbuf_adds(&q, "SELECT (SELECT COUNT(*) FROM offsets WHERE source = ");
    db_quote(meta, &q, name, strlen(name));
    sbuf_adds(&q, ") + (SELECT COUNT(*) FROM node_states WHERE source = ");
    db_quote(meta, &q, name, strlen(name));
    sbuf_adds(&q, ")");
    char err[256];
    char *v = db_scalar(meta, q.data, err, sizeof err);
    bool used = v && strcmp(v, "0");
    free(v);
    sbuf_free(&q);
    return used;
}

static void q_str(MYSQL *m, sbuf *q, const char *v) {
    if (v) db_quote(m, q, v, strlen(v));
    else sbuf_adds(q, "NULL");
}

/* the registry row of s, in the open transaction */
static int upsert(MYSQL *meta, const struct source_spec *s, const char *mapping, unsigned sid,
                  const char *ini, const char *listen, const char *by, char *err, size_t errlen) {
    sbuf q = SBUF_INIT;
    sbuf_adds(&q, "INSERT INTO sources (name, mapping, host, port, user, ssl_mode, ssl_ca, "
                  "server_id, config_path, admin_listen, changed_by, updated_at) VALUES (");
    q_str(meta, &q, s->name);
    sbuf_addc(&q, ',');
    q_str(meta, &q, mapping);
    sbuf_addc(&q, ',');
    q_str(meta, &q, s->host);
    sbuf_printf(&q, ",%d,", s->port);
    q_str(meta, &q, s->user);
    sbuf_addc(&q, ',');
    q_str(meta, &q, s->ssl_mode);
    sbuf_addc(&q, ',');
    q_str(meta, &q, s->ssl_ca);
    sbuf_printf(&q, ",%u,", sid);
    q_str(meta, &q, ini);
    sbuf_addc(&q, ',');
    q_str(meta, &q, listen && *listen ? listen : NULL);
    sbuf_addc(&q, ',');
    q_str(meta, &q, by);
    sbuf_adds(&q, ", NOW(3)) ON DUPLICATE KEY UPDATE mapping = VALUES(mapping), host = "
                  "VALUES(host), port = VALUES(port), user = VALUES(user), ssl_mode = "
                  "VALUES(ssl_mode), ssl_ca = VALUES(ssl_ca), server_id = VALUES(server_id), "
                  "config_path = VALUES(config_path), admin_listen = VALUES(admin_listen), "
                  "changed_by = VALUES(changed_by), updated_at = NOW(3)");
    int rc = db_exec(meta, q.data, err, errlen) < 0 ? -1 : 0;
    sbuf_free(&q);
    return rc;
}

/* how its process starts: systemd's path unit where systemd runs (/run/
 * systemd/system is there exactly then: sd_booted(3)), else by hand */
static void start_line(const char *ini, bool edit, struct source_done *d) {
    struct stat st;
    d->systemd = stat("/run/systemd/system", &st) == 0 && S_ISDIR(st.st_mode);
    snprintf(d->ini, sizeof d->ini, "%s", ini);
    if (edit)
        snprintf(d->start, sizeof d->start,
                 "stop the running `searchsync run --config %s` (SIGTERM) and start it again "
                 "with the same command", ini);
    else
        snprintf(d->start, sizeof d->start, "searchsync run --config %s", ini);
}

/* the steps add and edit share once the values are merged: check, record,
 * write */
static enum ops_status record(const struct ops_env *env, MYSQL *meta, const struct source_spec *s,
                              const char *listen, bool edit, struct source_done *d,
                              struct ops_err *e) {
    const char *mapping = config_mapping_name(env->cfg);
    unsigned sid = 0;
    if (ops_source_check(env, meta, mapping, s, &sid, d, e) != OPS_OK) return e->st;
    d->server_id = sid;
    snprintf(d->admin_listen, sizeof d->admin_listen, "%s", listen ? listen : "");
    char err[1024], ini[1100];
    snprintf(ini, sizeof ini, "%s/%s.ini", ops_sources_dir(env->cfg), s->name);
    if (db_exec(meta, "START TRANSACTION", err, sizeof err) < 0) {
        return ops_fail(e, OPS_FAILED, OPS_AT_METADATA, "recording source %s: %s", s->name, err);
    }
    /* its row locked (a name not there yet: the gap), so that two adds of
     * one name at once cannot both pass: the second waits, then is refused */
    sbuf q = SBUF_INIT;
    sbuf_adds(&q, "SELECT host IS NOT NULL FROM sources WHERE name = ");
    db_quote(meta, &q, s->name, strlen(s->name));
    sbuf_adds(&q, " FOR UPDATE");
    char *row[1] = {NULL};
    int got = db_row1(meta, q.data, q.len, row, 1, err, sizeof err);
    bool there = got == 1 && row[0] && !strcmp(row[0], "1");
    db_row_free(row, 1);
    sbuf_free(&q);
    if (got < 0 || there != edit ||
        upsert(meta, s, mapping, sid, ini, listen, env->by, err, sizeof err) < 0) {
        char e2[256];
        db_exec(meta, "ROLLBACK", e2, sizeof e2);
        if (got >= 0 && there && !edit)
            return ops_fail(e, (snprintf(d->field, sizeof d->field, "name"), OPS_REFUSED),
                            OPS_AT_NONE, "a source named %s was added meanwhile: choose another "
                            "name", s->name);
        if (got >= 0 && !there && edit)
            return ops_fail(e, OPS_UNKNOWN, OPS_AT_NONE, "source %s was removed meanwhile",
                            s->name);
        return ops_fail(e, OPS_FAILED, OPS_AT_METADATA, "recording source %s: %s", s->name, err);
    }
    if (ops_source_ini_write(env->cfg, s, mapping, sid, listen, ini, sizeof ini, err,
                             sizeof err) < 0) {
        char e2[256];
        db_exec(meta, "ROLLBACK", e2, sizeof e2);
        return ops_fail(e, OPS_FAILED, OPS_AT_NONE, "source %s: %s", s->name, err);
    }
    if (db_exec(meta, "COMMIT", err, sizeof err) < 0) {
        if (!edit) ops_source_files_remove(env->cfg, s->name, err, sizeof err);
        return ops_fail(e, OPS_FAILED, OPS_AT_METADATA, "recording source %s: %s", s->name, err);
    }
    start_line(ini, edit, d);
    snprintf(d->name, sizeof d->name, "%s", s->name);
    snprintf(d->host, sizeof d->host, "%s", s->host);
    snprintf(d->user, sizeof d->user, "%s", s->user);
    d->port = s->port;
    log_info("sources", "source %s %s by %s: %s:%d as %s, configuration %s", s->name,
             edit ? "changed" : "added", env->by ? env->by : "?", s->host, s->port, s->user, ini);
    return OPS_OK;
}

enum ops_status ops_source_add(const struct ops_env *env, const struct source_spec *in,
                               struct source_done *d, struct ops_err *e) {
    memset(d, 0, sizeof *d);
    struct source_spec s = *in;
    if (!s.port) s.port = 3306;
    if (check_values(&s, d, e) != OPS_OK) return e->st;
    bool owned;
    MYSQL *meta = ops_meta(env, &owned, e);
    if (!meta) return e->st;
    int reg = registered(meta, s.name, e);
    enum ops_status st = OPS_OK;
    if (reg < 0) st = e->st;
    else if (reg || in_use(meta, s.name) || !strcmp(s.name, env->cfg->source.name))
        st = ops_fail(e, (snprintf(d->field, sizeof d->field, "name"), OPS_REFUSED), OPS_AT_NONE,
                      "a source named %s exists already%s: choose another name%s%s%s", s.name,
                      reg ? "" : " (a daemon reads it, or its checkpoint is kept)",
                      reg ? ", or change it with `searchsync source edit " : "",
                      reg ? s.name : "", reg ? "`" : "");
    char ini[1100];
    snprintf(ini, sizeof ini, "%s/%s.ini", ops_sources_dir(env->cfg), s.name);
    if (st == OPS_OK && access(ini, F_OK) == 0)
        /* a configuration written by hand: never written over */
        st = ops_fail(e, (snprintf(d->field, sizeof d->field, "name"), OPS_REFUSED), OPS_AT_NONE,
                      "%s exists already and source %s is not in the registry (a configuration "
                      "written by hand?): choose another name, or move the file away", ini,
                      s.name);
    if (st == OPS_OK) {
        char listen[300] = "";
        if (!s.admin_listen) ops_source_pick_listen(env->cfg, meta, listen, sizeof listen);
        else if (strcmp(s.admin_listen, "none")) snprintf(listen, sizeof listen, "%s", s.admin_listen);
        st = record(env, meta, &s, listen, false, d, e);
    }
    ops_meta_done(meta, owned);
    return st;
}

/* the registry's values of `name` into *s (strings into keep[]); the password
 * from its NAME.password when this machine has it */
static enum ops_status current(const struct ops_env *env, MYSQL *meta, const char *name,
                               struct source_spec *s, char **keep, struct ops_err *e) {
    sbuf q = SBUF_INIT;
    sbuf_adds(&q, "SELECT host, port, user, ssl_mode, ssl_ca, server_id, admin_listen FROM "
                  "sources WHERE host IS NOT NULL AND name = ");
    db_quote(meta, &q, name, strlen(name));
    char err[512];
    int rc = db_row1(meta, q.data, q.len, keep, 7, err, sizeof err);
    sbuf_free(&q);
    if (rc < 0) return ops_fail(e, OPS_FAILED, OPS_AT_METADATA, "reading the sources: %s", err);
    if (rc == 0)
        return ops_fail(e, OPS_UNKNOWN, OPS_AT_NONE,
                        "no source named %s was added with `searchsync source add` (`searchsync "
                        "source list` shows the sources)", name);
    s->name = name;
    s->host = keep[0];
    s->port = keep[1] ? atoi(keep[1]) : 3306;
    s->user = keep[2];
    s->ssl_mode = keep[3];
    s->ssl_ca = keep[4];
    s->server_id = keep[5] ? (int)strtol(keep[5], NULL, 10) : 0;
    s->admin_listen = keep[6] ? keep[6] : "none";
    char pw[1100];
    snprintf(pw, sizeof pw, "%s/%s.password", ops_sources_dir(env->cfg), name);
    FILE *f = fopen(pw, "r");
    if (f) {
        char line[1024] = "";
        if (fgets(line, sizeof line, f)) {
            line[strcspn(line, "\r\n")] = '\0';
            keep[7] = xstrdup(line);
            s->password = keep[7];
        }
        memset(line, 0, sizeof line);
        fclose(f);
    }
    return OPS_OK;
}

enum ops_status ops_source_edit(const struct ops_env *env, const struct source_spec *in,
                                struct source_done *d, struct ops_err *e) {
    memset(d, 0, sizeof *d);
    if (!in->name) return ops_fail(e, OPS_INVALID, OPS_AT_NONE, "the source's name is missing");
    bool owned;
    MYSQL *meta = ops_meta(env, &owned, e);
    if (!meta) return e->st;
    char *keep[8] = {0};
    struct source_spec s = {0};
    enum ops_status st = current(env, meta, in->name, &s, keep, e);
    if (st == OPS_OK) {
        if (in->host) s.host = in->host;
        if (in->port) s.port = in->port;
        if (in->user) s.user = in->user;
        if (in->password) s.password = in->password;
        if (in->ssl_mode) s.ssl_mode = !strcmp(in->ssl_mode, "") ? NULL : in->ssl_mode;
        if (in->ssl_ca) s.ssl_ca = !strcmp(in->ssl_ca, "") ? NULL : in->ssl_ca;
        if (in->server_id) s.server_id = in->server_id;
        if (in->admin_listen) s.admin_listen = in->admin_listen;
        s.own_replica = !strcmp(s.host, keep[0] ? keep[0] : "") &&
                        s.port == (keep[1] ? atoi(keep[1]) : 3306) &&
                        s.server_id == (keep[5] ? (int)strtol(keep[5], NULL, 10) : 0);
        if (!s.password)
            st = ops_fail(e, BAD("password"), OPS_AT_NONE,
                          "source %s: its password file %s/%s.password is not on this machine: "
                          "give the password again with the change", s.name,
                          ops_sources_dir(env->cfg), s.name);
    }
    if (st == OPS_OK && check_values(&s, d, e) != OPS_OK) st = e->st;
    if (st == OPS_OK)
        st = record(env, meta, &s, strcmp(s.admin_listen, "none") ? s.admin_listen : "", true,
                    d, e);
    if (keep[7]) memset(keep[7], 0, strlen(keep[7]));
    db_row_free(keep, 8);
    ops_meta_done(meta, owned);
    return st;
}

enum ops_status ops_source_remove(const struct ops_env *env, const char *name, bool force,
                                  sbuf *fed, struct ops_err *e) {
    bool owned;
    MYSQL *meta = ops_meta(env, &owned, e);
    if (!meta) return e->st;
    enum ops_status st = OPS_OK;
    int reg = registered(meta, name, e);
    if (reg < 0) st = e->st;
    else if (!reg)
        st = ops_fail(e, OPS_UNKNOWN, OPS_AT_NONE,
                      "no source named %s was added with `searchsync source add` (`searchsync "
                      "source list` shows the sources)", name);
    char err[1024];
    if (st == OPS_OK) { /* the index configs that list it, by any mapping */
        sbuf q = SBUF_INIT;
        sbuf_adds(&q, "SELECT GROUP_CONCAT(alias ORDER BY alias SEPARATOR ',') FROM index_configs "
                      "WHERE FIND_IN_SET(");
        db_quote(meta, &q, name, strlen(name));
        sbuf_adds(&q, ", sources) > 0 OR (sources IS NULL AND source = ");
        db_quote(meta, &q, name, strlen(name));
        sbuf_adds(&q, ")");
        char *list = db_scalar(meta, q.data, err, sizeof err);
        if (list && *list) sbuf_adds(fed, list);
        free(list);
        sbuf_free(&q);
        if (fed->len && !force)
            st = ops_fail(e, OPS_REFUSED, OPS_AT_NONE,
                          "source %s feeds index config(s) %s: take it out of their \"sources\" "
                          "first (searchsync mapping import), or remove it anyway with --force "
                          "(its documents stay in those indices until their next reindex, and "
                          "that reindex waits for its part until it is listed no more)",
                          name, fed->data);
    }
    if (st == OPS_OK) {
        sbuf q = SBUF_INIT, q2 = SBUF_INIT;
        sbuf_adds(&q, "DELETE FROM sources WHERE name = ");
        db_quote(meta, &q, name, strlen(name));
        /* its checkpoint too: added again later, it starts as a new source
         * (the binlog it stopped at may be purged by then) */
        sbuf_adds(&q2, "DELETE FROM offsets WHERE source = ");
        db_quote(meta, &q2, name, strlen(name));
        /* and its node states: the name is free again (add refuses a name
         * some daemon still says it reads) */
        sbuf q3 = SBUF_INIT;
        sbuf_adds(&q3, "DELETE FROM node_states WHERE source = ");
        db_quote(meta, &q3, name, strlen(name));
        if (db_exec(meta, "START TRANSACTION", err, sizeof err) < 0 ||
            db_exec(meta, q.data, err, sizeof err) < 0 ||
            db_exec(meta, q2.data, err, sizeof err) < 0 ||
            db_exec(meta, q3.data, err, sizeof err) < 0 ||
            ops_source_files_remove(env->cfg, name, err, sizeof err) < 0 ||
            db_exec(meta, "COMMIT", err, sizeof err) < 0) {
            char e2[128];
            db_exec(meta, "ROLLBACK", e2, sizeof e2);
            st = ops_fail(e, OPS_FAILED, OPS_AT_METADATA, "removing source %s: %s", name, err);
        } else {
            log_info("sources", "source %s removed by %s%s%s", name, env->by ? env->by : "?",
                     fed->len ? "; it was still listed by " : "", fed->len ? fed->data : "");
        }
        sbuf_free(&q);
        sbuf_free(&q2);
        sbuf_free(&q3);
    }
    ops_meta_done(meta, owned);
    return st;
}
