/* kafka_close: the end of `searchsync run`'s Kafka consumer (sync/
 * kafka_source.c): rd_kafka_consumer_close and rd_kafka_destroy, run in a
 * thread of their own and waited for CLOSE_WAIT_S at most.
 *
 * librdkafka 2.0 (Debian 12's) never returns from rd_kafka_destroy once a
 * subscribed topic was deleted while its partitions were assigned (a
 * partition handle keeps its broker; fixed in later releases), and a close
 * may wait on the group coordinator (a join under way when the stop came).
 * The checkpoint is saved before (daemon.c: delivery's last save, whose
 * offsets are committed to the group as every save's are), so a client
 * still closing is left to the process's exit, and so is the source's
 * state, which its rebalance callback may still read. */
#ifndef SS_SYNC_KAFKA_CLOSE_H
#define SS_SYNC_KAFKA_CLOSE_H
#include <librdkafka/rdkafka.h>
#include <stdbool.h>

/* rk closed and destroyed: true; false: still closing after CLOSE_WAIT_S,
 * left to the process's exit (said in the log) */
bool kafka_close_bounded(rd_kafka_t *rk);

#endif
