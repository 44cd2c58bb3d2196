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
 * every message of the set was read, in a read snapshot that holds what each
 * says (kafka_visible.c: at or past the binlog's end read then).
 *
 * Versions (docs/design.md, "Versions and order": a version grows along the source's history, and a
 * later write must never lose to an older one):
 *   - messages with binlog coordinates (canal logfileName/logfileOffset,
 *     Debezium source.file/pos, Maxwell position): the largest of the set,
 *     exactly as a binlog position (epoch | file number | position), so
 *     these versions order with the binlog source's and with the pages of a
 *     reindex (read in a snapshot at a binlog position). A row-image
 *     document is the row as of its message, and takes that message's
 *     coordinates instead (changeset.h, struct cs_at): partitions are read
 *     at different paces, so a set's largest can be above the coordinates
 *     of the next set's images of the same row; and of a row's images in
 *     one set the latest by coordinates wins, not the last read (a Maxwell
 *     key change is keyed by the new key: the old key's delete is in
 *     another partition than the old key's other changes);
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
 * offsets move past it; reading goes on. A value the decoder could not read
 * with certainty (mq_unsure: out of its column's range, Debezium's
 * snapshot YEAR 2000, an encoding a setting not stated leaves open) costs
 * nothing but itself: documents re-read from MySQL need only the row's
 * keys, and a row-image index that maps the column reads that row's
 * document from MySQL too (row_image.c), said once per column (unsure_note). A subscribed topic Kafka does not
 * have (deleted while read, never created) is a warning and a dead letter
 * naming it (ks_topic_missing), its partitions out of the token; the other
 * topics are read on, and it again once Kafka has it (ks_topic_back).
 *
 * Topics: [kafka] topics and topic_regex, and the source's rows of the
 * metadata's kafka_topics (src/kafka_topics.c; kafka_subscribe.c), re-read every 2 s
 * (ks_topics_poll) and subscribed to without a restart; a row may name the
 * topic's own format. What the consumer reads now is published for the
 * admin API (ks_live_publish: sync/sources/kafka_live.h). Markers (tombstones,
 * heartbeats, transaction markers, notifications) only move the offsets. A DDL message: the change set so far is built, the
 * column types are read again, and the supervisor checks the mapping. */
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

/* ---------- offsets and the resume token (src/kafka_token.c) ---------- */

static const char *token_make(struct kafka_source *ks) {
    return kafka_token_make(&ks->parts, &ks->token);
}

/* delivery's checkpoint thread, once the token is saved in the metadata: the
 * same offsets committed to the consumer group (asynchronously; a commit
 * that fails is made good by the next one) */
static void kafka_source_saved(void *state, const char *position) {
    struct kafka_source *ks = state;
    struct kafka_offsets o = {0};
    if (!ks || !ks->rk || kafka_token_parse(position, &o) < 0) {
        kafka_offsets_free(&o);
        return;
    }
    rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new((int)(o.n ? o.n : 1));
    for (size_t i = 0; i < o.n; i++)
        if (o.v[i].next >= 0)
            rd_kafka_topic_partition_list_add(l, o.v[i].topic, o.v[i].partition)->offset =
                o.v[i].next;
    if (l->cnt) rd_kafka_commit(ks->rk, l, 1);
    rd_kafka_topic_partition_list_destroy(l);
    kafka_offsets_free(&o);
}

/* ---------- the consumer ---------- */

void ks_topic_back(struct kafka_source *ks, const char *topic, const char *how);
void ks_live_publish(struct kafka_source *ks);

/* assigned partitions resume at the frontier (the saved offsets at start) */
static void on_rebalance(rd_kafka_t *rk, rd_kafka_resp_err_t err,
                         rd_kafka_topic_partition_list_t *l, void *opaque) {
    struct kafka_source *ks = opaque;
    /* NULL until the group's first join completes: a stop during that join
     * runs this callback from rd_kafka_consumer_close with no protocol yet */
    const char *proto = rd_kafka_rebalance_protocol(rk);
    bool coop = proto && !strcmp(proto, "COOPERATIVE");
    if (err == RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS) {
        for (int i = 0; i < l->cnt; i++) {
            struct kafka_offset *s = kafka_offsets_at(&ks->parts, l->elems[i].topic,
                                                      l->elems[i].partition, false);
            if (s && s->next >= 0) l->elems[i].offset = s->next;
            if (s && s->next >= 0)
                log_info("run", "reading %s partition %d from offset %lld", l->elems[i].topic,
                         (int)l->elems[i].partition, (long long)s->next);
            else
                log_info("run", "reading %s partition %d from the group's committed offset "
                         "(else [source] start)", l->elems[i].topic, (int)l->elems[i].partition);
        }
        ks->assigned_ms = mono_ms();
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
        ks->assigned_ms = 0;
        if (coop) {
            rd_kafka_error_t *e = rd_kafka_incremental_unassign(rk, l);
            if (e) rd_kafka_error_destroy(e);
        } else {
            rd_kafka_assign(rk, NULL);
        }
    }
    /* published by the reader's loop, not here: this callback also runs
     * inside rd_kafka_consumer_close, where rd_kafka_assignment() (which
     * live_publish asks) never returns — a stop that hung for good */
    ks->live_stale = true;
}

static int kafka_source_open(struct source_env *env, bool from_current, void **out) {
    const struct ss_config *cfg = env->cfg;
    if (from_current)
        return errf(env->err, env->errlen, "--from-current skips to the binlog's end; with "
                    "[source] kind = kafka there is no binlog to skip: reset the consumer "
                    "group's offsets instead (kafka-consumer-groups.sh --reset-offsets) and "
                    "remove the checkpoint row of source %s from %s.offsets", cfg->source.name,
                    cfg->metadata.database);
    struct kafka_source *ks = xcalloc(1, sizeof *ks);
    ks->env = env;
    mq_msg_init(&ks->m);
    ks->schema.cfg = cfg;
    mq_config_opts(cfg, &ks->o);
    ks->format = ks->o.format; /* [kafka] format; a topic may have its own (ks_topic_format) */
    ks->o.lookup = mq_schema_lookup; /* run needs [source] user: the types are exact */
    ks->o.lookup_ctx = &ks->schema;
    *out = ks;

    char pos[4200];
    int found = offsets_load(env->p->meta, cfg->source.name, pos, sizeof pos, env->err,
                             env->errlen);
    if (found < 0) return -1;
    if (found == 0 && kafka_token_parse(pos, &ks->parts) < 0)
        return errf(env->err, env->errlen, "the saved checkpoint of source %s (\"%.100s\") "
                    "is a binlog position, not Kafka offsets: this source was read from the "
                    "binlog. Give the Kafka source another [source] name, or delete its row "
                    "from %s.offsets to start at the consumer group's offsets",
                    cfg->source.name, pos, cfg->metadata.database);
    snprintf(env->start_pos, sizeof env->start_pos, "%.500s",
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
        return errf(env->err, env->errlen, "%s", err);
    }
    rd_kafka_conf_set_rebalance_cb(conf, on_rebalance);
    rd_kafka_conf_set_opaque(conf, ks);
    char kerr[512];
    ks->rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf, kerr, sizeof kerr);
    if (!ks->rk) {
        rd_kafka_conf_destroy(conf);
        return errf(env->err, env->errlen, "cannot create the Kafka consumer: %s", kerr);
    }
    rd_kafka_poll_set_consumer(ks->rk);
    ks->refusals = kafka_security_refusals(NULL); /* an earlier client's are not ours */
    ks_topics_poll(ks, true);
    if (ks_subscribe(ks, err, sizeof err) < 0) return errf(env->err, env->errlen, "%s", err);
    if (found == 0)
        log_info("run", "resuming source %s at Kafka offsets %s", cfg->source.name,
                 pos[5] ? pos + 6 : "(none)");
    else
        log_info("run", "source %s has no checkpoint: reading the topics from the consumer "
                 "group %s's committed offsets, else from [source] start (%s)",
                 cfg->source.name, cfg->kafka.group, cfg->source.start);
    return 0;
}

static void kafka_source_close(void *state) {
    struct kafka_source *ks = state;
    if (!ks) return;
    struct source_env *env = ks->env;
    pthread_mutex_lock(&env->rs->mu);
    env->rs->kafka = NULL; /* the admin server stopped before: defensive */
    pthread_mutex_unlock(&env->rs->mu);
    if (ks->rk && !kafka_close_bounded(ks->rk)) return; /* ks stays with the client */
    mq_schema_free(&ks->schema);
    mq_msg_free(&ks->m);
    strset_clear(&ks->unsure_warned);
    kafka_live_free(&ks->live);
    kafka_names_free(ks->missing, ks->nmissing);
    kafka_unassigned_free(&ks->unassigned);
    kafka_offsets_free(&ks->parts);
    while (ks->tables) {
        struct ktable *t = ks->tables;
        ks->tables = t->next;
        free(t->name), free(t->topic), free(t);
    }
    sbuf_free(&ks->token);
    kafka_topic_rows_free(&ks->meta);
    free(ks);
}

/* ---------- building a change set ---------- */

/* the source connection, waited for while it is down (the messages read are
 * kept: nothing moves on meanwhile); -1 only on a stop request */
static int src_ensure(struct source_env *env) {
    struct pipeline *p = env->p;
    long delay_ms = 100;
    bool waited = false;
    for (int attempts = 0; db_ensure(&p->src, &p->srcp, p->err, sizeof p->err) < 0;
         attempts++) {
        liveness_wait(&env->rs->live, READER_WAIT_SOURCE_DOWN);
        waited = true;
        if (*env->stop) return -1;
        if (attempts % 30 == 0)
            log_warn("run", "%s; waiting for the source (the Kafka messages read are not "
                     "lost)", p->err);
        struct timespec ts = {delay_ms / 1000, (delay_ms % 1000) * 1000000L};
        nanosleep(&ts, NULL);
        delay_ms = delay_ms * 2 > 2000 ? 2000 : delay_ms * 2;
    }
    if (waited) liveness_wait(&env->rs->live, NULL);
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
 * read so far. 0, or -1 with env->err (a stop: the set is read again at the
 * next start, its offsets not saved). */
static int group_build(struct kafka_source *ks) {
    struct source_env *env = ks->env;
    struct pipeline *p = env->p;
    if (!ks->group_msgs) return 0;
    bl_pos end;
    if (ks->group_clock) clock_pos(ks, &end);
    else end = ks->group_pos;
    if (env->cs->rows || pipeline_has_missing(p)) {
        for (int tries = 0;; tries++) {
            if (src_ensure(env) < 0) return -1;
            p->src_errno = 0;
            int rc = ks_read_snapshot_begin(ks); /* its messages visible: kafka_visible.c */
            if (rc == 0) rc = pipeline_build(p, env->cs, &end);
            ks_read_snapshot_end(ks);
            if (rc == 0) break;
            /* a connection lost midway, or a table changed after the snapshot
             * began (ER_TABLE_DEF_CHANGED): built again (the same documents,
             * the same version) */
            unsigned e = p->src_errno ? p->src_errno : mysql_errno(p->src);
            if (*env->stop || !(db_conn_lost(p->src) || e == 1412) || tries == 10) {
                snprintf(env->err, env->errlen, "%s", p->err);
                return -1;
            }
            log_warn("run", "%s; the change set's reads failed midway: built again once the "
                     "source answers (nothing is lost)", p->err);
        }
    }
    log_debug("run", "change set of %u Kafka message(s) up to %s: %zu documents rebuilt, %zu "
              "element scripts, %zu row-image documents", ks->group_msgs, token_make(ks),
              env->cs->npend, env->cs->nelems, env->cs->nrdocs);
    pipeline_end_at(p, env->cs, token_make(ks), false);
    ks->last_end = end;
    ks->have_last = true;
    ks->moved = false;
    env->counts.txns++;
    ks->group_msgs = 0;
    ks->group_coords = ks->group_clock = false;
    memset(&ks->group_pos, 0, sizeof ks->group_pos);
    env->between(env->ud);
    ks_publish_stats(ks, false);
    return 0;
}

static bool group_full(struct kafka_source *ks) {
    struct source_env *env = ks->env;
    if (env->counts.rows - ks->group_rows >= GROUP_ROWS_MAX) return true;
    if (mono_ms() - ks->group_start_ms >= GROUP_MS_MAX) return true;
    if (env->cs->nrdocs || env->cs->snaps.len) return false;
    return env->asks(env->ud); /* the supervisor's commands wait for no group */
}

/* ---------- one message ---------- */

static void group_join(struct kafka_source *ks) {
    if (ks->group_msgs++) return;
    ks->group_start_ms = mono_ms();
    ks->group_rows = ks->env->counts.rows;
}

/* coordinates order like binlog positions: file number, then position */
static bool pos_after(const bl_pos *a, const bl_pos *b) {
    uint32_t fa = bl_file_seq(a->file), fb = bl_file_seq(b->file);
    return fa != fb ? fa > fb : a->pos > b->pos;
}

/* the message carries binlog coordinates (not a time version's range) */
static bool coords(const mq_msg *m) {
    return m->have_pos && bl_file_seq(m->pos.file) < CLOCK_FILE_BASE;
}

static void note_version(struct kafka_source *ks, const mq_msg *m) {
    if (coords(m)) {
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
                 "Versions): give every producer the same settings", ks->env->cfg->source.name);
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
    if (m->format == MQ_CANAL) {
        /* canal's flat messages never carry a key, even when canal spreads
         * them by primary key, so the advice is canal's own setting */
        log_warn("run", "table %s comes from %s partition %d and %s partition %d in canal's "
                 "messages, which have no key: unless canal hashes the table's rows by primary "
                 "key (canal.mq.partitionHash = %s:$pk$, with canal.mq.partitionsNum), two changes "
                 "of one row read from two partitions can be applied out of order (docs/kafka.md, "
                 "Ordering); with that hash this is fine", t->name, t->topic, (int)t->partition,
                 topic, (int)msg->partition, t->name);
        return;
    }
    log_warn("run", "table %s comes from %s partition %d and %s partition %d in messages "
             "without a key: two changes of one row read from two partitions can be applied out "
             "of order (docs/kafka.md, Ordering): key its messages by primary key", t->name,
             t->topic, (int)t->partition, topic, (int)msg->partition);
}

/* a message that cannot be used: its bytes in the dead-letter table before
 * the offsets move past it (retried while the metadata is unreachable) */
static int dead_letter(struct kafka_source *ks, const rd_kafka_message_t *msg, const char *why) {
    struct source_env *env = ks->env;
    char at[64], err[512];
    snprintf(at, sizeof at, "%d:%lld", (int)msg->partition, (long long)msg->offset);
    const char *topic = rd_kafka_topic_name(msg->rkt);
    log_warn("run", "Kafka message %s partition %d offset %lld is a dead letter (reading goes "
             "on): %s", topic, (int)msg->partition, (long long)msg->offset, why);
    for (int tries = 0; dl_store_put_message(env->dls, topic, at, why, msg->payload ? msg->payload
                                             : "", msg->payload ? msg->len : 0, err,
                                             sizeof err) < 0; tries++) {
        liveness_wait(&env->rs->live, READER_WAIT_METADATA);
        if (*env->stop)
            return errf(env->err, env->errlen, "stopping before the dead letter of %s %s was "
                        "stored (it is read again at the next start)", topic, at);
        if (tries % 30 == 0)
            log_warn("run", "storing the dead letter of %s %s: %s (tried again)", topic, at, err);
        struct timespec ts = {1, 0};
        nanosleep(&ts, NULL);
    }
    liveness_wait(&env->rs->live, NULL);
    ks->dead++;
    return 0;
}

/* Values of row i its message could not decode with certainty (mq_unsure):
 * a row-image index that maps one reads the row's document from MySQL
 * instead (row_image.c), said once per index and column; whatever else
 * reads the row needs only its keys. */
static void unsure_note(struct kafka_source *ks, const mq_msg *m, uint32_t i,
                        const rd_kafka_message_t *msg) {
    const struct mapping *mp = ks->env->p->m;
    for (uint32_t u = 0; u < m->nunsure; u++) {
        const mq_unsure *un = &m->unsure[u];
        if (un->row != i) continue;
        const char *col = m->table.cols[un->col].name;
        bool used = false;
        for (size_t x = 0; x < mp->nindices; x++) {
            const struct mp_index *ix = &mp->indices[x];
            if (!un->after || !row_image_index(ix) || strcmp(ix->tables[0].db, m->table.db) ||
                strcmp(ix->tables[0].table, m->table.name))
                continue;
            for (size_t c = 0; c < ix->tables[0].ncolumns; c++) {
                if (strcmp(ix->tables[0].columns[c].name, col)) continue;
                used = true;
                sbuf k = SBUF_INIT;
                sbuf_printf(&k, "%s\x1f%s", ix->alias, col);
                if (strset_add(&ks->unsure_warned, k.data, k.len))
                    log_warn("run", "index %s (mode row-image): %s (%s partition %d offset "
                             "%lld); the documents of rows with such a value are read from "
                             "MySQL instead of the message (said once per column)", ix->alias,
                             un->why, rd_kafka_topic_name(msg->rkt), (int)msg->partition,
                             (long long)msg->offset);
                sbuf_free(&k);
            }
        }
        if (!used)
            log_debug("run", "%s (%s partition %d offset %lld): no row-image index reads it",
                      un->why, rd_kafka_topic_name(msg->rkt), (int)msg->partition,
                      (long long)msg->offset);
    }
}

/* the reasons of row i's unsure values, "; "-separated, appended to out */
static void unsure_why(const mq_msg *m, uint32_t i, sbuf *out) {
    for (uint32_t u = 0; u < m->nunsure; u++)
        if (m->unsure[u].row == i) sbuf_printf(out, "; %s", m->unsure[u].why);
}

static void ddl_seen(struct kafka_source *ks, const mq_msg *m, const rd_kafka_message_t *msg) {
    struct source_env *env = ks->env;
    env->counts.ddls++;
    mq_schema_forget(&ks->schema); /* columns may have changed */
    char at[512];
    snprintf(at, sizeof at, "Kafka (%s partition %d offset %lld)", rd_kafka_topic_name(msg->rkt),
             (int)msg->partition, (long long)msg->offset);
    const char *sql = m->ddl ? m->ddl : "";
    /* a snapshot's statement without coordinates cannot be placed: taken
     * as one the server ran */
    env->ddl(env->ud, m->ddl_db ? m->ddl_db : "", sql, strlen(sql), at,
             m->ddl_replayed && m->have_pos ? &m->pos : NULL);
}

static int handle(struct kafka_source *ks, const rd_kafka_message_t *msg) {
    struct source_env *env = ks->env;
    struct pipeline *p = env->p;
    ks->messages++;
    const char *data = msg->payload ? msg->payload : "";
    size_t len = msg->payload ? msg->len : 0;
    const char *topic = rd_kafka_topic_name(msg->rkt);
    if (ks->nmissing) ks_topic_back(ks, topic, "a message of it was read");
    struct kafka_offset *k = kafka_offsets_at(&ks->parts, topic, msg->partition, true);
    int rc = 0;
    ks->o.format = ks_topic_format(ks, topic);
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
        /* where its rows are in the source's history: row images are ordered
         * and versioned by it (messages of several partitions are read
         * interleaved, a later set may hold older coordinates) */
        memset(&env->cs->at, 0, sizeof env->cs->at);
        if (coords(&ks->m))
            env->cs->at = (struct cs_at){true, bl_file_seq(ks->m.pos.file), ks->m.pos.pos,
                                       ks->m.pos_row};
        for (uint32_t i = 0; i < ks->m.nrows && rc == 0; i++) {
            env->counts.rows++;
            if (ks->m.nunsure) unsure_note(ks, &ks->m, i, msg);
            if (pipeline_route_row(p, env->cs, &ks->m.rows[i]) != 0) {
                char why[1200];
                sbuf w = SBUF_INIT;
                unsure_why(&ks->m, i, &w);
                /* a column not in the row image (router.c, row_image.c): the
                 * binlog's advice does not fit a message; its producer's does.
                 * A value its message could not decode is as absent to the
                 * router: then that is what is wrong */
                if (w.len)
                    snprintf(why, sizeof why, "its row %u could not be routed: %s (the row's "
                             "values that could not be decoded: %s)", i + 1, p->err, w.data + 2);
                else if (!strstr(p->err, "row image") ||
                         mq_absent_advice(&ks->m, i, why, sizeof why) < 0)
                    snprintf(why, sizeof why, "its row %u could not be routed: %s", i + 1,
                             p->err);
                sbuf_free(&w);
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
    struct source_env *env = ks->env;
    struct pipeline *p = env->p;
    if (ks->have_last && pipeline_has_missing(p)) {
        if (src_ensure(env) < 0) return -1;
        if (pipeline_rebuild_missing(p, &ks->last_end) < 0) {
            if (*env->stop || !db_conn_lost(p->src)) {
                snprintf(env->err, env->errlen, "%s", p->err);
                return -1;
            }
            log_warn("run", "%s; tried again when next idle", p->err);
        } else {
            pipeline_end_at(p, env->cs, token_make(ks), false);
            ks->moved = false;
        }
    }
    if (ks->moved) { /* markers and skipped tables only: a quiet save */
        pipeline_end_at(p, env->cs, token_make(ks), true);
        ks->moved = false;
    }
    env->between(env->ud);
    ks_publish_stats(ks, true);
    ks_refusals_poll(ks, false);
    return 0;
}

static int kafka_source_run(void *state) {
    struct kafka_source *ks = state;
    struct source_env *env = ks->env;
    log_info("run", "syncing %zu index config(s) of source %s from Kafka (brokers %s over %s, "
             "group %s)", (*env->gen)->m.nindices, env->cfg->source.name,
             env->cfg->kafka.brokers, env->cfg->kafka.security_protocol, env->cfg->kafka.group);
    ks_publish_stats(ks, false);
    int rc = BL_STOP;
    while (!*env->stop) {
        liveness_beat(&env->rs->live); /* each poll: a broker away still returns */
        if (!ks->group_msgs) ks_topics_poll(ks, false);
        /* an open change set waits GROUP_WAIT_MS for the next message (the
         * next fetch's may be on its way) before it is built: built at every
         * gap in librdkafka's queue, sets would be a message or two each */
        rd_kafka_message_t *msg = rd_kafka_consumer_poll(ks->rk, ks->group_msgs ? GROUP_WAIT_MS
                                                                             : 200);
        if (ks->live_stale) {
            ks->live_stale = false;
            ks_live_publish(ks);
        }
        if (!msg) {
            if ((ks->group_msgs ? group_build(ks) : idle(ks)) < 0) {
                rc = BL_ERR;
                break;
            }
            continue;
        }
        if (msg->err == RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART ||
            msg->err == RD_KAFKA_RESP_ERR__UNKNOWN_TOPIC) {
            int trc = ks_topic_missing(ks, msg);
            rd_kafka_message_destroy(msg);
            if (trc < 0) {
                rc = BL_ERR;
                break;
            }
            continue;
        }
        if (msg->err) {
            char fatal[512];
            int erc = kafka_consume_error(ks->rk, msg, "run", "Kafka: ", fatal, sizeof fatal);
            rd_kafka_message_destroy(msg);
            if (erc < 0) {
                snprintf(env->err, env->errlen, "the Kafka consumer failed: %s", fatal);
                rc = BL_ERR;
                break;
            }
            continue;
        }
        int hrc = handle(ks, msg);
        rd_kafka_message_destroy(msg);
        if (ks->refused) ks_refusals_poll(ks, true);
        if (hrc == 0 && ks->group_msgs && group_full(ks)) hrc = group_build(ks);
        if (hrc < 0) {
            rc = BL_ERR;
            break;
        }
    }
    /* a change set still open is not built: its offsets were never handed to
     * delivery, so the next start reads its messages again */
    if (rc == BL_ERR && *env->stop) rc = BL_STOP;
    if (rc == BL_STOP) env->err[0] = '\0';
    changeset_reset(env->cs);
    log_info("run", "Kafka: %llu messages read, %llu dead letters, %llu without rows to apply",
             ks->messages, ks->dead, ks->markers);
    pthread_mutex_lock(&env->rs->mu);
    env->rs->f.reading = false;
    pthread_mutex_unlock(&env->rs->mu);
    return rc;
}

const struct source_kind kafka_source_kind = {
    .name = "kafka",
    .ordered_versions = false, /* a topic's partitions need not give them in order */
    .check = NULL,
    .open = kafka_source_open,
    .run = kafka_source_run,
    .last_end = NULL, /* a build's dual writes start at start_pos */
    .saved = kafka_source_saved,
    .close = kafka_source_close,
};
