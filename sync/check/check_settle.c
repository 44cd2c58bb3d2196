/* check_settle: the drain before an exchange, for the consistency
 * check (check.h): wait until the daemon's checkpoint has passed the
 * source's binlog end as it is now; for a Kafka source, until its saved
 * offsets have passed every partition's end as Kafka has it now. */
#include <librdkafka/rdkafka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "binlog/binlog.h"
#include "kafka_conf.h"
#include "kafka_token.h"
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

/* The ends (high watermarks) of the partitions in a Kafka checkpoint, as
 * Kafka has them now, into ends (next set to the end), read by a client of
 * [kafka]'s settings that joins no group. 0, or -1 with err. */
static int kafka_ends(const struct ss_config *cfg, const struct kafka_offsets *at,
                      struct kafka_offsets *ends, char *err, size_t errlen) {
    char e[512] = "";
    rd_kafka_conf_t *conf = kafka_conf_new(cfg, "searchsync-check", e, sizeof e);
    if (!conf) return snprintf(err, errlen, "%s", e), -1;
    rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf, e, sizeof e);
    if (!rk) {
        rd_kafka_conf_destroy(conf);
        return snprintf(err, errlen, "a Kafka client: %s", e), -1;
    }
    int rc = 0;
    for (size_t i = 0; i < at->n && rc == 0; i++) {
        int64_t lo = 0, hi = 0;
        rd_kafka_resp_err_t ke = rd_kafka_query_watermark_offsets(rk, at->v[i].topic,
                                                                 at->v[i].partition, &lo, &hi, 10000);
        if (ke) {
            char sec[600] = "";
            bool refused = kafka_security_error(sec, sizeof sec);
            snprintf(err, errlen, "the end of %s partition %d: %s%s%s", at->v[i].topic,
                     (int)at->v[i].partition, rd_kafka_err2str(ke), refused ? ": " : "", sec);
            rc = -1;
        } else {
            kafka_offsets_at(ends, at->v[i].topic, at->v[i].partition, true)->next = hi;
        }
    }
    rd_kafka_destroy(rk);
    return rc;
}

/* What a wait is for: the source's binlog end as read when it began
 * (file, pos), or the ends of the partitions a Kafka checkpoint names */
struct goal {
    const char *file;
    unsigned long long pos;
    const struct kafka_offsets *ends;
    char behind[400]; /* the first partition short of its end, said when not */
};

/* Does the checkpoint in st reach the goal? */
static bool reached(const struct ss_status *st, struct goal *g) {
    if (!g->ends) return pos_cmp(st->checkpoint, g->file, g->pos) >= 0 || st->caught_up;
    struct kafka_offsets at = {0};
    bool ok = kafka_token_parse(st->checkpoint, &at) == 0;
    for (size_t i = 0; ok && i < g->ends->n; i++) {
        const struct kafka_offset *e = &g->ends->v[i];
        const struct kafka_offset *k = kafka_offsets_at(&at, e->topic, e->partition, false);
        if (!k || k->next < e->next) {
            snprintf(g->behind, sizeof g->behind, "%s partition %d at %lld of %lld", e->topic,
                     (int)e->partition, (long long)(k ? k->next : -1), (long long)e->next);
            ok = false;
        }
    }
    kafka_offsets_free(&at);
    return ok;
}

/* Poll the daemon's checkpoint until it reaches g: true; false with a note
 * when no daemon keeps one, or it did not within settle_s (or stood still
 * for 10 s). */
static bool wait_for(struct producer *pr, const struct check_opts *o, struct goal *g,
                     struct check_result *res) {
    struct pipeline *p = &pr->p;
    const char *name = p->cfg->source.name;
    double until = now_s() + o->settle_s, moved = now_s();
    char *last = NULL;
    bool ok = false;
    for (;;) {
        struct ss_status st;
        status_collect(p->cfg, p->meta, NULL, p->src, NULL, NULL, "not asked", &st);
        if (!st.checkpoint) {
            snprintf(res->settle_note, sizeof res->settle_note,
                     "no checkpoint saved for source %s: is `searchsync run` running?", name);
            status_free(&st);
            break;
        }
        if (reached(&st, g)) {
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
            if (g->ends)
                snprintf(res->settle_note, sizeof res->settle_note,
                         "the saved offsets of source %.60s did not reach the topics' ends "
                         "within %d s (%.200s): differences may be changes still on their way",
                         name, o->settle_s, g->behind);
            else
                snprintf(res->settle_note, sizeof res->settle_note,
                         "the checkpoint of source %.60s (%.80s) did not reach %.60s:%llu within "
                         "%d s: differences may be changes still on their way",
                         name, last, g->file, g->pos, o->settle_s);
            break;
        }
        usleep(200000);
    }
    free(last);
    return ok;
}

/* A Kafka source: the daemon's saved offsets reach every partition's end
 * as Kafka had it when the wait began, the partitions its checkpoint names
 * (what the producer had sent is delivered; a change it has not sent yet
 * is still on its way, which the rounds see). */
static bool settle_kafka(struct producer *pr, const struct check_opts *o,
                         struct check_result *res) {
    struct pipeline *p = &pr->p;
    struct kafka_offsets at = {0}, ends = {0};
    char e[600] = "";
    struct ss_status st;
    status_collect(p->cfg, p->meta, NULL, p->src, NULL, NULL, "not asked", &st);
    bool have = st.checkpoint && kafka_token_parse(st.checkpoint, &at) == 0 && at.n;
    status_free(&st);
    if (!have) {
        snprintf(res->settle_note, sizeof res->settle_note,
                 "no Kafka offsets saved for source %s: is `searchsync run` running?",
                 p->cfg->source.name);
        kafka_offsets_free(&at);
        return false;
    }
    int rc = kafka_ends(p->cfg, &at, &ends, e, sizeof e);
    kafka_offsets_free(&at);
    bool ok = false;
    if (rc < 0) {
        snprintf(res->settle_note, sizeof res->settle_note, "%.400s", e);
    } else {
        struct goal g = {.ends = &ends};
        ok = wait_for(pr, o, &g, res);
    }
    kafka_offsets_free(&ends);
    return ok;
}

/* Wait until the daemon's checkpoint has passed the source's binlog end as
 * it is now (or only checkpoint saves lie between): what was queued before
 * is delivered. true when it did within settle_s; false (with a note) when
 * it did not, or no daemon keeps a checkpoint for this source. */
bool check_settle(struct producer *pr, const struct check_opts *o, struct check_result *res) {
    struct pipeline *p = &pr->p;
    if (config_kafka_source(p->cfg)) return settle_kafka(pr, o, res);
    char file[256];
    unsigned long long pos = 0;
    char e[512];
    if (db_binlog_status(p->src, file, sizeof file, &pos, e, sizeof e) != 1) {
        snprintf(res->settle_note, sizeof res->settle_note, "no binlog position: %.200s", e);
        return false;
    }
    struct goal g = {.file = file, .pos = pos};
    return wait_for(pr, o, &g, res);
}
