/* reload: what SIGHUP and SIGUSR1 do, run on the supervisor's thread (see
 * reload.c). */
#ifndef SS_RELOAD_H
#define SS_RELOAD_H

struct supervisor;

/* re-read the configuration file (SIGHUP) / dump the state in the log
 * (SIGUSR1) */
void reload_config(struct supervisor *sv);
void reload_dump(struct supervisor *sv);

#endif
