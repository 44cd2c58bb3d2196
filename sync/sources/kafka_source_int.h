/* kafka_source_int: the state of a Kafka source, shared by its files —
 * kafka_source.c (the consumer, change sets, one message) and
 * kafka_subscribe.c (the topics subscribed to at run time) — and nobody
 * else: the daemon holds it as an opaque pointer (source.h). */
#ifndef SS_KAFKA_SOURCE_INT_H
#define SS_KAFKA_SOURCE_INT_H
#include <librdkafka/rdkafka.h>
#include <stdbool.h>
#include <stdint.h>

#include "kafka_token.h"
#include "kafka_topics.h"
#include "mq/mq.h"
#include "mq_schema.h"
#include "sbuf.h"
#include "strset.h"
#include "sync/sources/kafka_live.h"
#include "sync/sources/kafka_unassigned.h"
#include "sync/sources/source.h"

#define GROUP_ROWS_MAX 20000
#define GROUP_MS_MAX 200
#define GROUP_WAIT_MS 10
#define CLOCK_FILE_BASE (1u << 20) /* time versions: file numbers from here up */
#define CLOCK_EPOCH_S 1704067200LL /* 2024-01-01T00:00:00Z */

/* where a table's messages came from, to warn when it is spread */
struct ktable {
    char *name; /* db.table */
    char *topic;
    int32_t partition;
    bool warned;
    struct ktable *next;
};

struct kafka_source {
    struct source_env *env;
    rd_kafka_t *rk;
    mq_msg m;
    mq_opts o;
    struct mq_schema schema;
    /* the consumed frontier (reader thread): from the saved checkpoint at
     * start, moved past each message read; where an assigned partition
     * resumes (a rebalance too), and the token of every change set */
    struct kafka_offsets parts;
    struct ktable *tables;
    struct kafka_topic_rows meta; /* the source's rows of kafka_topics, sorted (topics at run time) */
    long long topics_ms;   /* when they were read last (monotonic) */
    bool topics_warned;
    char **missing;        /* subscribed topics Kafka does not have (warned once each) */
    size_t nmissing;
    struct kafka_unassigned unassigned; /* topics Kafka has that the group does not assign */
    long long assigned_ms; /* the last assignment (monotonic); 0: none settled */
    bool live_stale;       /* a rebalance since live_publish */
    struct kafka_live live; /* published in env->rs->kafka */
    int format;            /* [kafka] format (enum mq_format) */
    /* the open change set */
    unsigned group_msgs;
    long long group_start_ms;
    unsigned long long group_rows;
    bool group_coords, group_clock;
    bl_pos group_pos;      /* the largest coordinates of the set */
    bl_pos last_end;       /* the version of the last change set built */
    bool have_last;
    bool moved;            /* offsets moved since the last change set ended */
    uint64_t last_clock_us;
    bool mixed_warned;
    /* the read snapshot of a change set (kafka_visible.c) */
    enum { KS_SNAP_UNKNOWN, KS_SNAP_POS, KS_SNAP_NONE, KS_SNAP_OFF } snap; /* the source
                            * reports snapshot positions; not (MySQL); has no binlog */
    bool in_snap;
    sbuf token;
    unsigned long long messages, dead, markers;
    unsigned refusals;     /* the brokers' refusals seen (kafka_security_refusals) */
    bool refused;          /* ... and status says the source is down for one */
    long long refusal_probe_ms; /* when the brokers were last asked whether they take us */
    struct strset unsure_warned; /* "alias\x1fcolumn" of row-image documents re-read */
};

/* The read snapshot of the open change set's documents opened, at or past
 * the binlog's end (or, on MySQL, what was binlogged waited for to be
 * committed); nothing when the set reads nothing back. 0, or -1 with
 * env->p->err (p->src_errno). ks_read_snapshot_end after the build. */
int ks_read_snapshot_begin(struct kafka_source *ks);
void ks_read_snapshot_end(struct kafka_source *ks);
/* What the consumer reads now, published for the admin API (env->rs->kafka). */
void ks_live_publish(struct kafka_source *ks);
/* the reader's figures for status (at_end: idle at the topics' ends) */
void ks_publish_stats(struct kafka_source *ks, bool at_end);
/* status told of the brokers' security refusals: the source down with the
 * last one's reason, up again at a message read (read) or once the brokers
 * answer a metadata request (asked every 5 s while idle) */
void ks_refusals_poll(struct kafka_source *ks, bool read);
/* Subscribe to the topics of [kafka] and the metadata's rows. 0 or -1 with err. */
int ks_subscribe(struct kafka_source *ks, char *err, size_t errlen);
/* A topic that was missing is read again (how: what brought it back). */
void ks_topic_back(struct kafka_source *ks, const char *topic, const char *how);
/* The metadata's topic rows read again every TOPICS_EVERY_MS (now: at
 * once); the subscription follows them. */
void ks_topics_poll(struct kafka_source *ks, bool now);
/* The message format of a topic (its row's, else [kafka] format). */
int ks_topic_format(struct kafka_source *ks, const char *topic);
/* A subscribed topic Kafka does not have: warned, a dead letter naming it,
 * its partitions out of the token. 0, or -1 on a stop before the dead
 * letter was stored. */
int ks_topic_missing(struct kafka_source *ks, const rd_kafka_message_t *msg);

#endif
