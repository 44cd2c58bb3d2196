/* content_hash: the two numbers every document searchsync writes carries for
 * the consistency check (sync/check/check.h, docs/check.md).
 *
 *   ss_hash      a hash of the document's body exactly as the builder wrote
 *                it (before delivery adds its own fields)
 *   ss_key_hash  a hash of the document's id: the check's buckets are ranges
 *                of it, on both sides, whatever the key's type or order
 *
 * Both are 31-bit non-negative integers, so the engine's `sum` aggregation
 * (a double) adds up to 2^22 of them in a bucket without rounding: equal
 * counts and sums on both sides mean the bucket agrees, and nothing in it is
 * fetched. The index mapping declares them (long, ss_hash not indexed). They
 * stay in _source: excluding them would make the engine re-serialise every
 * _source it stores (1.10 → 1.1, a 30-digit DECIMAL → a double). A partial
 * update written by delivery removes ss_hash (its content changed); the
 * check then compares that document by content.
 */
#ifndef SS_CONTENT_HASH_H
#define SS_CONTENT_HASH_H
#include <stddef.h>
#include <stdint.h>

#define CONTENT_HASH_FIELD "ss_hash"
#define KEY_HASH_FIELD "ss_key_hash"
#define CONTENT_HASH_SPACE 0x80000000u /* both hashes are below this */

uint32_t content_hash(const char *body, size_t len);
uint32_t key_hash(const char *id, size_t len);

#endif
