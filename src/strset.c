/* strset: see strset.h. */
#include "strset.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sbuf.h"

static uint64_t fnv(const char *s, size_t n) {
    uint64_t h = 14695981039346656037ull;
    for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    return h;
}

void strset_clear(struct strset *s) {
    for (size_t i = 0; i < s->cap; i++) free(s->slot[i]);
    free(s->slot);
    s->slot = NULL, s->cap = s->n = 0;
}

/* the slot holding v, or the empty slot where it would go */
static size_t find(const struct strset *s, const char *v, size_t n) {
    size_t i = (size_t)fnv(v, n) & (s->cap - 1);
    while (s->slot[i]) {
        if (strlen(s->slot[i]) == n && memcmp(s->slot[i], v, n) == 0) break;
        i = (i + 1) & (s->cap - 1);
    }
    return i;
}

static void grow(struct strset *s) {
    size_t cap = s->cap ? s->cap * 2 : 64;
    struct strset t = {xcalloc(cap, sizeof(char *)), cap, s->n};
    for (size_t i = 0; i < s->cap; i++)
        if (s->slot[i]) t.slot[find(&t, s->slot[i], strlen(s->slot[i]))] = s->slot[i];
    free(s->slot);
    *s = t;
}

bool strset_add(struct strset *s, const char *v, size_t n) {
    if ((s->n + 1) * 2 > s->cap) grow(s);
    size_t i = find(s, v, n);
    if (s->slot[i]) return false;
    s->slot[i] = xstrndup(v, n);
    s->n++;
    return true;
}

bool strset_has(const struct strset *s, const char *v, size_t n) {
    return s->cap && s->slot[find(s, v, n)] != NULL;
}
