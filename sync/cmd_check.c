/* cmd_check: `searchsync check --config FILE INDEX [--since DUR] [--repair]
 * [--json] [--settle SECONDS]` — the consistency check (sync/check.c) as a
 * command: a summary line first, then one line per difference (or one JSON
 * object). Exit 0 clean or all repaired, 3 differences found and left, 1 a
 * failure, 2 usage. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "commands.h"
#include "jsonw.h"
#include "log.h"

static void check_usage(FILE *out) {
    fprintf(out,
            "usage: searchsync check --config FILE INDEX [--since DUR] [--repair] [--json]\n"
            "                        [--settle SECONDS]\n\n"
            "Compare index config INDEX's documents in the engine with MySQL: missing,\n"
            "extra and different documents by id, with the first differing field.\n"
            "  --since DUR     only rows whose daily_check_column changed in the last DUR\n"
            "                  (90s, 15m, 24h, 7d); default: the whole index\n"
            "  --repair        rebuild or delete what differs (a newer live change wins)\n"
            "  --json          one JSON object instead of text\n"
            "  --settle S      wait at most S seconds (default 30) for the daemon's\n"
            "                  checkpoint before a difference is believed\n"
            "exit: 0 clean or repaired, 3 differences left, 1 failure, 2 usage\n");
}

/* "90", "90s", "15m", "24h", "7d" → seconds; -1 if malformed */
static long parse_duration(const char *s) {
    char *e;
    long v = strtol(s, &e, 10);
    if (e == s || v <= 0) return -1;
    long mul = !*e ? 1 : !strcmp(e, "s") ? 1 : !strcmp(e, "m") ? 60 : !strcmp(e, "h") ? 3600
               : !strcmp(e, "d") ? 86400 : -1;
    if (mul < 0 || v > 400L * 86400 / mul) return -1;
    return v * mul;
}

static void print_json(const char *alias, const struct check_opts *o,
                       const struct check_result *r) {
    sbuf out = SBUF_INIT;
    jsonw w;
    jw_init(&w, &out);
    jw_obj_open(&w);
    jw_key(&w, "index"), jw_str(&w, alias);
    jw_key(&w, "window_s"), jw_int(&w, o->since_s);
    jw_key(&w, "clean"), jw_bool(&w, r->nitems == 0);
    jw_key(&w, "rows"), jw_int(&w, (long long)r->rows);
    jw_key(&w, "engine_documents"), jw_int(&w, (long long)r->engine_docs);
    jw_key(&w, "buckets"), jw_int(&w, (long long)r->buckets);
    jw_key(&w, "buckets_differed"), jw_int(&w, (long long)r->buckets_differed);
    jw_key(&w, "ids_listed"), jw_int(&w, (long long)r->ids_listed);
    jw_key(&w, "documents_fetched"), jw_int(&w, (long long)r->docs_fetched);
    jw_key(&w, "unhashed"), jw_int(&w, (long long)r->unhashed);
    jw_key(&w, "rounds"), jw_int(&w, (long long)r->rounds);
    jw_key(&w, "settled"), jw_bool(&w, r->settled);
    if (r->settle_note[0]) jw_key(&w, "settle_note"), jw_str(&w, r->settle_note);
    jw_key(&w, "seconds"), jw_double(&w, r->seconds);
    static const char *const kinds[] = {"missing", "extra", "different", "duplicate"};
    static const enum check_kind kv[] = {CK_MISSING, CK_EXTRA, CK_DIFFERENT, CK_DUPLICATE};
    for (size_t k = 0; k < 4; k++) {
        jw_key(&w, kinds[k]);
        jw_arr_open(&w);
        for (size_t i = 0; i < r->nitems; i++) {
            if (r->items[i].kind != kv[k]) continue;
            if (kv[k] == CK_DIFFERENT) {
                jw_obj_open(&w);
                jw_key(&w, "id"), jw_str(&w, r->items[i].id);
                jw_key(&w, "path"), jw_str(&w, r->items[i].path ? r->items[i].path : "");
                jw_obj_close(&w);
            } else {
                jw_str(&w, r->items[i].id);
            }
        }
        jw_arr_close(&w);
    }
    jw_key(&w, "repair");
    if (o->repair) {
        jw_obj_open(&w);
        jw_key(&w, "done"), jw_bool(&w, r->repaired);
        jw_key(&w, "rebuilt"), jw_int(&w, (long long)r->repaired_docs);
        jw_key(&w, "deleted"), jw_int(&w, (long long)r->repaired_deletes);
        jw_key(&w, "dead_letters"), jw_int(&w, (long long)r->dead_letters);
        jw_obj_close(&w);
    } else {
        jw_null(&w);
    }
    jw_obj_close(&w);
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
           "%llu documents fetched; %.1f s\n",
           r->rows, r->engine_docs, r->buckets, r->buckets_differed, r->ids_listed,
           r->docs_fetched, r->seconds);
    if (o->repair && r->nitems)
        printf("repaired: %llu rebuilt, %llu deleted, %llu dead letter(s)%s\n", r->repaired_docs,
               r->repaired_deletes, r->dead_letters,
               r->repaired ? "" : " — not all repaired: see searchsync dead-letters list");
    if (r->unhashed)
        printf("note: %llu document(s) agree but carry no content hash (written before "
               "documents had one, or edited by a partial update): compared by content%s\n",
               r->unhashed, o->repair ? "; rewritten with one" : "; --repair rewrites them");
    if (r->legacy)
        printf("note: %llu document(s) carry no ss_key_hash (written before documents had one, "
               "or rewritten by a partial update): each was fetched%s\n", r->legacy,
               o->repair ? "" : "; --repair or a reindex gives them hashes");
    if (r->settle_note[0]) printf("note: %s\n", r->settle_note);
    for (size_t i = 0; i < r->nitems; i++) {
        if (r->items[i].kind == CK_DIFFERENT)
            printf("different %s at %s\n", r->items[i].id,
                   r->items[i].path && *r->items[i].path ? r->items[i].path : "(whole document)");
        else
            printf("%s %s\n", check_kind_name(r->items[i].kind), r->items[i].id);
    }
}

int cmd_check(int argc, char **argv) {
    static const struct option opts[] = {{"config", required_argument, NULL, 'c'},
                                         {"since", required_argument, NULL, 's'},
                                         {"repair", no_argument, NULL, 'r'},
                                         {"json", no_argument, NULL, 'j'},
                                         {"settle", required_argument, NULL, 'w'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    const char *path = NULL;
    struct check_opts co = {.settle_s = 30};
    bool json = false;
    int o;
    optind = 1;
    while ((o = getopt_long(argc, argv, "c:s:rjw:h", opts, NULL)) != -1) {
        if (o == 'c') path = optarg;
        else if (o == 's') {
            if ((co.since_s = parse_duration(optarg)) < 0) {
                fprintf(stderr, "searchsync check: --since %s: give a duration such as 90s, 15m, "
                                "24h or 7d\n", optarg);
                return EXIT_USAGE;
            }
        } else if (o == 'r') co.repair = true;
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
        } else if (o == 'h') return check_usage(stdout), EXIT_OK;
        else return check_usage(stderr), EXIT_USAGE;
    }
    if (!path || optind != argc - 1) return check_usage(stderr), EXIT_USAGE;
    co.alias = argv[optind];
    struct ss_config cfg;
    if (command_config("check", path, &cfg) != 0) return EXIT_USAGE;
    struct producer pr;
    struct producer_opts po = {.engine = true, .flush_interval_ms = 5};
    int rc = producer_open(&pr, &cfg, &po);
    struct check_result res = {0};
    if (rc == EXIT_OK) rc = check_run(&pr, &co, &res);
    if (rc == EXIT_OK || rc == EXIT_FOUND) {
        if (json) print_json(co.alias, &co, &res);
        else print_text(co.alias, &co, &res);
    } else {
        fprintf(stderr, "searchsync check: %s\n", pr.err);
    }
    check_result_free(&res);
    producer_close(&pr);
    config_free(&cfg);
    mysql_library_end();
    return rc;
}
