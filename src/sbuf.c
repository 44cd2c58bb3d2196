/* sbuf: growable buffer, the x* allocation wrappers, the allocator's
 * settings and the block arena (see sbuf.h). */
#include "sbuf.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

static void oom(size_t n) {
    fprintf(stderr, "searchsync: out of memory allocating %zu bytes\n", n);
    abort();
}

void *xmalloc(size_t n) {
    void *p = malloc(n ? n : 1);
    if (!p) oom(n);
    return p;
}

void *xcalloc(size_t n, size_t size) {
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p) oom(n * size);
    return p;
}

void *xrealloc(void *p, size_t n) {
    void *q = realloc(p, n ? n : 1);
    if (!q) oom(n);
    return q;
}

/* Why: a page of a reindex (its rows' JSON, a few hundred KiB) and a bulk
 * body are built, sent and freed several times a second, each in buffers
 * doubled as they grow. glibc gives such blocks back to the kernel at once
 * (mmap above its threshold, the heap trimmed above 128 KiB free), so the
 * next page faults in and zeroes them again: 30,000-60,000 page faults and
 * about a tenth of the daemon's CPU in a 500k-row flat load. Kept below 4 MiB
 * and trimmed only past 16 MiB free, they are reused (3,000 faults); the
 * peak RSS stayed the same (22 MiB) in that load. Larger blocks (a huge
 * document's) still come and go with mmap. */
#define ALLOC_MMAP_THRESHOLD (4 << 20)
#define ALLOC_TRIM_THRESHOLD (16 << 20)

void alloc_tune(void) {
#ifdef __GLIBC__
    mallopt(M_MMAP_THRESHOLD, ALLOC_MMAP_THRESHOLD);
    mallopt(M_TRIM_THRESHOLD, ALLOC_TRIM_THRESHOLD);
#endif
}

char *xstrdup(const char *s) { return xstrndup(s, strlen(s)); }

char *xstrndup(const char *s, size_t n) {
    char *p = xmalloc(n + 1);
    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

char *str_trim(char *s) {
    while (isspace((unsigned char)*s)) s++;
    char *e = s + strlen(s);
    while (e > s && isspace((unsigned char)e[-1])) *--e = '\0';
    return s;
}

struct arena_block {
    struct arena_block *next;
    size_t used, cap;
    char data[];
};

void *arena_alloc(struct arena_block **arena, size_t n) {
    n = (n + 7) & ~(size_t)7;
    struct arena_block *b = *arena;
    if (!b || b->cap - b->used < n) {
        size_t cap = n > 4000 ? n : 4000;
        struct arena_block *nb = xmalloc(sizeof *nb + cap);
        nb->next = b;
        nb->used = 0;
        nb->cap = cap;
        *arena = b = nb;
    }
    void *p = b->data + b->used;
    b->used += n;
    return p;
}

char *arena_strndup(struct arena_block **arena, const char *s, size_t n) {
    char *p = arena_alloc(arena, n + 1);
    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

void arena_free(struct arena_block **arena) {
    struct arena_block *b = *arena;
    while (b) {
        struct arena_block *n = b->next;
        free(b);
        b = n;
    }
    *arena = NULL;
}

void sbuf_init(sbuf *b) { b->data = NULL, b->len = 0, b->cap = 0; }

void sbuf_free(sbuf *b) {
    if (!b) return;
    free(b->data);
    sbuf_init(b);
}

void sbuf_grow(sbuf *b, size_t extra) {
    size_t need = b->len + extra + 1;
    if (need <= b->cap) return;
    size_t cap = b->cap ? b->cap : 64;
    while (cap < need) cap *= 2;
    b->data = xrealloc(b->data, cap);
    b->cap = cap;
    b->data[b->len] = '\0';
}

char *sbuf_detach(sbuf *b) {
    if (!b->data) sbuf_grow(b, 0);
    char *s = b->data;
    sbuf_init(b);
    return s;
}

void sbuf_vprintf(sbuf *b, const char *fmt, va_list ap) {
    va_list ap2;
    va_copy(ap2, ap);
    sbuf_grow(b, 64);
    int n = vsnprintf(b->data + b->len, b->cap - b->len, fmt, ap);
    if (n < 0) {
        va_end(ap2);
        return;
    }
    if ((size_t)n >= b->cap - b->len) {
        sbuf_grow(b, (size_t)n);
        vsnprintf(b->data + b->len, b->cap - b->len, fmt, ap2);
    }
    b->len += (size_t)n;
    va_end(ap2);
}

void sbuf_printf(sbuf *b, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    sbuf_vprintf(b, fmt, ap);
    va_end(ap);
}

int errf(char *err, size_t errlen, const char *fmt, ...) {
    if (!err || !errlen) return -1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return -1;
}

int sbuf_read_fp(sbuf *b, FILE *f) {
    char chunk[65536];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) sbuf_add(b, chunk, n);
    return ferror(f) ? -1 : 0;
}
