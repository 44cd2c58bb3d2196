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
 *          (bl_row_json, DESIGN.md §4.2); "pos" is the binlog coordinates the
 *          message carries, else {"topic":..,"partition":..,"offset":..}
 *   DDL    {"type":"ddl","db":..,"sql":..,"ts":..,"pos":..} on stdout
 *   error  {"error":..,"topic":..,"partition":..,"offset":..,"raw":..} on
 *          stderr; reading goes on
 * Markers (tombstones, heartbeats, transaction markers) print nothing. */
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
#include "log.h"
#include "mq/mq.h"
#include "sbuf.h"
#include "signals.h"

static volatile sig_atomic_t stop_requested;

/* ------------------------------------------------- schema lookup */

/* one table's columns from information_schema, kept until a DDL message */
struct tabcols {
    char *db, *table;
    mq_coldef *cols;
    uint32_t ncols;
    char *strs; /* the names and types, one allocation */
    struct tabcols *next;
};

struct schema {
    const struct ss_config *cfg;
    MYSQL *conn;
    struct tabcols *tables;
};

static void schema_forget(struct schema *s) {
    while (s->tables) {
        struct tabcols *t = s->tables;
        s->tables = t->next;
        free(t->db);
        free(t->table);
        free(t->cols);
        free(t->strs);
        free(t);
    }
}

static int schema_lookup(void *ctx, const char *db, const char *table, const mq_coldef **cols,
                         uint32_t *ncols, char *err, size_t errlen) {
    struct schema *s = ctx;
    for (struct tabcols *t = s->tables; t; t = t->next)
        if (!strcmp(t->db, db) && !strcmp(t->table, table)) {
            *cols = t->cols;
            *ncols = t->ncols;
            return t->ncols ? 1 : 0;
        }
    db_params p = db_params_source(s->cfg);
    char derr[512];
    if (db_ensure(&s->conn, &p, derr, sizeof derr) < 0)
        return errf(err, errlen, "the column types of %s.%s: %s", db, table, derr);
    size_t dl = strlen(db), tl = strlen(table);
    char *edb = xmalloc(dl * 2 + 1), *etab = xmalloc(tl * 2 + 1);
    mysql_real_escape_string(s->conn, edb, db, (unsigned long)dl);
    mysql_real_escape_string(s->conn, etab, table, (unsigned long)tl);
    sbuf q = SBUF_INIT;
    sbuf_printf(&q, "SELECT COLUMN_NAME, COLUMN_TYPE, COLUMN_KEY = 'PRI' FROM "
                "information_schema.COLUMNS WHERE TABLE_SCHEMA = '%s' AND TABLE_NAME = '%s' "
                "ORDER BY ORDINAL_POSITION", edb, etab);
    free(edb);
    free(etab);
    MYSQL_RES *res = db_query(s->conn, q.data, q.len, derr, sizeof derr);
    sbuf_free(&q);
    if (!res) return errf(err, errlen, "the column types of %s.%s: %s", db, table, derr);
    struct tabcols *t = xcalloc(1, sizeof *t);
    t->db = xstrdup(db);
    t->table = xstrdup(table);
    uint32_t n = (uint32_t)mysql_num_rows(res);
    sbuf strs = SBUF_INIT;
    size_t *off = xcalloc(n ? n * 2 : 1, sizeof *off);
    t->cols = xcalloc(n ? n : 1, sizeof *t->cols);
    MYSQL_ROW row;
    uint32_t i = 0;
    while ((row = mysql_fetch_row(res)) && i < n) {
        off[2 * i] = strs.len;
        sbuf_add(&strs, row[0] ? row[0] : "", (row[0] ? strlen(row[0]) : 0) + 1);
        off[2 * i + 1] = strs.len;
        sbuf_add(&strs, row[1] ? row[1] : "", (row[1] ? strlen(row[1]) : 0) + 1);
        t->cols[i].is_pk = row[2] && !strcmp(row[2], "1");
        i++;
    }
    mysql_free_result(res);
    t->ncols = i;
    t->strs = strs.data ? strs.data : xstrdup("");
    bool longtext = false;
    for (uint32_t k = 0; k < i; k++) {
        t->cols[k].name = t->strs + off[2 * k];
        t->cols[k].column_type = t->strs + off[2 * k + 1];
        longtext |= !strncmp(t->cols[k].column_type, "longtext", 8);
    }
    free(off);
    /* MariaDB's JSON is a LONGTEXT with CHECK (json_valid(`col`)), as the
     * binlog reader finds it (src/binlog/schema.c); MySQL has no such table
     * column and a JSON type of its own: the query's failure is ignored */
    q = (sbuf)SBUF_INIT;
    edb = xmalloc(dl * 2 + 1), etab = xmalloc(tl * 2 + 1);
    mysql_real_escape_string(s->conn, edb, db, (unsigned long)dl);
    mysql_real_escape_string(s->conn, etab, table, (unsigned long)tl);
    sbuf_printf(&q, "SELECT CHECK_CLAUSE FROM information_schema.CHECK_CONSTRAINTS WHERE "
                "CONSTRAINT_SCHEMA = '%s' AND TABLE_NAME = '%s'", edb, etab);
    free(edb);
    free(etab);
    if (longtext && (res = db_query(s->conn, q.data, q.len, derr, sizeof derr))) {
        while ((row = mysql_fetch_row(res))) {
            const char *cl = row[0], *b, *e;
            if (!cl || strncasecmp(cl, "json_valid(`", 12)) continue;
            b = cl + 12;
            if (!(e = strchr(b, '`')) || strcmp(e, "`)")) continue;
            for (uint32_t k = 0; k < t->ncols; k++)
                if (!strncmp(t->cols[k].column_type, "longtext", 8) &&
                    strlen(t->cols[k].name) == (size_t)(e - b) &&
                    !strncmp(t->cols[k].name, b, (size_t)(e - b)))
                    t->cols[k].column_type = "json";
        }
        mysql_free_result(res);
    }
    sbuf_free(&q);
    t->next = s->tables;
    s->tables = t;
    *cols = t->cols;
    *ncols = t->ncols;
    return t->ncols ? 1 : 0; /* 0: not a table there; the message's own types */
}

/* ------------------------------------------------- output */

struct ktail {
    sbuf out, pos, err;
    bl_valctx v;
    mq_msg m;
    mq_opts o;
    struct schema schema;
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

static void kafka_pos_json(sbuf *out, const rd_kafka_message_t *msg) {
    jsonw w;
    jw_init(&w, out);
    jw_obj_open(&w);
    jw_key(&w, "topic");
    jw_str(&w, rd_kafka_topic_name(msg->rkt));
    jw_key(&w, "partition");
    jw_int(&w, msg->partition);
    jw_key(&w, "offset");
    jw_int(&w, msg->offset);
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
        jw_key(&w, "topic");
        jw_str(&w, rd_kafka_topic_name(msg->rkt));
        jw_key(&w, "partition");
        jw_int(&w, msg->partition);
        jw_key(&w, "offset");
        jw_int(&w, msg->offset);
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
        schema_forget(&k->schema); /* columns may have changed */
    }
    if (k->out.len && write_all(STDOUT_FILENO, &k->out) < 0) {
        k->write_failed = true;
        return -1;
    }
    return 0;
}

/* ------------------------------------------------- the consumer */

static void on_log(const rd_kafka_t *rk, int level, const char *fac, const char *buf) {
    (void)rk;
    if (level <= 3) log_error("kafka", "%s: %s", fac, buf);
    else if (level <= 5) log_warn("kafka", "%s: %s", fac, buf);
    else log_debug("kafka", "%s: %s", fac, buf);
}

static void on_error(rd_kafka_t *rk, int err, const char *reason, void *opaque) {
    (void)rk;
    (void)opaque;
    log_warn("kafka", "%s (%s)", reason, rd_kafka_err2name((rd_kafka_resp_err_t)err));
}

static int conf_set(rd_kafka_conf_t *conf, const char *key, const char *val, char *err,
                    size_t errlen) {
    char e[512];
    if (rd_kafka_conf_set(conf, key, val, e, sizeof e) != RD_KAFKA_CONF_OK)
        return errf(err, errlen, "librdkafka setting %s = %s: %s", key, val, e);
    return 0;
}

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

static void usage(FILE *f) {
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

int cmd_kafka_tail(int argc, char **argv) {
    static const struct option own[] = {
        {"from-beginning", no_argument, NULL, 'b'},
        {"max", required_argument, NULL, 'n'},
        {"timeout-ms", required_argument, NULL, 'T'},
        {NULL, 0, NULL, 0},
    };
    struct command cmd = {.name = "kafka-tail", .usage = usage, .opts = own, .argc = argc,
                          .argv = argv, .own_errors = true};
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
        usage(stderr);
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
    for (int f = 0; f < 4; f++)
        if (!strcmp(cfg->kafka.format, mq_format_name[f])) k.o.format = f;
    config_parse_tz_offset(cfg->kafka.canal_tz_offset, &k.o.canal_tz_offset);
    if (cfg->source.user) {
        k.o.lookup = schema_lookup;
        k.o.lookup_ctx = &k.schema;
    }

    char err[1024];
    rd_kafka_conf_t *conf = rd_kafka_conf_new();
    int crc = conf_set(conf, "bootstrap.servers", cfg->kafka.brokers, err, sizeof err);
    if (!crc) crc = conf_set(conf, "client.id", "searchsync-kafka-tail", err, sizeof err);
    if (!crc) crc = conf_set(conf, "group.id", cfg->kafka.group, err, sizeof err);
    if (!crc)
        crc = conf_set(conf, "enable.auto.commit", beginning ? "false" : "true", err, sizeof err);
    if (!crc) crc = conf_set(conf, "enable.auto.offset.store", "false", err, sizeof err);
    if (!crc)
        crc = conf_set(conf, "auto.offset.reset",
                       cfg->source.start && !strcmp(cfg->source.start, "beginning") ? "earliest"
                                                                                    : "latest",
                       err, sizeof err);
    if (crc) {
        rd_kafka_conf_destroy(conf);
        fprintf(stderr, "searchsync kafka-tail: %s\n", err);
        rc = EXIT_USAGE;
        goto out;
    }
    rd_kafka_conf_set_log_cb(conf, on_log);
    rd_kafka_conf_set_error_cb(conf, on_error);
    char kerr[512];
    rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf, kerr, sizeof kerr);
    if (!rk) {
        rd_kafka_conf_destroy(conf);
        fprintf(stderr, "searchsync kafka-tail: cannot create the Kafka consumer: %s\n", kerr);
        rc = EXIT_RUNTIME;
        goto out;
    }
    rd_kafka_poll_set_consumer(rk);
    if ((beginning ? assign_all : subscribe)(rk, cfg, err, sizeof err) < 0) {
        fprintf(stderr, "searchsync kafka-tail: %s\n", err);
        rc = EXIT_RUNTIME;
        rd_kafka_destroy(rk);
        goto out;
    }

    signals_on_stop(&stop_requested, NULL);
    rc = EXIT_OK;
    struct timespec last;
    clock_gettime(CLOCK_MONOTONIC, &last);
    while (!stop_requested && (max < 0 || (long long)k.messages < max)) {
        rd_kafka_message_t *msg = rd_kafka_consumer_poll(rk, 200);
        if (!msg) {
            if (timeout_ms > 0 && ms_since(&last) >= timeout_ms) {
                log_info("kafka-tail", "no message for %lld ms: done", timeout_ms);
                break;
            }
            continue;
        }
        if (msg->err) {
            if (msg->err != RD_KAFKA_RESP_ERR__PARTITION_EOF) {
                log_warn("kafka-tail", "%s%s%s", msg->rkt ? rd_kafka_topic_name(msg->rkt) : "",
                         msg->rkt ? ": " : "", rd_kafka_message_errstr(msg));
                char fatal[512];
                if (rd_kafka_fatal_error(rk, fatal, sizeof fatal)) {
                    fprintf(stderr, "searchsync kafka-tail: %s\n", fatal);
                    rc = EXIT_RUNTIME;
                    rd_kafka_message_destroy(msg);
                    break;
                }
            }
            rd_kafka_message_destroy(msg);
            continue;
        }
        clock_gettime(CLOCK_MONOTONIC, &last);
        int hrc = handle(&k, msg);
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
              (unsigned long long)k.messages, (unsigned long long)k.rows,
              (unsigned long long)k.errors);
    rd_kafka_consumer_close(rk); /* commits the stored offsets of a group */
    rd_kafka_destroy(rk);
out:
    schema_forget(&k.schema);
    db_close(k.schema.conn);
    mq_msg_free(&k.m);
    bl_valctx_free(&k.v);
    sbuf_free(&k.out);
    sbuf_free(&k.pos);
    sbuf_free(&k.err);
    return command_end(&cmd, rc);
}
