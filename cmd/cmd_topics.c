/* cmd_topics: `searchsync topics add|remove|list` — the topics a Kafka source
 * reads besides [kafka] topics / topic_regex, kept in the metadata schema
 * (kafka_topics, migrations 0013 and 0015; the rules and SQL are
 * src/kafka_topics.c, shared with POST/DELETE /api/v1/topics). A running
 * daemon reads the table every 2 s and subscribes to the new set without a
 * restart (sync/sources/kafka_source.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "config.h"
#include "db.h"
#include "kafka_topics.h"
#include "sbuf.h"

void usage_topics(FILE *out) {
    fprintf(out,
            "usage: searchsync topics add    --config FILE [--format F] TOPIC...\n"
            "       searchsync topics remove --config FILE TOPIC...\n"
            "       searchsync topics list   --config FILE\n\n"
            "The Kafka topics source [source] name reads ([source] kind = kafka) besides\n"
            "[kafka] topics and topic_regex: stored in the metadata schema, read by a\n"
            "running `searchsync run` within seconds, without a restart. A topic added\n"
            "is read from the consumer group's committed offsets, else from [source]\n"
            "start (beginning: its oldest message; now: new messages only).\n"
            "--format F: the topic's messages are F (" KAFKA_TOPIC_FORMATS "),\n"
            "whatever [kafka] format says.\n"
            "list prints one line per topic: TOPIC<TAB>config|metadata (a format of its\n"
            "own as a third column), and the regex as REGEX<TAB>config regex.\n");
}

int cmd_topics(int argc, char **argv) {
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        usage_topics(argc < 2 ? stderr : stdout);
        return argc < 2 ? EXIT_USAGE : EXIT_OK;
    }
    const char *action = argv[1];
    bool add = !strcmp(action, "add"), rm = !strcmp(action, "remove"),
         list = !strcmp(action, "list");
    if (!add && !rm && !list) {
        fprintf(stderr, "searchsync topics: unknown action \"%s\" (add, remove or list)\n",
                action);
        usage_topics(stderr);
        return EXIT_USAGE;
    }
    static const struct option own[] = {{"format", required_argument, NULL, 'f'},
                                        {NULL, 0, NULL, 0}};
    struct command c = {.name = "topics", .usage = usage_topics, .opts = own, .argc = argc,
                        .argv = argv, .first = 2};
    const char *format = NULL;
    int o;
    while ((o = command_opt(&c)) > 0)
        if (o == 'f') format = optarg;
    if (o < 0) return c.rc;
    if (!c.config || (list ? optind != argc : optind == argc) || (format && !add))
        return command_usage(&c);
    if (format && kafka_topic_format(format) < 0) {
        fprintf(stderr, "searchsync topics: --format %s: not a message format (" KAFKA_TOPIC_FORMATS
                ")\n", format);
        return EXIT_USAGE;
    }
    for (int i = optind; i < argc; i++)
        if (!kafka_topic_name_ok(argv[i])) {
            fprintf(stderr, "searchsync topics: \"%s\" is not a Kafka topic name ("
                    KAFKA_TOPIC_NAME_RULE ")\n", argv[i]);
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
        size_t n;
        char **v = kafka_config_topics(cfg, &n);
        for (size_t i = 0; i < n; i++) printf("%s\tconfig\n", v[i]);
        kafka_names_free(v, n);
        if (cfg->kafka.topic_regex && *cfg->kafka.topic_regex)
            printf("%s\tconfig regex\n", cfg->kafka.topic_regex);
        struct kafka_topic_rows rows;
        if (kafka_topics_read(c.meta, src, &rows, err, sizeof err) < 0) {
            fprintf(stderr, "searchsync topics: reading the topics of source %s: %s\n", src, err);
            return command_end(&c, EXIT_RUNTIME);
        }
        for (size_t i = 0; i < rows.n; i++)
            printf("%s\tmetadata%s%s\n", rows.v[i].topic, rows.v[i].format ? "\t" : "",
                   rows.v[i].format ? rows.v[i].format : "");
        kafka_topic_rows_free(&rows);
        return command_end(&c, EXIT_OK);
    }
    for (int i = optind; i < argc && rc == EXIT_OK; i++) {
        bool in_cfg = kafka_topic_in_config(cfg, argv[i]);
        int n = add ? kafka_topics_add(c.meta, src, argv[i], format, err, sizeof err)
                    : kafka_topics_remove(c.meta, src, argv[i], err, sizeof err);
        if (n < 0) {
            fprintf(stderr, "searchsync topics: %s %s: %s\n", action, argv[i], err);
            rc = EXIT_RUNTIME;
        } else if (n == 0) {
            fprintf(stderr, "searchsync topics: %s %s source %s's topics%s\n", argv[i],
                    add ? "was already one of" : "is not one of", src,
                    rm && in_cfg ? " in the metadata: it is in [kafka] topics of the "
                                   "configuration, remove it there" : "");
        } else if (n == 2) {
            printf("%s of source %s is read as %s now; a running daemon follows within "
                   "seconds\n", argv[i], src, format ? format : "[kafka] format says");
        } else {
            printf("%s %s source %s's topics%s\n", argv[i], add ? "added to" : "removed from", src,
                   rm && in_cfg ? " in the metadata (it is still in [kafka] topics)"
                                : "; a running daemon follows within seconds");
        }
    }
    return command_end(&c, rc);
}
