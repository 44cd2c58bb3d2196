/* strset: a set of byte strings (open addressing, FNV-1a, power-of-two table).
 *
 * Owns: deduplication of keys and values on hot paths (the router's join
 * values, the daemon's per-transaction document ids). Strings are copied and
 * NUL-terminated; they may contain any byte except NUL. Iterate with
 * `for (i = 0; i < s.cap; i++) if (s.slot[i]) ...`. Zero-initialised = empty. */
#ifndef SS_STRSET_H
#define SS_STRSET_H
#include <stdbool.h>
#include <stddef.h>

struct strset {
    char **slot;
    size_t cap, n;
};

/* Add a copy of v[0..n): true if it was not there yet. */
bool strset_add(struct strset *s, const char *v, size_t n);
bool strset_has(const struct strset *s, const char *v, size_t n);
void strset_clear(struct strset *s); /* frees everything; s is empty again */

#endif
