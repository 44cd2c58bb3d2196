/* json_binary: MySQL's binary JSON (column type 245) → JSON text, and the
 * JSON diffs of PARTIAL_UPDATE_ROWS applied to a document.
 *
 * Format: a type byte, then small (16-bit offsets) or large (32-bit) objects
 * and arrays, inlined literals and INT16/UINT16 (INT32/UINT32 too in large
 * containers), 7-bit variable string lengths, and opaque values (DECIMAL,
 * temporal values as packed int64, anything else as base64) printed the way
 * `CAST(col AS CHAR)` prints them. Every offset is bounds-checked: a corrupt
 * document is an error, never a read outside the value. */
#include <cjson/cJSON.h>

#include "json_exact.h"
#include <stdio.h>
#include <stdlib.h>

#include "binlog/binlog.h"

enum {
    J_SMALL_OBJ = 0, J_LARGE_OBJ = 1, J_SMALL_ARR = 2, J_LARGE_ARR = 3, J_LITERAL = 4,
    J_INT16 = 5, J_UINT16 = 6, J_INT32 = 7, J_UINT32 = 8, J_INT64 = 9, J_UINT64 = 10,
    J_DOUBLE = 11, J_STRING = 12, J_OPAQUE = 15,
};

static int value(sbuf *o, uint8_t type, const uint8_t *p, size_t n, int depth);

static size_t varlen(const uint8_t *p, size_t n, uint64_t *v) {
    uint64_t x = 0;
    for (size_t i = 0; i < 5 && i < n; i++) {
        x |= (uint64_t)(p[i] & 0x7f) << (7 * i);
        if (!(p[i] & 0x80)) {
            *v = x;
            return i + 1;
        }
    }
    return 0;
}

static void put_i(sbuf *o, int64_t v) {
    char b[24];
    sbuf_add(o, b, (size_t)fmt_i64(b, v));
}
static void put_u(sbuf *o, uint64_t v) {
    char b[24];
    sbuf_add(o, b, (size_t)fmt_u64(b, v));
}

static int opaque(sbuf *o, const uint8_t *p, size_t n) {
    if (n < 1) return -1;
    uint8_t ft = p[0];
    uint64_t len;
    size_t u = varlen(p + 1, n - 1, &len);
    if (!u || len > n - 1 - u) return -1;
    const uint8_t *d = p + 1 + u;
    char buf[96];
    switch (ft) {
    case BT_NEWDECIMAL: {
        if (len < 2) return -1;
        int l = bl_decimal_text(d + 2, len - 2, d[0], d[1], buf, sizeof buf);
        if (l < 0) return -1;
        sbuf_add(o, buf, (size_t)l);
        return 0;
    }
    case BT_DATE: case BT_DATETIME: case BT_TIMESTAMP: case BT_TIME:
    case BT_DATETIME2: case BT_TIMESTAMP2: case BT_TIME2: {
        if (len < 8) return -1;
        int64_t packed = (int64_t)bl_u64(d);
        bool neg = packed < 0;
        uint64_t a = neg ? (uint64_t)-packed : (uint64_t)packed;
        uint64_t frac = a % (1ULL << 24), ip = a >> 24;
        int l;
        if (ft == BT_TIME || ft == BT_TIME2) {
            l = snprintf(buf, sizeof buf, "\"%s%02u:%02u:%02u.%06u\"", neg ? "-" : "",
                         (unsigned)((ip >> 12) & 0x3ff), (unsigned)((ip >> 6) & 63),
                         (unsigned)(ip & 63), (unsigned)frac);
        } else {
            uint64_t ymd = ip >> 17, ym = ymd >> 5, hms = ip & 0x1ffff;
            if (ft == BT_DATE)
                l = snprintf(buf, sizeof buf, "\"%04u-%02u-%02u\"", (unsigned)(ym / 13),
                             (unsigned)(ym % 13), (unsigned)(ymd & 31));
            else
                l = snprintf(buf, sizeof buf, "\"%04u-%02u-%02u %02u:%02u:%02u.%06u\"",
                             (unsigned)(ym / 13), (unsigned)(ym % 13), (unsigned)(ymd & 31),
                             (unsigned)(hms >> 12), (unsigned)((hms >> 6) & 63),
                             (unsigned)(hms & 63), (unsigned)frac);
        }
        sbuf_add(o, buf, (size_t)l);
        return 0;
    }
    default: {
        int l = snprintf(buf, sizeof buf, "base64:type%u:", ft);
        sbuf_addc(o, '"');
        sbuf_add(o, buf, (size_t)l);
        size_t before = o->len;
        bl_base64(o, d, len);
        /* bl_base64 wrote its own quotes: drop the opening one */
        memmove(o->data + before, o->data + before + 1, o->len - before - 1);
        o->len--;
        o->data[o->len] = '\0';
        return 0;
    }
    }
}

static int container(sbuf *o, bool obj, bool large, const uint8_t *p, size_t n, int depth) {
    size_t w = large ? 4 : 2;
    if (depth > 150) return -1;
    if (n < 2 * w) return -1;
    uint32_t count = large ? bl_u32(p) : bl_u16(p);
    uint32_t size = large ? bl_u32(p + w) : bl_u16(p + w);
    if (size > n) return -1;
    n = size;
    size_t key_entry = w + 2, val_entry = 1 + w;
    size_t hdr = 2 * w + (obj ? (size_t)count * key_entry : 0) + (size_t)count * val_entry;
    if (hdr > n) return -1;
    sbuf_addc(o, obj ? '{' : '[');
    for (uint32_t i = 0; i < count; i++) {
        if (i) sbuf_addc(o, ',');
        if (obj) {
            const uint8_t *ke = p + 2 * w + (size_t)i * key_entry;
            uint32_t koff = large ? bl_u32(ke) : bl_u16(ke);
            uint16_t klen = bl_u16(ke + w);
            if ((size_t)koff + klen > n) return -1;
            json_escape(o, (const char *)p + koff, klen);
            sbuf_addc(o, ':');
        }
        const uint8_t *ve = p + 2 * w + (obj ? (size_t)count * key_entry : 0) + (size_t)i * val_entry;
        uint8_t t = ve[0];
        const uint8_t *vp = ve + 1;
        switch (t) {
        case J_LITERAL:
            if (vp[0] == 0) sbuf_add(o, "null", 4);
            else if (vp[0] == 1) sbuf_add(o, "true", 4);
            else if (vp[0] == 2) sbuf_add(o, "false", 5);
            else return -1;
            continue;
        case J_INT16: put_i(o, (int16_t)bl_u16(vp)); continue;
        case J_UINT16: put_u(o, bl_u16(vp)); continue;
        case J_INT32: if (large) { put_i(o, (int32_t)bl_u32(vp)); continue; } break;
        case J_UINT32: if (large) { put_u(o, bl_u32(vp)); continue; } break;
        default: break;
        }
        uint32_t voff = large ? bl_u32(vp) : bl_u16(vp);
        if (voff >= n) return -1;
        if (value(o, t, p + voff, n - voff, depth + 1)) return -1;
    }
    sbuf_addc(o, obj ? '}' : ']');
    return 0;
}

static int value(sbuf *o, uint8_t type, const uint8_t *p, size_t n, int depth) {
    switch (type) {
    case J_SMALL_OBJ: return container(o, true, false, p, n, depth);
    case J_LARGE_OBJ: return container(o, true, true, p, n, depth);
    case J_SMALL_ARR: return container(o, false, false, p, n, depth);
    case J_LARGE_ARR: return container(o, false, true, p, n, depth);
    case J_LITERAL:
        if (n < 1) return -1;
        if (p[0] == 0) sbuf_add(o, "null", 4);
        else if (p[0] == 1) sbuf_add(o, "true", 4);
        else if (p[0] == 2) sbuf_add(o, "false", 5);
        else return -1;
        return 0;
    case J_INT16: if (n < 2) return -1; put_i(o, (int16_t)bl_u16(p)); return 0;
    case J_UINT16: if (n < 2) return -1; put_u(o, bl_u16(p)); return 0;
    case J_INT32: if (n < 4) return -1; put_i(o, (int32_t)bl_u32(p)); return 0;
    case J_UINT32: if (n < 4) return -1; put_u(o, bl_u32(p)); return 0;
    case J_INT64: if (n < 8) return -1; put_i(o, (int64_t)bl_u64(p)); return 0;
    case J_UINT64: if (n < 8) return -1; put_u(o, bl_u64(p)); return 0;
    case J_DOUBLE: {
        if (n < 8) return -1;
        double d;
        memcpy(&d, p, 8);
        char b[40];
        sbuf_add(o, b, (size_t)fmt_double(b, d));
        return 0;
    }
    case J_STRING: {
        uint64_t l;
        size_t u = varlen(p, n, &l);
        if (!u || l > n - u) return -1;
        json_escape(o, (const char *)p + u, (size_t)l);
        return 0;
    }
    case J_OPAQUE: return opaque(o, p, n);
    default: return -1;
    }
}

int bl_json_binary(sbuf *out, const uint8_t *p, size_t n) {
    if (n == 0) {
        sbuf_add(out, "null", 4);
        return BL_OK;
    }
    size_t start = out->len;
    if (value(out, p[0], p + 1, n - 1, 0) != 0) {
        out->len = start;
        if (out->data) out->data[start] = '\0';
        return BL_ERR;
    }
    return BL_OK;
}

/* ------------------------------------------------------------- diffs */
/* One step of a MySQL JSON path: .key, ."quoted key" or [index] */
struct step {
    bool is_index;
    long index;
    char key[256];
};

static int parse_path(const char *s, size_t n, struct step *steps, int max) {
    size_t i = 0;
    int k = 0;
    if (n < 1 || s[0] != '$') return -1;
    i = 1;
    while (i < n) {
        if (k >= max) return -1;
        struct step *st = &steps[k++];
        st->is_index = false;
        if (s[i] == '.') {
            i++;
            size_t kl = 0;
            if (i < n && s[i] == '"') {
                i++;
                while (i < n && s[i] != '"') {
                    if (s[i] == '\\' && i + 1 < n) i++;
                    if (kl < sizeof st->key - 1) st->key[kl++] = s[i];
                    i++;
                }
                if (i >= n) return -1;
                i++;
            } else {
                while (i < n && s[i] != '.' && s[i] != '[') {
                    if (kl < sizeof st->key - 1) st->key[kl++] = s[i];
                    i++;
                }
            }
            st->key[kl] = '\0';
        } else if (s[i] == '[') {
            i++;
            st->is_index = true;
            st->index = 0;
            while (i < n && s[i] >= '0' && s[i] <= '9') st->index = st->index * 10 + (s[i++] - '0');
            if (i >= n || s[i] != ']') return -1;
            i++;
        } else {
            return -1;
        }
    }
    return k;
}

int bl_json_apply_diffs(sbuf *out, const char *doc, size_t doc_len, const uint8_t *d, size_t n) {
    cJSON *root = json_exact_parse(doc, doc_len);
    if (!root) return BL_ERR;
    sbuf val = SBUF_INIT;
    int rc = BL_ERR;
    size_t off = 0;
    while (off < n) {
        uint8_t op = d[off++];
        uint64_t pl;
        size_t u = bl_lenenc(d + off, n - off, &pl);
        if (!u || pl > n - off - u) goto done;
        off += u;
        struct step steps[64];
        int ns = parse_path((const char *)d + off, (size_t)pl, steps, 64);
        off += pl;
        if (ns < 1) goto done;
        cJSON *nv = NULL;
        if (op != 2) {
            uint64_t vl;
            u = bl_lenenc(d + off, n - off, &vl);
            if (!u || vl > n - off - u) goto done;
            off += u;
            sbuf_reset(&val);
            if (bl_json_binary(&val, d + off, (size_t)vl) != BL_OK) goto done;
            off += vl;
            nv = json_exact_parse(val.data, val.len);
            if (!nv) goto done;
        }
        cJSON *parent = root;
        for (int i = 0; i < ns - 1 && parent; i++)
            parent = steps[i].is_index ? cJSON_GetArrayItem(parent, (int)steps[i].index)
                                       : cJSON_GetObjectItemCaseSensitive(parent, steps[i].key);
        struct step *last = &steps[ns - 1];
        if (!parent) { cJSON_Delete(nv); goto done; }
        if (last->is_index && cJSON_IsArray(parent)) {
            int sz = cJSON_GetArraySize(parent);
            if (op == 2) cJSON_DeleteItemFromArray(parent, (int)last->index);
            else if (op == 1 && last->index >= sz) cJSON_AddItemToArray(parent, nv);
            else if (op == 1) cJSON_InsertItemInArray(parent, (int)last->index, nv);
            else if (last->index < sz) cJSON_ReplaceItemInArray(parent, (int)last->index, nv);
            else cJSON_Delete(nv);
        } else if (!last->is_index && cJSON_IsObject(parent)) {
            if (op == 2) cJSON_DeleteItemFromObjectCaseSensitive(parent, last->key);
            else if (cJSON_GetObjectItemCaseSensitive(parent, last->key))
                cJSON_ReplaceItemInObjectCaseSensitive(parent, last->key, nv);
            else cJSON_AddItemToObject(parent, last->key, nv);
        } else {
            cJSON_Delete(nv);
            goto done;
        }
    }
    {
        char *s = cJSON_PrintUnformatted(root);
        if (!s) goto done;
        sbuf_adds(out, s);
        cJSON_free(s);
        rc = BL_OK;
    }
done:
    sbuf_free(&val);
    cJSON_Delete(root);
    return rc;
}
