/* docbuild_value: a column read with the binary protocol → its JSON, the
 * same text the binlog decoder writes for the same column (docbuild.h says
 * which, src/binlog/value.c the decoder's side): the bind type each MySQL
 * type is read into, dates and times from a MYSQL_TIME, DECIMAL and BIGINT
 * exact, binary strings base64, SET an array, JSON kept as JSON. */
#include <cjson/cJSON.h>
#include <stdint.h>
#include <string.h>

#include "binlog/binlog.h"
#include "sync/pipeline/docbuild.h"

static void put2(sbuf *o, unsigned v) {
    char b[2] = {(char)('0' + v / 10 % 10), (char)('0' + v % 10)};
    sbuf_add(o, b, 2);
}

static void put_frac(sbuf *o, unsigned long usec, unsigned fsp) {
    if (fsp == 0) return;
    if (fsp > 6) fsp = 6;
    char d[7];
    d[0] = '.';
    for (int i = 6; i >= 1; i--) {
        d[i] = (char)('0' + usec % 10);
        usec /= 10;
    }
    sbuf_add(o, d, fsp + 1);
}

void docbuild_time_json(sbuf *out, enum enum_field_types type, const MYSQL_TIME *t,
                        unsigned fsp) {
    if (type == MYSQL_TYPE_TIME) {
        /* Connector/C folds the days into hour (and leaves day set); a
         * MYSQL_TIME filled otherwise may keep them apart */
        unsigned long h = t->hour >= 24 ? t->hour : (unsigned long)t->day * 24 + t->hour;
        sbuf_addc(out, '"');
        if (t->neg) sbuf_addc(out, '-');
        if (h >= 100) sbuf_addc(out, (char)('0' + h / 100 % 10));
        put2(out, (unsigned)(h % 100));
        sbuf_addc(out, ':');
        put2(out, t->minute);
        sbuf_addc(out, ':');
        put2(out, t->second);
        put_frac(out, t->second_part, fsp);
        sbuf_addc(out, '"');
        return;
    }
    if (!t->year || !t->month || !t->day) {
        sbuf_adds(out, "null");
        return;
    }
    sbuf_addc(out, '"');
    put2(out, t->year / 100);
    put2(out, t->year % 100);
    sbuf_addc(out, '-');
    put2(out, t->month);
    sbuf_addc(out, '-');
    put2(out, t->day);
    if (type != MYSQL_TYPE_DATE && type != MYSQL_TYPE_NEWDATE) {
        sbuf_addc(out, 'T');
        put2(out, t->hour);
        sbuf_addc(out, ':');
        put2(out, t->minute);
        sbuf_addc(out, ':');
        put2(out, t->second);
        put_frac(out, t->second_part, fsp);
        if (type == MYSQL_TYPE_TIMESTAMP) sbuf_addc(out, 'Z');
    }
    sbuf_addc(out, '"');
}

enum enum_field_types docbuild_bind_type(const MYSQL_FIELD *f) {
    switch (f->type) {
    case MYSQL_TYPE_TINY: case MYSQL_TYPE_SHORT: case MYSQL_TYPE_INT24: case MYSQL_TYPE_LONG:
    case MYSQL_TYPE_LONGLONG: case MYSQL_TYPE_YEAR:
        return MYSQL_TYPE_LONGLONG;
    case MYSQL_TYPE_FLOAT:
        return MYSQL_TYPE_FLOAT;
    case MYSQL_TYPE_DOUBLE:
        return MYSQL_TYPE_DOUBLE;
    case MYSQL_TYPE_DATE: case MYSQL_TYPE_NEWDATE: case MYSQL_TYPE_TIME: case MYSQL_TYPE_DATETIME:
    case MYSQL_TYPE_TIMESTAMP:
        return MYSQL_TYPE_DATETIME; /* into a MYSQL_TIME */
    default:
        return MYSQL_TYPE_STRING; /* DECIMAL text, strings, BIT and BLOB bytes, JSON */
    }
}

static bool valid_json(const char *s, size_t n) {
    cJSON *j = cJSON_ParseWithLength(s, n);
    if (!j) return false;
    cJSON_Delete(j);
    return true;
}

void docbuild_value_json(jsonw *w, const MYSQL_FIELD *f, const MYSQL_BIND *b, bool json_text) {
    if (b->is_null && *b->is_null) {
        jw_null(w);
        return;
    }
    switch (b->buffer_type) {
    case MYSQL_TYPE_LONGLONG: {
        int64_t v;
        memcpy(&v, b->buffer, 8);
        if (f->flags & UNSIGNED_FLAG)
            jw_uint(w, (uint64_t)v);
        else
            jw_int(w, v);
        return;
    }
    case MYSQL_TYPE_FLOAT: {
        float v;
        memcpy(&v, b->buffer, 4);
        jw_float(w, v);
        return;
    }
    case MYSQL_TYPE_DOUBLE: {
        double v;
        memcpy(&v, b->buffer, 8);
        jw_double(w, v);
        return;
    }
    case MYSQL_TYPE_DATETIME: {
        sbuf t;
        sbuf_init(&t);
        unsigned fsp = f->decimals > 6 ? 6 : f->decimals;
        docbuild_time_json(&t, f->type, (const MYSQL_TIME *)b->buffer, fsp);
        jw_raw(w, t.data, t.len);
        sbuf_free(&t);
        return;
    }
    default:
        break;
    }
    const char *s = b->buffer;
    size_t n = b->length ? *b->length : 0;
    if (n > b->buffer_length) n = b->buffer_length; /* truncated fetch: never read past */
    switch (f->type) {
    case MYSQL_TYPE_DECIMAL: case MYSQL_TYPE_NEWDECIMAL:
        jw_strn(w, s, n);
        return;
    case MYSQL_TYPE_BIT: {
        uint64_t x = 0;
        for (size_t i = 0; i < n && i < 8; i++) x = x << 8 | (unsigned char)s[i];
        jw_uint(w, x);
        return;
    }
    case MYSQL_TYPE_JSON:
        if (valid_json(s, n)) jw_raw(w, s, n); else jw_strn(w, s, n);
        return;
    case MYSQL_TYPE_GEOMETRY:
        jw_null(w); /* not supported by the builder (the decoder writes GeoJSON) */
        return;
    default:
        break;
    }
    if (f->flags & SET_FLAG) {
        jw_arr_open(w);
        size_t i = 0;
        while (n > 0 && i <= n) {
            size_t j = i;
            while (j < n && s[j] != ',') j++;
            jw_strn(w, s + i, j - i);
            i = j + 1;
        }
        jw_arr_close(w);
        return;
    }
    if (f->charsetnr == 63 && !(f->flags & ENUM_FLAG)) { /* binary string: base64 */
        sbuf t;
        sbuf_init(&t);
        bl_base64(&t, (const uint8_t *)s, n);
        jw_raw(w, t.data, t.len);
        sbuf_free(&t);
        return;
    }
    if (json_text && valid_json(s, n)) {
        jw_raw(w, s, n);
        return;
    }
    jw_strn(w, s, n);
}
