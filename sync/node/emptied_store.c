/* emptied_store: the owed rebuilds of emptied tables and their rows in
 * emptied_rebuilds (see emptied_store.h). */
#include "sync/node/emptied_store.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db.h"
#include "monotime.h"
#include "sbuf.h"

/* read_at VARCHAR(320): a longer place (a topic name near Kafka's 249
 * characters) keeps its first 320, enough to tell two statements apart */
#define KEY_MAX 320

struct emptied emptied_make(const char *alias, const char *reason, bool dropped,
                            const char *replayed_file, unsigned long long replayed_pos,
                            const char *where) {
    struct emptied e = {xstrdup(alias), xstrdup(reason), dropped, 0, "", 0, NULL, false, mono_ms()};
    char key[KEY_MAX + 1];
    if (replayed_file && replayed_file[0]) {
        snprintf(e.replayed_file, sizeof e.replayed_file, "%s", replayed_file);
        e.replayed_pos = replayed_pos;
        snprintf(key, sizeof key, "a snapshot at %s:%llu", replayed_file, replayed_pos);
    } else
        snprintf(key, sizeof key, "%s", where ? where : "");
    e.key = xstrdup(key);
    return e;
}

void emptied_free(struct emptied *e) {
    free(e->alias);
    free(e->reason);
    free(e->key);
    e->alias = e->reason = e->key = NULL;
}

static void where_row(MYSQL *meta, sbuf *q, const char *source, const struct emptied *e) {
    sbuf_adds(q, " WHERE source = ");
    db_quote(meta, q, source, strlen(source));
    sbuf_adds(q, " AND alias = ");
    db_quote(meta, q, e->alias, strlen(e->alias));
    sbuf_adds(q, " AND read_at = ");
    db_quote(meta, q, e->key, strlen(e->key));
}

int emptied_store_add(MYSQL *meta, const char *source, const struct emptied *e, bool *had,
                      char *err, size_t errlen) {
    *had = false;
    sbuf q = SBUF_INIT;
    sbuf_adds(&q, "INSERT IGNORE INTO emptied_rebuilds (source, alias, read_at, reason, dropped, "
                  "replayed_file, replayed_pos) VALUES (");
    db_quote(meta, &q, source, strlen(source));
    sbuf_addc(&q, ',');
    db_quote(meta, &q, e->alias, strlen(e->alias));
    sbuf_addc(&q, ',');
    db_quote(meta, &q, e->key, strlen(e->key));
    sbuf_addc(&q, ',');
    db_quote(meta, &q, e->reason, strlen(e->reason));
    sbuf_printf(&q, ",%d,", e->dropped ? 1 : 0);
    db_quote(meta, &q, e->replayed_file, strlen(e->replayed_file));
    sbuf_printf(&q, ",%llu)", e->replayed_pos);
    long long n = db_exec_rows(meta, q.data, err, errlen);
    sbuf_free(&q);
    if (n < 0) return -1;
    *had = n == 0;
    return 0;
}

int emptied_store_load(MYSQL *meta, const char *source, struct emptied **v, size_t *n,
                       char *err, size_t errlen) {
    sbuf q = SBUF_INIT;
    sbuf_adds(&q, "SELECT alias, read_at, reason, dropped, replayed_file, replayed_pos "
                  "FROM emptied_rebuilds WHERE source = ");
    db_quote(meta, &q, source, strlen(source));
    sbuf_adds(&q, " ORDER BY created_at, alias");
    MYSQL_RES *r = db_query(meta, q.data, q.len, err, errlen);
    sbuf_free(&q);
    if (!r) return -1;
    MYSQL_ROW row;
    while ((row = mysql_fetch_row(r))) {
        if (!row[0] || !row[1] || !row[2]) continue;
        struct emptied e = emptied_make(row[0], row[2], row[3] && atoi(row[3]),
                                        row[4], row[5] ? strtoull(row[5], NULL, 10) : 0, NULL);
        free(e.key);
        e.key = xstrdup(row[1]); /* as recorded: done deletes that row */
        e.recorded = true;
        *v = xrealloc(*v, (*n + 1) * sizeof **v);
        (*v)[(*n)++] = e;
    }
    mysql_free_result(r);
    return 0;
}

int emptied_store_done(MYSQL *meta, const char *source, const struct emptied *e, char *err,
                       size_t errlen) {
    if (!e->recorded) return 0;
    sbuf q = SBUF_INIT;
    sbuf_adds(&q, "DELETE FROM emptied_rebuilds");
    where_row(meta, &q, source, e);
    int rc = db_exec(meta, q.data, err, errlen);
    sbuf_free(&q);
    return rc;
}
