/* cmd_prologue: what every `--config FILE` subcommand does first (see
 * command_prologue and command_config in commands.h): options, the
 * configuration, the log level. */
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
    return command_config(name, path, cfg) == 0 ? -1 : EXIT_USAGE;
}

int command_config(const char *name, const char *path, struct ss_config *cfg) {
    char err[1024];
    if (config_load(cfg, path, err, sizeof err) < 0) {
        fprintf(stderr, "searchsync %s: %s\n", name, err);
        config_free(cfg);
        return -1;
    }
    log_set_level(log_parse_level(cfg->log.level));
    log_set_format(!strcmp(cfg->log.format, "json"));
    return 0;
}
