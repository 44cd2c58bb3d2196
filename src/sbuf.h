/* sbuf: a growable byte buffer, the one buffer type of searchsync.
 *
 * Bulk bodies, JSON output and binlog packets are all written into sbufs that
 * are reset and reused rather than freed, so the hot paths do not allocate
 * once the buffers have grown to their working size. Allocation failure is
 * fatal (xmalloc): a daemon that cannot allocate cannot keep its promises. */
#ifndef SS_SBUF_H
#define SS_SBUF_H
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

typedef struct sbuf {
    char *data;  /* always NUL-terminated when cap > 0 */
    size_t len;
    size_t cap;
} sbuf;

#define SBUF_INIT {NULL, 0, 0}

void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
/* the allocator's settings for the daemon's buffer reuse: once, in main,
 * before any thread */
void alloc_tune(void);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
/* s without its leading and trailing white space (the end cut in place) */
char *str_trim(char *s);

/* A block arena: many small allocations (8-aligned, in blocks of at least
 * 4000 bytes) freed at once. The owner keeps a `struct arena_block *`,
 * NULL when empty; arena_free frees every block and sets it back to NULL. */
struct arena_block;
void *arena_alloc(struct arena_block **arena, size_t n);
char *arena_strndup(struct arena_block **arena, const char *s, size_t n);
void arena_free(struct arena_block **arena);

void sbuf_init(sbuf *b);
void sbuf_free(sbuf *b);               /* NULL-safe */
void sbuf_grow(sbuf *b, size_t extra); /* ensure room for extra more bytes + NUL */
char *sbuf_detach(sbuf *b);            /* hand the string to the caller */
void sbuf_printf(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void sbuf_vprintf(sbuf *b, const char *fmt, va_list ap);
/* Append everything readable from f; 0, or -1 on a read error (ferror). */
int sbuf_read_fp(sbuf *b, FILE *f);
/* Format into a caller-supplied error buffer (the err/errlen convention of
 * every module); always returns -1 so callers can `return errf(...)`. */
int errf(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static inline void sbuf_reset(sbuf *b) {
    b->len = 0;
    if (b->data) b->data[0] = '\0';
}
static inline void sbuf_add(sbuf *b, const void *p, size_t n) {
    if (b->cap - b->len <= n) sbuf_grow(b, n);
    memcpy(b->data + b->len, p, n);
    b->len += n;
    b->data[b->len] = '\0';
}
static inline void sbuf_addc(sbuf *b, char c) {
    if (b->cap - b->len <= 1) sbuf_grow(b, 1);
    b->data[b->len++] = c;
    b->data[b->len] = '\0';
}
static inline void sbuf_adds(sbuf *b, const char *s) { sbuf_add(b, s, strlen(s)); }

#endif
