/* cmd_migrate: `searchsync migrate --config FILE` creates the metadata schema
 * or upgrades it to this binary's version (the daemon does the same on start;
 * operators run it by hand before rolling out a new version, see
 * docs/operations.md). Prints the version before and after. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "config.h"
#include "db.h"

static void migrate_usage(FILE *out) {
    fprintf(out, "usage: searchsync migrate --config FILE\n\n"
                 "Create the metadata schema ([metadata] database) or upgrade it to the\n"
                 "newest version this binary knows. Safe to run on several nodes at once.\n");
}

int cmd_migrate(int argc, char **argv) {
    static const struct option opts[] = {{"config", required_argument, NULL, 'c'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    const char *path = NULL;
    int o;
    optind = 1;
    while ((o = getopt_long(argc, argv, "c:h", opts, NULL)) != -1) {
        if (o == 'c')
            path = optarg;
        else if (o == 'h') {
            migrate_usage(stdout);
            return EXIT_OK;
        } else {
            migrate_usage(stderr);
            return EXIT_USAGE;
        }
    }
    if (!path || optind != argc) {
        migrate_usage(stderr);
        return EXIT_USAGE;
    }
    struct ss_config cfg;
    char err[1024];
    if (command_config("migrate", path, &cfg) != 0) return EXIT_USAGE;
    db_params p = db_params_metadata(&cfg);
    MYSQL *m = db_connect(&p, err, sizeof err);
    int rc = EXIT_OK;
    if (!m) {
        fprintf(stderr, "searchsync migrate: %s\n", err);
        rc = EXIT_RUNTIME;
    } else {
        int before = metadb_version(m, cfg.metadata.database);
        if (metadb_migrate(m, cfg.metadata.database, err, sizeof err) < 0) {
            fprintf(stderr, "searchsync migrate: %s\n", err);
            rc = EXIT_RUNTIME;
        } else {
            int after = metadb_version(m, cfg.metadata.database);
            printf("metadata schema %s: version %d -> %d\n", cfg.metadata.database,
                   before < 0 ? 0 : before, after);
        }
    }
    db_close(m);
    config_free(&cfg);
    mysql_library_end();
    return rc;
}
