/* source_grants: `searchsync config check` connects to the source as the
 * [source] user and runs the statements of the daemon that a privilege
 * guards (the binlog's position, on MySQL the binlog's events and XA
 * RECOVER), so that a missing grant is named, with the GRANT that adds it,
 * before `run` meets the refusal. */
#ifndef SS_SOURCE_GRANTS_H
#define SS_SOURCE_GRANTS_H
#include <stdio.h>

#include "config.h"

/* 0 every privilege is there, 1 one or more are missing (each said on out),
 * -1 the source was not reached (a note on out: nothing checked). */
int source_grants_check(const struct ss_config *cfg, FILE *out);
#endif
