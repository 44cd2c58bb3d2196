/* cmd_run: `searchsync run`, the daemon's front end — its options and usage;
 * the daemon itself is sync/node/daemon.c (daemon_run). */
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>

#include "commands.h"
#include "sync/node/daemon.h"

void usage_run(FILE *out) {
    fprintf(out, "usage: searchsync run --config FILE [--no-wait] [--from-current]\n\n"
                 "The daemon: follows the source's binlog and keeps every index of its\n"
                 "mapping (searchsync mapping import) in step. SIGTERM drains delivery and\n"
                 "saves the checkpoint; a restart resumes exactly there.\n\n"
                 "One daemon reads a source at a time: another started on the same source\n"
                 "stands by (with [cluster] zookeeper, by election; without, behind a lock\n"
                 "of the metadata server) and takes over when the reader goes. --no-wait:\n"
                 "exit 1 instead of standing by (without ZooKeeper).\n\n"
                 "--from-current: start at the binlog's end, whatever the checkpoint says\n"
                 "(its file was purged), and rebuild every index, which covers what was\n"
                 "skipped.\n");
}

int cmd_run(int argc, char **argv) {
    static const struct option own[] = {{"no-wait", no_argument, NULL, 'n'},
                                        {"from-current", no_argument, NULL, 'f'},
                                        {NULL, 0, NULL, 0}};
    struct command c = {.name = "run", .usage = usage_run, .opts = own, .argc = argc, .argv = argv};
    bool no_wait = false, from_current = false;
    int o;
    while ((o = command_opt(&c)) > 0) {
        if (o == 'n') no_wait = true;
        else from_current = true;
    }
    if (o < 0) return c.rc;
    if (!c.config || optind != argc) return command_usage(&c);
    int prc = command_begin(&c, COMMAND_LOG_FILE); /* the log: stderr, a file or syslog */
    if (prc >= 0) return prc;
    return command_end(&c, daemon_run(&c.cfg, c.config, no_wait, from_current));
}
