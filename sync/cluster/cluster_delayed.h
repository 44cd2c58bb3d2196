/* cluster_delayed: the delayed-run jobs a rebalance gave a node of a
 * ZooKeeper cluster (sync/cluster/cluster_jobs.c starts and stops them), run one
 * after another on a thread of their own, through a pipeline of their own
 * (sync/pipeline/producer.h), every write on a job fenced by the node and the
 * rebalance session (delayed_job_run). A job cut off from the source's
 * server waits at its cursor on its node, which runs it again once the
 * server answers. Whichever node ends the last job of a run settles the
 * run, once (delayed_run_finish: the run's row locked). */
#ifndef SS_CLUSTER_DELAYED_H
#define SS_CLUSTER_DELAYED_H
#include <stdbool.h>
#include <stddef.h>

#include "config.h"
#include "sync/delayed/delayed.h"

struct delayed_worker;
struct deliver_hub;

/* Open the pipeline (writing through hub, the node's delivery) and start
 * running jobs[0..n) (taken over, cursors too) as node under session. NULL
 * with err (nothing started: the caller tries again). */
struct delayed_worker *delayed_worker_start(const struct ss_config *cfg,
                                            struct deliver_hub *hub, const char *node,
                                            const char *session, struct delayed_job *jobs,
                                            size_t n, char *err, size_t errlen);
/* Every job ended (done, failed, or taken by a later rebalance). */
bool delayed_worker_done(struct delayed_worker *w);
/* Stop between two pages (the job's cursor kept, the job left running for
 * the next rebalance), wait, free. NULL-safe. */
void delayed_worker_free(struct delayed_worker *w);

#endif
