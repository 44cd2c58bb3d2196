/* content_hash: FNV-1a over the bytes, then splitmix64's finalizer so every
 * input bit reaches the 31 bits kept (see content_hash.h). Not a
 * cryptographic hash: it guards against drift, not against an adversary who
 * can write to the index anyway. */
#include "content_hash.h"

static uint64_t fnv_mix(const char *p, size_t n, uint64_t h) {
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)p[i];
        h *= 0x100000001b3ULL;
    }
    h ^= (uint64_t)n;
    h ^= h >> 30;
    h *= 0xbf58476d1ce4e5b9ULL;
    h ^= h >> 27;
    h *= 0x94d049bb133111ebULL;
    h ^= h >> 31;
    return h >> 33; /* 31 bits */
}

uint32_t content_hash(const char *body, size_t len) {
    return (uint32_t)fnv_mix(body, len, 0xcbf29ce484222325ULL);
}

uint32_t key_hash(const char *id, size_t len) {
    return (uint32_t)fnv_mix(id, len, 0x84222325cbf29ce4ULL);
}
