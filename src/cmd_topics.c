/* cmd_topics: `searchsync topics add|remove|list` — the topics a Kafka source
 * reads besides [kafka] topics / topic_regex, kept in the metadata schema
 * (kafka_topics, migration 0013). A running daemon reads the table every 2 s
 * and subscribes to the new set without a restart (sync/kafka_source.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "config.h"
#include "db.h"
#include "sbuf.h"

static void topics_usage(FILE *out) {
    fprintf(out,
            "usage: searchsync topics add    --config FILE TOPIC...\n"
            "       searchsync topics remove --config FILE TOPIC...\n"
            "       searchsync topics list   --config FILE\n\n"
            "The Kafka topics source [source] name reads ([source] kind = kafka) besides\n"
            "[kafka] topics and topic_regex: stored in the metadata schema, read by a\n"
            "running `searchsync run` within seconds, without a restart. A topic added\n"
            "is read from the consumer group's committed offsets, else from [source]\n"
            "start (beginning: its oldest message; now: new messages only).\n"
            "list prints one line per topic: TOPIC<TAB>config|metadata (and the\n"
            "regex as REGEX<TAB>config regex).\n");
}

/* Kafka's legal topic names: 1..249 of [a-zA-Z0-9._-], not "." or ".." */
static bool topic_ok(const char *t) {
    size_t n = strlen(t);
    if (!n || n > 249 || !strcmp(t, ".") || !strcmp(t, "..")) return false;
    for (const char *p = t; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
              *p == '.' || *p == '_' || *p == '-'))
            return false;
    return true;
}

static bool in_config(const struct ss_config *cfg, const char *topic) {
    char *names = xstrdup(cfg->kafka.topics ? cfg->kafka.topics : "");
    bool found = false;
    for (char *t = strtok(names, ", \t"); t && !found; t = strtok(NULL, ", \t"))
        found = !strcmp(t, topic);
    free(names);
    return found;
}

int cmd_topics(int argc, char **argv) {
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        topics_usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? EXIT_USAGE : EXIT_OK;
    }
    const char *action = argv[1];
    bool add = !strcmp(action, "add"), rm = !strcmp(action, "remove"),
         list = !strcmp(action, "list");
    if (!add && !rm && !list) {
        fprintf(stderr, "searchsync topics: unknown action \"%s\" (add, remove or list)\n",
                action);
        topics_usage(stderr);
        return EXIT_USAGE;
    }
    static const struct option own[] = {{NULL, 0, NULL, 0}};
    struct command c = {.name = "topics", .usage = topics_usage, .opts = own, .argc = argc,
                        .argv = argv, .first = 2};
    int o;
    while ((o = command_opt(&c)) > 0) {}
    if (o < 0) return c.rc;
    if (!c.config || (list ? optind != argc : optind == argc)) return command_usage(&c);
    for (int i = optind; i < argc; i++)
        if (!topic_ok(argv[i])) {
            fprintf(stderr, "searchsync topics: \"%s\" is not a Kafka topic name (1 to 249 of "
                    "a-z, A-Z, 0-9, '.', '_' and '-')\n", argv[i]);
            return EXIT_USAGE;
        }
    int rc = command_begin(&c, 0);
    if (rc >= 0) return rc;
    const struct ss_config *cfg = &c.cfg;
    if (!config_kafka_source(cfg)) {
        fprintf(stderr, "searchsync topics: %s: [source] kind is binlog: topics are for a Kafka "
                "source (set [source] kind = kafka and [kafka] brokers)\n", c.config);
        return command_end(&c, EXIT_USAGE);
    }
    if ((rc = command_meta(&c, "metadata schema: ")) >= 0) return command_end(&c, rc);
    const char *src = cfg->source.name;
    char err[1024];
    rc = EXIT_OK;
    if (list) {
        char *names = xstrdup(cfg->kafka.topics ? cfg->kafka.topics : "");
        for (char *t = strtok(names, ", \t"); t; t = strtok(NULL, ", \t"))
            printf("%s\tconfig\n", t);
        free(names);
        if (cfg->kafka.topic_regex && *cfg->kafka.topic_regex)
            printf("%s\tconfig regex\n", cfg->kafka.topic_regex);
        sbuf q = SBUF_INIT;
        sbuf_adds(&q, "SELECT topic FROM kafka_topics WHERE source = ");
        db_quote(c.meta, &q, src, strlen(src));
        sbuf_adds(&q, " ORDER BY topic");
        MYSQL_RES *res = db_query(c.meta, q.data, q.len, err, sizeof err);
        sbuf_free(&q);
        if (!res) {
            fprintf(stderr, "searchsync topics: reading the topics of source %s: %s\n", src, err);
            return command_end(&c, EXIT_RUNTIME);
        }
        MYSQL_ROW row;
        while ((row = mysql_fetch_row(res))) printf("%s\tmetadata\n", row[0]);
        mysql_free_result(res);
        return command_end(&c, EXIT_OK);
    }
    for (int i = optind; i < argc && rc == EXIT_OK; i++) {
        sbuf q = SBUF_INIT;
        sbuf_adds(&q, add ? "INSERT IGNORE INTO kafka_topics (source, topic) VALUES ("
                          : "DELETE FROM kafka_topics WHERE source = ");
        db_quote(c.meta, &q, src, strlen(src));
        sbuf_adds(&q, add ? "," : " AND topic = ");
        db_quote(c.meta, &q, argv[i], strlen(argv[i]));
        if (add) sbuf_addc(&q, ')');
        if (db_exec(c.meta, q.data, err, sizeof err) < 0) {
            fprintf(stderr, "searchsync topics: %s %s: %s\n", action, argv[i], err);
            rc = EXIT_RUNTIME;
        } else if (mysql_affected_rows(c.meta) == 0) {
            fprintf(stderr, "searchsync topics: %s %s source %s's topics%s\n", argv[i],
                    add ? "was already one of" : "is not one of",
                    src, rm && in_config(cfg, argv[i]) ? " in the metadata: it is in [kafka] "
                    "topics of the configuration, remove it there" : "");
        } else {
            printf("%s %s source %s's topics%s\n", argv[i], add ? "added to" : "removed from", src,
                   rm && in_config(cfg, argv[i]) ? " in the metadata (it is still in [kafka] "
                   "topics)" : "; a running daemon follows within seconds");
        }
        sbuf_free(&q);
    }
    return command_end(&c, rc);
}
