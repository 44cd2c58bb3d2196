/* exit_codes: what every command of the binary exits with, and what the
 * subsystems below the commands return so that a command can exit with it
 * unchanged: 0 ok, 1 runtime failure, 2 usage or configuration error, 3 a
 * problem found and left. */
#ifndef SS_EXIT_CODES_H
#define SS_EXIT_CODES_H

enum { EXIT_OK = 0, EXIT_RUNTIME = 1, EXIT_USAGE = 2, EXIT_FOUND = 3 };

#endif
