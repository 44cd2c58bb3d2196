/* kafka_live: what the Kafka consumer of `searchsync run` reads right now —
 * the topics it is subscribed to, those Kafka does not have (deleted, or
 * never created), those it has and the group assigns none of, and the partitions assigned to it with the next offset it
 * reads and the partition's end (high watermark) as last fetched. Written by
 * the reader thread (sync/sources/kafka_source.c, every 2 s and at each rebalance)
 * under the reader_stats lock; copied out by GET /api/v1/topics
 * (web/topics_api.c). Saved offsets are the checkpoint's, not these. */
#ifndef SS_SYNC_KAFKA_LIVE_H
#define SS_SYNC_KAFKA_LIVE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct kafka_live_part {
    char *topic;
    int32_t partition;
    int64_t next; /* the next offset the daemon reads; -1: unknown yet */
    int64_t high; /* the partition's end as last fetched; -1: unknown */
};

struct kafka_live {
    char **subscribed; /* topic names subscribed to (config and metadata) */
    size_t nsub;
    char *regex;       /* [kafka] topic_regex as subscribed; NULL: none */
    char **missing;    /* subscribed topics Kafka does not have */
    size_t nmissing;
    char **unassigned; /* subscribed topics Kafka has, none of their partitions
                        * assigned to this daemon (sync/sources/kafka_unassigned.h) */
    size_t nunassigned;
    struct kafka_live_part *parts; /* assigned now */
    size_t nparts;
    int64_t at_ms;     /* when it was written (unix ms) */
};

void kafka_live_free(struct kafka_live *l); /* its contents; NULL-safe */
void kafka_live_copy(struct kafka_live *to, const struct kafka_live *from);
bool kafka_live_has(char *const *v, size_t n, const char *topic);

#endif
