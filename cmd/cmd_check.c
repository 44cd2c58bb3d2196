/* cmd_check: `searchsync check --config FILE INDEX [--since DUR] [--repair]
 * [--json] [--settle SECONDS]` — the consistency check (sync/check/check.h) as a
 * command: a summary line first, then one line per difference (or one JSON
 * object). Exit 0 clean or all repaired, 3 differences found and left, 1 a
 * failure, 2 usage. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sync/check/check.h"
#include "commands.h"
#include "jsonw.h"
#include "log.h"

void usage_check(FILE *out) {
    fprintf(out,
            "usage: searchsync check --config FILE INDEX [--since DUR] [--repair] [--deep]\n"
            "                        [--json] [--settle SECONDS]\n\n"
            "Compare index config INDEX's documents in the engine with MySQL: missing,\n"
            "extra and different documents by id, with the first differing field.\n"
            "  --since DUR     only rows whose daily_check_column changed in the last DUR\n"
            "                  (90s, 15m, 24h, 7d); default: the whole index\n"
            "  --repair        rebuild or delete what differs (a newer live change wins)\n"
            "  --deep          compare every document's content, not only where the\n"
            "                  hashes or the engine's versions disagree (reads the whole\n"
            "                  index)\n"
            "  --json          one JSON object instead of text\n"
            "  --settle S      wait at most S seconds (default 30) for the daemon's\n"
            "                  checkpoint before a difference is believed\n"
            "exit: 0 clean or repaired, 3 differences left, 1 failure, 2 usage\n");
}

static void print_json(const char *alias, const struct check_opts *o,
                       const struct check_result *r) {
    sbuf out = SBUF_INIT;
    check_result_json(alias, o, r, (size_t)-1, &out);
    printf("%s\n", out.data);
    sbuf_free(&out);
}

static void print_text(const char *alias, const struct check_opts *o,
                       const struct check_result *r) {
    size_t n[5] = {0};
    for (size_t i = 0; i < r->nitems; i++) n[r->items[i].kind]++;
    if (!r->nitems)
        printf("%s: clean", alias);
    else
        printf("%s: %zu difference(s): %zu missing, %zu extra, %zu different, %zu duplicate",
               alias, r->nitems, n[CK_MISSING], n[CK_EXTRA], n[CK_DIFFERENT], n[CK_DUPLICATE]);
    if (o->since_s > 0) printf(" (rows changed in the last %ld s)", o->since_s);
    printf(" — %llu rows, %llu documents; %llu buckets, %llu differed; %llu ids listed, "
           "%llu versions listed, %llu documents fetched; %.1f s\n",
           r->rows, r->engine_docs, r->buckets, r->buckets_differed, r->ids_listed,
           r->versions_listed, r->docs_fetched, r->seconds);
    if (o->repair && r->nitems) {
        printf("repaired: %llu rebuilt, %llu deleted, %llu dead letter(s)", r->repaired_docs,
               r->repaired_deletes, r->dead_letters);
        if (r->repair_forced)
            printf(", %llu written again over a version raised in the engine by hand",
                   r->repair_forced);
        printf("%s\n", r->dead_letters ? " — not all delivered: see searchsync dead-letters list"
                                        : "");
        if (r->nrepair_left) {
            printf("not repaired: %zu document(s) still differ from MySQL after the repair (a "
                   "change on its way, or a version in the engine far above the source's: "
                   "run the check again; searchsync epoch bump lets every later write "
                   "outrank such versions):", r->nrepair_left);
            for (size_t i = 0; i < r->nrepair_left && i < 20; i++) printf(" %s", r->repair_left[i]);
            printf("%s\n", r->nrepair_left > 20 ? " ..." : "");
        }
    }
    if (r->unhashed)
        printf("note: %llu document(s) agree but carry no content hash (written before "
               "documents had one, or edited by a partial update): compared by content%s\n",
               r->unhashed, o->repair ? "; rewritten with one" : "; --repair rewrites them");
    if (r->rewritten)
        printf("note: %llu document(s) were written last by someone else than searchsync (the "
               "engine's version is not their ss_version): compared by content%s\n",
               r->rewritten, o->repair ? "" : "; --repair rewrites those that differ");
    if (r->legacy)
        printf("note: %llu document(s) carry no ss_key_hash (written before documents had one, "
               "or not by searchsync): each was fetched%s\n", r->legacy,
               o->repair ? "" : "; --repair or a reindex gives them hashes");
    if (r->unsettled)
        printf("note: %llu document(s) looked different but changed between rounds (rows busy "
               "during the check): not counted; the next check looks again\n", r->unsettled);
    if (r->settle_note[0]) printf("note: %s\n", r->settle_note);
    if (r->window_note[0]) printf("note: %s\n", r->window_note);
    for (size_t i = 0; i < r->nitems; i++) {
        if (r->items[i].kind == CK_DIFFERENT)
            printf("different %s at %s\n", r->items[i].id,
                   r->items[i].path && *r->items[i].path ? r->items[i].path : "(whole document)");
        else
            printf("%s %s\n", check_kind_name(r->items[i].kind), r->items[i].id);
    }
}

int cmd_check(int argc, char **argv) {
    static const struct option own[] = {{"since", required_argument, NULL, 's'},
                                        {"repair", no_argument, NULL, 'r'},
                                        {"deep", no_argument, NULL, 'd'},
                                        {"json", no_argument, NULL, 'j'},
                                        {"settle", required_argument, NULL, 'w'},
                                        {NULL, 0, NULL, 0}};
    struct command c = {.name = "check", .usage = usage_check, .opts = own,
                        .shortopts = "s:rdjw:", .argc = argc, .argv = argv};
    struct check_opts co = {.settle_s = 30};
    bool json = false;
    int o;
    while ((o = command_opt(&c)) > 0) {
        if (o == 's') {
            if ((co.since_s = config_parse_duration(optarg)) < 0) {
                fprintf(stderr, "searchsync check: --since %s: give a duration such as 90s, 15m, "
                                "24h or 7d\n", optarg);
                return EXIT_USAGE;
            }
        } else if (o == 'r') co.repair = true;
        else if (o == 'd') co.deep = true;
        else if (o == 'j') json = true;
        else if (o == 'w') {
            char *e;
            long v = strtol(optarg, &e, 10);
            if (*e || v < 0 || v > 3600) {
                fprintf(stderr, "searchsync check: --settle %s: give seconds, 0 to 3600\n",
                        optarg);
                return EXIT_USAGE;
            }
            co.settle_s = (int)v;
        }
    }
    if (o < 0) return c.rc;
    if (!c.config || optind != argc - 1) return command_usage(&c);
    co.alias = argv[optind];
    int rc = command_begin(&c, 0);
    if (rc >= 0) return rc;
    const struct ss_config *cfg = &c.cfg;
    struct producer pr;
    rc = check_producer_open(&pr, cfg, NULL, "repair");
    struct check_result res = {0};
    if (rc == EXIT_OK) rc = check_run(&pr, &co, &res);
    if (rc == EXIT_OK || rc == EXIT_FOUND) {
        if (json) print_json(co.alias, &co, &res);
        else print_text(co.alias, &co, &res);
    } else {
        fprintf(stderr, "searchsync check: %s\n", pr.err);
    }
    if (pr.p.meta && rc != EXIT_USAGE) { /* the run's row: status and GET /api/v1/checks */
        char host[256] = "", e[512];
        gethostname(host, sizeof host - 1);
        co.node = host[0] ? host : NULL;
        if (check_record(pr.p.meta, cfg->source.name, config_mapping_name(cfg), &co, &res, rc,
                         rc == EXIT_RUNTIME ? pr.err : NULL, e, sizeof e) < 0)
            fprintf(stderr, "searchsync check: the result was not recorded in check_runs: %s\n", e);
    }
    check_result_free(&res);
    producer_close(&pr);
    return command_end(&c, rc);
}
