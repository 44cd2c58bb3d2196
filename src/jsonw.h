/* jsonw: a streaming JSON writer into an sbuf.
 *
 * No tree is built: callers emit values in order and the writer only keeps a
 * small stack telling whether a comma is due at each depth. Integers are
 * written exactly (never through a double), doubles and floats as the shortest
 * decimal that reads back to the same value, and strings are escaped with
 * invalid UTF-8 replaced by U+FFFD so the output is always valid JSON. Used by
 * `tail`, the document builder and the bulk writer. */
#ifndef SS_JSONW_H
#define SS_JSONW_H
#include <stdbool.h>
#include <stdint.h>

#include "sbuf.h"

#define JSONW_MAX_DEPTH 64

typedef struct jsonw {
    sbuf *out;
    int depth;
    bool after_key;                     /* a key was written, its value is next */
    bool need_comma[JSONW_MAX_DEPTH + 1];
} jsonw;

void jw_init(jsonw *w, sbuf *out);
/* before any value or key: the comma that separates it from its sibling
 * (also for callers that write a value's text into w->out themselves) */
static inline void jw_before_value(jsonw *w) {
    if (w->after_key) {
        w->after_key = false;
        return;
    }
    if (w->need_comma[w->depth]) sbuf_addc(w->out, ',');
    w->need_comma[w->depth] = true;
}
void jw_obj_open(jsonw *w);
void jw_obj_close(jsonw *w);
void jw_arr_open(jsonw *w);
void jw_arr_close(jsonw *w);
void jw_key(jsonw *w, const char *k);
void jw_keyn(jsonw *w, const char *k, size_t n);
/* a key already escaped and quoted (json_escape's output), e.g. one written
 * for many objects */
void jw_key_json(jsonw *w, const char *quoted, size_t n);
void jw_str(jsonw *w, const char *s);
void jw_strn(jsonw *w, const char *s, size_t n);
void jw_int(jsonw *w, int64_t v);
void jw_uint(jsonw *w, uint64_t v);
void jw_double(jsonw *w, double v); /* NaN/Inf become null */
void jw_float(jsonw *w, float v);
void jw_bool(jsonw *w, bool v);
void jw_null(jsonw *w);
/* a value that is already valid JSON text (e.g. a decoded JSON column) */
void jw_raw(jsonw *w, const char *json, size_t n);
/* a string, or null when s is NULL (a NULL column) */
void jw_str0(jsonw *w, const char *s);
/* a number a server sent as text (a column), written exactly: its digits
 * (jw_int_text: with a leading '-' too), else (NULL, not a number) null */
void jw_uint_text(jsonw *w, const char *s);
void jw_int_text(jsonw *w, const char *s);

/* building blocks, also used on their own */
void json_escape(sbuf *out, const char *s, size_t n); /* writes "..." */
int fmt_u64(char *buf, uint64_t v);                    /* returns length, no NUL */
int fmt_i64(char *buf, int64_t v);
int fmt_double(char *buf, double v);                   /* shortest round-trip; buf >= 32 */
int fmt_float(char *buf, float v);

#endif
