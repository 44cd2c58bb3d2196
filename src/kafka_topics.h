/* kafka_topics: the topics of a Kafka source ([source] kind = kafka) — the
 * ones of the configuration ([kafka] topics, topic_regex) and the ones kept
 * in the metadata schema's kafka_topics table (migrations 0013, 0015), which
 * are added and removed at run time. One place for their rules and SQL,
 * used by `searchsync topics` (cmd/cmd_topics.c), the daemon's consumer
 * (sync/sources/kafka_source.c, which re-reads the table every 2 s) and the admin
 * API (web/topics_api.c). */
#ifndef SS_KAFKA_TOPICS_H
#define SS_KAFKA_TOPICS_H
#include <stdbool.h>
#include <stddef.h>

#include <mysql.h>

#include "config.h"

/* Kafka's legal topic names: 1..249 of [a-zA-Z0-9._-], not "." or ".." */
bool kafka_topic_name_ok(const char *t);
#define KAFKA_TOPIC_NAME_RULE "1 to 249 of a-z, A-Z, 0-9, '.', '_' and '-', not \".\" or \"..\""
/* a format a topic may name ("canal-json", "debezium", "maxwell", "auto"):
 * its enum mq_format, or -1 */
int kafka_topic_format(const char *name);
#define KAFKA_TOPIC_FORMATS "auto, canal-json, debezium or maxwell"

/* the topics of [kafka] topics (comma or blank separated), in order,
 * without repeats; free with kafka_names_free */
char **kafka_config_topics(const struct ss_config *cfg, size_t *n);
bool kafka_topic_in_config(const struct ss_config *cfg, const char *topic);
void kafka_names_free(char **v, size_t n);

struct kafka_topic_row {
    char *topic;
    char *format;   /* NULL: [kafka] format */
    char *added_at; /* ISO 8601 UTC with milliseconds (the session is UTC) */
};
struct kafka_topic_rows {
    struct kafka_topic_row *v;
    size_t n;
};
/* the source's rows of kafka_topics, sorted by topic. 0, or -1 (err). */
int kafka_topics_read(MYSQL *m, const char *source, struct kafka_topic_rows *out, char *err,
                      size_t errlen);
void kafka_topic_rows_free(struct kafka_topic_rows *r); /* empties r */
/* a row added (format NULL: [kafka] format): 1 added, 2 its format
 * changed, 0 it was there as it is, -1 (err) */
int kafka_topics_add(MYSQL *m, const char *source, const char *topic, const char *format,
                     char *err, size_t errlen);
/* 1 removed, 0 not there, -1 (err) */
int kafka_topics_remove(MYSQL *m, const char *source, const char *topic, char *err,
                        size_t errlen);

#endif
