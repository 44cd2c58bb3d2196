/* cmd_mapping: `searchsync mapping import|export|body|generate --config FILE ...`.
 *
 * generate prints a mapping proposed from the live schema of one root table
 * (mapping_generate.c), validated against the source like an import, with
 * the guessed relations said on stderr.
 * export writes the source's whole mapping configuration (the metadata
 * tables) as the declarative JSON file of docs/mapping.md, to PATH or stdout.
 * import reads a file, validates it against the source's information_schema,
 * prints the plan (indices and tables added, changed, removed; which indices
 * need a reindex because their generated index body changed) and applies it
 * in one transaction only with --yes or a "y" on a terminal; --dry-run stops
 * after the plan. Exit 0 ok, 1 runtime, 2 usage or a bad mapping (the
 * message names the file and the JSON path). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "cred_refused.h"
#include "config.h"
#include "db.h"
#include "deliver/deliver.h"
#include "search/replicas.h"
#include "sync/mapping/index_mapping.h"
#include "sync/mapping/mapping.h"
#include "sync/authoring/mapping_generate.h"
#include "sync/ops/ops_mapping.h"

void usage_mapping(FILE *out) {
    fprintf(out,
            "usage: searchsync mapping export --config FILE [PATH]\n"
            "       searchsync mapping import --config FILE [--dry-run] [--yes] PATH\n"
            "       searchsync mapping body --config FILE ALIAS [--dialect NAME]\n"
            "       searchsync mapping generate --config FILE [--depth N] [--include T,...]\n"
            "                                   [--replicas N] [--dialect NAME] DB.TABLE\n\n"
            "export  write the mapping configuration of this source as JSON (stdout or PATH)\n"
            "import  validate PATH against the source schema, print the plan (added, changed,\n"
            "        removed, indices needing a reindex) and apply it when confirmed\n"
            "        (--yes, or 'y' on a terminal); --dry-run prints the plan only.\n"
            "body    print the index body (settings, mappings) generated for ALIAS, for the\n"
            "        engine of [search] urls or for --dialect (e.g. opensearch-2)\n"
            "generate  print a mapping file for root table DB.TABLE from the source's schema:\n"
            "        every column, the primary key, and the tables joined to it by foreign keys\n"
            "        (or guessed from <table>_id names, listed on stderr) down to --depth\n"
            "        levels (default 2); --include limits relations to the tables named;\n"
            "        types follow the engine of [search] urls or --dialect (BIGINT UNSIGNED:\n"
            "        unsigned_long where the engine has it)\n"
            "The file format is described in docs/mapping.md. PATH '-' is stdin/stdout.\n"
            "exit: 0 ok, 1 runtime failure, 2 usage or invalid mapping\n");
}

static char *read_all(const char *path, size_t *len) {
    errno = 0;
    FILE *f = strcmp(path, "-") ? fopen(path, "rb") : stdin;
    if (!f) return NULL;
    sbuf b = SBUF_INIT;
    sbuf_read_fp(&b, f);
    int bad = ferror(f), e = errno;
    if (f != stdin) fclose(f);
    if (bad) {
        errno = e ? e : EIO;
        sbuf_free(&b);
        return NULL;
    }
    if (!b.data) sbuf_grow(&b, 1);
    *len = b.len;
    return sbuf_detach(&b);
}

struct opts {
    const char *path, *dialect;
    bool yes, dry_run;
    int depth, replicas;
    const char **include;
    size_t ninclude;
};

static int do_export(struct command *c, const struct opts *o) {
    const struct ss_config *cfg = &c->cfg;
    int rc = command_meta(c, "") < 0 ? EXIT_OK : EXIT_RUNTIME;
    MYSQL *meta = c->meta;
    struct mapping m = {0};
    char err[1024];
    if (rc == EXIT_OK && mapping_db_load(meta, config_mapping_name(cfg), &m, err, sizeof err) < 0) {
        fprintf(stderr, "searchsync mapping export: %s\n", err);
        rc = EXIT_RUNTIME;
    }
    if (rc == EXIT_OK) {
        sbuf out = SBUF_INIT;
        mapping_write(&m, &out);
        FILE *f = (!o->path || !strcmp(o->path, "-")) ? stdout : fopen(o->path, "wb");
        if (!f || fwrite(out.data, 1, out.len, f) != out.len || (f != stdout && fclose(f) != 0)) {
            fprintf(stderr, "searchsync mapping export: cannot write %s: %s\n",
                    o->path ? o->path : "stdout", strerror(errno ? errno : EIO));
            rc = EXIT_RUNTIME;
        } else if (f == stdout)
            fflush(stdout);
        sbuf_free(&out);
    }
    mapping_free(&m);
    return rc;
}

/* The engine a mapping is for: --dialect NAME, or the one at [search] urls.
 * 0; 2 (EXIT_USAGE) an unknown name, said; -1 the engine did not answer
 * (err). */
static int engine_dialect(const struct ss_config *cfg, const char *verb, const char *name,
                          struct search_dialect *d, char *err, size_t errlen) {
    if (name) {
        if (search_dialect_named(name, d) == 0) return 0;
        fprintf(stderr, "searchsync mapping %s: unknown dialect %s (e.g. opensearch-2, "
                        "elasticsearch-8)\n", verb, name);
        return EXIT_USAGE;
    }
    struct search_opts so;
    deliver_search_opts(&so, cfg);
    struct search_client *sc = search_client_new(&so, err, errlen);
    struct search_conn *k = sc ? search_conn_new(sc) : NULL;
    int r = k ? search_detect(sc, k, err, errlen) : -1;
    if (r == 0) *d = *search_client_dialect(sc);
    search_conn_free(k);
    search_client_free(sc);
    return r < 0 ? -1 : 0;
}

static int do_body(struct command *c, const struct opts *o) {
    const struct ss_config *cfg = &c->cfg;
    char err[1024];
    struct search_dialect d;
    int dr = engine_dialect(cfg, "body", o->dialect, &d, err, sizeof err);
    if (dr == EXIT_USAGE) return EXIT_USAGE;
    if (dr < 0) {
        fprintf(stderr, "searchsync mapping body: %s\n", err);
        return EXIT_RUNTIME;
    }
    int rc = command_meta(c, "") < 0 ? EXIT_OK : EXIT_RUNTIME;
    MYSQL *meta = c->meta;
    struct mapping m = {0};
    if (rc == EXIT_OK && mapping_db_load(meta, config_mapping_name(cfg), &m, err, sizeof err) < 0) {
        fprintf(stderr, "searchsync mapping body: %s\n", err);
        rc = EXIT_RUNTIME;
    }
    if (rc == EXIT_OK) {
        const struct mp_index *ix = mp_index_named(&m, o->path);
        sbuf b = SBUF_INIT;
        if (!ix) {
            fprintf(stderr, "searchsync mapping body: no index config %s in mapping %s\n",
                    o->path, config_mapping_name(cfg));
            rc = EXIT_USAGE;
        } else if (index_mapping_body(ix, &d, true, &b, err, sizeof err) < 0) {
            fprintf(stderr, "searchsync mapping body: %s\n", err);
            rc = EXIT_USAGE;
        } else
            fputs(b.data, stdout);
        sbuf_free(&b);
    }
    mapping_free(&m);
    return rc;
}

static bool confirm(void) {
    if (!isatty(STDIN_FILENO)) return false;
    fprintf(stderr, "apply this plan? [y/N] ");
    char line[16];
    if (!fgets(line, sizeof line, stdin)) return false;
    return line[0] == 'y' || line[0] == 'Y';
}

static int do_import(struct command *c, const struct opts *o) {
    size_t len = 0;
    char *text = read_all(o->path, &len);
    if (!text) {
        fprintf(stderr, "searchsync mapping import: cannot read %s: %s\n", o->path,
                strerror(errno ? errno : EIO));
        return EXIT_USAGE;
    }
    { /* the file's own errors first: they need no server */
        struct mapping parsed = {0};
        char perr[2048];
        int pr = mapping_parse(o->path, text, len, &parsed, perr, sizeof perr);
        mapping_free(&parsed);
        if (pr < 0) {
            fprintf(stderr, "searchsync mapping import: %s\n", perr);
            free(text);
            return EXIT_USAGE;
        }
    }
    if (command_meta(c, "") >= 0) {
        free(text);
        return EXIT_RUNTIME;
    }
    /* the plan first; stored once confirmed (with --yes: in the same run):
     * the node's operation (sync/ops/ops_mapping.h, as POST
     * /api/v1/mapping/apply), on this command's connection */
    struct ops_env env = {.cfg = &c->cfg, .meta = c->meta, .by = "mapping import"};
    struct ops_err e;
    struct mapping_import mi = {.name = o->path, .text = text, .len = len,
                                .apply = o->yes && !o->dry_run};
    enum ops_status st = ops_mapping_import(&env, &mi, &e);
    if (st == OPS_OK) {
        if (strcmp(config_mapping_name(&c->cfg), c->cfg.source.name))
            printf("plan for mapping %s, from source %s (%s):\n%s", config_mapping_name(&c->cfg),
                   c->cfg.source.name, o->path, mi.changes ? mi.plan.data : "no changes\n");
        else
            printf("plan for source %s (%s):\n%s", c->cfg.source.name, o->path,
                   mi.changes ? mi.plan.data : "no changes\n");
        if (mi.notes.len) fputs(mi.notes.data, stderr);
        fflush(stdout);
        if (mi.changes && !o->dry_run && !mi.applied) {
            if (!confirm()) {
                fprintf(stderr, "searchsync mapping import: not applied (confirm with --yes)\n");
                st = OPS_INVALID;
            } else {
                sbuf_reset(&mi.plan);
                sbuf_reset(&mi.notes);
                mi.apply = true;
                st = ops_mapping_import(&env, &mi, &e);
            }
        }
        if (st == OPS_OK && mi.applied) {
            if (mi.log_err[0])
                fprintf(stderr, "searchsync mapping import: stored, but not noted in the sync "
                                "log: %s\n", mi.log_err);
            printf("applied\n");
        }
    }
    if (st != OPS_OK && mi.err[0]) {
        fprintf(stderr, "searchsync mapping import: %s\n", mi.err);
        if (mi.nproblems) fputs(mi.problems.data ? mi.problems.data : "", stderr);
    }
    mapping_import_free(&mi);
    free(text);
    return ops_exit(st);
}

/* generated relation columns carry their table's primary key as "key" (it
 * orders the elements of a nested array) */
static int do_generate(struct command *c, const struct opts *o) {
    const struct ss_config *cfg = &c->cfg;
    char err[2048];
    const char *dot = strchr(o->path, '.');
    if (!dot || dot == o->path || !dot[1] || strchr(dot + 1, '.')) {
        fprintf(stderr, "searchsync mapping generate: name the root table as DATABASE.TABLE, "
                        "not \"%s\"\n", o->path);
        return EXIT_USAGE;
    }
    /* the engine's version decides a type or two (BIGINT UNSIGNED); not
     * reachable, the file is proposed without it (a note says so) */
    struct search_dialect d;
    char derr[1024];
    int dr = engine_dialect(cfg, "generate", o->dialect, &d, derr, sizeof derr);
    if (dr == EXIT_USAGE) return EXIT_USAGE;
    if (dr < 0 && cred_refused()) { /* not a passing outage: the file names it (exit 2) */
        fprintf(stderr, "searchsync mapping generate: %s (or --dialect NAME to generate "
                        "without asking the engine)\n", derr);
        return EXIT_USAGE;
    }
    char *db = xstrndup(o->path, (size_t)(dot - o->path));
    db_params sp = db_params_source(cfg);
    MYSQL *src = db_connect(&sp, err, sizeof err);
    sbuf file = SBUF_INIT, notes = SBUF_INIT, sample = SBUF_INIT;
    /* the replicas the engine's data nodes can hold (none on one node) */
    int replicas = o->replicas;
    if (replicas < 0 && dr == 0 && !o->dialect) {
        char rerr[256];
        replicas = config_default_replicas(cfg, rerr, sizeof rerr);
    }
    struct mg_opts go = {o->depth, o->include, o->ninclude, replicas, dr == 0 ? &d : NULL,
                         false};
    int r = src ? mapping_propose(src, db, dot + 1, &go, &file, &notes, &sample, err, sizeof err)
                : -1;
    int rc = r == 0 ? EXIT_OK : r > 0 ? EXIT_USAGE : EXIT_RUNTIME;
    if (r != 0) {
        fprintf(stderr, "searchsync mapping generate: %s\n", err);
    } else {
        fputs(file.data, stdout);
        fflush(stdout);
        if (dr < 0)
            fprintf(stderr, "searchsync mapping generate: the engine's version is not known (%s): "
                            "types it may lack are not proposed (--dialect NAME names it)\n", derr);
        if (notes.len) fputs(notes.data, stderr);
        if (sample.len)
            fprintf(stderr, "searchsync mapping generate: a document as this mapping builds it "
                            "(the first row of %s):\n%s\n", o->path, sample.data);
        else
            fprintf(stderr, "searchsync mapping generate: no sample document (%s)\n", err);
        fprintf(stderr, "searchsync mapping generate: review the file, then: searchsync mapping "
                        "import --config %s FILE\n", c->config);
    }
    free(db);
    sbuf_free(&file);
    sbuf_free(&notes);
    sbuf_free(&sample);
    db_close(src);
    return rc;
}

int cmd_mapping(int argc, char **argv) {
    static const struct option own[] = {{"yes", no_argument, NULL, 'y'},
                                        {"dry-run", no_argument, NULL, 'n'},
                                        {"dialect", required_argument, NULL, 'd'},
                                        {"depth", required_argument, NULL, 'D'},
                                        {"include", required_argument, NULL, 'i'},
                                        {"replicas", required_argument, NULL, 'r'},
                                        {NULL, 0, NULL, 0}};
    struct command c = {.name = "mapping", .usage = usage_mapping, .opts = own,
                        .shortopts = "ynd:", .argc = argc, .argv = argv};
    struct opts o = {.depth = 2, .replicas = -1};
    char *incl_buf[64];
    size_t nbuf = 0;
    int opt;
    while ((opt = command_opt(&c)) > 0) {
        if (opt == 'd')
            o.dialect = optarg;
        else if (opt == 'D' || opt == 'r') {
            char *end = NULL;
            long v = strtol(optarg, &end, 10);
            if (!*optarg || *end || v < 0 || v > (opt == 'D' ? 8 : 64)) {
                fprintf(stderr, "searchsync mapping: --%s must be an integer from 0 to %d\n",
                        opt == 'D' ? "depth" : "replicas", opt == 'D' ? 8 : 64);
                return EXIT_USAGE;
            }
            *(opt == 'D' ? &o.depth : &o.replicas) = (int)v;
        } else if (opt == 'i') {
            for (char *tok = strtok(optarg, ", "); tok && nbuf < 64; tok = strtok(NULL, ", "))
                incl_buf[nbuf++] = tok;
            o.include = (const char **)incl_buf;
            o.ninclude = nbuf;
        } else if (opt == 'y')
            o.yes = true;
        else if (opt == 'n')
            o.dry_run = true;
    }
    if (opt < 0) return c.rc;
    int rest = argc - optind;
    const char *verb = rest > 0 ? argv[optind] : NULL;
    if (rest > 1) o.path = argv[optind + 1];
    bool is_import = verb && !strcmp(verb, "import"), is_export = verb && !strcmp(verb, "export");
    bool is_body = verb && !strcmp(verb, "body"), is_gen = verb && !strcmp(verb, "generate");
    if (!c.config || (!is_import && !is_export && !is_body && !is_gen) || rest > 2 ||
        ((is_import || is_body || is_gen) && !o.path))
        return command_usage(&c);
    int rc = command_begin(&c, 0);
    if (rc >= 0) return rc;
    rc = is_export ? do_export(&c, &o)
         : is_body ? do_body(&c, &o)
         : is_gen  ? do_generate(&c, &o)
                   : do_import(&c, &o);
    return command_end(&c, rc);
}
