/* index_stop: index configs stopped when the source no longer fits their
 * mapping (see index_stop.c). */
#ifndef SS_SYNC_INDEX_STOP_H
#define SS_SYNC_INDEX_STOP_H
#include <stddef.h>

struct supervisor;

/* Validate every index config not stopped yet against the source's schema
 * now; stop each one that does not fit (stopped_reason, the log, the
 * sync_log), why saying after what ("after ALTER TABLE ... read from the
 * binlog at F:P"). *stopped: how many were. 0, or -1 with sv->err (a
 * server failed: nothing decided). Supervisor thread. */
int index_stop_check(struct supervisor *sv, const char *why, size_t *stopped);

/* The builds of index configs stopped before the engine's client existed
 * (at start), cancelled now that it does (supervisor_prepare); the list is
 * emptied either way. */
void index_stop_cancel_pending(struct supervisor *sv);

#endif
