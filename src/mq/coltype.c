/* coltype: a MySQL column type text (information_schema COLUMN_TYPE, canal's
 * mysqlType) → the bl_column the binlog decoder would have made for it, and
 * the guessed column shapes the decoders use when a message says less.
 *
 * Values decoded from JSON are UTF-8 already, so every character column is
 * CS_UTF8 whatever its charset was; VARCHAR/CHAR lengths are counted in
 * utf8mb4 bytes (4 per character) and only choose the length prefix. Types
 * MariaDB adds (UUID, INET4, INET6) are text here: the tools write their
 * canonical text, which is what `tail` prints for them. A type text's
 * trailing "character set NAME" (the schema lookup adds it) is kept in
 * cs_name for the decoders that must undo a producer's reading of it. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "mq/mq.h"

void mq_col_simple(bl_column *c, uint8_t type, bool is_unsigned) {
    c->type = c->map_type = type;
    c->is_unsigned = is_unsigned;
    c->kind = BK_DEFAULT;
}

void mq_col_text(bl_column *c) {
    c->type = c->map_type = BT_BLOB;
    c->len_bytes = 4;
    c->kind = BK_TEXT;
    c->cs = CS_UTF8;
}

void mq_col_bytes(bl_column *c) {
    c->type = c->map_type = BT_BLOB;
    c->len_bytes = 4;
    c->kind = BK_BINARY;
    c->cs = CS_BINARY;
}

void mq_col_json(bl_column *c) {
    c->type = c->map_type = BT_BLOB;
    c->len_bytes = 4;
    c->kind = BK_JSON_TEXT;
    c->cs = CS_UTF8;
}

void mq_col_temporal(bl_column *c, uint8_t type, unsigned fsp) {
    c->type = c->map_type = type;
    c->fsp = (uint8_t)(fsp > 6 ? 6 : fsp);
    c->meta = c->fsp;
    c->kind = BK_DEFAULT;
}

void mq_col_decimal(bl_column *c, unsigned precision, unsigned scale) {
    c->type = c->map_type = BT_NEWDECIMAL;
    c->precision = (uint8_t)precision;
    c->scale = (uint8_t)scale;
    c->meta = (uint16_t)(precision | scale << 8);
    c->kind = BK_DEFAULT;
}

void mq_col_bit(bl_column *c, unsigned bits) {
    if (bits < 1) bits = 1;
    if (bits > 64) bits = 64;
    c->type = c->map_type = BT_BIT;
    c->meta = (uint16_t)((bits / 8) << 8 | (bits % 8));
    c->kind = BK_DEFAULT;
}

int mq_col_labels(mq_msg *m, bl_column *c, uint8_t type, const char *const *labels,
                  const uint32_t *lens, uint32_t n) {
    c->type = type;
    c->map_type = BT_STRING;
    c->kind = BK_TEXT;
    c->cs = CS_UTF8;
    if (type == BT_ENUM) {
        c->max_len = n < 256 ? 1 : 2;
    } else {
        if (n > 64) return -1;
        c->max_len = n <= 8 ? 1 : n <= 16 ? 2 : n <= 24 ? 3 : n <= 32 ? 4 : 8;
    }
    c->labels = mq_alloc(m, sizeof(char *) * (n ? n : 1));
    c->label_lens = mq_alloc(m, sizeof(uint32_t) * (n ? n : 1));
    for (uint32_t i = 0; i < n; i++) {
        c->labels[i] = mq_strdup(m, labels[i], lens[i]);
        c->label_lens[i] = lens[i];
    }
    c->n_labels = n;
    return 0;
}

int mq_col_labels_list(mq_msg *m, bl_column *c, uint8_t type, const char *list) {
    const char *labels[64 * 16];
    uint32_t lens[64 * 16], n = 0;
    if (list && *list) {
        const char *p = list;
        for (;;) {
            const char *e = strchr(p, ',');
            size_t l = e ? (size_t)(e - p) : strlen(p);
            if (n == sizeof lens / sizeof lens[0]) break;
            labels[n] = p;
            lens[n++] = (uint32_t)l;
            if (!e) break;
            p = e + 1;
        }
    }
    return mq_col_labels(m, c, type, labels, lens, n);
}

bool mq_col_is_text(const bl_column *c) {
    switch (c->type) {
    case BT_STRING: case BT_VARCHAR: case BT_VAR_STRING: case BT_BLOB: case BT_TINY_BLOB:
    case BT_MEDIUM_BLOB: case BT_LONG_BLOB:
        return c->kind == BK_TEXT;
    default: return false;
    }
}

bool mq_col_is_binary(const bl_column *c) {
    switch (c->type) {
    case BT_STRING: case BT_VARCHAR: case BT_VAR_STRING: case BT_BLOB: case BT_TINY_BLOB:
    case BT_MEDIUM_BLOB: case BT_LONG_BLOB:
        return c->kind == BK_BINARY;
    default: return false;
    }
}

/* the last occurrence of needle in s, ignoring case; NULL when none */
static const char *strrstr_ci(const char *s, const char *needle) {
    size_t n = strlen(needle);
    const char *last = NULL;
    for (const char *p = s; *p; p++)
        if (!strncasecmp(p, needle, n)) last = p;
    return last;
}

/* the quoted labels of enum('a','b''c') → arena strings */
static int parse_labels(mq_msg *m, bl_column *c, uint8_t type, const char *p, char *err, size_t errlen) {
    const char *labels[64 * 16];
    uint32_t lens[64 * 16];
    uint32_t n = 0;
    sbuf lab = SBUF_INIT;
    sbuf all = SBUF_INIT; /* label bytes, NUL separated */
    size_t offs[64 * 16];
    while (*p == ' ') p++;
    while (*p == '\'') {
        p++;
        sbuf_reset(&lab);
        for (;;) {
            if (!*p) goto bad;
            if (*p == '\'' && p[1] == '\'') {
                sbuf_addc(&lab, '\'');
                p += 2;
            } else if (*p == '\\' && p[1]) {
                sbuf_addc(&lab, p[1]);
                p += 2;
            } else if (*p == '\'') {
                p++;
                break;
            } else {
                sbuf_addc(&lab, *p++);
            }
        }
        if (n == sizeof lens / sizeof lens[0]) goto bad;
        offs[n] = all.len;
        lens[n] = (uint32_t)lab.len;
        sbuf_add(&all, lab.data ? lab.data : "", lab.len);
        sbuf_addc(&all, '\0');
        n++;
        while (*p == ' ') p++;
        if (*p == ',') {
            p++;
            while (*p == ' ') p++;
        }
    }
    if (*p != ')') goto bad;
    for (uint32_t i = 0; i < n; i++) labels[i] = all.data + offs[i];
    if (mq_col_labels(m, c, type, labels, lens, n) < 0) {
        sbuf_free(&lab);
        sbuf_free(&all);
        return errf(err, errlen, "a SET has at most 64 members");
    }
    sbuf_free(&lab);
    sbuf_free(&all);
    return 0;
bad:
    sbuf_free(&lab);
    sbuf_free(&all);
    return errf(err, errlen, "cannot read the member list of %s", type == BT_ENUM ? "ENUM" : "SET");
}

int mq_col_type(mq_msg *m, bl_column *c, const char *type, char *err, size_t errlen) {
    char base[32];
    size_t i = 0;
    const char *p = type;
    while (*p == ' ') p++;
    while ((isalnum((unsigned char)*p) || *p == '_') && i + 1 < sizeof base)
        base[i++] = (char)tolower((unsigned char)*p++);
    base[i] = '\0';
    if (!strcmp(base, "double") && !strncasecmp(p, " precision", 10)) p += 10;
    long a1 = -1, a2 = -1;
    const char *args = NULL;
    while (*p == ' ') p++;
    if (*p == '(') {
        args = p + 1;
        char *e;
        a1 = strtol(args, &e, 10);
        if (e == args) a1 = -1;
        if (*e == ',') a2 = strtol(e + 1, NULL, 10);
    }
    bool uns = false;
    for (const char *q = p; *q; q++)
        if (!strncasecmp(q, "unsigned", 8)) uns = true;
    c->labels = NULL;
    c->n_labels = 0;
    c->cs_name = NULL;
    c->kind = BK_DEFAULT;
    c->cs = 0;
    c->precision = c->scale = c->fsp = 0;
    c->len_bytes = 0;
    c->max_len = 0;
    c->meta = 0;
    c->is_unsigned = false;
    if (!strcmp(base, "tinyint") || !strcmp(base, "bool") || !strcmp(base, "boolean"))
        mq_col_simple(c, BT_TINY, uns);
    else if (!strcmp(base, "smallint")) mq_col_simple(c, BT_SHORT, uns);
    else if (!strcmp(base, "mediumint")) mq_col_simple(c, BT_INT24, uns);
    else if (!strcmp(base, "int") || !strcmp(base, "integer")) mq_col_simple(c, BT_LONG, uns);
    else if (!strcmp(base, "bigint")) mq_col_simple(c, BT_LONGLONG, uns);
    else if (!strcmp(base, "decimal") || !strcmp(base, "numeric") || !strcmp(base, "dec") ||
             !strcmp(base, "fixed")) {
        long prec = a1 > 0 ? a1 : 10, sc = a2 >= 0 ? a2 : 0;
        if (prec > 65 || sc > 30 || sc > prec)
            return errf(err, errlen, "DECIMAL(%ld,%ld) is out of MySQL's range", prec, sc);
        mq_col_decimal(c, (unsigned)prec, (unsigned)sc);
        c->is_unsigned = uns;
    } else if (!strcmp(base, "float"))
        mq_col_simple(c, a1 > 24 ? BT_DOUBLE : BT_FLOAT, uns);
    else if (!strcmp(base, "double") || !strcmp(base, "real"))
        mq_col_simple(c, BT_DOUBLE, uns);
    else if (!strcmp(base, "date")) mq_col_simple(c, BT_DATE, false);
    else if (!strcmp(base, "datetime")) mq_col_temporal(c, BT_DATETIME2, a1 > 0 ? (unsigned)a1 : 0);
    else if (!strcmp(base, "timestamp")) mq_col_temporal(c, BT_TIMESTAMP2, a1 > 0 ? (unsigned)a1 : 0);
    else if (!strcmp(base, "time")) mq_col_temporal(c, BT_TIME2, a1 > 0 ? (unsigned)a1 : 0);
    else if (!strcmp(base, "year")) mq_col_simple(c, BT_YEAR, false);
    else if (!strcmp(base, "char") || !strcmp(base, "varchar") || !strcmp(base, "binary") ||
             !strcmp(base, "varbinary")) {
        bool bin = base[0] == 'b' || base[3] == 'b';
        long n = a1 >= 0 ? a1 : 1;
        c->type = c->map_type = base[0] == 'v' ? BT_VARCHAR : BT_STRING;
        c->max_len = (uint32_t)(bin ? n : n * 4);
        if (c->type == BT_VARCHAR) c->meta = (uint16_t)c->max_len;
        c->kind = bin ? BK_BINARY : BK_TEXT;
        c->cs = bin ? CS_BINARY : CS_UTF8;
    } else if (!strcmp(base, "uuid") || !strcmp(base, "inet4") || !strcmp(base, "inet6")) {
        mq_col_text(c);
    } else if (strstr(base, "text")) {
        mq_col_text(c);
        c->len_bytes = base[0] == 't' && base[1] == 'i' ? 1 : base[0] == 't' ? 2 : base[0] == 'm' ? 3 : 4;
    } else if (strstr(base, "blob")) {
        mq_col_bytes(c);
        c->len_bytes = base[0] == 't' ? 1 : base[0] == 'b' ? 2 : base[0] == 'm' ? 3 : 4;
    } else if (!strcmp(base, "json")) {
        mq_col_json(c);
    } else if (!strcmp(base, "enum") || !strcmp(base, "set")) {
        if (!args) return errf(err, errlen, "%s without its members", base);
        return parse_labels(m, c, base[0] == 'e' ? BT_ENUM : BT_SET, args, err, errlen);
    } else if (!strcmp(base, "bit")) {
        long n = a1 > 0 ? a1 : 1;
        if (n > 64) return errf(err, errlen, "BIT(%ld) is longer than 64 bits", n);
        mq_col_bit(c, (unsigned)n);
    } else if (!strcmp(base, "geometry") || !strcmp(base, "point") || !strcmp(base, "linestring") ||
               !strcmp(base, "polygon") || !strcmp(base, "multipoint") ||
               !strcmp(base, "multilinestring") || !strcmp(base, "multipolygon") ||
               !strcmp(base, "geometrycollection") || !strcmp(base, "geomcollection")) {
        c->type = c->map_type = BT_GEOMETRY;
        c->len_bytes = 4;
    } else {
        return errf(err, errlen, "unknown column type \"%s\"", type);
    }
    /* "... character set NAME" after the type (and its member list) */
    const char *cs = strrstr_ci(type, " character set ");
    const char *paren = strrchr(type, ')');
    if (cs && (!paren || cs > paren) && (mq_col_is_text(c) || c->kind == BK_JSON_TEXT)) {
        const char *nm = cs + 15;
        size_t l = strcspn(nm, " ");
        c->cs_name = mq_strdup(m, nm, l);
    }
    return 0;
}
