/* check_diff: where an engine's copy of a document first differs from the
 * document built from MySQL (the consistency check's report, sync/check/check.h).
 *
 * Both are parsed without rounding (json_exact). Objects are compared as
 * sets of members (the engine keeps the order it was sent, but a scripted
 * update may reorder); arrays element by element; numbers by their text,
 * else by value when both are plain doubles (a script re-serialises 12.50
 * as 12.5), never by value past 2^53, where a double would make two
 * different BIGINTs equal. The fields delivery adds (ss_version, ss_hash,
 * ss_key_hash) are ignored at the top level of the engine's copy. */
#ifndef SS_CHECK_DIFF_H
#define SS_CHECK_DIFF_H
#include <stdbool.h>
#include <stddef.h>

#include "sbuf.h"

/* built: the document as the builder wrote it; engine: its _source. true when
 * they differ, with the first differing field path in path ("tags[1].name",
 * "" for the document as a whole, "-" when a text is not JSON). */
bool check_diff(const char *built, size_t blen, const char *engine, size_t elen, sbuf *path);

#endif
