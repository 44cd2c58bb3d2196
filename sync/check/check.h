/* check: the consistency check of one index config — its documents in the
 * engine against the documents MySQL gives (docs/check.md).
 *
 * Work proportional to the difference, not the table (anti-entropy):
 *
 *   MySQL side   every document table read page by page by the builder
 *                (docbuild_page, as a reindex reads it) and each document
 *                hashed in the daemon: (key hash of its id, content hash of
 *                its body) — the very bytes a write sends, so a hash computed
 *                here equals the one stored at write time (content_hash.h).
 *                Hashing the builder's output instead of an SQL expression
 *                keeps one definition of a document: SQL would have to
 *                reproduce the builder's formatting of every type, and any
 *                drift between the two would be reported as drift in the
 *                index.
 *   engine side  a histogram of ss_key_hash with, per bucket, the count and
 *                the sum of ss_hash (and how many documents have one): no
 *                document is fetched for a bucket that agrees.
 *   drill-down   a bucket that differs is split into 64 (both sides) until it
 *                holds at most CHECK_LEAF documents; a leaf lists its ids and
 *                hashes (doc values, no _source) and is merged with MySQL's by
 *                id: missing, extra, different, unhashed (a scripted update
 *                removed its hash), duplicate (copies under two routings).
 *   versions     a document someone else wrote last keeps the ss_hash it
 *                copied: its engine _version is not its ss_version, and the
 *                versions of the hashed documents are listed (no _source)
 *                to find it (check_versions.h); compared by content.
 *   settle       the drain before an exchange: each candidate is
 *                looked at again once the daemon's checkpoint has passed the
 *                binlog position taken before the rows were read — rebuilt
 *                from MySQL, its _source fetched, compared field by field
 *                (check_diff.c) — in up to three rounds, each after the
 *                checkpoint passed a newer position; a difference is believed
 *                when a round sees it as the round before did (same kind, path
 *                and content on both sides), so a writer at work does not show
 *                up as drift: what is never seen twice alike is "unsettled".
 *   repair       what is left goes through the normal pipeline as a resync
 *                (cmd/cmd_resync.c): rebuilt or deleted with the version of a
 *                binlog position read before the rows, so a newer live change
 *                always wins.
 */
#ifndef SS_CHECK_H
#define SS_CHECK_H
#include <stdbool.h>
#include <signal.h>
#include <stddef.h>

#include "sync/pipeline/producer.h"
#include "sbuf.h"

#define CHECK_LEAF 2000 /* a bucket at most this big lists its ids */
#define CHECK_SPLIT 64  /* a bigger one that differs is split this many ways */

enum check_kind { CK_MISSING, CK_EXTRA, CK_DIFFERENT, CK_UNHASHED, CK_DUPLICATE };

struct check_item {
    char *id;
    enum check_kind kind;
    char *path; /* CK_DIFFERENT: the first differing field, else NULL */
};

struct check_opts {
    const char *alias;
    long since_s;     /* > 0: only rows changed in the last since_s seconds */
    bool repair;
    bool deep;        /* every document compared by content, not only where the
                       * hashes or versions disagree (reads every document: O(index)) */
    int settle_s;     /* how long to wait for the daemon's checkpoint per round */
    const char *trigger; /* check_runs.trigger_kind: "command" (NULL) or "schedule" */
    const char *node;    /* who ran it (check_runs.node), NULL: not said */
    volatile sig_atomic_t *stop; /* set: give up between pages and settle polls */
};

struct check_result {
    struct check_item *items; /* differences left after the settle rounds */
    size_t nitems, capitems;
    unsigned long long rows, engine_docs, buckets, buckets_differed, ids_listed,
        docs_fetched, unhashed, legacy, rounds,
        versions_listed, /* hashed documents whose versions were listed (check_versions.h) */
        rewritten,       /* ... of them written last by someone else than searchsync */
        unsettled; /* differences never seen twice alike: rows changing during the check */
    bool settled;       /* the daemon's checkpoint passed the last round's position */
    char settle_note[512];
    char window_note[256]; /* why a window check became a whole-index one */
    bool repaired;      /* --repair ran, delivered everything, and no document it
                           repaired differs any more */
    unsigned long long repaired_docs, repaired_deletes, dead_letters,
        repair_forced; /* written again over a version someone raised in the engine */
    char **repair_left; /* ids that still differ after the repair */
    size_t nrepair_left;
    double seconds;
};

/* Run the check on an open producer (with engine). EXIT_OK (clean, or all
 * repaired), EXIT_FOUND (differences left), EXIT_USAGE (no such index, no
 * version, a --since without a daily_check_column) or EXIT_RUNTIME, with
 * pr->err. */
int check_run(struct producer *pr, const struct check_opts *o, struct check_result *res);
/* The documents ids[0..n) of index config o->alias compared with MySQL by
 * content after another producer wrote them (a resync whose writes the
 * engine refused as stale), and those that differ written again as
 * --repair writes them: res's repair_forced and repair_left. EXIT_OK,
 * EXIT_USAGE (no such index config) or EXIT_RUNTIME, with pr->err. */
int check_rewrite_ids(struct producer *pr, const struct check_opts *o, const char *const *ids,
                      size_t n, struct check_result *res);
/* The producer a check runs on: with the engine, its repairs flushed within
 * 5 ms (a repair is visible when the check reports it), on the delivery
 * stream named stream ("repair", "replay") of hub (the node's delivery;
 * NULL: one of its own). EXIT_OK, or EXIT_RUNTIME with pr->err;
 * producer_close it either way. */
struct deliver_hub;
int check_producer_open(struct producer *pr, const struct ss_config *cfg,
                        struct deliver_hub *hub, const char *stream);
void check_result_free(struct check_result *res);

/* Wait until the daemon's checkpoint has passed the source's binlog end as
 * it is now (or only checkpoint saves lie between): what was queued before
 * is delivered. true when it did within o->settle_s; false with
 * res->settle_note when it did not, or no daemon keeps a checkpoint for the
 * source (check_settle.c). */
bool check_settle(struct producer *pr, const struct check_opts *o, struct check_result *res);

/* The result as one JSON object (docs/check.md), each difference list cut
 * at max_ids ids. */
void check_result_json(const char *alias, const struct check_opts *o,
                       const struct check_result *r, size_t max_ids, sbuf *out);
/* One row of check_runs for this run (rc: check_run's; error: its message
 * when it failed). 0, or -1 with err. */
int check_record(struct st_mysql *meta, const char *source, const char *mapping,
                 const struct check_opts *o,
                 const struct check_result *r, int rc, const char *error, char *err,
                 size_t errlen);

const char *check_kind_name(enum check_kind k);

#endif
