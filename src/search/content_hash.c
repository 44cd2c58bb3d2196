/* content_hash: the document hash reads the body eight bytes at a time in
 * four lanes (the multiply-rotate round of XXH64), the id hash is FNV-1a;
 * both end in splitmix64's finalizer so every input bit reaches the 31 bits
 * kept (see content_hash.h). Not cryptographic: they guard against drift,
 * not against an adversary who can write to the index anyway.
 *
 * Written here rather than taken from a library: the body hash runs over
 * every document a load writes, and of the libraries the project links only
 * zlib hashes: crc32 takes 5x this time on a 300-byte document, adler32 2x
 * and spreads short inputs poorly. xxHash itself (Debian's libxxhash) is not
 * one of the project's libraries, and libzstd keeps its copy private. The
 * words are read as little-endian on every host, so an index hashed on one
 * machine checks on another. */
#include "content_hash.h"

#include <string.h>

#define P1 0x9E3779B185EBCA87ULL
#define P2 0xC2B2AE3D27D4EB4FULL
#define P3 0x165667B19E3779F9ULL

static inline uint64_t rotl(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

static inline uint64_t le64(const unsigned char *p) {
    uint64_t w;
    memcpy(&w, p, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    w = __builtin_bswap64(w);
#endif
    return w;
}

static inline uint64_t round64(uint64_t acc, uint64_t w) { return rotl(acc + w * P2, 31) * P1; }

/* splitmix64's finalizer, the top 31 bits */
static uint32_t finish(uint64_t h) {
    h ^= h >> 30;
    h *= 0xbf58476d1ce4e5b9ULL;
    h ^= h >> 27;
    h *= 0x94d049bb133111ebULL;
    h ^= h >> 31;
    return (uint32_t)(h >> 33);
}

uint32_t content_hash(const char *body, size_t len) {
    const unsigned char *p = (const unsigned char *)body;
    size_t n = len;
    uint64_t h;
    if (n >= 32) { /* four independent lanes: the multiplies overlap */
        uint64_t a = P1 + P2, b = P2, c = 0, d = 0 - P1;
        for (; n >= 32; p += 32, n -= 32) {
            a = round64(a, le64(p));
            b = round64(b, le64(p + 8));
            c = round64(c, le64(p + 16));
            d = round64(d, le64(p + 24));
        }
        h = rotl(a, 1) + rotl(b, 7) + rotl(c, 12) + rotl(d, 18);
    } else {
        h = P3;
    }
    h += (uint64_t)len;
    for (; n >= 8; p += 8, n -= 8) h = rotl(h ^ round64(0, le64(p)), 27) * P1 + P3;
    for (; n > 0; p++, n--) h = rotl(h ^ (*p * P3), 11) * P1;
    return finish(h);
}

uint32_t key_hash(const char *id, size_t len) {
    uint64_t h = 0x84222325cbf29ce4ULL;
    for (size_t i = 0; i < len; i++) {
        h ^= (unsigned char)id[i];
        h *= 0x100000001b3ULL;
    }
    return finish(h ^ (uint64_t)len);
}
