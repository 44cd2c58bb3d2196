/* kafka_source: Kafka topics as the producer of change sets of `searchsync
 * run` ([source] kind = kafka); the design is at the top of
 * sync/sources/kafka_source.c. It is given a struct source_env
 * (sync/sources/source.h) and nothing else of the node. */
#ifndef SS_KAFKA_SOURCE_H
#define SS_KAFKA_SOURCE_H
#include <stdbool.h>

struct source_env;
struct kafka_source;

/* The consumer subscribed, with the saved checkpoint's offsets to resume
 * from (*out set, even on a failure: kafka_source_close). 0 or -1
 * (env->err). */
int kafka_source_open(struct source_env *env, bool from_current, struct kafka_source **out);
/* Read, route, build and deliver until a stop or a failure; BL_STOP or
 * BL_ERR (env->err). */
int kafka_source_run(struct kafka_source *ks);
/* Delivery's checkpoint thread: position (a token of this source) was saved
 * in the metadata; the same offsets are committed to Kafka. NULL-safe. */
void kafka_source_saved(struct kafka_source *ks, const char *position);
/* After delivery is freed (no checkpoint may come any more). NULL-safe. */
void kafka_source_close(struct kafka_source *ks);

#endif
