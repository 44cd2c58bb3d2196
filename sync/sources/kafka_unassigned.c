/* kafka_unassigned: subscribed topics the group does not assign (see
 * kafka_unassigned.h). */
#include "sync/sources/kafka_unassigned.h"

#include <stdlib.h>
#include <string.h>

#include "sync/sources/kafka_live.h"
#include "log.h"
#include "sbuf.h"

/* topic's partition count in Kafka's metadata; 0: Kafka does not have it
 * (or did not answer within a second) */
static int partitions_in_kafka(rd_kafka_t *rk, const char *topic) {
    rd_kafka_topic_t *rkt = rd_kafka_topic_new(rk, topic, NULL);
    const struct rd_kafka_metadata *md = NULL;
    int parts = 0;
    if (rkt && rd_kafka_metadata(rk, 0, rkt, &md, 1000) == RD_KAFKA_RESP_ERR_NO_ERROR) {
        for (int t = 0; t < md->topic_cnt; t++)
            if (!strcmp(md->topics[t].topic, topic) && !md->topics[t].err)
                parts = md->topics[t].partition_cnt;
    }
    if (md) rd_kafka_metadata_destroy(md);
    if (rkt) rd_kafka_topic_destroy(rkt);
    return parts;
}

static struct kafka_unassigned_topic *find(const struct kafka_unassigned *u, const char *topic) {
    for (size_t i = 0; i < u->n; i++)
        if (!strcmp(u->v[i].name, topic)) return &u->v[i];
    return NULL;
}

bool kafka_unassigned_has(const struct kafka_unassigned *u, const char *topic) {
    return find(u, topic) != NULL;
}

static void drop(struct kafka_unassigned *u, size_t i) {
    free(u->v[i].name);
    u->v[i] = u->v[--u->n];
}

/* the names with no partition in the assignment (and not missing) */
static char **without_partitions(rd_kafka_t *rk, char *const *names, size_t n,
                                 char *const *missing, size_t nmissing, size_t *nout) {
    rd_kafka_topic_partition_list_t *a = NULL;
    if (rd_kafka_assignment(rk, &a) != RD_KAFKA_RESP_ERR_NO_ERROR) a = NULL;
    char **out = xcalloc(n ? n : 1, sizeof *out);
    *nout = 0;
    for (size_t i = 0; i < n; i++) {
        bool assigned = false;
        for (int k = 0; a && !assigned && k < a->cnt; k++)
            assigned = !strcmp(a->elems[k].topic, names[i]);
        if (!assigned && !kafka_live_has(missing, nmissing, names[i]))
            out[(*nout)++] = names[i];
    }
    if (a) rd_kafka_topic_partition_list_destroy(a);
    return out;
}

bool kafka_unassigned_check(struct kafka_unassigned *u, rd_kafka_t *rk, char *const *names,
                            size_t n, char *const *missing, size_t nmissing, const char *source,
                            const char *group, long long assigned_ms, long long now_ms) {
    if (!assigned_ms) return false; /* a rebalance under way: its result is awaited */
    size_t nc;
    char **cand = without_partitions(rk, names, n, missing, nmissing, &nc);
    /* topics assigned now, or no longer subscribed: their episode is over */
    for (size_t i = 0; i < u->n;) {
        bool still = kafka_live_has(cand, nc, u->v[i].name);
        if (!still && u->v[i].rejoined_ms)
            log_info("run", "topic %s of source %s: its partitions are assigned now",
                     u->v[i].name, source);
        if (still) i++;
        else drop(u, i);
    }
    bool rejoin = false;
    for (size_t i = 0; i < nc; i++) {
        int parts = partitions_in_kafka(rk, cand[i]);
        struct kafka_unassigned_topic *t = find(u, cand[i]);
        if (parts <= 0) { /* not (yet) in Kafka: librdkafka says so (topic_missing) */
            if (t) drop(u, (size_t)(t - u->v));
            continue;
        }
        if (!t) {
            u->v = xrealloc(u->v, (u->n + 1) * sizeof *u->v);
            t = &u->v[u->n++];
            *t = (struct kafka_unassigned_topic){xstrdup(cand[i]), now_ms, 0, false};
            continue;
        }
        long long from = t->since_ms > assigned_ms ? t->since_ms : assigned_ms;
        if (!t->rejoined_ms && now_ms - from >= UNASSIGNED_WAIT_MS) {
            log_warn("run", "topic %s of source %s: Kafka has it (%d partition(s)) but the "
                     "consumer group %s has assigned none of them to this daemon for %lld s, so "
                     "none of its messages is read (a quick restart of a static member keeps "
                     "its previous assignment): joining the group again", cand[i], source, parts,
                     group, (now_ms - from) / 1000);
            t->rejoined_ms = now_ms;
            rejoin = true;
        } else if (t->rejoined_ms && !t->warned_held &&
                   now_ms - (t->rejoined_ms > assigned_ms ? t->rejoined_ms : assigned_ms) >=
                       UNASSIGNED_WAIT_MS) {
            log_warn("run", "topic %s of source %s: still none of its %d partition(s) assigned "
                     "to this daemon after joining the consumer group %s again: another "
                     "consumer of the group holds them (give each source a group of its own: "
                     "[kafka] group); its messages are not read here", cand[i], source, parts,
                     group);
            t->warned_held = true;
        }
    }
    free(cand);
    return rejoin;
}

void kafka_unassigned_free(struct kafka_unassigned *u) {
    for (size_t i = 0; i < u->n; i++) free(u->v[i].name);
    free(u->v);
    u->v = NULL;
    u->n = 0;
}
