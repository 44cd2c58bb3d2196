/* route: endpoint matching and body parsing of the admin API (see route.h). */
#include "route.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_exact.h"
#include "sbuf.h"

bool route_alias_valid(const char *s, size_t n) {
    if (n == 0 || n > ROUTE_ALIAS_MAX) return false;
    if (n == 1 && s[0] == '.') return false;
    if (n == 2 && s[0] == '.' && s[1] == '.') return false;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '.' || c == '-'))
            return false;
    }
    return true;
}

/* the route of a path whose ids per method are g(et), p(ost), u (put), d(elete) */
static void set4(struct route *r, const char *method, enum route_id g, enum route_id p,
                 enum route_id u, enum route_id d) {
    enum route_id id = ROUTE_NOT_FOUND;
    if (!strcmp(method, "GET") || !strcmp(method, "HEAD")) id = g;
    else if (!strcmp(method, "POST")) id = p;
    else if (!strcmp(method, "PUT")) id = u;
    else if (!strcmp(method, "DELETE")) id = d;
    if (id != ROUTE_NOT_FOUND) {
        r->id = id;
        r->mutating = strcmp(method, "GET") && strcmp(method, "HEAD");
        return;
    }
    r->id = ROUTE_BAD_METHOD;
    static const char *const allow[16] = {
        "", "GET, HEAD", "POST", "GET, HEAD, POST", "PUT", "GET, HEAD, PUT", "POST, PUT",
        "GET, HEAD, POST, PUT", "DELETE", "GET, HEAD, DELETE", "POST, DELETE",
        "GET, HEAD, POST, DELETE", "PUT, DELETE", "GET, HEAD, PUT, DELETE",
        "POST, PUT, DELETE", "GET, HEAD, POST, PUT, DELETE"};
    r->allow = allow[(g ? 1 : 0) | (p ? 2 : 0) | (u ? 4 : 0) | (d ? 8 : 0)];
}

static void set(struct route *r, const char *method, enum route_id get_id, enum route_id post_id) {
    set4(r, method, get_id, post_id, ROUTE_NOT_FOUND, ROUTE_NOT_FOUND);
}

/* a MySQL database or table name as the API takes it: 1..64 bytes of
 * [A-Za-z0-9_$] (names with other characters are listed, but not routed) */
static bool ident_valid(const char *s, size_t n) {
    if (n == 0 || n > 64) return false;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '$'))
            return false;
    }
    return true;
}

static bool word_id_valid(const char *s, size_t n) {
    if (n == 0 || n > 18 || s[0] == '0') return false;
    for (size_t i = 0; i < n; i++)
        if (s[i] < '0' || s[i] > '9') return false;
    return true;
}

/* the pages outside the API: /metrics, the dictionaries, the login page,
 * the web UI ("/" and its files under /ui/, web/ui_assets.c says which
 * exist; read-only, behind the session or token like the API). false: not
 * one of them */
static bool match_page(const char *method, const char *path, struct route *out) {
    if (!strcmp(path, "/metrics")) {
        set(out, method, ROUTE_METRICS, ROUTE_NOT_FOUND);
        return true;
    }
    if (!strcmp(path, "/dict/ext.txt") || !strcmp(path, "/dict/stop.txt")) {
        set(out, method, ROUTE_DICT, ROUTE_NOT_FOUND);
        out->file = path[6] == 'e' ? "ext" : "stop";
        out->public = true;
        return true;
    }
    if (!strcmp(path, "/login") || !strcmp(path, "/login.js")) {
        set(out, method, ROUTE_LOGIN_PAGE, ROUTE_NOT_FOUND);
        out->file = path[6] ? "js" : "html";
        out->public = true;
        return true;
    }
    if (!strcmp(path, "/") || !strncmp(path, "/ui/", 4)) {
        set(out, method, ROUTE_UI, ROUTE_NOT_FOUND);
        out->file = "ui";
        return true;
    }
    return false;
}

/* the API's paths without a parameter (after /api/v1/): the route of GET
 * (and HEAD) and of POST; public: answered without a session */
static const struct {
    const char *path;
    enum route_id get, post;
    bool public;
} api_fixed[] = {
    {"status", ROUTE_STATUS, ROUTE_NOT_FOUND, false},
    {"indices", ROUTE_INDICES, ROUTE_NOT_FOUND, false},
    {"nodes", ROUTE_NODES, ROUTE_NOT_FOUND, false},
    {"rebalance", ROUTE_NOT_FOUND, ROUTE_REBALANCE, false},
    {"live", ROUTE_LIVE, ROUTE_NOT_FOUND, false},
    {"checks", ROUTE_CHECKS, ROUTE_NOT_FOUND, false},
    {"delayed/runs", ROUTE_DELAYED_RUNS, ROUTE_NOT_FOUND, false},
    {"delayed/relation-tops", ROUTE_RELATION_TOPS, ROUTE_NOT_FOUND, false},
    {"delayed/snapshots", ROUTE_DELAYED_SNAPSHOTS, ROUTE_NOT_FOUND, false},
    {"login", ROUTE_NOT_FOUND, ROUTE_LOGIN, true},
    {"logout", ROUTE_NOT_FOUND, ROUTE_LOGOUT, false},
    {"session", ROUTE_SESSION, ROUTE_NOT_FOUND, false},
    {"words", ROUTE_WORDS_LIST, ROUTE_WORD_CREATE, false},
    {"dead-letters", ROUTE_DEAD_LETTERS_LIST, ROUTE_NOT_FOUND, false},
    {"dead-letters/replay", ROUTE_NOT_FOUND, ROUTE_DEAD_LETTERS_REPLAY, false},
    {"topics", ROUTE_TOPICS_LIST, ROUTE_TOPIC_ADD, false},
    {"sources", ROUTE_SOURCES_LIST, ROUTE_SOURCE_ADD, false},
    {"sync-log", ROUTE_SYNC_LOG, ROUTE_NOT_FOUND, false},
    {"mapping", ROUTE_MAPPING_GET, ROUTE_NOT_FOUND, false},
    {"mapping/plan", ROUTE_NOT_FOUND, ROUTE_MAPPING_PLAN, false},
    {"mapping/apply", ROUTE_NOT_FOUND, ROUTE_MAPPING_APPLY, false},
    {"source/tables", ROUTE_SOURCE_TABLES, ROUTE_NOT_FOUND, false},
};

/* p past prefix, or NULL when it does not start with it */
static const char *after(const char *p, const char *prefix) {
    size_t n = strlen(prefix);
    return strncmp(p, prefix, n) ? NULL : p + n;
}

/* words/<id> and words/<id>/publish */
static void match_word(const char *method, const char *p, struct route *out) {
    const char *slash = strchr(p, '/');
    size_t n = slash ? (size_t)(slash - p) : strlen(p);
    if (!word_id_valid(p, n)) return;
    if (!slash) set4(out, method, ROUTE_WORD_GET, ROUTE_NOT_FOUND, ROUTE_WORD_UPDATE,
                     ROUTE_WORD_DELETE);
    else if (!strcmp(slash, "/publish")) set(out, method, ROUTE_NOT_FOUND, ROUTE_WORD_PUBLISH);
    else return;
    memcpy(out->word_id, p, n);
    out->word_id[n] = '\0';
}

/* dead-letters/<row id> */
static void match_dead_letter(const char *method, const char *p, struct route *out) {
    size_t n = strlen(p);
    if (!word_id_valid(p, n)) return; /* a row id: 1..18 digits, no leading 0 */
    set4(out, method, ROUTE_DEAD_LETTER_GET, ROUTE_NOT_FOUND, ROUTE_NOT_FOUND,
         ROUTE_DEAD_LETTER_DELETE);
    memcpy(out->row_id, p, n);
    out->row_id[n] = '\0';
}

/* topics/<topic> */
static void match_topic(const char *method, const char *p, struct route *out) {
    size_t n = strlen(p); /* Kafka's topic characters are an alias's */
    if (!route_alias_valid(p, n)) return;
    set4(out, method, ROUTE_NOT_FOUND, ROUTE_NOT_FOUND, ROUTE_NOT_FOUND, ROUTE_TOPIC_DELETE);
    memcpy(out->alias, p, n);
    out->alias[n] = '\0';
}

/* sources/<name> */
static void match_source(const char *method, const char *p, struct route *out) {
    size_t n = strlen(p); /* a source's name: mp_source_name_check's characters */
    if (!route_alias_valid(p, n) || n > 64) return;
    set4(out, method, ROUTE_NOT_FOUND, ROUTE_NOT_FOUND, ROUTE_SOURCE_EDIT, ROUTE_SOURCE_REMOVE);
    memcpy(out->alias, p, n);
    out->alias[n] = '\0';
}

/* source/tables/<db>/<table>/mapping */
static void match_source_table(const char *method, const char *d, struct route *out) {
    const char *s1 = strchr(d, '/');
    const char *t = s1 ? s1 + 1 : NULL;
    const char *s2 = t ? strchr(t, '/') : NULL;
    if (!s1 || !s2 || strcmp(s2, "/mapping") || !ident_valid(d, (size_t)(s1 - d)) ||
        !ident_valid(t, (size_t)(s2 - t)))
        return;
    set(out, method, ROUTE_SOURCE_TABLE_MAPPING, ROUTE_NOT_FOUND);
    memcpy(out->db, d, (size_t)(s1 - d));
    out->db[s1 - d] = '\0';
    memcpy(out->table, t, (size_t)(s2 - t));
    out->table[s2 - t] = '\0';
}

/* indices/<alias>/<action> */
static void match_index(const char *method, const char *p, struct route *out) {
    const char *slash = strchr(p, '/');
    if (!slash || !route_alias_valid(p, (size_t)(slash - p))) return;
    size_t alen = (size_t)(slash - p);
    if (!strcmp(slash, "/reindex")) set(out, method, ROUTE_REINDEX_GET, ROUTE_REINDEX_POST);
    else if (!strcmp(slash, "/reindex/reset")) set(out, method, ROUTE_NOT_FOUND, ROUTE_REINDEX_RESET);
    else if (!strcmp(slash, "/checks")) set(out, method, ROUTE_CHECKS, ROUTE_NOT_FOUND);
    else if (!strcmp(slash, "/resync")) set(out, method, ROUTE_NOT_FOUND, ROUTE_RESYNC);
    else if (!strcmp(slash, "/runs")) set(out, method, ROUTE_RUNS, ROUTE_NOT_FOUND);
    else if (!strcmp(slash, "/delete-all")) set(out, method, ROUTE_NOT_FOUND, ROUTE_DELETE_ALL);
    else return;
    memcpy(out->alias, p, alen);
    out->alias[alen] = '\0';
}

void route_match(const char *method, const char *path, struct route *out) {
    memset(out, 0, sizeof *out);
    if (!method || !path) return;
    if (match_page(method, path, out)) return;
    const char *p = after(path, "/api/v1/"), *q;
    if (!p) return;
    for (size_t i = 0; i < sizeof api_fixed / sizeof *api_fixed; i++)
        if (!strcmp(p, api_fixed[i].path)) {
            set(out, method, api_fixed[i].get, api_fixed[i].post);
            out->public = api_fixed[i].public;
            return;
        }
    if ((q = after(p, "words/"))) match_word(method, q, out);
    else if ((q = after(p, "dead-letters/"))) match_dead_letter(method, q, out);
    else if ((q = after(p, "topics/"))) match_topic(method, q, out);
    else if ((q = after(p, "sources/"))) match_source(method, q, out);
    else if ((q = after(p, "source/tables/"))) match_source_table(method, q, out);
    else if ((q = after(p, "indices/"))) match_index(method, q, out);
}

static bool only_space(const char *s, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r' && s[i] != '\n') return false;
    return true;
}

int route_parse_reindex_body(const char *body, size_t len, int *buckets, bool *by_mod,
                             const char **field, char *err, size_t errlen) {
    *buckets = 0;
    *by_mod = false;
    *field = "";
    if (!body || only_space(body, len)) return 0;
    cJSON *j = json_exact_object(body, len, " such as {\"buckets\":8,\"by_mod\":false} (or empty)",
                                 err, errlen);
    if (!j) return -1;
    int rc = 0;
    cJSON *it;
    cJSON_ArrayForEach(it, j) {
        const char *k = it->string ? it->string : "";
        if (!strcmp(k, "buckets")) {
            /* numbers are exact text (json_exact): no double in between */
            const char *v = cJSON_IsRaw(it) ? it->valuestring : NULL;
            char *end = NULL;
            long n = v && *v != '-' && *v != '+' ? strtol(v, &end, 10) : 0;
            if (!v || !end || *end || end == v || n < 1 || n > 4096) {
                *field = "buckets";
                rc = errf(err, errlen, "\"buckets\" must be an integer from 1 to 4096");
                break;
            }
            *buckets = (int)n;
        } else if (!strcmp(k, "by_mod")) {
            if (!cJSON_IsBool(it)) {
                *field = "by_mod";
                rc = errf(err, errlen, "\"by_mod\" must be true or false");
                break;
            }
            *by_mod = cJSON_IsTrue(it);
        } else {
            *field = k;
            rc = errf(err, errlen, "unknown field \"%.100s\": the body takes \"buckets\" and "
                                   "\"by_mod\"", k);
            break;
        }
    }
    /* *field may point into j: keep a static copy of the names we know */
    if (rc < 0 && strcmp(*field, "buckets") && strcmp(*field, "by_mod")) *field = "";
    cJSON_Delete(j);
    return rc;
}
