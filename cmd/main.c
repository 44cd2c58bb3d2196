/* main: the searchsync binary. Blocks every signal and starts the one thread
 * that handles them (src/signals.c), finds the subcommand and hands it argv;
 * the table below, with each subcommand's own synopsis (its usage up to the
 * first empty line), is what `searchsync --help` prints. A subcommand whose
 * issue has not landed yet says so and exits 2 (usage), so scripts can tell
 * "not available in this build" from a runtime failure. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "cred_refused.h"
#include "sbuf.h"
#include "service_notify.h"
#include "signals.h"
#include "sync/node/node.h"
#include "web/http_server.h"

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "dev"
#endif

typedef int (*command_fn)(int argc, char **argv);
typedef void (*usage_fn)(FILE *out);

struct command_entry {
    const char *name;
    command_fn fn;  /* NULL: not built yet */
    usage_fn usage; /* its synopsis is what --help lists for it */
    const char *summary;
};

static const struct command_entry commands[] = {
    {"run", cmd_run, usage_run, "the daemon: incremental sync of the source into its indices"},
    {"tail", cmd_tail, usage_tail, "print the binlog's row changes as JSON lines"},
    {"kafka-tail", cmd_kafka_tail, usage_kafka_tail,
     "print a Kafka source's change messages (canal, Debezium, Maxwell) as tail's JSON lines"},
    {"topics", cmd_topics, usage_topics,
     "the Kafka topics a source reads besides [kafka] topics, changed at run time"},
    {"reindex", cmd_reindex, usage_reindex,
     "full rebuild of an index into a new version behind its alias"},
    {"resync", cmd_resync, usage_resync, "rebuild just the given documents"},
    {"delayed-run", cmd_delayed, usage_delayed,
     "one delayed-refresh pass over the change snapshots (for cron)"},
    {"check", cmd_check, usage_check, "compare documents with MySQL; repair drift"},
    {"replay", cmd_replay, usage_replay,
     "the daily replay: documents changed in the window rebuilt, compared, rewritten"},
    {"mapping", cmd_mapping, usage_mapping,
     "declarative mapping file in and out; generate one from the schema"},
    {"status", cmd_status, usage_status, "checkpoint and lag, indices, jobs, dead letters"},
    {"rebalance", cmd_rebalance, usage_rebalance,
     "spread a cluster's reindex jobs over its live nodes now"},
    {"epoch", cmd_epoch, usage_epoch, "raise the version epoch after a failover"},
    {"dead-letters", cmd_dead_letters, usage_dead_letters,
     "changes the engine refused for good: list them, replay after a fix"},
    {"source", cmd_source, usage_source,
     "the sources of the metadata schema: list them, add one at run time, edit, remove"},
    {"migrate", cmd_migrate, usage_migrate, "create or upgrade the metadata schema"},
    {"config", cmd_config, usage_config, "validate a configuration file; print the key reference"},
};
static const size_t ncommands = sizeof commands / sizeof commands[0];

#define HELP_INDENT "                "

/* One command's synopsis as its own usage prints it (the lines up to the
 * first empty one), each form without its "usage: searchsync NAME " and the
 * continuation lines re-indented under it. */
static void synopsis(FILE *out, const struct command_entry *c) {
    char *text = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&text, &len);
    if (!m) return;
    c->usage(m);
    fclose(m);
    char prefix[64];
    snprintf(prefix, sizeof prefix, "searchsync %s", c->name);
    bool first = true;
    for (char *line = text, *next; line && *line; line = next) {
        next = strchr(line, '\n');
        if (next) *next++ = '\0';
        if (!*line) break; /* the synopsis ends at the first empty line */
        char *s = line;
        if (!strncmp(s, "usage:", 6)) s += 6;
        while (*s == ' ') s++;
        bool form = !strncmp(s, prefix, strlen(prefix)) &&
                    (s[strlen(prefix)] == ' ' || s[strlen(prefix)] == '\0');
        if (form) {
            s += strlen(prefix);
            while (*s == ' ') s++;
            if (first) fprintf(out, "  %-13s %s\n", c->name, s);
            else fprintf(out, HELP_INDENT "%s\n", s);
        } else {
            fprintf(out, HELP_INDENT "  %s\n", s);
        }
        first = false;
    }
    free(text);
}

static void usage(FILE *out) {
    fprintf(out,
            "searchsync %s - keeps Elasticsearch / OpenSearch indices in step with MySQL / "
            "MariaDB\n\n"
            "usage: searchsync COMMAND [options]    (searchsync COMMAND --help for details)\n\n"
            "commands:\n",
            PACKAGE_VERSION);
    for (size_t i = 0; i < ncommands; i++) {
        synopsis(out, &commands[i]);
        fprintf(out, HELP_INDENT "%s%s\n", commands[i].fn ? "" : "[not in this build yet] ",
                commands[i].summary);
    }
    fprintf(out, "\nexit codes: 0 ok, 1 runtime failure, 2 usage or configuration error, "
                 "3 problem found and left\n");
}

int main(int argc, char **argv) {
    /* before any thread exists: every signal is handled by one thread */
    alloc_tune();
    signals_block_all();
    service_notify_init(); /* systemd's $NOTIFY_SOCKET, read before threads exist */
    /* the admin server (web/) for `run`'s node: the core knows it only by
     * these operations (sync/node/node.h) */
    node_admin_register(&http_server_node_ops);
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
        if (c->fn) return cred_refused_exit(c->fn(argc - 1, argv + 1));
        for (int a = 2; a < argc; a++) {
            if (!strcmp(argv[a], "--help") || !strcmp(argv[a], "-h")) {
                c->usage(stdout);
                printf("\nnot in this build yet.\n");
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
