/* cmd_rebalance: `searchsync rebalance` — an operator's rebalance of a
 * ZooKeeper cluster's reindex jobs, run from the command line as any node's
 * would be (the node's operation, sync/ops/ops_assign.h, as POST
 * /api/v1/rebalance): it takes the cluster's rebalance lock,
 * asks every live node of the source to stop its jobs at their cursors,
 * splits the unfinished jobs over the nodes that answered, and prints which
 * node got which jobs. The nodes pick them up within a fraction of a
 * second. Needs [cluster] zookeeper. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "config.h"
#include "signals.h"
#include "sync/ops/ops_assign.h"

void usage_rebalance(FILE *out) {
    fprintf(out,
            "usage: searchsync rebalance --config FILE\n\n"
            "Spread the unfinished jobs of this source's running reindexes over the live\n"
            "nodes of its ZooKeeper cluster ([cluster] zookeeper): each node stops its jobs\n"
            "at their saved cursors, the jobs are split evenly, and each node resumes the\n"
            "ones it got. The daemons do this by themselves when a node joins or leaves or\n"
            "a reindex is queued; this command is for an operator who wants it now.\n"
            "Prints the assignment as JSON ({\"node\": [job ids]}).\n");
}

static volatile sig_atomic_t stop_requested;

int cmd_rebalance(int argc, char **argv) {
    struct command c = {.name = "rebalance", .usage = usage_rebalance, .argc = argc,
                        .argv = argv, .first = 1};
    int o;
    while ((o = command_opt(&c)) > 0) {}
    if (o < 0) return c.rc;
    if (!c.config || optind != argc) return command_usage(&c);
    int rc = command_begin(&c, 0);
    if (rc >= 0) return rc;
    const struct ss_config *cfg = &c.cfg;
    if (!cfg->cluster.zookeeper || !cfg->cluster.zookeeper[0]) {
        fprintf(stderr, "searchsync rebalance: %s has no [cluster] zookeeper: a standalone "
                "daemon runs every job itself, there is nothing to rebalance\n", c.config);
        return command_end(&c, EXIT_USAGE);
    }
    if (command_meta(&c, "") >= 0) return command_end(&c, EXIT_RUNTIME);
    signals_on_stop(&stop_requested, NULL);
    char me[300], host[200] = "host";
    gethostname(host, sizeof host - 1);
    snprintf(me, sizeof me, "cli-%s-%ld", host, (long)getpid());
    struct ops_env env = {.cfg = cfg, .by = "rebalance command"};
    struct ops_assign_req rq = {.me = me, .connect_ms = 10000, .stop = &stop_requested};
    sbuf report = SBUF_INIT;
    struct ops_err e;
    if (ops_assign(&env, &rq, &report, &e) == OPS_OK) {
        printf("%s\n", report.data ? report.data : "{}");
        rc = EXIT_OK;
    } else {
        fprintf(stderr, "searchsync rebalance: %s\n", e.msg);
        rc = EXIT_RUNTIME;
    }
    sbuf_free(&report);
    return command_end(&c, rc);
}
