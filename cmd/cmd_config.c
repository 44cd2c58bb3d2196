/* cmd_config: `searchsync config check --config FILE` validates a file the
 * way the daemon would and exits 0 or 2; `searchsync config reference` prints
 * the Markdown reference of every key (docs/configuration.md embeds it). */
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "config.h"
#include "kafka_conf.h"
#include "source_grants.h"

void usage_config(FILE *out) {
    fprintf(out, "usage: searchsync config check --config FILE\n"
                 "       searchsync config reference\n\n"
                 "check      parse and validate FILE; exit 0 if good, 2 with the file, line\n"
                 "           and key of the first problem otherwise; then, when the\n"
                 "           source is reached, exit 2 naming each privilege its\n"
                 "           [source] user lacks (with the GRANT that adds it)\n"
                 "reference  print every configuration key with its default (Markdown)\n");
}

int cmd_config(int argc, char **argv) {
    if (argc < 2) {
        usage_config(stderr);
        return EXIT_USAGE;
    }
    const char *action = argv[1];
    if (!strcmp(action, "--help") || !strcmp(action, "-h")) {
        usage_config(stdout);
        return EXIT_OK;
    }
    if (!strcmp(action, "reference")) {
        config_print_reference(stdout);
        return EXIT_OK;
    }
    if (strcmp(action, "check") != 0) {
        fprintf(stderr, "searchsync config: unknown action \"%s\"\n", action);
        usage_config(stderr);
        return EXIT_USAGE;
    }
    /* no name: a problem is said as the file's own "searchsync: FILE:LINE: ..." */
    struct command c = {.usage = usage_config, .argc = argc, .argv = argv, .first = 2};
    if (command_opt(&c) < 0) return c.rc; /* no options of its own */
    if (!c.config) {
        fprintf(stderr, "searchsync config check: --config FILE is required\n");
        return EXIT_USAGE;
    }
    int rc = command_begin(&c, 0);
    if (rc >= 0) return rc;
    /* a Kafka source's client settings as librdkafka takes them
     * (client_properties' names and values are librdkafka's to judge) */
    if (config_kafka_source(&c.cfg)) {
        char err[1024];
        rd_kafka_conf_t *kc = kafka_conf_new(&c.cfg, "searchsync-config-check", err, sizeof err);
        if (!kc) {
            fprintf(stderr, "searchsync: %s: %s\n", c.config, err);
            return command_end(&c, EXIT_USAGE);
        }
        rd_kafka_conf_destroy(kc);
    }
    /* the file is good; a binlog source is asked what its user may do */
    if (!config_kafka_source(&c.cfg) && source_grants_check(&c.cfg, stderr) == 1)
        return command_end(&c, EXIT_USAGE);
    command_end(&c, EXIT_OK);
    printf("%s: ok\n", c.config);
    return EXIT_OK;
}
