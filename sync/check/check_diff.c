/* check_diff: first differing field path of two documents (check_diff.h). */
#include "sync/check/check_diff.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "json_exact.h"
#include "search/content_hash.h"
#include "sync/mapping/index_mapping.h"

static bool is_delivery_field(const char *k) {
    return !strcmp(k, INDEX_MAPPING_VERSION_FIELD) || !strcmp(k, CONTENT_HASH_FIELD) ||
           !strcmp(k, KEY_HASH_FIELD);
}

/* significant digits of a JSON number's text */
static int digits(const char *s) {
    int n = 0;
    bool lead = true;
    for (; *s && *s != 'e' && *s != 'E'; s++) {
        if (*s < '0' || *s > '9') continue;
        if (lead && *s == '0') continue;
        lead = false;
        n++;
    }
    return n;
}

/* by text, or by value where a double holds both exactly (at most 15
 * significant digits: 12.50 == 12.5); never by value past that, where two
 * different DECIMALs or BIGINTs would become one double */
static bool numbers_equal(const char *a, const char *b) {
    if (!strcmp(a, b)) return true;
    if (digits(a) > 15 || digits(b) > 15) return false;
    char *ea, *eb;
    double x = strtod(a, &ea), y = strtod(b, &eb);
    if (*ea || *eb || !isfinite(x) || !isfinite(y)) return false;
    return x == y;
}

static void path_key(sbuf *path, const char *k) {
    if (path->len) sbuf_addc(path, '.');
    sbuf_adds(path, k);
}

/* 0 equal; 1 differ, path says where */
static int diff(const cJSON *a, const cJSON *b, sbuf *path, bool top) {
    bool an = cJSON_IsRaw(a), bn = cJSON_IsRaw(b);
    if (an || bn) return an && bn && numbers_equal(a->valuestring, b->valuestring) ? 0 : 1;
    if ((a->type & 0xff) != (b->type & 0xff)) return 1;
    if (cJSON_IsString(a)) return strcmp(a->valuestring, b->valuestring) ? 1 : 0;
    if (cJSON_IsArray(a)) {
        int na = cJSON_GetArraySize(a), nb = cJSON_GetArraySize(b);
        const cJSON *x = a->child, *y = b->child;
        for (int i = 0; x && y; i++, x = x->next, y = y->next) {
            size_t mark = path->len;
            sbuf_printf(path, "[%d]", i);
            if (diff(x, y, path, false)) return 1;
            path->len = mark;
            path->data[mark] = '\0';
        }
        if (na != nb) {
            sbuf_printf(path, "[%d]", na < nb ? na : nb);
            return 1;
        }
        return 0;
    }
    if (cJSON_IsObject(a)) {
        for (const cJSON *x = a->child; x; x = x->next) {
            if (top && is_delivery_field(x->string)) continue;
            const cJSON *y = cJSON_GetObjectItemCaseSensitive(b, x->string);
            size_t mark = path->len;
            path_key(path, x->string);
            if (!y || diff(x, y, path, false)) return 1;
            path->len = mark;
            path->data[mark] = '\0';
        }
        for (const cJSON *y = b->child; y; y = y->next) {
            if (top && is_delivery_field(y->string)) continue;
            if (!cJSON_GetObjectItemCaseSensitive(a, y->string)) {
                path_key(path, y->string);
                return 1;
            }
        }
        return 0;
    }
    return 0; /* null, true, false: the types matched */
}

bool check_diff(const char *built, size_t blen, const char *engine, size_t elen, sbuf *path) {
    sbuf_reset(path);
    cJSON *a = json_exact_parse(built, blen), *b = json_exact_parse(engine, elen);
    bool differ;
    if (!a || !b) {
        sbuf_adds(path, "-");
        differ = true;
    } else {
        differ = diff(a, b, path, true) != 0;
        if (!differ) sbuf_reset(path);
    }
    cJSON_Delete(a);
    cJSON_Delete(b);
    return differ;
}
