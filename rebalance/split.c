/* split: jobs spread over nodes by weight (see split.h). */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "split.h"

struct order {
    size_t i;
    const struct split_job *j;
};

struct loads {
    size_t nnodes;
    uint64_t *kind; /* per kind and node: kind * nnodes + node */
    uint64_t *all;  /* per node */
};

static uint64_t wt(const struct split_job *j) { return j->weight ? j->weight : 1; }

static int heavier_first(const void *a, const void *b) {
    const struct order *x = a, *y = b;
    if (x->j->weight != y->j->weight) return x->j->weight < y->j->weight ? 1 : -1;
    return x->i < y->i ? -1 : x->i > y->i; /* stable: the input order */
}

static void place(struct loads *l, struct split_job *j, size_t node) {
    j->node = node;
    l->kind[(size_t)j->kind * l->nnodes + node] += wt(j);
    l->all[node] += wt(j);
}

static void unplace(struct loads *l, const struct split_job *j) {
    l->kind[(size_t)j->kind * l->nnodes + j->node] -= wt(j);
    l->all[j->node] -= wt(j);
}

/* the node least loaded with kind k: ties to the least loaded overall,
 * then to the one listed first */
static size_t lightest(const struct loads *l, unsigned k) {
    const uint64_t *kl = l->kind + (size_t)k * l->nnodes;
    size_t best = 0;
    for (size_t n = 1; n < l->nnodes; n++)
        if (kl[n] < kl[best] || (kl[n] == kl[best] && l->all[n] < l->all[best])) best = n;
    return best;
}

/* One move that evens out kind k: from the node most loaded with it to the
 * least loaded, the job whose move leaves the pair's heavier side lightest,
 * one that did not run there before preferred (it moves anyway). A job
 * moves only when it weighs less than the gap between the two, so every
 * move lowers the sum of the squared loads and the moves end. false: no
 * such job, kind k is balanced. */
static bool even_out(struct loads *l, struct split_job *jobs, size_t njobs, const size_t *prev,
                     unsigned k) {
    const uint64_t *kl = l->kind + (size_t)k * l->nnodes;
    size_t s = 0, d = lightest(l, k);
    for (size_t n = 1; n < l->nnodes; n++)
        if (kl[n] > kl[s]) s = n;
    if (kl[s] <= kl[d]) return false;
    uint64_t gap = kl[s] - kl[d];
    size_t pick = SIZE_MAX;
    uint64_t pick_max = 0;
    bool pick_kept = true;
    for (size_t i = 0; i < njobs; i++) {
        const struct split_job *j = &jobs[i];
        if (j->kind != k || j->node != s || wt(j) >= gap) continue;
        uint64_t after = kl[s] - wt(j) > kl[d] + wt(j) ? kl[s] - wt(j) : kl[d] + wt(j);
        bool kept = prev[i] == s;
        if (pick == SIZE_MAX || (pick_kept && !kept) ||
            (pick_kept == kept && after < pick_max)) {
            pick = i;
            pick_max = after;
            pick_kept = kept;
        }
    }
    if (pick == SIZE_MAX) return false;
    unplace(l, &jobs[pick]);
    place(l, &jobs[pick], d);
    return true;
}

void split_jobs(struct split_job *jobs, size_t njobs, const char *const *nodes, size_t nnodes) {
    if (!njobs || !nnodes) return;
    unsigned kinds = 1;
    for (size_t i = 0; i < njobs; i++)
        if (jobs[i].kind >= kinds) kinds = jobs[i].kind + 1;
    struct order *o = calloc(njobs, sizeof *o);
    size_t *prev = calloc(njobs, sizeof *prev); /* the previous owner's index, or SIZE_MAX */
    struct loads l = {nnodes, calloc((size_t)kinds * nnodes, sizeof(uint64_t)),
                      calloc(nnodes, sizeof(uint64_t))};
    if (!o || !prev || !l.kind || !l.all) abort();
    /* 1. every job whose owner is still here stays with it */
    size_t norphans = 0;
    for (size_t i = 0; i < njobs; i++) {
        prev[i] = SIZE_MAX;
        for (size_t n = 0; jobs[i].previous && n < nnodes && prev[i] == SIZE_MAX; n++)
            if (!strcmp(jobs[i].previous, nodes[n])) prev[i] = n;
        if (prev[i] != SIZE_MAX) place(&l, &jobs[i], prev[i]);
        else o[norphans++] = (struct order){i, &jobs[i]};
    }
    /* 2. the others, heaviest first, each to the least loaded node */
    qsort(o, norphans, sizeof *o, heavier_first);
    for (size_t k = 0; k < norphans; k++) {
        struct split_job *j = &jobs[o[k].i];
        place(&l, j, lightest(&l, j->kind));
    }
    /* 3. as few moves as even the loads out */
    for (unsigned k = 0; k < kinds; k++)
        for (size_t guard = 0; guard < njobs * nnodes && even_out(&l, jobs, njobs, prev, k);
             guard++)
            ;
    free(o);
    free(prev);
    free(l.kind);
    free(l.all);
}
