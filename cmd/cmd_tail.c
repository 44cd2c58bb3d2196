/* cmd_tail: `searchsync tail` — the binlog's row changes as JSON lines.
 *
 * One sink implementation (the document builder is another): each row
 * becomes one line on stdout,
 *   {"type":"insert|update|delete","db":..,"table":..,"ts":<unix s>,
 *    "pos":{"file":..,"pos":..,"gtid":..},"before":{..}|null,"after":{..}|null}
 * where pos is where the row's transaction starts (so `--file F --pos P`
 * replays it whole) and gtid is the transaction's GTID or null. Nothing but
 * those lines goes to stdout; diagnostics go to stderr. Lines are gathered in
 * one buffer and written in big writes, flushed at transaction ends once
 * 64 KB or 50 ms have accumulated, on heartbeats and at exit. */
#include <errno.h>
#include <fnmatch.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "binlog/binlog.h"
#include "binlog/reader.h"
#include "commands.h"
#include "config.h"
#include "jsonw.h"
#include "log.h"
#include "signals.h"
#include "sbuf.h"

struct tail {
    sbuf out;
    bl_valctx v;
    char **patterns;
    int npatterns;
    sbuf txnpos;          /* "pos":{...} of the current transaction */
    struct timespec last_flush;
    bool write_failed;
    uint64_t rows;
};

static volatile sig_atomic_t stop_requested;

static int flush_out(struct tail *t) {
    size_t off = 0;
    while (off < t->out.len) {
        ssize_t n = write(STDOUT_FILENO, t->out.data + off, t->out.len - off);
        if (n < 0) {
            if (errno == EINTR) continue;
            t->write_failed = true;
            sbuf_reset(&t->out);
            return -1;
        }
        off += (size_t)n;
    }
    sbuf_reset(&t->out);
    clock_gettime(CLOCK_MONOTONIC, &t->last_flush);
    return 0;
}

static bool want_table(void *ctx, const char *db, const char *table) {
    struct tail *t = ctx;
    if (t->npatterns == 0) return true;
    char full[600];
    snprintf(full, sizeof full, "%s.%s", db, table);
    for (int i = 0; i < t->npatterns; i++)
        if (fnmatch(t->patterns[i], full, 0) == 0) return true;
    return false;
}

static int on_begin(void *ctx, const bl_pos *at, uint32_t ts) {
    struct tail *t = ctx;
    (void)ts;
    sbuf_reset(&t->txnpos);
    bl_pos_json(&t->txnpos, at);
    return 0;
}

static int on_row(void *ctx, const bl_row *r) {
    struct tail *t = ctx;
    bl_row_json(&t->v, &t->out, r, t->txnpos.data, t->txnpos.len);
    t->rows++;
    if (t->out.len >= (1u << 20) && flush_out(t)) return 1;
    return 0;
}

static long ms_since(const struct timespec *a) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (now.tv_sec - a->tv_sec) * 1000 + (now.tv_nsec - a->tv_nsec) / 1000000;
}

static int on_commit(void *ctx, const bl_commit *c) {
    struct tail *t = ctx;
    (void)c;
    if (t->out.len && (t->out.len >= 65536 || ms_since(&t->last_flush) >= 50))
        if (flush_out(t)) return 1;
    return stop_requested ? 1 : 0;
}

static int on_heartbeat(void *ctx, const bl_pos *at) {
    struct tail *t = ctx;
    (void)at;
    if (t->out.len && flush_out(t)) return 1;
    return stop_requested ? 1 : 0;
}

void usage_tail(FILE *f) {
    fprintf(f,
            "usage: searchsync tail (--source mysql://USER:PASS@HOST:PORT | --config FILE)\n"
            "                       [--from-beginning | --file NAME --pos N | --gtid SET]\n"
            "                       [--tables db.t,db2.*] [--stop-at-end] [--server-id N]\n"
            "                       [--heartbeat-ms N] [--max-reconnects N]\n\n"
            "Prints every row change in the binlog as one JSON object per line on stdout:\n"
            "  {\"type\":\"insert|update|delete\",\"db\":..,\"table\":..,\"ts\":<unix s>,\n"
            "   \"pos\":{\"file\":..,\"pos\":..,\"gtid\":..},\"before\":{..}|null,\"after\":{..}|null}\n"
            "pos is where the row's transaction starts. Diagnostics go to stderr.\n\n"
            "  --source URI        the server (a replica connection; needs REPLICATION SLAVE and\n"
            "                      REPLICATION CLIENT / BINLOG MONITOR). %%XX escapes in USER/PASS\n"
            "  --config FILE       take the server from the [source] section instead\n"
            "  --from-beginning    start at the oldest binlog the server has\n"
            "  --file NAME --pos N start at this position (a transaction boundary)\n"
            "  --gtid SET          start after this GTID set (MySQL uuid:1-5,... or MariaDB 0-1-5,...)\n"
            "                      default: now (the server's current position)\n"
            "  --tables LIST       only these tables: db.table or db.* patterns, comma separated\n"
            "  --stop-at-end       exit 0 once the position the server reported at start is reached\n"
            "  --server-id N       replica server id (default: from the config, or derived from the pid)\n"
            "  --heartbeat-ms N    idle heartbeat period (default 1000)\n"
            "  --max-reconnects N  consecutive failed reconnects before giving up (default: forever)\n\n"
            "exit codes: 0 ok, 1 runtime failure, 2 usage or configuration error\n");
}

/* what the command line asked for */
struct tail_args {
    const char *source, *file, *gtid, *tables;
    bool beginning, stop_at_end, have_pos;
    unsigned long long pos;
    long server_id, heartbeat, max_reconnects;
};

/* The options into a; -1, or the exit code of a usage error. */
static int tail_parse(struct command *cmd, struct tail_args *a) {
    int c;
    while ((c = command_opt(cmd)) > 0) {
        char *end;
        switch (c) {
        case 's': a->source = optarg; break;
        case 'b': a->beginning = true; break;
        case 'f': a->file = optarg; break;
        case 'p':
            a->pos = strtoull(optarg, &end, 10);
            if (*end || !*optarg) { fprintf(stderr, "searchsync tail: --pos wants a number\n"); return EXIT_USAGE; }
            a->have_pos = true;
            break;
        case 'g': a->gtid = optarg; break;
        case 't': a->tables = optarg; break;
        case 'e': a->stop_at_end = true; break;
        case 'i':
            a->server_id = strtol(optarg, &end, 10);
            if (*end || a->server_id < 1 || a->server_id > 4294967295L) {
                fprintf(stderr, "searchsync tail: --server-id wants 1..4294967295\n");
                return EXIT_USAGE;
            }
            break;
        case 'H':
            a->heartbeat = strtol(optarg, &end, 10);
            if (*end || a->heartbeat < 100 || a->heartbeat > 3600000) {
                fprintf(stderr, "searchsync tail: --heartbeat-ms wants 100..3600000\n");
                return EXIT_USAGE;
            }
            break;
        case 'R':
            a->max_reconnects = strtol(optarg, &end, 10);
            if (*end) { fprintf(stderr, "searchsync tail: --max-reconnects wants a number\n"); return EXIT_USAGE; }
            break;
        }
    }
    if (c < 0) return cmd->rc;
    if (optind < cmd->argc) {
        fprintf(stderr, "searchsync tail: unexpected argument '%s'\n", cmd->argv[optind]);
        return EXIT_USAGE;
    }
    if (!!a->source + !!cmd->config != 1) {
        fprintf(stderr, "searchsync tail: give exactly one of --source URI or --config FILE\n");
        usage_tail(stderr);
        return EXIT_USAGE;
    }
    if ((a->file != NULL) != a->have_pos) {
        fprintf(stderr, "searchsync tail: --file and --pos go together\n");
        return EXIT_USAGE;
    }
    if (a->beginning + (a->file != NULL) + (a->gtid != NULL) > 1) {
        fprintf(stderr, "searchsync tail: choose one of --from-beginning, --file/--pos, --gtid\n");
        return EXIT_USAGE;
    }
    if (a->gtid) {
        bl_gtid_set *g = bl_gtid_new();
        char gerr[512];
        int grc = bl_gtid_parse(g, a->gtid, gerr, sizeof gerr);
        bl_gtid_free(g);
        if (grc != BL_OK) {
            fprintf(stderr, "searchsync tail: --gtid: %s\n", gerr);
            return EXIT_USAGE;
        }
    }
    return -1;
}

/* The reader's options: the server from the configuration or the URI (its
 * parts in *uribuf, freed by the caller after the run), where to start.
 * -1, or an exit code. */
static int tail_reader_opts(struct command *cmd, struct tail_args *a, bl_reader_opts *o,
                            char **uribuf) {
    memset(o, 0, sizeof *o);
    char err[CONFIG_ERR_LEN];
    if (cmd->config) {
        int rc = command_begin(cmd, 0);
        if (rc >= 0) return rc;
        const struct ss_config *cfg = &cmd->cfg;
        o->host = cfg->source.host;
        o->port = cfg->source.port;
        o->socket = cfg->source.socket;
        o->user = cfg->source.user;
        o->password = cfg->source.password;
        o->tls = db_tls_source(cfg);
        o->server_id = (uint32_t)cfg->source.server_id;
        o->connect_timeout_ms = cfg->source.connect_timeout_ms;
        o->read_timeout_ms = cfg->source.read_timeout_ms;
        if (cfg->source.heartbeat_ms > 0) a->heartbeat = cfg->source.heartbeat_ms;
        if (!a->beginning && !a->file && !a->gtid && cfg->source.start &&
            !strcmp(cfg->source.start, "beginning"))
            a->beginning = true;
    } else {
        const char *u, *p, *h;
        int port;
        if (bl_parse_uri(a->source, uribuf, &u, &p, &h, &port, err, sizeof err) != BL_OK) {
            fprintf(stderr, "searchsync tail: %s\n", err);
            free(*uribuf);
            *uribuf = NULL;
            return EXIT_USAGE;
        }
        o->host = h;
        o->port = port;
        o->user = u;
        o->password = p;
    }
    if (a->server_id > 0) o->server_id = (uint32_t)a->server_id;
    o->heartbeat_ms = (int)a->heartbeat;
    o->max_reconnects = (int)a->max_reconnects;
    o->stop_at_end = a->stop_at_end;
    if (a->beginning) o->start = BL_START_BEGINNING;
    else if (a->file) o->start = BL_START_FILEPOS, o->file = a->file, o->pos = a->pos;
    else if (a->gtid) o->start = BL_START_GTID, o->gtid = a->gtid;
    else o->start = BL_START_NOW;
    return -1;
}

/* Read the binlog into stdout until the end, a stop or an error; the exit
 * code. */
static int tail_run(const bl_reader_opts *o, const char *tables) {
    struct tail t;
    memset(&t, 0, sizeof t);
    sbuf_init(&t.out);
    sbuf_init(&t.txnpos);
    sbuf_grow(&t.out, (1u << 20) + 65536);
    bl_valctx_init(&t.v);
    clock_gettime(CLOCK_MONOTONIC, &t.last_flush);
    char *tabbuf = NULL;
    if (tables) {
        tabbuf = xstrdup(tables);
        for (char *s = strtok(tabbuf, ","); s; s = strtok(NULL, ",")) {
            while (*s == ' ') s++;
            if (!*s) continue;
            t.patterns = xrealloc(t.patterns, sizeof(char *) * (size_t)(t.npatterns + 1));
            t.patterns[t.npatterns++] = s;
        }
    }
    bl_sink sink = {
        .ctx = &t, .want_table = want_table, .begin = on_begin, .row = on_row,
        .commit = on_commit, .heartbeat = on_heartbeat,
    };

    signals_on_stop(&stop_requested, NULL); /* the reader stops at its next heartbeat */

    bl_reader r;
    int exit_code = EXIT_OK;
    if (bl_reader_open(&r, o, &sink) != BL_OK) {
        fprintf(stderr, "searchsync tail: %s\n", r.err);
        exit_code = EXIT_RUNTIME;
    } else {
        r.stop_flag = &stop_requested;
        int rc = bl_reader_run(&r);
        if (rc == BL_ERR) {
            flush_out(&t);
            fprintf(stderr, "searchsync tail: %s\n", r.err);
            exit_code = EXIT_RUNTIME;
        }
        if (t.write_failed && exit_code == EXIT_OK && !stop_requested) {
            /* stdout closed (e.g. piped into head): not our failure */
        }
        log_debug("tail", "%llu events, %llu rows, %llu transactions, %llu reconnects",
                  (unsigned long long)r.dec.n_events, (unsigned long long)r.dec.n_rows,
                  (unsigned long long)r.dec.n_txns, (unsigned long long)r.reconnects);
    }
    flush_out(&t);
    bl_reader_close(&r);
    bl_valctx_free(&t.v);
    sbuf_free(&t.out);
    sbuf_free(&t.txnpos);
    free(t.patterns);
    free(tabbuf);
    return exit_code;
}

int cmd_tail(int argc, char **argv) {
    static const struct option own[] = {
        {"source", required_argument, NULL, 's'},
        {"from-beginning", no_argument, NULL, 'b'},
        {"file", required_argument, NULL, 'f'},
        {"pos", required_argument, NULL, 'p'},
        {"gtid", required_argument, NULL, 'g'},
        {"tables", required_argument, NULL, 't'},
        {"stop-at-end", no_argument, NULL, 'e'},
        {"server-id", required_argument, NULL, 'i'},
        {"heartbeat-ms", required_argument, NULL, 'H'},
        {"max-reconnects", required_argument, NULL, 'R'},
        {NULL, 0, NULL, 0},
    };
    struct command cmd = {.name = "tail", .usage = usage_tail, .opts = own, .argc = argc,
                          .argv = argv, .own_errors = true};
    struct tail_args a = {.server_id = -1, .heartbeat = 1000, .max_reconnects = -1};
    int rc = tail_parse(&cmd, &a);
    if (rc >= 0) return rc;
    bl_reader_opts o;
    char *uribuf = NULL;
    rc = tail_reader_opts(&cmd, &a, &o, &uribuf);
    if (rc >= 0) return rc;
    int exit_code = tail_run(&o, a.tables);
    free(uribuf);
    return command_end(&cmd, exit_code);
}
