/* store: where delivery keeps what must survive a restart.
 *
 *   checkpoint file   atomic (write temp, fsync, rename, fsync dir) and
 *                     checksummed: a torn or corrupt file stops start-up with
 *                     a clear error instead of resuming from a wrong place
 *   offsets table     one row per source (sql/migrations/0002_delivery.sql),
 *                     a single-row upsert
 *   dead_letters      the dead-letter table: a deliver_dead_letter_fn that
 *                     inserts rows, list, and replay through a deliver
 *
 * The MySQL functions take a connection from db.h; the dead-letter sink owns
 * its own connection (helpers call it from several threads). */
#ifndef SS_STORE_H
#define SS_STORE_H
#include <stddef.h>
#include <stdint.h>

#include "db.h"
#include "deliver/deliver.h"

/* 0 saved; -1 with err */
int checkpoint_file_save(const char *path, const char *position, uint64_t seq, char *err,
                         size_t errlen);
/* 0 loaded, 1 no file (start fresh), -1 corrupt/unreadable (err says which) */
int checkpoint_file_load(const char *path, char *pos, size_t poslen, uint64_t *seq, char *err,
                         size_t errlen);
/* a deliver_checkpoint_fn: ud is the path (const char *) */
int checkpoint_file_cb(void *ud, const char *position, uint64_t seq);

int offsets_save(MYSQL *m, const char *source, const char *position, uint64_t seq, char *err,
                 size_t errlen);
/* 0 found, 1 none, -1 error */
/* The same, fenced (the cluster issue): the save carries the saver's
 * fencing token and lands only while no larger token is recorded for the
 * source. 0 saved, 1 fenced out (another reader took the source over: its
 * token is in *other), -1 error. fence 0: unfenced (offsets_save). */
int offsets_save_fenced(MYSQL *m, const char *source, const char *position, uint64_t seq,
                        uint64_t fence, uint64_t *other, char *err, size_t errlen);
/* A new reader raises the source's recorded token to its own, so a reader
 * before it can no longer save. 0, 1 a larger token is already recorded
 * (*other), -1 error. */
int offsets_claim(MYSQL *m, const char *source, uint64_t fence, uint64_t *other, char *err,
                  size_t errlen);
int offsets_load(MYSQL *m, const char *source, char *pos, size_t poslen, char *err,
                 size_t errlen);

struct dl_store;
/* Opens its own connection with p (database must be the metadata schema). */
struct dl_store *dl_store_new(const db_params *p, const char *source, char *err, size_t errlen);
void dl_store_free(struct dl_store *s);
/* The name the source's index configs are recorded under in the metadata
 * ([source] mapping: several sources share one; by default the source's
 * name), which dl_store_put_if_version looks versions up by. */
void dl_store_set_mapping(struct dl_store *s, const char *mapping);
/* a deliver_dead_letter_fn: ud is the struct dl_store */
int dl_store_put(void *ud, const struct dead_letter *dl);
/* dl_store_put for a write sent to a version's index by name (a dual
 * write): written only while that index is still one of the versions of
 * the store's mapping (index_versions.physical_name). 1, writing nothing, when it is
 * not: its build was cancelled or failed and its index deleted while the
 * write was in flight, and the write, landing after the delete, created an
 * index of that name with the engine's guessed mapping, which refused it:
 * nothing to repair (the leftover index is deleted by the daemon). */
int dl_store_put_if_version(void *ud, const struct dead_letter *dl);
/* a deliver_written_fn: deletes the dead letters of that document older than
 * version (the store remembers which documents have rows: loaded at
 * dl_store_new, added by dl_store_put), so a later replay cannot resurrect a
 * document deleted since, nor write anything a newer write superseded. */
void dl_store_written(void *ud, const char *index, const char *doc_id, uint64_t version);
long dl_store_superseded(struct dl_store *s); /* rows deleted so far */
/* A message a source could not read (a Kafka message that does not decode):
 * one row with index_name "kafka:<where>" (the topic), doc_id "<partition>:
 * <offset>", op "message", the reason as its error and the message's bytes as
 * its body (as they are when they are UTF-8, else "base64:" and their
 * base64). Replays skip such rows: they hold no change to deliver. 0 or -1
 * (err). */
int dl_store_put_message(struct dl_store *s, const char *where, const char *at,
                         const char *why, const char *raw, size_t len, char *err,
                         size_t errlen);

/* Print the dead letters of source (newest first) as JSON lines, each
 * naming its source; index may be NULL (all). */
int dl_list(MYSQL *m, const char *source, const char *index, int limit, sbuf *out, char *err,
            size_t errlen);
/* Resubmit the dead letters of index (NULL = all; id > 0 = that one row)
 * through d, wait until acknowledged, then delete the rows. Changes that fail
 * again come back as new rows. Returns the number replayed, -1 on error.
 * d must not be fed by another producer meanwhile (its transactions are
 * per-instance): use a deliver of its own. */
long dl_replay(MYSQL *m, const char *source, const char *index, uint64_t id,
               struct deliver *d, int timeout_ms, char *err, size_t errlen);

#endif
