/* main: the searchsync binary. Blocks every signal and starts the one thread
 * that handles them (src/signals.c), finds the subcommand and hands it argv;
 * the table below is also what `searchsync --help` prints. A subcommand whose
 * issue has not landed yet says so and exits 2 (usage), so scripts can tell
 * "not available in this build" from a runtime failure. */
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "service_notify.h"
#include "signals.h"

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "dev"
#endif

typedef int (*command_fn)(int argc, char **argv);

struct command_entry {
    const char *name;
    command_fn fn; /* NULL: not built yet */
    const char *args;
    const char *summary;
};

static const struct command_entry commands[] = {
    {"run", cmd_run, "--config FILE", "the daemon: incremental sync of the source into its indices"},
    {"tail", cmd_tail, "--source URI|--config FILE [position] [--tables db.t,..] [--stop-at-end]",
     "print the binlog's row changes as JSON lines"},
    {"kafka-tail", cmd_kafka_tail, "--config FILE [--from-beginning] [--max N] [--timeout-ms T]",
     "print a Kafka source's change messages (canal, Debezium, Maxwell) as tail's JSON lines"},
    {"topics", cmd_topics, "add|remove|list --config FILE [TOPIC...]",
     "the Kafka topics a source reads besides [kafka] topics, changed at run time"},
    {"reindex", cmd_reindex, "--config FILE INDEX [--buckets N] [--by-mod] [--no-wait] | --reset | --delete-all",
     "full rebuild of an index into a new version behind its alias"},
    {"resync", cmd_resync, "--config FILE INDEX --ids ID,..", "rebuild just the given documents"},
    {"delayed-run", cmd_delayed, "--config FILE [--index ALIAS] [--dry-run]",
     "one delayed-refresh pass over the change snapshots (for cron)"},
    {"check", cmd_check, "--config FILE INDEX [--since DUR] [--repair] [--json]",
     "compare documents with MySQL; repair drift"},
    {"replay", cmd_replay, "--config FILE [--index ALIAS] [--since DUR | --today]",
     "the daily replay: documents changed in the window rebuilt, compared, rewritten"},
    {"mapping", cmd_mapping, "import|export|body --config FILE [PATH|ALIAS]",
     "declarative mapping file in and out"},
    {"status", cmd_status, "--config FILE", "checkpoint and lag, indices, jobs, dead letters"},
    {"rebalance", cmd_rebalance, "--config FILE",
     "spread a cluster's reindex jobs over its live nodes now"},
    {"epoch", cmd_epoch, "bump --config FILE [--index ALIAS] [--reset-checkpoint]",
     "raise the version epoch after a failover"},
    {"dead-letters", cmd_dead_letters, "list|replay --config FILE [--index NAME]",
     "changes the engine refused for good: list them, replay after a fix"},
    {"migrate", cmd_migrate, "--config FILE", "create or upgrade the metadata schema"},
    {"config", cmd_config, "check --config FILE | reference",
     "validate a configuration file; print the key reference"},
};
static const size_t ncommands = sizeof commands / sizeof commands[0];

static void usage(FILE *out) {
    fprintf(out,
            "searchsync %s - keeps Elasticsearch / OpenSearch indices in step with MySQL / "
            "MariaDB\n\n"
            "usage: searchsync COMMAND [options]    (searchsync COMMAND --help for details)\n\n"
            "commands:\n",
            PACKAGE_VERSION);
    for (size_t i = 0; i < ncommands; i++)
        fprintf(out, "  %-13s %s%s\n                %s\n", commands[i].name, commands[i].args,
                commands[i].fn ? "" : "  [not in this build yet]", commands[i].summary);
    fprintf(out, "\nexit codes: 0 ok, 1 runtime failure, 2 usage or configuration error, "
                 "3 problem found and left\n");
}

int main(int argc, char **argv) {
    /* before any thread exists: every signal is handled by one thread */
    signals_block_all();
    service_notify_init(); /* systemd's $NOTIFY_SOCKET, read before threads exist */
    if (signals_start() != 0) {
        fprintf(stderr, "searchsync: cannot start the signal thread\n");
        return EXIT_RUNTIME;
    }
    if (argc < 2) {
        usage(stderr);
        return EXIT_USAGE;
    }
    const char *name = argv[1];
    if (!strcmp(name, "--help") || !strcmp(name, "-h") || !strcmp(name, "help")) {
        usage(stdout);
        return EXIT_OK;
    }
    if (!strcmp(name, "--version") || !strcmp(name, "-V") || !strcmp(name, "version")) {
        printf("searchsync %s\n", PACKAGE_VERSION);
        return EXIT_OK;
    }
    for (size_t i = 0; i < ncommands; i++) {
        const struct command_entry *c = &commands[i];
        if (strcmp(name, c->name) != 0) continue;
        if (c->fn) return c->fn(argc - 1, argv + 1);
        for (int a = 2; a < argc; a++) {
            if (!strcmp(argv[a], "--help") || !strcmp(argv[a], "-h")) {
                printf("usage: searchsync %s %s\n  %s\n\nnot in this build yet.\n", c->name,
                       c->args, c->summary);
                return EXIT_OK;
            }
            if (!strcmp(argv[a], "--version")) {
                printf("searchsync %s\n", PACKAGE_VERSION);
                return EXIT_OK;
            }
        }
        fprintf(stderr,
                "searchsync %s: not in this build yet (%s). See the issues list of the "
                "project for its status.\n",
                c->name, c->summary);
        return EXIT_USAGE;
    }
    fprintf(stderr, "searchsync: unknown command \"%s\"; try searchsync --help\n", name);
    return EXIT_USAGE;
}
