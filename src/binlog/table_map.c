/* table_map: TABLE_MAP events, with every optional metadata field
 * (signedness, charsets, column names, ENUM/SET labels, geometry types,
 * primary key, visibility), the table cache by id, and collation ids.
 *
 * A TABLE_MAP is sent before the rows of every statement; when its bytes equal
 * the cached table's, the cached parse is kept, so steady traffic parses each
 * table once. Strings live in a per-table arena freed with the table. */
#include <stdio.h>
#include <stdlib.h>

#include "binlog/binlog.h"
#include "binlog/internal.h"

static void table_free(bl_table *t) {
    arena_free(&t->arena);
    free(t->cols);
    sbuf_free(&t->raw);
    free(t);
}

void bl_tables_free(bl_decoder *d) {
    for (int i = 0; i < 256; i++) {
        bl_table *t = d->tables[i];
        while (t) {
            bl_table *n = t->next;
            table_free(t);
            t = n;
        }
        d->tables[i] = NULL;
    }
    d->n_tables = 0;
}

bl_table *bl_table_find(bl_decoder *d, uint64_t id) {
    for (bl_table *t = d->tables[id & 255]; t; t = t->next)
        if (t->id == id) return t;
    return NULL;
}

void bl_schema_invalidate(bl_decoder *d, const char *db, const char *sql, size_t len) {
    (void)db, (void)sql, (void)len;
    d->schema_gen++;
}

/* ------------------------------------------------------- collations */
/* Collation ids the server reported (information_schema.COLLATIONS): one
 * table per decoder, filled by its reader's thread, so two readers in one
 * process (of two servers, whose ids may differ) never share one. */
#define BL_NCOLL 2048

void bl_collation_register(bl_decoder *d, uint16_t id, const char *charset_name) {
    if (id >= BL_NCOLL || !charset_name) return;
    if (!d->coll_names) d->coll_names = xcalloc(BL_NCOLL, sizeof *d->coll_names);
    free(d->coll_names[id]);
    d->coll_names[id] = xstrdup(charset_name);
}

void bl_collations_free(bl_decoder *d) {
    if (!d->coll_names) return;
    for (int i = 0; i < BL_NCOLL; i++) free(d->coll_names[i]);
    free(d->coll_names);
    d->coll_names = NULL;
}

static const struct {
    const char *name;
    const char *iconv;
    uint16_t ids[40];
} charsets[] = {
    {"binary", NULL, {63}},
    {"latin1", NULL, {5, 8, 15, 31, 47, 48, 49, 94}},
    {"ascii", NULL, {11, 65}},
    {"utf8mb3", NULL, {33, 76, 83, 192, 193, 194, 195, 196, 197, 198, 199, 200, 201, 202, 203, 204,
                       205, 206, 207, 208, 209, 210, 211, 212, 213, 214, 215, 223}},
    {"utf8mb4", NULL, {45, 46, 224, 225, 226, 227, 228, 229, 230, 231, 232, 233, 234, 235, 236, 237,
                       238, 239, 240, 241, 242, 243, 244, 245, 246, 247}},
    {"ucs2", "UCS-2BE", {35, 90, 128, 129, 130, 131, 132, 133, 134, 135, 136, 137, 138, 139, 140,
                         141, 142, 143, 144, 145, 146, 147, 148, 149, 150, 151, 159}},
    {"utf16", "UTF-16BE", {54, 55, 101, 102, 103, 104, 105, 106, 107, 108, 109, 110, 111, 112, 113,
                           114, 115, 116, 117, 118, 119, 120, 121, 122, 123, 124}},
    {"utf16le", "UTF-16LE", {56, 62}},
    {"utf32", "UTF-32BE", {60, 61, 160, 161, 162, 163, 164, 165, 166, 167, 168, 169, 170, 171, 172,
                           173, 174, 175, 176, 177, 178, 179, 180, 181, 182, 183}},
    {"cp1250", "CP1250", {26, 34, 44, 66, 99}},
    {"cp1251", "CP1251", {14, 23, 50, 51, 52}},
    {"cp1256", "CP1256", {57, 67}},
    {"cp1257", "CP1257", {29, 58, 59}},
    {"gbk", "GBK", {28, 87}},
    {"big5", "BIG5", {1, 84}},
    {"sjis", "SHIFT_JIS", {13, 88}},
    {"cp932", "CP932", {95, 96}},
    {"euckr", "EUC-KR", {19, 85}},
    {"ujis", "EUC-JP", {12, 91}},
    {"eucjpms", "EUC-JP-MS", {97, 98}},
    {"gb2312", "GB2312", {24, 86}},
    {"gb18030", "GB18030", {248, 249, 250}},
    {"koi8r", "KOI8-R", {7, 74}},
    {"koi8u", "KOI8-U", {22, 75}},
    {"latin2", "ISO-8859-2", {2, 9, 21, 27, 77}},
    {"greek", "ISO-8859-7", {25, 70}},
    {"hebrew", "ISO-8859-8", {16, 71}},
    {"latin5", "ISO-8859-9", {30, 78}},
    {"latin7", "ISO-8859-13", {20, 41, 42, 79}},
    {"cp866", "CP866", {36, 68}},
    {"cp850", "CP850", {4, 80}},
    {"cp852", "CP852", {40, 81}},
    {"tis620", "TIS-620", {18, 89}},
    {"macroman", "MACINTOSH", {39, 53}},
    {"armscii8", "ARMSCII-8", {32, 64}},
    {"geostd8", "GEORGIAN-PS", {92, 93}},
    {"hp8", "HP-ROMAN8", {6, 72}},
};

int bl_charset_cs(const char *name, const char **iconv_name) {
    if (!name) return CS_UNKNOWN;
    if (!strcmp(name, "utf8mb4") || !strcmp(name, "utf8mb3") || !strcmp(name, "utf8"))
        return CS_UTF8;
    if (!strcmp(name, "latin1")) return CS_LATIN1;
    if (!strcmp(name, "ascii")) return CS_ASCII;
    if (!strcmp(name, "binary")) return CS_BINARY;
    for (size_t i = 0; i < sizeof charsets / sizeof charsets[0]; i++)
        if (!strcmp(charsets[i].name, name)) {
            *iconv_name = charsets[i].iconv;
            return charsets[i].iconv ? CS_OTHER : CS_UNKNOWN;
        }
    return CS_UNKNOWN;
}

int bl_collation_cs(const bl_decoder *d, uint16_t id, const char **iconv_name) {
    *iconv_name = NULL;
    if (d && d->coll_names && id < BL_NCOLL && d->coll_names[id])
        return bl_charset_cs(d->coll_names[id], iconv_name);
    uint16_t base = id;
    if (id >= 1024 && id < 2048) base = (uint16_t)(id - 1024); /* MariaDB NOPAD variants */
    for (size_t i = 0; i < sizeof charsets / sizeof charsets[0]; i++)
        for (int j = 0; j < 40 && charsets[i].ids[j]; j++)
            if (charsets[i].ids[j] == base) return bl_charset_cs(charsets[i].name, iconv_name);
    if (id >= 255 && id <= 323) return CS_UTF8;   /* MySQL 8 utf8mb4_0900_* */
    if (id >= 576 && id <= 671) return CS_UTF8;   /* MariaDB utf8mb3/utf8mb4 extra collations */
    if (id >= 2048) return CS_UTF8;               /* MariaDB 10.10+ uca1400 (utf8mb3/mb4/ucs2..) */
    return CS_UNKNOWN;
}

/* -------------------------------------------------------------- types */
size_t bl_meta_len(uint8_t type) {
    switch (type) {
    case BT_FLOAT: case BT_DOUBLE: case BT_BLOB: case BT_TINY_BLOB: case BT_MEDIUM_BLOB:
    case BT_LONG_BLOB: case BT_GEOMETRY: case BT_JSON: case BT_TIMESTAMP2: case BT_DATETIME2:
    case BT_TIME2: case BT_VECTOR:
        return 1;
    case BT_VARCHAR: case BT_VAR_STRING: case BT_BIT: case BT_NEWDECIMAL: case BT_STRING:
    case BT_ENUM: case BT_SET: case BT_DECIMAL:
        return 2;
    default:
        return 0;
    }
}

void bl_column_set_type(bl_column *c, uint8_t map_type, const uint8_t *m, size_t ml) {
    uint8_t m0 = ml > 0 ? m[0] : 0, m1 = ml > 1 ? m[1] : 0;
    c->map_type = c->type = map_type;
    c->meta = (uint16_t)(m0 | m1 << 8);
    switch (map_type) {
    case BT_BLOB: case BT_TINY_BLOB: case BT_MEDIUM_BLOB: case BT_LONG_BLOB: case BT_GEOMETRY:
    case BT_JSON: case BT_VECTOR:
        c->len_bytes = m0;
        break;
    case BT_TIMESTAMP2: case BT_DATETIME2: case BT_TIME2:
        c->fsp = m0;
        break;
    case BT_VARCHAR: case BT_VAR_STRING:
        c->max_len = (uint32_t)(m0 | m1 << 8);
        break;
    case BT_NEWDECIMAL:
        c->precision = m0;
        c->scale = m1;
        break;
    case BT_STRING: case BT_ENUM: case BT_SET: {
        uint8_t real = m0;
        uint32_t len = m1;
        if ((m0 & 0x30) != 0x30) {
            real = (uint8_t)(m0 | 0x30);
            len = m1 | ((uint32_t)((m0 & 0x30) ^ 0x30) << 4);
        }
        if (real == BT_ENUM || real == BT_SET)
            c->type = real;
        else
            c->type = BT_STRING;
        c->max_len = len;
        break;
    }
    default: break;
    }
}

static bool is_numeric(uint8_t t) {
    switch (t) {
    case BT_TINY: case BT_SHORT: case BT_INT24: case BT_LONG: case BT_LONGLONG:
    case BT_NEWDECIMAL: case BT_FLOAT: case BT_DOUBLE: case BT_DECIMAL:
        return true;
    default: return false;
    }
}

static bool is_character(uint8_t t) {
    switch (t) {
    case BT_STRING: case BT_VAR_STRING: case BT_VARCHAR: case BT_BLOB: case BT_TINY_BLOB:
    case BT_MEDIUM_BLOB: case BT_LONG_BLOB:
        return true;
    default: return false;
    }
}

static void set_collation(const bl_decoder *d, bl_column *c, uint64_t coll) {
    c->collation = (uint16_t)coll;
    c->cs = (uint8_t)bl_collation_cs(d, c->collation, &c->cs_name);
    c->kind = c->cs == CS_BINARY ? BK_BINARY : BK_TEXT;
}

void bl_table_set_name(bl_table *t, uint32_t col, const char *name, size_t n) {
    if (col >= t->ncols) return;
    t->cols[col].name = arena_strndup(&t->arena, name, n);
}

void bl_table_set_labels(bl_table *t, uint32_t col, const char *const *labels, const uint32_t *lens,
                         uint32_t n) {
    if (col >= t->ncols) return;
    bl_column *c = &t->cols[col];
    c->labels = arena_alloc(&t->arena, sizeof(char *) * (n ? n : 1));
    c->label_lens = arena_alloc(&t->arena, sizeof(uint32_t) * (n ? n : 1));
    for (uint32_t i = 0; i < n; i++) {
        c->labels[i] = arena_strndup(&t->arena, labels[i], lens[i]);
        c->label_lens[i] = lens[i];
    }
    c->n_labels = n;
}

void bl_table_finish_keys(bl_table *t) {
    sbuf tmp = SBUF_INIT;
    bool all = true;
    for (uint32_t i = 0; i < t->ncols; i++) {
        bl_column *c = &t->cols[i];
        if (!c->name) {
            char nm[16];
            snprintf(nm, sizeof nm, "@%u", i + 1);
            c->name = arena_strndup(&t->arena, nm, strlen(nm));
            all = false;
        }
        sbuf_reset(&tmp);
        json_escape(&tmp, c->name, strlen(c->name));
        sbuf_addc(&tmp, ':');
        c->key_json = arena_strndup(&t->arena, tmp.data, tmp.len);
        c->key_json_len = (uint32_t)tmp.len;
    }
    t->have_names = all;
    sbuf_reset(&tmp);
    sbuf_adds(&tmp, "\"db\":");
    json_escape(&tmp, t->db, strlen(t->db));
    sbuf_adds(&tmp, ",\"table\":");
    json_escape(&tmp, t->name, strlen(t->name));
    t->dbt_json = arena_strndup(&t->arena, tmp.data, tmp.len);
    t->dbt_json_len = (uint32_t)tmp.len;
    sbuf_free(&tmp);
}

/* --------------------------------------------------- optional metadata */
enum {
    OM_SIGNEDNESS = 1, OM_DEFAULT_CHARSET, OM_COLUMN_CHARSET, OM_COLUMN_NAME, OM_SET_STR_VALUE,
    OM_ENUM_STR_VALUE, OM_GEOMETRY_TYPE, OM_SIMPLE_PRIMARY_KEY, OM_PRIMARY_KEY_WITH_PREFIX,
    OM_ENUM_AND_SET_DEFAULT_CHARSET, OM_ENUM_AND_SET_COLUMN_CHARSET, OM_COLUMN_VISIBILITY,
};

/* the index of the n-th column (0-based) among those matching pred, or -1 */
static int nth_col(bl_table *t, bool (*pred)(uint8_t), uint64_t n) {
    for (uint32_t i = 0; i < t->ncols; i++)
        if (pred(t->cols[i].type) && n-- == 0) return (int)i;
    return -1;
}
static bool is_enum_set(uint8_t t) { return t == BT_ENUM || t == BT_SET; }
static bool is_enum(uint8_t t) { return t == BT_ENUM; }
static bool is_set(uint8_t t) { return t == BT_SET; }
static bool is_geom(uint8_t t) { return t == BT_GEOMETRY; }

static int charset_field(const bl_decoder *d, bl_table *t, const uint8_t *p, size_t n, bool (*pred)(uint8_t), bool dflt) {
    size_t off = 0;
    uint64_t v, idx;
    size_t u;
    if (dflt) {
        if (!(u = bl_lenenc(p, n, &v))) return -1;
        off += u;
        for (uint32_t i = 0; i < t->ncols; i++)
            if (pred(t->cols[i].type)) set_collation(d, &t->cols[i], v);
        while (off < n) {
            if (!(u = bl_lenenc(p + off, n - off, &idx))) return -1;
            off += u;
            if (!(u = bl_lenenc(p + off, n - off, &v))) return -1;
            off += u;
            int c = nth_col(t, pred, idx);
            if (c >= 0) set_collation(d, &t->cols[c], v);
        }
    } else {
        uint64_t k = 0;
        while (off < n) {
            if (!(u = bl_lenenc(p + off, n - off, &v))) return -1;
            off += u;
            int c = nth_col(t, pred, k++);
            if (c >= 0) set_collation(d, &t->cols[c], v);
        }
    }
    return 0;
}

static int labels_field(bl_table *t, const uint8_t *p, size_t n, bool (*pred)(uint8_t)) {
    size_t off = 0, u;
    uint64_t k = 0;
    const char *lab[4096];
    uint32_t lens[4096];
    while (off < n) {
        uint64_t cnt;
        if (!(u = bl_lenenc(p + off, n - off, &cnt)) || cnt > 4096) return -1;
        off += u;
        for (uint64_t i = 0; i < cnt; i++) {
            uint64_t l;
            if (!(u = bl_lenenc(p + off, n - off, &l)) || l > n - off - u) return -1;
            off += u;
            lab[i] = (const char *)p + off;
            lens[i] = (uint32_t)l;
            off += l;
        }
        int c = nth_col(t, pred, k++);
        if (c >= 0) bl_table_set_labels(t, (uint32_t)c, lab, lens, (uint32_t)cnt);
    }
    return 0;
}

static int optional_metadata(bl_decoder *d, bl_table *t, const uint8_t *p, size_t n) {
    size_t off = 0;
    while (off < n) {
        uint8_t type = p[off++];
        uint64_t len;
        size_t u = bl_lenenc(p + off, n - off, &len);
        if (!u || len > n - off - u) return bl_error(d, "optional metadata field %u truncated", type);
        off += u;
        const uint8_t *f = p + off;
        off += len;
        int rc = 0;
        switch (type) {
        case OM_SIGNEDNESS: {
            uint32_t k = 0;
            for (uint32_t i = 0; i < t->ncols; i++) {
                if (!is_numeric(t->cols[i].type)) continue;
                if (k / 8 < len) t->cols[i].is_unsigned = (f[k / 8] >> (7 - k % 8)) & 1;
                k++;
            }
            t->have_signedness = true;
            break;
        }
        case OM_DEFAULT_CHARSET: rc = charset_field(d, t, f, len, is_character, true); t->have_charsets = true; break;
        case OM_COLUMN_CHARSET: rc = charset_field(d, t, f, len, is_character, false); t->have_charsets = true; break;
        case OM_ENUM_AND_SET_DEFAULT_CHARSET: rc = charset_field(d, t, f, len, is_enum_set, true); break;
        case OM_ENUM_AND_SET_COLUMN_CHARSET: rc = charset_field(d, t, f, len, is_enum_set, false); break;
        case OM_COLUMN_NAME: {
            size_t o = 0;
            for (uint32_t i = 0; i < t->ncols && o < len; i++) {
                uint64_t l;
                size_t uu = bl_lenenc(f + o, len - o, &l);
                if (!uu || l > len - o - uu) { rc = -1; break; }
                o += uu;
                bl_table_set_name(t, i, (const char *)f + o, l);
                o += l;
            }
            break;
        }
        case OM_SET_STR_VALUE: rc = labels_field(t, f, len, is_set); break;
        case OM_ENUM_STR_VALUE: rc = labels_field(t, f, len, is_enum); break;
        case OM_GEOMETRY_TYPE: {
            size_t o = 0;
            uint64_t k = 0, v;
            while (o < len) {
                size_t uu = bl_lenenc(f + o, len - o, &v);
                if (!uu) { rc = -1; break; }
                o += uu;
                int c = nth_col(t, is_geom, k++);
                if (c >= 0) t->cols[c].geom_type = (uint8_t)v;
            }
            break;
        }
        case OM_SIMPLE_PRIMARY_KEY:
        case OM_PRIMARY_KEY_WITH_PREFIX: {
            size_t o = 0;
            uint64_t v, pre;
            while (o < len) {
                size_t uu = bl_lenenc(f + o, len - o, &v);
                if (!uu) { rc = -1; break; }
                o += uu;
                if (v < t->ncols) t->cols[v].is_pk = true;
                if (type == OM_PRIMARY_KEY_WITH_PREFIX) {
                    uu = bl_lenenc(f + o, len - o, &pre);
                    if (!uu) { rc = -1; break; }
                    o += uu;
                }
            }
            break;
        }
        default: break; /* visibility and future fields */
        }
        if (rc) return bl_error(d, "optional metadata field %u malformed", type);
    }
    return BL_OK;
}

/* ------------------------------------------------------------- event */
/* Ask the sink whether it wants t's rows, and check a wanted table against
 * the schema once. Decided again after bl_decoder_refilter(). */
static int table_filter(bl_decoder *d, bl_table *t) {
    t->skip = d->sink && d->sink->want_table &&
              !d->sink->want_table(d->sink->ctx, t->db, t->name);
    if (d->table_hook && !t->skip && !t->checked) {
        char e[BL_ERR_LEN];
        e[0] = '\0';
        if (d->table_hook(d->hook_ctx, t, e, sizeof e) != BL_OK) return bl_error(d, "%s", e);
        t->checked = true;
    }
    t->filter_gen = d->filter_gen;
    return BL_OK;
}

int bl_table_map(bl_decoder *d, const uint8_t *b, size_t n) {
    size_t idlen = d->post_header_len[BL_TABLE_MAP - 1] == 6 ? 4 : 6;
    if (n < idlen + 2) return bl_error(d, "too short");
    uint64_t id = idlen == 4 ? bl_u32(b) : bl_u48(b);
    bl_table *old = bl_table_find(d, id);
    if (old && old->raw.len == n && memcmp(old->raw.data, b, n) == 0 &&
        old->schema_gen == d->schema_gen)
        return old->filter_gen == d->filter_gen ? BL_OK : table_filter(d, old);

    size_t off = idlen + 2;
    if (off >= n) return bl_error(d, "truncated");
    uint8_t dblen = b[off++];
    if (off + dblen + 2 > n) return bl_error(d, "truncated database name");
    const uint8_t *db = b + off;
    off += dblen + 1;
    uint8_t tlen = b[off++];
    if (off + tlen + 1 > n) return bl_error(d, "truncated table name");
    const uint8_t *tname = b + off;
    off += tlen + 1;
    uint64_t ncols;
    size_t u = bl_lenenc(b + off, n - off, &ncols);
    if (!u || ncols > 4096 || off + u + ncols > n) return bl_error(d, "bad column count");
    off += u;
    const uint8_t *types = b + off;
    off += ncols;
    uint64_t mlen;
    u = bl_lenenc(b + off, n - off, &mlen);
    if (!u || mlen > n - off - u) return bl_error(d, "bad metadata length");
    off += u;
    const uint8_t *meta = b + off;
    off += mlen;
    size_t nb = (ncols + 7) / 8;
    if (off + nb > n) return bl_error(d, "truncated null bitmap");
    const uint8_t *nulls = b + off;
    off += nb;

    bl_table *t = xcalloc(1, sizeof *t);
    t->id = id;
    t->db = arena_strndup(&t->arena, (const char *)db, dblen);
    t->name = arena_strndup(&t->arena, (const char *)tname, tlen);
    t->ncols = (uint32_t)ncols;
    t->cols = xcalloc(ncols ? ncols : 1, sizeof *t->cols);
    sbuf_init(&t->raw);
    size_t mo = 0;
    for (uint32_t i = 0; i < ncols; i++) {
        bl_column *c = &t->cols[i];
        size_t ml = bl_meta_len(types[i]);
        if (mo + ml > mlen) {
            table_free(t);
            return bl_error(d, "column metadata truncated at column %u", i + 1);
        }
        bl_column_set_type(c, types[i], meta + mo, ml);
        mo += ml;
        c->nullable = (nulls[i / 8] >> (i % 8)) & 1;
        if (is_character(c->type)) {
            c->kind = BK_TEXT;
            c->cs = CS_UTF8; /* until the metadata or the schema says otherwise */
        }
    }
    if (optional_metadata(d, t, b + off, n - off) != BL_OK) {
        table_free(t);
        return BL_ERR;
    }
    bool any_char = false, any_num = false;
    for (uint32_t i = 0; i < t->ncols; i++) {
        any_char |= is_character(t->cols[i].type);
        any_num |= is_numeric(t->cols[i].type);
    }
    if (!any_char) t->have_charsets = true;
    if (!any_num) t->have_signedness = true;
    bl_table_finish_keys(t);
    sbuf_add(&t->raw, b, n);
    t->schema_gen = d->schema_gen;
    if (table_filter(d, t) != BL_OK) {
        table_free(t);
        return BL_ERR;
    }

    /* replace the old entry */
    bl_table **pp = &d->tables[id & 255];
    while (*pp && (*pp)->id != id) pp = &(*pp)->next;
    if (*pp) {
        bl_table *o = *pp;
        *pp = o->next;
        table_free(o);
        d->n_tables--;
    }
    t->next = d->tables[id & 255];
    d->tables[id & 255] = t;
    d->n_tables++;
    return BL_OK;
}
