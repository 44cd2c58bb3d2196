/* config: the INI configuration file (see config.h for the design).
 *
 * Format: `[section]` headers, `key = value` lines, `#` or `;` comments on
 * their own line, values may be wrapped in double quotes (then `\"`, `\\`
 * and `\n` escapes apply and `#` is literal). No packaged INI library in
 * Debian validates against a schema and reports line numbers the way we
 * need, and the format is small, so the parser is ours and tested
 * (tests/unit/test_config.c). */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "sbuf.h"

static char **str_at(struct ss_config *c, const struct config_key *k) {
    return (char **)((char *)c + k->offset);
}
static int *int_at(struct ss_config *c, const struct config_key *k) {
    return (int *)((char *)c + k->offset);
}
static bool *bool_at(struct ss_config *c, const struct config_key *k) {
    return (bool *)((char *)c + k->offset);
}

static int parse_bool(const char *v, bool *out) {
    static const char *t[] = {"true", "yes", "on", "1"}, *f[] = {"false", "no", "off", "0"};
    for (int i = 0; i < 4; i++) {
        if (strcasecmp(v, t[i]) == 0) return *out = true, 0;
        if (strcasecmp(v, f[i]) == 0) return *out = false, 0;
    }
    return -1;
}

static bool enum_has(const char *choices, const char *v) {
    size_t n = strlen(v);
    for (const char *p = choices; *p;) {
        const char *bar = strchr(p, '|');
        size_t len = bar ? (size_t)(bar - p) : strlen(p);
        if (len == n && strncmp(p, v, n) == 0) return true;
        if (!bar) break;
        p = bar + 1;
    }
    return false;
}

/* Set one key from text. where = "FILE:LINE" or "default" for messages. */
static int set_value(struct ss_config *c, const struct config_key *k, const char *v,
                     const char *where, char *err, size_t errlen) {
    switch (k->type) {
    case CFG_STR:
    case CFG_ENUM: {
        if (k->type == CFG_ENUM && !enum_has(k->choices, v)) {
            errf(err, errlen, "%s: [%s] %s = \"%s\" is not one of %s", where, k->section,
                   k->name, v, k->choices);
            return -1;
        }
        char **s = str_at(c, k);
        free(*s);
        *s = *v ? xstrdup(v) : NULL;
        return 0;
    }
    case CFG_INT: {
        char *end;
        errno = 0;
        long long n = strtoll(v, &end, 10);
        if (errno || end == v || *end || n < k->min || n > k->max) {
            errf(err, errlen, "%s: [%s] %s = \"%s\" must be an integer from %ld to %ld", where,
                   k->section, k->name, v, k->min, k->max);
            return -1;
        }
        *int_at(c, k) = (int)n;
        return 0;
    }
    case CFG_BOOL:
        if (parse_bool(v, bool_at(c, k)) < 0) {
            errf(err, errlen, "%s: [%s] %s = \"%s\" must be true or false", where, k->section,
                   k->name, v);
            return -1;
        }
        return 0;
    }
    return -1;
}

bool config_key_equal(const struct ss_config *a, const struct ss_config *b,
                      const struct config_key *k) {
    struct ss_config *ma = (struct ss_config *)a, *mb = (struct ss_config *)b;
    switch (k->type) {
    case CFG_STR:
    case CFG_ENUM: {
        const char *x = *str_at(ma, k), *y = *str_at(mb, k);
        return x == y || (x && y && strcmp(x, y) == 0);
    }
    case CFG_INT: return *int_at(ma, k) == *int_at(mb, k);
    case CFG_BOOL: return *bool_at(ma, k) == *bool_at(mb, k);
    }
    return false;
}

void config_defaults(struct ss_config *c) {
    char err[CONFIG_ERR_LEN];
    memset(c, 0, sizeof *c);
    for (size_t i = 0; i < config_nkeys; i++) {
        const struct config_key *k = &config_keys[i];
        if (k->def) set_value(c, k, k->def, "default", err, sizeof err);
    }
}

void config_free(struct ss_config *c) {
    if (!c) return;
    for (size_t i = 0; i < config_nkeys; i++) {
        const struct config_key *k = &config_keys[i];
        if (k->type == CFG_STR || k->type == CFG_ENUM) {
            free(*str_at(c, k));
            *str_at(c, k) = NULL;
        }
    }
    free(c->path);
    c->path = NULL;
}

static const struct config_key *find_key(const char *section, const char *name) {
    for (size_t i = 0; i < config_nkeys; i++)
        if (strcmp(config_keys[i].section, section) == 0 && strcmp(config_keys[i].name, name) == 0)
            return &config_keys[i];
    return NULL;
}

static bool section_known(const char *section) {
    for (size_t i = 0; i < config_nkeys; i++)
        if (strcmp(config_keys[i].section, section) == 0) return true;
    return false;
}

/* An inline comment ends an unquoted value, as in my.cnf: `#` anywhere, `;`
 * after a space or tab (`token = abc  # note` is "abc"). A value holding
 * either is written in double quotes. */
static void strip_comment(char *v) {
    for (char *p = v; *p; p++)
        if (*p == '#' || (*p == ';' && (p == v || p[-1] == ' ' || p[-1] == '\t'))) {
            *p = '\0';
            break;
        }
    char *e = v + strlen(v);
    while (e > v && isspace((unsigned char)e[-1])) *--e = '\0';
}

/* "host:port", "[v6]:port" or ":port" with a port from 1 to 65535; "" is off */
static int check_listen(const char *key, const char *v, const char *name, char *err,
                        size_t errlen) {
    if (!v || !*v) return 0;
    const char *colon = strrchr(v, ':');
    char *end = NULL;
    long port = colon && colon[1] && isdigit((unsigned char)colon[1]) ? strtol(colon + 1, &end, 10)
                                                                       : -1;
    if (port < 1 || port > 65535 || (end && *end)) {
        errf(err, errlen, "%s: [admin] %s = \"%s\": not host:port with a port from 1 to 65535 "
             "(e.g. 127.0.0.1:8089; \"\" turns it off)", name, key, v);
        return -1;
    }
    return 0;
}

/* Unquote a "..." value in place. Returns -1 on an unterminated string. */
static int unquote(char *v) {
    char *r = v + 1, *w = v;
    while (*r && *r != '"') {
        if (*r == '\\' && r[1]) {
            r++;
            *w++ = *r == 'n' ? '\n' : *r == 't' ? '\t' : *r;
            r++;
        } else {
            *w++ = *r++;
        }
    }
    if (*r != '"') return -1;
    const char *after = str_trim(r + 1); /* only a comment may follow the closing quote */
    if (*after && *after != '#' && *after != ';') return -1;
    *w = '\0';
    return 0;
}

/* a URL for messages: user:password@ left out */
static void url_shown(char *out, size_t n, const char *u, size_t len) {
    const char *host = u;
    for (size_t i = 0; i + 3 <= len; i++)
        if (!strncmp(u + i, "://", 3)) {
            host = u + i + 3;
            break;
        }
    size_t hostlen = len - (size_t)(host - u);
    const char *slash = memchr(host, '/', hostlen);
    size_t authlen = slash ? (size_t)(slash - host) : hostlen;
    const char *at = NULL;
    for (size_t i = 0; i < authlen; i++)
        if (host[i] == '@') at = host + i;
    if (!at) {
        snprintf(out, n, "%.*s", (int)len, u);
        return;
    }
    snprintf(out, n, "%.*s%.*s", (int)(host - u), u, (int)(len - (size_t)(at + 1 - u)), at + 1);
}

/* KEY_file: its first line (without the line end) becomes the password KEY,
 * unless the environment variable gave one. Both KEY and KEY_file in the
 * file is a mistake. */
static int password_from_file(const char *section, const char *key, char **password,
                              const char *file, bool password_in_file, const char *env,
                              const char *name, char *err, size_t errlen) {
    if (!file) return 0;
    if (password_in_file)
        return errf(err, errlen, "%s: [%s] sets both %s and %s_file: keep one", name, section,
                    key, key);
    if (env && getenv(env) && *getenv(env)) return 0; /* the environment wins */
    FILE *f = fopen(file, "r");
    if (!f)
        return errf(err, errlen, "%s: [%s] %s_file: cannot read %s: %s; give a file "
                    "readable by this user whose first line is the password", name, section,
                    key, file, strerror(errno));
    sbuf line = SBUF_INIT;
    sbuf_read_fp(&line, f);
    fclose(f);
    size_t n = line.data ? strcspn(line.data, "\r\n") : 0;
    if (n == 0) {
        sbuf_free(&line);
        return errf(err, errlen, "%s: [%s] %s_file: %s is empty (its first line is "
                    "the password)", name, section, key, file);
    }
    free(*password);
    *password = xstrndup(line.data, n);
    sbuf_free(&line);
    return 0;
}

long config_parse_duration(const char *s) {
    char *e;
    long v = strtol(s, &e, 10);
    if (e == s || v <= 0 || *s == '-' || *s == '+' || *s == ' ') return -1;
    long mul = !*e ? 1 : !strcmp(e, "s") ? 1 : !strcmp(e, "m") ? 60 : !strcmp(e, "h") ? 3600
               : !strcmp(e, "d") ? 86400 : -1;
    if (mul < 0 || v > 400L * 86400 / mul) return -1;
    return v * mul;
}

int config_parse_tz_offset(const char *s, int32_t *secs) {
    if (!strcmp(s, "UTC") || !strcmp(s, "Z")) {
        *secs = 0;
        return 0;
    }
    if (strlen(s) != 6 || (s[0] != '+' && s[0] != '-') || s[3] != ':') return -1;
    for (int i = 1; i < 6; i++)
        if (i != 3 && (s[i] < '0' || s[i] > '9')) return -1;
    int h = (s[1] - '0') * 10 + (s[2] - '0'), m = (s[4] - '0') * 10 + (s[5] - '0');
    if (h > 14 || m > 59) return -1;
    *secs = (s[0] == '-' ? -1 : 1) * (h * 3600 + m * 60);
    return 0;
}

bool config_kafka_source(const struct ss_config *c) {
    return c->source.kind && !strcmp(c->source.kind, "kafka");
}

const char *config_mapping_name(const struct ss_config *c) {
    return c->source.mapping && c->source.mapping[0] ? c->source.mapping : c->source.name;
}

bool config_gtid_versions(const struct ss_config *c) {
    return !config_kafka_source(c) && c->source.versions && !strcmp(c->source.versions, "gtid");
}

int config_parse_hhmm(const char *s) {
    if (strlen(s) != 5 || s[2] != ':') return -1;
    for (int i = 0; i < 5; i++)
        if (i != 2 && (s[i] < '0' || s[i] > '9')) return -1;
    int h = (s[0] - '0') * 10 + (s[1] - '0'), m = (s[3] - '0') * 10 + (s[4] - '0');
    return h < 24 && m < 60 ? h * 60 + m : -1;
}

/* [kafka] security_protocol and the SASL and TLS keys agree with each other */
static int check_kafka_security(const struct ss_config *c, const char *name, char *err,
                                size_t errlen) {
    const char *proto = c->kafka.security_protocol;
    bool sasl = !strncmp(proto, "sasl_", 5), tls = !strcmp(proto, "ssl") ||
                                                   !strcmp(proto, "sasl_ssl");
    const char *mech = c->kafka.sasl_mechanism;
    if (mech && !sasl)
        return errf(err, errlen, "%s: [kafka] sasl_mechanism is set but security_protocol = %s "
                    "sends no credentials: set security_protocol = sasl_ssl (or sasl_plaintext)",
                    name, proto);
    if (!mech && (c->kafka.sasl_username || c->kafka.sasl_password))
        return errf(err, errlen, "%s: [kafka] sasl_username/sasl_password are set without "
                    "sasl_mechanism: set it (PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512, as the "
                    "brokers' listener takes) and security_protocol = sasl_ssl", name);
    if (sasl && !mech && !c->kafka.client_properties)
        return errf(err, errlen, "%s: [kafka] security_protocol = %s needs sasl_mechanism "
                    "(PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512), or sasl.mechanisms in "
                    "client_properties for another one", name, proto);
    if (mech && (!c->kafka.sasl_username || !c->kafka.sasl_password))
        return errf(err, errlen, "%s: [kafka] sasl_mechanism = %s needs sasl_username and "
                    "sasl_password (or sasl_password_file, or SEARCHSYNC_KAFKA_PASSWORD)",
                    name, mech);
    if (!tls && (c->kafka.ssl_ca || c->kafka.ssl_cert || c->kafka.ssl_key))
        return errf(err, errlen, "%s: [kafka] ssl_ca/ssl_cert/ssl_key are set but "
                    "security_protocol = %s uses no TLS: set security_protocol = ssl (or "
                    "sasl_ssl)", name, proto);
    if ((c->kafka.ssl_cert != NULL) != (c->kafka.ssl_key != NULL))
        return errf(err, errlen, "%s: [kafka] ssl_cert and ssl_key go together: set both or "
                    "neither", name);
    return 0;
}

/* [source] kind = kafka: where to read and how; [kafka] keys set for a
 * binlog source are a mistake worth saying */
static int check_kafka(const struct ss_config *c, const char *name, char *err, size_t errlen) {
    int32_t off;
    if (config_parse_tz_offset(c->kafka.canal_tz_offset, &off) < 0)
        return errf(err, errlen, "%s: [kafka] canal_tz_offset = \"%s\": give an offset from UTC "
                    "as +HH:MM or -HH:MM (e.g. +08:00 for a canal server in Asia/Shanghai)",
                    name, c->kafka.canal_tz_offset);
    if (!config_kafka_source(c)) {
        if (c->kafka.brokers || c->kafka.topics || c->kafka.topic_regex)
            return errf(err, errlen, "%s: [kafka] is set but [source] kind is binlog: set "
                        "[source] kind = kafka to read the topics, or remove [kafka]", name);
        return 0;
    }
    if (!c->kafka.brokers || !*c->kafka.brokers)
        return errf(err, errlen, "%s: [source] kind = kafka needs [kafka] brokers: the bootstrap "
                    "brokers as host:port, comma separated (e.g. 127.0.0.1:9092)", name);
    bool any = false;
    for (const char *t = c->kafka.topics ? c->kafka.topics : ""; *t && !any; t++)
        any = *t != ',' && *t != ' ' && *t != '\t';
    if (!any && !(c->kafka.topic_regex && *c->kafka.topic_regex))
        return errf(err, errlen, "%s: [source] kind = kafka needs [kafka] topics (a comma list of "
                    "topic names) or [kafka] topic_regex", name);
    if (!c->kafka.group || !*c->kafka.group)
        return errf(err, errlen, "%s: [kafka] group is empty: give the consumer group id (or "
                    "leave the key out for `searchsync`)", name);
    return check_kafka_security(c, name, err, errlen);
}

/* the scheduled check's keys, parsed now so a typo stops the start */
static int check_check(const struct ss_config *c, const char *name, char *err, size_t errlen) {
    const char *const specs[][4] = {
        {"check", "schedule", c->check.schedule, "run it from cron"},
        {"delayed", "schedule", c->delayed.schedule, "run it from cron"},
        {"delivery", "replay_schedule", c->delivery.replay_schedule,
         "replay dead letters by hand"}};
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
        const char *sc = specs[i][2];
        if (sc && *sc && config_parse_hhmm(sc) < 0 &&
            (strncmp(sc, "every ", 6) || config_parse_duration(sc + 6) < 0))
            return errf(err, errlen, "%s: [%s] %s = \"%s\": give a time of day, UTC, as "
                        "HH:MM (e.g. 03:15), or an interval as `every DUR` (every 6h), or leave "
                        "it empty to %s", name, specs[i][0], specs[i][1], sc, specs[i][3]);
    }
    if (c->check.since && strcmp(c->check.since, "all") &&
        config_parse_duration(c->check.since) < 0)
        return errf(err, errlen, "%s: [check] since = \"%s\": give a duration such as 90s, 15m, "
                    "25h or 7d, or `all` for the whole index", name, c->check.since);
    return 0;
}

/* a certificate or key file named by a key must be readable now, not at the
 * first connection */
static int check_readable(const char *section, const char *key, const char *file,
                          const char *name, char *err, size_t errlen) {
    if (!file || access(file, R_OK) == 0) return 0;
    return errf(err, errlen, "%s: [%s] %s: cannot read %s: %s", name, section, key, file,
                strerror(errno));
}

/* the TLS, credential and signing keys, checked together */
static int check_secured(struct ss_config *c, const bool *seen, const char *name, char *err,
                         size_t errlen) {
    const struct config_key *kp;
#define SEEN_IN_FILE(sec, key) ((kp = find_key(sec, key)) && seen[kp - config_keys] && \
                                !(kp->env && getenv(kp->env) && *getenv(kp->env)))
    if (password_from_file("source", "password", &c->source.password, c->source.password_file,
                           SEEN_IN_FILE("source", "password"), "SEARCHSYNC_SOURCE_PASSWORD",
                           name, err, errlen) < 0 ||
        password_from_file("metadata", "password", &c->metadata.password,
                           c->metadata.password_file, SEEN_IN_FILE("metadata", "password"),
                           "SEARCHSYNC_METADATA_PASSWORD", name, err, errlen) < 0 ||
        password_from_file("search", "password", &c->search.password, c->search.password_file,
                           SEEN_IN_FILE("search", "password"), "SEARCHSYNC_SEARCH_PASSWORD",
                           name, err, errlen) < 0 ||
        password_from_file("kafka", "sasl_password", &c->kafka.sasl_password,
                           c->kafka.sasl_password_file, SEEN_IN_FILE("kafka", "sasl_password"),
                           "SEARCHSYNC_KAFKA_PASSWORD", name, err, errlen) < 0)
        return -1;
#undef SEEN_IN_FILE
    if (!c->metadata.ssl_mode && (c->metadata.ssl_ca || c->metadata.ssl_cert || c->metadata.ssl_key))
        return errf(err, errlen, "%s: [metadata] ssl_ca/ssl_cert/ssl_key are set but ssl_mode is "
                    "not: set [metadata] ssl_mode too (without it the metadata connection uses "
                    "[source]'s TLS settings)", name);
    if ((c->source.ssl_cert != NULL) != (c->source.ssl_key != NULL))
        return errf(err, errlen, "%s: [source] ssl_cert and ssl_key go together: set both or "
                    "neither", name);
    if ((c->metadata.ssl_cert != NULL) != (c->metadata.ssl_key != NULL))
        return errf(err, errlen, "%s: [metadata] ssl_cert and ssl_key go together: set both or "
                    "neither", name);
    if (check_readable("source", "ssl_ca", c->source.ssl_ca, name, err, errlen) < 0 ||
        check_readable("source", "ssl_cert", c->source.ssl_cert, name, err, errlen) < 0 ||
        check_readable("source", "ssl_key", c->source.ssl_key, name, err, errlen) < 0 ||
        check_readable("metadata", "ssl_ca", c->metadata.ssl_ca, name, err, errlen) < 0 ||
        check_readable("metadata", "ssl_cert", c->metadata.ssl_cert, name, err, errlen) < 0 ||
        check_readable("metadata", "ssl_key", c->metadata.ssl_key, name, err, errlen) < 0 ||
        check_readable("search", "ca_file", c->search.ca_file, name, err, errlen) < 0 ||
        check_readable("search", "client_cert", c->search.client_cert, name, err, errlen) < 0 ||
        check_readable("search", "client_key", c->search.client_key, name, err, errlen) < 0 ||
        check_readable("kafka", "ssl_ca", c->kafka.ssl_ca, name, err, errlen) < 0 ||
        check_readable("kafka", "ssl_cert", c->kafka.ssl_cert, name, err, errlen) < 0 ||
        check_readable("kafka", "ssl_key", c->kafka.ssl_key, name, err, errlen) < 0 ||
        check_readable("kafka", "client_properties", c->kafka.client_properties, name, err,
                       errlen) < 0)
        return -1;
    /* one way to authenticate to the engine */
    const char *ways[4];
    int nways = 0;
    if (c->search.user) ways[nways++] = "user/password";
    if (c->search.api_key) ways[nways++] = "api_key";
    if (c->search.bearer_token) ways[nways++] = "bearer_token";
    if (c->search.aws_sigv4) ways[nways++] = "aws_sigv4";
    if (nways > 1)
        return errf(err, errlen, "%s: [search] sets both %s and %s: the engine takes one way "
                    "to authenticate, keep one (mind the environment variables too)", name,
                    ways[0], ways[1]);
    if (c->search.password && !c->search.user && !nways)
        return errf(err, errlen, "%s: [search] password is set without user: set [search] user "
                    "(or SEARCHSYNC_SEARCH_USER)", name);
    if (c->search.aws_sigv4) {
        const char *missing = !c->search.aws_region ? "aws_region (or AWS_REGION)"
                              : !c->search.aws_access_key_id
                                  ? "aws_access_key_id (or AWS_ACCESS_KEY_ID)"
                              : !c->search.aws_secret_access_key
                                  ? "aws_secret_access_key (or AWS_SECRET_ACCESS_KEY)"
                                  : NULL;
        if (missing)
            return errf(err, errlen, "%s: [search] aws_sigv4 = true needs %s", name, missing);
        for (const char *p = c->search.aws_region; *p; p++)
            if (!(isalnum((unsigned char)*p) || *p == '-'))
                return errf(err, errlen, "%s: [search] aws_region = \"%s\" is not a region name "
                            "(like eu-west-1)", name, c->search.aws_region);
    }
    return 0;
}

/* The lines of text into c (every key at most once, seen[] marks those set);
 * 0, or -1 with err naming the file and line. */
static int parse_lines(struct ss_config *c, const char *name, const char *text, bool *seen,
                       char *err, size_t errlen) {
    char where[PATH_MAX + 32];
    char section[64] = "";
    int lineno = 0;
    const char *p = text;
    sbuf line = SBUF_INIT;
    int rc = 0;
    while (*p && rc == 0) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        sbuf_reset(&line);
        sbuf_add(&line, p, len);
        p += len + (nl ? 1 : 0);
        lineno++;
        snprintf(where, sizeof where, "%s:%d", name, lineno);
        char *s = str_trim(line.data);
        if (!*s || *s == '#' || *s == ';') continue;
        if (*s == '[') {
            char *close = strchr(s, ']');
            if (!close || *str_trim(close + 1)) {
                errf(err, errlen, "%s: malformed section header \"%s\"", where, s);
                rc = -1;
                break;
            }
            *close = '\0';
            char *sec = str_trim(s + 1);
            if (!section_known(sec)) {
                errf(err, errlen,
                       "%s: unknown section [%s] (known: source, kafka, metadata, search, "
                       "cluster, delivery, reindex, delayed, check, admin, log)",
                       where, sec);
                rc = -1;
                break;
            }
            snprintf(section, sizeof section, "%s", sec);
            continue;
        }
        char *eq = strchr(s, '=');
        if (!eq) {
            errf(err, errlen, "%s: expected \"key = value\", got \"%s\"", where, s);
            rc = -1;
            break;
        }
        *eq = '\0';
        char *key = str_trim(s), *val = str_trim(eq + 1);
        if (*val != '"') strip_comment(val);
        if (!*section) {
            errf(err, errlen, "%s: key \"%s\" before any [section]", where, key);
            rc = -1;
            break;
        }
        const struct config_key *k = find_key(section, key);
        if (!k) {
            errf(err, errlen, "%s: unknown key \"%s\" in section [%s]; see docs/configuration.md",
                   where, key, section);
            rc = -1;
            break;
        }
        size_t idx = (size_t)(k - config_keys);
        if (seen[idx]) {
            errf(err, errlen, "%s: [%s] %s is set twice", where, section, key);
            rc = -1;
            break;
        }
        seen[idx] = true;
        if (*val == '"' && unquote(val) < 0) {
            errf(err, errlen, "%s: [%s] %s: unterminated or trailing text after quoted value",
                   where, section, key);
            rc = -1;
            break;
        }
        rc = set_value(c, k, val, where, err, errlen);
    }
    sbuf_free(&line);
    return rc < 0 ? -1 : 0;
}

/* What no single key says: required keys present, values consistent with
 * each other. 0, or -1 with err. */
static int check_loaded(struct ss_config *c, const bool *seen, const char *name, char *err,
                        size_t errlen) {
    for (size_t i = 0; i < config_nkeys; i++) {
        const struct config_key *k = &config_keys[i];
        if (k->required && !seen[i] &&
            !(config_kafka_source(c) && !strcmp(k->section, "source") && !strcmp(k->name, "user"))) {
            errf(err, errlen, "%s: required key [%s] %s is missing (%s)", name, k->section,
                   k->name, k->doc);
            return -1;
        }
    }
    if (c->delivery.batch_min > c->delivery.batch_max) {
        errf(err, errlen, "%s: [delivery] batch_min (%d) is larger than batch_max (%d)", name,
               c->delivery.batch_min, c->delivery.batch_max);
        return -1;
    }
    if (c->delivery.linger_ms >= c->delivery.flush_interval_ms) {
        errf(err, errlen, "%s: [delivery] linger_ms (%d) is not below flush_interval_ms (%d), "
             "the longest a change may wait; lower linger_ms", name, c->delivery.linger_ms,
             c->delivery.flush_interval_ms);
        return -1;
    }
    if (check_listen("listen", c->admin.listen, name, err, errlen) < 0 ||
        check_listen("dict_listen", c->admin.dict_listen, name, err, errlen) < 0)
        return -1;
    /* every address in [search] urls is a http:// or https:// URL (the
     * engine client's own rule, checked here so that `config check` says it) */
    int nurls = 0;
    for (const char *u = c->search.urls ? c->search.urls : ""; *u;) {
        size_t n = strcspn(u, ", \t");
        nurls += n > 0;
        if (n && strncmp(u, "http://", 7) && strncmp(u, "https://", 8)) {
            char shown[512];
            url_shown(shown, sizeof shown, u, n);
            errf(err, errlen, "%s: [search] urls: \"%s\" must start with http:// or https://",
                 name, shown);
            return -1;
        }
        if (n && c->search.aws_sigv4 && strncmp(u, "https://", 8)) {
            char shown[512];
            url_shown(shown, sizeof shown, u, n);
            errf(err, errlen, "%s: [search] urls: \"%s\": with aws_sigv4 the engine is an "
                 "https:// endpoint", name, shown);
            return -1;
        }
        u += n;
        u += strspn(u, ", \t");
    }
    if (!nurls) {
        errf(err, errlen, "%s: [search] urls is empty: give at least one engine address "
             "(e.g. http://127.0.0.1:9200)", name);
        return -1;
    }
    if (check_secured(c, seen, name, err, errlen) < 0) return -1;
    if (check_kafka(c, name, err, errlen) < 0) return -1;
    if (check_check(c, name, err, errlen) < 0) return -1;
    if (c->admin.token && strlen(c->admin.token) < 32) {
        errf(err, errlen,
               "%s: [admin] token is too short: use at least 32 hex characters (128 bits), "
               "e.g. from `openssl rand -hex 16`",
               name);
        return -1;
    }
    return 0;
}


int config_load_string(struct ss_config *c, const char *name, const char *text, char *err,
                       size_t errlen) {
    config_defaults(c);
    c->path = xstrdup(name);
    bool *seen = xcalloc(config_nkeys, sizeof *seen); /* which keys were set */
    int rc = parse_lines(c, name, text, seen, err, errlen);
    char where[PATH_MAX + 32];
    /* secrets from the environment win over the file */
    for (size_t i = 0; rc == 0 && i < config_nkeys; i++) {
        const struct config_key *k = &config_keys[i];
        const char *ev = k->env ? getenv(k->env) : NULL;
        if (ev && *ev) {
            snprintf(where, sizeof where, "environment %s", k->env);
            rc = set_value(c, k, ev, where, err, errlen);
            seen[i] = true;
        }
    }
    if (rc == 0) rc = check_loaded(c, seen, name, err, errlen);
    free(seen);
    return rc;
}

int config_load(struct ss_config *c, const char *path, char *err, size_t errlen) {
    FILE *f = fopen(path, "r");
    if (!f) {
        int e = errno; /* (config_defaults may change errno) */
        config_defaults(c);
        errf(err, errlen, "%s: cannot open configuration file: %s%s", path, strerror(e),
             e == ENOENT ? " (give the path of an INI file to --config; searchsync.ini in "
                           "the source tree is a commented sample)"
                         : "");
        return -1;
    }
    sbuf text = SBUF_INIT;
    sbuf_read_fp(&text, f);
    fclose(f);
    if (text.len && memchr(text.data, '\0', text.len)) {
        config_defaults(c);
        sbuf_free(&text);
        errf(err, errlen, "%s: not a text file (NUL byte)", path);
        return -1;
    }
    int rc = config_load_string(c, path, text.data ? text.data : "", err, errlen);
    sbuf_free(&text);
    return rc;
}
