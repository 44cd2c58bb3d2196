/* kafka_conf: a Kafka source's consumer configuration (see kafka_conf.h). */
#include "kafka_conf.h"

#include <string.h>

#include "log.h"
#include "sbuf.h"

static void on_log(const rd_kafka_t *rk, int level, const char *fac, const char *buf) {
    (void)rk;
    if (level <= 3) log_error("kafka", "%s: %s", fac, buf);
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
    log_warn("kafka", "%s (%s)", reason, rd_kafka_err2name((rd_kafka_resp_err_t)err));
}

int kafka_conf_set(rd_kafka_conf_t *conf, const char *key, const char *val, char *err,
                   size_t errlen) {
    char e[512];
    if (rd_kafka_conf_set(conf, key, val, e, sizeof e) != RD_KAFKA_CONF_OK)
        return errf(err, errlen, "librdkafka setting %s = %s: %s", key, val, e);
    return 0;
}

rd_kafka_conf_t *kafka_conf_new(const struct ss_config *cfg, const char *client_id, char *err,
                                size_t errlen) {
    rd_kafka_conf_t *conf = rd_kafka_conf_new();
    bool beginning = cfg->source.start && !strcmp(cfg->source.start, "beginning");
    if (kafka_conf_set(conf, "bootstrap.servers", cfg->kafka.brokers, err, errlen) < 0 ||
        kafka_conf_set(conf, "client.id", client_id, err, errlen) < 0 ||
        kafka_conf_set(conf, "group.id", cfg->kafka.group, err, errlen) < 0 ||
        kafka_conf_set(conf, "enable.auto.offset.store", "false", err, errlen) < 0 ||
        kafka_conf_set(conf, "auto.offset.reset", beginning ? "earliest" : "latest", err,
                       errlen) < 0) {
        rd_kafka_conf_destroy(conf);
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
