/* jscan: forward-only JSON scanning without a tree (see jscan.h). */
#include "search/jscan.h"

#include <string.h>

const char *js_ws(const char *p, const char *e) {
    while (p && p < e && (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t')) p++;
    return p;
}

const char *js_str(const char *p, const char *e, const char **s, size_t *n) {
    p = js_ws(p, e);
    if (!p || p >= e || *p != '"') return NULL;
    const char *b = ++p;
    while (p < e) {
        if (*p == '\\') {
            p += 2;
            continue;
        }
        if (*p == '"') {
            if (s) *s = b;
            if (n) *n = (size_t)(p - b);
            return p + 1;
        }
        p++;
    }
    return NULL;
}

const char *js_int(const char *p, const char *e, int64_t *v) {
    p = js_ws(p, e);
    if (!p || p >= e) return NULL;
    bool neg = false;
    if (*p == '-') neg = true, p++;
    if (p >= e || *p < '0' || *p > '9') return NULL;
    uint64_t x = 0;
    while (p < e && *p >= '0' && *p <= '9') {
        x = x * 10 + (uint64_t)(*p - '0');
        p++;
    }
    while (p < e && (*p == '.' || *p == 'e' || *p == 'E' || *p == '+' || *p == '-' ||
                     (*p >= '0' && *p <= '9')))
        p++;
    if (v) *v = neg ? -(int64_t)x : (int64_t)x;
    return p;
}

static const char *skip_depth(const char *p, const char *e, int depth) {
    p = js_ws(p, e);
    if (!p || p >= e || depth > 128) return NULL;
    switch (*p) {
    case '"':
        return js_str(p, e, NULL, NULL);
    case '{': {
        struct js_walk o;
        const char *k;
        size_t kn;
        p = js_members(&o, p, e);
        while (js_member(&o, &p, &k, &kn)) p = skip_depth(p, e, depth + 1);
        return p;
    }
    case '[': {
        struct js_walk a;
        p = js_elements(&a, p, e);
        while (js_element(&a, &p)) p = skip_depth(p, e, depth + 1);
        return p;
    }
    case 't':
        return (e - p >= 4 && !memcmp(p, "true", 4)) ? p + 4 : NULL;
    case 'f':
        return (e - p >= 5 && !memcmp(p, "false", 5)) ? p + 5 : NULL;
    case 'n':
        return (e - p >= 4 && !memcmp(p, "null", 4)) ? p + 4 : NULL;
    default:
        if (*p == '-' || (*p >= '0' && *p <= '9')) return js_int(p, e, NULL);
        return NULL;
    }
}

const char *js_skip(const char *p, const char *e) { return skip_depth(p, e, 0); }

const char *js_obj_begin(const char *p, const char *e) {
    p = js_ws(p, e);
    if (!p || p >= e || *p != '{') return NULL;
    return p + 1;
}

const char *js_obj_next(const char *p, const char *e, const char **key, size_t *klen,
                        bool *done, bool first) {
    p = js_ws(p, e);
    if (!p || p >= e) return NULL;
    *done = false;
    if (*p == '}') {
        *done = true;
        return p + 1;
    }
    if (!first) {
        if (*p != ',') return NULL;
        p = js_ws(p + 1, e);
    }
    p = js_str(p, e, key, klen);
    p = js_ws(p, e);
    if (!p || p >= e || *p != ':') return NULL;
    p = js_ws(p + 1, e);
    return p < e ? p : NULL; /* a member always has a value */
}

const char *js_arr_begin(const char *p, const char *e) {
    p = js_ws(p, e);
    if (!p || p >= e || *p != '[') return NULL;
    return p + 1;
}

const char *js_arr_next(const char *p, const char *e, bool *done, bool first) {
    p = js_ws(p, e);
    if (!p || p >= e) return NULL;
    *done = false;
    if (*p == ']') {
        *done = true;
        return p + 1;
    }
    if (!first) {
        if (*p != ',') return NULL;
        p = js_ws(p + 1, e);
    }
    return p;
}

bool js_key_is(const char *k, size_t n, const char *lit) {
    return strlen(lit) == n && memcmp(k, lit, n) == 0;
}

const char *js_members(struct js_walk *w, const char *p, const char *e) {
    w->e = e;
    w->first = true;
    return js_obj_begin(p, e);
}

bool js_member(struct js_walk *w, const char **p, const char **key, size_t *klen) {
    bool done = false;
    if (*p) *p = js_obj_next(*p, w->e, key, klen, &done, w->first);
    w->first = false;
    return *p && !done;
}

const char *js_elements(struct js_walk *w, const char *p, const char *e) {
    w->e = e;
    w->first = true;
    return js_arr_begin(p, e);
}

bool js_element(struct js_walk *w, const char **p) {
    bool done = false;
    if (*p) *p = js_arr_next(*p, w->e, &done, w->first);
    w->first = false;
    return *p && !done;
}
