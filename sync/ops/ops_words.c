/* ops_words: the dynamic words and their dictionary files, read and
 * changed in the metadata schema (see ops_words.h). The admin API
 * (web/words.c) turns requests into these calls and their outcomes into
 * responses. */
#include "sync/ops/ops_words.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "stmt.h"

#define TS(col) STMT_ISO(col)
#define WORD_COLS "id, word, kind, status, " TS("created_at") ", " TS("updated_at")

/* MySQL's ER_DUP_ENTRY, as stmt_query's error text carries it */
#define DUPLICATE_KEY "(1062)"

void ops_words_free(struct ops_words *w) {
    if (!w) return;
    for (size_t i = 0; i < w->n; i++) {
        struct ops_word *o = &w->v[i];
        free(o->id), free(o->word), free(o->kind), free(o->status);
        free(o->created_at), free(o->updated_at);
    }
    free(w->v);
    w->v = NULL;
    w->n = 0;
}

static char *dup0(const char *s) { return s ? xstrdup(s) : NULL; }

/* rows of WORD_COLS as words */
static void words_of(const struct stmt_rows *t, struct ops_words *out) {
    out->v = xcalloc(t->nrows ? t->nrows : 1, sizeof *out->v);
    out->n = t->nrows;
    for (size_t r = 0; r < t->nrows; r++) {
        struct ops_word *o = &out->v[r];
        o->id = dup0(STMT_CELL(t, r, 0));
        o->word = dup0(STMT_CELL(t, r, 1));
        o->kind = dup0(STMT_CELL(t, r, 2));
        o->status = dup0(STMT_CELL(t, r, 3));
        o->created_at = dup0(STMT_CELL(t, r, 4));
        o->updated_at = dup0(STMT_CELL(t, r, 5));
    }
}

/* sql (selecting WORD_COLS) with params into *out; OPS_FAILED on an error */
static enum ops_status query_words(MYSQL *m, const char *sql, const char *const *p, size_t np,
                                   struct ops_words *out, struct ops_err *e) {
    struct stmt_rows t = {0};
    char err[1024];
    enum ops_status st = OPS_OK;
    *out = (struct ops_words){0};
    if (stmt_query(m, sql, p, np, &t, err, sizeof err) < 0)
        st = ops_fail(e, OPS_FAILED, OPS_AT_METADATA, "%s", err);
    else
        words_of(&t, out);
    stmt_rows_free(&t);
    return st;
}

static enum ops_status get_word(MYSQL *m, const char *id, struct ops_words *out,
                                struct ops_err *e) {
    const char *p[] = {id};
    enum ops_status st = query_words(m, "SELECT " WORD_COLS " FROM dynamic_words WHERE id = ?", p,
                                     1, out, e);
    if (st == OPS_OK && out->n == 0)
        st = ops_fail(e, OPS_UNKNOWN, OPS_AT_NONE, "there is no word with id %s", id);
    return st;
}

enum ops_status ops_words_list(const struct ops_env *env, const char *kind, const char *status,
                               struct ops_words *out, struct ops_err *e) {
    bool owned;
    *out = (struct ops_words){0};
    MYSQL *m = ops_meta(env, &owned, e);
    if (!m) return e->st;
    const char *p[] = {kind, kind, status, status};
    enum ops_status st = query_words(m, "SELECT " WORD_COLS " FROM dynamic_words WHERE (? IS NULL "
                                        "OR kind = ?) AND (? IS NULL OR status = ?) ORDER BY "
                                        "kind, id", p, 4, out, e);
    ops_meta_done(m, owned);
    return st;
}

enum ops_status ops_word_get(const struct ops_env *env, const char *id, struct ops_words *out,
                             struct ops_err *e) {
    bool owned;
    *out = (struct ops_words){0};
    MYSQL *m = ops_meta(env, &owned, e);
    if (!m) return e->st;
    enum ops_status st = get_word(m, id, out, e);
    ops_meta_done(m, owned);
    return st;
}

enum ops_status ops_word_create(const struct ops_env *env, const char *word, const char *kind,
                                struct ops_words *out, struct ops_err *e) {
    bool owned;
    *out = (struct ops_words){0};
    MYSQL *m = ops_meta(env, &owned, e);
    if (!m) return e->st;
    const char *p[] = {word, kind};
    struct stmt_rows t = {0};
    char err[1024];
    enum ops_status st;
    if (stmt_query(m, "INSERT INTO dynamic_words (word, kind) VALUES (?, ?)", p, 2, NULL, err,
                   sizeof err) < 0) {
        st = strstr(err, DUPLICATE_KEY)
                 ? ops_fail(e, OPS_REFUSED, OPS_AT_NONE, "the %s word \"%s\" exists already",
                            kind, word)
                 : ops_fail(e, OPS_FAILED, OPS_AT_METADATA, "%s", err);
    } else if (stmt_query(m, "SELECT id FROM dynamic_words WHERE word = ? AND kind = ?", p, 2, &t,
                          err, sizeof err) != 1) {
        st = ops_fail(e, OPS_FAILED, OPS_AT_METADATA, "%s", err);
    } else {
        log_info("admin", "dynamic words: %s word %s added (id %s)", kind, word,
                 STMT_CELL(&t, 0, 0));
        st = get_word(m, STMT_CELL(&t, 0, 0), out, e);
    }
    stmt_rows_free(&t);
    ops_meta_done(m, owned);
    return st;
}

/* the word's status and kind, locked (inside a transaction) */
static enum ops_status lock_word(MYSQL *m, const char *id, struct ops_word_changed *res,
                                 struct ops_err *e) {
    struct stmt_rows t = {0};
    char err[1024];
    const char *p[] = {id};
    long n = stmt_query(m, "SELECT status, kind FROM dynamic_words WHERE id = ? FOR UPDATE", p, 1,
                        &t, err, sizeof err);
    enum ops_status st = OPS_OK;
    if (n < 0) st = ops_fail(e, OPS_FAILED, OPS_AT_METADATA, "%s", err);
    else if (n == 0) st = ops_fail(e, OPS_UNKNOWN, OPS_AT_NONE, "there is no word with id %s", id);
    else {
        snprintf(res->status, sizeof res->status, "%s", STMT_CELL(&t, 0, 0));
        snprintf(res->kind, sizeof res->kind, "%s", STMT_CELL(&t, 0, 1));
    }
    stmt_rows_free(&t);
    return st;
}

/* the published list of kind changed: Last-Modified of its file moves */
static long bump(MYSQL *m, const char *kind, char *err, size_t errlen) {
    const char *p[] = {kind};
    return stmt_query(m, "INSERT INTO dict_changes (kind, changed_at) VALUES (?, "
                         "CURRENT_TIMESTAMP(3)) ON DUPLICATE KEY UPDATE changed_at = "
                         "CURRENT_TIMESTAMP(3)", p, 1, NULL, err, errlen);
}

/* the change itself, inside the transaction, the word locked (res) */
static enum ops_status apply_change(MYSQL *m, const struct ops_word_change *rq,
                                    struct ops_word_changed *res, struct ops_err *e) {
    char err[1024];
    bool published = !strcmp(res->status, "published");
    if (rq->act != OPS_WORD_DELETE && published) {
        res->refusal = OPS_WORD_PUBLISHED;
        return ops_fail(e, OPS_REFUSED, OPS_AT_NONE, "word %s is published: it can no longer be %s",
                        rq->id, rq->act == OPS_WORD_UPDATE ? "changed" : "published again");
    }
    if (rq->act == OPS_WORD_UPDATE) {
        const char *p[] = {rq->word, rq->kind, rq->id};
        if (stmt_query(m, "UPDATE dynamic_words SET word = COALESCE(?, word), kind = "
                          "COALESCE(?, kind) WHERE id = ?", p, 3, NULL, err, sizeof err) >= 0)
            return OPS_OK;
        if (!strstr(err, DUPLICATE_KEY)) return ops_fail(e, OPS_FAILED, OPS_AT_METADATA, "%s", err);
        res->refusal = OPS_WORD_DUPLICATE;
        return ops_fail(e, OPS_REFUSED, OPS_AT_NONE, "the %s word \"%s\" exists already",
                        rq->kind ? rq->kind : res->kind, rq->word ? rq->word : "(unchanged)");
    }
    const char *p[] = {rq->id};
    bool bumps = rq->act == OPS_WORD_PUBLISH || published;
    if (stmt_query(m, rq->act == OPS_WORD_PUBLISH
                          ? "UPDATE dynamic_words SET status = 'published' WHERE id = ?"
                          : "DELETE FROM dynamic_words WHERE id = ?",
                   p, 1, NULL, err, sizeof err) < 0 ||
        (bumps && bump(m, res->kind, err, sizeof err) < 0))
        return ops_fail(e, OPS_FAILED, OPS_AT_METADATA, "%s", err);
    return OPS_OK;
}

enum ops_status ops_word_change(const struct ops_env *env, const struct ops_word_change *rq,
                                struct ops_word_changed *res, struct ops_err *e) {
    *res = (struct ops_word_changed){0};
    bool owned;
    MYSQL *m = ops_meta(env, &owned, e);
    if (!m) return e->st;
    if (mysql_autocommit(m, 0)) {
        enum ops_status st = ops_fail(e, OPS_FAILED, OPS_AT_METADATA, "%s", mysql_error(m));
        ops_meta_done(m, owned);
        return st;
    }
    enum ops_status st = lock_word(m, rq->id, res, e);
    if (st == OPS_OK) st = apply_change(m, rq, res, e);
    if (st == OPS_OK && mysql_commit(m))
        st = ops_fail(e, OPS_FAILED, OPS_AT_METADATA, "%s", mysql_error(m));
    if (st != OPS_OK) mysql_rollback(m);
    mysql_autocommit(m, 1);
    ops_meta_done(m, owned);
    if (st != OPS_OK) return st;
    if (rq->act == OPS_WORD_DELETE)
        log_info("admin", "dynamic words: word %s (%s, %s) deleted", rq->id, res->kind,
                 res->status);
    else
        log_info("admin", "dynamic words: word %s %s", rq->id,
                 rq->act == OPS_WORD_PUBLISH ? "published" : "changed");
    return OPS_OK;
}

enum ops_status ops_dict_read(const struct ops_env *env, const char *kind, struct ops_dict *d,
                              struct ops_err *e) {
    *d = (struct ops_dict){.text = SBUF_INIT};
    bool owned;
    MYSQL *m = ops_meta(env, &owned, e);
    if (!m) return e->st;
    struct stmt_rows t = {0}, lm = {0};
    char err[1024];
    const char *p[] = {kind};
    const char *p2[] = {kind, kind};
    enum ops_status st = OPS_OK;
    if (stmt_query(m, "SELECT word FROM dynamic_words WHERE kind = ? AND status = 'published' "
                      "ORDER BY id", p, 1, &t, err, sizeof err) < 0 ||
        stmt_query(m, "SELECT FLOOR(UNIX_TIMESTAMP(GREATEST("
                      "COALESCE((SELECT MAX(updated_at) FROM dynamic_words WHERE kind = ? AND "
                      "status = 'published'), '1970-01-01 00:00:01'), "
                      "COALESCE((SELECT changed_at FROM dict_changes WHERE kind = ?), "
                      "'1970-01-01 00:00:01'))))", p2, 2, &lm, err, sizeof err) != 1) {
        st = ops_fail(e, OPS_FAILED, OPS_AT_METADATA, "%s", err);
    } else {
        for (size_t i = 0; i < t.nrows; i++) {
            sbuf_adds(&d->text, STMT_CELL(&t, i, 0) ? STMT_CELL(&t, i, 0) : "");
            sbuf_addc(&d->text, '\n');
        }
        d->nwords = t.nrows;
        d->changed = strtoll(STMT_CELL(&lm, 0, 0) ? STMT_CELL(&lm, 0, 0) : "1", NULL, 10);
    }
    stmt_rows_free(&t);
    stmt_rows_free(&lm);
    ops_meta_done(m, owned);
    return st;
}
