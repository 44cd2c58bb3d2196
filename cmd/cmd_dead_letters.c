/* cmd_dead_letters: `searchsync dead-letters list|replay` — the operator's
 * side of the dead-letter table (src/deliver/store.c). A change the engine
 * refused for good (a mapping conflict, say) or that a purge dropped waits
 * there with its source, index, id, version, body and error; once the cause
 * is fixed, replay resubmits it with its original version, so anything newer
 * already in the engine still wins. Dead letters belong to the source whose
 * change they hold: list reads any source's (--source), replay only the
 * configuration's own, whose versions they carry (docs/operations.md, "Dead
 * letters of several sources"). Exit 3 when dead letters remain after a
 * replay. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "config.h"
#include "db.h"
#include "deliver/deliver.h"
#include "deliver/store.h"
#include "search/search.h"
#include "sync/ops/ops_replay.h"

void usage_dead_letters(FILE *out) {
    fprintf(out,
            "usage: searchsync dead-letters list   --config FILE [--index NAME] [--limit N]\n"
            "                                      [--source NAME]\n"
            "       searchsync dead-letters replay --config FILE [--index NAME] [--id N]\n\n"
            "list    print the newest dead letters of this source (--source: of another\n"
            "        source of the same metadata schema) as JSON lines\n"
            "replay  resubmit them (all, one index's, or one row) with their original\n"
            "        versions; rows are deleted once the engine acknowledges them, and\n"
            "        a change that fails again comes back as a new row (exit 3); only\n"
            "        this configuration's source's: another's replays from its own\n");
}

/* list: the newest limit dead letters of source (of index, when given) as
 * JSON lines on stdout. EXIT_OK or EXIT_RUNTIME. */
static int list_letters(MYSQL *m, const char *source, const char *index, long limit) {
    char err[1024];
    int rc = EXIT_RUNTIME;
    sbuf lines = SBUF_INIT;
    if (dl_list(m, source, index, (int)limit, &lines, err, sizeof err) < 0) {
        fprintf(stderr, "searchsync dead-letters: %s\n", err);
    } else {
        fwrite(lines.data ? lines.data : "", 1, lines.len, stdout);
        if (!lines.len) /* stderr: stdout stays JSON lines for scripts */
            fprintf(stderr, "searchsync dead-letters: no dead letters for source %s%s%s\n",
                    source, index ? " and index " : "", index ? index : "");
        rc = EXIT_OK;
    }
    sbuf_free(&lines);
    return rc;
}

/* replay: the dead letters of the source (of index, or row id, when given)
 * resubmitted through the node's operation (sync/ops/ops_replay.h, as POST
 * /api/v1/dead-letters/replay), on a delivery of its own. EXIT_OK,
 * EXIT_FOUND when some failed again, EXIT_RUNTIME. */
static int replay_letters(struct ss_config *cfg, MYSQL *m, const char *index,
                          unsigned long long id) {
    char err[1024];
    int rc = EXIT_RUNTIME;
    struct search_opts so;
    deliver_search_opts(&so, cfg);
    struct search_client *client = search_client_new(&so, err, sizeof err);
    struct search_conn *k = client ? search_conn_new(client) : NULL;
    if (!client || search_detect(client, k, err, sizeof err) != 0) {
        fprintf(stderr, "searchsync dead-letters: %s\n", err);
        search_conn_free(k);
        goto out;
    }
    search_conn_free(k);
    struct ops_env env = {.cfg = cfg, .client = client, .meta = m, .by = "dead-letters replay"};
    struct ops_replay_req rq = {index, id};
    struct ops_replay_res res;
    struct ops_err e;
    if (ops_replay(&env, &rq, &res, &e) != OPS_OK) {
        fprintf(stderr, "searchsync dead-letters: %s%s\n", e.st == OPS_FAILED ? "replay: " : "",
                e.msg);
        goto out;
    }
    printf("replayed %ld dead letter(s)%s%s; %ld left\n", res.replayed, index ? " of index " : "",
           index ? index : "", res.left);
    if (res.left > 0) {
        fprintf(stderr,
                "searchsync dead-letters: %ld change(s) failed again; see `searchsync "
                "dead-letters list` for the engine's error, fix the cause, replay again\n",
                res.left);
        rc = EXIT_FOUND;
    } else {
        rc = EXIT_OK;
    }
out:
    search_client_free(client);
    return rc;
}

int cmd_dead_letters(int argc, char **argv) {
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        usage_dead_letters(argc < 2 ? stderr : stdout);
        return argc < 2 ? EXIT_USAGE : EXIT_OK;
    }
    const char *action = argv[1];
    bool replay = !strcmp(action, "replay");
    if (!replay && strcmp(action, "list") != 0) {
        fprintf(stderr, "searchsync dead-letters: unknown action \"%s\"\n", action);
        usage_dead_letters(stderr);
        return EXIT_USAGE;
    }
    static const struct option own[] = {{"index", required_argument, NULL, 'i'},
                                        {"limit", required_argument, NULL, 'l'},
                                        {"id", required_argument, NULL, 'n'},
                                        {"source", required_argument, NULL, 's'},
                                        {NULL, 0, NULL, 0}};
    struct command c = {.name = "dead-letters", .usage = usage_dead_letters, .opts = own,
                        .shortopts = "i:l:n:s:", .argc = argc, .argv = argv, .first = 2};
    const char *index = NULL, *source = NULL;
    long limit = 100;
    unsigned long long id = 0;
    int o;
    while ((o = command_opt(&c)) > 0) {
        char *end = NULL;
        switch (o) {
        case 'i': index = optarg; break;
        case 's': source = optarg; break;
        case 'l':
            limit = strtol(optarg, &end, 10);
            if (*end || limit < 1) {
                fprintf(stderr, "searchsync dead-letters: --limit must be a positive integer\n");
                return EXIT_USAGE;
            }
            break;
        case 'n':
            id = strtoull(optarg, &end, 10);
            if (*end || id == 0) {
                fprintf(stderr, "searchsync dead-letters: --id must be a row id (see list)\n");
                return EXIT_USAGE;
            }
            break;
        }
    }
    if (o < 0) return c.rc;
    if (!c.config || optind != argc) return command_usage(&c);
    int rc = command_begin(&c, 0);
    if (rc >= 0) return rc;
    /* a replay resubmits a change with the version its source's binlog gave
     * it, through this source's delivery, and what fails again is filed
     * under this source: another source's dead letters are its own to replay */
    if (source && replay && strcmp(source, c.cfg.source.name) != 0) {
        fprintf(stderr,
                "searchsync dead-letters: replay takes the dead letters of this configuration's "
                "source (%s) only; replay those of source %s with its configuration "
                "(searchsync dead-letters replay --config <%s's file>) or its daemon's "
                "POST /api/v1/dead-letters/replay\n",
                c.cfg.source.name, source, source);
        return command_end(&c, EXIT_USAGE);
    }
    rc = EXIT_RUNTIME; /* the metadata schema cannot be read (said by command_meta) */
    if (command_meta(&c, "") < 0)
        rc = replay ? replay_letters(&c.cfg, c.meta, index, id)
                    : list_letters(c.meta, source ? source : c.cfg.source.name, index, limit);
    return command_end(&c, rc);
}
