/* kafka_subscribe: the topics a Kafka source reads, at run time — [kafka]
 * topics and topic_regex and the source's rows of the metadata's
 * kafka_topics (src/kafka_topics.c, `searchsync topics`), read again every
 * 2 s and subscribed to without a restart; topics Kafka does not have
 * (missing) or does not assign to the group (unassigned), warned and read
 * again once they are back; what the consumer reads, published for the
 * admin API (kafka_live.h), and its figures and the brokers' refusals for
 * status. The state is kafka_source_int.h's. */
#include <librdkafka/rdkafka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sync/sources/kafka_close.h"
#include "kafka_conf.h"
#include "sync/sources/kafka_live.h"
#include "sync/sources/kafka_source.h"
#include "sync/sources/source.h"
#include "kafka_token.h"
#include "kafka_topics.h"
#include "sync/sources/kafka_unassigned.h"
#include "log.h"
#include "monotime.h"
#include "mq/mq.h"
#include "mq_config.h"
#include "mq_schema.h"

#include "sync/sources/kafka_source_int.h"

/* ---------- topics at run time (kafka_topics, `searchsync topics`) ---------- */

#define TOPICS_EVERY_MS 2000

/* the names subscribed to: [kafka] topics, then the metadata's */
static char **subscribed_names(struct kafka_source *ks, size_t *n) {
    char **v = kafka_config_topics(ks->env->cfg, n);
    for (size_t i = 0; i < ks->meta.n; i++)
        if (!kafka_live_has(v, *n, ks->meta.v[i].topic)) {
            v = xrealloc(v, (*n + 1) * sizeof *v);
            v[(*n)++] = xstrdup(ks->meta.v[i].topic);
        }
    return v;
}

/* the live state for GET /api/v1/topics: the subscription, the missing
 * topics, those the group assigns none of, and the assigned partitions
 * (next offset, end) */
void ks_live_publish(struct kafka_source *ks) {
    struct kafka_live l = {0};
    const struct ss_config *cfg = ks->env->cfg;
    l.subscribed = subscribed_names(ks, &l.nsub);
    if (cfg->kafka.topic_regex && *cfg->kafka.topic_regex) l.regex = xstrdup(cfg->kafka.topic_regex);
    l.missing = xcalloc(ks->nmissing ? ks->nmissing : 1, sizeof *l.missing);
    for (size_t i = 0; i < ks->nmissing; i++) l.missing[l.nmissing++] = xstrdup(ks->missing[i]);
    rd_kafka_topic_partition_list_t *a = NULL;
    if (ks->rk && !rd_kafka_assignment(ks->rk, &a) && a) {
        l.parts = xcalloc(a->cnt ? (size_t)a->cnt : 1, sizeof *l.parts);
        for (int i = 0; i < a->cnt; i++) {
            const rd_kafka_topic_partition_t *e = &a->elems[i];
            struct kafka_offset *k = kafka_offsets_at(&ks->parts, e->topic, e->partition, false);
            int64_t lo = -1, hi = -1;
            if (rd_kafka_get_watermark_offsets(ks->rk, e->topic, e->partition, &lo, &hi) ||
                hi < 0)
                hi = -1;
            l.parts[l.nparts++] = (struct kafka_live_part){xstrdup(e->topic), e->partition,
                                                           k ? k->next : -1, hi};
        }
    }
    if (a) rd_kafka_topic_partition_list_destroy(a);
    l.unassigned = xcalloc(ks->unassigned.n ? ks->unassigned.n : 1, sizeof *l.unassigned);
    for (size_t i = 0; i < ks->unassigned.n; i++) { /* (assigned since the last look: not) */
        bool now = false;
        for (size_t k = 0; k < l.nparts && !now; k++)
            now = !strcmp(l.parts[k].topic, ks->unassigned.v[i].name);
        if (!now) l.unassigned[l.nunassigned++] = xstrdup(ks->unassigned.v[i].name);
    }
    l.at_ms = reader_stats_now_ms();
    struct kafka_live old;
    pthread_mutex_lock(&ks->env->rs->mu);
    old = ks->live;
    ks->live = l;
    ks->env->rs->kafka = &ks->live;
    pthread_mutex_unlock(&ks->env->rs->mu);
    kafka_live_free(&old);
}

void ks_publish_stats(struct kafka_source *ks, bool at_end) {
    struct source_env *env = ks->env;
    struct reader_figures *f = &env->rs->f;
    pthread_mutex_lock(&env->rs->mu);
    f->reading = true;
    f->at_end = at_end;
    if (!at_end) f->read_ms = reader_stats_now_ms();
    f->txns = env->counts.txns;
    f->rows = env->counts.rows;
    f->ddls = env->counts.ddls;
    pthread_mutex_unlock(&env->rs->mu);
}

/* A refusal by the brokers' security (src/kafka_conf.c) is the source down
 * with its reason, as a server refusing the binlog source's replica is
 * (status, `searchsync source list`, the UI). It is up again at the next
 * message read or, on topics with nothing new, once a metadata request is
 * answered (asked every REFUSAL_PROBE_MS while idle): a credential fixed on
 * the brokers' side. librdkafka retries on its own but says an identical
 * refusal again only after tens of seconds, so its silence proves nothing. */
#define REFUSAL_PROBE_MS 5000

void ks_refusals_poll(struct kafka_source *ks, bool read) {
    unsigned n = kafka_security_refusals(NULL);
    if (n != ks->refusals) {
        char why[600];
        kafka_security_error(why, sizeof why);
        ks->refusals = n;
        ks->refused = true;
        ks->refusal_probe_ms = mono_ms();
        reader_stats_link(ks->env->rs, false, why);
        return;
    }
    if (!ks->refused) return;
    if (!read) {
        if (mono_ms() - ks->refusal_probe_ms < REFUSAL_PROBE_MS) return;
        ks->refusal_probe_ms = mono_ms();
        const struct rd_kafka_metadata *md = NULL;
        rd_kafka_resp_err_t e = rd_kafka_metadata(ks->rk, 0, NULL, &md, 2000);
        if (md) rd_kafka_metadata_destroy(md);
        if (e || kafka_security_refusals(NULL) != n) return;
    }
    ks->refused = false;
    reader_stats_link(ks->env->rs, true, NULL);
    log_info("run", "Kafka: the brokers take the source's settings again (%s)",
             read ? "a message was read" : "a metadata request was answered");
}

int ks_subscribe(struct kafka_source *ks, char *err, size_t errlen) {
    const struct ss_config *cfg = ks->env->cfg;
    rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(8);
    size_t n;
    char **names = subscribed_names(ks, &n);
    for (size_t i = 0; i < n; i++) rd_kafka_topic_partition_list_add(l, names[i],
                                                                     RD_KAFKA_PARTITION_UA);
    kafka_names_free(names, n);
    sbuf rx = SBUF_INIT;
    if (cfg->kafka.topic_regex && *cfg->kafka.topic_regex) {
        /* librdkafka takes a topic starting with ^ as a regex */
        sbuf_printf(&rx, "%s%s", cfg->kafka.topic_regex[0] == '^' ? "" : "^",
                    cfg->kafka.topic_regex);
        rd_kafka_topic_partition_list_add(l, rx.data, RD_KAFKA_PARTITION_UA);
    }
    rd_kafka_resp_err_t e = rd_kafka_subscribe(ks->rk, l);
    rd_kafka_topic_partition_list_destroy(l);
    sbuf_free(&rx);
    if (e) return errf(err, errlen, "subscribing to the [kafka] topics: %s", rd_kafka_err2str(e));
    return 0;
}

/* topic's row in r, or NULL */
static const struct kafka_topic_row *meta_row(const struct kafka_topic_rows *r,
                                              const char *topic) {
    for (size_t i = 0; i < r->n; i++)
        if (!strcmp(r->v[i].topic, topic)) return &r->v[i];
    return NULL;
}

static bool same_format(const char *a, const char *b) {
    return a && b ? !strcmp(a, b) : a == b;
}

/* topic out of the missing ones; whether it was one */
static bool topic_forget(struct kafka_source *ks, const char *topic) {
    for (size_t i = 0; i < ks->nmissing; i++)
        if (!strcmp(ks->missing[i], topic)) {
            free(ks->missing[i]);
            ks->missing[i] = ks->missing[--ks->nmissing];
            return true;
        }
    return false;
}

/* a missing topic Kafka has again (a message read, or its metadata): said once */
void ks_topic_back(struct kafka_source *ks, const char *topic, const char *how) {
    char name[250];
    snprintf(name, sizeof name, "%s", topic); /* topic may be the list's own copy */
    if (topic_forget(ks, name))
        log_info("run", "topic %s of source %s is in Kafka again: %s (read from the group's "
                 "committed offsets, else [source] start)", name, ks->env->cfg->source.name,
                 how);
}

/* the missing topics Kafka has again, by a metadata request each (not the
 * assignment: a group leader's metadata can be older than the deletion) */
static void missing_check(struct kafka_source *ks) {
    for (size_t i = 0; ks->rk && i < ks->nmissing;) {
        char *name = ks->missing[i];
        rd_kafka_topic_t *rkt = rd_kafka_topic_new(ks->rk, name, NULL);
        const struct rd_kafka_metadata *md = NULL;
        bool there = false;
        if (rkt && rd_kafka_metadata(ks->rk, 0, rkt, &md, 1000) == RD_KAFKA_RESP_ERR_NO_ERROR) {
            for (int t = 0; t < md->topic_cnt; t++)
                if (!strcmp(md->topics[t].topic, name) && !md->topics[t].err &&
                    md->topics[t].partition_cnt > 0)
                    there = true;
        }
        if (md) rd_kafka_metadata_destroy(md);
        if (rkt) rd_kafka_topic_destroy(rkt);
        if (there) ks_topic_back(ks, name, "Kafka's metadata has it"); /* takes it out of the list */
        else i++;
    }
}

/* subscribed topics Kafka has and the group assigns none of: the consumer
 * subscribes again (sync/sources/kafka_unassigned.h) */
static void unassigned_check(struct kafka_source *ks, long long now) {
    const struct ss_config *cfg = ks->env->cfg;
    size_t n;
    char **names = subscribed_names(ks, &n), err[1024];
    if (kafka_unassigned_check(&ks->unassigned, ks->rk, names, n, ks->missing, ks->nmissing,
                               cfg->source.name, cfg->kafka.group, ks->assigned_ms, now) &&
        ks_subscribe(ks, err, sizeof err) < 0)
        log_warn("run", "%s (tried again)", err);
    kafka_names_free(names, n);
}

/* every TOPICS_EVERY_MS: the metadata's topics; a new set is subscribed to
 * (the group rebalances: partitions of added topics are assigned, those of
 * removed ones revoked; their offsets stay in the checkpoint) */
void ks_topics_poll(struct kafka_source *ks, bool now) {
    long long t = mono_ms();
    if (!now && t - ks->topics_ms < TOPICS_EVERY_MS) return;
    ks->topics_ms = t;
    if (ks->nmissing) missing_check(ks);
    if (!now) unassigned_check(ks, t);
    struct kafka_topic_rows v;
    char err[1024];
    struct pipeline *p = ks->env->p;
    if (db_ensure(&p->meta, &p->metap, err, sizeof err) < 0 ||
        kafka_topics_read(p->meta, ks->env->cfg->source.name, &v, err, sizeof err) < 0) {
        if (!ks->topics_warned)
            log_warn("run", "reading the topics of source %s from %s.kafka_topics: %s (tried "
                     "again every %d ms)", ks->env->cfg->source.name,
                     ks->env->cfg->metadata.database, err, TOPICS_EVERY_MS);
        ks->topics_warned = true;
        ks_live_publish(ks);
        return;
    }
    ks->topics_warned = false;
    bool same = v.n == ks->meta.n; /* both sorted by topic */
    for (size_t i = 0; same && i < v.n; i++)
        same = !strcmp(v.v[i].topic, ks->meta.v[i].topic) &&
               same_format(v.v[i].format, ks->meta.v[i].format);
    if (same) {
        kafka_topic_rows_free(&v);
        ks_live_publish(ks);
        return;
    }
    const char *src = ks->env->cfg->source.name;
    bool resubscribe = v.n != ks->meta.n;
    for (size_t i = 0; i < v.n; i++) {
        const struct kafka_topic_row *was = meta_row(&ks->meta, v.v[i].topic);
        if (!was) {
            resubscribe = true;
            log_info("run", "topic %s added to source %s: subscribed%s%s", v.v[i].topic, src,
                     v.v[i].format ? ", its messages read as " : "",
                     v.v[i].format ? v.v[i].format : "");
        } else if (!same_format(was->format, v.v[i].format)) {
            log_info("run", "topic %s of source %s: its messages are read as %s from now on",
                     v.v[i].topic, src, v.v[i].format ? v.v[i].format : "[kafka] format says");
        }
    }
    for (size_t j = 0; j < ks->meta.n; j++)
        if (!meta_row(&v, ks->meta.v[j].topic)) {
            resubscribe = true;
            log_info("run", "topic %s removed from source %s: unsubscribed", ks->meta.v[j].topic,
                     src);
            if (!kafka_topic_in_config(ks->env->cfg, ks->meta.v[j].topic))
                topic_forget(ks, ks->meta.v[j].topic);
        }
    kafka_topic_rows_free(&ks->meta);
    ks->meta = v;
    if (resubscribe && ks->rk && ks_subscribe(ks, err, sizeof err) < 0)
        log_warn("run", "%s (tried again)", err);
    ks_live_publish(ks);
}

/* the format of topic's messages: its own (kafka_topics.format), else
 * [kafka] format */
int ks_topic_format(struct kafka_source *ks, const char *topic) {
    for (size_t i = 0; i < ks->meta.n; i++)
        if (!strcmp(ks->meta.v[i].topic, topic) && ks->meta.v[i].format) {
            int f = kafka_topic_format(ks->meta.v[i].format);
            if (f >= 0) return f;
        }
    return ks->format;
}

/* A subscribed topic Kafka does not have (deleted while read, or never
 * created): said once with what to do, a dead letter naming it (no bytes:
 * there is no message), its offsets out of the frontier (a topic created
 * again is a new topic: read from the group's committed offsets, else
 * [source] start); the other topics are read on, and the topic again as
 * soon as Kafka has it (ks_topic_back). librdkafka says it again at each
 * metadata refresh while it lasts. 0, or -1 on a stop before the dead
 * letter was stored. */
int ks_topic_missing(struct kafka_source *ks, const rd_kafka_message_t *msg) {
    struct source_env *env = ks->env;
    const char *why = rd_kafka_message_errstr(msg);
    char name[250] = "";
    if (msg->rkt) {
        snprintf(name, sizeof name, "%s", rd_kafka_topic_name(msg->rkt));
    } else {
        /* "Subscribed topic not available: T: Broker: Unknown topic or partition" */
        const char *p = strstr(why, ": ");
        const char *e = p ? strstr(p + 2, ": ") : NULL;
        if (p && e && e - (p + 2) < (long)sizeof name)
            snprintf(name, sizeof name, "%.*s", (int)(e - (p + 2)), p + 2);
    }
    if (!kafka_topic_name_ok(name)) {
        log_warn("run", "Kafka: %s", why);
        return 0;
    }
    if (kafka_live_has(ks->missing, ks->nmissing, name)) {
        log_debug("run", "Kafka: topic %s still missing: %s", name, why);
        return 0;
    }
    const char *src = env->cfg->source.name;
    bool in_cfg = kafka_topic_in_config(env->cfg, name);
    if (in_cfg)
        log_warn("run", "topic %s of source %s is not in Kafka (deleted, or never created): %s; "
                 "the other topics are read on, and this one again once it exists. Create it "
                 "again, or remove it from [kafka] topics of the configuration", name, src, why);
    else
        log_warn("run", "topic %s of source %s is not in Kafka (deleted, or never created): %s; "
                 "the other topics are read on, and this one again once it exists. Create it "
                 "again, or take it out of the source: `searchsync topics remove --config FILE "
                 "%s` or DELETE /api/v1/topics/%s", name, src, why, name, name);
    ks->missing = xrealloc(ks->missing, (ks->nmissing + 1) * sizeof *ks->missing);
    ks->missing[ks->nmissing++] = xstrdup(name);
    char text[1024], err[512];
    snprintf(text, sizeof text, "topic %s is not in Kafka: %s", name, why);
    for (int tries = 0;
         dl_store_put_message(env->dls, name, "topic", text, "", 0, err, sizeof err) < 0;
         tries++) {
        liveness_wait(&env->rs->live, READER_WAIT_METADATA);
        if (*env->stop)
            return errf(env->err, env->errlen, "stopping before the dead letter of the "
                        "missing topic %s was stored", name);
        if (tries % 30 == 0)
            log_warn("run", "storing the dead letter of missing topic %s: %s (tried again)",
                     name, err);
        struct timespec ts = {1, 0};
        nanosleep(&ts, NULL);
    }
    liveness_wait(&env->rs->live, NULL);
    ks->dead++;
    if (kafka_offsets_drop_topic(&ks->parts, name)) ks->moved = true;
    ks_live_publish(ks);
    return 0;
}
