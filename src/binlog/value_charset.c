/* value_charset: a column's text in its own charset → UTF-8, for the JSON
 * form (value.c) and the text form (value_text.c) of a value.
 *
 * MySQL's latin1 is converted here (it is Windows-1252); any other charset
 * that is not UTF-8 goes through iconv, one converter per charset cached in
 * the value context (bl_valctx, which this file creates and frees). A byte
 * iconv cannot convert becomes U+FFFD and the conversion goes on. */
#include <errno.h>
#include <iconv.h>
#include <stdlib.h>

#include "binlog/value_int.h"

/* MySQL's latin1 is Windows-1252 (0x81, 0x8D, 0x8F, 0x90, 0x9D map to C1 controls) */
static const uint16_t cp1252_80[32] = {
    0x20AC, 0x0081, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021, 0x02C6, 0x2030, 0x0160,
    0x2039, 0x0152, 0x008D, 0x017D, 0x008F, 0x0090, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022,
    0x2013, 0x2014, 0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0x009D, 0x017E, 0x0178};

void bl_latin1_utf8(sbuf *out, const uint8_t *p, size_t n) {
    char *o = reserve(out, 3 * n), *st = o;
    for (size_t i = 0; i < n; i++) {
        unsigned c = p[i];
        if (c < 0x80) {
            *o++ = (char)c;
            continue;
        }
        if (c < 0xA0) c = cp1252_80[c - 0x80];
        if (c < 0x800) {
            *o++ = (char)(0xC0 | c >> 6);
            *o++ = (char)(0x80 | (c & 63));
        } else {
            *o++ = (char)(0xE0 | c >> 12);
            *o++ = (char)(0x80 | ((c >> 6) & 63));
            *o++ = (char)(0x80 | (c & 63));
        }
    }
    commit_len(out, (size_t)(o - st));
}

struct iconv_entry {
    const char *name;
    iconv_t cd;
};
struct iconv_cache {
    struct iconv_entry e[16];
    int n;
};

static iconv_t get_iconv(bl_valctx *v, const char *name) {
    struct iconv_cache *c = v->iconv_cache;
    if (!c) v->iconv_cache = c = xcalloc(1, sizeof *c);
    for (int i = 0; i < c->n; i++)
        if (c->e[i].name == name || !strcmp(c->e[i].name, name)) return c->e[i].cd;
    iconv_t cd = iconv_open("UTF-8", name);
    if (c->n < 16) {
        c->e[c->n].name = name;
        c->e[c->n].cd = cd;
        c->n++;
    }
    return cd;
}

bool bl_iconv_utf8(bl_valctx *v, sbuf *out, const char *cs_name, const uint8_t *p, size_t n) {
    iconv_t cd = cs_name ? get_iconv(v, cs_name) : (iconv_t)-1;
    if (cd == (iconv_t)-1 || n == 0) return false;
    iconv(cd, NULL, NULL, NULL, NULL);
    char *in = (char *)p;
    size_t inleft = n;
    while (inleft > 0) {
        sbuf_grow(out, inleft * 4 + 16);
        char *o = out->data + out->len;
        size_t oleft = out->cap - out->len - 1;
        size_t r = iconv(cd, &in, &inleft, &o, &oleft);
        out->len = (size_t)(o - out->data);
        if (r == (size_t)-1 && errno != E2BIG) {
            /* an invalid byte: U+FFFD and go on */
            sbuf_add(out, "\xEF\xBF\xBD", 3);
            in++;
            inleft--;
        }
    }
    out->data[out->len] = '\0';
    return true;
}

void bl_valctx_init(bl_valctx *v) {
    sbuf_init(&v->tmp);
    v->iconv_cache = NULL;
}

void bl_valctx_free(bl_valctx *v) {
    if (!v) return;
    sbuf_free(&v->tmp);
    struct iconv_cache *c = v->iconv_cache;
    if (c) {
        for (int i = 0; i < c->n; i++)
            if (c->e[i].cd != (iconv_t)-1) iconv_close(c->e[i].cd);
        free(c);
    }
    v->iconv_cache = NULL;
}
