/* kafka_token: the resume token of a Kafka source — the offsets part of its
 * checkpoint (offsets.position), "kafka T/P=N T/P=N ...": for every
 * partition P of topic T read so far, N the next offset to read. Pure
 * logic (tests/unit/test_kafka_token.c); written by sync/sources/kafka_source.c,
 * read by it at start, by its checkpoint callback (the offsets committed to
 * Kafka) and by GET /api/v1/topics (web/topics_api.c). */
#ifndef SS_KAFKA_TOKEN_H
#define SS_KAFKA_TOKEN_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sbuf.h"

struct kafka_offset {
    char *topic;
    int32_t partition;
    int64_t next; /* the next offset to read; -1: none yet */
};

/* a list in the order partitions were first named */
struct kafka_offsets {
    struct kafka_offset *v;
    size_t n;
};

/* the entry of topic/partition; with add, appended (next -1) when absent,
 * else NULL */
struct kafka_offset *kafka_offsets_at(struct kafka_offsets *o, const char *topic,
                                      int32_t partition, bool add);
/* every partition of topic taken out of the list; how many there were */
size_t kafka_offsets_drop_topic(struct kafka_offsets *o, const char *topic);
void kafka_offsets_free(struct kafka_offsets *o); /* NULL-safe; empties o */

/* "kafka" followed by " T/P=N" items → appended to o (a partition named
 * twice: the last N). 0, or -1 when s is not such a token (a binlog
 * position, or a malformed item: o then holds the items before it). */
int kafka_token_parse(const char *s, struct kafka_offsets *o);
/* o as a token into out (reset first); partitions with no offset (-1) are
 * left out. Returns out->data. */
const char *kafka_token_make(const struct kafka_offsets *o, sbuf *out);

#endif
