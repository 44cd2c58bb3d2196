/* kafka_conf: a Kafka source's consumer configuration (see kafka_conf.h). */
#include "kafka_conf.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "log.h"
#include "monotime.h"
#include "sbuf.h"

/* The last refusal of the brokers' security (SASL or TLS) in this process,
 * said by librdkafka's error callback on its own thread and read by
 * commands that would otherwise only time out */
static pthread_mutex_t sec_mu = PTHREAD_MUTEX_INITIALIZER;
static char sec_err[600];
static unsigned sec_count;
static long long sec_ms; /* monotonic ms of the last */

static void on_log(const rd_kafka_t *rk, int level, const char *fac, const char *buf) {
    (void)rk;
    /* a broker connection's failure: the error callback says it again,
     * with what to do when it is a setting */
    if (!strcmp(fac, "FAIL")) log_debug("kafka", "%s: %s", fac, buf);
    else if (level <= 3) log_error("kafka", "%s: %s", fac, buf);
    else if (level <= 5) log_warn("kafka", "%s: %s", fac, buf);
    else log_debug("kafka", "%s: %s", fac, buf);
}

static void on_error(rd_kafka_t *rk, int err, const char *reason, void *opaque) {
    (void)rk;
    (void)opaque;
    /* a topic deleted while its partitions are fetched: said each second for
     * each partition until the group rebalances; the consumer's own error
     * (sync/sources/kafka_source.c topic_missing, kafka-tail) says it once */
    if (err == RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART) {
        log_debug("kafka", "%s (%s)", reason, rd_kafka_err2name((rd_kafka_resp_err_t)err));
        return;
    }
    /* the brokers refused who we are or we refused them: a setting to
     * change, not a network to wait out (librdkafka still retries, so a
     * credential fixed on the brokers' side is taken without a restart) */
    const char *hint =
        err == RD_KAFKA_RESP_ERR__AUTHENTICATION
            ? "the brokers refused the credentials: check [kafka] sasl_mechanism, "
              "sasl_username and sasl_password against the brokers' users"
        /* a TLS alert from the broker (no client certificate, one it does
         * not trust) reads as a failed receive */
        : err == RD_KAFKA_RESP_ERR__SSL ||
                (err == RD_KAFKA_RESP_ERR__TRANSPORT && strstr(reason, "SSL routines"))
            ? "TLS with the brokers failed: check [kafka] ssl_ca (the CA that signed the "
              "brokers' certificates, which must name the host in [kafka] brokers), "
              "security_protocol, and ssl_cert/ssl_key when the brokers ask for a client "
              "certificate"
            : NULL;
    if (hint) {
        pthread_mutex_lock(&sec_mu);
        /* what to check first: status keeps the start of it */
        snprintf(sec_err, sizeof sec_err, "%s: %s", hint, reason);
        sec_count++;
        sec_ms = mono_ms();
        pthread_mutex_unlock(&sec_mu);
        log_error("kafka", "%s: %s", reason, hint);
        return;
    }
    log_warn("kafka", "%s (%s)", reason, rd_kafka_err2name((rd_kafka_resp_err_t)err));
}

unsigned kafka_security_refusals(long long *last_ms) {
    pthread_mutex_lock(&sec_mu);
    unsigned n = sec_count;
    if (last_ms) *last_ms = sec_ms;
    pthread_mutex_unlock(&sec_mu);
    return n;
}

bool kafka_security_error(char *buf, size_t n) {
    pthread_mutex_lock(&sec_mu);
    bool any = sec_err[0] != '\0';
    if (any && buf && n) snprintf(buf, n, "%s", sec_err);
    pthread_mutex_unlock(&sec_mu);
    return any;
}

/* a property's value is not printed when it may be a secret */
static bool secret_key(const char *key) {
    return strstr(key, "password") || strstr(key, "secret") || strstr(key, ".pem") ||
           strstr(key, "sasl.oauthbearer.config");
}

int kafka_conf_set(rd_kafka_conf_t *conf, const char *key, const char *val, char *err,
                   size_t errlen) {
    char e[512];
    if (rd_kafka_conf_set(conf, key, val, e, sizeof e) != RD_KAFKA_CONF_OK)
        return errf(err, errlen, "librdkafka setting %s = %s: %s", key,
                    secret_key(key) ? "(not shown)" : val, e);
    return 0;
}

/* The properties of client_properties that searchsync sets itself, and
 * what sets them instead */
static const char *owned_by(const struct ss_config *cfg, const char *key) {
    static const char *const owned[][2] = {
        {"bootstrap.servers", "[kafka] brokers"},
        {"metadata.broker.list", "[kafka] brokers"},
        {"group.id", "[kafka] group"},
        {"auto.offset.reset", "[source] start"},
        {"security.protocol", "[kafka] security_protocol"},
        {"sasl.username", "[kafka] sasl_username"},
        {"sasl.password", "[kafka] sasl_password"},
        {"ssl.ca.location", "[kafka] ssl_ca"},
        {"ssl.certificate.location", "[kafka] ssl_cert"},
        {"ssl.key.location", "[kafka] ssl_key"},
        /* offsets are saved with the checkpoint and committed once the
         * engine acknowledged them; one static member per source */
        {"enable.auto.commit", "searchsync itself"},
        {"enable.auto.offset.store", "searchsync itself"},
        {"group.instance.id", "searchsync itself"},
        {"session.timeout.ms", "searchsync itself"},
        {"topic.metadata.refresh.interval.ms", "searchsync itself"},
    };
    for (size_t i = 0; i < sizeof owned / sizeof owned[0]; i++)
        if (!strcmp(key, owned[i][0])) return owned[i][1];
    if (cfg->kafka.sasl_mechanism && (!strcmp(key, "sasl.mechanisms") ||
                                      !strcmp(key, "sasl.mechanism")))
        return "[kafka] sasl_mechanism";
    return NULL;
}

/* [kafka] client_properties into conf: `name = value` (or `name: value`)
 * lines, # and ! comments, as a Java client's properties file writes them
 * without escapes. *mech set when it names sasl.mechanism(s). 0, or -1
 * with err naming the file, line and property. */
static int apply_properties(rd_kafka_conf_t *conf, const struct ss_config *cfg, bool *mech,
                            char *err, size_t errlen) {
    const char *path = cfg->kafka.client_properties;
    FILE *f = fopen(path, "r");
    if (!f)
        return errf(err, errlen, "[kafka] client_properties: cannot read %s: %s", path,
                    strerror(errno));
    sbuf text = SBUF_INIT;
    sbuf_read_fp(&text, f);
    fclose(f);
    int rc = 0, lineno = 0;
    for (char *line = text.data, *next; line && rc == 0; line = next) {
        next = strchr(line, '\n');
        if (next) *next++ = '\0';
        lineno++;
        char *s = str_trim(line);
        if (!*s || *s == '#' || *s == '!') continue;
        size_t k = strcspn(s, "=:");
        if (!s[k]) {
            rc = errf(err, errlen, "%s:%d: expected \"name = value\", got \"%.80s\"", path,
                      lineno, s);
            break;
        }
        s[k] = '\0';
        char *key = str_trim(s), *val = str_trim(s + k + 1);
        const char *by = owned_by(cfg, key);
        if (by) {
            rc = errf(err, errlen, "%s:%d: %s is set by %s; remove it from [kafka] "
                      "client_properties%s", path, lineno, key, by,
                      strncmp(by, "searchsync", 10) ? " and set that key" : "");
            break;
        }
        char e[700];
        if (kafka_conf_set(conf, key, val, e, sizeof e) < 0) {
            rc = errf(err, errlen, "%s:%d: %s", path, lineno, e);
            break;
        }
        if (!strcmp(key, "sasl.mechanisms") || !strcmp(key, "sasl.mechanism")) *mech = true;
    }
    sbuf_free(&text);
    return rc;
}

/* [kafka] security_protocol, sasl_* and ssl_* */
static int apply_security(rd_kafka_conf_t *conf, const struct ss_config *cfg, char *err,
                          size_t errlen) {
    const struct ss_config *c = cfg;
    const char *const kv[][2] = {
        {"security.protocol", c->kafka.security_protocol},
        {"sasl.mechanisms", c->kafka.sasl_mechanism},
        {"sasl.username", c->kafka.sasl_username},
        {"sasl.password", c->kafka.sasl_password},
        {"ssl.ca.location", c->kafka.ssl_ca},
        {"ssl.certificate.location", c->kafka.ssl_cert},
        {"ssl.key.location", c->kafka.ssl_key},
    };
    for (size_t i = 0; i < sizeof kv / sizeof kv[0]; i++)
        if (kv[i][1] && kafka_conf_set(conf, kv[i][0], kv[i][1], err, errlen) < 0) return -1;
    return 0;
}

rd_kafka_conf_t *kafka_conf_new(const struct ss_config *cfg, const char *client_id, char *err,
                                size_t errlen) {
    rd_kafka_conf_t *conf = rd_kafka_conf_new();
    bool beginning = cfg->source.start && !strcmp(cfg->source.start, "beginning");
    bool mech = cfg->kafka.sasl_mechanism != NULL;
    const char *proto = cfg->kafka.security_protocol ? cfg->kafka.security_protocol : "";
    if (kafka_conf_set(conf, "bootstrap.servers", cfg->kafka.brokers, err, errlen) < 0 ||
        kafka_conf_set(conf, "client.id", client_id, err, errlen) < 0 ||
        kafka_conf_set(conf, "group.id", cfg->kafka.group, err, errlen) < 0 ||
        kafka_conf_set(conf, "enable.auto.offset.store", "false", err, errlen) < 0 ||
        kafka_conf_set(conf, "auto.offset.reset", beginning ? "earliest" : "latest", err,
                       errlen) < 0 ||
        apply_security(conf, cfg, err, errlen) < 0 ||
        (cfg->kafka.client_properties && apply_properties(conf, cfg, &mech, err, errlen) < 0)) {
        rd_kafka_conf_destroy(conf);
        return NULL;
    }
    /* librdkafka's own default mechanism is GSSAPI (Kerberos): never a guess */
    if (!strncmp(proto, "sasl_", 5) && !mech) {
        rd_kafka_conf_destroy(conf);
        errf(err, errlen, "[kafka] security_protocol = %s needs [kafka] sasl_mechanism, or "
             "sasl.mechanisms in [kafka] client_properties (%s)", proto,
             cfg->kafka.client_properties);
        return NULL;
    }
    rd_kafka_conf_set_log_cb(conf, on_log);
    rd_kafka_conf_set_error_cb(conf, on_error);
    return conf;
}

int kafka_consume_error(rd_kafka_t *rk, const rd_kafka_message_t *msg, const char *area,
                        const char *prefix, char *err, size_t errlen) {
    if (msg->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) return 0;
    log_warn(area, "%s%s%s%s", prefix, msg->rkt ? rd_kafka_topic_name(msg->rkt) : "",
             msg->rkt ? ": " : "", rd_kafka_message_errstr(msg));
    return rd_kafka_fatal_error(rk, err, errlen) ? -1 : 0;
}
