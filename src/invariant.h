/* invariant.h: the sync invariants (docs/design.md, "Invariants"), asserted
 * where they are upheld, in every build (the checks are a compare or two on
 * paths that already take a lock):
 *
 *   I1 no loss: a change leaves its transaction only acknowledged, refused
 *      as older, dead-lettered or replaced by a newer change of its stream
 *   I2 no stale write: a whole document is built from one read that is not
 *      older than the version it is sent with
 *   I3 no resurrection: a delete is never followed, in one queue, by an
 *      older full write of the same document from the same stream
 *   I4 the checkpoint is never ahead of the acknowledgements
 *   I5 version order per document: one stream submits one document's
 *      versions in increasing order (a replay may repeat, never go back)
 *   I6 one source per document: a write's version comes from the binlog of
 *      the source whose document it writes (several sources feeding one
 *      index: sync/pipeline/targets.c)
 *
 * A broken invariant is a bug in searchsync: it is logged with its name and
 * where, and the process aborts before anything past it is saved (a restart
 * resumes from the last checkpoint, which no broken step reached). Tests
 * set ss_invariant_hook to see the failure instead of aborting. */
#ifndef SS_INVARIANT_H
#define SS_INVARIANT_H

/* called instead of abort() when set: (invariant name, message) */
extern void (*ss_invariant_hook)(const char *id, const char *msg);

void ss_invariant_failed(const char *id, const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#define SS_INVARIANT(cond, id, ...)                                                  \
    do {                                                                             \
        if (__builtin_expect(!(cond), 0))                                            \
            ss_invariant_failed(id, __FILE__, __LINE__, __VA_ARGS__);                \
    } while (0)

#endif
