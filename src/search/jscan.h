/* jscan: a tiny forward-only JSON scanner for engine responses.
 *
 * It never builds a tree and never converts numbers through a double: callers
 * walk an object's members, look at the keys they care about and skip the
 * rest. Strings are returned as raw spans (escapes left in place); callers
 * that need text compare keys without escapes, which the engines never use in
 * the keys we read. Every function returns NULL on malformed input. */
#ifndef SS_JSCAN_H
#define SS_JSCAN_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

const char *js_ws(const char *p, const char *e);
/* Skip one value of any kind (depth-limited). */
const char *js_skip(const char *p, const char *e);
/* p at '"': span of the contents (without quotes); returns after the closing quote. */
const char *js_str(const char *p, const char *e, const char **s, size_t *n);
/* Integer (no fraction/exponent accepted into v; they are skipped). */
const char *js_int(const char *p, const char *e, int64_t *v);
/* Object iteration: call js_obj_begin at '{', then js_obj_next until it sets
 * *done. On each member the cursor is left at the value; the caller must skip
 * or read it before calling js_obj_next again. */
const char *js_obj_begin(const char *p, const char *e);
const char *js_obj_next(const char *p, const char *e, const char **key, size_t *klen,
                        bool *done, bool first);
const char *js_arr_begin(const char *p, const char *e);
/* Before each element: *done if ']' reached. */
const char *js_arr_next(const char *p, const char *e, bool *done, bool first);

/* The same walks with their bookkeeping kept in a struct js_walk, the way
 * every reader here writes them:
 *
 *     struct js_walk o;
 *     p = js_members(&o, p, e);
 *     while (js_member(&o, &p, &k, &kn))
 *         p = js_key_is(k, kn, "status") ? js_int(p, e, &v) : js_skip(p, e);
 *
 * js_members (p at '{') and js_elements (p at '[') return the cursor inside
 * it (NULL if it is not one). js_member / js_element: true with *p at the
 * next value, which the caller reads or skips, storing the cursor after it
 * in *p; false at the end, *p after the closing bracket, or NULL when the
 * text is malformed (or *p already was NULL). */
struct js_walk {
    const char *e;
    bool first;
};
const char *js_members(struct js_walk *w, const char *p, const char *e);
bool js_member(struct js_walk *w, const char **p, const char **key, size_t *klen);
const char *js_elements(struct js_walk *w, const char *p, const char *e);
bool js_element(struct js_walk *w, const char **p);
bool js_key_is(const char *k, size_t n, const char *lit);

#endif
