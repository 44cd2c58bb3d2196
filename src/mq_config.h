/* mq_config: the message decoders' options (src/mq, mq_opts) from the
 * configuration's [kafka] section — the format, canal's time zone and the
 * Debezium connector's settings — for the two readers of a Kafka source:
 * `searchsync kafka-tail` (cmd/cmd_kafka_tail.c) and `searchsync run`
 * (sync/sources/kafka_source.c). The schema lookup is each reader's own. */
#ifndef SS_MQ_CONFIG_H
#define SS_MQ_CONFIG_H
#include "config.h"
#include "mq/mq.h"

/* o's format, canal_tz_offset and dbz_* from cfg ([kafka], already checked by
 * config_load); the other fields are left as they are */
void mq_config_opts(const struct ss_config *cfg, mq_opts *o);

#endif
