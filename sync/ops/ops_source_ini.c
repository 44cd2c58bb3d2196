/* ops_source_ini: the files of a source added at run time (see
 * ops_sources.h): NAME.ini derived from the configuration of the process that
 * adds it, and NAME.password, in the sources directory.
 *
 * The new process must share the metadata schema, the engine and the mapping
 * of the one that adds it, and differ in its [source] alone, so its file is
 * the adder's file with:
 *   [source]    name, mapping, host, port, user, ssl_mode/ssl_ca, server_id
 *               set, password_file = NAME.password; the reading keys (start,
 *               heartbeat_ms...) kept; databases, socket, kind dropped
 *   [metadata]  written out in full (host, port, user, password, TLS): the
 *               adder's may have taken them from its own [source]
 *   [admin]     listen: a port of its own, or none
 *   [cluster]   node_id, if set, suffixed with the name (unique per node)
 *   [log]       file, if a path, NAME.log beside it
 *   [kafka]     dropped (a source added so reads a binlog)
 * and every secret the adder took from its environment written as a value
 * (the new process is started with another environment). Both files are
 * mode 0600 and appear by a rename, so the path unit never reads half of one. */
#include "sync/ops/ops_sources.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "db.h"

const char *ops_sources_dir(const struct ss_config *cfg) {
    return cfg->admin.sources_dir && *cfg->admin.sources_dir ? cfg->admin.sources_dir
                                                              : "/etc/searchsync";
}

/* a key of a section set (value) or dropped (NULL) in the file written */
struct ovr {
    const char *section, *key;
    char *value; /* the line's value as written (quoted when needed); NULL: dropped */
    bool done;
};
struct ovrs {
    struct ovr v[64];
    size_t n;
};

static void set_raw(struct ovrs *o, const char *sec, const char *key, char *value) {
    for (size_t i = 0; i < o->n; i++)
        if (!strcmp(o->v[i].section, sec) && !strcmp(o->v[i].key, key)) {
            free(o->v[i].value);
            o->v[i].value = value;
            return;
        }
    if (o->n < sizeof o->v / sizeof o->v[0])
        o->v[o->n++] = (struct ovr){sec, key, value, false};
    else
        free(value);
}
/* "value" with \ and " escaped (config.c's quoting), or dropped when NULL */
static void set(struct ovrs *o, const char *sec, const char *key, const char *v) {
    if (!v) {
        set_raw(o, sec, key, NULL);
        return;
    }
    sbuf b = SBUF_INIT;
    sbuf_addc(&b, '"');
    for (const char *c = v; *c; c++) {
        if (*c == '"' || *c == '\\') sbuf_addc(&b, '\\');
        sbuf_addc(&b, *c);
    }
    sbuf_addc(&b, '"');
    set_raw(o, sec, key, sbuf_detach(&b));
}
static void set_int(struct ovrs *o, const char *sec, const char *key, long v) {
    char b[32];
    snprintf(b, sizeof b, "%ld", v);
    set_raw(o, sec, key, xstrdup(b));
}

/* the overrides of source s (see the top of the file) */
static void overrides(const struct ss_config *cfg, const struct source_spec *s,
                      const char *mapping, unsigned sid, const char *listen,
                      const char *pwfile, struct ovrs *o) {
    static const char *const drop_source[] = {"kind", "socket", "password", "ssl_cert",
                                              "ssl_key", "databases"};
    for (size_t i = 0; i < sizeof drop_source / sizeof *drop_source; i++)
        set(o, "source", drop_source[i], NULL);
    set(o, "source", "name", s->name);
    set(o, "source", "mapping", mapping);
    set(o, "source", "host", s->host);
    set_int(o, "source", "port", s->port);
    set(o, "source", "user", s->user);
    set(o, "source", "password_file", pwfile);
    set(o, "source", "ssl_mode", s->ssl_mode);
    set(o, "source", "ssl_ca", s->ssl_ca);
    set_int(o, "source", "server_id", (long)sid);
    /* [metadata] in full: the adder's may fall back on its own [source] */
    db_params mp = db_params_metadata(cfg);
    struct db_tls t = db_tls_metadata(cfg);
    set(o, "metadata", "host", mp.socket && *mp.socket ? NULL : mp.host);
    if (mp.socket && *mp.socket) set(o, "metadata", "socket", mp.socket);
    else set_int(o, "metadata", "port", mp.port);
    set(o, "metadata", "user", mp.user);
    set(o, "metadata", "password", mp.password && *mp.password ? mp.password : NULL);
    set(o, "metadata", "password_file", NULL);
    set(o, "metadata", "ssl_mode", t.mode);
    set(o, "metadata", "ssl_ca", t.ca);
    set(o, "metadata", "ssl_cert", t.cert);
    set(o, "metadata", "ssl_key", t.key);
    set(o, "metadata", "database", cfg->metadata.database);
    /* secrets from the environment, which the new process does not share */
    for (size_t i = 0; i < config_nkeys; i++) {
        const struct config_key *k = &config_keys[i];
        if (!k->env || !strcmp(k->section, "source") || !strcmp(k->section, "metadata")) continue;
        const char *v = getenv(k->env);
        if (!v || !*v) continue;
        set(o, k->section, k->name, v);
        if (!strcmp(k->name, "password")) set(o, k->section, "password_file", NULL);
    }
    if (listen && *listen) set(o, "admin", "listen", listen);
    else set_raw(o, "admin", "listen", xstrdup("\"\""));
    if (cfg->cluster.node_id && *cfg->cluster.node_id) {
        char id[512];
        snprintf(id, sizeof id, "%s-%s", cfg->cluster.node_id, s->name);
        set(o, "cluster", "node_id", id);
    }
    if (cfg->log.file && *cfg->log.file && strcmp(cfg->log.file, "syslog")) {
        const char *slash = strrchr(cfg->log.file, '/');
        char f[1400];
        snprintf(f, sizeof f, "%.*s%s.log", slash ? (int)(slash - cfg->log.file + 1) : 0,
                 cfg->log.file, s->name);
        set(o, "log", "file", f);
    }
}

/* the overrides left for section sec, appended to out */
static void flush_section(struct ovrs *o, const char *sec, sbuf *out) {
    for (size_t i = 0; i < o->n; i++)
        if (!o->v[i].done && !strcmp(o->v[i].section, sec)) {
            if (o->v[i].value) sbuf_printf(out, "%s = %s\n", o->v[i].key, o->v[i].value);
            o->v[i].done = true;
        }
}

/* the key of an INI line ("key = value"), into key; false for others */
static bool line_key(const char *line, char *key, size_t n) {
    while (*line == ' ' || *line == '\t') line++;
    const char *eq = strchr(line, '=');
    if (!eq || *line == '#' || *line == ';' || *line == '[') return false;
    const char *end = eq;
    while (end > line && (end[-1] == ' ' || end[-1] == '\t')) end--;
    snprintf(key, n, "%.*s", (int)(end - line), line);
    return true;
}

static bool overridden(const struct ovrs *o, const char *sec, const char *key) {
    for (size_t i = 0; i < o->n; i++)
        if (!strcmp(o->v[i].section, sec) && !strcmp(o->v[i].key, key)) return true;
    return false;
}

/* the adder's file text, rewritten with the overrides */
static void derive(const char *text, struct ovrs *o, const char *name, sbuf *out) {
    sbuf_printf(out, "# source %s, written by `searchsync source add` from the configuration of "
                     "the process that added it (docs/cluster.md, \"Adding a source\")\n", name);
    char sec[64] = "";
    bool skip = false; /* inside [kafka] */
    for (const char *p = text; *p;) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        char line[4096];
        snprintf(line, sizeof line, "%.*s", (int)(len < sizeof line ? len : sizeof line - 1), p);
        p += len + (nl ? 1 : 0);
        const char *t = line;
        while (*t == ' ' || *t == '\t') t++;
        char key[128];
        if (*t == '[') {
            const char *close = strchr(t, ']');
            if (sec[0] && !skip) flush_section(o, sec, out);
            snprintf(sec, sizeof sec, "%.*s", close ? (int)(close - t - 1) : 0, t + 1);
            skip = !strcmp(sec, "kafka");
            if (!skip) sbuf_printf(out, "%s\n", line);
            continue;
        }
        if (skip) continue;
        if (line_key(line, key, sizeof key) && overridden(o, sec, key)) continue;
        sbuf_printf(out, "%s\n", line);
    }
    if (sec[0] && !skip) flush_section(o, sec, out);
    /* sections the adder's file lacks */
    for (size_t i = 0; i < o->n; i++)
        if (!o->v[i].done && o->v[i].value) {
            sbuf_printf(out, "[%s]\n", o->v[i].section);
            flush_section(o, o->v[i].section, out);
        }
}

/* data written to path by a rename of path.tmp, mode 0600 */
static int write_file(const char *path, const char *data, size_t len, char *err, size_t errlen) {
    char tmp[1100];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    unlink(tmp);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0)
        return errf(err, errlen, "cannot write %s: %s (the sources directory, [admin] "
                    "sources_dir, must be writable by this process)", tmp, strerror(errno));
    size_t off = 0;
    while (off < len) {
        ssize_t w = write(fd, data + off, len - off);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) break;
        off += (size_t)w;
    }
    int ok = off == len && fsync(fd) == 0;
    if (close(fd) != 0) ok = 0;
    if (!ok || rename(tmp, path) != 0) {
        int en = errno;
        unlink(tmp);
        return errf(err, errlen, "cannot write %s: %s", path, strerror(en));
    }
    return 0;
}

int ops_source_ini_write(const struct ss_config *cfg, const struct source_spec *s,
                         const char *mapping, unsigned server_id, const char *listen,
                         char *path, size_t pathlen, char *err, size_t errlen) {
    if (!cfg->path) return errf(err, errlen, "this process has no configuration file to derive from");
    FILE *f = fopen(cfg->path, "r");
    if (!f) return errf(err, errlen, "cannot read %s: %s", cfg->path, strerror(errno));
    sbuf text = SBUF_INIT;
    int rc = sbuf_read_fp(&text, f);
    fclose(f);
    if (rc < 0) {
        sbuf_free(&text);
        return errf(err, errlen, "cannot read %s", cfg->path);
    }
    const char *dir = ops_sources_dir(cfg);
    char pw[1100];
    snprintf(pw, sizeof pw, "%s/%s.password", dir, s->name);
    snprintf(path, pathlen, "%s/%s.ini", dir, s->name);
    struct ovrs o = {.n = 0};
    overrides(cfg, s, mapping, server_id, listen, pw, &o);
    sbuf out = SBUF_INIT;
    derive(text.data ? text.data : "", &o, s->name, &out);
    sbuf line = SBUF_INIT;
    sbuf_printf(&line, "%s\n", s->password ? s->password : "");
    /* the password first: the ini names it, and its appearing starts the unit */
    rc = write_file(pw, line.data, line.len, err, errlen);
    if (rc == 0) rc = write_file(path, out.data, out.len, err, errlen);
    memset(line.data, 0, line.len);
    sbuf_free(&line);
    sbuf_free(&out);
    sbuf_free(&text);
    for (size_t i = 0; i < o.n; i++) free(o.v[i].value);
    return rc;
}

int ops_source_files_remove(const struct ss_config *cfg, const char *name, char *err,
                            size_t errlen) {
    const char *dir = ops_sources_dir(cfg);
    char p[1100];
    int rc = 0;
    static const char *const ext[] = {"ini", "password"};
    for (int i = 0; i < 2; i++) {
        snprintf(p, sizeof p, "%s/%s.%s", dir, name, ext[i]);
        if (unlink(p) != 0 && errno != ENOENT)
            rc = errf(err, errlen, "cannot remove %s: %s", p, strerror(errno));
    }
    return rc;
}

/* can host:port be bound now? */
static bool bindable(const char *host, int port) {
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE}, *ai = NULL;
    char ps[16];
    snprintf(ps, sizeof ps, "%d", port);
    if (getaddrinfo(*host ? host : NULL, ps, &hints, &ai) != 0 || !ai) return false;
    int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
    bool ok = fd >= 0 && bind(fd, ai->ai_addr, ai->ai_addrlen) == 0;
    if (fd >= 0) close(fd);
    freeaddrinfo(ai);
    return ok;
}

void ops_source_pick_listen(const struct ss_config *cfg, MYSQL *meta, char *out, size_t n) {
    out[0] = '\0';
    const char *l = cfg->admin.listen;
    const char *colon = l ? strrchr(l, ':') : NULL;
    if (!colon) return;
    char host[300];
    snprintf(host, sizeof host, "%.*s", (int)(colon - l), l);
    if (host[0] == '[') { /* [::1] */
        memmove(host, host + 1, strlen(host));
        char *b = strchr(host, ']');
        if (b) *b = '\0';
    }
    int port = atoi(colon + 1);
    sbuf taken = SBUF_INIT;
    char err[256];
    MYSQL_RES *r = db_query(meta, "SELECT admin_listen FROM sources WHERE admin_listen IS NOT "
                                  "NULL", 0, err, sizeof err);
    MYSQL_ROW row;
    while (r && (row = mysql_fetch_row(r)))
        if (row[0]) sbuf_printf(&taken, "|%s|", row[0]);
    if (r) mysql_free_result(r);
    for (int p = port + 1; p > 0 && p < 65536 && p <= port + 200; p++) {
        char cand[320];
        snprintf(cand, sizeof cand, "%.*s:%d", (int)(colon - l), l, p);
        char pat[330];
        snprintf(pat, sizeof pat, "|%s|", cand);
        if (taken.data && strstr(taken.data, pat)) continue;
        if (!bindable(host, p)) continue;
        snprintf(out, n, "%s", cand);
        break;
    }
    sbuf_free(&taken);
}
