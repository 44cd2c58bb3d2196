/* streams: which producer's delivery stream promises per-document version
 * order (I5, and I3 its worst case: src/invariant.h), so that delivery
 * asserts it at every submit (src/deliver/queue.c, ordered_versions).
 * A stream promises it when one reader submits its changes in the order
 * their versions were read (build pages, resync, delayed runs, repairs,
 * the daily replay, joins; the binlog reader asserts its own order);
 * dead-letter replays resubmit rows by id, whatever their versions, and
 * do not. */
#ifndef SS_SYNC_STREAMS_H
#define SS_SYNC_STREAMS_H
#include <stdbool.h>

/* The stream of that name (as the producer opens it: "resync", "delayed",
 * "repair", "replay", "join", "reindex:ALIAS:V", "dead-letters") submits one
 * document's versions in increasing order. A name not listed promises
 * nothing (no assertion): a new producer says so here. The live reader's
 * stream is its source's (struct source_kind's ordered_versions). */
bool stream_ordered(const char *name);

#endif
