/* ttl: documents removed when their row expires (a time to live),
 * not only when the row next changes — one more producer of change sets.
 *
 * A root table may name an expiry column (mapping: `expiry_column`, a
 * DATETIME or TIMESTAMP read in UTC). The builder treats a row past its
 * expiry as no document (docbuild_unexpired), so a rebuild of it is a
 * delete. This producer finds the rows whose expiry passed since its last
 * look — one indexed range query per index, `expiry > last AND expiry <=
 * NOW(6)`, at most TTL_BATCH keys a round, every TTL_EVERY_MS — and hands
 * their keys to the pipeline as a change set, rebuilt (so deleted) between
 * two transactions of the binlog reader.
 *
 * Version: the reader's position plus one. Every change the reader handed
 * to delivery is at or below the position; anything it reads later is at
 * least one event past it, so the expiry neither loses to an older write
 * nor wins over a newer change (a row whose expiry was moved forward is
 * written again by that change). With [source] versions = gtid the same is
 * the half step past the last transaction's ordinal (version_make_gtid).
 * The first look after a start takes every
 * row already expired, a batch at a time. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "sync/pipeline/docbuild.h"
#include "log.h"
#include "monotime.h"
#include "sync/pipeline/ttl.h"

#define TTL_EVERY_MS 250
#define TTL_BATCH 5000

void ttl_reset(struct ttl *t) {
    for (size_t i = 0; i < t->n; i++)
        free(t->v[i].alias), free(t->v[i].last), free(t->v[i].last_key),
            free(t->v[i].next), free(t->v[i].next_key);
    free(t->v);
    memset(t, 0, sizeof *t);
}

static struct ttl_index *state_of(struct ttl *t, const char *alias) {
    for (size_t i = 0; i < t->n; i++)
        if (!strcmp(t->v[i].alias, alias)) return &t->v[i];
    t->v = xrealloc(t->v, (t->n + 1) * sizeof *t->v);
    struct ttl_index *s = &t->v[t->n++];
    memset(s, 0, sizeof *s);
    s->alias = xstrdup(alias);
    return s;
}

/* the keys of index x whose expiry passed since s->last, into cs */
static int expired_keys(struct pipeline *p, struct changeset *cs, size_t x, struct ttl_index *s,
                        size_t *found) {
    const struct mp_table *tb = &p->m->indices[x].tables[0];
    const struct mp_column *key = mp_table_key(tb);
    if (!key) return 0;
    char now[40];
    char *v = db_scalar(p->src, "SELECT NOW(6)", p->err, sizeof p->err);
    if (!v) return -1;
    snprintf(now, sizeof now, "%s", v);
    free(v);
    sbuf q = SBUF_INIT;
    sbuf_adds(&q, "SELECT ");
    db_ident(&q, key->name);
    sbuf_adds(&q, ", ");
    db_ident(&q, tb->expiry_column);
    sbuf_adds(&q, " FROM ");
    db_ident(&q, tb->db);
    sbuf_addc(&q, '.');
    db_ident(&q, tb->table);
    sbuf_adds(&q, " WHERE ");
    db_ident(&q, tb->expiry_column);
    sbuf_adds(&q, " <= ");
    db_quote(p->src, &q, now, strlen(now));
    if (s->last && s->last_key) { /* the rest of a full batch's instant, then on */
        sbuf_adds(&q, " AND (");
        db_ident(&q, tb->expiry_column);
        sbuf_adds(&q, ", ");
        db_ident(&q, key->name);
        sbuf_adds(&q, ") > (");
        db_quote(p->src, &q, s->last, strlen(s->last));
        sbuf_adds(&q, ", ");
        db_quote(p->src, &q, s->last_key, strlen(s->last_key));
        sbuf_adds(&q, ")");
    } else if (s->last) {
        sbuf_adds(&q, " AND ");
        db_ident(&q, tb->expiry_column);
        sbuf_adds(&q, " > ");
        db_quote(p->src, &q, s->last, strlen(s->last));
    }
    sbuf_adds(&q, " ORDER BY ");
    db_ident(&q, tb->expiry_column);
    sbuf_adds(&q, ", ");
    db_ident(&q, key->name);
    sbuf_printf(&q, " LIMIT %d", TTL_BATCH);
    MYSQL_RES *res = db_query(p->src, q.data, q.len, p->err, sizeof p->err);
    sbuf_free(&q);
    if (!res) return -1;
    MYSQL_ROW row;
    char *last_exp = NULL, *last_key = NULL;
    size_t n = 0;
    while ((row = mysql_fetch_row(res))) {
        unsigned long *len = mysql_fetch_lengths(res);
        if (!row[0] || !row[1]) continue;
        changeset_add_doc(cs, x, 0, row[0], len[0]);
        n++;
        free(last_exp), free(last_key);
        last_exp = xstrdup(row[1]);
        last_key = xstrndup(row[0], len[0]);
    }
    mysql_free_result(res);
    free(s->next), free(s->next_key);
    s->has_next = true;
    if (n == TTL_BATCH) { /* a full batch: the next look goes on after its last row */
        s->next = last_exp, s->next_key = last_key;
    } else {
        s->next = xstrdup(now), s->next_key = NULL;
        free(last_exp), free(last_key);
    }
    *found += n;
    return 0;
}

/* The looks of this tick move their cursors (built: true) or leave them
 * where they were, so that rows whose deletes failed are looked at again. */
static void settle_looks(struct ttl *t, bool built) {
    for (size_t i = 0; i < t->n; i++) {
        struct ttl_index *s = &t->v[i];
        if (!s->has_next) continue;
        if (built) {
            free(s->last), free(s->last_key);
            s->last = s->next, s->last_key = s->next_key;
        } else {
            free(s->next), free(s->next_key);
        }
        s->next = s->next_key = NULL;
        s->has_next = false;
    }
}

int ttl_tick(struct ttl *t, struct pipeline *p, struct changeset *cs, const bl_pos *at,
             const struct pipeline_resume *rs, const bl_pos *boundary) {
    int64_t now = mono_ms();
    if (now < t->due_ms || !at->file[0] || !boundary->file[0]) return 0;
    t->due_ms = now + TTL_EVERY_MS;
    size_t found = 0;
    for (size_t x = 0; x < p->m->nindices; x++) {
        const struct mp_index *ix = &p->m->indices[x];
        if (!ix->ntables || !ix->tables[0].expiry_column) continue;
        if (!ix->current_version && !targets_build_of(p, ix->alias)) continue;
        /* each shard's table its own cursor: its keys and expiries are its own */
        if (expired_keys(p, cs, x, state_of(t, ix->unit ? ix->unit : ix->alias), &found) < 0) {
            settle_looks(t, false);
            changeset_reset(cs);
            return -1;
        }
    }
    if (!found) {
        settle_looks(t, true);
        return 0;
    }
    bl_pos ver = *at; /* one past the reader's position (see the top) */
    ver.pos += 1;
    unsigned long long deletes = p->deletes;
    /* [source] versions = gtid: the half step past the ordinal */
    int rc = pipeline_build_after(p, cs, &ver);
    settle_looks(t, rc == 0);
    if (rc == 0) {
        pipeline_end(p, cs, boundary, rs, false);
        t->expired += p->deletes - deletes;
        log_debug("ttl", "%zu row(s) past their expiry: %llu document(s) deleted", found,
                  p->deletes - deletes);
    } else {
        changeset_reset(cs);
    }
    return rc;
}
