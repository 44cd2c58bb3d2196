/* mapping_types: the MySQL -> engine type rules of the mapping model — the
 * default engine type of a MySQL column type, which engine types a column
 * may be given, which changes of a type widen it — and MySQL type names
 * compared (see mapping.h). */
#include "sync/mapping/mapping.h"
#include "sync/mapping/mapping_int.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

enum mclass {
    MC_UNKNOWN, MC_INT, MC_DECIMAL, MC_FLOAT, MC_DOUBLE, MC_DATE, MC_DATETIME, MC_TIME, MC_YEAR,
    MC_CHAR, MC_STRING, MC_TEXT, MC_ENUM, MC_SET, MC_JSON, MC_BIT, MC_BINARY, MC_GEOMETRY,
    MC_POINT
};

struct mtype {
    enum mclass cls;
    int bytes;     /* MC_INT: 1 2 3 4 8 */
    bool is_unsigned;
    int len;       /* display width / length / precision / bit width */
    int scale;     /* DECIMAL scale, DATETIME fsp */
};

static struct mtype mtype_parse(const char *t) {
    struct mtype m = {MC_UNKNOWN, 0, false, -1, 0};
    if (!t) return m;
    char base[32];
    size_t i = 0;
    while (t[i] && (isalpha((unsigned char)t[i]) || t[i] == '_') && i < sizeof base - 1) {
        base[i] = (char)tolower((unsigned char)t[i]);
        i++;
    }
    base[i] = '\0';
    const char *p = t + i;
    if (*p == '(') {
        m.len = atoi(p + 1);
        const char *c = strchr(p, ',');
        const char *close = strchr(p, ')');
        if (c && close && c < close) m.scale = atoi(c + 1);
    }
    m.is_unsigned = strstr(t, "unsigned") != NULL;
    static const struct { const char *n; enum mclass c; int bytes; } tab[] = {
        {"tinyint", MC_INT, 1}, {"bool", MC_INT, 1}, {"boolean", MC_INT, 1},
        {"smallint", MC_INT, 2}, {"mediumint", MC_INT, 3}, {"int", MC_INT, 4},
        {"integer", MC_INT, 4}, {"bigint", MC_INT, 8}, {"decimal", MC_DECIMAL, 0},
        {"numeric", MC_DECIMAL, 0}, {"float", MC_FLOAT, 0}, {"double", MC_DOUBLE, 0},
        {"real", MC_DOUBLE, 0}, {"date", MC_DATE, 0}, {"datetime", MC_DATETIME, 0},
        {"timestamp", MC_DATETIME, 0}, {"time", MC_TIME, 0}, {"year", MC_YEAR, 0},
        {"char", MC_CHAR, 0}, {"varchar", MC_STRING, 0}, {"tinytext", MC_TEXT, 0},
        {"text", MC_TEXT, 0}, {"mediumtext", MC_TEXT, 0}, {"longtext", MC_TEXT, 0},
        {"enum", MC_ENUM, 0}, {"set", MC_SET, 0}, {"json", MC_JSON, 0}, {"bit", MC_BIT, 0},
        {"binary", MC_BINARY, 0}, {"varbinary", MC_BINARY, 0}, {"tinyblob", MC_BINARY, 0},
        {"blob", MC_BINARY, 0}, {"mediumblob", MC_BINARY, 0}, {"longblob", MC_BINARY, 0},
        {"geometry", MC_GEOMETRY, 0}, {"point", MC_POINT, 0}, {"linestring", MC_GEOMETRY, 0},
        {"polygon", MC_GEOMETRY, 0}, {"multipoint", MC_GEOMETRY, 0},
        {"multilinestring", MC_GEOMETRY, 0}, {"multipolygon", MC_GEOMETRY, 0},
        {"geometrycollection", MC_GEOMETRY, 0}, {"geomcollection", MC_GEOMETRY, 0},
    };
    for (size_t k = 0; k < sizeof tab / sizeof tab[0]; k++)
        if (!strcmp(base, tab[k].n)) {
            m.cls = tab[k].c;
            m.bytes = tab[k].bytes;
            break;
        }
    if (m.cls == MC_DECIMAL && m.len < 0) m.len = 10;
    if (m.cls == MC_DATETIME || m.cls == MC_TIME) m.scale = m.len < 0 ? 0 : m.len;
    if (m.cls == MC_BIT && m.len < 0) m.len = 1;
    return m;
}

int mapping_decimal_scale(const char *mysql_type) {
    struct mtype m = mtype_parse(mysql_type);
    return m.cls == MC_DECIMAL ? m.scale : -1;
}

/* Engine types this model knows, and whether they are text-like (analyzers). */
static const char *const engine_types[] = {
    "long", "integer", "short", "byte", "unsigned_long", "double", "float", "half_float",
    "scaled_float", "boolean", "keyword", "text", "search_as_you_type", "wildcard", "date",
    "date_nanos", "binary", "object", "flattened", "flat_object", "geo_point", "geo_shape",
    "ip", NULL};

static bool known_type(const char *t) {
    for (int i = 0; engine_types[i]; i++)
        if (!strcmp(engine_types[i], t)) return true;
    return false;
}

bool mp_is_text_type(const char *t) {
    return !strcmp(t, "text") || !strcmp(t, "search_as_you_type");
}

bool mapping_is_integer_type(const char *mysql_type) {
    return mysql_type && mtype_parse(mysql_type).cls == MC_INT;
}

bool mapping_is_unsigned_bigint(const char *mysql_type) {
    if (!mysql_type) return false;
    struct mtype m = mtype_parse(mysql_type);
    return m.cls == MC_INT && m.bytes == 8 && m.is_unsigned;
}

const char *mapping_default_type(const char *mysql_type) {
    struct mtype m = mtype_parse(mysql_type);
    switch (m.cls) {
    case MC_INT:
        switch (m.bytes) {
        case 1: return m.is_unsigned ? "short" : "byte";
        case 2: return m.is_unsigned ? "integer" : "short";
        case 3: return "integer";
        case 4: return m.is_unsigned ? "long" : "integer";
        default: return "long"; /* BIGINT UNSIGNED above 2^63-1 is refused, not rounded */
        }
    case MC_DECIMAL: return m.len <= 15 ? "scaled_float" : "keyword";
    case MC_FLOAT: return "float";
    case MC_DOUBLE: return "double";
    case MC_DATE:
    case MC_DATETIME: return "date";
    case MC_TIME: return "keyword";
    case MC_YEAR: return "short";
    case MC_CHAR: return "keyword";
    case MC_STRING:
    case MC_TEXT: return "text";
    case MC_ENUM:
    case MC_SET: return "keyword";
    case MC_JSON: return "object";
    case MC_BIT: return m.len <= 63 ? "long" : "unsigned_long";
    case MC_BINARY: return "binary";
    case MC_GEOMETRY:
    case MC_POINT: return "geo_shape";
    default: return "keyword";
    }
}

/* Largest magnitude an engine integer type holds exactly (bits of value). */
static int int_bits(const char *t) {
    if (!strcmp(t, "byte")) return 7;
    if (!strcmp(t, "short")) return 15;
    if (!strcmp(t, "integer")) return 31;
    if (!strcmp(t, "long")) return 63;
    if (!strcmp(t, "unsigned_long")) return 64;
    return -1;
}

static int fail_why(char *why, size_t n, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, n, fmt, ap);
    va_end(ap);
    return -1;
}

int mapping_type_compatible(const char *mysql_type, const char *t, char *why, size_t whylen) {
    if (!known_type(t)) return fail_why(why, whylen, "unknown engine type '%s'", t);
    struct mtype m = mtype_parse(mysql_type);
    bool numeric_fp = !strcmp(t, "double") || !strcmp(t, "float") || !strcmp(t, "half_float") ||
                      !strcmp(t, "scaled_float");
    if (!strcmp(t, "keyword") && m.cls != MC_JSON && m.cls != MC_GEOMETRY && m.cls != MC_POINT &&
        m.cls != MC_BINARY)
        return 0; /* any scalar kept as its exact text */
    switch (m.cls) {
    case MC_UNKNOWN: return 0; /* type not known: nothing to check */
    case MC_INT:
    case MC_BIT:
    case MC_YEAR: {
        int need; /* value bits the column needs (unsigned: all bits) */
        if (m.cls == MC_YEAR)
            need = 12;
        else if (m.cls == MC_BIT)
            need = m.len;
        else
            need = m.bytes * 8 - (m.is_unsigned ? 0 : 1);
        int have = int_bits(t);
        /* BIGINT UNSIGNED as long: values above 2^63-1 are refused by the
         * engine (a dead letter naming the value), never rounded; the default,
         * because unsigned_long is missing before ES 7.10 / OpenSearch 2.8 */
        if (have == 63 && need == 64 && m.cls == MC_INT) return 0;
        if (have >= 0) {
            if (have >= need) return 0;
            return fail_why(why, whylen, "%s holds %d value bits, %s needs %d", t, have,
                            mysql_type, need);
        }
        if (!strcmp(t, "boolean")) {
            if ((m.cls == MC_INT && m.bytes == 1) || (m.cls == MC_BIT && m.len == 1)) return 0;
            return fail_why(why, whylen, "boolean only for TINYINT or BIT(1), not %s", mysql_type);
        }
        if (!strcmp(t, "double") && need <= 53) return 0;
        if (!strcmp(t, "float") && need <= 24) return 0;
        if (numeric_fp)
            return fail_why(why, whylen, "%s would round %s values (use long or keyword)", t,
                            mysql_type);
        break;
    }
    case MC_DECIMAL:
        if (!strcmp(t, "scaled_float") || !strcmp(t, "double")) {
            if (m.len <= 15) return 0;
            return fail_why(why, whylen,
                            "%s would round %s (more than 15 digits): use keyword", t, mysql_type);
        }
        if (int_bits(t) >= 0 && m.scale == 0 && m.len <= 18) return 0;
        break;
    case MC_FLOAT:
        if (!strcmp(t, "float") || !strcmp(t, "double")) return 0;
        break;
    case MC_DOUBLE:
        if (!strcmp(t, "double")) return 0;
        if (numeric_fp) return fail_why(why, whylen, "%s would round DOUBLE values", t);
        break;
    case MC_DATE:
    case MC_DATETIME:
        if (!strcmp(t, "date") || !strcmp(t, "date_nanos")) return 0;
        break;
    case MC_TIME: break;
    case MC_CHAR:
    case MC_STRING:
    case MC_TEXT:
        if (mp_is_text_type(t) || !strcmp(t, "wildcard") || !strcmp(t, "ip")) return 0;
        break;
    case MC_ENUM:
    case MC_SET:
        if (mp_is_text_type(t)) return 0;
        break;
    case MC_JSON:
        if (!strcmp(t, "object") || !strcmp(t, "flattened") || !strcmp(t, "flat_object") ||
            !strcmp(t, "keyword"))
            return 0;
        break;
    case MC_BINARY:
        if (!strcmp(t, "binary")) return 0;
        break;
    case MC_POINT:
        if (!strcmp(t, "geo_point")) return 0;
        /* fall through */
    case MC_GEOMETRY:
        if (!strcmp(t, "geo_shape")) return 0;
        break;
    }
    return fail_why(why, whylen, "engine type %s cannot hold MySQL %s", t, mysql_type);
}

bool mapping_type_widens(const char *from, const char *to, const char *type) {
    struct mtype a = mtype_parse(from), b = mtype_parse(to);
    char why[256];
    if (a.cls == MC_UNKNOWN || b.cls == MC_UNKNOWN) return false;
    if (mapping_type_compatible(to, type, why, sizeof why) < 0) return false;
    bool strings_a = a.cls == MC_CHAR || a.cls == MC_STRING || a.cls == MC_TEXT;
    bool strings_b = b.cls == MC_CHAR || b.cls == MC_STRING || b.cls == MC_TEXT;
    if (strings_a && strings_b) return true; /* the JSON form is the text either way */
    if (a.cls == MC_FLOAT && b.cls == MC_DOUBLE) return true;
    if (a.cls != b.cls) return false;
    switch (a.cls) {
    case MC_INT: /* every value of `from` fits `to` */
        if (a.is_unsigned == b.is_unsigned) return b.bytes >= a.bytes;
        return !b.is_unsigned && b.bytes > a.bytes;
    case MC_DECIMAL: /* the same decimals, at least as many integer digits */
        return b.scale == a.scale && b.len >= a.len;
    case MC_BIT: return b.len >= a.len;
    case MC_BINARY: return b.len < 0 || a.len < 0 ? true : b.len >= a.len;
    case MC_ENUM:
    case MC_SET:
    case MC_JSON:
    case MC_GEOMETRY:
    case MC_POINT:
    case MC_DOUBLE:
    case MC_FLOAT:
    case MC_DATE:
    case MC_YEAR: return true;
    default: return false; /* DATETIME/TIME precision changes the text of every value */
    }
}

/* ------------------------------------------------------------------ schema */

/* Same MySQL type? Integer display widths are ignored (MariaDB writes
 * "int(11)", MySQL 8 "int"), as is the case of the type name. */
static void type_norm(const char *t, sbuf *out) {
    struct mtype m = mtype_parse(t);
    bool drop_width = m.cls == MC_INT || m.cls == MC_YEAR;
    for (const char *p = t; *p; p++) {
        if (drop_width && *p == '(') {
            const char *e = strchr(p, ')');
            if (e) {
                p = e;
                continue;
            }
        }
        sbuf_addc(out, *p);
    }
}

bool mp_same_mysql_type(const char *a, const char *b) {
    sbuf x = SBUF_INIT, y = SBUF_INIT;
    type_norm(a, &x);
    type_norm(b, &y);
    bool same = x.len == y.len && (x.len == 0 || !strcasecmp(x.data, y.data));
    sbuf_free(&x);
    sbuf_free(&y);
    return same;
}
