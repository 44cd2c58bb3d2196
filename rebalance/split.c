/* split: jobs spread over nodes by weight (see split.h). */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "split.h"

struct order {
    size_t i;
    const struct split_job *j;
};

static int heavier_first(const void *a, const void *b) {
    const struct order *x = a, *y = b;
    if (x->j->weight != y->j->weight) return x->j->weight < y->j->weight ? 1 : -1;
    return x->i < y->i ? -1 : x->i > y->i; /* stable: the input order */
}

void split_jobs(struct split_job *jobs, size_t njobs, const char *const *nodes, size_t nnodes) {
    if (!njobs || !nnodes) return;
    unsigned kinds = 1;
    for (size_t i = 0; i < njobs; i++)
        if (jobs[i].kind >= kinds) kinds = jobs[i].kind + 1;
    struct order *o = calloc(njobs, sizeof *o);
    uint64_t *load = calloc((size_t)kinds * nnodes, sizeof *load); /* per kind and node */
    uint64_t *all = calloc(nnodes, sizeof *all);                    /* per node */
    if (!o || !load || !all) abort();
    for (size_t i = 0; i < njobs; i++) o[i] = (struct order){i, &jobs[i]};
    qsort(o, njobs, sizeof *o, heavier_first);
    for (size_t k = 0; k < njobs; k++) {
        struct split_job *j = &jobs[o[k].i];
        const uint64_t *kl = load + (size_t)j->kind * nnodes;
        size_t best = 0;
        for (size_t n = 1; n < nnodes; n++) {
            bool prev_n = j->previous && !strcmp(j->previous, nodes[n]);
            bool prev_b = j->previous && !strcmp(j->previous, nodes[best]);
            if (kl[n] < kl[best] ||
                (kl[n] == kl[best] && (prev_n > prev_b ||
                                       (prev_n == prev_b && all[n] < all[best]))))
                best = n;
        }
        j->node = best;
        load[(size_t)j->kind * nnodes + best] += j->weight ? j->weight : 1;
        all[best] += j->weight ? j->weight : 1;
    }
    free(o);
    free(load);
    free(all);
}
