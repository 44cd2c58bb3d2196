/* kafka_source: Kafka topics as the producer of change sets of `searchsync
 * run` ([source] kind = kafka); the design is at the top of
 * sync/sources/kafka_source.c. It is given a struct source_env
 * (sync/sources/source.h) and nothing else of the node; its state, struct
 * kafka_source, is private to it.
 *
 *   open    the consumer subscribed, with the saved checkpoint's offsets to
 *           resume from (--from-current is refused: there is no binlog)
 *   run     read, route, build and deliver until a stop or a failure
 *   saved   delivery's checkpoint thread: the saved offsets are committed
 *           to Kafka too
 *   close   after delivery is freed */
#ifndef SS_KAFKA_SOURCE_H
#define SS_KAFKA_SOURCE_H
#include "sync/sources/source.h"

extern const struct source_kind kafka_source_kind;

#endif
