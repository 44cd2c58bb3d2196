/* cmd_epoch: `searchsync epoch bump` — raise the version epoch of a source's
 * index configs (docs/operations.md, "Failover to another server: epochs").
 *
 * Document versions are epoch | binlog file number | position. After a
 * failover to a server whose binlog positions are unrelated (lower) to the
 * old one's, its writes would carry smaller versions than the documents
 * already stored and the engine would refuse them as stale. Bumping the epoch
 * makes every later write outrank everything written before. With
 * --reset-checkpoint the saved position (meaningless on the new server) is
 * dropped too, so the next `run` starts at [source] start. Stop the daemon
 * first; it reads the epoch when it starts. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "config.h"
#include "db.h"
#include "deliver/deliver.h"

void usage_epoch(FILE *out) {
    fprintf(out,
            "usage: searchsync epoch bump --config FILE [--index ALIAS] [--reset-checkpoint]\n\n"
            "Raise the version epoch of this source's index configs (or one of them) so\n"
            "that writes after a failover outrank every document written before. Stop the\n"
            "daemon first. --reset-checkpoint also forgets the saved binlog position, so\n"
            "the next run starts at [source] start (now or beginning) on the new server.\n");
}

int cmd_epoch(int argc, char **argv) {
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        usage_epoch(argc < 2 ? stderr : stdout);
        return argc < 2 ? EXIT_USAGE : EXIT_OK;
    }
    if (strcmp(argv[1], "bump") != 0) {
        fprintf(stderr, "searchsync epoch: unknown action \"%s\"\n", argv[1]);
        usage_epoch(stderr);
        return EXIT_USAGE;
    }
    static const struct option own[] = {{"index", required_argument, NULL, 'i'},
                                        {"reset-checkpoint", no_argument, NULL, 'r'},
                                        {NULL, 0, NULL, 0}};
    struct command c = {.name = "epoch", .usage = usage_epoch, .opts = own, .shortopts = "i:r",
                        .argc = argc, .argv = argv, .first = 2};
    const char *index = NULL;
    bool reset = false;
    int o;
    while ((o = command_opt(&c)) > 0) {
        if (o == 'i') index = optarg;
        else if (o == 'r') reset = true;
    }
    if (o < 0) return c.rc;
    if (!c.config || optind != argc) return command_usage(&c);
    int rc = command_begin(&c, 0);
    if (rc >= 0) return rc;
    if (command_meta(&c, "") >= 0) return command_end(&c, EXIT_RUNTIME);
    const struct ss_config *cfg = &c.cfg;
    MYSQL *m = c.meta;
    char err[1024];
    rc = EXIT_RUNTIME;
    sbuf q = SBUF_INIT;
    const char *src = cfg->source.name;
    /* refuse before the epoch would overflow its bits */
    sbuf_printf(&q, "SELECT COUNT(*) FROM index_configs WHERE epoch + 1 >= %u AND source = ",
                1u << VERSION_EPOCH_BITS);
    db_quote(m, &q, src, strlen(src));
    char *full = db_scalar(m, q.data, err, sizeof err);
    bool over = full && atoi(full) > 0;
    free(full);
    if (over) {
        snprintf(err, sizeof err, "an index config of source %s is at the last epoch (%u): "
                 "rebuild its indices with a new alias instead", src, (1u << VERSION_EPOCH_BITS) - 1);
        goto fail;
    }
    sbuf_reset(&q);
    sbuf_adds(&q, "UPDATE index_configs SET epoch = epoch + 1 WHERE source = ");
    db_quote(m, &q, src, strlen(src));
    if (index) {
        sbuf_adds(&q, " AND alias = ");
        db_quote(m, &q, index, strlen(index));
    }
    if (mysql_query(m, q.data) != 0) {
        snprintf(err, sizeof err, "%s (%u)", mysql_error(m), mysql_errno(m));
        goto fail;
    }
    if (mysql_affected_rows(m) == 0) {
        snprintf(err, sizeof err, "source %s has no index config%s%s: see searchsync mapping export",
                 src, index ? " named " : "s", index ? index : "");
        rc = EXIT_USAGE;
        goto fail;
    }
    if (reset) {
        sbuf_reset(&q);
        sbuf_adds(&q, "DELETE FROM offsets WHERE source = ");
        db_quote(m, &q, src, strlen(src));
        if (db_exec(m, q.data, err, sizeof err) < 0) goto fail;
    }
    sbuf_reset(&q);
    sbuf_adds(&q, "SELECT alias, epoch FROM index_configs WHERE source = ");
    db_quote(m, &q, src, strlen(src));
    sbuf_adds(&q, " ORDER BY alias");
    MYSQL_RES *res = db_query(m, q.data, q.len, err, sizeof err);
    MYSQL_ROW row;
    while (res && (row = mysql_fetch_row(res))) printf("%s\tepoch %s\n", row[0], row[1]);
    if (res) mysql_free_result(res);
    if (reset) printf("checkpoint of source %s reset: the next run starts at [source] start = %s\n",
                      src, cfg->source.start);
    rc = EXIT_OK;
    goto out;
fail:
    fprintf(stderr, "searchsync epoch: %s\n", err);
out:
    sbuf_free(&q);
    return command_end(&c, rc);
}
