/* cmd_config: `searchsync config check --config FILE` validates a file the
 * way the daemon would and exits 0 or 2; `searchsync config reference` prints
 * the Markdown reference of every key (docs/configuration.md embeds it). */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "config.h"

static void config_usage(FILE *out) {
    fprintf(out, "usage: searchsync config check --config FILE\n"
                 "       searchsync config reference\n\n"
                 "check      parse and validate FILE; exit 0 if good, 2 with the file, line\n"
                 "           and key of the first problem otherwise\n"
                 "reference  print every configuration key with its default (Markdown)\n");
}

int cmd_config(int argc, char **argv) {
    if (argc < 2) {
        config_usage(stderr);
        return EXIT_USAGE;
    }
    const char *action = argv[1];
    if (!strcmp(action, "--help") || !strcmp(action, "-h")) {
        config_usage(stdout);
        return EXIT_OK;
    }
    if (!strcmp(action, "reference")) {
        config_print_reference(stdout);
        return EXIT_OK;
    }
    if (strcmp(action, "check") != 0) {
        fprintf(stderr, "searchsync config: unknown action \"%s\"\n", action);
        config_usage(stderr);
        return EXIT_USAGE;
    }
    static const struct option opts[] = {{"config", required_argument, NULL, 'c'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    const char *path = NULL;
    int o;
    optind = 2;
    while ((o = getopt_long(argc, argv, "c:h", opts, NULL)) != -1) {
        if (o == 'c')
            path = optarg;
        else if (o == 'h') {
            config_usage(stdout);
            return EXIT_OK;
        } else {
            config_usage(stderr);
            return EXIT_USAGE;
        }
    }
    if (!path) {
        fprintf(stderr, "searchsync config check: --config FILE is required\n");
        return EXIT_USAGE;
    }
    struct ss_config cfg;
    char err[CONFIG_ERR_LEN];
    int rc = config_load(&cfg, path, err, sizeof err);
    config_free(&cfg);
    if (rc < 0) {
        fprintf(stderr, "searchsync: %s\n", err);
        return EXIT_USAGE;
    }
    printf("%s: ok\n", path);
    return EXIT_OK;
}
