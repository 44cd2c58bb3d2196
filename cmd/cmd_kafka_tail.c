/* cmd_kafka_tail: `searchsync kafka-tail` — a Kafka source's change messages
 * as `searchsync tail` lines.
 *
 * Consumes the topics of [kafka] (topics, topic_regex) with librdkafka:
 * as the consumer group [kafka] group, offsets stored once a message's lines
 * are written (committed by librdkafka's auto commit); or, with
 * --from-beginning, every partition of the topics assigned from its first
 * offset, nothing committed. Each message is decoded by mq_decode (src/mq/)
 * with the table's columns from [source]'s information_schema when [source]
 * user is set, and printed:
 *   rows   one line each on stdout, exactly as tail prints binlog rows
 *          (bl_row_json; docs/binlog.md, "Values"); "pos" is the binlog coordinates the
 *          message carries, else {"topic":..,"partition":..,"offset":..}
 *   DDL    {"type":"ddl","db":..,"sql":..,"ts":..,"pos":..} on stdout
 *   error  {"error":..,"topic":..,"partition":..,"offset":..,"raw":..} on
 *          stderr; reading goes on
 *   a value that could not be decoded with certainty: its row is printed
 *          without it and {"error":..,"row":..,"image":..,"column":..,
 *          "topic":..,"partition":..,"offset":..} goes to stderr
 * Markers (tombstones, heartbeats, transaction markers, notifications)
 * print nothing. */
#include <errno.h>
#include <librdkafka/rdkafka.h>
#include <regex.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "binlog/binlog.h"
#include "commands.h"
#include "config.h"
#include "db.h"
#include "jsonw.h"
#include "kafka_conf.h"
#include "log.h"
#include "mq/mq.h"
#include "mq_config.h"
#include "mq_schema.h"
#include "sbuf.h"
#include "signals.h"

static volatile sig_atomic_t stop_requested;

/* ------------------------------------------------- output */

struct ktail {
    sbuf out, pos, err;
    bl_valctx v;
    mq_msg m;
    mq_opts o;
    struct mq_schema schema;
    bool write_failed;
    uint64_t messages, rows, errors;
};

static int write_all(int fd, sbuf *b) {
    size_t off = 0;
    while (off < b->len) {
        ssize_t n = write(fd, b->data + off, b->len - off);
        if (n < 0) {
            if (errno == EINTR) continue;
            sbuf_reset(b);
            return -1;
        }
        off += (size_t)n;
    }
    sbuf_reset(b);
    return 0;
}

/* the message's topic, partition and offset, as keys of the open object */
static void kafka_pos_keys(jsonw *w, const rd_kafka_message_t *msg) {
    jw_key(w, "topic");
    jw_str(w, rd_kafka_topic_name(msg->rkt));
    jw_key(w, "partition");
    jw_int(w, msg->partition);
    jw_key(w, "offset");
    jw_int(w, msg->offset);
}

static void kafka_pos_json(sbuf *out, const rd_kafka_message_t *msg) {
    jsonw w;
    jw_init(&w, out);
    jw_obj_open(&w);
    kafka_pos_keys(&w, msg);
    jw_obj_close(&w);
}

/* one message: its lines written; 0, or -1 when stdout is gone */
static int handle(struct ktail *k, const rd_kafka_message_t *msg) {
    k->messages++;
    const char *data = msg->payload ? msg->payload : "";
    size_t len = msg->payload ? msg->len : 0;
    if (mq_decode(&k->m, &k->o, data, len) != MQ_OK) {
        k->errors++;
        jsonw w;
        jw_init(&w, &k->err);
        jw_obj_open(&w);
        jw_key(&w, "error");
        jw_str(&w, k->m.err);
        kafka_pos_keys(&w, msg);
        jw_key(&w, "raw");
        jw_strn(&w, data, len);
        jw_obj_close(&w);
        sbuf_addc(&k->err, '\n');
        write_all(STDERR_FILENO, &k->err);
        return 0;
    }
    sbuf_reset(&k->pos);
    if (k->m.have_pos) bl_pos_json(&k->pos, &k->m.pos);
    else kafka_pos_json(&k->pos, msg);
    if (k->m.kind == MQ_ROWS) {
        for (uint32_t i = 0; i < k->m.nrows; i++)
            bl_row_json(&k->v, &k->out, &k->m.rows[i], k->pos.data, k->pos.len);
        k->rows += k->m.nrows;
        /* values the rows were printed without: one line each on stderr */
        for (uint32_t i = 0; i < k->m.nunsure; i++) {
            const mq_unsure *u = &k->m.unsure[i];
            jsonw w;
            jw_init(&w, &k->err);
            jw_obj_open(&w);
            jw_key(&w, "error");
            jw_str(&w, u->why);
            jw_key(&w, "row");
            jw_uint(&w, u->row + 1);
            jw_key(&w, "image");
            jw_str(&w, u->after ? "after" : "before");
            jw_key(&w, "column");
            jw_str(&w, k->m.table.cols[u->col].name);
            kafka_pos_keys(&w, msg);
            jw_obj_close(&w);
            sbuf_addc(&k->err, '\n');
        }
        if (k->m.nunsure) {
            k->errors++;
            write_all(STDERR_FILENO, &k->err);
        }
    } else if (k->m.kind == MQ_DDL) {
        jsonw w;
        jw_init(&w, &k->out);
        jw_obj_open(&w);
        jw_key(&w, "type");
        jw_str(&w, "ddl");
        jw_key(&w, "db");
        if (k->m.ddl_db && *k->m.ddl_db) jw_str(&w, k->m.ddl_db);
        else jw_null(&w);
        jw_key(&w, "sql");
        jw_str(&w, k->m.ddl ? k->m.ddl : "");
        jw_key(&w, "ts");
        jw_uint(&w, k->m.ts);
        jw_key(&w, "pos");
        jw_raw(&w, k->pos.data, k->pos.len);
        jw_obj_close(&w);
        sbuf_addc(&k->out, '\n');
        mq_schema_forget(&k->schema); /* columns may have changed */
    }
    if (k->out.len && write_all(STDOUT_FILENO, &k->out) < 0) {
        k->write_failed = true;
        return -1;
    }
    return 0;
}

/* ------------------------------------------------- the consumer */

/* every partition of the configured topics, from its first offset */
static int assign_all(rd_kafka_t *rk, const struct ss_config *cfg, char *err, size_t errlen) {
    const struct rd_kafka_metadata *md = NULL;
    rd_kafka_resp_err_t e = rd_kafka_metadata(rk, 1, NULL, &md, 10000);
    if (e) return errf(err, errlen, "metadata from [kafka] brokers %s: %s", cfg->kafka.brokers,
                       rd_kafka_err2str(e));
    regex_t re;
    bool have_re = cfg->kafka.topic_regex && *cfg->kafka.topic_regex;
    if (have_re) {
        const char *rx = cfg->kafka.topic_regex;
        sbuf a = SBUF_INIT;
        sbuf_printf(&a, "%s%s", rx[0] == '^' ? "" : "^", rx);
        int rc = regcomp(&re, a.data, REG_EXTENDED | REG_NOSUB);
        sbuf_free(&a);
        if (rc) {
            rd_kafka_metadata_destroy(md);
            return errf(err, errlen, "[kafka] topic_regex = \"%s\" is not a POSIX extended "
                        "regular expression", rx);
        }
    }
    rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(16);
    int rc = 0;
    /* every named topic must be there */
    char *names = xstrdup(cfg->kafka.topics ? cfg->kafka.topics : "");
    for (char *t = strtok(names, ", \t"); t && !rc; t = strtok(NULL, ", \t")) {
        int i;
        for (i = 0; i < md->topic_cnt; i++)
            if (!strcmp(md->topics[i].topic, t)) break;
        if (i == md->topic_cnt || md->topics[i].err) {
            rc = errf(err, errlen, "[kafka] topics: topic \"%s\" %s on %s", t,
                      i == md->topic_cnt ? "does not exist"
                                         : rd_kafka_err2str(md->topics[i].err),
                      cfg->kafka.brokers);
            break;
        }
        for (int p = 0; p < md->topics[i].partition_cnt; p++)
            rd_kafka_topic_partition_list_add(l, t, md->topics[i].partitions[p].id)->offset =
                RD_KAFKA_OFFSET_BEGINNING;
    }
    free(names);
    for (int i = 0; i < md->topic_cnt && have_re && !rc; i++) {
        const struct rd_kafka_metadata_topic *mt = &md->topics[i];
        if (mt->err || regexec(&re, mt->topic, 0, NULL, 0) != 0) continue;
        for (int p = 0; p < mt->partition_cnt; p++)
            if (!rd_kafka_topic_partition_list_find(l, mt->topic, mt->partitions[p].id))
                rd_kafka_topic_partition_list_add(l, mt->topic, mt->partitions[p].id)->offset =
                    RD_KAFKA_OFFSET_BEGINNING;
    }
    if (have_re) regfree(&re);
    rd_kafka_metadata_destroy(md);
    if (!rc && l->cnt == 0)
        rc = errf(err, errlen, "no topic on %s matches [kafka] topic_regex = \"%s\"",
                  cfg->kafka.brokers, cfg->kafka.topic_regex);
    if (!rc && (e = rd_kafka_assign(rk, l)))
        rc = errf(err, errlen, "assigning the partitions: %s", rd_kafka_err2str(e));
    if (!rc) log_info("kafka-tail", "reading %d partitions from their first offset", l->cnt);
    rd_kafka_topic_partition_list_destroy(l);
    return rc;
}

static int subscribe(rd_kafka_t *rk, const struct ss_config *cfg, char *err, size_t errlen) {
    rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(8);
    char *names = xstrdup(cfg->kafka.topics ? cfg->kafka.topics : "");
    for (char *t = strtok(names, ", \t"); t; t = strtok(NULL, ", \t"))
        rd_kafka_topic_partition_list_add(l, t, RD_KAFKA_PARTITION_UA);
    free(names);
    sbuf rx = SBUF_INIT;
    if (cfg->kafka.topic_regex && *cfg->kafka.topic_regex) {
        /* librdkafka takes a topic starting with ^ as a regex */
        sbuf_printf(&rx, "%s%s", cfg->kafka.topic_regex[0] == '^' ? "" : "^",
                    cfg->kafka.topic_regex);
        rd_kafka_topic_partition_list_add(l, rx.data, RD_KAFKA_PARTITION_UA);
    }
    rd_kafka_resp_err_t e = rd_kafka_subscribe(rk, l);
    rd_kafka_topic_partition_list_destroy(l);
    sbuf_free(&rx);
    if (e) return errf(err, errlen, "subscribing to [kafka] topics: %s", rd_kafka_err2str(e));
    return 0;
}

static long ms_since(const struct timespec *a) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (now.tv_sec - a->tv_sec) * 1000 + (now.tv_nsec - a->tv_nsec) / 1000000;
}

void usage_kafka_tail(FILE *f) {
    fprintf(f,
            "usage: searchsync kafka-tail --config FILE [--from-beginning] [--max N] "
            "[--timeout-ms T]\n\n"
            "Reads the topics of [kafka] (topics, topic_regex; [source] kind = kafka), decodes "
            "each change\nmessage (canal-json, Debezium, Maxwell: [kafka] format) and prints its "
            "rows as `searchsync tail`\ndoes, one JSON object per line on stdout:\n"
            "  {\"type\":\"insert|update|delete\",\"db\":..,\"table\":..,\"ts\":<unix s>,"
            "\"pos\":{..},\"before\":{..}|null,\"after\":{..}|null}\n"
            "pos is the binlog position the message carries ({\"file\":..,\"pos\":..,\"gtid\":..}),"
            " else\n{\"topic\":..,\"partition\":..,\"offset\":..}. A DDL message prints "
            "{\"type\":\"ddl\",\"db\":..,\"sql\":..,\"ts\":..,\"pos\":..}.\n"
            "A message that cannot be decoded is one line on stderr and reading goes on:\n"
            "  {\"error\":..,\"topic\":..,\"partition\":..,\"offset\":..,\"raw\":..}\n"
            "With [source] user set, column types come from the source's information_schema.\n\n"
            "  --config FILE      the configuration ([source] kind = kafka and [kafka])\n"
            "  --from-beginning   every partition from its first offset, without the consumer "
            "group\n"
            "                     (nothing committed); default: as [kafka] group, from its "
            "committed\n"
            "                     offsets (new group: [source] start, now or beginning)\n"
            "  --max N            exit 0 after N messages\n"
            "  --timeout-ms T     exit 0 once no message came for T ms\n\n"
            "exit codes: 0 ok, 1 runtime failure, 2 usage or configuration error\n");
}

/* Messages printed until a stop, --max messages or --timeout-ms without
 * one; with a group (not --from-beginning) each printed message's offset is
 * stored for the group's commit. EXIT_OK, or EXIT_RUNTIME when the
 * consumer failed for good. */
static int consume(struct ktail *k, rd_kafka_t *rk, bool beginning, long long max,
                   long long timeout_ms) {
    int rc = EXIT_OK;
    struct timespec last;
    clock_gettime(CLOCK_MONOTONIC, &last);
    while (!stop_requested && (max < 0 || (long long)k->messages < max)) {
        rd_kafka_message_t *msg = rd_kafka_consumer_poll(rk, 200);
        char sec[600];
        if (!msg && kafka_security_error(sec, sizeof sec)) {
            /* a setting to change: waiting would print nothing forever */
            fprintf(stderr, "searchsync kafka-tail: %s\n", sec);
            rc = EXIT_USAGE;
            break;
        }
        if (!msg) {
            if (timeout_ms > 0 && ms_since(&last) >= timeout_ms) {
                log_info("kafka-tail", "no message for %lld ms: done", timeout_ms);
                break;
            }
            continue;
        }
        if (msg->err) {
            char fatal[512];
            int erc = kafka_consume_error(rk, msg, "kafka-tail", "", fatal, sizeof fatal);
            rd_kafka_message_destroy(msg);
            if (erc < 0) {
                fprintf(stderr, "searchsync kafka-tail: %s\n", fatal);
                rc = EXIT_RUNTIME;
                break;
            }
            continue;
        }
        clock_gettime(CLOCK_MONOTONIC, &last);
        int hrc = handle(k, msg);
        if (hrc == 0 && !beginning) {
            rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(1);
            rd_kafka_topic_partition_list_add(l, rd_kafka_topic_name(msg->rkt), msg->partition)
                ->offset = msg->offset + 1;
            rd_kafka_offsets_store(rk, l);
            rd_kafka_topic_partition_list_destroy(l);
        }
        rd_kafka_message_destroy(msg);
        if (hrc < 0) break; /* stdout closed (e.g. piped into head): not a failure */
    }
    log_debug("kafka-tail", "%llu messages, %llu rows, %llu undecodable",
              (unsigned long long)k->messages, (unsigned long long)k->rows,
              (unsigned long long)k->errors);
    return rc;
}

/* The consumer: with a group, subscribed and committing its offsets; with
 * --from-beginning, every partition assigned from its start, nothing
 * committed. NULL with the problem said and *rc the exit code. */
static rd_kafka_t *consumer_open(const struct ss_config *cfg, bool beginning, int *rc) {
    char err[1024];
    rd_kafka_conf_t *conf = kafka_conf_new(cfg, "searchsync-kafka-tail", err, sizeof err);
    if (conf && kafka_conf_set(conf, "enable.auto.commit", beginning ? "false" : "true", err,
                               sizeof err) < 0) {
        rd_kafka_conf_destroy(conf);
        conf = NULL;
    }
    if (!conf) {
        fprintf(stderr, "searchsync kafka-tail: %s\n", err);
        *rc = EXIT_USAGE;
        return NULL;
    }
    char kerr[512];
    rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf, kerr, sizeof kerr);
    if (!rk) {
        rd_kafka_conf_destroy(conf);
        /* what fails here is a setting (librdkafka loads the TLS files now) */
        fprintf(stderr, "searchsync kafka-tail: cannot create the Kafka consumer: %s; check "
                "[kafka]'s settings (ssl_ca, ssl_cert, ssl_key, client_properties)\n", kerr);
        *rc = EXIT_USAGE;
        return NULL;
    }
    rd_kafka_poll_set_consumer(rk);
    if ((beginning ? assign_all : subscribe)(rk, cfg, err, sizeof err) < 0) {
        char sec[600];
        bool refused = kafka_security_error(sec, sizeof sec);
        fprintf(stderr, "searchsync kafka-tail: %s%s%s\n", err, refused ? ": " : "",
                refused ? sec : "");
        *rc = refused ? EXIT_USAGE : EXIT_RUNTIME;
        rd_kafka_destroy(rk);
        return NULL;
    }
    return rk;
}

int cmd_kafka_tail(int argc, char **argv) {
    static const struct option own[] = {
        {"from-beginning", no_argument, NULL, 'b'},
        {"max", required_argument, NULL, 'n'},
        {"timeout-ms", required_argument, NULL, 'T'},
        {NULL, 0, NULL, 0},
    };
    struct command cmd = {.name = "kafka-tail", .usage = usage_kafka_tail, .opts = own,
                          .argc = argc, .argv = argv, .own_errors = true};
    bool beginning = false;
    long long max = -1, timeout_ms = -1;
    int c;
    while ((c = command_opt(&cmd)) > 0) {
        char *end;
        switch (c) {
        case 'b': beginning = true; break;
        case 'n':
            max = strtoll(optarg, &end, 10);
            if (*end || !*optarg || max < 1) {
                fprintf(stderr, "searchsync kafka-tail: --max wants a number of messages >= 1\n");
                return EXIT_USAGE;
            }
            break;
        case 'T':
            timeout_ms = strtoll(optarg, &end, 10);
            if (*end || !*optarg || timeout_ms < 1 || timeout_ms > 86400000) {
                fprintf(stderr, "searchsync kafka-tail: --timeout-ms wants 1..86400000\n");
                return EXIT_USAGE;
            }
            break;
        }
    }
    if (c < 0) return cmd.rc;
    if (optind < argc) {
        fprintf(stderr, "searchsync kafka-tail: unexpected argument '%s'\n", argv[optind]);
        return EXIT_USAGE;
    }
    if (!cmd.config) {
        fprintf(stderr, "searchsync kafka-tail: --config FILE is required\n");
        usage_kafka_tail(stderr);
        return EXIT_USAGE;
    }
    int rc = command_begin(&cmd, 0);
    if (rc >= 0) return rc;
    const struct ss_config *cfg = &cmd.cfg;
    if (!config_kafka_source(cfg)) {
        fprintf(stderr, "searchsync kafka-tail: %s: [source] kind is binlog: set [source] kind = "
                "kafka and [kafka] brokers and topics (or use `searchsync tail` for the binlog)\n",
                cfg->path);
        return command_end(&cmd, EXIT_USAGE);
    }

    struct ktail k;
    memset(&k, 0, sizeof k);
    bl_valctx_init(&k.v);
    mq_msg_init(&k.m);
    k.schema.cfg = cfg;
    mq_config_opts(cfg, &k.o);
    if (cfg->source.user) {
        k.o.lookup = mq_schema_lookup;
        k.o.lookup_ctx = &k.schema;
    }

    rd_kafka_t *rk = consumer_open(cfg, beginning, &rc);
    if (!rk) goto out;

    signals_on_stop(&stop_requested, NULL);
    rc = consume(&k, rk, beginning, max, timeout_ms);
    rd_kafka_consumer_close(rk); /* commits the stored offsets of a group */
    rd_kafka_destroy(rk);
out:
    mq_schema_free(&k.schema);
    mq_msg_free(&k.m);
    bl_valctx_free(&k.v);
    sbuf_free(&k.out);
    sbuf_free(&k.pos);
    sbuf_free(&k.err);
    return command_end(&cmd, rc);
}
