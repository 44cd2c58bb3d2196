/* deliver_driver: feeds a deterministic stream of synthetic changes through
 * the real delivery pipeline (src/deliver + src/search) into a real engine,
 * and checks every document afterwards.
 *
 * The stream: change i (0 <= i < N) touches document (hash(seed,i) mod docs)
 * with version version_make(1, 1, 8 + 8 i); with --mix mixed, 10% are deletes
 * and 15% partial updates ({"u":i}), the rest full documents
 * ({"doc":..,"n":i,"pad":"..."}). Transactions are 1..--txn-max changes long;
 * after each the driver calls deliver_txn_end("<next i>"), so a checkpoint
 * names the first change a restart must replay (--checkpoint FILE, --resume).
 *
 * The oracle (verify) replays the same stream in plain sequential code: a doc
 * exists iff its last change that applied was not a delete; its n, u and
 * stored version are those of that change. Every document id 0..docs-1 is
 * fetched with _mget and compared, and _count must match.
 *
 * usage: deliver_driver --url URL --index NAME [options] run|verify|create|bulkfiles
 * See --help. Exit 0 ok, 1 mismatch or failure, 2 usage. */
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "db.h"
#include "deliver/deliver.h"
#include "deliver/store.h"
#include "jsonw.h"
#include "log.h"
#include "search/jscan.h"
#include "search/search.h"

static struct {
    const char *url, *index, *checkpoint, *dl_file, *stats_out, *mix, *version_field;
    long changes, docs, start;
    int body_bytes, txn_max, workers, helpers, batch_max, batch_min, hwm, flush_ms;
    int timeout_ms, fuse_failures, fuse_interval_ms, fuse_reset_ms, retry_initial_ms,
        retry_max_ms, drain_timeout_ms, rate, shards;
    int dup_pct;
    bool resume, compress, dl_mysql, no_u;
    long at_least_total; /* verify: changes beyond --changes up to this may have applied */
    const char *gc_deletes, *purge;
    uint64_t seed;
    int stop_after; /* exit(3) without draining after this many changes (crash) */
} A = {
    .changes = 100000, .docs = 20000, .body_bytes = 200, .txn_max = 20, .workers = 8,
    .helpers = 4, .batch_max = 500, .batch_min = 1, .hwm = 10000, .flush_ms = 100,
    .timeout_ms = 30000, .fuse_failures = 3, .fuse_interval_ms = 5000,
    .fuse_reset_ms = 5000, .retry_initial_ms = 50, .retry_max_ms = 2000,
    .drain_timeout_ms = 600000, .seed = 42, .mix = "mixed", .compress = true,
    .version_field = "ss_version", .shards = 1, .purge = "off",
};

static uint64_t splitmix(uint64_t x) {
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

struct gchange {
    long doc;
    enum change_op op;
    uint64_t version;
};

static struct gchange gen(long i) {
    uint64_t r = splitmix(A.seed * 1000003u + (uint64_t)i);
    struct gchange g;
    g.doc = (long)(r % (uint64_t)A.docs);
    int t = (int)((r >> 40) % 100);
    g.op = CHANGE_INDEX;
    if (!strcmp(A.mix, "unique")) {
        g.doc = i % A.docs; /* every doc once (benchmarks) */
    } else if (!strcmp(A.mix, "insdel")) {
        g.op = i % 2 ? CHANGE_DELETE : CHANGE_INDEX;
    } else if (!strcmp(A.mix, "mixed")) {
        if (t < 10)
            g.op = CHANGE_DELETE;
        else if (t < 25)
            g.op = CHANGE_UPDATE;
    }
    g.version = version_make(1, 1, 8 + 8 * (uint64_t)i);
    return g;
}

static int txn_len(long txn_start) {
    return 1 + (int)(splitmix(A.seed ^ 0xabcdefull ^ (uint64_t)txn_start) % (uint64_t)A.txn_max);
}

static void make_body(sbuf *b, long i, const struct gchange *g) {
    sbuf_reset(b);
    if (g->op == CHANGE_UPDATE) {
        sbuf_printf(b, "{\"u\":%ld}", i);
        return;
    }
    sbuf_printf(b, "{\"doc\":\"d%ld\",\"n\":%ld,\"pad\":\"", g->doc, i);
    static char alpha[26 * 2 + 4096];
    if (!alpha[0])
        for (size_t k = 0; k < sizeof alpha; k++) alpha[k] = (char)('a' + k % 26);
    long pad = A.body_bytes - (long)b->len - 2;
    while (pad > 0) {
        long chunk = pad > 4096 ? 4096 : pad;
        sbuf_add(b, alpha + i % 26, (size_t)chunk);
        pad -= chunk;
    }
    sbuf_adds(b, "\"}");
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static struct search_client *client_or_die(void) {
    char err[512];
    struct search_opts so = {.urls = A.url, .timeout_ms = A.timeout_ms,
                             .connect_timeout_ms = 2000, .compress = A.compress,
                             .tls_verify = true};
    struct search_client *c = search_client_new(&so, err, sizeof err);
    if (!c) {
        fprintf(stderr, "deliver_driver: %s\n", err);
        exit(2);
    }
    return c;
}

/* ---- dead letters into a JSON-lines file (no MySQL needed) ---- */
static int dl_to_file(void *ud, const struct dead_letter *dl) {
    FILE *f = fopen((const char *)ud, "a");
    if (!f) return -1;
    sbuf b = SBUF_INIT;
    jsonw w;
    jw_init(&w, &b);
    jw_obj_open(&w);
    jw_key(&w, "index"), jw_str(&w, dl->index);
    jw_key(&w, "id"), jw_str(&w, dl->doc_id);
    jw_key(&w, "version"), jw_uint(&w, dl->version);
    jw_key(&w, "op"), jw_str(&w, change_op_name(dl->op));
    jw_key(&w, "status"), jw_int(&w, dl->status);
    jw_key(&w, "attempts"), jw_int(&w, dl->attempts);
    jw_key(&w, "error"), jw_str(&w, dl->error ? dl->error : "");
    jw_obj_close(&w);
    fprintf(f, "%s\n", b.data);
    sbuf_free(&b);
    return fclose(f) == 0 ? 0 : -1;
}

static void fill_opts(struct deliver_opts *o) {
    deliver_opts_defaults(o);
    o->workers = A.workers;
    o->helpers = A.helpers;
    o->batch_max = A.batch_max;
    o->batch_min = A.batch_min;
    o->flush_interval_ms = A.flush_ms;
    o->high_watermark = A.hwm;
    o->fuse_failures = A.fuse_failures;
    o->fuse_interval_ms = A.fuse_interval_ms;
    o->fuse_reset_ms = A.fuse_reset_ms;
    o->retry_initial_ms = A.retry_initial_ms;
    o->retry_max_ms = A.retry_max_ms;
    o->drain_timeout_ms = A.drain_timeout_ms;
    o->checkpoint_interval_ms = 200;
    o->version_field = A.version_field;
    o->purge = (enum purge_strategy)purge_strategy_parse(A.purge);
}

static void print_stats(struct deliver *d, double secs, long n) {
    struct deliver_stats s;
    deliver_get_stats(d, &s);
    printf("{\"changes\":%ld,\"seconds\":%.3f,\"changes_per_s\":%.0f,\"ok\":%" PRIu64
           ",\"stale\":%" PRIu64 ",\"missing\":%" PRIu64 ",\"retries\":%" PRIu64
           ",\"dead_letters\":%" PRIu64 ",\"purged\":%" PRIu64 ",\"coalesced\":%" PRIu64
           ",\"batches\":%" PRIu64 ",\"requests_failed\":%" PRIu64 ",\"blocked\":%" PRIu64
           ",\"fuse_blows\":%" PRIu64 ",\"checkpoints\":%" PRIu64 ",\"drains\":%" PRIu64 "}\n",
           n, secs, secs > 0 ? (double)n / secs : 0, s.docs_ok, s.stale, s.missing, s.retries,
           s.dead_letters, s.purged, s.coalesced, s.batches, s.requests_failed, s.blocked,
           s.fuse_blows, s.checkpoints_saved, s.drains);
    fflush(stdout);
    if (A.stats_out) {
        sbuf p = SBUF_INIT;
        deliver_stats_prometheus(d, &p);
        FILE *f = fopen(A.stats_out, "w");
        if (f) {
            fwrite(p.data, 1, p.len, f);
            fclose(f);
        }
        sbuf_free(&p);
    }
}

static volatile sig_atomic_t got_term;
static void on_term(int s) {
    (void)s;
    got_term = 1;
}

static int cmd_run(void) {
    char err[512];
    struct search_client *c = client_or_die();
    struct search_conn *k = search_conn_new(c);
    if (search_detect(c, k, err, sizeof err) != 0) {
        fprintf(stderr, "deliver_driver: %s\n", err);
        return 1;
    }
    search_conn_free(k);
    long start = A.start;
    if (A.resume && A.checkpoint) {
        char pos[256];
        uint64_t seq;
        int rc = checkpoint_file_load(A.checkpoint, pos, sizeof pos, &seq, err, sizeof err);
        if (rc < 0) {
            fprintf(stderr, "deliver_driver: %s\n", err);
            return 1;
        }
        if (rc == 0) start = atol(pos);
        fprintf(stderr, "deliver_driver: resuming at change %ld\n", start);
    }
    struct deliver_opts o;
    fill_opts(&o);
    if (A.checkpoint) {
        o.checkpoint = checkpoint_file_cb;
        o.checkpoint_ud = (void *)A.checkpoint;
    }
    struct dl_store *dls = NULL;
    if (A.dl_mysql) {
        db_params p = {.role = "metadata", .host = getenv("MYSQL_HOST"),
                       .port = atoi(getenv("MYSQL_PORT") ? getenv("MYSQL_PORT") : "3306"),
                       .user = "root", .password = "", .database = getenv("DL_DATABASE"),
                       .connect_timeout_ms = 5000, .read_timeout_ms = 30000};
        dls = dl_store_new(&p, "driver", err, sizeof err);
        if (!dls) {
            fprintf(stderr, "deliver_driver: %s\n", err);
            return 1;
        }
        o.dead_letter = dl_store_put;
        o.dead_letter_ud = dls;
        o.written = dl_store_written;
        o.written_ud = dls;
    } else if (A.dl_file) {
        o.dead_letter = dl_to_file;
        o.dead_letter_ud = (void *)A.dl_file;
    }
    struct deliver *d = deliver_new(&o, c, err, sizeof err);
    if (!d) {
        fprintf(stderr, "deliver_driver: %s\n", err);
        return 1;
    }
    signal(SIGTERM, on_term);
    sbuf body = SBUF_INIT;
    char id[32], pos[32];
    double t0 = now_s();
    long i = start, sent = 0;
    /* transactions are aligned to the stream, so a resume lands on a boundary */
    long tstart = 0;
    while (tstart + txn_len(tstart) <= start) tstart += txn_len(tstart);
    int rc = 0;
    while (i < A.changes && !got_term) {
        long tend = tstart + txn_len(tstart);
        if (tend > A.changes) tend = A.changes;
        for (; i < tend; i++) {
            struct gchange g = gen(i);
            snprintf(id, sizeof id, "%ld", g.doc);
            make_body(&body, i, &g);
            struct change ch = {.index = A.index, .doc_id = id, .version = g.version,
                                .op = g.op, .body = g.op == CHANGE_DELETE ? NULL : body.data,
                                .body_len = g.op == CHANGE_DELETE ? 0 : body.len};
            if (deliver_submit(d, &ch) != DELIVER_OK) {
                fprintf(stderr, "deliver_driver: submit failed at %ld\n", i);
                rc = 1;
                goto done;
            }
            sent++;
            /* duplicates and reordering: replay an older change now and then */
            if (A.dup_pct && (long)(splitmix(i ^ 0x5555) % 100) < A.dup_pct && i > 0) {
                long j = (long)(splitmix(i ^ 0x7777) % (uint64_t)i);
                struct gchange gj = gen(j);
                snprintf(id, sizeof id, "%ld", gj.doc);
                make_body(&body, j, &gj);
                struct change cj = {.index = A.index, .doc_id = id, .version = gj.version,
                                    .op = gj.op,
                                    .body = gj.op == CHANGE_DELETE ? NULL : body.data,
                                    .body_len = gj.op == CHANGE_DELETE ? 0 : body.len};
                deliver_submit(d, &cj);
            }
            if (A.stop_after && sent >= A.stop_after) {
                fprintf(stderr, "deliver_driver: crashing on purpose after %ld changes\n", sent);
                fflush(stderr);
                _exit(3);
            }
            if (A.rate > 0) {
                double due = t0 + (double)sent / A.rate;
                double w = due - now_s();
                if (w > 0) usleep((useconds_t)(w * 1e6));
            }
        }
        snprintf(pos, sizeof pos, "%ld", tend);
        deliver_txn_end(d, pos);
        tstart = tend;
    }
    {
        int dr = deliver_drain(d, A.drain_timeout_ms);
        if (dr != DELIVER_OK) {
            fprintf(stderr, "deliver_driver: drain failed (%d)\n", dr);
            rc = 1;
        }
        char lw[64];
        deliver_low_water(d, lw, sizeof lw);
        if (!got_term && strcmp(lw, pos) != 0 && A.changes > start) {
            fprintf(stderr, "deliver_driver: low-water %s, expected %s\n", lw, pos);
            rc = 1;
        }
    }
done:
    print_stats(d, now_s() - t0, sent);
    deliver_free(d);
    dl_store_free(dls);
    search_client_free(c);
    sbuf_free(&body);
    return rc;
}

/* ---- oracle and verification ---- */

struct expect {
    bool exists;
    long n, u; /* u = -1: absent */
    uint64_t version; /* version of the last applied change (stored field) */
};

static bool *later_delete; /* at-least mode: a change after --changes deleted it */

static struct expect *oracle(void) {
    struct expect *e = xcalloc((size_t)A.docs, sizeof *e);
    if (A.at_least_total > A.changes) {
        later_delete = xcalloc((size_t)A.docs, sizeof *later_delete);
        for (long i = A.changes; i < A.at_least_total; i++) {
            struct gchange g = gen(i);
            if (g.op == CHANGE_DELETE) later_delete[g.doc] = true;
        }
    }
    for (long i = 0; i < A.changes; i++) {
        struct gchange g = gen(i);
        struct expect *x = &e[g.doc];
        switch (g.op) {
        case CHANGE_INDEX:
            x->exists = true, x->n = i, x->u = -1, x->version = g.version;
            break;
        case CHANGE_DELETE:
            x->exists = false, x->version = g.version;
            break;
        case CHANGE_UPDATE:
            if (x->exists) x->u = i, x->version = g.version;
            break;
        default:
            break;
        }
    }
    return e;
}

static int req(struct search_conn *k, const char *m, const char *path, const char *body,
               struct search_resp *r) {
    int rc = search_request(k, m, path, NULL, body, body ? strlen(body) : 0, r);
    if (rc != SEARCH_OK || r->status >= 300) {
        fprintf(stderr, "deliver_driver: %s %s: %ld %s %.300s\n", m, path, r->status, r->err,
                r->body.data ? r->body.data : "");
        return -1;
    }
    return 0;
}

static int cmd_verify(void) {
    struct search_client *c = client_or_die();
    struct search_conn *k = search_conn_new(c);
    struct search_resp r;
    search_resp_init(&r);
    struct expect *e = oracle();
    char path[512];
    snprintf(path, sizeof path, "/%s/_refresh", A.index);
    int rc = req(k, "POST", path, NULL, &r);
    long bad = 0, nexist = 0, checked = 0;
    sbuf q = SBUF_INIT;
    for (long b = 0; rc == 0 && b < A.docs; b += 1000) {
        sbuf_reset(&q);
        sbuf_adds(&q, "{\"ids\":[");
        for (long i = b; i < b + 1000 && i < A.docs; i++)
            sbuf_printf(&q, "%s\"%ld\"", i > b ? "," : "", i);
        sbuf_adds(&q, "]}");
        snprintf(path, sizeof path, "/%s/_mget?_source_includes=n,u,%s", A.index,
                 A.version_field);
        if (req(k, "POST", path, q.data, &r) != 0) {
            rc = 1;
            break;
        }
        const char *p = r.body.data, *end = p + r.body.len;
        bool done = false, first = true;
        p = js_obj_begin(p, end);
        while (p) {
            const char *key;
            size_t kn;
            p = js_obj_next(p, end, &key, &kn, &done, first);
            first = false;
            if (!p || done) break;
            if (!js_key_is(key, kn, "docs")) {
                p = js_skip(p, end);
                continue;
            }
            bool d2 = false, f2 = true;
            p = js_arr_begin(p, end);
            while (p) {
                p = js_arr_next(p, end, &d2, f2);
                f2 = false;
                if (!p || d2) break;
                long id = -1, n = -1, u = -1;
                int64_t ver = -1, sv = -1;
                bool found = false;
                bool d3 = false, f3 = true;
                p = js_obj_begin(p, end);
                while (p) {
                    const char *k3;
                    size_t kn3;
                    p = js_obj_next(p, end, &k3, &kn3, &d3, f3);
                    f3 = false;
                    if (!p || d3) break;
                    if (js_key_is(k3, kn3, "_id")) {
                        const char *s = NULL;
                        size_t sn = 0;
                        p = js_str(p, end, &s, &sn);
                        if (p) id = strtol(s, NULL, 10);
                    } else if (js_key_is(k3, kn3, "found")) {
                        found = *p == 't';
                        p = js_skip(p, end);
                    } else if (js_key_is(k3, kn3, "_version")) {
                        p = js_int(p, end, &ver);
                    } else if (js_key_is(k3, kn3, "_source")) {
                        bool d4 = false, f4 = true;
                        p = js_obj_begin(p, end);
                        while (p) {
                            const char *k4;
                            size_t kn4;
                            p = js_obj_next(p, end, &k4, &kn4, &d4, f4);
                            f4 = false;
                            if (!p || d4) break;
                            int64_t v = -1;
                            if (js_key_is(k4, kn4, "n"))
                                p = js_int(p, end, &v), n = (long)v;
                            else if (js_key_is(k4, kn4, "u"))
                                p = js_int(p, end, &v), u = (long)v;
                            else if (js_key_is(k4, kn4, A.version_field))
                                p = js_int(p, end, &sv);
                            else
                                p = js_skip(p, end);
                        }
                    } else {
                        p = js_skip(p, end);
                    }
                }
                if (!p || id < 0 || id >= A.docs) {
                    fprintf(stderr, "deliver_driver: cannot read _mget response\n");
                    rc = 1;
                    break;
                }
                checked++;
                struct expect *x = &e[id];
                nexist += x->exists;
                bool ok;
                if (later_delete) {
                    /* I4: everything below the checkpoint is in the engine:
                     * the stored version is at least the oracle's (later
                     * changes may have landed too) */
                    if (found)
                        ok = sv >= 0 && (uint64_t)sv >= x->version;
                    else
                        ok = !x->exists || later_delete[id];
                } else {
                    ok = found == x->exists;
                    if (ok && found)
                        ok = n == x->n && u == x->u && (uint64_t)sv == x->version;
                }
                if (!ok) {
                    if (bad < 10)
                        fprintf(stderr,
                                "MISMATCH doc %ld: engine found=%d n=%ld u=%ld stored_v=%" PRId64
                                " _version=%" PRId64 "; expected exists=%d n=%ld u=%ld v=%" PRIu64
                                "\n",
                                id, found, n, u, sv, ver, x->exists, x->n, x->u, x->version);
                    bad++;
                }
            }
        }
    }
    long count = -1;
    snprintf(path, sizeof path, "/%s/_count", A.index);
    if (rc == 0 && req(k, "GET", path, NULL, &r) == 0) {
        const char *cp = strstr(r.body.data, "\"count\":");
        if (cp) count = atol(cp + 8);
    }
    printf("{\"checked\":%ld,\"expected_docs\":%ld,\"count\":%ld,\"mismatches\":%ld}\n", checked,
           nexist, count, bad);
    if ((!later_delete && count != nexist) || checked != A.docs) rc = 1;
    free(later_delete);
    later_delete = NULL;
    if (bad) rc = 1;
    sbuf_free(&q);
    free(e);
    search_resp_free(&r);
    search_conn_free(k);
    search_client_free(c);
    return rc;
}

static int cmd_create(void) {
    struct search_client *c = client_or_die();
    struct search_conn *k = search_conn_new(c);
    struct search_resp r;
    search_resp_init(&r);
    char path[512];
    snprintf(path, sizeof path, "/%s", A.index);
    search_request(k, "DELETE", path, NULL, NULL, 0, &r);
    sbuf b = SBUF_INIT;
    sbuf_printf(&b, "{\"settings\":{\"number_of_shards\":%d,\"number_of_replicas\":0%s%s%s},"
                    "\"mappings\":{\"dynamic\":\"strict\",\"properties\":{"
                    "\"doc\":{\"type\":\"keyword\"},\"n\":{\"type\":\"long\"},"
                    "%s\"%s\":{\"type\":\"long\",\"index\":false},"
                    "\"pad\":{\"type\":\"keyword\",\"index\":false,\"doc_values\":false}}}}",
                A.shards, A.gc_deletes ? ",\"index.gc_deletes\":\"" : "",
                A.gc_deletes ? A.gc_deletes : "", A.gc_deletes ? "\"" : "",
                A.no_u ? "" : "\"u\":{\"type\":\"long\"},", A.version_field);
    int rc = req(k, "PUT", path, b.data, &r) == 0 ? 0 : 1;
    sbuf_free(&b);
    search_resp_free(&r);
    search_conn_free(k);
    search_client_free(c);
    return rc;
}

/* the same documents as plain bulk files (final state of each doc, index ops
 * only, no versions) for the baseline load in tests/bench */
static int cmd_bulkfiles(const char *dir, int nfiles) {
    sbuf body = SBUF_INIT, out = SBUF_INIT;
    FILE **fs = xcalloc((size_t)nfiles, sizeof *fs);
    for (int f = 0; f < nfiles; f++) {
        char p[1024];
        snprintf(p, sizeof p, "%s/bulk-%03d.ndjson", dir, f);
        fs[f] = fopen(p, "w");
        if (!fs[f]) {
            perror(p);
            return 1;
        }
    }
    long per = 0;
    for (long i = 0; i < A.changes; i++) {
        struct gchange g = gen(i);
        char id[32];
        snprintf(id, sizeof id, "%ld", g.doc);
        make_body(&body, i, &g);
        sbuf_reset(&out);
        struct bulk_item it = {.op = BULK_INDEX, .index = A.index, .id = id,
                               .body = body.data, .body_len = body.len,
                               .version = getenv("BULKFILES_VERSIONED") ? g.version : 0};
        bulk_append(&out, NULL, &it);
        FILE *f = fs[(per / A.batch_max) % nfiles];
        fwrite(out.data, 1, out.len, f);
        per++;
    }
    for (int f = 0; f < nfiles; f++) fclose(fs[f]);
    free(fs);
    sbuf_free(&body);
    sbuf_free(&out);
    return 0;
}

static int cmd_replay(void) {
    char err[512];
    struct search_client *c = client_or_die();
    struct search_conn *k = search_conn_new(c);
    if (search_detect(c, k, err, sizeof err) != 0) {
        fprintf(stderr, "deliver_driver: %s\n", err);
        return 1;
    }
    search_conn_free(k);
    db_params p = {.role = "metadata", .host = getenv("MYSQL_HOST"),
                   .port = atoi(getenv("MYSQL_PORT") ? getenv("MYSQL_PORT") : "3306"),
                   .user = "root", .password = "", .database = getenv("DL_DATABASE"),
                   .connect_timeout_ms = 5000, .read_timeout_ms = 30000};
    MYSQL *m = db_connect(&p, err, sizeof err);
    struct dl_store *dls = dl_store_new(&p, "driver", err, sizeof err);
    if (!m || !dls) {
        fprintf(stderr, "deliver_driver: %s\n", err);
        return 1;
    }
    struct deliver_opts o;
    fill_opts(&o);
    o.dead_letter = dl_store_put;
    o.dead_letter_ud = dls;
    struct deliver *d = deliver_new(&o, c, err, sizeof err);
    long n = d ? dl_replay(m, "driver", A.index, 0, d, 60000, err, sizeof err) : -1;
    if (n < 0) fprintf(stderr, "deliver_driver: replay: %s\n", err);
    if (d) print_stats(d, 0, n);
    deliver_free(d);
    dl_store_free(dls);
    db_close(m);
    search_client_free(c);
    return n < 0 ? 1 : 0;
}

static void usage(FILE *f) {
    fprintf(f,
            "usage: deliver_driver --url URL --index NAME [options] run|verify|create|"
            "bulkfiles DIR NFILES\n"
            "  --changes N --docs N --seed N --body-bytes N --txn-max N --mix mixed|index\n"
            "  --workers N --helpers N --batch-max N --batch-min N --hwm N --flush-ms N\n"
            "  --timeout-ms N --fuse-failures N --fuse-interval-ms N --fuse-reset-ms N\n"
            "  --retry-initial-ms N --retry-max-ms N --drain-timeout-ms N --rate N/s\n"
            "  --checkpoint FILE --resume --start N --stop-after N (crash: exit 3)\n"
            "  --dup-pct P (replay older changes) --dl-file FILE --dl-mysql --purge S\n"
            "  --stats-out FILE --no-compress --gc-deletes 1s --shards N --no-u (mapping\n"
            "  without u: partial updates fail) --at-least-total N (verify: I4 mode)\n"
            "  replay: resubmit the dead letters in $DL_DATABASE (MYSQL_HOST/PORT, root)\n"
            "  --mix insdel: index, delete, index, ... (one doc: --docs 1)\n"
            "  --mix unique: change i indexes doc i mod docs (benchmarks)\n"
            "  --version-field NAME (default ss_version; \"\" = none: updates unguarded)\n");
}

int main(int argc, char **argv) {
    static const struct option lo[] = {
        {"url", 1, 0, 'U'}, {"index", 1, 0, 'I'}, {"changes", 1, 0, 'n'},
        {"docs", 1, 0, 'D'}, {"seed", 1, 0, 'S'}, {"body-bytes", 1, 0, 'B'},
        {"txn-max", 1, 0, 'T'}, {"mix", 1, 0, 'M'}, {"workers", 1, 0, 'w'},
        {"helpers", 1, 0, 'h'}, {"batch-max", 1, 0, 'b'}, {"batch-min", 1, 0, 'm'},
        {"hwm", 1, 0, 'H'}, {"flush-ms", 1, 0, 'f'}, {"timeout-ms", 1, 0, 't'},
        {"fuse-failures", 1, 0, 1}, {"fuse-interval-ms", 1, 0, 2},
        {"fuse-reset-ms", 1, 0, 3}, {"retry-initial-ms", 1, 0, 4}, {"retry-max-ms", 1, 0, 5},
        {"drain-timeout-ms", 1, 0, 6}, {"rate", 1, 0, 7}, {"checkpoint", 1, 0, 8},
        {"resume", 0, 0, 9}, {"start", 1, 0, 10}, {"stop-after", 1, 0, 11},
        {"dup-pct", 1, 0, 12}, {"dl-file", 1, 0, 13}, {"dl-mysql", 0, 0, 14},
        {"stats-out", 1, 0, 15}, {"no-compress", 0, 0, 16}, {"gc-deletes", 1, 0, 17},
        {"shards", 1, 0, 18}, {"purge", 1, 0, 19}, {"no-u", 0, 0, 20},
        {"at-least-total", 1, 0, 21}, {"version-field", 1, 0, 22}, {"help", 0, 0, '?'},
        {0, 0, 0, 0}};
    int ch;
    while ((ch = getopt_long(argc, argv, "", lo, NULL)) != -1) {
        switch (ch) {
        case 'U': A.url = optarg; break;
        case 'I': A.index = optarg; break;
        case 'n': A.changes = atol(optarg); break;
        case 'D': A.docs = atol(optarg); break;
        case 'S': A.seed = strtoull(optarg, NULL, 10); break;
        case 'B': A.body_bytes = atoi(optarg); break;
        case 'T': A.txn_max = atoi(optarg); break;
        case 'M': A.mix = optarg; break;
        case 'w': A.workers = atoi(optarg); break;
        case 'h': A.helpers = atoi(optarg); break;
        case 'b': A.batch_max = atoi(optarg); break;
        case 'm': A.batch_min = atoi(optarg); break;
        case 'H': A.hwm = atoi(optarg); break;
        case 'f': A.flush_ms = atoi(optarg); break;
        case 't': A.timeout_ms = atoi(optarg); break;
        case 1: A.fuse_failures = atoi(optarg); break;
        case 2: A.fuse_interval_ms = atoi(optarg); break;
        case 3: A.fuse_reset_ms = atoi(optarg); break;
        case 4: A.retry_initial_ms = atoi(optarg); break;
        case 5: A.retry_max_ms = atoi(optarg); break;
        case 6: A.drain_timeout_ms = atoi(optarg); break;
        case 7: A.rate = atoi(optarg); break;
        case 8: A.checkpoint = optarg; break;
        case 9: A.resume = true; break;
        case 10: A.start = atol(optarg); break;
        case 11: A.stop_after = atoi(optarg); break;
        case 12: A.dup_pct = atoi(optarg); break;
        case 13: A.dl_file = optarg; break;
        case 14: A.dl_mysql = true; break;
        case 15: A.stats_out = optarg; break;
        case 16: A.compress = false; break;
        case 17: A.gc_deletes = optarg; break;
        case 18: A.shards = atoi(optarg); break;
        case 19: A.purge = optarg; break;
        case 20: A.no_u = true; break;
        case 21: A.at_least_total = atol(optarg); break;
        case 22: A.version_field = optarg; break;
        case '?': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (optind >= argc || !A.url || !A.index || A.docs < 1 || A.txn_max < 1) {
        usage(stderr);
        return 2;
    }
    const char *l = getenv("DRIVER_LOG");
    log_set_level(l ? log_parse_level(l) : LOG_WARN);
    const char *cmd = argv[optind];
    if (!strcmp(cmd, "run")) return cmd_run();
    if (!strcmp(cmd, "verify")) return cmd_verify();
    if (!strcmp(cmd, "create")) return cmd_create();
    if (!strcmp(cmd, "replay")) return cmd_replay();
    if (!strcmp(cmd, "bulkfiles") && optind + 2 < argc)
        return cmd_bulkfiles(argv[optind + 1], atoi(argv[optind + 2]));
    usage(stderr);
    return 2;
}
