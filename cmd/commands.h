/* commands: the subcommands of the searchsync binary (docs/design.md, "Commands").
 * Each takes the arguments after its own name (argv[0] is the command name)
 * and returns the process exit code: 0 ok, 1 runtime failure, 2 usage or
 * configuration error, 3 a problem found and left. */
#ifndef SS_COMMANDS_H
#define SS_COMMANDS_H

#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include <mysql.h>

#include "config.h"
#include "exit_codes.h"


/* The start every subcommand shares (cmd/cmd_prologue.c): --config FILE and
 * --help beside the subcommand's own options, the configuration loaded, the
 * log set from it, and the metadata schema connected and migrated where the
 * subcommand needs it. A subcommand reads like this:
 *
 *     static const struct option own[] = {{"json", no_argument, NULL, 'j'}, {0}};
 *     struct command c = {.name = "status", .usage = status_usage, .opts = own,
 *                         .shortopts = "j", .argc = argc, .argv = argv};
 *     int o, rc;
 *     while ((o = command_opt(&c)) > 0)   // its own options, one at a time
 *         if (o == 'j') json = true;
 *     if (o < 0) return c.rc;              // --help (0) or a bad option (2), usage said
 *     if (!c.config || optind != argc) return command_usage(&c);
 *     if ((rc = command_begin(&c, 0)) >= 0) return rc;   // config and log
 *     if ((rc = command_meta(&c, "metadata schema: ")) >= 0) return command_end(&c, rc);
 *     ... c.cfg, c.meta ...
 *     return command_end(&c, rc);
 *
 * Messages are "searchsync NAME: ..." (name NULL: "searchsync: ..."). */
#define COMMAND_MAX_OPTS 24
struct command {
    const char *name;
    void (*usage)(FILE *out);
    const struct option *opts; /* the subcommand's own long options, {0}-ended; NULL: none */
    const char *shortopts;     /* their short letters, getopt style ("j", "i:l:"); NULL: none */
    int argc;
    char **argv;
    int first;                 /* argv index the options start at (0: 1; 2 after an action) */
    bool own_errors;           /* a bad option said as "unknown or incomplete option" */
    /* filled in */
    const char *config;        /* --config FILE; NULL: not given */
    int rc;                    /* the exit code once command_opt returned -1 */
    struct ss_config cfg;      /* loaded by command_begin */
    MYSQL *meta;               /* connected by command_meta; closed by command_end */
    /* private */
    bool parsing, loaded;
    struct option all[COMMAND_MAX_OPTS];
    char shorts[64];
};

/* The next of the subcommand's own options (its getopt value, optarg set),
 * 0 when the options end (optind at the first argument left), or -1 with
 * c->rc the exit code: --help printed the usage (0), or a bad or incomplete
 * option was said with the usage on stderr (2). --config is taken here. */
int command_opt(struct command *c);
/* The usage on stderr; EXIT_USAGE. */
int command_usage(const struct command *c);
/* Load c->config into c->cfg and apply its [log] level and format; with
 * COMMAND_LOG_FILE also its [log] file (the daemon's). -1 to go on (end with
 * command_end), or the exit code with the problem said and cfg freed. */
enum { COMMAND_LOG_FILE = 1 };
int command_begin(struct command *c, unsigned flags);
/* Connect c->meta to the metadata schema, created or migrated to this
 * binary's version (metadb_open). -1 on success, else EXIT_RUNTIME with
 * "searchsync NAME: WHAT<the reason>" said. */
int command_meta(struct command *c, const char *what);
/* Close c->meta, free c->cfg, end the MySQL library; returns rc. */
int command_end(struct command *c, int rc);

int cmd_config(int argc, char **argv);
int cmd_migrate(int argc, char **argv);
int cmd_tail(int argc, char **argv);
int cmd_kafka_tail(int argc, char **argv);
int cmd_topics(int argc, char **argv);
int cmd_source(int argc, char **argv);
int cmd_mapping(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_replay(int argc, char **argv);
int cmd_dead_letters(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_epoch(int argc, char **argv);
int cmd_rebalance(int argc, char **argv);
int cmd_status(int argc, char **argv);
int cmd_reindex(int argc, char **argv);
int cmd_resync(int argc, char **argv);
int cmd_delayed(int argc, char **argv);

/* Each subcommand's usage (what `searchsync NAME --help` prints): its
 * synopsis, the lines up to the first empty one, is also what the top-level
 * `searchsync --help` lists for it (cmd/main.c), so the two cannot differ. */
void usage_config(FILE *out);
void usage_migrate(FILE *out);
void usage_tail(FILE *out);
void usage_kafka_tail(FILE *out);
void usage_topics(FILE *out);
void usage_source(FILE *out);
void usage_mapping(FILE *out);
void usage_check(FILE *out);
void usage_replay(FILE *out);
void usage_dead_letters(FILE *out);
void usage_run(FILE *out);
void usage_epoch(FILE *out);
void usage_rebalance(FILE *out);
void usage_status(FILE *out);
void usage_reindex(FILE *out);
void usage_resync(FILE *out);
void usage_delayed(FILE *out);

#endif
