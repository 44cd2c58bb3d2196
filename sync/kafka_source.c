/* kafka_source: Kafka topics as a producer of change sets — the reader
 * thread of `searchsync run` with [source] kind = kafka (beside
 * binlog_source.c, which reads the binlog itself).
 *
 *   Kafka message ──librdkafka consumer──► mq_decode (src/mq: canal-json,
 *   Debezium, Maxwell) ──rows──► pipeline_route_row (the open change set)
 *   ... no message waiting, or the group is full ──► pipeline_build
 *   (documents re-read from MySQL, row images from the messages) ──►
 *   pipeline_end_at(the consumed offsets) ──► acknowledged by the engine ──►
 *   delivery's checkpoint: the offsets saved in the metadata (offsets table,
 *   fenced like the binlog checkpoint) and then committed to Kafka
 *   (kafka_source_saved, from daemon.c's checkpoint callback).
 *
 * Change sets. Messages are read one after another and their rows routed
 * into one change set while more come within GROUP_WAIT_MS (up to
 * GROUP_ROWS_MAX rows or GROUP_MS_MAX ms); it is built when none does, as
 * the binlog source builds a group of transactions. Its documents are read from MySQL after
 * every message of the set was read, so they hold at least what each says.
 *
 * Versions (DESIGN.md: a version grows along the source's history, and a
 * later write must never lose to an older one):
 *   - messages with binlog coordinates (canal logfileName/logfileOffset,
 *     Debezium source.file/pos, Maxwell position): the largest of the set,
 *     exactly as a binlog position (epoch | file number | position), so
 *     these versions order with the binlog source's and with the pages of a
 *     reindex (read in a snapshot at a binlog position);
 *   - messages without: the time the set is built (microseconds since
 *     2024, strictly increasing in the process), in the file numbers from
 *     2^20 up, above every binlog position, under the epoch. A partition
 *     offset orders the changes of one partition only; a document rebuilt
 *     from MySQL for messages of two partitions (or two topics) would lose
 *     a later change to an earlier, larger offset. The read time is when
 *     the document's rows were read: a later build is newer content.
 *   A source should carry coordinates in all its topics or in none: a set
 *   mixing both takes the time (said once), and a document written with a
 *   time version then keeps every later coordinate version out.
 *
 * Offsets. The checkpoint's resume token is "kafka T/P=N T/P=N ..." — for
 * every partition read, the next offset to read — as of the end of the
 * change set: delivery saves the token of the newest change set below which
 * every write was acknowledged (the low-water mark), so every message before
 * those offsets is in the engine. On start, saved offsets are where each
 * assigned partition goes on; a partition the token does not name starts at
 * the group's committed offset, else at [source] start (auto.offset.reset).
 * Kafka's committed offsets follow the saved ones (never ahead of them).
 *
 * A message that cannot be decoded, or whose rows cannot be routed, is a
 * dead letter holding its bytes (dl_store_put_message), written before the
 * offsets move past it; reading goes on. Markers (tombstones, heartbeats)
 * only move the offsets. A DDL message: the change set so far is built, the
 * column types are read again, and the supervisor checks the mapping. */
#include <librdkafka/rdkafka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "daemon.h"
#include "kafka_conf.h"
#include "kafka_source.h"
#include "log.h"
#include "mq/mq.h"
#include "mq_schema.h"

#define GROUP_ROWS_MAX 20000
#define GROUP_MS_MAX 200
#define GROUP_WAIT_MS 10
#define CLOCK_FILE_BASE (1u << 20) /* time versions: file numbers from here up */
#define CLOCK_EPOCH_S 1704067200LL /* 2024-01-01T00:00:00Z */

struct kpart {
    char *topic;
    int32_t partition;
    int64_t next; /* the next offset to read */
};

/* where a table's messages came from, to warn when it is spread */
struct ktable {
    char *name; /* db.table */
    char *topic;
    int32_t partition;
    bool warned;
    struct ktable *next;
};

struct kafka_source {
    struct daemon *dm;
    rd_kafka_t *rk;
    mq_msg m;
    mq_opts o;
    struct mq_schema schema;
    /* the consumed frontier (reader thread): from the saved checkpoint at
     * start, moved past each message read; where an assigned partition
     * resumes (a rebalance too), and the token of every change set */
    struct kpart *parts;
    size_t nparts;
    struct ktable *tables;
    char **meta_topics;    /* the source's rows of kafka_topics, sorted (topics at run time) */
    size_t nmeta;
    long long topics_ms;   /* when they were read last (monotonic) */
    bool topics_warned;
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
    sbuf token;
    unsigned long long messages, dead, markers;
};

static long long mono_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---------- offsets and the resume token ---------- */

static struct kpart *part_of(struct kpart **v, size_t *n, const char *topic, int32_t partition,
                             bool add) {
    for (size_t i = 0; i < *n; i++)
        if ((*v)[i].partition == partition && !strcmp((*v)[i].topic, topic)) return &(*v)[i];
    if (!add) return NULL;
    *v = xrealloc(*v, (*n + 1) * sizeof **v);
    (*v)[*n] = (struct kpart){xstrdup(topic), partition, -1};
    return &(*v)[(*n)++];
}

static void parts_free(struct kpart *v, size_t n) {
    for (size_t i = 0; i < n; i++) free(v[i].topic);
    free(v);
}

/* "kafka T/P=N ..." → the list; -1 when it is not such a token */
static int token_parse(const char *s, struct kpart **v, size_t *n) {
    if (strncmp(s, "kafka", 5) || (s[5] && s[5] != ' ')) return -1;
    for (const char *p = s + 5; *p;) {
        while (*p == ' ') p++;
        if (!*p) break;
        const char *end = strchr(p, ' ');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        const char *eq = memchr(p, '=', len), *sl = NULL;
        for (const char *q = eq ? eq : p; q > p; q--)
            if (*q == '/') {
                sl = q;
                break;
            }
        if (!eq || !sl || sl == p) return -1;
        char *topic = xstrndup(p, (size_t)(sl - p));
        struct kpart *k = part_of(v, n, topic, (int32_t)strtol(sl + 1, NULL, 10), true);
        free(topic);
        k->next = strtoll(eq + 1, NULL, 10);
        p += len;
    }
    return 0;
}

static const char *token_make(struct kafka_source *ks) {
    sbuf_reset(&ks->token);
    sbuf_adds(&ks->token, "kafka");
    for (size_t i = 0; i < ks->nparts; i++)
        sbuf_printf(&ks->token, " %s/%d=%lld", ks->parts[i].topic, (int)ks->parts[i].partition,
                    (long long)ks->parts[i].next);
    return ks->token.data;
}

/* delivery's checkpoint thread, once the token is saved in the metadata: the
 * same offsets committed to the consumer group (asynchronously; a commit
 * that fails is made good by the next one) */
void kafka_source_saved(struct kafka_source *ks, const char *position) {
    struct kpart *v = NULL;
    size_t n = 0;
    if (!ks || !ks->rk || token_parse(position, &v, &n) < 0) return;
    rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new((int)(n ? n : 1));
    for (size_t i = 0; i < n; i++)
        if (v[i].next >= 0)
            rd_kafka_topic_partition_list_add(l, v[i].topic, v[i].partition)->offset = v[i].next;
    if (l->cnt) rd_kafka_commit(ks->rk, l, 1);
    rd_kafka_topic_partition_list_destroy(l);
    parts_free(v, n);
}

/* ---------- the consumer ---------- */

/* assigned partitions resume at the frontier (the saved offsets at start) */
static void on_rebalance(rd_kafka_t *rk, rd_kafka_resp_err_t err,
                         rd_kafka_topic_partition_list_t *l, void *opaque) {
    struct kafka_source *ks = opaque;
    bool coop = !strcmp(rd_kafka_rebalance_protocol(rk), "COOPERATIVE");
    if (err == RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS) {
        for (int i = 0; i < l->cnt; i++) {
            struct kpart *s = part_of(&ks->parts, &ks->nparts, l->elems[i].topic,
                                      l->elems[i].partition, false);
            if (s && s->next >= 0) l->elems[i].offset = s->next;
            if (s && s->next >= 0)
                log_info("run", "reading %s partition %d from offset %lld", l->elems[i].topic,
                         (int)l->elems[i].partition, (long long)s->next);
            else
                log_info("run", "reading %s partition %d from the group's committed offset "
                         "(else [source] start)", l->elems[i].topic, (int)l->elems[i].partition);
        }
        if (coop) {
            rd_kafka_error_t *e = rd_kafka_incremental_assign(rk, l);
            if (e) {
                log_error("run", "assigning Kafka partitions: %s", rd_kafka_error_string(e));
                rd_kafka_error_destroy(e);
            }
        } else {
            rd_kafka_assign(rk, l);
        }
    } else {
        /* what was read of them is built and acknowledged before the offsets
         * move past it; another consumer of the group reads on from the
         * committed offsets (a message read twice is written twice, with
         * the same result) */
        if (coop) {
            rd_kafka_error_t *e = rd_kafka_incremental_unassign(rk, l);
            if (e) rd_kafka_error_destroy(e);
        } else {
            rd_kafka_assign(rk, NULL);
        }
    }
}

/* ---------- topics at run time (kafka_topics, `searchsync topics`) ---------- */

#define TOPICS_EVERY_MS 2000

static void names_free(char **v, size_t n) {
    for (size_t i = 0; i < n; i++) free(v[i]);
    free(v);
}

/* the source's topics in the metadata, sorted; 0, or -1 with err */
static int topics_read(struct kafka_source *ks, char ***out, size_t *n, char *err,
                       size_t errlen) {
    struct pipeline *p = &ks->dm->p;
    *out = NULL, *n = 0;
    if (db_ensure(&p->meta, &p->metap, err, errlen) < 0) return -1;
    sbuf q = SBUF_INIT;
    sbuf_adds(&q, "SELECT topic FROM kafka_topics WHERE source = ");
    db_quote(p->meta, &q, ks->dm->cfg->source.name, strlen(ks->dm->cfg->source.name));
    sbuf_adds(&q, " ORDER BY topic");
    MYSQL_RES *res = db_query(p->meta, q.data, q.len, err, errlen);
    sbuf_free(&q);
    if (!res) return -1;
    size_t rows = (size_t)mysql_num_rows(res);
    *out = xcalloc(rows ? rows : 1, sizeof **out);
    MYSQL_ROW row;
    while ((row = mysql_fetch_row(res)) && *n < rows) (*out)[(*n)++] = xstrdup(row[0]);
    mysql_free_result(res);
    return 0;
}

static int subscribe(struct kafka_source *ks, char *err, size_t errlen) {
    const struct ss_config *cfg = ks->dm->cfg;
    rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(8);
    char *names = xstrdup(cfg->kafka.topics ? cfg->kafka.topics : "");
    for (char *t = strtok(names, ", \t"); t; t = strtok(NULL, ", \t"))
        if (!rd_kafka_topic_partition_list_find(l, t, RD_KAFKA_PARTITION_UA))
            rd_kafka_topic_partition_list_add(l, t, RD_KAFKA_PARTITION_UA);
    free(names);
    for (size_t i = 0; i < ks->nmeta; i++)
        if (!rd_kafka_topic_partition_list_find(l, ks->meta_topics[i], RD_KAFKA_PARTITION_UA))
            rd_kafka_topic_partition_list_add(l, ks->meta_topics[i], RD_KAFKA_PARTITION_UA);
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

/* every TOPICS_EVERY_MS: the metadata's topics; a new set is subscribed to
 * (the group rebalances: partitions of added topics are assigned, those of
 * removed ones revoked; their offsets stay in the checkpoint) */
static void topics_poll(struct kafka_source *ks, bool now) {
    long long t = mono_ms();
    if (!now && t - ks->topics_ms < TOPICS_EVERY_MS) return;
    ks->topics_ms = t;
    char **v = NULL, err[1024];
    size_t n = 0;
    if (topics_read(ks, &v, &n, err, sizeof err) < 0) {
        if (!ks->topics_warned)
            log_warn("run", "reading the topics of source %s from %s.kafka_topics: %s (tried "
                     "again every %d ms)", ks->dm->cfg->source.name,
                     ks->dm->cfg->metadata.database, err, TOPICS_EVERY_MS);
        ks->topics_warned = true;
        names_free(v, n);
        return;
    }
    ks->topics_warned = false;
    bool same = n == ks->nmeta;
    for (size_t i = 0; same && i < n; i++) same = !strcmp(v[i], ks->meta_topics[i]);
    if (same) {
        names_free(v, n);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        size_t j = 0;
        while (j < ks->nmeta && strcmp(v[i], ks->meta_topics[j])) j++;
        if (j == ks->nmeta) log_info("run", "topic %s added to source %s: subscribed", v[i],
                                     ks->dm->cfg->source.name);
    }
    for (size_t j = 0; j < ks->nmeta; j++) {
        size_t i = 0;
        while (i < n && strcmp(v[i], ks->meta_topics[j])) i++;
        if (i == n) log_info("run", "topic %s removed from source %s: unsubscribed",
                             ks->meta_topics[j], ks->dm->cfg->source.name);
    }
    names_free(ks->meta_topics, ks->nmeta);
    ks->meta_topics = v, ks->nmeta = n;
    if (ks->rk && subscribe(ks, err, sizeof err) < 0) log_warn("run", "%s (tried again)", err);
}

int kafka_source_open(struct daemon *dm, bool from_current) {
    const struct ss_config *cfg = dm->cfg;
    if (from_current)
        return errf(dm->err, sizeof dm->err, "--from-current skips to the binlog's end; with "
                    "[source] kind = kafka there is no binlog to skip: reset the consumer "
                    "group's offsets instead (kafka-consumer-groups.sh --reset-offsets) and "
                    "remove the checkpoint row of source %s from %s.offsets", cfg->source.name,
                    cfg->metadata.database);
    struct kafka_source *ks = xcalloc(1, sizeof *ks);
    ks->dm = dm;
    mq_msg_init(&ks->m);
    ks->schema.cfg = cfg;
    for (int f = 0; f < 4; f++)
        if (!strcmp(cfg->kafka.format, mq_format_name[f])) ks->o.format = f;
    config_parse_tz_offset(cfg->kafka.canal_tz_offset, &ks->o.canal_tz_offset);
    ks->o.lookup = mq_schema_lookup; /* run needs [source] user: the types are exact */
    ks->o.lookup_ctx = &ks->schema;
    dm->kafka = ks;

    char pos[4200];
    int found = offsets_load(dm->p.meta, cfg->source.name, pos, sizeof pos, dm->err,
                             sizeof dm->err);
    if (found < 0) return -1;
    if (found == 0 && token_parse(pos, &ks->parts, &ks->nparts) < 0)
        return errf(dm->err, sizeof dm->err, "the saved checkpoint of source %s (\"%.100s\") "
                    "is a binlog position, not Kafka offsets: this source was read from the "
                    "binlog. Give the Kafka source another [source] name, or delete its row "
                    "from %s.offsets to start at the consumer group's offsets",
                    cfg->source.name, pos, cfg->metadata.database);
    snprintf(dm->start_pos, sizeof dm->start_pos, "%.500s",
             found == 0 ? pos : "the consumer group's offsets");

    char err[1024];
    rd_kafka_conf_t *conf = kafka_conf_new(cfg, "searchsync-run", err, sizeof err);
    int crc = conf ? 0 : -1;
    /* static membership: one reader per source (leadership.c), so a restart
     * (or the node taking the source over) takes the partitions back at once
     * instead of waiting out the previous member's session (45 s) */
    sbuf inst = SBUF_INIT;
    sbuf_printf(&inst, "searchsync-%s", cfg->source.name);
    if (!crc) crc = kafka_conf_set(conf, "group.instance.id", inst.data, err, sizeof err);
    sbuf_free(&inst);
    /* a static member leaves no group on a stop: the partitions go to
     * another consumer of the group after this long without the daemon */
    if (!crc) crc = kafka_conf_set(conf, "session.timeout.ms", "10000", err, sizeof err);
    /* new topics (topics added, topic_regex) and partitions found within seconds */
    if (!crc)
        crc = kafka_conf_set(conf, "topic.metadata.refresh.interval.ms", "5000", err, sizeof err);
    /* offsets are committed only once the engine acknowledged (kafka_source_saved) */
    if (!crc) crc = kafka_conf_set(conf, "enable.auto.commit", "false", err, sizeof err);
    if (crc) {
        if (conf) rd_kafka_conf_destroy(conf);
        return errf(dm->err, sizeof dm->err, "%s", err);
    }
    rd_kafka_conf_set_rebalance_cb(conf, on_rebalance);
    rd_kafka_conf_set_opaque(conf, ks);
    char kerr[512];
    ks->rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf, kerr, sizeof kerr);
    if (!ks->rk) {
        rd_kafka_conf_destroy(conf);
        return errf(dm->err, sizeof dm->err, "cannot create the Kafka consumer: %s", kerr);
    }
    rd_kafka_poll_set_consumer(ks->rk);
    topics_poll(ks, true);
    if (subscribe(ks, err, sizeof err) < 0) return errf(dm->err, sizeof dm->err, "%s", err);
    if (found == 0)
        log_info("run", "resuming source %s at Kafka offsets %s", cfg->source.name,
                 pos[5] ? pos + 6 : "(none)");
    else
        log_info("run", "source %s has no checkpoint: reading the topics from the consumer "
                 "group %s's committed offsets, else from [source] start (%s)",
                 cfg->source.name, cfg->kafka.group, cfg->source.start);
    return 0;
}

void kafka_source_close(struct daemon *dm) {
    struct kafka_source *ks = dm->kafka;
    if (!ks) return;
    dm->kafka = NULL;
    if (ks->rk) {
        rd_kafka_consumer_close(ks->rk);
        rd_kafka_destroy(ks->rk);
    }
    mq_schema_free(&ks->schema);
    mq_msg_free(&ks->m);
    parts_free(ks->parts, ks->nparts);
    while (ks->tables) {
        struct ktable *t = ks->tables;
        ks->tables = t->next;
        free(t->name), free(t->topic), free(t);
    }
    sbuf_free(&ks->token);
    names_free(ks->meta_topics, ks->nmeta);
    free(ks);
}

/* ---------- building a change set ---------- */

static void publish_stats(struct kafka_source *ks, bool at_end) {
    struct daemon *dm = ks->dm;
    struct reader_figures *f = &dm->rs.f;
    pthread_mutex_lock(&dm->rs.mu);
    f->reading = true;
    f->at_end = at_end;
    if (!at_end) f->read_ms = reader_stats_now_ms();
    f->txns = dm->txns;
    f->rows = dm->rows_read;
    f->ddls = dm->ddls_read;
    pthread_mutex_unlock(&dm->rs.mu);
}

/* the source connection, waited for while it is down (the messages read are
 * kept: nothing moves on meanwhile); -1 only on a stop request */
static int src_ensure(struct daemon *dm) {
    struct pipeline *p = &dm->p;
    long delay_ms = 100;
    for (int attempts = 0; db_ensure(&p->src, &p->srcp, p->err, sizeof p->err) < 0;
         attempts++) {
        if (daemon_stop_requested) return -1;
        if (attempts % 30 == 0)
            log_warn("run", "%s; waiting for the source (the Kafka messages read are not "
                     "lost)", p->err);
        struct timespec ts = {delay_ms / 1000, (delay_ms % 1000) * 1000000L};
        nanosleep(&ts, NULL);
        delay_ms = delay_ms * 2 > 2000 ? 2000 : delay_ms * 2;
    }
    return 0;
}

/* the version of a change set without coordinates: the build's time */
static void clock_pos(struct kafka_source *ks, bl_pos *end) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    long long s = (long long)ts.tv_sec - CLOCK_EPOCH_S;
    uint64_t us = s > 0 ? (uint64_t)s * 1000000u + (uint64_t)ts.tv_nsec / 1000u : 0;
    if (us <= ks->last_clock_us) us = ks->last_clock_us + 1;
    ks->last_clock_us = us;
    memset(end, 0, sizeof *end);
    snprintf(end->file, sizeof end->file, "kafka-time.%u",
             CLOCK_FILE_BASE + (unsigned)(us >> 32));
    end->pos = us & 0xffffffffu;
}

/* Build the open change set and end its delivery transaction at the offsets
 * read so far. 0, or -1 with dm->err (a stop: the set is read again at the
 * next start, its offsets not saved). */
static int group_build(struct kafka_source *ks) {
    struct daemon *dm = ks->dm;
    struct pipeline *p = &dm->p;
    if (!ks->group_msgs) return 0;
    bl_pos end;
    if (ks->group_clock) clock_pos(ks, &end);
    else end = ks->group_pos;
    if (dm->cs.rows || pipeline_has_missing(p)) {
        for (int tries = 0;; tries++) {
            if (src_ensure(dm) < 0) return -1;
            if (pipeline_build(p, &dm->cs, &end) == 0) break;
            /* a connection lost midway: built again once the source answers
             * (the same documents, the same version) */
            if (daemon_stop_requested || !db_conn_lost(p->src) || tries == 10) {
                snprintf(dm->err, sizeof dm->err, "%s", p->err);
                return -1;
            }
            log_warn("run", "%s; the change set's reads failed midway: built again once the "
                     "source answers (nothing is lost)", p->err);
        }
    }
    log_debug("run", "change set of %u Kafka message(s) up to %s: %zu documents rebuilt, %zu "
              "element scripts, %zu row-image documents", ks->group_msgs, token_make(ks),
              dm->cs.npend, dm->cs.nelems, dm->cs.nrdocs);
    pipeline_end_at(p, &dm->cs, token_make(ks), false);
    ks->last_end = end;
    ks->have_last = true;
    ks->moved = false;
    dm->txns++;
    ks->group_msgs = 0;
    ks->group_coords = ks->group_clock = false;
    memset(&ks->group_pos, 0, sizeof ks->group_pos);
    daemon_between_txns(dm);
    publish_stats(ks, false);
    return 0;
}

static bool group_full(struct kafka_source *ks) {
    struct daemon *dm = ks->dm;
    if (dm->rows_read - ks->group_rows >= GROUP_ROWS_MAX) return true;
    if (mono_ms() - ks->group_start_ms >= GROUP_MS_MAX) return true;
    if (dm->cs.nrdocs || dm->cs.snaps.len) return false;
    pthread_mutex_lock(&dm->cmds.mu);
    bool asks = dm->cmds.adopt || dm->cmds.builds || dm->cmds.ntruncated;
    pthread_mutex_unlock(&dm->cmds.mu);
    return asks; /* the supervisor's commands wait for no group */
}

/* ---------- one message ---------- */

static void group_join(struct kafka_source *ks) {
    if (ks->group_msgs++) return;
    ks->group_start_ms = mono_ms();
    ks->group_rows = ks->dm->rows_read;
}

/* coordinates order like binlog positions: file number, then position */
static bool pos_after(const bl_pos *a, const bl_pos *b) {
    uint32_t fa = bl_file_seq(a->file), fb = bl_file_seq(b->file);
    return fa != fb ? fa > fb : a->pos > b->pos;
}

static void note_version(struct kafka_source *ks, const mq_msg *m) {
    if (m->have_pos && bl_file_seq(m->pos.file) < CLOCK_FILE_BASE) {
        if (!ks->group_coords || pos_after(&m->pos, &ks->group_pos)) ks->group_pos = m->pos;
        ks->group_coords = true;
    } else {
        ks->group_clock = true;
    }
    if (ks->group_coords && ks->group_clock && !ks->mixed_warned) {
        ks->mixed_warned = true;
        log_warn("run", "the topics of source %s mix messages with binlog coordinates and "
                 "without: their documents are versioned by the time they are read, and a "
                 "document written so keeps later coordinate versions out (docs/kafka.md, "
                 "Versions): give every producer the same settings", ks->dm->cfg->source.name);
    }
}

/* warn once per table whose messages come from several partitions unkeyed */
static void note_table(struct kafka_source *ks, const mq_msg *m, const rd_kafka_message_t *msg) {
    const char *topic = rd_kafka_topic_name(msg->rkt);
    struct ktable *t = ks->tables;
    sbuf name = SBUF_INIT;
    sbuf_printf(&name, "%s.%s", m->table.db, m->table.name);
    while (t && strcmp(t->name, name.data)) t = t->next;
    if (!t) {
        t = xcalloc(1, sizeof *t);
        *t = (struct ktable){sbuf_detach(&name), xstrdup(topic), msg->partition, false,
                             ks->tables};
        ks->tables = t;
        return;
    }
    sbuf_free(&name);
    /* keyed messages (Debezium's key is the primary key) keep a row in one
     * partition: only unkeyed ones are said */
    if (t->warned || msg->key_len || (t->partition == msg->partition && !strcmp(t->topic, topic)))
        return;
    t->warned = true;
    log_warn("run", "table %s comes from %s partition %d and %s partition %d in messages "
             "without a key: two changes of one row read from two partitions can be applied out "
             "of order (docs/kafka.md, Ordering): key its messages by primary key", t->name,
             t->topic, (int)t->partition, topic, (int)msg->partition);
}

/* a message that cannot be used: its bytes in the dead-letter table before
 * the offsets move past it (retried while the metadata is unreachable) */
static int dead_letter(struct kafka_source *ks, const rd_kafka_message_t *msg, const char *why) {
    struct daemon *dm = ks->dm;
    char at[64], err[512];
    snprintf(at, sizeof at, "%d:%lld", (int)msg->partition, (long long)msg->offset);
    const char *topic = rd_kafka_topic_name(msg->rkt);
    log_warn("run", "Kafka message %s partition %d offset %lld is a dead letter (reading goes "
             "on): %s", topic, (int)msg->partition, (long long)msg->offset, why);
    for (int tries = 0; dl_store_put_message(dm->dls, topic, at, why, msg->payload ? msg->payload
                                             : "", msg->payload ? msg->len : 0, err,
                                             sizeof err) < 0; tries++) {
        if (daemon_stop_requested)
            return errf(dm->err, sizeof dm->err, "stopping before the dead letter of %s %s was "
                        "stored (it is read again at the next start)", topic, at);
        if (tries % 30 == 0)
            log_warn("run", "storing the dead letter of %s %s: %s (tried again)", topic, at, err);
        struct timespec ts = {1, 0};
        nanosleep(&ts, NULL);
    }
    ks->dead++;
    return 0;
}

static void ddl_seen(struct kafka_source *ks, const mq_msg *m, const rd_kafka_message_t *msg) {
    struct daemon *dm = ks->dm;
    dm->ddls_read++;
    mq_schema_forget(&ks->schema); /* columns may have changed */
    pthread_mutex_lock(&dm->cmds.mu);
    dm->cmds.schema_changed = true;
    char stmt[200];
    const char *sql = m->ddl ? m->ddl : "";
    size_t len = strlen(sql), n = len < sizeof stmt - 1 ? len : sizeof stmt - 1;
    for (size_t i = 0; i < n; i++) stmt[i] = sql[i] == '\n' || sql[i] == '\r' ? ' ' : sql[i];
    stmt[n] = '\0';
    snprintf(dm->cmds.ddl_note, sizeof dm->cmds.ddl_note, "after `%s%s` read from Kafka (%s "
             "partition %d offset %lld)", stmt, len > n ? "..." : "", rd_kafka_topic_name(msg->rkt),
             (int)msg->partition, (long long)msg->offset);
    pthread_mutex_unlock(&dm->cmds.mu);
    supervisor_wake(&dm->sv);
}

static int handle(struct kafka_source *ks, const rd_kafka_message_t *msg) {
    struct daemon *dm = ks->dm;
    struct pipeline *p = &dm->p;
    ks->messages++;
    const char *data = msg->payload ? msg->payload : "";
    size_t len = msg->payload ? msg->len : 0;
    struct kpart *k = part_of(&ks->parts, &ks->nparts, rd_kafka_topic_name(msg->rkt),
                              msg->partition, true);
    int rc = 0;
    if (mq_decode(&ks->m, &ks->o, data, len) != MQ_OK) {
        rc = dead_letter(ks, msg, ks->m.err);
    } else if (ks->m.kind == MQ_DDL) {
        rc = group_build(ks); /* the sets before it are built with the columns they had */
        if (rc == 0) ddl_seen(ks, &ks->m, msg);
    } else if (ks->m.kind == MQ_ROWS && ks->m.nrows &&
               router_wants(p->router, ks->m.table.db, ks->m.table.name)) {
        group_join(ks);
        note_version(ks, &ks->m);
        note_table(ks, &ks->m, msg);
        for (uint32_t i = 0; i < ks->m.nrows && rc == 0; i++) {
            dm->rows_read++;
            if (pipeline_route_row(p, &dm->cs, &ks->m.rows[i]) != 0) {
                char why[1200];
                snprintf(why, sizeof why, "its row %u could not be routed: %s", i + 1, p->err);
                rc = dead_letter(ks, msg, why);
                break;
            }
        }
    } else {
        ks->markers++; /* nothing to apply: markers, tables the mapping does not read */
    }
    if (rc == 0) {
        k->next = msg->offset + 1;
        ks->moved = true;
    }
    return rc;
}

/* nothing waiting: documents scripts did not find, the supervisor's
 * commands, and offsets moved by messages of nothing to apply */
static int idle(struct kafka_source *ks) {
    struct daemon *dm = ks->dm;
    struct pipeline *p = &dm->p;
    if (ks->have_last && pipeline_has_missing(p)) {
        if (src_ensure(dm) < 0) return -1;
        if (pipeline_rebuild_missing(p, &ks->last_end) < 0) {
            if (daemon_stop_requested || !db_conn_lost(p->src)) {
                snprintf(dm->err, sizeof dm->err, "%s", p->err);
                return -1;
            }
            log_warn("run", "%s; tried again when next idle", p->err);
        } else {
            pipeline_end_at(p, &dm->cs, token_make(ks), false);
            ks->moved = false;
        }
    }
    if (ks->moved) { /* markers and skipped tables only: a quiet save */
        pipeline_end_at(p, &dm->cs, token_make(ks), true);
        ks->moved = false;
    }
    daemon_between_txns(dm);
    publish_stats(ks, true);
    return 0;
}

int kafka_source_run(struct daemon *dm) {
    struct kafka_source *ks = dm->kafka;
    log_info("run", "syncing %zu index config(s) of source %s from Kafka ([kafka] group %s)",
             dm->gen->m.nindices, dm->cfg->source.name, dm->cfg->kafka.group);
    publish_stats(ks, false);
    int rc = BL_STOP;
    while (!daemon_stop_requested) {
        if (!ks->group_msgs) topics_poll(ks, false);
        /* an open change set waits GROUP_WAIT_MS for the next message (the
         * next fetch's may be on its way) before it is built: built at every
         * gap in librdkafka's queue, sets would be a message or two each */
        rd_kafka_message_t *msg = rd_kafka_consumer_poll(ks->rk, ks->group_msgs ? GROUP_WAIT_MS
                                                                             : 200);
        if (!msg) {
            if ((ks->group_msgs ? group_build(ks) : idle(ks)) < 0) {
                rc = BL_ERR;
                break;
            }
            continue;
        }
        if (msg->err) {
            if (msg->err != RD_KAFKA_RESP_ERR__PARTITION_EOF) {
                log_warn("run", "Kafka: %s%s%s", msg->rkt ? rd_kafka_topic_name(msg->rkt) : "",
                         msg->rkt ? ": " : "", rd_kafka_message_errstr(msg));
                char fatal[512];
                if (rd_kafka_fatal_error(ks->rk, fatal, sizeof fatal)) {
                    snprintf(dm->err, sizeof dm->err, "the Kafka consumer failed: %s", fatal);
                    rd_kafka_message_destroy(msg);
                    rc = BL_ERR;
                    break;
                }
            }
            rd_kafka_message_destroy(msg);
            continue;
        }
        int hrc = handle(ks, msg);
        rd_kafka_message_destroy(msg);
        if (hrc == 0 && ks->group_msgs && group_full(ks)) hrc = group_build(ks);
        if (hrc < 0) {
            rc = BL_ERR;
            break;
        }
    }
    /* a change set still open is not built: its offsets were never handed to
     * delivery, so the next start reads its messages again */
    if (rc == BL_ERR && daemon_stop_requested) rc = BL_STOP;
    if (rc == BL_STOP) dm->err[0] = '\0';
    changeset_reset(&dm->cs);
    log_info("run", "Kafka: %llu messages read, %llu dead letters, %llu without rows to apply",
             ks->messages, ks->dead, ks->markers);
    pthread_mutex_lock(&dm->rs.mu);
    dm->rs.f.reading = false;
    pthread_mutex_unlock(&dm->rs.mu);
    return rc;
}
