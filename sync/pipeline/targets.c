/* targets: where the writes of an index config go, and with which version.
 *
 * A change of an index config goes to every target it has now: the live
 * version behind its alias (written through the alias, with require_alias,
 * so a deleted alias fails loudly instead of auto-creating an index) and a
 * version being built (dual writes, by its physical name), with the same
 * version: epoch | binlog file number | position (docs/delivery.md,
 * "Versions"), or with
 * [source] versions = gtid epoch | the GTID ordinal of the transaction
 * (bl_gtid_ordinal, carried by the position; gtid_version.c for a
 * snapshot's).
 *
 * One queue for every write of an index config (targets_queue: its alias),
 * whichever index it names. A write through the alias lands in the version
 * the alias points at when the request reaches the engine, not when it was
 * queued: at a switch, writes queued before it land in the new version
 * beside the dual writes to that version by name. Were they two queues
 * (the physical index each was meant for), an older write still queued
 * through the alias could land after a newer delete sent to the new version
 * by name, and once the engine forgot the delete's tombstone
 * (index.gc_deletes) it brought the deleted document back — seen under load
 * with the reader minutes behind at the switch (t_reindex_writes). In one
 * queue a document's writes to every version of its index config leave in
 * the order they were decided, one batch in flight, so none can overtake
 * another whatever the alias points at. Every stage of
 * the pipeline that writes (documents, element scripts, row images, child
 * copies) writes through here, below sync/pipeline/pipeline.c which calls them; so
 * does a reindex's page (sync/reindex/reindex_runner.c, targets_submit_page), which
 * targets the version it builds only, with the version of its read
 * snapshot, in a queue of its own. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sync/pipeline/gtid_version.h"
#include "invariant.h"
#include "log.h"
#include "sync/mapping/mapping_shard.h"
#include "sync/pipeline/pipeline.h"

/* I6 (src/invariant.h; docs/delivery.md, "Versions of several sources"):
 * the versions of one document all come from one source's binlog. This
 * process makes versions of its own source's positions only, so what it
 * writes must be its source's: the index config (or unit) is the one the
 * process's source feeds, made that source's when several feed it, and a
 * document id made by a template that names the source is one of that
 * source's. */
void targets_source_check(const char *source, const struct mp_index *ix, const char *doc_id) {
    SS_INVARIANT(!mp_index_multi(ix) || (ix->source && !strcmp(ix->source, source)), "I6",
                 "index %s (%zu sources) written by source %s as source %s's", ix->alias,
                 ix->nsources, source, ix->source ? ix->source : "(none)");
    size_t n = 0;
    SS_INVARIANT(!doc_id || !ix->source || !mp_ids_templated(ix) || mp_doc_key(ix, doc_id, &n),
                 "I6", "index %s: document %s is not one source %s makes (id template %s)",
                 ix->alias, doc_id ? doc_id : "", source, mp_id_template(ix));
}

const struct build *targets_build_of(const struct pipeline *p, const char *alias) {
    for (size_t i = 0; i < p->nbuilds; i++)
        if (!strcmp(p->builds[i].alias, alias)) return &p->builds[i];
    return NULL;
}

int targets_submit(struct pipeline *p, const struct mp_index *ix, const struct change *c) {
    targets_source_check(p->cfg->source.name, ix, c->doc_id);
    /* [log] level = debug: every change, with where it came from */
    char at[64];
    log_debug("run", "%s index=%s id=%s version=%llu (%s)%s", change_op_name(c->op), ix->alias,
              c->doc_id, (unsigned long long)c->version,
              version_describe(c->version, at, sizeof at),
              ix->deliveries_stopped ? " (its live deliveries are stopped)" : "");
    /* stopped (sync/node/index_stop.c): nothing through the alias until a build of
     * the index goes live; the build's dual writes go on */
    if (ix->current_version > 0 && !ix->deliveries_stopped) {
        /* to the alias only: if someone deleted it, the writes fail (dead
         * letters) rather than auto-create a concrete index of that name */
        struct change c1 = *c;
        c1.require_alias = true;
        c1.target = targets_queue(ix->alias);
        if (deliver_submit(p->d, &c1) != DELIVER_OK) return -1;
    }
    const struct build *b = targets_build_of(p, ix->alias);
    if (b && targets_submit_build(p->d, b->alias, b->phys, c) < 0) return -1;
    return 0;
}

const char *targets_queue(const char *alias) { return alias; }

/* A reindex page's queue: its own, not the index config's. A page carries
 * the version of its read snapshot, which a live write of the same
 * document decided later outranks at the engine; in the config's queue
 * every page would wait behind the reader's whole backlog (the live writes
 * and their dual writes), and a build under a busy writer would crawl.
 * Why a page landing after a newer dual write never resurrects a document:
 * src/deliver/stream.c, "Order between streams", and the build's
 * gc_deletes (sync/reindex/reindex_runner.c). */
int targets_submit_page(struct deliver *d, const char *phys, const struct change *c) {
    /* per document: concatenated by hand, as snprintf showed in profiles */
    static const char tail[] = " (pages)";
    char q[512];
    size_t n = strlen(phys);
    if (n > sizeof q - sizeof tail) n = sizeof q - sizeof tail;
    memcpy(q, phys, n);
    memcpy(q + n, tail, sizeof tail);
    struct change c2 = *c;
    c2.index = phys;
    c2.target = q;
    return deliver_submit(d, &c2) == DELIVER_OK ? 0 : -1;
}

int targets_submit_build(struct deliver *d, const char *alias, const char *phys,
                         const struct change *c) {
    struct change c2 = *c;
    c2.index = phys;
    c2.target = targets_queue(alias);
    return deliver_submit(d, &c2) == DELIVER_OK ? 0 : -1;
}

uint64_t targets_version_at(const struct ss_config *cfg, MYSQL *src, const struct mp_index *ix,
                            const char *file, unsigned long long pos, char *err, size_t errlen) {
    targets_source_check(cfg->source.name, ix, NULL);
    if (config_gtid_versions(cfg)) {
        uint64_t ord = 0;
        if (gtid_server_ordinal(src, file, pos, &ord, err, errlen) < 0) return 0;
        uint64_t v = version_make_gtid(ix->epoch, ord, false);
        if (!v) snprintf(err, errlen, "GTID ordinal %llu does not fit a version",
                         (unsigned long long)ord);
        return v;
    }
    uint64_t v = version_make(ix->epoch, bl_file_seq(file), pos);
    if (!v) snprintf(err, errlen, "position %s:%llu does not fit a version", file, pos);
    return v;
}

uint64_t targets_version(struct pipeline *p, const struct mp_index *ix, const bl_pos *end,
                         bool after) {
    targets_source_check(p->cfg->source.name, ix, NULL);
    if (config_gtid_versions(p->cfg)) {
        uint64_t v = end->ordinal ? version_make_gtid(ix->epoch, end->ordinal, after)
                                  : 0;
        if (!v) snprintf(p->err, sizeof p->err, "the transaction ending at %s:%llu has no GTID "
                         "ordinal that fits a version (%llu; [source] versions = gtid)",
                         end->file, (unsigned long long)end->pos,
                         (unsigned long long)end->ordinal);
        return v;
    }
    uint64_t v = version_make(ix->epoch, bl_file_seq(end->file), end->pos);
    if (!v) snprintf(p->err, sizeof p->err, "position %s:%llu does not fit a version", end->file,
                     (unsigned long long)end->pos);
    return v;
}
