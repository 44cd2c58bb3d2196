/* cmd_delayed: `searchsync delayed-run --config FILE [--index ALIAS]
 * [--dry-run]` — one delayed pass for cron (sync/delayed/delayed.h): its
 * connections, delivery and mapping, the same a resync sets up, then
 * delayed_run(). Exit 0 all done (or another run holds the lock), 1 a
 * failure (the failed snapshots are tried again by the next run), 2 usage,
 * 3 some snapshots left in error after their last attempt. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "sync/delayed/delayed.h"
#include "deliver/store.h"
#include "log.h"
#include "sync/pipeline/producer.h"
#include "signals.h"

void usage_delayed(FILE *out) {
    fprintf(out,
            "usage: searchsync delayed-run --config FILE [--index ALIAS] [--dry-run]\n"
            "                              [--buckets N] [--page N] [--max-attempts N]\n\n"
            "Refresh the documents that changes of delay-effect tables affect (their change\n"
            "snapshots), then mark the snapshots done. For cron: exit 0 all done (or another\n"
            "run holds the lock), 1 failure (tried again next time), 3 some snapshots left\n"
            "in error after --max-attempts runs ([delayed] max_attempts, 3). With [cluster]\n"
            "zookeeper the run's jobs are handed to the cluster's nodes (exit 0 once handed\n"
            "out; progress: searchsync status).\n"
            "  --index ALIAS  only the snapshots of the delay-effect tables ALIAS lists\n"
            "  --dry-run      print the snapshots, the ids each resolves to and the work\n"
            "  --buckets N    jobs per index config: MOD(key, N) ([delayed] buckets, 4)\n"
            "  --page N       ids per page and per change set ([delayed] page, 5000)\n");
}


/* SIGTERM / SIGINT: the run stops between two pages, resumable */
static volatile sig_atomic_t stop_requested;
static bool stop_asked(void *ud) {
    (void)ud;
    return stop_requested != 0;
}

/* a count given on the command line: -1 (a usage error) unless it is 1 or more */
static int count_arg(const char *s) {
    char *end;
    long v = strtol(s, &end, 10);
    return *s && !*end && v >= 1 && v <= 1000000 ? (int)v : -1;
}

int cmd_delayed(int argc, char **argv) {
    static const struct option own[] = {{"index", required_argument, NULL, 'i'},
                                        {"dry-run", no_argument, NULL, 'n'},
                                        {"buckets", required_argument, NULL, 'b'},
                                        {"page", required_argument, NULL, 'p'},
                                        {"max-attempts", required_argument, NULL, 'm'},
                                        {NULL, 0, NULL, 0}};
    struct command c = {.name = "delayed-run", .usage = usage_delayed, .opts = own,
                        .shortopts = "i:nb:p:m:", .argc = argc, .argv = argv};
    /* 0: not given, then the configuration's ([delayed] buckets, page, max_attempts) */
    struct delayed_opts o = {NULL, false, 0, 0, 0, 0, NULL, NULL, false};
    int opt;
    while ((opt = command_opt(&c)) > 0) {
        if (opt == 'i') o.alias = optarg;
        else if (opt == 'n') o.dry_run = true;
        else if (opt == 'b') o.buckets = count_arg(optarg);
        else if (opt == 'p') o.page = count_arg(optarg);
        else if (opt == 'm') o.max_attempts = count_arg(optarg);
    }
    if (opt < 0) return c.rc;
    if (o.buckets < 0 || o.buckets > 4096 || o.page < 0 || o.page > 100000 ||
        o.max_attempts < 0) {
        fprintf(stderr, "searchsync delayed-run: --buckets (1 to 4096), --page (1 to 100000) "
                        "and --max-attempts (1 or more) take a whole number\n");
        return command_usage(&c);
    }
    if (!c.config || optind != argc) return command_usage(&c);
    /* tests only: hold each page between reading its position and its rows */
    const char *pause = getenv("SEARCHSYNC_TEST_DELAYED_PAUSE_MS");
    if (pause) o.pause_ms = atoi(pause);
    int rc = command_begin(&c, 0);
    if (rc >= 0) return rc;
    o.stopping = stop_asked;
    signals_on_stop(&stop_requested, NULL);
    const struct ss_config *cfg = &c.cfg;
    if (!o.buckets) o.buckets = cfg->delayed.buckets;
    if (!o.page) o.page = cfg->delayed.page;
    if (!o.max_attempts) o.max_attempts = cfg->delayed.max_attempts;
    /* in a cluster the nodes run the jobs (docs/cluster.md) */
    o.cluster = cfg->cluster.zookeeper && cfg->cluster.zookeeper[0];
    unsigned long long *ids = NULL;
    struct delayed_stats st = {0};
    struct producer pr;
    struct producer_opts po = {.engine = !o.dry_run, .flush_each_txn = true, .stream = "delayed"}; /* pages waited for */
    rc = producer_open(&pr, cfg, &po);
    struct pipeline *p = &pr.p;
    char *err = pr.err;
    if (rc != EXIT_OK) goto fail;
    rc = EXIT_RUNTIME;
    ids = delayed_index_ids(p->meta, config_mapping_name(cfg), &pr.m, err, sizeof pr.err);
    if (!ids) goto fail;
    rc = delayed_run(p, ids, &o, &st, stdout, err, sizeof pr.err);
    if (p->d && deliver_drain(p->d, cfg->delivery.drain_timeout_ms) != DELIVER_OK && rc == EXIT_OK) {
        snprintf(err, sizeof pr.err, "delivery did not finish within [delivery] drain_timeout_ms");
        rc = EXIT_RUNTIME;
    }
    if (!o.dry_run && !st.lock_busy) delayed_stats_print(&st, stdout);
    if (st.stopped && rc == EXIT_OK) {
        snprintf(err, sizeof pr.err, "stopped midway by a signal: the next delayed-run takes "
                                     "the run over from its jobs' cursors");
        rc = EXIT_RUNTIME;
        goto fail;
    }
    if (rc == EXIT_OK) goto out;
    if (rc == EXIT_FOUND) {
        fprintf(stderr, "searchsync delayed-run: %llu snapshot(s) left in error after %d "
                        "attempt(s): see change_snapshots.error_text (searchsync status), fix "
                        "the cause, then set them back to 'init'\n",
                st.left_error, o.max_attempts);
        goto out;
    }
fail:
    fprintf(stderr, "searchsync delayed-run: %s\n", err);
out:
    signals_on_stop(NULL, NULL);
    free(ids);
    producer_close(&pr);
    return command_end(&c, rc);
}
