/* cmd_config: `searchsync config check --config FILE` validates a file the
 * way the daemon would and exits 0 or 2; `searchsync config reference` prints
 * the Markdown reference of every key (docs/configuration.md embeds it). */
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "config.h"

void usage_config(FILE *out) {
    fprintf(out, "usage: searchsync config check --config FILE\n"
                 "       searchsync config reference\n\n"
                 "check      parse and validate FILE; exit 0 if good, 2 with the file, line\n"
                 "           and key of the first problem otherwise\n"
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
    command_end(&c, EXIT_OK);
    printf("%s: ok\n", c.config);
    return EXIT_OK;
}
