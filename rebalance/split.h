/* split: which node runs which job after a rebalance — pure logic, no
 * ZooKeeper and no SQL (rebalance/split.c, tests/unit/test_split.c).
 *
 * Jobs carry a weight (the rows they have left, as well as it is known) and
 * the node that ran them before the rebalance. The split is sticky: every
 * job whose previous owner is among the nodes stays with it; the others (a
 * dead node's, a new build's) go heaviest first each to the node with the
 * least weight so far (longest-processing-time-first); then, while the
 * most loaded node holds a job lighter than its gap to the least loaded
 * one, the job that evens the two out best moves there — one that just
 * arrived before one its node ran already. So a node's death moves the
 * dead node's jobs and no other as long as they even the loads out, a node
 * joining takes over as few jobs as even the loads out (for equal weights:
 * the counts then differ by at most one), and nothing moves for a gap no
 * job fits. Ties go to the node with the least
 * load of all kinds, then to the node listed first.
 *
 * Kinds (reindex jobs 0, a delayed run's jobs 1: sync/cluster/job_assign.c) are
 * balanced each on its own — the weights of two kinds are not comparable,
 * and each kind should run on every node — the ties going to the node
 * least loaded overall. */
#ifndef SS_SPLIT_H
#define SS_SPLIT_H
#include <stddef.h>
#include <stdint.h>

struct split_job {
    uint64_t weight;      /* rows left (at least 1) */
    const char *previous; /* node id that owned it, or NULL */
    unsigned kind;        /* balanced per kind (0 when only one) */
    size_t node;          /* out: index into the nodes given */
};

/* Assign every job of jobs[0..njobs) to one of nodes[0..nnodes) (nnodes >
 * 0). Deterministic for the same input. */
void split_jobs(struct split_job *jobs, size_t njobs, const char *const *nodes, size_t nnodes);

#endif
