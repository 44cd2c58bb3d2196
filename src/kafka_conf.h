/* kafka_conf: the librdkafka consumer configuration a Kafka source's readers
 * share — `searchsync run` (sync/sources/kafka_source.c) and `searchsync kafka-tail`
 * (cmd/cmd_kafka_tail.c): the brokers, group and start of [kafka] /
 * [source], how the brokers are reached (security_protocol, SASL, TLS and
 * client_properties of [kafka]), offsets stored only by hand, librdkafka's
 * log and errors in searchsync's log. Each adds its own settings with
 * kafka_conf_set. */
#ifndef SS_KAFKA_CONF_H
#define SS_KAFKA_CONF_H
#include <librdkafka/rdkafka.h>
#include <stdbool.h>
#include <stddef.h>

#include "config.h"

/* key = val; -1 with err naming both */
int kafka_conf_set(rd_kafka_conf_t *conf, const char *key, const char *val, char *err,
                   size_t errlen);
/* bootstrap.servers, client.id, group.id, enable.auto.offset.store=false,
 * auto.offset.reset from [source] start, [kafka]'s security keys, the
 * properties of [kafka] client_properties (one searchsync sets itself is
 * refused), the log and error callbacks. NULL with err. */
rd_kafka_conf_t *kafka_conf_new(const struct ss_config *cfg, const char *client_id, char *err,
                                size_t errlen);
/* A polled message that carries a consumer error (msg->err set), said as a
 * warning in log area `area`, its text after `prefix` (the end of a
 * partition is no error and is not said). 0 to poll on; -1 when the
 * consumer has failed for good (librdkafka's fatal error), with err its
 * reason. The caller still destroys msg. */
int kafka_consume_error(rd_kafka_t *rk, const rd_kafka_message_t *msg, const char *area,
                        const char *prefix, char *err, size_t errlen);

/* Whether a client of this process was refused by the brokers' security
 * (SASL authentication or TLS) since it started; buf (when not NULL) gets
 * the last refusal with what to check. Said by the error callback, which
 * also logs it as an ERROR. */
bool kafka_security_error(char *buf, size_t n);
/* How many such refusals were said since the process started, and (when
 * last_ms is not NULL) the monotonic ms of the last */
unsigned kafka_security_refusals(long long *last_ms);

#endif
