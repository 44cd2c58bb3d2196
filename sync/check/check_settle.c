/* check_settle: the drain before an exchange, for the consistency
 * check (check.h): wait until the daemon's checkpoint has passed the
 * source's binlog end as it is now. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "binlog/binlog.h"
#include "sync/check/check.h"
#include "sync/status/status.h"

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* a checkpoint "file:pos" against file:pos, by the files' sequence numbers
 * (mysql-bin.1000000 follows mysql-bin.999999) */
static int pos_cmp(const char *ckpt, const char *file, unsigned long long pos) {
    /* [source] versions = gtid: "file:pos;gtid=SET" (sync/pipeline/gtid_version.h) */
    const char *mark = strstr(ckpt, ";gtid=");
    const char *colon = mark ? memrchr(ckpt, ':', (size_t)(mark - ckpt)) : strrchr(ckpt, ':');
    if (!colon) return -1;
    char cf[BL_FILE_MAX];
    snprintf(cf, sizeof cf, "%.*s", (int)(colon - ckpt), ckpt);
    uint32_t a = bl_file_seq(cf), b = bl_file_seq(file);
    if (a != b) return a < b ? -1 : 1;
    unsigned long long p = strtoull(colon + 1, NULL, 10);
    return p < pos ? -1 : p > pos;
}

/* Wait until the daemon's checkpoint has passed the source's binlog end as
 * it is now (or only checkpoint saves lie between): what was queued before
 * is delivered. true when it did within settle_s; false (with a note) when
 * it did not, or no daemon keeps a checkpoint for this source. */
bool check_settle(struct producer *pr, const struct check_opts *o, struct check_result *res) {
    struct pipeline *p = &pr->p;
    char file[256];
    unsigned long long pos = 0;
    char e[512];
    if (db_binlog_status(p->src, file, sizeof file, &pos, e, sizeof e) != 1) {
        snprintf(res->settle_note, sizeof res->settle_note, "no binlog position: %.200s", e);
        return false;
    }
    double until = now_s() + o->settle_s, moved = now_s();
    char *last = NULL;
    bool ok = false;
    for (;;) {
        struct ss_status st;
        status_collect(p->cfg, p->meta, NULL, p->src, NULL, NULL, "not asked", &st);
        if (!st.checkpoint) {
            snprintf(res->settle_note, sizeof res->settle_note,
                     "no checkpoint saved for source %s: is `searchsync run` running?",
                     p->cfg->source.name);
            status_free(&st);
            break;
        }
        if (pos_cmp(st.checkpoint, file, pos) >= 0 || st.caught_up) {
            ok = true;
            status_free(&st);
            break;
        }
        if (!last || strcmp(last, st.checkpoint)) {
            free(last);
            last = xstrdup(st.checkpoint);
            moved = now_s();
        }
        status_free(&st);
        if (o->stop && *o->stop) break;
        if (now_s() > until || now_s() - moved > 10) {
            snprintf(res->settle_note, sizeof res->settle_note,
                     "the checkpoint of source %.60s (%.80s) did not reach %.60s:%llu within %d s: "
                     "differences may be changes still on their way",
                     p->cfg->source.name, last ? last : "?", file, pos, o->settle_s);
            break;
        }
        usleep(200000);
    }
    free(last);
    return ok;
}
