/* words: the dynamic words API and the /dict/ files (see words.h): a
 * request's JSON checked and turned into an operation of
 * sync/ops/ops_words.h, its outcome into the response. */
#include "words.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "db.h"
#include "guard.h"
#include "json_exact.h"
#include "jsonw.h"
#include "log.h"
#include "sync/ops/ops_words.h"

const char *words_invalid(const char *w, size_t n) {
    if (n == 0) return "\"word\" must not be empty";
    size_t chars = 0;
    for (size_t i = 0; i < n;) {
        unsigned char c = (unsigned char)w[i];
        size_t len = c < 0x80 ? 1 : (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3
                                   : (c & 0xF8) == 0xF0 ? 4 : 0;
        if (!len || i + len > n) return "\"word\" must be valid UTF-8";
        uint32_t cp = len == 1 ? c : len == 2 ? (c & 0x1Fu) : len == 3 ? (c & 0x0Fu) : (c & 0x07u);
        for (size_t k = 1; k < len; k++) {
            unsigned char cc = (unsigned char)w[i + k];
            if ((cc & 0xC0) != 0x80) return "\"word\" must be valid UTF-8";
            cp = (cp << 6) | (cc & 0x3Fu);
        }
        if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
            cp > 0x10FFFF || (cp >= 0xD800 && cp < 0xE000))
            return "\"word\" must be valid UTF-8";
        if (cp < 0x20 || cp == 0x7F || (cp >= 0x80 && cp < 0xA0) || cp == 0x2028 || cp == 0x2029)
            return "\"word\" must not hold control characters or line breaks (one word per "
                   "line in the dictionary file)";
        i += len;
        chars++;
    }
    if (chars > 255) return "\"word\" must be at most 255 characters";
    if (w[0] == ' ' || w[0] == '\t' || w[n - 1] == ' ' || w[n - 1] == '\t')
        return "\"word\" must not begin or end with white space (the analyzer trims lines)";
    return NULL;
}

int words_parse_body(const char *body, size_t len, bool create, char **word, const char **kind,
                     const char **field, char *err, size_t errlen) {
    *word = NULL;
    *kind = NULL;
    *field = "";
    cJSON *j = json_exact_object(body, len, " such as {\"word\":\"...\",\"kind\":\"ext\"}", err,
                                 errlen);
    if (!j) return -1;
    int rc = 0;
    cJSON *it;
    cJSON_ArrayForEach(it, j) {
        const char *k = it->string ? it->string : "";
        if (!strcmp(k, "word")) {
            const char *why = cJSON_IsString(it) ? words_invalid(it->valuestring,
                                                                 strlen(it->valuestring))
                                                 : "\"word\" must be a string";
            if (why) {
                *field = "word";
                rc = errf(err, errlen, "%s", why);
                break;
            }
            free(*word);
            *word = xstrdup(it->valuestring);
        } else if (!strcmp(k, "kind")) {
            const char *v = cJSON_IsString(it) ? it->valuestring : "";
            if (strcmp(v, "ext") && strcmp(v, "stop")) {
                *field = "kind";
                rc = errf(err, errlen, "\"kind\" must be \"ext\" (extension word) or \"stop\" "
                                       "(stop word)");
                break;
            }
            *kind = v[0] == 'e' ? "ext" : "stop";
        } else {
            *field = "";
            rc = errf(err, errlen, "unknown field \"%.100s\": a word takes \"word\" and \"kind\"",
                      k);
            break;
        }
    }
    if (!rc && create && (!*word || !*kind)) {
        *field = !*word ? "word" : "kind";
        rc = errf(err, errlen, "\"%s\" is required", *field);
    }
    if (!rc && !create && !*word && !*kind) {
        *field = "";
        rc = errf(err, errlen, "nothing to change: send \"word\" and/or \"kind\"");
    }
    if (rc) {
        free(*word);
        *word = NULL;
        *kind = NULL;
    }
    cJSON_Delete(j);
    return rc;
}

/* ---------- handlers: requests to operations (sync/ops/ops_words.h) ---------- */

static void word_obj(jsonw *w, const struct ops_word *o) {
    const char *const cells[] = {o->id, o->word, o->kind, o->status, o->created_at, o->updated_at};
    static const char *const names[] = {"id", "word", "kind", "status", "created_at",
                                        "updated_at"};
    jw_obj_open(w);
    for (size_t c = 0; c < 6; c++) {
        jw_key(w, names[c]);
        const char *v = cells[c];
        if (!v) jw_null(w);
        else if (c == 0) jw_raw(w, v, strlen(v));
        else jw_str(w, v);
    }
    jw_obj_close(w);
}

static void db_fail(struct api_resp *r, const char *err) {
    log_warn("admin", "dynamic words: %s", err);
    api_error(r, 500, err, "a metadata query failed; see the daemon's log and retry");
}

/* an operation's failure as the response: no such word (404), or a
 * metadata query that failed (500) */
static void op_fail(struct api_resp *r, const struct ops_err *e) {
    if (e->st == OPS_UNKNOWN) api_error(r, 404, e->msg, "GET /api/v1/words lists them");
    else db_fail(r, e->msg);
}

static void duplicate(struct api_resp *r, const struct ops_err *e) {
    api_error_field(r, 409, "word", e->msg, "GET /api/v1/words?kind=... lists the words");
}

/* one word (or the failure) as the response, status 200/201 */
static void reply_words(enum ops_status st, const struct ops_words *ws, const struct ops_err *e,
                        int status, struct api_resp *r) {
    if (st != OPS_OK) {
        op_fail(r, e);
        return;
    }
    jsonw w;
    jw_init(&w, &r->body);
    word_obj(&w, &ws->v[0]);
    r->status = status;
    sbuf_addc(&r->body, '\n');
}

static void reply_word(const struct ops_env *env, const char *id, int status,
                       struct api_resp *r) {
    struct ops_words ws;
    struct ops_err e;
    enum ops_status st = ops_word_get(env, id, &ws, &e);
    reply_words(st, &ws, &e, status, r);
    ops_words_free(&ws);
}

static void h_list(const struct api_ctx *ctx, const struct ops_env *env, struct api_resp *r) {
    const char *kind = api_lookup(ctx, API_ARG, "kind");
    const char *status = api_lookup(ctx, API_ARG, "status");
    if (kind && strcmp(kind, "ext") && strcmp(kind, "stop")) {
        api_error_field(r, 400, "kind", "the query argument kind must be ext or stop",
                        "leave it out to list both kinds");
        return;
    }
    if (status && strcmp(status, "init") && strcmp(status, "published")) {
        api_error_field(r, 400, "status", "the query argument status must be init or published",
                        "leave it out to list both states");
        return;
    }
    struct ops_words ws;
    struct ops_err e;
    if (ops_words_list(env, kind, status, &ws, &e) != OPS_OK) {
        op_fail(r, &e);
        return;
    }
    jsonw w;
    jw_init(&w, &r->body);
    jw_obj_open(&w);
    jw_key(&w, "words");
    jw_arr_open(&w);
    for (size_t i = 0; i < ws.n; i++) word_obj(&w, &ws.v[i]);
    jw_arr_close(&w);
    jw_obj_close(&w);
    sbuf_addc(&r->body, '\n');
    r->status = 200;
    ops_words_free(&ws);
}

static void h_create(const struct ops_env *env, const char *body, size_t len,
                     struct api_resp *r) {
    char *word = NULL, err[1024];
    const char *kind = NULL, *field = "";
    if (words_parse_body(body, len, true, &word, &kind, &field, err, sizeof err) < 0) {
        api_error_field(r, 400, field, err, "send {\"word\":\"...\",\"kind\":\"ext\"|\"stop\"}");
        return;
    }
    struct ops_words ws;
    struct ops_err e;
    enum ops_status st = ops_word_create(env, word, kind, &ws, &e);
    if (st == OPS_REFUSED) duplicate(r, &e);
    else reply_words(st, &ws, &e, 201, r);
    ops_words_free(&ws);
    free(word);
}

static void h_change(const struct route *rt, const struct ops_env *env, const char *body,
                     size_t len, struct api_resp *r) {
    char *word = NULL, err[1024];
    const char *nkind = NULL, *field = "";
    if (rt->id == ROUTE_WORD_UPDATE &&
        words_parse_body(body, len, false, &word, &nkind, &field, err, sizeof err) < 0) {
        api_error_field(r, 400, field, err, "send {\"word\":\"...\"} and/or {\"kind\":\"...\"}");
        return;
    }
    const char *id = rt->word_id;
    struct ops_word_change rq = {rt->id == ROUTE_WORD_UPDATE    ? OPS_WORD_UPDATE
                                 : rt->id == ROUTE_WORD_PUBLISH ? OPS_WORD_PUBLISH
                                                                : OPS_WORD_DELETE,
                                 id, word, nkind};
    struct ops_word_changed res;
    struct ops_err e;
    enum ops_status st = ops_word_change(env, &rq, &res, &e);
    free(word);
    if (st == OPS_REFUSED && res.refusal == OPS_WORD_PUBLISHED) {
        api_error(r, 409, e.msg, rt->id == ROUTE_WORD_UPDATE
                                     ? "delete it (DELETE /api/v1/words/{id}) and add the new "
                                       "spelling"
                                     : "nothing to do");
        return;
    }
    if (st == OPS_REFUSED) {
        duplicate(r, &e);
        return;
    }
    if (st != OPS_OK) {
        op_fail(r, &e);
        return;
    }
    if (rt->id == ROUTE_WORD_DELETE) {
        jsonw w;
        jw_init(&w, &r->body);
        jw_obj_open(&w);
        jw_key(&w, "deleted");
        jw_raw(&w, id, strlen(id));
        jw_key(&w, "was");
        jw_str(&w, res.status);
        jw_obj_close(&w);
        sbuf_addc(&r->body, '\n');
        r->status = 200;
        return;
    }
    reply_word(env, id, 200, r);
}

void words_handle(const struct api_ctx *ctx, const struct route *rt, const char *body, size_t len,
                  struct api_resp *r) {
    MYSQL *m = api_meta_connect(ctx, r);
    if (!m) return;
    struct ops_env env;
    api_ops_env(ctx, &env, "admin API");
    env.meta = m; /* lent: the operations use the request's connection */
    r->content_type = "application/json";
    switch (rt->id) {
    case ROUTE_WORDS_LIST: h_list(ctx, &env, r); break;
    case ROUTE_WORD_CREATE: h_create(&env, body, len, r); break;
    case ROUTE_WORD_GET: reply_word(&env, rt->word_id, 200, r); break;
    default: h_change(rt, &env, body, len, r); break;
    }
    db_close(m);
}

/* ---------- /dict/ext.txt, /dict/stop.txt ---------- */

static uint64_t fnv1a(const char *s, size_t n) {
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 1099511628211ULL;
    return h;
}

static time_t http_date_parse(const char *s) {
    struct tm tm = {0};
    if (!s) return (time_t)-1;
    const char *e = strptime(s, "%a, %d %b %Y %H:%M:%S GMT", &tm);
    if (!e || *e) return (time_t)-1;
    return timegm(&tm);
}

void dict_handle(const struct api_ctx *ctx, const char *file, struct api_resp *r) {
    MYSQL *m = api_meta_connect(ctx, r);
    if (!m) return;
    struct ops_env env;
    api_ops_env(ctx, &env, "admin API");
    env.meta = m;
    struct ops_dict d;
    struct ops_err e;
    if (ops_dict_read(&env, file, &d, &e) != OPS_OK) {
        db_fail(r, e.msg);
        goto out;
    }
    sbuf_add(&r->body, d.text.data ? d.text.data : "", d.text.len);
    char etag[48], date[64];
    snprintf(etag, sizeof etag, "\"%s-%zu-%016llx\"", file, d.nwords,
             (unsigned long long)fnv1a(r->body.data ? r->body.data : "", r->body.len));
    time_t when = (time_t)d.changed;
    struct tm tm;
    gmtime_r(&when, &tm);
    strftime(date, sizeof date, "%a, %d %b %Y %H:%M:%S GMT", &tm);
    sbuf_printf(&r->headers, "ETag: %s\nLast-Modified: %s\n", etag, date);
    r->content_type = "text/plain; charset=utf-8";
    r->status = 200;
    const char *inm = api_lookup(ctx, API_HEADER, "If-None-Match");
    const char *ims = api_lookup(ctx, API_HEADER, "If-Modified-Since");
    time_t since = http_date_parse(ims);
    if (inm ? guard_etag_matches(inm, etag) : (since != (time_t)-1 && when <= since)) {
        r->status = 304;
        sbuf_reset(&r->body);
    }
out:
    sbuf_free(&d.text);
    db_close(m);
}
