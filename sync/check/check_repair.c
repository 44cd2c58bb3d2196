/* check_repair: the differences a check found rewritten from MySQL, and
 * compared again until they are seen to agree (check_int.h).
 *
 * First through the producer, as resync writes: each document rebuilt in a
 * read snapshot and written with the version of that snapshot's binlog
 * position, a document whose row is gone deleted, a child's copies under
 * other routings deleted. A newer live change wins over it.
 *
 * Then every repaired id is compared again. One that still differs was, as
 * a rule, refused by the engine as older though it is not: a write made in
 * the engine by hand (a DELETE, an _update, a PUT without a version) raises
 * the engine's version of that document by one per write, so when the
 * document's last change is also the binlog's last, no snapshot can be
 * versioned above it until the source writes again. Those are written again
 * here in rounds, version_type external_gte. Each round reads the binlog's
 * end, then opens a snapshot, and writes each document at the snapshot's
 * version, or at the version the engine answered in the round before when
 * that one is past the binlog's end read after the answer: no change of the
 * source can carry it (a TTL delete, one past the end, is rebuilt as a
 * delete by a snapshot taken after it). A version between the snapshot and
 * the end is a change the snapshot does not see yet; the next round's
 * does. An equal version (external_gte) never raises the engine's version
 * beyond what the hand-made writes did: no later live change is refused
 * that would not have been refused without the repair. */
#include "sync/check/check_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "db.h"
#include "log.h"
#include "sbuf.h"
#include "strset.h"
#include "search/search.h"
#include "sync/mapping/index_mapping.h"
#include "sync/pipeline/producer.h"

#define FORCE_ROUNDS 4
#define FORCE_WAIT_US 200000 /* between rounds that wait for a change to be visible */
/* a version this far past the binlog's end was not made by hand-edits of a
 * few writes (one each) but by another versioning scheme */
#define FAR_AHEAD 1000

/* the ids of v[0..n) still differing from MySQL, compared the way the check
 * compared them (content, where it did); differences only, not documents
 * that agree without a hash */
static int compare_again(struct ctx *c, const struct cand *v, size_t n, struct cand **left,
                         size_t *nleft) {
    struct cand *was = c->c;
    size_t wasn = c->nc, wascap = c->capc;
    c->c = xcalloc(n ? n : 1, sizeof *c->c);
    c->nc = c->capc = n;
    for (size_t i = 0; i < n; i++)
        c->c[i] = (struct cand){xstrdup(v[i].id), v[i].kind, NULL, 0, false, v[i].content, NULL};
    int rc = check_refresh(c) < 0 || check_verify(c) < 0 ? -1 : 0;
    size_t k = 0;
    for (size_t i = 0; i < c->nc; i++) {
        if (rc == 0 && c->c[i].kind != CK_UNHASHED) c->c[k++] = c->c[i];
        else free(c->c[i].id), free(c->c[i].path), free(c->c[i].routing);
    }
    *left = c->c, *nleft = k;
    c->c = was, c->nc = wasn, c->capc = wascap;
    return rc;
}

/* one round of writes over raised versions (above); seen[i]: the version
 * the engine answered for v[i] (0: none yet), done[i] once one landed */
static int force_round(struct ctx *c, const struct cand *v, size_t n, uint64_t *seen, bool *done,
                       size_t *waiting) {
    struct pipeline *p = &c->pr->p;
    const struct mp_index *ix = &c->pr->m.indices[c->at0];
    char file[BL_FILE_MAX], why[512] = "";
    unsigned long long pos = 0;
    int st = db_binlog_status(p->src, file, sizeof file, &pos, why, sizeof why);
    if (st != 1)
        return errf(c->err, c->errlen, "repair: the source's binlog end: %s",
                    st == 0 ? "the binlog is off, and the versions written come from it: "
                             "turn on log_bin on the source" : why);
    uint64_t endv = targets_version_at(p->cfg, p->src, ix, file, pos, why, sizeof why);
    bl_pos at;
    if (!endv) return errf(c->err, c->errlen, "repair: %s", why);
    if (pipeline_snapshot_begin(p, ix->alias, NULL, &at) < 0)
        return errf(c->err, c->errlen, "repair: %s", p->err);
    uint64_t snapv = targets_version(p, ix, &at, false);
    struct check_built_list bl = {0};
    int rc = snapv ? check_build(c, v, n, &bl) : errf(c->err, c->errlen, "repair: %s", p->err);
    pipeline_snapshot_end(p);
    sbuf body = SBUF_INIT;
    size_t *of = xcalloc(n ? n : 1, sizeof *of), nit = 0;
    enum bulk_op *ops = xcalloc(n ? n : 1, sizeof *ops);
    const struct search_dialect *dl = c->pr->client ? search_client_dialect(c->pr->client) : NULL;
    *waiting = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        if (done[i]) continue;
        uint64_t w = snapv;
        if (seen[i] > snapv) {
            if (seen[i] <= endv) { /* a change this snapshot does not see yet */
                (*waiting)++;
                continue;
            }
            w = seen[i];
            if (w - endv > FAR_AHEAD)
                log_warn("check", "%s: document %s holds version %llu in the engine, far past the "
                         "source's binlog end (%llu; another tool's own versions?): written "
                         "again at that version, it refuses the source's changes until their "
                         "versions pass it: run searchsync epoch bump to make them outrank it",
                         ix->alias, v[i].id, (unsigned long long)w, (unsigned long long)endv);
        }
        const struct check_built *bd = check_built_find(&bl, v[i].id);
        struct bulk_item it = {.op = bd ? BULK_INDEX : BULK_DELETE, .index = ix->alias,
                               .id = v[i].id, .routing = bd ? bd->routing : v[i].routing,
                               .version = w, .version_gte = true,
                               .body = bd ? bd->body : NULL, .body_len = bd ? bd->len : 0,
                               .version_field = INDEX_MAPPING_VERSION_FIELD,
                               .content_hash = true, .require_alias = true};
        bulk_append(&body, dl, &it);
        ops[nit] = it.op;
        of[nit++] = i;
    }
    struct search_resp r;
    search_resp_init(&r);
    struct bulk_result *res = xcalloc(nit ? nit : 1, sizeof *res);
    if (rc == 0 && nit) {
        if (search_request(p->k, "POST", "/_bulk", "application/x-ndjson", body.data, body.len,
                           &r) != 0 || r.status != 200)
            rc = errf(c->err, c->errlen, "repair: the engine's _bulk: %s%.300s",
                      r.err[0] ? r.err : "", r.body.data ? r.body.data : "");
        else if (bulk_response_parse(r.body.data, r.body.len, res, (int)nit) != (int)nit)
            rc = errf(c->err, c->errlen, "repair: the engine's _bulk answer is not one item a "
                      "document: %.300s", r.body.data);
    }
    for (size_t k = 0; k < nit && rc == 0; k++) {
        size_t i = of[k];
        enum bulk_class cl = bulk_classify(ops[k], &res[k]);
        if (cl == BULK_OK) {
            done[i] = true;
            c->res->repair_forced++;
        } else if (cl == BULK_STALE) {
            seen[i] = bulk_conflict_version(&res[k]);
        } else if (cl == BULK_TRANSIENT) { /* a busy engine: the next round again */
            (*waiting)++;
        } else {
            rc = errf(c->err, c->errlen, "repair: the engine refused %s (%d): %.*s", v[i].id,
                      res[k].status, (int)(res[k].error_len > 300 ? 300 : res[k].error_len),
                      res[k].error ? res[k].error : "");
        }
    }
    free(res);
    search_resp_free(&r);
    free(of);
    free(ops);
    sbuf_free(&body);
    check_built_free(&bl);
    return rc;
}

/* the documents still differing after the producer's writes, written over
 * raised versions until they land (or the rounds run out) */
static int force(struct ctx *c, const struct cand *v, size_t n) {
    uint64_t *seen = xcalloc(n ? n : 1, sizeof *seen);
    bool *done = xcalloc(n ? n : 1, sizeof *done);
    int rc = 0;
    size_t waiting = 0;
    for (int round = 0; round < FORCE_ROUNDS && rc == 0; round++) {
        if (round && waiting) usleep(FORCE_WAIT_US);
        waiting = 0;
        for (size_t off = 0; off < n && rc == 0; off += VERIFY_CHUNK) { /* requests of a bound size */
            size_t k = n - off < VERIFY_CHUNK ? n - off : VERIFY_CHUNK, w = 0;
            rc = force_round(c, v + off, k, seen + off, done + off, &w);
            waiting += w;
        }
        size_t open = 0;
        for (size_t i = 0; i < n; i++) open += !done[i];
        if (!open) break;
    }
    free(seen);
    free(done);
    return rc;
}

/* "id, kind, both sides' hashes" of a difference, into l (reset) */
static void cand_key(const struct cand *d, sbuf *l) {
    sbuf_reset(l);
    sbuf_printf(l, "%s\t%d\t%u", d->id, (int)d->kind, d->sig);
}

/* what of v[0..n) still differs, seen alike in two comparisons with the
 * daemon's checkpoint waited for before each (a live change on its way, or
 * a row changing under the comparison, is not left), at most MAX_ROUNDS */
static int settled_left(struct ctx *c, const struct cand *v, size_t n, struct cand **left,
                        size_t *nleft) {
    struct cand *prev = NULL;
    size_t nprev = 0;
    struct check_result scratch = {0}; /* (the check's own settle note stays) */
    check_settle(c->pr, c->o, &scratch);
    if (compare_again(c, v, n, &prev, &nprev) < 0) return -1;
    for (int round = 1; nprev && round < MAX_ROUNDS; round++) {
        struct strset was = {0};
        sbuf l = SBUF_INIT;
        for (size_t i = 0; i < nprev; i++) cand_key(&prev[i], &l), strset_add(&was, l.data, l.len);
        check_settle(c->pr, c->o, &scratch);
        struct cand *now = NULL;
        size_t nnow = 0;
        int rc = compare_again(c, prev, nprev, &now, &nnow);
        bool alike = rc == 0 && nnow == nprev;
        for (size_t i = 0; alike && i < nnow; i++)
            cand_key(&now[i], &l), alike = strset_has(&was, l.data, l.len);
        sbuf_free(&l);
        strset_clear(&was);
        check_free_cands(prev, nprev);
        prev = now, nprev = nnow;
        if (rc < 0) {
            check_free_cands(prev, nprev);
            return -1;
        }
        if (alike) break;
    }
    *left = prev, *nleft = nprev;
    return 0;
}

/* the producer's writes: rebuilt in one snapshot, delivered, drained */
static int rewrite(struct ctx *c) {
    struct pipeline *p = &c->pr->p;
    bl_pos end;
    if (pipeline_snapshot_begin(p, c->pr->m.indices[c->at0].alias, NULL, &end) < 0)
        return errf(c->err, c->errlen, "repair: %s", p->err);
    struct changeset cs = {0};
    for (size_t i = 0; i < c->nc; i++) {
        for (size_t u = 0; u < c->nunits; u++) { /* in its shard's unit */
            char *key = NULL;
            size_t t = producer_doc_key(&c->pr->m.indices[c->at0 + u], c->c[i].id, &key);
            if (t != SIZE_MAX) changeset_add_doc(&cs, c->at0 + u, t, key, strlen(key));
            free(key);
            if (t != SIZE_MAX) break;
        }
    }
    cs.copies_may_move = true; /* a duplicate's copies under other routings go */
    unsigned long long docs0 = p->docs, del0 = p->deletes;
    struct deliver_stats ds0;
    deliver_get_stats(p->d, &ds0); /* one producer may repair several index configs */
    int rc = pipeline_build(p, &cs, &end);
    pipeline_snapshot_end(p);
    if (rc != 0) errf(c->err, c->errlen, "repair: %s", p->err);
    pipeline_end(p, &cs, &end, NULL, false);
    changeset_free(&cs);
    int drc = deliver_drain(p->d, p->cfg->delivery.drain_timeout_ms);
    struct deliver_stats ds;
    deliver_get_stats(p->d, &ds);
    c->res->repaired_docs = p->docs - docs0;
    c->res->repaired_deletes = p->deletes - del0;
    c->res->dead_letters = ds.dead_letters - ds0.dead_letters;
    if (rc != 0) return -1;
    if (drc != DELIVER_OK)
        return errf(c->err, c->errlen, "repair: delivery did not finish within drain_timeout_ms");
    return 0;
}

int check_repair(struct ctx *c) { return rewrite(c) < 0 ? -1 : check_repair_again(c); }

int check_repair_again(struct ctx *c) {
    struct cand *left = NULL;
    size_t nleft = 0;
    if (compare_again(c, c->c, c->nc, &left, &nleft) < 0) return -1;
    if (nleft) {
        log_info("check", "%s: %zu document(s) still differ from MySQL after the writes "
                 "(written in the engine by hand over searchsync's version?): written again "
                 "over the engine's version", c->ix->alias, nleft);
        struct cand *left2 = NULL;
        size_t nleft2 = 0;
        int rc = force(c, left, nleft);
        if (rc == 0) rc = settled_left(c, left, nleft, &left2, &nleft2);
        check_free_cands(left, nleft);
        if (rc < 0) return -1;
        left = left2, nleft = nleft2;
    }
    c->res->repair_left = xcalloc(nleft ? nleft : 1, sizeof *c->res->repair_left);
    for (size_t i = 0; i < nleft; i++) {
        c->res->repair_left[c->res->nrepair_left++] = left[i].id;
        left[i].id = NULL;
    }
    check_free_cands(left, nleft);
    c->res->repaired = c->res->dead_letters == 0 && c->res->nrepair_left == 0;
    return 0;
}
