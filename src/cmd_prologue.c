/* cmd_prologue: what every `--config FILE` subcommand does first (see
 * command_prologue in commands.h): options, the configuration, the log. */
#include <getopt.h>
#include <string.h>

#include "commands.h"
#include "log.h"

int command_prologue(const char *name, int argc, char **argv, void (*usage)(FILE *out),
                     struct ss_config *cfg) {
    static const struct option opts[] = {{"config", required_argument, NULL, 'c'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    const char *path = NULL;
    int o;
    optind = 1;
    while ((o = getopt_long(argc, argv, "c:h", opts, NULL)) != -1) {
        if (o == 'c') path = optarg;
        else if (o == 'h') return usage(stdout), EXIT_OK;
        else return usage(stderr), EXIT_USAGE;
    }
    if (!path || optind != argc) return usage(stderr), EXIT_USAGE;
    char err[1024];
    if (config_load(cfg, path, err, sizeof err) < 0) {
        fprintf(stderr, "searchsync %s: %s\n", name, err);
        config_free(cfg);
        return EXIT_USAGE;
    }
    log_set_level(log_parse_level(cfg->log.level));
    log_set_format(!strcmp(cfg->log.format, "json"));
    if (log_set_target(cfg->log.file, err, sizeof err) < 0) {
        fprintf(stderr, "searchsync %s: %s\n", name, err);
        config_free(cfg);
        return EXIT_USAGE;
    }
    return -1;
}
