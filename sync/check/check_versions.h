/* check_versions: the documents of an index that someone else than
 * searchsync wrote last, found by the engine's versions (the consistency
 * check, sync/check/check_engine.c; docs/check.md).
 *
 * searchsync writes every whole document with version_type=external and
 * the same number in its ss_version field, so the engine's _version of a
 * document it wrote equals that document's ss_version (its own partial
 * updates remove ss_hash: those documents are compared by content anyway).
 * Any other write — a GET, edit and PUT that copies _source, ss_hash
 * included; an _update; a script — counts the engine's _version up and
 * leaves ss_version as it was. ss_hash, copied along, still matches the
 * row, so the bucket sums cannot see such a document; its two versions can.
 *
 * The engine aggregates neither on _version nor filters by it, so the
 * hashed documents are listed by a scroll without their _source (id,
 * _version and the ss_version doc value: some 80 bytes each, a fraction of
 * what building the same documents on the MySQL side costs), and the ids
 * whose versions differ are handed to the check to be compared by content.
 */
#ifndef SS_CHECK_VERSIONS_H
#define SS_CHECK_VERSIONS_H
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "strset.h"

struct search_conn;

/* One hit of the listing ({"_id", "_version", "fields": {"ss_version": [V]}}):
 * true when its _version is not its ss_version (or either is missing):
 * written last by someone else. */
bool check_versions_foreign(const cJSON *hit);

/* List the documents of alias that carry ss_hash (and match filter `only`, a
 * query's JSON, when not NULL: one source's); add to *foreign the ids of
 * those check_versions_foreign says someone else wrote, and count every one
 * listed in *listed. 0, or -1 with err (stop set: given up between pages). */
int check_versions_scan(struct search_conn *k, const char *alias, const char *only,
                        volatile sig_atomic_t *stop,
                        struct strset *foreign, unsigned long long *listed, char *err,
                        size_t errlen);

#endif
