/* kafka_conf: the librdkafka consumer configuration a Kafka source's readers
 * share — `searchsync run` (sync/sources/kafka_source.c) and `searchsync kafka-tail`
 * (src/cmd_kafka_tail.c): the brokers, group and start of [kafka] /
 * [source], offsets stored only by hand, librdkafka's log and errors in
 * searchsync's log. Each adds its own settings with kafka_conf_set. */
#ifndef SS_KAFKA_CONF_H
#define SS_KAFKA_CONF_H
#include <librdkafka/rdkafka.h>
#include <stddef.h>

#include "config.h"

/* key = val; -1 with err naming both */
int kafka_conf_set(rd_kafka_conf_t *conf, const char *key, const char *val, char *err,
                   size_t errlen);
/* bootstrap.servers, client.id, group.id, enable.auto.offset.store=false,
 * auto.offset.reset from [source] start, the log and error callbacks. NULL
 * with err. */
rd_kafka_conf_t *kafka_conf_new(const struct ss_config *cfg, const char *client_id, char *err,
                                size_t errlen);

#endif
