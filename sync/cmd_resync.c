/* cmd_resync: `searchsync resync --config FILE INDEX --ids ID,..` — given
 * documents rebuilt from MySQL, as one more producer of change sets.
 *
 * The ids become a change set (root keys, `<join_name>-<key>` child ids)
 * built and delivered by the same back half as live sync (sync/pipeline.c):
 * to the live alias and to a version being built, a document whose row is
 * gone deleted, a child's copies under other routings deleted
 * (child_copies.c). Its version is the binlog position read before the rows
 * are (seed 000): a live change made since is newer and wins, and the
 * rebuilt content is at least as new as that position. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "log.h"
#include "producer.h"

static void resync_usage(FILE *out) {
    fprintf(out, "usage: searchsync resync --config FILE INDEX --ids ID[,ID...]\n\n"
                 "Rebuild just these documents of index config INDEX from MySQL: root keys\n"
                 "(42) or child ids (review-7). A document whose row is gone is deleted.\n");
}

int cmd_resync(int argc, char **argv) {
    static const struct option own[] = {{"ids", required_argument, NULL, 'i'},
                                        {NULL, 0, NULL, 0}};
    struct command c = {.name = "resync", .usage = resync_usage, .opts = own, .shortopts = "i:",
                        .argc = argc, .argv = argv};
    const char *ids = NULL;
    int o;
    while ((o = command_opt(&c)) > 0) ids = optarg; /* 'i' */
    if (o < 0) return c.rc;
    if (!c.config || !ids || !*ids || optind != argc - 1) return command_usage(&c);
    const char *alias = argv[optind];
    int rc = command_begin(&c, 0);
    if (rc >= 0) return rc;
    const struct ss_config *cfg = &c.cfg;
    struct producer pr;
    struct producer_opts po = {.engine = true, .flush_interval_ms = 5};
    rc = producer_open(&pr, cfg, &po);
    struct pipeline *p = &pr.p;
    struct changeset cs = {0};
    char *err = pr.err;
    const size_t errlen = sizeof pr.err;
    if (rc != EXIT_OK) goto fail;
    rc = EXIT_RUNTIME;
    size_t at = 0;
    while (at < pr.m.nindices && strcmp(pr.m.indices[at].alias, alias)) at++;
    if (at == pr.m.nindices) {
        snprintf(err, errlen, "source %s has no index config \"%s\"", cfg->source.name, alias);
        rc = EXIT_USAGE;
        goto fail;
    }
    const struct mp_index *ix = &pr.m.indices[at];
    if (!ix->current_version && !targets_build_of(p, alias)) {
        snprintf(err, errlen, "index %s has no version yet: run searchsync reindex %s", alias,
                 alias);
        rc = EXIT_USAGE;
        goto fail;
    }
    /* the version: the position of the snapshot the rows are read in */
    bl_pos end;
    if (pipeline_snapshot_begin(p, &end) < 0) {
        snprintf(err, errlen, "%s", p->err);
        goto fail;
    }

    /* the change set: each id under its document table */
    for (const char *s = ids; *s;) {
        const char *c = strchr(s, ',');
        size_t len = c ? (size_t)(c - s) : strlen(s);
        if (len) {
            char *id = xstrndup(s, len);
            const char *key;
            size_t t = producer_doc_table(ix, id, &key);
            changeset_add_doc(&cs, at, t, key, strlen(key));
            free(id);
        }
        s += len + (c ? 1 : 0);
    }
    cs.copies_may_move = true; /* a child's copies under any other routing go */
    int brc = pipeline_build(p, &cs, &end);
    pipeline_snapshot_end(p);
    if (brc != 0) snprintf(err, errlen, "%s", p->err);
    pipeline_end(p, &cs, &end, false);
    int drc = deliver_drain(p->d, cfg->delivery.drain_timeout_ms);
    struct deliver_stats ds;
    deliver_get_stats(p->d, &ds);
    if (brc != 0) goto fail;
    if (drc != DELIVER_OK) {
        snprintf(err, errlen, "delivery did not finish within drain_timeout_ms");
        goto fail;
    }
    printf("%s: %llu document(s) rebuilt, %llu deleted, %llu dead letter(s), %llu stale (newer "
           "data already there)\n",
           alias, p->docs, p->deletes, (unsigned long long)ds.dead_letters,
           (unsigned long long)ds.stale);
    rc = ds.dead_letters ? EXIT_FOUND : EXIT_OK;
    goto out;
fail:
    fprintf(stderr, "searchsync resync: %s\n", err);
out:
    changeset_free(&cs);
    producer_close(&pr);
    return command_end(&c, rc);
}
