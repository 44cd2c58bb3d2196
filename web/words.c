/* words: dynamic words API and the /dict/ files (see words.h). */
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
#include "stmt.h"

#define TS(col) STMT_ISO(col)
#define WORD_COLS "id, word, kind, status, " TS("created_at") ", " TS("updated_at")

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

/* ---------- handlers ---------- */

static void word_obj(jsonw *w, const struct stmt_rows *t, size_t r) {
    static const char *const names[] = {"id", "word", "kind", "status", "created_at",
                                        "updated_at"};
    jw_obj_open(w);
    for (size_t c = 0; c < 6; c++) {
        jw_key(w, names[c]);
        const char *v = STMT_CELL(t, r, c);
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

static void not_found(struct api_resp *r, const char *id) {
    char e[128];
    snprintf(e, sizeof e, "there is no word with id %s", id);
    api_error(r, 404, e, "GET /api/v1/words lists them");
}

/* the word id's row as the response (status 200/201) */
static void reply_word(MYSQL *m, const char *id, int status, struct api_resp *r) {
    struct stmt_rows t = {0};
    char err[1024];
    const char *p[] = {id};
    long n = stmt_query(m, "SELECT " WORD_COLS " FROM dynamic_words WHERE id = ?", p, 1, &t, err,
                        sizeof err);
    if (n < 0) db_fail(r, err);
    else if (n == 0) not_found(r, id);
    else {
        jsonw w;
        jw_init(&w, &r->body);
        word_obj(&w, &t, 0);
        r->status = status;
        sbuf_addc(&r->body, '\n');
    }
    stmt_rows_free(&t);
}

static void h_list(const struct api_ctx *ctx, MYSQL *m, struct api_resp *r) {
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
    struct stmt_rows t = {0};
    char err[1024];
    const char *p[] = {kind, kind, status, status};
    if (stmt_query(m, "SELECT " WORD_COLS " FROM dynamic_words WHERE (? IS NULL OR kind = ?) "
                      "AND (? IS NULL OR status = ?) ORDER BY kind, id",
                   p, 4, &t, err, sizeof err) < 0) {
        db_fail(r, err);
        return;
    }
    jsonw w;
    jw_init(&w, &r->body);
    jw_obj_open(&w);
    jw_key(&w, "words");
    jw_arr_open(&w);
    for (size_t i = 0; i < t.nrows; i++) word_obj(&w, &t, i);
    jw_arr_close(&w);
    jw_obj_close(&w);
    sbuf_addc(&r->body, '\n');
    r->status = 200;
    stmt_rows_free(&t);
}

static void duplicate(struct api_resp *r, const char *word, const char *kind) {
    sbuf e = SBUF_INIT;
    sbuf_printf(&e, "the %s word \"%s\" exists already", kind, word);
    api_error_field(r, 409, "word", e.data, "GET /api/v1/words?kind=... lists the words");
    sbuf_free(&e);
}

static void h_create(MYSQL *m, const char *body, size_t len, struct api_resp *r) {
    char *word = NULL, err[1024];
    const char *kind = NULL, *field = "";
    if (words_parse_body(body, len, true, &word, &kind, &field, err, sizeof err) < 0) {
        api_error_field(r, 400, field, err, "send {\"word\":\"...\",\"kind\":\"ext\"|\"stop\"}");
        return;
    }
    const char *p[] = {word, kind};
    struct stmt_rows t = {0};
    if (stmt_query(m, "INSERT INTO dynamic_words (word, kind) VALUES (?, ?)", p, 2, NULL, err,
                   sizeof err) < 0) {
        if (strstr(err, "(1062)")) duplicate(r, word, kind);
        else db_fail(r, err);
    } else if (stmt_query(m, "SELECT id FROM dynamic_words WHERE word = ? AND kind = ?", p, 2, &t,
                          err, sizeof err) != 1) {
        db_fail(r, err);
    } else {
        log_info("admin", "dynamic words: %s word %s added (id %s)", kind, word,
                 STMT_CELL(&t, 0, 0));
        reply_word(m, STMT_CELL(&t, 0, 0), 201, r);
    }
    stmt_rows_free(&t);
    free(word);
}

/* the word's status and kind, locked (inside a transaction); 0, or -1 with
 * the response written */
static int lock_word(MYSQL *m, const char *id, char *status, char *kind, struct api_resp *r) {
    struct stmt_rows t = {0};
    char err[1024];
    const char *p[] = {id};
    long n = stmt_query(m, "SELECT status, kind FROM dynamic_words WHERE id = ? FOR UPDATE", p, 1,
                        &t, err, sizeof err);
    if (n < 0) db_fail(r, err);
    else if (n == 0) not_found(r, id);
    else {
        snprintf(status, 16, "%s", STMT_CELL(&t, 0, 0));
        snprintf(kind, 8, "%s", STMT_CELL(&t, 0, 1));
    }
    stmt_rows_free(&t);
    return n == 1 ? 0 : -1;
}

/* the published list of kind changed: Last-Modified of its file moves */
static long bump(MYSQL *m, const char *kind, char *err, size_t errlen) {
    const char *p[] = {kind};
    return stmt_query(m, "INSERT INTO dict_changes (kind, changed_at) VALUES (?, "
                         "CURRENT_TIMESTAMP(3)) ON DUPLICATE KEY UPDATE changed_at = "
                         "CURRENT_TIMESTAMP(3)", p, 1, NULL, err, errlen);
}

static void h_change(const struct route *rt, MYSQL *m, const char *body, size_t len,
                     struct api_resp *r) {
    char *word = NULL, err[1024];
    const char *nkind = NULL, *field = "";
    if (rt->id == ROUTE_WORD_UPDATE &&
        words_parse_body(body, len, false, &word, &nkind, &field, err, sizeof err) < 0) {
        api_error_field(r, 400, field, err, "send {\"word\":\"...\"} and/or {\"kind\":\"...\"}");
        return;
    }
    char status[16], kind[8];
    if (mysql_autocommit(m, 0)) {
        db_fail(r, mysql_error(m));
        free(word);
        return;
    }
    bool ok = false;
    const char *id = rt->word_id;
    if (lock_word(m, id, status, kind, r) < 0) goto out;
    bool published = !strcmp(status, "published");
    if (rt->id == ROUTE_WORD_UPDATE || rt->id == ROUTE_WORD_PUBLISH) {
        if (published) {
            char e[160];
            snprintf(e, sizeof e, "word %s is published: it can no longer be %s", id,
                     rt->id == ROUTE_WORD_UPDATE ? "changed" : "published again");
            api_error(r, 409, e, rt->id == ROUTE_WORD_UPDATE
                                     ? "delete it (DELETE /api/v1/words/{id}) and add the new "
                                       "spelling"
                                     : "nothing to do");
            goto out;
        }
    }
    if (rt->id == ROUTE_WORD_UPDATE) {
        const char *p[] = {word, nkind, id};
        if (stmt_query(m, "UPDATE dynamic_words SET word = COALESCE(?, word), kind = "
                          "COALESCE(?, kind) WHERE id = ?", p, 3, NULL, err, sizeof err) < 0) {
            if (strstr(err, "(1062)")) duplicate(r, word ? word : "(unchanged)", nkind ? nkind : kind);
            else db_fail(r, err);
            goto out;
        }
    } else if (rt->id == ROUTE_WORD_PUBLISH) {
        const char *p[] = {id};
        if (stmt_query(m, "UPDATE dynamic_words SET status = 'published' WHERE id = ?", p, 1,
                       NULL, err, sizeof err) < 0 ||
            bump(m, kind, err, sizeof err) < 0) {
            db_fail(r, err);
            goto out;
        }
    } else { /* delete */
        const char *p[] = {id};
        if (stmt_query(m, "DELETE FROM dynamic_words WHERE id = ?", p, 1, NULL, err,
                       sizeof err) < 0 ||
            (published && bump(m, kind, err, sizeof err) < 0)) {
            db_fail(r, err);
            goto out;
        }
    }
    if (mysql_commit(m)) {
        db_fail(r, mysql_error(m));
        goto out;
    }
    ok = true;
out:
    if (!ok) mysql_rollback(m);
    mysql_autocommit(m, 1);
    free(word);
    if (!ok) return;
    if (rt->id == ROUTE_WORD_DELETE) {
        log_info("admin", "dynamic words: word %s (%s, %s) deleted", id, kind, status);
        jsonw w;
        jw_init(&w, &r->body);
        jw_obj_open(&w);
        jw_key(&w, "deleted");
        jw_raw(&w, id, strlen(id));
        jw_key(&w, "was");
        jw_str(&w, status);
        jw_obj_close(&w);
        sbuf_addc(&r->body, '\n');
        r->status = 200;
        return;
    }
    log_info("admin", "dynamic words: word %s %s", id,
             rt->id == ROUTE_WORD_PUBLISH ? "published" : "changed");
    reply_word(m, id, 200, r);
}

void words_handle(const struct api_ctx *ctx, const struct route *rt, const char *body, size_t len,
                  struct api_resp *r) {
    MYSQL *m = api_meta_connect(ctx, r);
    if (!m) return;
    r->content_type = "application/json";
    switch (rt->id) {
    case ROUTE_WORDS_LIST: h_list(ctx, m, r); break;
    case ROUTE_WORD_CREATE: h_create(m, body, len, r); break;
    case ROUTE_WORD_GET: reply_word(m, rt->word_id, 200, r); break;
    default: h_change(rt, m, body, len, r); break;
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
    struct stmt_rows t = {0}, lm = {0};
    char err[1024];
    const char *p[] = {file};
    const char *p2[] = {file, file};
    if (stmt_query(m, "SELECT word FROM dynamic_words WHERE kind = ? AND status = 'published' "
                      "ORDER BY id", p, 1, &t, err, sizeof err) < 0 ||
        stmt_query(m, "SELECT FLOOR(UNIX_TIMESTAMP(GREATEST("
                      "COALESCE((SELECT MAX(updated_at) FROM dynamic_words WHERE kind = ? AND "
                      "status = 'published'), '1970-01-01 00:00:01'), "
                      "COALESCE((SELECT changed_at FROM dict_changes WHERE kind = ?), "
                      "'1970-01-01 00:00:01'))))", p2, 2, &lm, err, sizeof err) != 1) {
        db_fail(r, err);
        goto out;
    }
    for (size_t i = 0; i < t.nrows; i++) {
        sbuf_adds(&r->body, STMT_CELL(&t, i, 0) ? STMT_CELL(&t, i, 0) : "");
        sbuf_addc(&r->body, '\n');
    }
    char etag[48], date[64];
    snprintf(etag, sizeof etag, "\"%s-%zu-%016llx\"", file, t.nrows,
             (unsigned long long)fnv1a(r->body.data ? r->body.data : "", r->body.len));
    time_t when = (time_t)strtoll(STMT_CELL(&lm, 0, 0) ? STMT_CELL(&lm, 0, 0) : "1", NULL, 10);
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
    stmt_rows_free(&t);
    stmt_rows_free(&lm);
    db_close(m);
}
