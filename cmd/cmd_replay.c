/* cmd_replay: `searchsync replay --config FILE [--index ALIAS] [--since DUR |
 * --today]` — the daily replay: every document whose rows (its
 * root or parent/child table's daily_check_column, or a related table's)
 * changed in the window is rebuilt from MySQL, compared with the engine's
 * copy and rewritten where they differ — the window check of sync/check/check.h
 * with repair, over every index config that has a daily_check_column. Its
 * figures say how many documents it found different: drift that should not
 * exist, shown to the operator. Schedulable as `[check] schedule` with
 * `since` and `repair = true`. Exit 0 (nothing different, or all
 * rewritten), 3 some could not be rewritten, 1 failure, 2 usage. */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sync/check/check.h"
#include "commands.h"

void usage_replay(FILE *out) {
    fprintf(out, "usage: searchsync replay --config FILE [--index ALIAS] [--since DUR | --today]\n\n"
                 "Rebuild every document whose rows changed in the window (default --today: since\n"
                 "00:00 UTC), compare it with the engine's copy and rewrite it where they differ.\n"
                 "Index configs without a daily_check_column are left out (said).\n");
}

static bool has_window(const struct mp_index *ix) {
    for (size_t t = 0; t < ix->ntables; t++)
        if ((t == 0 || ix->tables[t].parent_table) && ix->tables[t].daily_check_column)
            return true;
    return false;
}

int cmd_replay(int argc, char **argv) {
    static const struct option own[] = {{"index", required_argument, NULL, 'i'},
                                        {"since", required_argument, NULL, 's'},
                                        {"today", no_argument, NULL, 't'},
                                        {NULL, 0, NULL, 0}};
    struct command c = {.name = "replay", .usage = usage_replay, .opts = own,
                        .shortopts = "i:s:t", .argc = argc, .argv = argv};
    const char *only = NULL;
    long since = 0;
    int o;
    while ((o = command_opt(&c)) > 0) {
        if (o == 'i') only = optarg;
        else if (o == 's') {
            if ((since = config_parse_duration(optarg)) < 0) {
                fprintf(stderr, "searchsync replay: --since %s: give a duration such as 90s, "
                                "15m, 24h or 7d\n", optarg);
                return EXIT_USAGE;
            }
        } else if (o == 't') since = 0;
    }
    if (o < 0) return c.rc;
    if (!c.config || optind != argc) return command_usage(&c);
    if (since == 0) { /* --today: since midnight, UTC (at least a second) */
        time_t now = time(NULL);
        since = (long)(now % 86400);
        if (since < 1) since = 1;
    }
    int rc = command_begin(&c, 0);
    if (rc >= 0) return rc;
    const struct ss_config *cfg = &c.cfg;
    struct producer pr;
    rc = check_producer_open(&pr, cfg, NULL, "replay");
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    size_t done = 0;
    if (rc == EXIT_OK) {
        for (size_t i = 0; i < pr.m.nindices && rc != EXIT_RUNTIME; i++) {
            const struct mp_index *ix = &pr.m.indices[i];
            if (only && strcmp(only, ix->alias)) continue;
            /* over shard tables: one run for the index config, every shard in
             * it (check_run), not one per shard */
            if (i > 0 && !strcmp(pr.m.indices[i - 1].alias, ix->alias)) continue;
            done++;
            if (!has_window(ix) || !ix->current_version) {
                printf("%s: left out (%s)\n", ix->alias,
                       ix->current_version ? "no daily_check_column on its document tables"
                                           : "no version yet");
                continue;
            }
            struct check_opts co = {.alias = ix->alias, .since_s = since, .repair = true,
                                    .settle_s = cfg->check.settle_s, .trigger = "replay",
                                    .node = host[0] ? host : NULL};
            struct check_result res;
            int crc = check_run(&pr, &co, &res);
            if (crc == EXIT_OK || crc == EXIT_FOUND)
                printf("%s: %llu document(s) changed in the last %ld s rebuilt and compared; "
                       "%zu found different%s; %.1f s\n", ix->alias, res.rows, since,
                       res.nitems, res.nitems ? (res.repaired ? ", rewritten" : ", NOT all rewritten")
                                              : "",
                       res.seconds);
            else
                fprintf(stderr, "searchsync replay: %s: %s\n", ix->alias, pr.err);
            char e[512];
            if (check_record(pr.p.meta, cfg->source.name, config_mapping_name(cfg), &co, &res, crc,
                             crc == EXIT_RUNTIME ? pr.err : NULL, e, sizeof e) < 0)
                fprintf(stderr, "searchsync replay: %s: not recorded in check_runs: %s\n",
                        ix->alias, e);
            check_result_free(&res);
            if (crc == EXIT_RUNTIME) rc = EXIT_RUNTIME;
            else if (crc == EXIT_FOUND && rc == EXIT_OK) rc = EXIT_FOUND;
        }
        if (only && !done) {
            fprintf(stderr, "searchsync replay: source %s has no index config \"%s\"\n",
                    cfg->source.name, only);
            rc = EXIT_USAGE;
        }
    } else {
        fprintf(stderr, "searchsync replay: %s\n", pr.err);
    }
    producer_close(&pr);
    return command_end(&c, rc);
}
