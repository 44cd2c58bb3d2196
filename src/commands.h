/* commands: the subcommands of the searchsync binary (DESIGN.md §4.1).
 * Each takes the arguments after its own name (argv[0] is the command name)
 * and returns the process exit code: 0 ok, 1 runtime failure, 2 usage or
 * configuration error, 3 a problem found and left. */
#ifndef SS_COMMANDS_H
#define SS_COMMANDS_H

#include <stddef.h>
#include <stdio.h>

#include "config.h"

enum { EXIT_OK = 0, EXIT_RUNTIME = 1, EXIT_USAGE = 2, EXIT_FOUND = 3 };

/* The prologue of a subcommand that takes `--config FILE` and `--help` and
 * nothing else: parses them, then command_config. Returns -1 to go on (cfg
 * loaded: config_free it), or the exit code to return at once (usage
 * printed, or the configuration's error said on stderr and cfg freed). */
int command_prologue(const char *name, int argc, char **argv, void (*usage)(FILE *out),
                     struct ss_config *cfg);
/* Load the configuration file into *cfg and apply its [log] level (the log
 * file is the daemon's: `run` opens it). 0, or -1 with the reason said on
 * stderr as "searchsync NAME: ..." and cfg freed (exit 2). */
int command_config(const char *name, const char *path, struct ss_config *cfg);

int cmd_config(int argc, char **argv);
int cmd_migrate(int argc, char **argv);
int cmd_tail(int argc, char **argv);
int cmd_mapping(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_replay(int argc, char **argv);
int cmd_dead_letters(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_epoch(int argc, char **argv);
int cmd_status(int argc, char **argv);
int cmd_reindex(int argc, char **argv);
int cmd_resync(int argc, char **argv);
int cmd_delayed(int argc, char **argv);

#endif
