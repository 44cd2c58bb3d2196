/* check: what a consistency check's parts share (check_int.h) — the kinds
 * of difference, the candidates and MySQL's records — and the result freed
 * (see check.h). The run is check_run.c. */
#include "sync/check/check.h"
#include "sync/check/check_int.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "binlog/binlog.h"
#include "sync/check/check_diff.h"
#include "sync/check/check_versions.h"
#include "exit_codes.h"
#include "sync/delayed/delayed.h"
#include "sync/pipeline/docbuild.h"
#include "sync/mapping/mapping_source.h"
#include "json_exact.h"
#include "jsonw.h"
#include "log.h"
#include "search/content_hash.h"
#include "sync/status/status.h"
#include "strset.h"

const char *check_kind_name(enum check_kind k) {
    static const char *const n[] = {"missing", "extra", "different", "unhashed", "duplicate"};
    return n[k];
}

double check_now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

const char *check_rec_id(const struct ctx *c, const struct rec *r) { return c->ids.data + r->id; }

void check_add_cand(struct ctx *c, const char *id, enum check_kind kind) {
    if (c->nc == c->capc) {
        c->capc = c->capc ? c->capc * 2 : 64;
        c->c = xrealloc(c->c, c->capc * sizeof *c->c);
    }
    c->c[c->nc++] = (struct cand){xstrdup(id), kind, NULL, 0, false, false, NULL};
}

void check_free_cands(struct cand *v, size_t n) {
    for (size_t i = 0; i < n; i++) free(v[i].id), free(v[i].path), free(v[i].routing);
    free(v);
}

bool check_doc_table(const struct mp_index *ix, size_t t) {
    return t == 0 || ix->tables[t].parent_table;
}

/* first record with kh >= v */
size_t check_lower(const struct ctx *c, uint64_t v) {
    size_t lo = 0, hi = c->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (c->r[mid].kh < v) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

void check_result_free(struct check_result *res) {
    for (size_t i = 0; i < res->nitems; i++) free(res->items[i].id), free(res->items[i].path);
    free(res->items);
    for (size_t i = 0; i < res->nrepair_left; i++) free(res->repair_left[i]);
    free(res->repair_left);
    memset(res, 0, sizeof *res);
}
