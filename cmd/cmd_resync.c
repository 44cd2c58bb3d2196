/* cmd_resync: `searchsync resync --config FILE INDEX --ids ID,..` — given
 * documents rebuilt from MySQL (the node's operation, sync/ops/ops_resync.h,
 * as POST /api/v1/indices/{alias}/resync). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "log.h"
#include "sync/ops/ops_resync.h"

void usage_resync(FILE *out) {
    fprintf(out, "usage: searchsync resync --config FILE INDEX --ids ID[,ID...]\n\n"
                 "Rebuild just these documents of index config INDEX from MySQL: root keys\n"
                 "(42) or child ids (review-7). A document whose row is gone is deleted.\n");
}

int cmd_resync(int argc, char **argv) {
    static const struct option own[] = {{"ids", required_argument, NULL, 'i'},
                                        {NULL, 0, NULL, 0}};
    struct command c = {.name = "resync", .usage = usage_resync, .opts = own, .shortopts = "i:",
                        .argc = argc, .argv = argv};
    const char *ids = NULL;
    int o;
    while ((o = command_opt(&c)) > 0) ids = optarg; /* 'i' */
    if (o < 0) return c.rc;
    if (!c.config || !ids || !*ids || optind != argc - 1) return command_usage(&c);
    const char *alias = argv[optind];
    int rc = command_begin(&c, 0);
    if (rc >= 0) return rc;
    /* the ids, split at commas */
    char **v = NULL;
    size_t n = 0;
    for (const char *s = ids; *s;) {
        const char *cm = strchr(s, ',');
        size_t len = cm ? (size_t)(cm - s) : strlen(s);
        if (len) {
            v = xrealloc(v, (n + 1) * sizeof *v);
            v[n++] = xstrndup(s, len);
        }
        s += len + (cm ? 1 : 0);
    }
    struct resync_result res;
    struct ops_env env = {.cfg = &c.cfg, .by = "resync command"};
    struct ops_err e;
    rc = ops_exit(ops_resync(&env, alias, (const char *const *)v, n, &res, &e));
    if (rc != EXIT_OK) {
        fprintf(stderr, "searchsync resync: %s\n", e.msg);
    } else {
        printf("%s: %llu document(s) rebuilt, %llu deleted, %llu dead letter(s), %llu stale "
               "(an equal or newer version already there)\n",
               alias, res.rebuilt, res.deleted, res.dead_letters, res.stale);
        if (res.forced)
            printf("%s: %llu of the stale ones differed from MySQL (edited in the engine by "
                   "hand?): written again over the engine's version\n", alias, res.forced);
        if (res.left)
            printf("%s: %llu document(s) still differ from MySQL (a change on its way?): run "
                   "searchsync check %s\n", alias, res.left, alias);
        if (res.dead_letters || res.left) rc = EXIT_FOUND;
    }
    for (size_t i = 0; i < n; i++) free(v[i]);
    free(v);
    return command_end(&c, rc);
}
