/* cmd_migrate: `searchsync migrate --config FILE` creates the metadata schema
 * or upgrades it to this binary's version (the daemon does the same on start;
 * operators run it by hand before rolling out a new version, see
 * docs/operations.md). Prints the version before and after. */
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "config.h"
#include "db.h"

void usage_migrate(FILE *out) {
    fprintf(out, "usage: searchsync migrate --config FILE\n\n"
                 "Create the metadata schema ([metadata] database) or upgrade it to the\n"
                 "newest version this binary knows. Safe to run on several nodes at once.\n");
}

int cmd_migrate(int argc, char **argv) {
    struct command c = {.name = "migrate", .usage = usage_migrate, .argc = argc, .argv = argv};
    if (command_opt(&c) < 0) return c.rc; /* no options of its own */
    if (!c.config || optind != argc) return command_usage(&c);
    int rc = command_begin(&c, 0);
    if (rc >= 0) return rc;
    /* not command_meta: the version before the migration is said */
    char err[1024];
    db_params p = db_params_metadata(&c.cfg);
    c.meta = db_connect(&p, err, sizeof err);
    rc = EXIT_OK;
    if (!c.meta) {
        fprintf(stderr, "searchsync migrate: %s\n", err);
        rc = EXIT_RUNTIME;
    } else {
        const char *db = c.cfg.metadata.database;
        int before = metadb_version(c.meta, db);
        if (metadb_migrate(c.meta, db, err, sizeof err) < 0) {
            fprintf(stderr, "searchsync migrate: %s\n", err);
            rc = EXIT_RUNTIME;
        } else {
            int after = metadb_version(c.meta, db);
            printf("metadata schema %s: version %d -> %d\n", db, before < 0 ? 0 : before, after);
        }
    }
    return command_end(&c, rc);
}
