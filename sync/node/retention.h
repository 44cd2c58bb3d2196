/* retention: history rows of the metadata schema cleaned after the days the
 * `retention` table keeps for them (migration 0003):
 *
 *   sync_log          created_at older than keep_days
 *   job_errors        created_at older
 *   change_snapshots  done, and last touched (updated_at) before
 *   delayed_runs      finished (done or failed) and started before
 *   check_runs        started before
 *
 * Of this source only, where the table has a source column. Never pruned:
 * dead_letters (each is a change the engine refused: it goes when it is
 * replayed or discarded, never by age — losing one would lose a change),
 * jobs and reindex_runs (a reindex's bookkeeping keeps [reindex] keep_runs).
 * Deletes go in bounded batches (RETENTION_BATCH rows a statement). Run by
 * the daemon that reads the source, at start and every hour (schedule.c). */
#ifndef SS_RETENTION_H
#define SS_RETENTION_H
#include <signal.h>
#include <stddef.h>

#include "config.h"
#include "schedule.h"

struct st_mysql;

#define RETENTION_BATCH 5000

/* One pass; *deleted: rows removed in all. 0, or -1 with err. */
int retention_prune(struct st_mysql *meta, const char *source, unsigned long long *deleted,
                    char *err, size_t errlen);

/* The daemon's pass: at start, then every hour, on a connection of its own;
 * what it removed said at info, a failure at warn (once until it works). */
struct retention_schedule {
    const struct ss_config *cfg;
    struct schedule sch;
    bool warned;
};
int retention_schedule_start(struct retention_schedule *r, const struct ss_config *cfg,
                             volatile sig_atomic_t *daemon_stop);
void retention_schedule_stop(struct retention_schedule *r);

#endif
