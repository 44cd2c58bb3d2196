/* index_ensure: every index config of a generation has a version in the
 * engine (see index_ensure.c). */
#ifndef SS_SYNC_INDEX_ENSURE_H
#define SS_SYNC_INDEX_ENSURE_H

struct supervisor;
struct mp_index;

/* ix has a version in the engine, or its first build is queued; a live
 * alias the metadata does not know is adopted (ix->current_version set).
 * Supervisor thread (its connections, the engine client's connection sv->k):
 * 0, or -1 with sv->err. */
int index_ensure(struct supervisor *sv, struct mp_index *ix);

#endif
