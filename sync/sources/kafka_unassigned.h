/* kafka_unassigned: subscribed topics Kafka has that the consumer group
 * assigns no partition of to `searchsync run` (sync/sources/kafka_source.c) — found,
 * warned about, and mended by joining the group again.
 *
 * The daemon joins its group as a static member (group.instance.id). A
 * static member that comes back while its previous session is still alive
 * (a restart within session.timeout.ms: SIGTERM, or SIGKILL and systemd)
 * is handed its previous assignment without a rebalance, whatever it
 * subscribes to now (Kafka's coordinator compares the protocol name only:
 * KAFKA-12759). A topic added while the daemon was down (`searchsync topics
 * add`) that Kafka has by the restart is therefore in the subscription but
 * never assigned, and librdkafka, which sees no change in the topics it
 * subscribed to, never asks for a rebalance: its messages are not read
 * until the group is left alone longer than the session.
 *
 * So every 2 s the reader compares the names it subscribes to with its
 * assignment; for a name with no partition assigned (none, usually: no
 * request then) it asks Kafka's metadata. A topic Kafka has with
 * partitions and that stays unassigned past UNASSIGNED_WAIT_MS (longer
 * than librdkafka's own metadata refresh and rebalance, which handle a
 * topic created after the join) is warned about and the consumer
 * subscribes again: a known member's new JoinGroup makes the coordinator
 * rebalance, and the topic's partitions are assigned. If they still are
 * not after another wait (another consumer of the same group holds
 * them), that is warned about once and the group is left as it is. A
 * topic Kafka does not have is not this file's (kafka_source.c
 * topic_missing). */
#ifndef SS_SYNC_KAFKA_UNASSIGNED_H
#define SS_SYNC_KAFKA_UNASSIGNED_H
#include <librdkafka/rdkafka.h>
#include <stdbool.h>
#include <stddef.h>

#define UNASSIGNED_WAIT_MS 4000

struct kafka_unassigned_topic {
    char *name;
    long long since_ms;    /* first seen in Kafka with no partition assigned */
    long long rejoined_ms; /* when the consumer subscribed again; 0: not yet */
    bool warned_held;      /* still unassigned after the rejoin: said */
};

struct kafka_unassigned {
    struct kafka_unassigned_topic *v;
    size_t n;
};

/* One look at names[0..n) (the subscribed topic names; regexes are not
 * looked at), leaving out missing[0..nmissing) (the topics Kafka does not
 * have, said elsewhere), at now_ms; assigned_ms: when the group last
 * assigned partitions (0 while none is settled: at the start, or between a
 * revocation and the next assignment — nothing is looked at then). Both
 * monotonic. true: the caller should subscribe again (rejoin the group).
 * source and group name the warnings. */
bool kafka_unassigned_check(struct kafka_unassigned *u, rd_kafka_t *rk, char *const *names,
                            size_t n, char *const *missing, size_t nmissing, const char *source,
                            const char *group, long long assigned_ms, long long now_ms);

/* whether topic is one of those Kafka has and the group does not assign */
bool kafka_unassigned_has(const struct kafka_unassigned *u, const char *topic);

void kafka_unassigned_free(struct kafka_unassigned *u);

#endif
