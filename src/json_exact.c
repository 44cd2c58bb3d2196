/* json_exact: exact-number JSON parser into cJSON trees (see json_exact.h). */
#include "json_exact.h"

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sbuf.h"

#define MAX_DEPTH 512

struct jp {
    const char *s;
    size_t n, i;
    sbuf str;     /* scratch for unescaped strings */
    bool nul_ok;  /* \u0000 allowed (json_exact_parse_nul) */
    bool has_nul; /* the string in str holds one */
};

static void ws(struct jp *p) {
    while (p->i < p->n &&
           (p->s[p->i] == ' ' || p->s[p->i] == '\t' || p->s[p->i] == '\n' || p->s[p->i] == '\r'))
        p->i++;
}

static int hex4(const char *s, uint32_t *out) {
    uint32_t v = 0;
    for (int k = 0; k < 4; k++) {
        char c = s[k];
        v <<= 4;
        if (c >= '0' && c <= '9') v |= (uint32_t)(c - '0');
        else if (c >= 'a' && c <= 'f') v |= (uint32_t)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F') v |= (uint32_t)(c - 'A' + 10);
        else return -1;
    }
    *out = v;
    return 0;
}

static void put_utf8(sbuf *b, uint32_t cp) {
    char u[4];
    if (cp < 0x80) {
        sbuf_addc(b, (char)cp);
    } else if (cp < 0x800) {
        u[0] = (char)(0xC0 | cp >> 6), u[1] = (char)(0x80 | (cp & 63));
        sbuf_add(b, u, 2);
    } else if (cp < 0x10000) {
        u[0] = (char)(0xE0 | cp >> 12), u[1] = (char)(0x80 | (cp >> 6 & 63));
        u[2] = (char)(0x80 | (cp & 63));
        sbuf_add(b, u, 3);
    } else {
        u[0] = (char)(0xF0 | cp >> 18), u[1] = (char)(0x80 | (cp >> 12 & 63));
        u[2] = (char)(0x80 | (cp >> 6 & 63)), u[3] = (char)(0x80 | (cp & 63));
        sbuf_add(b, u, 4);
    }
}

/* Parse a string at p->i (on the opening quote) into p->str. */
static int parse_string(struct jp *p) {
    sbuf_reset(&p->str);
    p->has_nul = false;
    p->i++;
    while (p->i < p->n) {
        char c = p->s[p->i++];
        if (c == '"') {
            sbuf_grow(&p->str, 0); /* NUL-terminated even when empty */
            return 0;
        }
        if ((unsigned char)c < 0x20) return -1;
        if (c != '\\') {
            sbuf_addc(&p->str, c);
            continue;
        }
        if (p->i >= p->n) return -1;
        c = p->s[p->i++];
        switch (c) {
        case '"': case '\\': case '/': sbuf_addc(&p->str, c); break;
        case 'b': sbuf_addc(&p->str, '\b'); break;
        case 'f': sbuf_addc(&p->str, '\f'); break;
        case 'n': sbuf_addc(&p->str, '\n'); break;
        case 'r': sbuf_addc(&p->str, '\r'); break;
        case 't': sbuf_addc(&p->str, '\t'); break;
        case 'u': {
            uint32_t cp, lo;
            if (p->n - p->i < 4 || hex4(p->s + p->i, &cp) < 0) return -1;
            p->i += 4;
            if (cp >= 0xD800 && cp < 0xDC00) {
                if (p->n - p->i < 6 || p->s[p->i] != '\\' || p->s[p->i + 1] != 'u' ||
                    hex4(p->s + p->i + 2, &lo) < 0 || lo < 0xDC00 || lo > 0xDFFF)
                    return -1;
                p->i += 6;
                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            } else if (cp >= 0xDC00 && cp < 0xE000) {
                return -1;
            }
            if (cp == 0) {
                /* cJSON strings are NUL-terminated: only a reader that asks
                 * for the byte count (json_exact_strlen) may see one */
                if (!p->nul_ok) return -1;
                p->has_nul = true;
            }
            put_utf8(&p->str, cp);
            break;
        }
        default: return -1;
        }
    }
    return -1;
}

static bool lit(struct jp *p, const char *w) {
    size_t l = strlen(w);
    if (p->n - p->i < l || memcmp(p->s + p->i, w, l) != 0) return false;
    p->i += l;
    return true;
}

static cJSON *parse_value(struct jp *p, int depth);

/* the string in p->str as an item; one holding NUL bytes keeps all of its
 * bytes, their count in valueint (unused by cJSON for strings) */
static cJSON *string_item(struct jp *p) {
    if (!p->has_nul) return cJSON_CreateString(p->str.data);
    if (p->str.len > (size_t)INT_MAX) return NULL;
    cJSON *it = cJSON_CreateString("");
    char *buf = cJSON_malloc(p->str.len + 1);
    if (!it || !buf) {
        cJSON_Delete(it);
        cJSON_free(buf);
        return NULL;
    }
    memcpy(buf, p->str.data, p->str.len);
    buf[p->str.len] = '\0';
    cJSON_free(it->valuestring);
    it->valuestring = buf;
    it->valueint = (int)p->str.len;
    return it;
}

static cJSON *parse_number(struct jp *p) {
    size_t st = p->i;
    if (p->i < p->n && p->s[p->i] == '-') p->i++;
    if (p->i >= p->n) return NULL;
    if (p->s[p->i] == '0') {
        p->i++;
    } else if (p->s[p->i] >= '1' && p->s[p->i] <= '9') {
        while (p->i < p->n && p->s[p->i] >= '0' && p->s[p->i] <= '9') p->i++;
    } else {
        return NULL;
    }
    if (p->i < p->n && p->s[p->i] == '.') {
        size_t d = ++p->i;
        while (p->i < p->n && p->s[p->i] >= '0' && p->s[p->i] <= '9') p->i++;
        if (p->i == d) return NULL;
    }
    if (p->i < p->n && (p->s[p->i] == 'e' || p->s[p->i] == 'E')) {
        p->i++;
        if (p->i < p->n && (p->s[p->i] == '+' || p->s[p->i] == '-')) p->i++;
        size_t d = p->i;
        while (p->i < p->n && p->s[p->i] >= '0' && p->s[p->i] <= '9') p->i++;
        if (p->i == d) return NULL;
    }
    char *txt = xstrndup(p->s + st, p->i - st);
    cJSON *r = cJSON_CreateRaw(txt);
    free(txt);
    return r;
}

static cJSON *parse_value(struct jp *p, int depth) {
    if (depth > MAX_DEPTH) return NULL;
    ws(p);
    if (p->i >= p->n) return NULL;
    char c = p->s[p->i];
    if (c == '{') {
        cJSON *o = cJSON_CreateObject();
        p->i++;
        ws(p);
        if (p->i < p->n && p->s[p->i] == '}') {
            p->i++;
            return o;
        }
        for (;;) {
            ws(p);
            if (p->i >= p->n || p->s[p->i] != '"' || parse_string(p) < 0) break;
            char *key = xstrdup(p->str.data);
            ws(p);
            cJSON *v = NULL;
            if (p->i < p->n && p->s[p->i] == ':') {
                p->i++;
                v = parse_value(p, depth + 1);
            }
            if (!v) {
                free(key);
                break;
            }
            cJSON_AddItemToObject(o, key, v);
            free(key);
            ws(p);
            if (p->i < p->n && p->s[p->i] == ',') {
                p->i++;
                continue;
            }
            if (p->i < p->n && p->s[p->i] == '}') {
                p->i++;
                return o;
            }
            break;
        }
        cJSON_Delete(o);
        return NULL;
    }
    if (c == '[') {
        cJSON *a = cJSON_CreateArray();
        p->i++;
        ws(p);
        if (p->i < p->n && p->s[p->i] == ']') {
            p->i++;
            return a;
        }
        for (;;) {
            cJSON *v = parse_value(p, depth + 1);
            if (!v) break;
            cJSON_AddItemToArray(a, v);
            ws(p);
            if (p->i < p->n && p->s[p->i] == ',') {
                p->i++;
                continue;
            }
            if (p->i < p->n && p->s[p->i] == ']') {
                p->i++;
                return a;
            }
            break;
        }
        cJSON_Delete(a);
        return NULL;
    }
    if (c == '"') return parse_string(p) < 0 ? NULL : string_item(p);
    if (lit(p, "true")) return cJSON_CreateTrue();
    if (lit(p, "false")) return cJSON_CreateFalse();
    if (lit(p, "null")) return cJSON_CreateNull();
    return parse_number(p);
}

static cJSON *parse_top(const char *s, size_t n, size_t *errpos, bool nul_ok) {
    struct jp p = {s, n, 0, SBUF_INIT, nul_ok, false};
    cJSON *v = parse_value(&p, 0);
    ws(&p);
    if (v && p.i != n) {
        cJSON_Delete(v);
        v = NULL;
    }
    if (!v && errpos) *errpos = p.i;
    sbuf_free(&p.str);
    return v;
}

cJSON *json_exact_parse_at(const char *s, size_t n, size_t *errpos) {
    return parse_top(s, n, errpos, false);
}

cJSON *json_exact_parse(const char *s, size_t n) { return parse_top(s, n, NULL, false); }

cJSON *json_exact_parse_nul(const char *s, size_t n, size_t *errpos) {
    return parse_top(s, n, errpos, true);
}

size_t json_exact_strlen(const cJSON *j) {
    if (!j || !j->valuestring) return 0;
    return cJSON_IsString(j) && j->valueint > 0 ? (size_t)j->valueint : strlen(j->valuestring);
}

cJSON *json_exact_object(const char *body, size_t len, const char *example, char *err,
                         size_t errlen) {
    cJSON *j = body && len ? json_exact_parse(body, len) : NULL;
    if (j && cJSON_IsObject(j)) return j;
    cJSON_Delete(j);
    errf(err, errlen, "the body must be a JSON object%s", example);
    return NULL;
}
